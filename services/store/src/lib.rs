//! `keelson-store`: serves [`keelson_api::StoreApi`] over gRPC from a
//! [`keelson_storage::LocalStore`], on sled (the default: the one writer,
//! one replica per data directory) or on etcd (`--storage-backend=etcd3`:
//! the service holds no state, and any number of replicas share one etcd
//! cluster).
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--data-dir DIR` | `KEELSON_DATA_DIR` | `data-dir` | `./keelson-data` |
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7001` |
//! | `--metrics-bind-address ADDR` (`0`: off) | `KEELSON_METRICS_BIND_ADDRESS` | `metrics-bind-address` | `127.0.0.1:9001` (the `--listen` port + 2000) |
//! | `--retention DUR` (alias `--etcd-compaction-interval`) | `KEELSON_RETENTION` | `retention` | `5m` |
//! | `--storage-backend sled\|etcd3\|memory` | `KEELSON_STORAGE_BACKEND` | `storage-backend` | `sled` |
//! | `--etcd-servers URL,...` | `KEELSON_ETCD_SERVERS` | `etcd-servers` | `http://127.0.0.1:2379` |
//! | `--etcd-prefix PREFIX` | `KEELSON_ETCD_PREFIX` | `etcd-prefix` | `/registry` |
//! | `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile` | `KEELSON_ETCD_CAFILE`, ... | `etcd-cafile`, ... | none |
//! | `--etcd-layout keelson\|kube` | `KEELSON_ETCD_LAYOUT` | `etcd-layout` | `keelson` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! On etcd, `--etcd-compaction-interval` is kube's: every interval one
//! replica compacts etcd to the revision seen an interval before; keys are
//! laid out as kube-apiserver's (`/registry/configmaps/<ns>/<name>`).
//! Values are Keelson's JSON, or with `--etcd-layout=kube` kube-apiserver's
//! own (Protobuf for built-in kinds, JSON for custom resources), so one
//! etcd can be served by either.
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
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use keelson_kv_etcd::{Compactor, EtcdConfig, EtcdKv};
use keelson_rpc::StoreGrpc;
use keelson_runtime::bind_and_announce;
use keelson_storage::keys::KeyLayout;
use keelson_storage::{LocalStore, StoreConfig, ValueCodec};
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
    /// The etcd client could not be built (flags, TLS files).
    #[error("etcd: {0}")]
    Etcd(#[from] keelson_kv_etcd::EtcdError),
    /// The store over etcd could not be opened (etcd unreachable).
    #[error("cannot open the store on etcd {servers}: {source}")]
    OpenEtcd {
        servers: String,
        #[source]
        source: keelson_storage::StorageError,
    },
}

/// kube-apiserver's `--storage-backend` values.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum StorageBackend {
    /// Keelson's MVCC on sled in the data directory.
    #[default]
    #[value(name = "sled")]
    #[serde(rename = "sled")]
    Sled,
    /// An etcd v3 cluster (`--etcd-servers`).
    #[value(name = "etcd3")]
    #[serde(rename = "etcd3")]
    Etcd3,
    /// Keelson's MVCC in memory: sled's semantics, nothing on disk, gone
    /// when the process stops (tests).
    #[value(name = "memory")]
    #[serde(rename = "memory")]
    Memory,
}

/// `--etcd-layout`: how values are written to etcd.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum EtcdLayout {
    /// Keelson's JSON for every object.
    #[default]
    #[value(name = "keelson")]
    #[serde(rename = "keelson")]
    Keelson,
    /// kube-apiserver's values: Kubernetes Protobuf for built-in kinds,
    /// JSON for custom resources (an etcd kube-apiserver wrote, or will
    /// read).
    #[value(name = "kube")]
    #[serde(rename = "kube")]
    Kube,
}

impl EtcdLayout {
    /// The store's value codec for this layout.
    pub fn value_codec(self) -> ValueCodec {
        match self {
            EtcdLayout::Keelson => ValueCodec::Json,
            EtcdLayout::Kube => ValueCodec::Kube,
        }
    }
}

