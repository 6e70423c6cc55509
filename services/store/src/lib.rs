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

use keelson_rpc::StoreGrpc;
use keelson_runtime::bind_and_announce;
use keelson_storage::{LocalStore, StoreConfig};
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

keelson_runtime::service_flags! {
    "keelson-store",
    about = "Keelson store service (revisioned objects on sled)",
    /// In the config file `retention` is a string or a number of seconds.
    pub struct Cli => Config {
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
    }
}

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
    let store = Arc::new(store);
    keelson_rpc::serve_service("store", listener, shutdown, |draining| {
        let grpc = StoreGrpc::new(store).with_draining(draining);
        tonic::transport::Server::builder().add_service(grpc.into_server())
    })
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests;
