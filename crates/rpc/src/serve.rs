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

/// Tells long-lived response streams (watches) that their server has begun
/// shutting down, so they end at once instead of holding the drain open
/// for [`SHUTDOWN_GRACE`].
#[derive(Debug, Clone)]
pub struct Draining(tokio::sync::watch::Receiver<bool>);

/// Fires a [`Draining`] signal.
#[derive(Debug)]
pub struct DrainTrigger(tokio::sync::watch::Sender<bool>);

/// A connected trigger and signal.
pub fn draining() -> (DrainTrigger, Draining) {
    let (tx, rx) = tokio::sync::watch::channel(false);
    (DrainTrigger(tx), Draining(rx))
}

impl DrainTrigger {
    /// Start draining.
    pub fn fire(&self) {
        self.0.send_replace(true);
    }
}

impl Draining {
    /// A signal that never fires.
    pub fn never() -> Self {
        let (trigger, signal) = draining();
        // Keep the sender alive for ever: a dropped sender is not a drain.
        std::mem::forget(trigger);
        signal
    }

    /// Whether draining has started.
    pub fn is_draining(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves when draining starts (never, if the trigger is dropped
    /// without firing).
    pub async fn started(mut self) {
        if self.0.wait_for(|d| *d).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// End `stream` when draining starts, with a final `Unavailable`
    /// status (no Kubernetes Status: clients treat it as the peer going
    /// away, and resume elsewhere).
    pub fn guard<T: Send + 'static>(
        &self,
        stream: futures::stream::BoxStream<'static, Result<T, tonic::Status>>,
    ) -> futures::stream::BoxStream<'static, Result<T, tonic::Status>> {
        use futures::StreamExt as F;
        let after = self.clone();
        let last = futures::stream::once(async move { after.is_draining() });
        let last = F::filter_map(last, |draining| async move {
            draining.then(|| Err(tonic::Status::unavailable("the server is shutting down")))
        });
        let until = F::take_until(stream, self.clone().started());
        F::boxed(F::chain(until, last))
    }
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
    let shutdown = async move {
        shutdown.await;
        trigger.fire();
    };
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
        let mut s = signal.guard(pending);
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
        let got: Vec<_> = F::collect::<Vec<_>>(signal.guard(s)).await;
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(Result::is_ok));
        // A never-firing signal leaves streams alone too.
        let s: futures::stream::BoxStream<'static, Result<u8, tonic::Status>> =
            F::boxed(futures::stream::iter([Ok(3)]));
        assert_eq!(
            F::collect::<Vec<_>>(Draining::never().guard(s)).await.len(),
            1
        );
    }
}