/// Where the objects live: the resolved storage flags.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Storage {
    /// sled in the data directory.
    #[default]
    Sled,
    /// etcd, with values in the given layout.
    Etcd(EtcdConfig, EtcdLayout),
    /// In memory (the MVCC of sled on ordered maps).
    Memory,
}

/// The storage flags, named as kube-apiserver's; shared by `keelson-store`
/// and the embedded `keelson`.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, clap::Args, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub struct StorageFlags {
    /// Storage backend: sled (in the data directory), etcd3, or memory (nothing on disk) [default: sled]
    #[arg(
        long,
        env = "KEELSON_STORAGE_BACKEND",
        value_enum,
        value_name = "BACKEND"
    )]
    #[serde(default)]
    pub storage_backend: Option<StorageBackend>,
    /// etcd client URLs, comma separated [default: http://127.0.0.1:2379]
    #[arg(
        long,
        env = "KEELSON_ETCD_SERVERS",
        value_delimiter = ',',
        value_name = "URLS"
    )]
    #[serde(default)]
    pub etcd_servers: Vec<String>,
    /// The prefix of every etcd key [default: /registry]
    #[arg(long, env = "KEELSON_ETCD_PREFIX", value_name = "PREFIX")]
    #[serde(default)]
    pub etcd_prefix: Option<String>,
    /// CA bundle that signed the etcd servers' certificates
    #[arg(long = "etcd-cafile", env = "KEELSON_ETCD_CAFILE", value_name = "FILE")]
    #[serde(default, rename = "etcd-cafile")]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate for etcd (with --etcd-keyfile)
    #[arg(
        long = "etcd-certfile",
        env = "KEELSON_ETCD_CERTFILE",
        value_name = "FILE"
    )]
    #[serde(default, rename = "etcd-certfile")]
    pub etcd_certfile: Option<PathBuf>,
    /// Key of the etcd client certificate
    #[arg(
        long = "etcd-keyfile",
        env = "KEELSON_ETCD_KEYFILE",
        value_name = "FILE"
    )]
    #[serde(default, rename = "etcd-keyfile")]
    pub etcd_keyfile: Option<PathBuf>,
    /// Values in etcd: keelson (JSON) or kube (kube-apiserver's: Protobuf for built-in kinds) [default: keelson]
    #[arg(long, env = "KEELSON_ETCD_LAYOUT", value_enum, value_name = "LAYOUT")]
    #[serde(default)]
    pub etcd_layout: Option<EtcdLayout>,
}

impl StorageFlags {
    /// The storage the flags name (etcd settings are ignored on sled).
    pub fn storage(&self) -> Storage {
        match self.storage_backend.unwrap_or_default() {
            StorageBackend::Sled => Storage::Sled,
            StorageBackend::Memory => Storage::Memory,
            StorageBackend::Etcd3 => {
                let defaults = EtcdConfig::default();
                let servers: Vec<String> = self
                    .etcd_servers
                    .iter()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                let config = EtcdConfig {
                    endpoints: if servers.is_empty() {
                        defaults.endpoints.clone()
                    } else {
                        servers
                    },
                    prefix: self.etcd_prefix.clone().unwrap_or(defaults.prefix.clone()),
                    ca_file: self.etcd_cafile.clone(),
                    cert_file: self.etcd_certfile.clone(),
                    key_file: self.etcd_keyfile.clone(),
                    ..defaults
                };
                Storage::Etcd(config, self.etcd_layout.unwrap_or_default())
            }
        }
    }
}

/// How long the store waits for etcd at startup.
pub const ETCD_STARTUP_WAIT: Duration = Duration::from_secs(60);

