//! Helpers shared by the service binaries: binding with an announced
//! address, and waiting for a shutdown signal.

use std::net::SocketAddr;

use tokio::net::TcpListener;

/// Bind `addr` (port `0` picks a free port) and announce the bound address
/// as the stdout line `listening on HOST:PORT`, which tests and scripts read
/// to learn a port-0 address.
pub async fn bind_and_announce(service: &str, addr: SocketAddr) -> std::io::Result<TcpListener> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
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
