//! Shutdown: the one signal every binary waits for, and draining.
//!
//! When a server is asked to stop it stops accepting, tells its long-lived
//! response streams to end ([`Draining`]) so they do not hold the drain
//! open, and gives the rest at most a grace period ([`with_grace`]).

use std::future::Future;
use std::time::Duration;

use futures::stream::BoxStream;

/// How long a server waits for in-flight calls and open connections to
/// finish after shutdown is requested.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Completes on SIGTERM or ctrl-c (SIGINT). The SIGTERM handler is
/// installed when this is called, not when the future is first polled: a
/// server may answer before its shutdown future is polled, and a SIGTERM
/// arriving then must not kill the process with the default action.
/// Call it inside a Tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
    async move {
        let ctrl_c = async {
            if let Err(e) = tokio::signal::ctrl_c().await {
                tracing::warn!(error = %e, "cannot listen for ctrl-c");
                std::future::pending::<()>().await;
            }
        };
        #[cfg(unix)]
        let term = async {
            match term {
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
}

/// Tells long-lived response streams (watches) that their server has begun
/// shutting down, so they end at once instead of holding the drain open
/// for the grace period.
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

    /// End `stream` when draining starts, with `last` as its final item
    /// (a stream that ends on its own gets nothing added).
    pub fn guard<T: Send + 'static>(
        &self,
        stream: BoxStream<'static, T>,
        last: T,
    ) -> BoxStream<'static, T> {
        use futures::StreamExt as _;
        let after = self.clone();
        let last = futures::stream::once(async move { after.is_draining().then_some(last) })
            .filter_map(futures::future::ready);
        stream
            .take_until(self.clone().started())
            .chain(last)
            .boxed()
    }
}

/// Drive `serving` — a server that stops accepting once the shutdown it was
/// given completes — and give it at most `grace` after `started` fires.
/// `None` when the grace ran out first (open connections are dropped).
pub async fn with_grace<T>(
    serving: impl Future<Output = T>,
    started: Draining,
    grace: Duration,
) -> Option<T> {
    let deadline = async move {
        started.started().await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        out = serving => Some(out),
        () = deadline => {
            tracing::warn!(?grace, "connections did not drain in time; closing them");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;

    #[tokio::test]
    async fn a_guarded_stream_ends_with_its_last_item_when_draining_starts() {
        let (trigger, signal) = draining();
        let pending: BoxStream<'static, u8> = futures::stream::iter([1])
            .chain(futures::stream::pending())
            .boxed();
        let mut s = signal.guard(pending, 9);
        assert_eq!(s.next().await, Some(1));
        trigger.fire();
        assert_eq!(s.next().await, Some(9));
        assert_eq!(s.next().await, None);
    }

    #[tokio::test]
    async fn streams_that_end_on_their_own_get_nothing_added() {
        let (_trigger, signal) = draining();
        let s: BoxStream<'static, u8> = futures::stream::iter([1, 2]).boxed();
        assert_eq!(signal.guard(s, 9).collect::<Vec<_>>().await, [1, 2]);
        let s: BoxStream<'static, u8> = futures::stream::iter([3]).boxed();
        assert_eq!(Draining::never().guard(s, 9).collect::<Vec<_>>().await, [3]);
    }

    #[tokio::test]
    async fn the_grace_runs_only_after_shutdown_starts() {
        let (trigger, signal) = draining();
        let slow = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            7
        };
        // No shutdown yet: no deadline, however short the grace.
        let grace = Duration::from_millis(1);
        assert_eq!(with_grace(slow, signal.clone(), grace).await, Some(7));
        trigger.fire();
        let never = std::future::pending::<u8>();
        let grace = Duration::from_millis(20);
        assert_eq!(with_grace(never, signal, grace).await, None);
    }
}
