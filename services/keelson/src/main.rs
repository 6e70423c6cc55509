//! `keelson`: the embedded, all-in-one Kubernetes-compatible API server.
//!
//! Runs the gateway, store (sled in `<data-dir>/store`), admission, merge
//! and watch-cache services and the controllers in one process; they call
//! each other through the same traits the distributed services serve over
//! gRPC.
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
    /// How long old revisions are kept before compaction (e.g. `5m`, `10s`).
    #[arg(long = "etcd-compaction-interval", env = "KEELSON_ETCD_COMPACTION_INTERVAL", default_value = "5m", value_parser = humantime::parse_duration)]
    retention: Duration,
}

fn main() -> std::process::ExitCode {
    keelson_runtime::main("keelson", run(Flags::parse()))
}

async fn run(flags: Flags) -> Result<(), Box<dyn std::error::Error>> {
    let data_dir = flags.gateway.data_dir.clone();
    std::fs::create_dir_all(&data_dir)?;
    let store = keelson_storage::LocalStore::open(
        &data_dir.join("store"),
        keelson_storage::StoreConfig {
            retention: flags.retention,
            ..Default::default()
        },
    )
    .await?;
    let store: Arc<dyn StoreApi> = Arc::new(store);
    // One live catalog shared by admission and the gateway.
    let catalog = keelson_registry::Catalog::builtin();
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
        keelson_controllers::NamespaceController::new(store.clone()).run(std::future::pending()),
    );
    let backends = keelson_gateway::Backends {
        store,
        admission,
        merge,
        watch,
        catalog,
    };
    keelson_gateway::serve_until_shutdown(flags.gateway.into(), backends).await?;
    Ok(())
}
