//! Panic recovery (kube-apiserver's `WithPanicRecovery`): a handler that
//! panics answers `500` with kube's text instead of dropping the
//! connection, and the panic is logged.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use http::Response;

use crate::http_util::{bytes_response, Body};

/// kube-apiserver's answer to a request whose handler panicked.
const PANIC_TEXT: &str = "This request caused apiserver to panic. Look in the logs for details.\n";

/// Run `handler`, turning a panic into a `500` answer.
pub async fn guard<F>(handler: F) -> Response<Body>
where
    F: Future<Output = Response<Body>>,
{
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(panic = %what, "request handler panicked");
            let mut r = bytes_response(500, "text/plain; charset=utf-8", PANIC_TEXT);
            r.headers_mut().insert(
                http::header::X_CONTENT_TYPE_OPTIONS,
                http::HeaderValue::from_static("nosniff"),
            );
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_a_500() {
        let r = guard(async { panic!("boom") }).await;
        assert_eq!(r.status(), 500);
        assert_eq!(
            r.headers()[http::header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
    }

    #[tokio::test]
    async fn an_answer_passes() {
        let r = guard(async { bytes_response(204, "text/plain", "") }).await;
        assert_eq!(r.status(), 204);
    }
}
