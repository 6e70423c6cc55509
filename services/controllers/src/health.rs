//! The plain-HTTP health endpoint: `/healthz` and `/livez` while the
//! process runs, `/readyz` while the controllers follow the store.

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Answer one health request.
pub fn answer(path: &str, synced: bool) -> Response<Full<Bytes>> {
    let (code, body) = match path {
        "/healthz" | "/livez" => (200, "ok"),
        "/readyz" if synced => (200, "ok"),
        "/readyz" => (500, "controllers not synced with the store\n"),
        _ => (404, "404 page not found\n"),
    };
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::OK);
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Accept HTTP/1.1 health checks on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    synced: watch::Receiver<bool>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => return Ok(()),
            conn = listener.accept() => match conn {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "health endpoint: accept failed");
                    continue;
                }
            },
        };
        let synced = synced.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let ready = *synced.borrow();
                async move { Ok::<_, Infallible>(answer(req.uri().path(), ready)) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "health connection ended");
            }
        });
    }
}
