//! Binding a service's listener and announcing the bound address.

use std::net::SocketAddr;

use tokio::net::TcpListener;

use crate::ServiceError;

/// Parse a `listen` address given as text.
pub fn parse_listen(value: &str) -> Result<SocketAddr, ServiceError> {
    value
        .parse()
        .map_err(|e: std::net::AddrParseError| ServiceError::InvalidValue {
            key: "listen".into(),
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
