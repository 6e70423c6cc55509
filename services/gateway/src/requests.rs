//! Where requests are handled: watches on the server's runtime, every other
//! request on a runtime of its own.
//!
//! A watch is a task that wakes for every event; with 1,000 watchers and
//! 500 writes/s the server's runtime polls half a million of them a second.
//! A create handled on the same runtime waited behind that queue at each of
//! its awaits (admission, the store, the merge service over gRPC), so under
//! a fan-out writes took 20–60 ms instead of 2 — and the events of those
//! writes came as late. Handled here, a request's steps run on their own
//! threads, which the kernel schedules beside the busy ones; only the
//! answer's hand-back waits for the server's runtime.

use std::future::Future;
use std::sync::OnceLock;

use hyper::{Request, Response};
use keelson_apimachinery::ApiError;
use keelson_codec::Format;

use crate::http_util::{status_response, Body};

/// Worker threads of the requests runtime.
const WORKERS: usize = 2;

fn runtime() -> Option<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(WORKERS)
                .thread_name("keelson-requests")
                .enable_all()
                .build()
                .inspect_err(|e| {
                    tracing::warn!(error = %e, "no requests runtime; requests share the server's");
                })
                .ok()
        })
        .as_ref()
}

/// Whether a request may stream for long: a watch (`?watch=true|1`, or the
/// deprecated `/watch/` paths). Those stay on the server's runtime.
pub fn long_running<B>(req: &Request<B>) -> bool {
    let watch_param = req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|kv| matches!(kv, "watch=true" | "watch=1" | "watch=True"))
    });
    watch_param || req.uri().path().split('/').any(|s| s == "watch")
}

/// Run `handled` (the request's whole handling) on the requests runtime
/// and wait for its answer. A handler that panics answers kube's `500`
/// Status instead of resetting the stream.
pub async fn on_requests_runtime(
    handled: impl Future<Output = Response<Body>> + Send + 'static,
) -> Response<Body> {
    let Some(rt) = runtime() else {
        return handled.await;
    };
    match rt.spawn(handled).await {
        Ok(resp) => resp,
        Err(e) => {
            tracing::error!(error = %e, "request handler failed");
            status_response(
                &ApiError::internal("an error on the server (\"unknown\") has prevented the request from succeeding"),
                Format::JSON,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(uri: &str) -> Request<()> {
        Request::builder().uri(uri).body(()).unwrap()
    }

    #[test]
    fn watches_are_long_running() {
        assert!(long_running(&req("/api/v1/pods?watch=true")));
        assert!(long_running(&req(
            "/api/v1/namespaces/a/pods?labelSelector=x&watch=1"
        )));
        assert!(long_running(&req("/api/v1/watch/pods")));
        assert!(!long_running(&req("/api/v1/pods?watch=false")));
        assert!(!long_running(&req("/api/v1/pods")));
        assert!(!long_running(&req("/api/v1/namespaces/watchers/pods")));
    }
}
