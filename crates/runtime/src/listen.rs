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
    serve_metrics_beside(service, addr).await?;
    Ok(listener)
}

/// How far the default metrics port is from the service's `--listen` port
/// (store 7001 → 9001, admission 9002, merge 9003, watch 9004,
/// controllers 9006).
pub const METRICS_PORT_OFFSET: u16 = 2000;

/// The `--metrics-bind-address` given to this process (`None`: the
/// default), recorded by [`ServiceFlags::into_config`](crate::ServiceFlags).
static METRICS_BIND: std::sync::OnceLock<MetricsBind> = std::sync::OnceLock::new();

/// Where `/metrics` is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsBind {
    /// Beside `--listen`: its host, its port + [`METRICS_PORT_OFFSET`]
    /// (port 0 when `--listen`'s port is 0).
    Default,
    /// `--metrics-bind-address=0` (or empty): no metrics endpoint.
    Off,
    /// An explicit address.
    At(SocketAddr),
}

impl MetricsBind {
    /// Parse `--metrics-bind-address`: `HOST:PORT`, or `0`/empty for off.
    pub fn parse(value: Option<&str>) -> Result<MetricsBind, ServiceError> {
        match value.map(str::trim) {
            None => Ok(MetricsBind::Default),
            Some("" | "0") => Ok(MetricsBind::Off),
            Some(v) => v
                .parse()
                .map(MetricsBind::At)
                .map_err(|e: std::net::AddrParseError| ServiceError::InvalidValue {
                    key: "metrics-bind-address".into(),
                    value: v.to_string(),
                    reason: e.to_string(),
                }),
        }
    }

    /// The metrics address for a service that asked to listen on `listen`.
    pub fn address(self, listen: SocketAddr) -> Option<SocketAddr> {
        match self {
            MetricsBind::Off => None,
            MetricsBind::At(a) => Some(a),
            MetricsBind::Default => {
                let port = match listen.port() {
                    0 => 0,
                    p => p.checked_add(METRICS_PORT_OFFSET)?,
                };
                Some(SocketAddr::new(listen.ip(), port))
            }
        }
    }
}

/// Record the process's `--metrics-bind-address` (the first call wins).
pub fn set_metrics_bind(value: Option<&str>) -> Result<(), ServiceError> {
    let bind = MetricsBind::parse(value)?;
    let _ = METRICS_BIND.set(bind);
    Ok(())
}

/// Bind the metrics address of a service listening on `listen`, announce
/// it as `metrics listening on HOST:PORT` and serve `/metrics` there for
/// the rest of the process (see `keelson_metrics::serve_http`). A taken
/// default address is a warning; a taken `--metrics-bind-address` an
/// error.
pub async fn serve_metrics_beside(service: &str, listen: SocketAddr) -> Result<(), ServiceError> {
    let bind = METRICS_BIND.get().copied().unwrap_or(MetricsBind::Default);
    let Some(addr) = bind.address(listen) else {
        return Ok(());
    };
    let bind_error = |source| ServiceError::Bind { addr, source };
    let listener = match TcpListener::bind(addr).await {
        Ok(l) => l,
        // Only an address the user asked for is worth failing for: the
        // default one may be taken (a restart on a fixed gRPC port).
        Err(e) if bind == MetricsBind::Default => {
            tracing::warn!(service, %addr, error = %e, "no /metrics: the default metrics address is taken");
            return Ok(());
        }
        Err(e) => return Err(bind_error(e)),
    };
    let local = listener.local_addr().map_err(bind_error)?;
    println!("metrics listening on {local}");
    tracing::info!(service, %local, "metrics listening");
    tokio::spawn(async move {
        if let Err(e) = keelson_metrics::serve_http(listener, std::future::pending()).await {
            tracing::warn!(error = %e, "metrics server stopped");
        }
    });
    Ok(())
}

#[cfg(test)]
mod metrics_bind_tests {
    use super::*;

    #[test]
    fn the_metrics_port_follows_listen_unless_given() {
        let listen: SocketAddr = "0.0.0.0:7001".parse().unwrap();
        assert_eq!(
            MetricsBind::parse(None).unwrap().address(listen),
            Some("0.0.0.0:9001".parse().unwrap())
        );
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert_eq!(
            MetricsBind::parse(None).unwrap().address(any),
            Some("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(MetricsBind::parse(Some("0")).unwrap().address(listen), None);
        assert_eq!(
            MetricsBind::parse(Some("127.0.0.1:19090"))
                .unwrap()
                .address(listen),
            Some("127.0.0.1:19090".parse().unwrap())
        );
        assert!(MetricsBind::parse(Some("nope")).is_err());
    }
}
