//! `keelson-gateway`: the HTTPS front of a distributed Keelson. Calls the
//! store, admission and merge services and the watch replicas over gRPC.
#![forbid(unsafe_code)]

use std::sync::Arc;

use clap::Parser;

/// Command-line flags (each also settable as `KEELSON_<FLAG>`).
#[derive(Debug, Parser)]
#[command(
    name = "keelson-gateway",
    version,
    about = "Keelson gateway (distributed mode)"
)]
struct Flags {
    #[command(flatten)]
    gateway: keelson_gateway::GatewayFlags,
    /// kube's `--tracing-config-file` (OpenTelemetry traces over OTLP).
    #[command(flatten)]
    tracing: keelson_runtime::TracingFlags,
    /// The store service: one endpoint, or the replicas' endpoints
    /// comma-separated; calls are spread over every address they resolve
    /// to, and a replica that is down is skipped.
    #[arg(
        long,
        env = "KEELSON_STORE_ENDPOINT",
        default_value = "http://127.0.0.1:7001"
    )]
    store_endpoint: String,
    /// The admission service (comma-separated for several replicas, as
    /// `--store-endpoint`).
    #[arg(
        long,
        env = "KEELSON_ADMISSION_ENDPOINT",
        default_value = "http://127.0.0.1:7002"
    )]
    admission_endpoint: String,
    /// The merge service (comma-separated for several replicas, as
    /// `--store-endpoint`).
    #[arg(
        long,
        env = "KEELSON_MERGE_ENDPOINT",
        default_value = "http://127.0.0.1:7003"
    )]
    merge_endpoint: String,
    /// The watch replicas (comma-separated); lists and watches are spread
    /// over them, and a replica that is down is skipped.
    #[arg(
        long,
        env = "KEELSON_WATCH_ENDPOINTS",
        value_delimiter = ',',
        default_value = "http://127.0.0.1:7004"
    )]
    watch_endpoints: Vec<String>,
}

fn main() -> std::process::ExitCode {
    let flags = Flags::parse();
    let telemetry = keelson_runtime::TelemetryOptions::from(&flags.tracing);
    keelson_runtime::main_with("keelson-gateway", telemetry, run(flags))
}

/// The gRPC clients' own tasks — their connections, load balancers and
/// resolvers, and the readers of shared watch streams — run on a runtime of
/// their own. On the main runtime they queued behind the watchers' streams:
/// in a 1,000-watcher fan-out every gRPC call of a write waited its turn
/// there several times (the balancer's worker, the connection, the
/// answer), so writes — and with them the events — came late.
fn rpc_runtime() -> std::io::Result<&'static tokio::runtime::Runtime> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("keelson-rpc")
        .enable_all()
        .build()?;
    // Lives as long as the process (dropping a runtime inside another one
    // is not allowed).
    Ok(Box::leak(Box::new(rt)))
}

async fn run(flags: Flags) -> Result<(), Box<dyn std::error::Error>> {
    let rpc = rpc_runtime()?;
    let backends = {
        let _rpc = rpc.enter();
        backends(&flags)?
    };
    keelson_apiextensions::CatalogFollower::spawn(backends.store.clone(), backends.catalog.clone());
    keelson_gateway::serve_until_shutdown(flags.gateway.into(), backends).await?;
    Ok(())
}

/// The remote services, their clients made on the current runtime.
fn backends(flags: &Flags) -> Result<keelson_gateway::Backends, Box<dyn std::error::Error>> {
    let store: Arc<dyn keelson_api::StoreApi> = Arc::new(
        keelson_rpc::RemoteStore::connect_resolving(&flags.store_endpoint)?,
    );
    // The live catalog follows the stored CustomResourceDefinitions.
    let catalog = keelson_registry::Catalog::builtin();
    // `--runtime-config` and `--feature-gates`, before anything reads the catalog.
    flags.gateway.api.apply(&catalog)?;
    Ok(keelson_gateway::Backends {
        store,
        admission: Arc::new(keelson_rpc::RemoteAdmission::connect_resolving(
            &flags.admission_endpoint,
        )?),
        merge: Arc::new(keelson_rpc::RemoteMerge::connect_resolving(
            &flags.merge_endpoint,
        )?),
        // Host names are resolved again every few seconds: every address a
        // name has is a replica (`docker compose --scale watch=N`). Watchers
        // of the same collection, selectors and format share one stream.
        watch: Arc::new(keelson_rpc::SharedWatches::new(
            keelson_rpc::RemoteWatchCache::connect_resolving(&flags.watch_endpoints)?,
        )),
        catalog,
    })
}
