//! Metrics and traces of every gRPC call.
//!
//! - Server side, [`Observed`] wraps each generated service (applied by
//!   `into_server`): go-grpc-prometheus' `grpc_server_started_total`,
//!   `grpc_server_handled_total` and `grpc_server_handling_seconds`
//!   (recorded when the call's last message — its trailers — is sent, so a
//!   stream counts when it ends), and, when tracing is on, a server span
//!   whose parent is the caller's W3C `traceparent` metadata.
//! - Client side, [`Traced`] wraps each channel: when tracing is on, a
//!   client span per call, written into the call's `traceparent` metadata.
//!
//! Tracing off costs one atomic load per call on each side (no span, no
//! header).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::future::{BoxFuture, Either};
use http_body::{Body as HttpBody, Frame, SizeHint};
use keelson_metrics::Metrics;
use keelson_runtime::telemetry;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::transport::Channel;
use tower_service::Service;
use tracing::instrument::{Instrument, Instrumented};

/// The server-streaming methods (the rest are unary): go-grpc-prometheus'
/// `grpc_type`.
const STREAMING: [&str; 4] = [
    "keelson.store.v1.Store/List",
    "keelson.store.v1.Store/Watch",
    "keelson.watch.v1.WatchCache/List",
    "keelson.watch.v1.WatchCache/Watch",
];

/// `("keelson.store.v1.Store", "Create")` from `/keelson.store.v1.Store/Create`.
fn split_path(path: &str) -> (String, String) {
    let p = path.trim_start_matches('/');
    match p.rsplit_once('/') {
        Some((s, m)) => (s.to_string(), m.to_string()),
        None => (p.to_string(), String::new()),
    }
}

/// A gRPC status code as Go's `codes.Code.String()` names it.
pub fn code_name(code: i32) -> &'static str {
    match code {
        0 => "OK",
        1 => "Canceled",
        2 => "Unknown",
        3 => "InvalidArgument",
        4 => "DeadlineExceeded",
        5 => "NotFound",
        6 => "AlreadyExists",
        7 => "PermissionDenied",
        8 => "ResourceExhausted",
        9 => "FailedPrecondition",
        10 => "Aborted",
        11 => "OutOfRange",
        12 => "Unimplemented",
        13 => "Internal",
        14 => "Unavailable",
        15 => "DataLoss",
        16 => "Unauthenticated",
        _ => "Unknown",
    }
}

fn grpc_status(headers: &http::HeaderMap) -> Option<i32> {
    headers
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// A generated tonic service with gRPC server metrics and server spans.
#[derive(Debug, Clone)]
pub struct Observed<S> {
    inner: S,
}

impl<S> Observed<S> {
    /// Wrap a generated server.
    pub fn new(inner: S) -> Self {
        Observed { inner }
    }
}

impl<S: NamedService> NamedService for Observed<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> Service<http::Request<Body>> for Observed<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<ObservedBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let path = req.uri().path();
        let kind = if STREAMING.iter().any(|s| path.ends_with(s)) {
            "server_stream"
        } else {
            "unary"
        };
        let (service, method) = split_path(path);
        Metrics::global().grpc_started(&service, &method, kind);
        let span = if telemetry::enabled() {
            let span = tracing::info_span!(
                target: telemetry::TARGET,
                "grpc.server",
                otel.name = %format_args!("{service}/{method}"),
                otel.kind = "server",
                rpc.system = "grpc",
                rpc.service = %service,
                rpc.method = %method,
                rpc.grpc.status_code = tracing::field::Empty,
            );
            telemetry::set_parent_from(&span, req.headers());
            span
        } else {
            tracing::Span::none()
        };
        let started = Instant::now();
        let fut = self.inner.call(req).instrument(span.clone());
        Box::pin(async move {
            let resp = fut.await?;
            let (parts, body) = resp.into_parts();
            let done = Done {
                service,
                method,
                kind,
                started,
                span,
                // A trailers-only answer (an error) carries its status here.
                code: grpc_status(&parts.headers),
            };
            Ok(http::Response::from_parts(
                parts,
                ObservedBody {
                    inner: body,
                    done: Some(done),
                },
            ))
        })
    }
}

/// What is recorded when a call ends.
struct Done {
    service: String,
    method: String,
    kind: &'static str,
    started: Instant,
    span: tracing::Span,
    code: Option<i32>,
}

impl Done {
    /// Record the call as ended with `code`.
    fn finish(self, code: i32) {
        let name = code_name(code);
        Metrics::global().grpc_handled(
            &self.service,
            &self.method,
            self.kind,
            name,
            self.started.elapsed(),
        );
        self.span.record("rpc.grpc.status_code", code);
    }
}

/// A response body that records its call when its trailers are sent (or
/// when it is dropped: the client went away, `Canceled`).
pub struct ObservedBody {
    inner: Body,
    done: Option<Done>,
}

impl HttpBody for ObservedBody {
    type Data = bytes::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref() {
                    let code = grpc_status(trailers).unwrap_or(0);
                    if let Some(d) = self.done.take() {
                        d.finish(code);
                    }
                }
            }
            Poll::Ready(Some(Err(status))) => {
                if let Some(d) = self.done.take() {
                    d.finish(status.code() as i32);
                }
            }
            Poll::Ready(None) => {
                if let Some(d) = self.done.take() {
                    let code = d.code.unwrap_or(0);
                    d.finish(code);
                }
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for ObservedBody {
    fn drop(&mut self) {
        if let Some(d) = self.done.take() {
            let code = d.code.unwrap_or(1);
            d.finish(code);
        }
    }
}

/// The channel every remote client calls through.
pub type TracedChannel = Traced<Channel>;

/// A client channel that, when tracing is on, opens a client span per call
/// and sends its context as the call's `traceparent` metadata.
#[derive(Debug, Clone)]
pub struct Traced<S> {
    inner: S,
}

impl<S> Traced<S> {
    /// Wrap a channel.
    pub fn new(inner: S) -> Self {
        Traced { inner }
    }
}

impl<S> Service<http::Request<Body>> for Traced<S>
where
    S: Service<http::Request<Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Either<S::Future, Instrumented<S::Future>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<Body>) -> Self::Future {
        if !telemetry::enabled() {
            return Either::Left(self.inner.call(req));
        }
        let (service, method) = split_path(req.uri().path());
        let span = tracing::info_span!(
            target: telemetry::TARGET,
            "grpc.client",
            otel.name = %format_args!("{service}/{method}"),
            otel.kind = "client",
            rpc.system = "grpc",
            rpc.service = %service,
            rpc.method = %method,
        );
        telemetry::inject(&span, req.headers_mut());
        Either::Right(self.inner.call(req).instrument(span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_codes_as_go_grpc_prometheus_names_them() {
        assert_eq!(
            split_path("/keelson.store.v1.Store/Create"),
            ("keelson.store.v1.Store".to_string(), "Create".to_string())
        );
        assert_eq!(code_name(0), "OK");
        assert_eq!(code_name(5), "NotFound");
        assert_eq!(code_name(14), "Unavailable");
    }
}
