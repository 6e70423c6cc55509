//! `keelson` as a drop-in `kube-apiserver` (argv[0] `kube-apiserver` or the
//! `kube-apiserver` subcommand), for envtest and scripts written for kube:
//! kube's flag names; flags kube-apiserver has but Keelson does not
//! implement draw one warning and are ignored; flags kube-apiserver does
//! not have stop the start with kube's `Error: unknown flag: --x`.
//!
//! Storage: with `--etcd-servers`, Keelson stores on that etcd (kube's
//! layout under `/registry`), unless the server is Keelson's own `etcd`
//! stand-in ([`crate::etcd_standin`]), in which case Keelson keeps the data
//! itself: in memory (Keelson's MVCC, as on sled; nothing on disk, gone
//! when the process stops, as envtest's etcd is), or with
//! `KEELSON_ENVTEST_STORAGE=sled` in sled in the data directory; an
//! explicit `--storage-backend` wins. `KEELSON_ENVTEST_STORAGE=keelson`
//! (or `memory`, `sled`) keeps the data in Keelson whatever
//! `--etcd-servers` says. Without `--etcd-servers`, the same as with the
//! stand-in. Other `KEELSON_*` variables (such as
//! `KEELSON_ETCD_LAYOUT=kube`) apply as in plain `keelson`.
//! The data directory is `<cert-dir>/keelson-data` (kube-apiserver has no
//! data directory; `--cert-dir` defaults to `/var/run/kubernetes`).

use std::path::{Path, PathBuf};

/// Flags passed on to Keelson unchanged (same name, same meaning).
const PASSED: &[&str] = &[
    "secure-port",
    "bind-address",
    "advertise-address",
    "service-account-key-file",
    "service-account-signing-key-file",
    "feature-gates",
    "runtime-config",
    "token-auth-file",
    "anonymous-auth",
    "api-audiences",
    "tls-cert-file",
    "tls-private-key-file",
    "client-ca-file",
    "storage-backend",
    "etcd-prefix",
    "etcd-cafile",
    "etcd-certfile",
    "etcd-keyfile",
    "etcd-compaction-interval",
    "tracing-config-file",
    "audit-policy-file",
    "audit-log-path",
    "audit-log-maxage",
    "audit-log-maxbackup",
    "audit-log-maxsize",
    "audit-log-format",
    "enable-admission-plugins",
    "disable-admission-plugins",
    "default-not-ready-toleration-seconds",
    "default-unreachable-toleration-seconds",
    "allow-privileged",
    "admission-control-config-file",
];

/// Flags Keelson reads itself in this mode.
const SPECIAL: &[&str] = &[
    "cert-dir",
    "etcd-servers",
    "authorization-mode",
    "service-account-issuer",
    "help",
    "version",
];

/// kube-apiserver flags Keelson accepts and ignores (with a warning).
const IGNORED: &[&str] = &[
    "aggregator-reject-forwarding-redirect",
    "allow-metric-labels",
    "api-audiences-file",
    "apiserver-count",
    "audit-log-batch-max-size",
    "audit-log-compress",
    "audit-log-mode",
    "audit-webhook-config-file",
    "audit-webhook-mode",
    "authentication-config",
    "authentication-token-webhook-config-file",
    "authorization-config",
    "authorization-policy-file",
    "authorization-webhook-config-file",
    "cloud-provider",
    "contention-profiling",
    "cors-allowed-origins",
    "default-watch-cache-size",
    "delete-collection-workers",
    "egress-selector-config-file",
    "enable-aggregator-routing",
    "enable-bootstrap-token-auth",
    "enable-garbage-collector",
    "enable-priority-and-fairness",
    "encryption-provider-config",
    "endpoint-reconciler-type",
    "etcd-healthcheck-timeout",
    "etcd-readycheck-timeout",
    "etcd-servers-overrides",
    "event-ttl",
    "external-hostname",
    "goaway-chance",
    "kubelet-certificate-authority",
    "kubelet-client-certificate",
    "kubelet-client-key",
    "kubelet-preferred-address-types",
    "kubelet-timeout",
    "livez-grace-period",
    "log-flush-frequency",
    "logging-format",
    "max-mutating-requests-inflight",
    "max-requests-inflight",
    "min-request-timeout",
    "oidc-ca-file",
    "oidc-client-id",
    "oidc-groups-claim",
    "oidc-issuer-url",
    "oidc-username-claim",
    "permit-port-sharing",
    "profiling",
    "proxy-client-cert-file",
    "proxy-client-key-file",
    "request-timeout",
    "requestheader-allowed-names",
    "requestheader-client-ca-file",
    "requestheader-extra-headers-prefix",
    "requestheader-group-headers",
    "requestheader-username-headers",
    "service-account-extend-token-expiration",
    "service-account-jwks-uri",
    "service-account-lookup",
    "service-account-max-token-expiration",
    "service-cluster-ip-range",
    "service-node-port-range",
    "shutdown-delay-duration",
    "shutdown-send-retry-after",
    "storage-media-type",
    "strict-transport-security-directives",
    "tls-cipher-suites",
    "tls-min-version",
    "tls-sni-cert-key",
    "v",
    "vmodule",
    "watch-cache",
    "watch-cache-sizes",
];

