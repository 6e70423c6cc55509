//! Helpers shared by the service binaries: the startup error, the TOML
//! `--config` file, binding with an announced address, waiting for a
//! shutdown signal, and the common `main`.

use std::fmt::Display;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

/// Why a service could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The config file could not be read or parsed.
    #[error("config file {path}: {source}")]
    ConfigFile {
        path: PathBuf,
        #[source]
        source: Box<config::ConfigError>,
    },
    /// A configured value is invalid.
    #[error("invalid {key} {value:?}: {reason}")]
    InvalidValue {
        key: &'static str,
        value: String,
        reason: String,
    },
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// An endpoint is unusable, or the gRPC server failed.
    #[error(transparent)]
    Rpc(#[from] crate::RpcError),
}

/// Read the TOML `--config` file, whose keys are the flag names; without a
/// file, every key is unset (`T::default()`).
pub fn read_config_file<T>(path: Option<&Path>) -> Result<T, ServiceError>
where
    T: serde::de::DeserializeOwned + Default,
{
    let Some(path) = path else {
        return Ok(T::default());
    };
    config::Config::builder()
        .add_source(config::File::from(path).format(config::FileFormat::Toml))
        .build()
        .and_then(|c| c.try_deserialize())
        .map_err(|source| ServiceError::ConfigFile {
            path: path.to_path_buf(),
            source: Box::new(source),
        })
}

/// Parse the config file's `listen` value.
pub fn parse_listen(value: &str) -> Result<SocketAddr, ServiceError> {
    value
        .parse()
        .map_err(|e: std::net::AddrParseError| ServiceError::InvalidValue {
            key: "listen",
            value: value.to_string(),
            reason: e.to_string(),
        })
}

/// Bind `addr` (port `0` picks a free port) and announce the bound address
/// as the stdout line `listening on HOST:PORT`, which tests and scripts read
/// to learn a port-0 address.
pub async fn bind_and_announce(
    service: &str,
    addr: SocketAddr,
) -> Result<TcpListener, ServiceError> {
    let bind_error = |source| ServiceError::Bind { addr, source };
    let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
    let local = listener.local_addr().map_err(bind_error)?;
    // stdout is line-buffered, so the line is visible as soon as it is printed.
    println!("listening on {local}");
    tracing::info!(service, %local, "listening");
    Ok(listener)
}

/// Completes on SIGTERM or ctrl-c (SIGINT).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for ctrl-c");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!("ctrl-c received, shutting down"),
        _ = term => tracing::info!("SIGTERM received, shutting down"),
    }
}

/// The `main` of a service binary: log to stderr (`RUST_LOG`, default
/// `info`; ANSI colours only on a terminal), run `service` on a multi-thread
/// runtime, and on error print `NAME: ERROR` to stderr and exit 1.
pub fn main_with<E: Display>(name: &str, service: impl Future<Output = Result<(), E>>) -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let runtime = tokio::runtime::Runtime::new().expect("cannot start the tokio runtime");
    match runtime.block_on(service) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}
