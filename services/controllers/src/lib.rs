//! `keelson-controllers`: runs Keelson's controllers (today the namespace
//! controller) against a remote store, as kube-controller-manager runs
//! beside kube-apiserver. One replica is enough: the controllers are
//! idempotent, so a second one only repeats work.
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7006` |
//! | `--metrics-bind-address ADDR` (`0`: off) | `KEELSON_METRICS_BIND_ADDRESS` | `metrics-bind-address` | `127.0.0.1:9006` (the `--listen` port + 2000) |
//! | `--store-endpoint URL[,URL...]` (store replicas; a replica that is down is skipped) | `KEELSON_STORE_ENDPOINT` | `store-endpoint` | `http://127.0.0.1:7001` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! `listen` serves plain-HTTP health checks: `/healthz` and `/livez` answer
//! `ok` while the process runs, `/readyz` once the controllers follow the
//! store's change stream (500 while they (re)sync or the store is down).
//! The optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. The store is
//! dialled lazily, so this service may start before the store. Port `0`
//! picks a free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c stops the controllers and exits 0.
#![forbid(unsafe_code)]

mod health;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use keelson_controllers::NamespaceController;
use keelson_rpc::{RemoteStore, StoreEndpointFlags};
use keelson_runtime::bind_and_announce;
use tokio::net::TcpListener;

pub use keelson_rpc::DEFAULT_STORE_ENDPOINT;
pub use keelson_runtime::ServiceError;

/// Default health listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7006";

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Health endpoint listen address.
    pub listen: SocketAddr,
    /// The store service, `http://host:port`.
    pub store_endpoint: String,
}

keelson_runtime::service_flags! {
    "keelson-controllers",
    about = "Keelson controllers (the namespace controller)",
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

/// Bind `config.listen`, announce it, and run until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind_and_announce("controllers", config.listen).await?;
    serve(&config, listener, shutdown).await
}

/// Run the controllers and the health endpoint on an already bound
/// listener until `shutdown` completes.
pub async fn serve(
    config: &Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let store = Arc::new(
        RemoteStore::connect_resolving(&config.store_endpoint).map_err(ServiceError::failed)?,
    );
    tracing::info!(store = %config.store_endpoint, "controllers using the remote store");
    let namespaces = NamespaceController::following_crds(store.clone());
    let crds = keelson_controllers::CrdController::new(store.clone());
    let synced = namespaces.synced();
    let (trigger, draining) = keelson_runtime::draining();
    let controllers = tokio::spawn(namespaces.run(draining.clone().started()));
    let crd_controller = tokio::spawn(crds.run(draining.clone().started()));
    let gc = tokio::spawn(
        keelson_controllers::GarbageCollector::following_crds(store.clone())
            .run(draining.clone().started()),
    );
    let auth_controllers = spawn_auth_controllers(store, &draining);
    let health = health::serve(listener, synced, draining.started());
    tokio::pin!(health);
    tokio::select! {
        () = shutdown => {}
        res = &mut health => return res.map_err(ServiceError::failed),
    }
    trigger.fire();
    let _ = controllers.await;
    let _ = crd_controller.await;
    let _ = gc.await;
    for c in auth_controllers {
        let _ = c.await;
    }
    let _ = health.await;
    tracing::info!("controllers stopped");
    Ok(())
}

/// ClusterRole aggregation, the per-namespace `default` ServiceAccount and
/// `kube-root-ca.crt`, the disruption controller (PodDisruptionBudget
/// status) and the resource quota controller, each stopping when
/// `draining` starts (the gateway reconciles the bootstrap RBAC policy as
/// it starts).
fn spawn_auth_controllers(
    store: Arc<RemoteStore>,
    draining: &keelson_runtime::Draining,
) -> Vec<tokio::task::JoinHandle<()>> {
    use keelson_controllers::{AggregationController, RootCaController, ServiceAccountController};
    let store: Arc<dyn keelson_api::StoreApi> = store;
    vec![
        tokio::spawn(AggregationController::new(store.clone()).run(draining.clone().started())),
        tokio::spawn(ServiceAccountController::new(store.clone()).run(draining.clone().started())),
        tokio::spawn(RootCaController::new(store.clone()).run(draining.clone().started())),
        tokio::spawn(
            keelson_controllers::DisruptionController::new(store.clone())
                .run(draining.clone().started()),
        ),
        tokio::spawn(
            keelson_controllers::ResourceQuotaController::new(store)
                .run(draining.clone().started()),
        ),
    ]
}

#[cfg(test)]
mod tests;
