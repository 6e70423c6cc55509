//! `keelson-watch`: a watch-cache replica. Follows the store's change stream
//! and serves [`keelson_api::WatchCacheApi`] (lists and watches) over gRPC.
//! Replicas are independent: run as many as the read load needs and give
//! the gateway all of them (`--watch-endpoints`).
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7004` |
//! | `--metrics-bind-address ADDR` (`0`: off) | `KEELSON_METRICS_BIND_ADDRESS` | `metrics-bind-address` | `127.0.0.1:9004` (the `--listen` port + 2000) |
//! | `--store-endpoint URL[,URL...]` (store replicas; a replica that is down is skipped) | `KEELSON_STORE_ENDPOINT` | `store-endpoint` | `http://127.0.0.1:7001` |
//! | `--history N` | `KEELSON_HISTORY` | `history` | `10000` |
//! | `--history-bytes N` | `KEELSON_HISTORY_BYTES` | `history-bytes` | `67108864` (64 MiB) |
//! | `--watcher-buffer N` | `KEELSON_WATCHER_BUFFER` | `watcher-buffer` | `1024` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! `history` is how many changes per resource the cache keeps for watches
//! that resume from an older revision and for paged lists, `history-bytes`
//! how much object JSON those changes may hold; `watcher-buffer`
//! how many events a watcher may fall behind before it is closed. The
//! optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. The store is
//! dialled lazily and the cache re-lists after losing it. Port `0` picks a
//! free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c drains in-flight calls and exits 0.
#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use keelson_rpc::{RemoteStore, StoreEndpointFlags, WatchCacheGrpc};
use keelson_runtime::bind_and_announce;
use keelson_watchcache::{LocalWatchCache, WatchCacheConfig};
use tokio::net::TcpListener;
use tonic::transport::Server;

pub use keelson_rpc::DEFAULT_STORE_ENDPOINT;
pub use keelson_runtime::ServiceError;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7004";

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// gRPC listen address.
    pub listen: SocketAddr,
    /// The store service, `http://host:port`.
    pub store_endpoint: String,
    /// Cache sizes.
    pub cache: WatchCacheConfig,
}

keelson_runtime::service_flags! {
    "keelson-watch",
    about = "Keelson watch service (a watch-cache replica serving lists and watches)",
    pub struct Cli => Config {
        /// `--store-endpoint`.
        #[command(flatten)]
        #[serde(flatten)]
        pub store: StoreEndpointFlags,
        /// Changes kept per resource [default: 10000]
        #[arg(long, env = "KEELSON_HISTORY", value_name = "N")]
        pub history: Option<usize>,
        /// Bytes of object JSON kept in each resource's history [default: 64 MiB]
        #[arg(long, env = "KEELSON_HISTORY_BYTES", value_name = "N")]
        pub history_bytes: Option<usize>,
        /// Events a watcher may fall behind before it is closed [default: 1024]
        #[arg(long, env = "KEELSON_WATCHER_BUFFER", value_name = "N")]
        pub watcher_buffer: Option<usize>,
    }
}

impl From<Cli> for Config {
    /// The flags, with the defaults where unset.
    fn from(cli: Cli) -> Config {
        let mut cache = WatchCacheConfig::default();
        cache.history = cli.history.unwrap_or(cache.history);
        cache.history_bytes = cli.history_bytes.unwrap_or(cache.history_bytes);
        cache.watcher_buffer = cli.watcher_buffer.unwrap_or(cache.watcher_buffer);
        Config {
            listen: cli.common.listen_or(DEFAULT_LISTEN),
            store_endpoint: cli.store.endpoint(),
            cache,
        }
    }
}

/// Bind `config.listen`, announce it, and serve until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind_and_announce("watch", config.listen).await?;
    serve(&config, listener, shutdown).await
}

/// Serve on an already bound listener until `shutdown` completes.
pub async fn serve(
    config: &Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let store = Arc::new(RemoteStore::connect_resolving(&config.store_endpoint)?);
    tracing::info!(store = %config.store_endpoint, "watch cache following the remote store");
    // Custom resources' Table columns come from the stored
    // CustomResourceDefinitions (the catalog itself is not read here).
    keelson_apiextensions::CatalogFollower::spawn(
        store.clone(),
        keelson_registry::Catalog::builtin(),
    );
    let cache = Arc::new(LocalWatchCache::new(store, config.cache));
    // Open watches end as soon as shutdown starts; the gateway resumes them
    // on another replica.
    keelson_rpc::serve_service("watch", listener, shutdown, |draining| {
        let grpc = WatchCacheGrpc::new(cache).with_draining(draining);
        Server::builder().add_service(grpc.into_server())
    })
    .await
}

#[cfg(test)]
mod tests;
