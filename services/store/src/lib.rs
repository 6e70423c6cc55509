//! `keelson-store`: serves [`keelson_api::StoreApi`] over gRPC from a
//! [`keelson_storage::LocalStore`] (sled). The one writer: run one replica
//! per data directory.
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--data-dir DIR` | `KEELSON_DATA_DIR` | `data-dir` | `./keelson-data` |
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7001` |
//! | `--retention DUR` (alias `--etcd-compaction-interval`) | `KEELSON_RETENTION` | `retention` | `5m` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! Durations are bare seconds (`300`) or with units (`10s`, `5m`, `1h30m`).
//! The optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. Port `0` picks
//! a free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c drains in-flight calls, closes the store and
//! exits 0.
#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use keelson_rpc::StoreGrpc;
use keelson_runtime::{bind_and_announce, CommonFlags};
use keelson_storage::{LocalStore, StoreConfig};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

pub use keelson_runtime::parse_duration;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7001";
/// Default data directory.
pub const DEFAULT_DATA_DIR: &str = "./keelson-data";

/// Why the service could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A config, listen or gRPC error shared with the other services.
    #[error(transparent)]
    Service(#[from] keelson_runtime::ServiceError),
    /// The store could not be opened.
    #[error("cannot open the store in {dir}: {source}")]
    Open {
        dir: PathBuf,
        #[source]
        source: keelson_storage::StorageError,
    },
}

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where sled keeps its files.
    pub data_dir: PathBuf,
    /// gRPC listen address.
    pub listen: SocketAddr,
    /// How long old revisions stay readable (kube's
    /// `--etcd-compaction-interval`).
    pub retention: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            listen: SocketAddr::from(([127, 0, 0, 1], 7001)),
            retention: StoreConfig::default().retention,
        }
    }
}

/// Command line (each flag also read from `KEELSON_<FLAG>` and, by its
/// name, from the `--config` file; `retention` there is a string or a
/// number of seconds).
#[derive(Debug, Parser, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[command(
    name = "keelson-store",
    version,
    about = "Keelson store service (revisioned objects on sled)"
)]
pub struct Cli {
    /// Data directory [default: ./keelson-data]
    #[arg(long, env = "KEELSON_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// How long old revisions are kept: seconds or e.g. 10s, 5m [default: 5m]
    #[arg(
        long,
        alias = "etcd-compaction-interval",
        env = "KEELSON_RETENTION",
        value_name = "DURATION",
        value_parser = parse_duration
    )]
    #[serde(default, with = "keelson_runtime::duration::option")]
    pub retention: Option<Duration>,
    /// `--listen` and `--config`.
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonFlags,
}

keelson_runtime::service_flags!(Cli => Config);

impl From<Cli> for Config {
    /// The flags, with the defaults where unset.
    fn from(cli: Cli) -> Config {
        let defaults = Config::default();
        Config {
            data_dir: cli.data_dir.unwrap_or(defaults.data_dir),
            listen: cli.common.listen.unwrap_or(defaults.listen),
            retention: cli.retention.unwrap_or(defaults.retention),
        }
    }
}

/// Open the store, bind `config.listen`, announce it, and serve until
/// `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let store = open(&config).await?;
    let listener = bind_and_announce("store", config.listen).await?;
    serve(store, listener, shutdown).await
}

/// Open the store configured by `config`.
pub async fn open(config: &Config) -> Result<LocalStore, ServiceError> {
    let store_config = StoreConfig {
        retention: config.retention,
        ..Default::default()
    };
    tracing::info!(dir = %config.data_dir.display(), retention = ?config.retention, "opening store");
    LocalStore::open(&config.data_dir, store_config)
        .await
        .map_err(|source| ServiceError::Open {
            dir: config.data_dir.clone(),
            source,
        })
}

/// Serve `store` on an already bound listener until `shutdown` completes.
pub async fn serve(
    store: LocalStore,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    // Watches (the watch replicas' followers) end as soon as shutdown
    // starts, instead of holding the drain open.
    let (trigger, draining) = keelson_rpc::draining();
    let grpc = StoreGrpc::new(Arc::new(store)).with_draining(draining);
    let router = tonic::transport::Server::builder().add_service(grpc.into_server());
    keelson_rpc::serve_with_drain(listener, router, shutdown, trigger)
        .await
        .map_err(keelson_runtime::ServiceError::from)?;
    tracing::info!("store service stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_runtime::ServiceFlags as _;

    fn parse(args: &[&str]) -> Result<Config, ServiceError> {
        let mut argv = vec!["keelson-store"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv)
            .unwrap()
            .into_config()
            .map_err(ServiceError::from)
    }

    #[test]
    fn defaults() {
        let cfg = parse(&[]).unwrap();
        assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(cfg.data_dir, PathBuf::from("./keelson-data"));
        assert_eq!(cfg.retention, Duration::from_secs(300));
    }

    #[test]
    fn the_kube_flag_name_sets_retention() {
        let cfg = parse(&["--etcd-compaction-interval", "10s"]).unwrap();
        assert_eq!(cfg.retention, Duration::from_secs(10));
        let cfg = parse(&["--retention", "90"]).unwrap();
        assert_eq!(cfg.retention, Duration::from_secs(90));
        let err = Cli::try_parse_from(["keelson-store", "--retention", "soon"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid value 'soon' for '--retention"),
            "{err}"
        );
    }

    #[test]
    fn flags_beat_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.toml");
        std::fs::write(
            &path,
            "data-dir = \"/var/lib/keelson\"\nlisten = \"0.0.0.0:7001\"\nretention = \"2m\"\n",
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let cfg = parse(&["--config", p]).unwrap();
        assert_eq!(cfg.data_dir, PathBuf::from("/var/lib/keelson"));
        assert_eq!(cfg.listen.to_string(), "0.0.0.0:7001");
        assert_eq!(cfg.retention, Duration::from_secs(120));
        let cfg = parse(&["--config", p, "--data-dir", "/tmp/x", "--retention", "1s"]).unwrap();
        assert_eq!(cfg.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!(cfg.listen.to_string(), "0.0.0.0:7001");
        assert_eq!(cfg.retention, Duration::from_secs(1));

        std::fs::write(&path, "retention = 45\n").unwrap();
        assert_eq!(
            parse(&["--config", p]).unwrap().retention,
            Duration::from_secs(45)
        );
    }

    #[test]
    fn bad_config_values_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.toml");
        std::fs::write(&path, "retention = \"forever\"\n").unwrap();
        let err = parse(&["--config", path.to_str().unwrap()]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid retention \"forever\": "),
            "{err}"
        );
        let err = parse(&[
            "--config",
            dir.path().join("missing.toml").to_str().unwrap(),
        ])
        .unwrap_err();
        assert!(err.to_string().starts_with("config file "), "{err}");
    }
}
