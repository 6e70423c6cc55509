//! `keelson-merge`: serves [`keelson_api::MergeApi`] (patch formats and
//! Server-Side Apply) over gRPC. Stateless; scale freely.
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7003` |
//! | `--metrics-bind-address ADDR` (`0`: off) | `KEELSON_METRICS_BIND_ADDRESS` | `metrics-bind-address` | `127.0.0.1:9003` (the `--listen` port + 2000) |
//! | `--store-endpoint URL[,URL...]` (store replicas; a replica that is down is skipped) | `KEELSON_STORE_ENDPOINT` | `store-endpoint` | `http://127.0.0.1:7001` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! The optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. The store is
//! read for CustomResourceDefinitions (the catalog follows them) and is
//! dialled lazily. Port `0` picks
//! a free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c drains in-flight calls and exits 0.
#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use keelson_rpc::{MergeGrpc, RemoteStore, StoreEndpointFlags};
use keelson_runtime::bind_and_announce;
use tokio::net::TcpListener;
use tonic::transport::Server;

pub use keelson_runtime::ServiceError;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7003";

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// gRPC listen address.
    pub listen: SocketAddr,
    /// The store service, `http://host:port` (CustomResourceDefinitions).
    pub store_endpoint: String,
}

keelson_runtime::service_flags! {
    "keelson-merge",
    about = "Keelson merge service (patches, Server-Side Apply)",
    pub struct Cli => Config {
        /// `--store-endpoint`.
        #[command(flatten)]
        #[serde(flatten)]
        pub store: StoreEndpointFlags,
    }
}

impl From<Cli> for Config {
    /// The flags, with the default where unset.
    fn from(cli: Cli) -> Config {
        Config {
            listen: cli.common.listen_or(DEFAULT_LISTEN),
            store_endpoint: cli.store.endpoint(),
        }
    }
}

/// Bind `config.listen`, announce it, and serve until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind_and_announce("merge", config.listen).await?;
    serve(&config, listener, shutdown).await
}

/// Serve on an already bound listener until `shutdown` completes.
pub async fn serve(
    config: &Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let store: Arc<dyn keelson_api::StoreApi> =
        Arc::new(RemoteStore::connect_resolving(&config.store_endpoint)?);
    // The live catalog follows the stored CustomResourceDefinitions, so
    // patches and Server-Side Apply see custom resources' schemas.
    let catalog = keelson_registry::Catalog::builtin();
    keelson_apiextensions::CatalogFollower::spawn(store, catalog.clone());
    let merge = Arc::new(keelson_merge::LocalMerge::new(catalog));
    keelson_rpc::serve_service("merge", listener, shutdown, |_| {
        Server::builder().add_service(MergeGrpc::server(merge))
    })
    .await
}

#[cfg(test)]
mod tests;