/// Boolean flags: `--flag` alone means true; a value only with `=`.
const BOOLEAN: &[&str] = &[
    "allow-privileged",
    "anonymous-auth",
    "audit-log-compress",
    "contention-profiling",
    "enable-aggregator-routing",
    "enable-bootstrap-token-auth",
    "enable-garbage-collector",
    "enable-priority-and-fairness",
    "help",
    "permit-port-sharing",
    "version",
    "profiling",
    "service-account-extend-token-expiration",
    "service-account-lookup",
    "watch-cache",
];

/// The parsed command line of the kube-apiserver mode.
#[derive(Debug, Default)]
pub struct KubeArgs {
    /// The Keelson flags (without the program name).
    pub keelson: Vec<String>,
    /// Accepted but ignored flags, in order.
    pub ignored: Vec<String>,
    /// `--help`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
    /// `--cert-dir`.
    pub cert_dir: Option<PathBuf>,
    /// `--etcd-servers`.
    pub etcd_servers: Vec<String>,
    tls_given: bool,
}

/// Parse kube-apiserver's command line (without the program name);
/// `Err` is kube's error text (`unknown flag: --x`).
pub fn parse(args: &[String]) -> Result<KubeArgs, String> {
    let mut out = KubeArgs::default();
    let mut issuer_seen = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(body) = arg.strip_prefix("--") else {
            if arg == "-h" {
                out.help = true;
                continue;
            }
            // klog's `-v` (kube-apiserver's only other shorthand).
            if arg == "-v" || arg.starts_with("-v=") {
                if arg == "-v" {
                    i += 1;
                }
                out.ignored.push("v".into());
                continue;
            }
            if let Some(short) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
                let c = short.chars().next().unwrap_or('-');
                return Err(format!("unknown shorthand flag: '{c}' in {arg}"));
            }
            // kube-apiserver takes no positional arguments.
            return Err(format!("unknown command {arg:?} for \"kube-apiserver\""));
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        let known = PASSED.contains(&name.as_str())
            || SPECIAL.contains(&name.as_str())
            || IGNORED.contains(&name.as_str());
        if !known {
            return Err(format!("unknown flag: --{name}"));
        }
        let value = match inline {
            Some(v) => v,
            None if BOOLEAN.contains(&name.as_str()) => "true".to_string(),
            None => match args.get(i) {
                Some(v) => {
                    i += 1;
                    v.clone()
                }
                None => return Err(format!("flag needs an argument: --{name}")),
            },
        };
        match name.as_str() {
            "help" => out.help = value != "false",
            "version" => out.version = value != "false",
            "cert-dir" => out.cert_dir = Some(PathBuf::from(value)),
            "etcd-servers" => out
                .etcd_servers
                .extend(value.split(',').filter(|s| !s.is_empty()).map(String::from)),
            "authorization-mode" => {
                // kube's comma list; Keelson authorizes with RBAC or
                // AlwaysAllow (system:masters first either way).
                let modes: Vec<&str> = value.split(',').map(str::trim).collect();
                let mode = if modes.contains(&"RBAC") {
                    "RBAC"
                } else if modes.contains(&"AlwaysAllow") {
                    "AlwaysAllow"
                } else {
                    "RBAC"
                };
                for m in &modes {
                    if *m != mode {
                        out.ignored.push(format!("authorization-mode={m}"));
                    }
                }
                out.keelson.push(format!("--authorization-mode={mode}"));
            }
            "service-account-issuer" => {
                // kube takes several; the first issues tokens.
                if issuer_seen {
                    out.ignored.push(format!("service-account-issuer={value}"));
                } else {
                    issuer_seen = true;
                    out.keelson
                        .push(format!("--service-account-issuer={value}"));
                }
            }
            n if IGNORED.contains(&n) => out.ignored.push(n.to_string()),
            n => {
                if n == "tls-cert-file" || n == "tls-private-key-file" {
                    out.tls_given = true;
                }
                out.keelson.push(format!("--{n}={value}"));
            }
        }
    }
    Ok(out)
}

/// kube-apiserver's default `--cert-dir`.
const DEFAULT_CERT_DIR: &str = "/var/run/kubernetes";

