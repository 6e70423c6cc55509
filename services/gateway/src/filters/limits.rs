//! The request body limit (kube-apiserver's `MaxRequestBodyBytes`, 3 MiB):
//! a body is read only by a handler that needs it, at most [`MAX_BODY_BYTES`]
//! (`413` beyond).
//!
//! A body the handler did not read — an answer given before it (401, 404,
//! 405, 415), or the rest of a body over the limit — is drained before the
//! answer is sent ([`RequestBody::drain`], up to [`DRAIN_BYTES`] within
//! [`DRAIN_TIME`]; beyond that, in the background). Over HTTP/2 an early
//! answer would otherwise fail the transfer (curl's error 92): dropping the
//! body unread makes hyper reset the stream while the client still sends,
//! and a client that sees an error status stops sending short of its
//! Content-Length, which the HTTP/2 layer answers with a `PROTOCOL_ERROR`
//! reset. Reading the body first lets the client finish its upload, then
//! read the answer on a cleanly closed stream, as from kube-apiserver.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::{Body as _, Incoming};
use keelson_apimachinery::{ApiError, ApiResult};

/// kube-apiserver's request body limit (`MaxRequestBodyBytes`).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;
/// At most this much of an unread body is drained.
pub const DRAIN_BYTES: usize = 64 * 1024 * 1024;
/// Draining an unread body stops after this long.
pub const DRAIN_TIME: Duration = Duration::from_secs(30);

/// A request body that is read on demand and drained when dropped unread.
pub struct RequestBody {
    body: Option<Incoming>,
    /// Keep what [`RequestBody::read`] returns (an audited request).
    keep: bool,
    kept: Option<Bytes>,
}

impl RequestBody {
    /// Wrap the connection's body.
    pub fn new(body: Incoming) -> Self {
        RequestBody {
            body: Some(body),
            keep: false,
            kept: None,
        }
    }

    /// Keep the body once read, for [`RequestBody::kept`] (the audit log).
    pub fn keep(&mut self) {
        self.keep = true;
    }

    /// The body a handler read, when [`RequestBody::keep`] asked for it.
    pub fn kept(&self) -> Option<&Bytes> {
        self.kept.as_ref()
    }

    /// Read the whole body, rejecting more than [`MAX_BODY_BYTES`] with
    /// `413 RequestEntityTooLarge`. A second read returns an empty body.
    pub async fn read(&mut self) -> ApiResult<Bytes> {
        let Some(body) = self.body.as_mut() else {
            return Ok(Bytes::new());
        };
        let mut buf = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame
                .map_err(|e| ApiError::bad_request(format!("error reading request body: {}", e)))?;
            if let Ok(data) = frame.into_data() {
                if buf.len() + data.len() > MAX_BODY_BYTES {
                    // The rest is drained on drop.
                    return Err(ApiError::too_large(MAX_BODY_BYTES));
                }
                buf.extend_from_slice(&data);
            }
        }
        self.body = None;
        let bytes = buf.freeze();
        if self.keep {
            self.kept = Some(bytes.clone());
        }
        Ok(bytes)
    }
}

impl RequestBody {
    /// Read and discard what no handler read, before the answer goes out;
    /// whatever is left beyond the drain bounds is drained in the
    /// background once this is dropped.
    pub async fn drain(&mut self) {
        let Some(body) = self.body.as_mut() else {
            return;
        };
        if body.is_end_stream() {
            self.body = None;
            return;
        }
        if let Ok(true) = tokio::time::timeout(DRAIN_TIME, discard(body)).await {
            self.body = None;
        }
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        let Some(body) = self.body.take() else {
            return;
        };
        if body.is_end_stream() {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(drain(body));
        }
    }
}

/// Read and discard what is left of a body, within the drain bounds.
async fn drain(mut body: Incoming) {
    let _ = tokio::time::timeout(DRAIN_TIME, discard(&mut body)).await;
}

/// Discard frames until the body ends (`true`), fails (`true`: nothing
/// more will come) or passes [`DRAIN_BYTES`] (`false`).
async fn discard(body: &mut Incoming) -> bool {
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return true;
        };
        if let Some(data) = frame.data_ref() {
            seen += data.len();
            if seen > DRAIN_BYTES {
                return false;
            }
        }
    }
    true
}
