//! `keelson`: the embedded, all-in-one Kubernetes-compatible API server.
//!
//! Runs the gateway, store (sled in `<data-dir>/store`, or etcd with
//! `--storage-backend=etcd3 --etcd-servers=...`), admission, merge and
//! watch-cache services and the controllers in one process; they call each
//! other through the same traits the distributed services serve over gRPC.
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use keelson_api::{AdmissionApi, MergeApi, StoreApi, WatchCacheApi};

/// Command-line flags (each also settable as `KEELSON_<FLAG>`).
#[derive(Debug, Parser)]
#[command(
    name = "keelson",
    version,
    about = "Kubernetes-compatible API server (embedded mode)"
)]
struct Flags {
    #[command(flatten)]
    gateway: keelson_gateway::GatewayFlags,
    /// kube's `--tracing-config-file` (OpenTelemetry traces over OTLP).
    #[command(flatten)]
    tracing: keelson_runtime::TracingFlags,
    /// How long old revisions are kept before compaction (e.g. `5m`, `10s`).
    #[arg(long = "etcd-compaction-interval", env = "KEELSON_ETCD_COMPACTION_INTERVAL", default_value = "5m", value_parser = humantime::parse_duration)]
    retention: Duration,
    /// `--storage-backend` (sled, etcd3) and the `--etcd-*` flags.
    #[command(flatten)]
    storage: keelson_store_service::StorageFlags,
}

fn main() -> std::process::ExitCode {
    let flags = Flags::parse();
    let telemetry = keelson_runtime::TelemetryOptions::from(&flags.tracing);
    keelson_runtime::main_with("keelson", telemetry, run(flags))
}

async fn run(flags: Flags) -> Result<(), Box<dyn std::error::Error>> {
    let data_dir = flags.gateway.data_dir.clone();
    std::fs::create_dir_all(&data_dir)?;
    let storage = flags.storage.storage();
    let on_etcd = matches!(storage, keelson_store_service::Storage::Etcd(..));
    let store =
        keelson_store_service::open_storage(&storage, &data_dir.join("store"), flags.retention)
            .await?;
    // kube's storage metrics, on the gateway's /metrics.
    let store: Arc<dyn StoreApi> = Arc::new(keelson_storage::MeteredStore::new(store));
    // One live catalog shared by admission, merge and the gateway, kept in
    // step with the stored CustomResourceDefinitions.
    let catalog = keelson_registry::Catalog::builtin();
    // `--runtime-config` and `--feature-gates`, before anything reads the catalog.
    flags.gateway.api.apply(&catalog)?;
    keelson_apiextensions::CatalogFollower::spawn(store.clone(), catalog.clone());
    let admission: Arc<dyn AdmissionApi> = Arc::new(keelson_admission::LocalAdmission::new(
        store.clone(),
        catalog.clone(),
    ));
    let merge: Arc<dyn MergeApi> = Arc::new(keelson_merge::LocalMerge::new(catalog.clone()));
    let watch: Arc<dyn WatchCacheApi> = Arc::new(keelson_watchcache::LocalWatchCache::new(
        store.clone(),
        keelson_watchcache::WatchCacheConfig::default(),
    ));
    // The controllers stop with the process.
    tokio::spawn(
        keelson_controllers::NamespaceController::with_catalog(store.clone(), catalog.clone())
            .run(std::future::pending()),
    );
    tokio::spawn(
        keelson_controllers::CrdController::new(store.clone()).run(std::future::pending()),
    );
    tokio::spawn(
        keelson_controllers::GarbageCollector::new(store.clone(), catalog.clone())
            .run(std::future::pending()),
    );
    // ClusterRole aggregation, and the per-namespace `default`
    // ServiceAccount and `kube-root-ca.crt` (the gateway reconciles the
    // bootstrap RBAC policy as it starts, as kube-apiserver does).
    {
        use keelson_controllers::{
            AggregationController, RootCaController, ServiceAccountController,
        };
        let pending = std::future::pending::<()>;
        tokio::spawn(AggregationController::new(store.clone()).run(pending()));
        tokio::spawn(ServiceAccountController::new(store.clone()).run(pending()));
        tokio::spawn(RootCaController::new(store.clone()).run(pending()));
        tokio::spawn(keelson_controllers::DisruptionController::new(store.clone()).run(pending()));
    }
    let backends = keelson_gateway::Backends {
        store,
        admission,
        merge,
        watch,
        catalog,
    };
    let mut gateway: keelson_gateway::GatewayConfig = flags.gateway.into();
    // kube's `etcd` livez/readyz check: the store's readiness is etcd's.
    gateway.etcd_health_check = on_etcd;
    keelson_gateway::serve_until_shutdown(gateway, backends).await?;
    Ok(())
}
