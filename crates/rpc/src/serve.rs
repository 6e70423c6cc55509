//! Serving a tonic router on a listener the caller bound.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_stream::{wrappers::TcpListenerStream, StreamExt};
use tonic::transport::server::Router;

use crate::error::RpcError;

/// How long [`serve`] waits for in-flight calls and open connections to
/// finish after shutdown is requested.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serve `router` on `listener` until `shutdown` completes, then let
/// in-flight calls finish (at most [`SHUTDOWN_GRACE`]) and return.
///
/// The caller binds the listener, so a test or binary can bind port `0` and
/// read the real port from `listener.local_addr()` first. Build the router
/// with `tonic::transport::Server::builder().add_service(...)`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RpcError> {
    serve_with_grace(listener, router, shutdown, SHUTDOWN_GRACE).await
}

/// [`serve`] with an explicit drain deadline: connections still open
/// `grace` after `shutdown` completed are dropped.
pub async fn serve_with_grace(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send,
    grace: Duration,
) -> Result<(), RpcError> {
    let incoming = TcpListenerStream::new(listener).map(|conn| {
        if let Ok(stream) = &conn {
            // Small unary calls must not wait on Nagle's algorithm.
            let _ = stream.set_nodelay(true);
        }
        conn
    });
    let (fired_tx, fired_rx) = tokio::sync::oneshot::channel::<()>();
    let signal = async move {
        shutdown.await;
        let _ = fired_tx.send(());
    };
    let server = router.serve_with_incoming_shutdown(incoming, signal);
    let deadline = async move {
        match fired_rx.await {
            Ok(()) => tokio::time::sleep(grace).await,
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        res = server => res.map_err(RpcError::Serve),
        () = deadline => {
            tracing::warn!(?grace, "connections did not drain in time; closing them");
            Ok(())
        }
    }
}
