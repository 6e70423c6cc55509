//! `keelson`: the embedded, all-in-one Kubernetes-compatible API server.
//!
//! Runs the gateway, store (sled in `<data-dir>/store`), admission and merge
//! services in one process; they call each other through the same traits the
//! distributed services serve over gRPC.
#![forbid(unsafe_code)]

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use keelson_api::{AdmissionApi, MergeApi, StoreApi};

/// Command-line flags (each also settable as `KEELSON_<FLAG>`).
#[derive(Debug, Parser)]
#[command(
    name = "keelson",
    version,
    about = "Kubernetes-compatible API server (embedded mode)"
)]
struct Flags {
    /// Directory for the database, PKI, token and kubeconfig.
    #[arg(long, env = "KEELSON_DATA_DIR", default_value = "keelson-data")]
    data_dir: PathBuf,
    /// Address to serve HTTPS on.
    #[arg(long, env = "KEELSON_BIND_ADDRESS", default_value = "127.0.0.1")]
    bind_address: IpAddr,
    /// Port to serve HTTPS on; 0 picks a free port.
    #[arg(long, env = "KEELSON_SECURE_PORT", default_value_t = 6443)]
    secure_port: u16,
    /// Extra subject alternative names for the serving certificate.
    #[arg(long = "tls-san", env = "KEELSON_TLS_SAN", value_delimiter = ',')]
    tls_sans: Vec<String>,
    /// How long old revisions are kept before compaction (e.g. `5m`, `10s`).
    #[arg(long = "etcd-compaction-interval", env = "KEELSON_ETCD_COMPACTION_INTERVAL", default_value = "5m", value_parser = humantime::parse_duration)]
    retention: Duration,
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if let Err(e) = run(Flags::parse()).await {
        eprintln!("keelson: {e}");
        std::process::exit(1);
    }
}

async fn run(flags: Flags) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&flags.data_dir)?;
    let store = keelson_storage::LocalStore::open(
        &flags.data_dir.join("store"),
        keelson_storage::StoreConfig {
            retention: flags.retention,
            ..Default::default()
        },
    )
    .await?;
    let store: Arc<dyn StoreApi> = Arc::new(store);
    let admission: Arc<dyn AdmissionApi> =
        Arc::new(keelson_admission::LocalAdmission::new(store.clone()));
    let merge: Arc<dyn MergeApi> = Arc::new(keelson_merge::LocalMerge::new());
    let gw = keelson_gateway::start(
        keelson_gateway::GatewayConfig {
            data_dir: flags.data_dir.clone(),
            bind_address: flags.bind_address,
            secure_port: flags.secure_port,
            tls_sans: flags.tls_sans,
        },
        keelson_gateway::Backends {
            store,
            admission,
            merge,
        },
    )
    .await?;
    tracing::info!(kubeconfig = %gw.kubeconfig.display(), "kubeconfig written; export KUBECONFIG={}", gw.kubeconfig.display());
    // Machine-readable lines for scripts and tests.
    println!("serving on https://{}", gw.addr);
    println!("kubeconfig: {}", gw.kubeconfig.display());
    keelson_gateway::shutdown_signal().await;
    tracing::info!("shutting down");
    gw.task.abort();
    Ok(())
}