/// Open the store on `storage`: sled in `sled_dir`, in memory, or etcd with kube's key
/// layout and kube's compactor every `compaction` (the compactor runs for
/// the rest of the process), waiting up to [`ETCD_STARTUP_WAIT`] for etcd
/// to become reachable.
pub async fn open_storage(
    storage: &Storage,
    sled_dir: &Path,
    compaction: Duration,
) -> Result<LocalStore, ServiceError> {
    match storage {
        Storage::Sled => {
            let store_config = StoreConfig {
                retention: compaction,
                ..Default::default()
            };
            tracing::info!(dir = %sled_dir.display(), retention = ?compaction, "opening store on sled");
            LocalStore::open(sled_dir, store_config)
                .await
                .map_err(|source| ServiceError::Open {
                    dir: sled_dir.to_path_buf(),
                    source,
                })
        }
        Storage::Memory => {
            let store_config = StoreConfig {
                retention: compaction,
                ..Default::default()
            };
            tracing::info!(retention = ?compaction, "opening store in memory");
            let kv = keelson_kv_sled::SledKv::in_memory().map_err(|e| ServiceError::Open {
                dir: PathBuf::from("(memory)"),
                source: e.into(),
            })?;
            LocalStore::with_kv(Arc::new(kv), store_config)
                .await
                .map_err(|source| ServiceError::Open {
                    dir: PathBuf::from("(memory)"),
                    source,
                })
        }
        Storage::Etcd(etcd, layout) => {
            let servers = etcd.endpoints.join(",");
            tracing::info!(%servers, prefix = %etcd.prefix, layout = ?layout, compaction = ?compaction, "opening store on etcd");
            // etcd may start after the store (a fleet coming up): retry
            // for a minute, as kube-apiserver waits for its etcd.
            let deadline = std::time::Instant::now() + ETCD_STARTUP_WAIT;
            let (kv, store) = loop {
                let attempt = async {
                    let kv = EtcdKv::connect(etcd.clone()).await?;
                    let store_config = StoreConfig {
                        retention: compaction,
                        // etcd is compacted by kube's compactor below.
                        compaction_interval: None,
                        key_layout: KeyLayout::Kube,
                        value_codec: layout.value_codec(),
                        ..Default::default()
                    };
                    let store = LocalStore::with_kv(Arc::new(kv.clone()), store_config)
                        .await
                        .map_err(|source| ServiceError::OpenEtcd {
                            servers: servers.clone(),
                            source,
                        })?;
                    Ok::<_, ServiceError>((kv, store))
                };
                match attempt.await {
                    Ok(opened) => break opened,
                    Err(e) if std::time::Instant::now() < deadline => {
                        tracing::warn!(error = %e, "etcd not reachable yet; retrying");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    Err(e) => return Err(e),
                }
            };
            if let Some(compactor) = Compactor::start(kv, compaction) {
                compactor.detach();
            }
            Ok(store)
        }
    }
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
    /// sled (in `data_dir`) or etcd.
    pub storage: Storage,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            listen: SocketAddr::from(([127, 0, 0, 1], 7001)),
            retention: StoreConfig::default().retention,
            storage: Storage::Sled,
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
        /// `--storage-backend` and the `--etcd-*` flags.
        #[command(flatten)]
        #[serde(flatten)]
        pub storage: StorageFlags,
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
            storage: cli.storage.storage(),
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
    open_storage(&config.storage, &config.data_dir, config.retention).await
}

/// Serve `store` on an already bound listener until `shutdown` completes.
pub async fn serve(
    store: LocalStore,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    // Watches (the watch replicas' followers) end as soon as shutdown
    // starts, instead of holding the drain open.
    // kube's storage metrics (request latencies, object counts) on the
    // service's /metrics.
    let store = Arc::new(keelson_storage::MeteredStore::new(store));
    keelson_rpc::serve_service("store", listener, shutdown, |draining| {
        let grpc = StoreGrpc::new(store).with_draining(draining);
        tonic::transport::Server::builder().add_service(grpc.into_server())
    })
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests;
