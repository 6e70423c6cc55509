//! Serving a tonic router on a listener the caller bound, with the
//! runtime's shutdown and drain (`keelson_runtime::shutdown`).

use std::future::Future;
use std::time::Duration;

use futures::stream::BoxStream;
use keelson_runtime::{draining, with_grace, DrainTrigger, Draining, ServiceError, SHUTDOWN_GRACE};
use tokio::net::TcpListener;
use tokio_stream::{wrappers::TcpListenerStream, StreamExt};
use tonic::transport::server::Router;

use crate::error::RpcError;

/// End a response stream (a watch) when draining starts, with a final
/// `Unavailable` status (no Kubernetes Status: clients treat it as the
/// peer going away, and resume elsewhere).
pub fn until_draining<T: Send + 'static>(
    draining: &Draining,
    stream: BoxStream<'static, Result<T, tonic::Status>>,
) -> BoxStream<'static, Result<T, tonic::Status>> {
    draining.guard(
        stream,
        Err(tonic::Status::unavailable("the server is shutting down")),
    )
}

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

/// [`serve`] that fires `trigger` when `shutdown` completes, so that the
/// watches of services built with its [`Draining`] end at once.
pub async fn serve_with_drain(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send,
    trigger: DrainTrigger,
) -> Result<(), RpcError> {
    let fire_on_shutdown = async move {
        shutdown.await;
        trigger.fire();
    };
    serve(listener, router, fire_on_shutdown).await
}

/// Serve one Keelson service on `listener` until `shutdown` completes, the
/// tail every gRPC service binary shares: `router` is built with the
/// [`Draining`] that fires when shutdown starts (so its watches end at once;
/// a service without streams ignores it), the gRPC health service is added
/// beside it, in-flight calls get at most
/// [`SHUTDOWN_GRACE`], and `SERVICE service stopped` is logged.
pub async fn serve_service(
    service: &str,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
    router: impl FnOnce(Draining) -> Router,
) -> Result<(), ServiceError> {
    let (trigger, draining) = draining();
    // The standard gRPC health service (`grpc.health.v1.Health`, the
    // server as a whole: service name ""), for Docker and Kubernetes
    // probes.
    let (_reporter, health) = tonic_health::server::health_reporter();
    let router = router(draining).add_service(health);
    serve_with_drain(listener, router, shutdown, trigger).await?;
    tracing::info!("{service} service stopped");
    Ok(())
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
    let (fired, started) = draining();
    let signal = async move {
        shutdown.await;
        fired.fire();
    };
    let server = router.serve_with_incoming_shutdown(incoming, signal);
    match with_grace(server, started, grace).await {
        Some(res) => res.map_err(RpcError::Serve),
        None => Ok(()),
    }
}

#[cfg(test)]
mod drain_tests {
    use super::*;
    use futures::StreamExt as F;

    #[tokio::test]
    async fn a_guarded_stream_ends_with_unavailable_when_draining_starts() {
        let (trigger, signal) = draining();
        let pending: futures::stream::BoxStream<'static, Result<u8, tonic::Status>> = F::boxed(
            F::chain(futures::stream::iter([Ok(1)]), futures::stream::pending()),
        );
        let mut s = until_draining(&signal, pending);
        assert_eq!(F::next(&mut s).await.unwrap().unwrap(), 1);
        trigger.fire();
        let last = F::next(&mut s).await.unwrap().unwrap_err();
        assert_eq!(last.code(), tonic::Code::Unavailable);
        assert!(last.details().is_empty(), "no Kubernetes Status: peer gone");
        assert!(F::next(&mut s).await.is_none());
    }

    #[tokio::test]
    async fn streams_that_end_on_their_own_get_nothing_added() {
        let (_trigger, signal) = draining();
        let s: futures::stream::BoxStream<'static, Result<u8, tonic::Status>> =
            F::boxed(futures::stream::iter([Ok(1), Ok(2)]));
        let got: Vec<_> = F::collect::<Vec<_>>(until_draining(&signal, s)).await;
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(Result::is_ok));
        // A never-firing signal leaves streams alone too.
        let s: futures::stream::BoxStream<'static, Result<u8, tonic::Status>> =
            F::boxed(futures::stream::iter([Ok(3)]));
        assert_eq!(
            F::collect::<Vec<_>>(until_draining(&Draining::never(), s))
                .await
                .len(),
            1
        );
    }
}
