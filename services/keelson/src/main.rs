//! `keelson`: the embedded, all-in-one Kubernetes-compatible API server.
//!
//! Runs the gateway, store (sled in `<data-dir>/store`, memory with
//! `--storage-backend=memory`, or etcd with
//! `--storage-backend=etcd3 --etcd-servers=...`), admission, merge and
//! watch-cache services and the controllers in one process; they call each
//! other through the same traits the distributed services serve over gRPC.
#![forbid(unsafe_code)]

mod etcd_standin;
mod kube_apiserver;

use std::time::Duration;

use clap::Parser;

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
    /// `--storage-backend` (sled, etcd3, memory) and the `--etcd-*` flags.
    #[command(flatten)]
    storage: keelson_store_service::StorageFlags,
    /// `--enable-admission-plugins`, `--disable-admission-plugins`,
    /// `--admission-control-config-file` and DefaultTolerationSeconds'
    /// flags.
    #[command(flatten)]
    admission: keelson_admission_service::AdmissionPluginFlags,
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
    // kube-apiserver's option validation, before anything starts.
    if let Err(e) = flags.admission.plugins() {
        return kube_error(e);
    }
    let telemetry = keelson_runtime::TelemetryOptions::from(&flags.tracing);
    let etcd_servers = kube.etcd_servers.clone();
    keelson_runtime::main_with("kube-apiserver", telemetry, async move {
        let mut flags = flags;
        // A real etcd stores the data; Keelson's stand-in (or no
        // `--etcd-servers`) means Keelson keeps it: in memory, as envtest's
        // etcd lives as long as the test (`KEELSON_ENVTEST_STORAGE=sled`:
        // sled in the data dir; an explicit `--storage-backend` wins).
        // `KEELSON_ENVTEST_STORAGE=keelson`, `memory` or `sled`: keep the
        // data in Keelson even with a real etcd in `--etcd-servers`.
        let choice = std::env::var("KEELSON_ENVTEST_STORAGE").unwrap_or_default();
        let keep = matches!(choice.as_str(), "keelson" | "memory" | "sled");
        let mut keelson_keeps = true;
        if let Some(first) = etcd_servers.first() {
            if keep {
                tracing::info!("KEELSON_ENVTEST_STORAGE={choice}: not using --etcd-servers");
            } else if kube_apiserver::is_standin(first).await {
                tracing::info!("--etcd-servers is Keelson's etcd stand-in: Keelson keeps the data");
            } else {
                keelson_keeps = false;
                flags.storage.storage_backend = Some(keelson_store_service::StorageBackend::Etcd3);
                flags.storage.etcd_servers = etcd_servers;
            }
        }
        if keelson_keeps && flags.storage.storage_backend.is_none() {
            flags.storage.storage_backend = Some(if choice == "sled" {
                keelson_store_service::StorageBackend::Sled
            } else {
                keelson_store_service::StorageBackend::Memory
            });
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

/// The admission plugins the flags enable; warns about the enabled ones
/// Keelson does not run.
fn admission_plugins(
    flags: &keelson_admission_service::AdmissionPluginFlags,
) -> Result<keelson_admission::PluginConfig, String> {
    let plugins = flags.plugins()?;
    for p in plugins.not_implemented() {
        tracing::warn!(
            plugin = p,
            "admission plugin enabled but not implemented by Keelson"
        );
    }
    Ok(plugins)
}

async fn run(flags: Flags) -> Result<(), Box<dyn std::error::Error>> {
    // Installed before the server announces itself, so that a SIGTERM
    // right after `serving on` stops it cleanly.
    let shutdown = keelson_runtime::shutdown_signal();
    let server = keelson::start_embedded(keelson::EmbeddedConfig {
        storage: flags.storage.storage(),
        gateway: flags.gateway,
        retention: flags.retention,
        admission_plugins: admission_plugins(&flags.admission)?,
    })
    .await?;
    for p in &server.phases {
        tracing::debug!(phase = p.name, took = ?p.took, "start-up");
    }
    tracing::info!(
        "kubeconfig written; export KUBECONFIG={}",
        server.kubeconfig.display()
    );
    println!("serving on https://{}", server.addr);
    println!("kubeconfig: {}", server.kubeconfig.display());
    shutdown.await;
    tracing::info!("shutting down");
    server.stop();
    Ok(())
}
