//! `keelson-gateway`: the HTTPS front of a distributed Keelson. Calls the
//! store, admission and merge services over gRPC.
#![forbid(unsafe_code)]

use std::net::IpAddr;
use std::path::PathBuf;
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
    /// Directory for the PKI, token and kubeconfig.
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
    /// The store service.
    #[arg(
        long,
        env = "KEELSON_STORE_ENDPOINT",
        default_value = "http://127.0.0.1:7001"
    )]
    store_endpoint: String,
    /// The admission service.
    #[arg(
        long,
        env = "KEELSON_ADMISSION_ENDPOINT",
        default_value = "http://127.0.0.1:7002"
    )]
    admission_endpoint: String,
    /// The merge service.
    #[arg(
        long,
        env = "KEELSON_MERGE_ENDPOINT",
        default_value = "http://127.0.0.1:7003"
    )]
    merge_endpoint: String,
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
        eprintln!("keelson-gateway: {e}");
        std::process::exit(1);
    }
}

async fn run(flags: Flags) -> Result<(), Box<dyn std::error::Error>> {
    let backends = keelson_gateway::Backends {
        store: Arc::new(keelson_rpc::RemoteStore::connect_lazy(
            &flags.store_endpoint,
        )?),
        admission: Arc::new(keelson_rpc::RemoteAdmission::connect_lazy(
            &flags.admission_endpoint,
        )?),
        merge: Arc::new(keelson_rpc::RemoteMerge::connect_lazy(
            &flags.merge_endpoint,
        )?),
    };
    let gw = keelson_gateway::start(
        keelson_gateway::GatewayConfig {
            data_dir: flags.data_dir,
            bind_address: flags.bind_address,
            secure_port: flags.secure_port,
            tls_sans: flags.tls_sans,
        },
        backends,
    )
    .await?;
    tracing::info!(
        "kubeconfig written; export KUBECONFIG={}",
        gw.kubeconfig.display()
    );
    println!("serving on https://{}", gw.addr);
    println!("kubeconfig: {}", gw.kubeconfig.display());
    keelson_gateway::shutdown_signal().await;
    gw.task.abort();
    Ok(())
}
