//! `/metrics` on its own plain-HTTP port: the internal services' metrics
//! endpoint (kube components serve theirs beside their API port too).

use std::future::Future;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

use crate::{Metrics, CONTENT_TYPE};

/// Why the metrics server stopped.
#[derive(Debug, thiserror::Error)]
pub enum MetricsServerError {
    /// Accepting a connection failed.
    #[error("metrics server on {addr}: {source}")]
    Accept {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

async fn answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let mut resp = match (req.method(), req.uri().path()) {
        (&hyper::Method::GET | &hyper::Method::HEAD, "/metrics") => {
            let body = Metrics::global().scrape().await;
            let mut r = Response::new(Full::new(Bytes::from(body)));
            r.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(CONTENT_TYPE),
            );
            r
        }
        (_, "/metrics") => {
            let mut r = Response::new(Full::new(Bytes::from_static(b"method not allowed\n")));
            *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            r
        }
        _ => {
            let mut r = Response::new(Full::new(Bytes::from_static(b"404 page not found\n")));
            *r.status_mut() = StatusCode::NOT_FOUND;
            r
        }
    };
    if resp.status() != StatusCode::OK {
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
    }
    Ok(resp)
}

/// Serve `GET /metrics` (HTTP/1.1 and HTTP/2, no TLS) on `listener` until
/// `shutdown` completes.
pub async fn serve_http(
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), MetricsServerError> {
    let addr = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "metrics server: accept failed");
                    continue;
                }
                Err(source) => return Err(MetricsServerError::Accept { addr, source }),
            },
        };
        tokio::spawn(async move {
            let conn = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service_fn(answer))
                .await;
            if let Err(e) = conn {
                tracing::debug!(error = %e, "metrics connection ended");
            }
        });
    }
}

/// Errors of one connection (or a full fd table), not of the listener.
fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || e.raw_os_error() == Some(24)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn serves_metrics_and_404s_the_rest() {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve_http(l, async {
            let _ = rx.await;
        }));
        Metrics::global().set_object_count("apps", "deployments", 2);
        let get = |path: &'static str| async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.write_all(
                format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
            )
            .await
            .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            out
        };
        let m = get("/metrics").await;
        assert!(m.starts_with("HTTP/1.1 200"), "{m}");
        assert!(
            m.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
            "{m}"
        );
        assert!(
            m.contains(r#"apiserver_resource_objects{group="apps",resource="deployments"} 2"#),
            "{m}"
        );
        assert!(
            m.contains(r#"apiserver_storage_objects{resource="deployments.apps"} 2"#),
            "{m}"
        );
        assert!(m.contains("process_resident_memory_bytes"), "{m}");
        assert!(get("/other").await.starts_with("HTTP/1.1 404"));
        let _ = tx.send(());
        server.await.unwrap().unwrap();
    }
}
