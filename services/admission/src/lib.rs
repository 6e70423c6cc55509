//! `keelson-admission`: serves [`keelson_api::AdmissionApi`] (defaulting,
//! validation, admission) over gRPC. Stateless; scale freely. Reads
//! namespaces through a remote store.
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7002` |
//! | `--metrics-bind-address ADDR` (`0`: off) | `KEELSON_METRICS_BIND_ADDRESS` | `metrics-bind-address` | `127.0.0.1:9002` (the `--listen` port + 2000) |
//! | `--store-endpoint URL[,URL...]` (store replicas; a replica that is down is skipped) | `KEELSON_STORE_ENDPOINT` | `store-endpoint` | `http://127.0.0.1:7001` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! The optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. The store is
//! dialled lazily, so this service may start before the store and
//! reconnects after it restarts (calls meanwhile fail with `503`). Port `0`
//! picks a free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c drains in-flight calls and exits 0.
#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use keelson_rpc::{AdmissionGrpc, RemoteStore, StoreEndpointFlags};
use keelson_runtime::bind_and_announce;
use tokio::net::TcpListener;
use tonic::transport::Server;

pub use keelson_rpc::DEFAULT_STORE_ENDPOINT;
pub use keelson_runtime::ServiceError;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7002";

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// gRPC listen address.
    pub listen: SocketAddr,
    /// The store service, `http://host:port`.
    pub store_endpoint: String,
}

keelson_runtime::service_flags! {
    "keelson-admission",
    about = "Keelson admission service (defaulting, validation, admission)",
    pub struct Cli => Config {
        /// `--store-endpoint`.
        #[command(flatten)]
        #[serde(flatten)]
        pub store: StoreEndpointFlags,
    }
}

impl From<Cli> for Config {
    /// The flags, with the defaults where unset.
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
    let listener = bind_and_announce("admission", config.listen).await?;
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
    tracing::info!(store = %config.store_endpoint, "using remote store");
    // The live catalog follows the stored CustomResourceDefinitions.
    let catalog = keelson_registry::Catalog::builtin();
    keelson_apiextensions::CatalogFollower::spawn(store.clone(), catalog.clone());
    let admission = Arc::new(keelson_admission::LocalAdmission::new(store, catalog));
    keelson_rpc::serve_service("admission", listener, shutdown, |_| {
        Server::builder().add_service(AdmissionGrpc::server(admission))
    })
    .await
}

#[cfg(test)]
mod tests;
