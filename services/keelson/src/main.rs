//! `keelson`: the embedded, all-in-one Kubernetes-compatible API server.
//!
//! Runs the gateway, store (sled in `<data-dir>/store`, or etcd with
//! `--storage-backend=etcd3 --etcd-servers=...`), admission, merge and
//! watch-cache services and the controllers in one process; they call each
//! other through the same traits the distributed services serve over gRPC.
#![forbid(unsafe_code)]

mod etcd_standin;
mod kube_apiserver;

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
    // kube-apiserver / etcd personalities: argv[0]'s name or a subcommand.
    let mut args: Vec<String> = std::env::args().collect();
    let argv0 = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mode = match argv0.as_str() {
        "kube-apiserver" | "etcd" => argv0.clone(),
        _ => match args.get(1).map(String::as_str) {
            Some(m @ ("kube-apiserver" | "etcd" | "envtest-assets")) => {
                let m = m.to_string();
                args.remove(1);
                m
            }
            _ => String::new(),
        },
    };
    let rest = args.get(1..).map(<[String]>::to_vec).unwrap_or_default();
    match mode.as_str() {
        "kube-apiserver" => kube_apiserver_main(rest),
        "etcd" => keelson_runtime::main_with(
            "etcd",
            keelson_runtime::TelemetryOptions::default(),
            etcd_standin::serve(rest),
        ),
        "envtest-assets" => envtest_assets(&rest),
        _ => {
            let flags = Flags::parse();
            let telemetry = keelson_runtime::TelemetryOptions::from(&flags.tracing);
            keelson_runtime::main_with("keelson", telemetry, run(flags))
        }
    }
}

/// kube's way of failing a start: `Error: ...` and exit 1.
fn kube_error(message: impl std::fmt::Display) -> std::process::ExitCode {
    eprintln!("Error: {message}");
    std::process::ExitCode::FAILURE
}

fn kube_apiserver_main(args: Vec<String>) -> std::process::ExitCode {
    let mut kube = match kube_apiserver::parse(&args) {
        Ok(k) => k,
        Err(e) => return kube_error(e),
    };
    if kube.help {
        print!("{}", kube_apiserver::usage());
        return std::process::ExitCode::SUCCESS;
    }
    if kube.version {
        println!("Kubernetes {}", keelson_discovery::GIT_VERSION);
        return std::process::ExitCode::SUCCESS;
    }
    for name in &kube.ignored {
        eprintln!("W keelson: flag --{name} is accepted but not implemented by Keelson; ignored");
    }
    if let Err(e) = kube.finish() {
        return kube_error(e);
    }
    let mut keelson_args = vec!["kube-apiserver".to_string()];
    keelson_args.extend(kube.keelson.iter().cloned());
    let flags = match Flags::try_parse_from(&keelson_args) {
        Ok(f) => f,
        Err(e) => return kube_error(e.to_string().trim_start_matches("error: ").trim()),
    };
    let telemetry = keelson_runtime::TelemetryOptions::from(&flags.tracing);
    let etcd_servers = kube.etcd_servers.clone();
    keelson_runtime::main_with("kube-apiserver", telemetry, async move {
        let mut flags = flags;
        // A real etcd stores the data; Keelson's stand-in means Keelson
        // keeps it (sled in the data dir).
        // `KEELSON_ENVTEST_STORAGE=keelson`: keep the data in Keelson even
        // with a real etcd in `--etcd-servers`.
        let keep = std::env::var("KEELSON_ENVTEST_STORAGE").is_ok_and(|v| v == "keelson");
        if let Some(first) = etcd_servers.first() {
            if keep {
                tracing::info!("KEELSON_ENVTEST_STORAGE=keelson: not using --etcd-servers");
            } else if kube_apiserver::is_standin(first).await {
                tracing::info!("--etcd-servers is Keelson's etcd stand-in: storing in sled");
            } else {
                flags.storage.storage_backend = Some(keelson_store_service::StorageBackend::Etcd3);
                flags.storage.etcd_servers = etcd_servers;
            }
        }
        if let Err(e) = run(flags).await {
            eprintln!("Error: {e}");
            std::process::exit(1);
        }
        Ok::<(), String>(())
    })
}

/// `keelson envtest-assets DIR`: `DIR/kube-apiserver` and `DIR/etcd` (links
/// to this binary) and `DIR/kubectl` (a link to the kubectl on PATH), for
/// `KUBEBUILDER_ASSETS`.
fn envtest_assets(args: &[String]) -> std::process::ExitCode {
    let Some(dir) = args.first() else {
        eprintln!("usage: keelson envtest-assets DIR");
        return std::process::ExitCode::from(2);
    };
    match lay_out_assets(std::path::Path::new(dir)) {
        Ok(()) => {
            println!("{dir}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("keelson envtest-assets: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn lay_out_assets(dir: &std::path::Path) -> Result<(), String> {
    let io = |p: &std::path::Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let me = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
    let link = |target: &std::path::Path, name: &str| -> Result<(), String> {
        let at = dir.join(name);
        if at.symlink_metadata().is_ok() {
            std::fs::remove_file(&at).map_err(|e| io(&at, e))?;
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(target, &at).map_err(|e| io(&at, e))
        }
        #[cfg(not(unix))]
        {
            std::fs::copy(target, &at)
                .map(|_| ())
                .map_err(|e| io(&at, e))
        }
    };
    link(&me, "kube-apiserver")?;
    link(&me, "etcd")?;
    let kubectl = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("kubectl"))
            .find(|p| p.is_file())
    });
    match kubectl {
        Some(k) => link(&k, "kubectl")?,
        None => eprintln!("keelson envtest-assets: no kubectl on PATH; DIR/kubectl not made"),
    }
    Ok(())
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
