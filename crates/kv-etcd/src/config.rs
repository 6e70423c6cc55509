//! How to reach etcd: endpoints, prefix, TLS files, timeouts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use etcd_client::{Certificate, ConnectOptions, Identity, TlsOptions};

/// kube-apiserver's default `--etcd-prefix`.
pub const DEFAULT_PREFIX: &str = "/registry";

/// The settings of an [`crate::EtcdKv`], named after kube-apiserver's flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdConfig {
    /// `--etcd-servers`: client URLs (`http://127.0.0.1:2379`,
    /// `https://…`); calls are spread over them.
    pub endpoints: Vec<String>,
    /// `--etcd-prefix`: every key is stored under it (default `/registry`).
    pub prefix: String,
    /// `--etcd-cafile`: the CA bundle that signed the servers' certificates.
    pub ca_file: Option<PathBuf>,
    /// `--etcd-certfile`: the client certificate (with `key_file`).
    pub cert_file: Option<PathBuf>,
    /// `--etcd-keyfile`: the client certificate's key.
    pub key_file: Option<PathBuf>,
    /// Every call fails with `Unavailable` when etcd has not answered by
    /// then (default 5 s).
    pub request_timeout: Duration,
    /// Connecting to an endpoint gives up after this (default 2 s).
    pub dial_timeout: Duration,
    /// How often an idle watch asks etcd for a progress notification, on
    /// servers that answer them safely (default 1 s).
    pub progress_interval: Duration,
    /// Whether watches may request progress: `None` decides from the
    /// server's version (safe from etcd 3.4.31, 3.5.13, 3.6 on); older
    /// servers only send their periodic progress notifications
    /// (`--experimental-watch-progress-notify-interval`, 10 min by default).
    pub progress_requests: Option<bool>,
}

impl Default for EtcdConfig {
    fn default() -> Self {
        EtcdConfig {
            endpoints: vec!["http://127.0.0.1:2379".into()],
            prefix: DEFAULT_PREFIX.into(),
            ca_file: None,
            cert_file: None,
            key_file: None,
            request_timeout: Duration::from_secs(5),
            dial_timeout: Duration::from_secs(2),
            progress_interval: Duration::from_secs(1),
            progress_requests: None,
        }
    }
}

/// Why an etcd client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    /// `--etcd-servers` was empty.
    #[error("--etcd-servers must name at least one etcd endpoint")]
    NoEndpoints,
    /// Only one of `--etcd-certfile` and `--etcd-keyfile` was given.
    #[error("--etcd-certfile and --etcd-keyfile must be given together")]
    HalfIdentity,
    /// A TLS file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The client rejected the settings (e.g. a malformed URL).
    #[error("etcd client: {0}")]
    Client(#[from] etcd_client::Error),
}

fn read(path: &Path) -> Result<Vec<u8>, EtcdError> {
    std::fs::read(path).map_err(|source| EtcdError::Read {
        path: path.to_path_buf(),
        source,
    })
}

impl EtcdConfig {
    /// The client options: timeouts, keep-alives (a dead member is noticed
    /// by open watches) and TLS when any TLS file is set.
    pub(crate) fn connect_options(&self) -> Result<ConnectOptions, EtcdError> {
        if self.endpoints.iter().all(|e| e.trim().is_empty()) {
            return Err(EtcdError::NoEndpoints);
        }
        let mut options = ConnectOptions::new()
            .with_connect_timeout(self.dial_timeout)
            .with_keep_alive(Duration::from_secs(5), self.dial_timeout)
            .with_keep_alive_while_idle(true);
        let tls = self.ca_file.is_some()
            || self.cert_file.is_some()
            || self.key_file.is_some()
            || self.endpoints.iter().any(|e| e.starts_with("https://"));
        if tls {
            let mut t = TlsOptions::new();
            if let Some(ca) = &self.ca_file {
                t = t.ca_certificate(Certificate::from_pem(read(ca)?));
            }
            match (&self.cert_file, &self.key_file) {
                (Some(c), Some(k)) => t = t.identity(Identity::from_pem(read(c)?, read(k)?)),
                (None, None) => {}
                _ => return Err(EtcdError::HalfIdentity),
            }
            options = options.with_tls(t);
        }
        Ok(options)
    }
}

/// The prefix as stored: without trailing slashes, then one `/` (kube joins
/// its prefix and keys as paths); empty stays empty.
pub(crate) fn normalize_prefix(prefix: &str) -> String {
    if prefix.is_empty() {
        return String::new();
    }
    format!("{}/", prefix.trim_end_matches('/'))
}

/// Whether an etcd server of `version` answers a progress request only
/// once its watchers are in sync (fixed in 3.4.31, 3.5.13 and 3.6; kube
/// checks the same before requesting progress).
pub(crate) fn safe_progress_requests(version: &str) -> bool {
    let mut parts = version
        .trim_start_matches('v')
        .split(['.', '-', '+'])
        .map(|p| p.parse::<u64>().ok());
    let (Some(Some(major)), Some(Some(minor)), Some(Some(patch))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, m) => m >= 6,
        (m, _) => m > 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_joined_as_paths() {
        assert_eq!(normalize_prefix("/registry"), "/registry/");
        assert_eq!(normalize_prefix("/registry/"), "/registry/");
        assert_eq!(normalize_prefix("/"), "/");
        assert_eq!(normalize_prefix(""), "");
    }

    #[test]
    fn progress_requests_need_a_fixed_server() {
        assert!(!safe_progress_requests("3.4.23"));
        assert!(safe_progress_requests("3.4.31"));
        assert!(!safe_progress_requests("3.5.12"));
        assert!(safe_progress_requests("3.5.13"));
        assert!(safe_progress_requests("3.6.0"));
        assert!(!safe_progress_requests("garbage"));
    }

    #[test]
    fn a_half_identity_is_refused() {
        let c = EtcdConfig {
            cert_file: Some("/nonexistent.crt".into()),
            ..Default::default()
        };
        assert!(matches!(c.connect_options(), Err(EtcdError::HalfIdentity)));
        let none = EtcdConfig {
            endpoints: vec![],
            ..Default::default()
        };
        assert!(matches!(
            none.connect_options(),
            Err(EtcdError::NoEndpoints)
        ));
    }
}