impl KubeArgs {
    /// The cert dir in effect.
    pub fn cert_dir(&self) -> PathBuf {
        self.cert_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CERT_DIR))
    }

    /// Complete the Keelson flags: the data dir, and (without the TLS
    /// flags) kube's `<cert-dir>/apiserver.crt` and `apiserver.key`,
    /// created self-signed when missing, as kube-apiserver does.
    pub fn finish(&mut self) -> Result<(), String> {
        let cert_dir = self.cert_dir();
        let data_dir = cert_dir.join("keelson-data");
        self.keelson
            .push(format!("--data-dir={}", data_dir.display()));
        // kube-apiserver's `--allow-privileged` is off unless given
        // (plain `keelson` allows, as kubeadm and kind clusters run).
        if !self
            .keelson
            .iter()
            .any(|a| a.starts_with("--allow-privileged="))
        {
            self.keelson.push("--allow-privileged=false".into());
        }
        if !self.tls_given {
            let (crt, key) = (
                cert_dir.join("apiserver.crt"),
                cert_dir.join("apiserver.key"),
            );
            if !(crt.exists() && key.exists()) {
                self_signed(&cert_dir, &crt, &key)?;
            }
            self.keelson
                .push(format!("--tls-cert-file={}", crt.display()));
            self.keelson
                .push(format!("--tls-private-key-file={}", key.display()));
        }
        Ok(())
    }
}

/// kube's self-signed serving pair for `localhost`, 127.0.0.1 and the
/// host name, written into the cert dir.
fn self_signed(dir: &Path, crt: &Path, key: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("unable to create cert dir {}: {e}", dir.display()))?;
    let mut sans = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    if let Ok(h) = std::fs::read_to_string("/etc/hostname") {
        let h = h.trim();
        if !h.is_empty() {
            sans.push(h.to_string());
        }
    }
    let kp = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let params = rcgen::CertificateParams::new(sans).map_err(|e| e.to_string())?;
    let cert = params.self_signed(&kp).map_err(|e| e.to_string())?;
    std::fs::write(crt, cert.pem()).map_err(|e| format!("{}: {e}", crt.display()))?;
    std::fs::write(key, kp.serialize_pem()).map_err(|e| format!("{}: {e}", key.display()))?;
    Ok(())
}

/// `--help`: the usage, one line per flag kube-apiserver has and Keelson
/// accepts.
pub fn usage() -> String {
    let mut names: Vec<&str> = PASSED
        .iter()
        .chain(SPECIAL)
        .chain(IGNORED)
        .copied()
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut out = String::from(
        "The Kubernetes API server validates and configures data\n\
         for the api objects (served by Keelson).\n\n\
         Usage:\n  kube-apiserver [flags]\n\nFlags:\n",
    );
    for n in names {
        let note = if IGNORED.contains(&n) {
            " (accepted, not implemented by Keelson)"
        } else {
            ""
        };
        if BOOLEAN.contains(&n) {
            out.push_str(&format!("      --{n}{note}\n"));
        } else {
            out.push_str(&format!("      --{n} string{note}\n"));
        }
    }
    out
}

/// The header the `etcd` stand-in sets on every answer.
pub const STANDIN_HEADER: &str = "x-keelson-etcd-standin";

/// Whether `url` is Keelson's etcd stand-in (it answers `/health` with
/// [`STANDIN_HEADER`]); a real etcd or no answer is `false`.
pub async fn is_standin(url: &str) -> bool {
    let Ok(client) = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(2))
        .build()
    else {
        return false;
    };
    let health = format!("{}/health", url.trim_end_matches('/'));
    for _ in 0..20 {
        match client.get(&health).send().await {
            Ok(r) => return r.headers().contains_key(STANDIN_HEADER),
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kube_errors_and_warnings() {
        assert_eq!(
            parse(&args(&["--nope=1"])).unwrap_err(),
            "unknown flag: --nope"
        );
        assert_eq!(
            parse(&args(&["-x"])).unwrap_err(),
            "unknown shorthand flag: 'x' in -x"
        );
        let k = parse(&args(&["-v", "4", "--version"])).unwrap();
        assert!(k.version && k.keelson.is_empty());
        assert_eq!(k.ignored, args(&["v"]));
        let k = parse(&args(&[
            "--allow-privileged",
            "--secure-port",
            "6443",
            "--authorization-mode=Node,RBAC",
            "--service-cluster-ip-range=10.0.0.0/24",
        ]))
        .unwrap();
        assert_eq!(
            k.keelson,
            args(&[
                "--allow-privileged=true",
                "--secure-port=6443",
                "--authorization-mode=RBAC"
            ])
        );
        assert_eq!(
            k.ignored,
            args(&["authorization-mode=Node", "service-cluster-ip-range"])
        );
        let k = parse(&args(&["--admission-control-config-file", "/etc/a.yaml"])).unwrap();
        assert_eq!(
            k.keelson,
            args(&["--admission-control-config-file=/etc/a.yaml"])
        );
        assert!(k.ignored.is_empty());
    }
}
