//! `keelson etcd` (or argv[0] `etcd`): a stand-in for the etcd envtest
//! starts before kube-apiserver, for when Keelson keeps the data itself.
//! It answers `GET /health` with etcd's `{"health":"true"}` (and the
//! [`crate::kube_apiserver::STANDIN_HEADER`] header by which Keelson's
//! kube-apiserver mode recognises it) and every other request with a 501
//! saying it is no etcd. It serves on the `--listen-client-urls` (http
//! only); other etcd flags are accepted and ignored.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The `host:port`s of `--listen-client-urls` (default etcd's
/// `http://localhost:2379`).
pub fn listen_addrs(args: &[String]) -> Result<Vec<String>, String> {
    let mut urls = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let body = a.trim_start_matches('-');
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if name == "listen-client-urls" {
            let v = match value {
                Some(v) => v,
                None => {
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or("flag needs an argument: --listen-client-urls")?;
                    i += 1;
                    v
                }
            };
            urls = Some(v);
        } else if value.is_none()
            && args.get(i).is_some_and(|n| !n.starts_with('-'))
            && a.starts_with('-')
        {
            // `--flag value` of a flag the stand-in ignores.
            i += 1;
        }
    }
    let urls = urls.unwrap_or_else(|| "http://localhost:2379".into());
    urls.split(',')
        .filter(|u| !u.is_empty())
        .map(|u| {
            let rest = u
                .strip_prefix("http://")
                .ok_or_else(|| format!("the etcd stand-in serves http only, not {u}"))?;
            Ok(rest.trim_end_matches('/').to_string())
        })
        .collect()
}

/// Serve until killed.
pub async fn serve(args: Vec<String>) -> Result<(), String> {
    let addrs = listen_addrs(&args)?;
    let mut tasks = Vec::new();
    for a in addrs {
        let listener = tokio::net::TcpListener::bind(&a)
            .await
            .map_err(|e| format!("listen tcp {a}: {e}"))?;
        eprintln!("keelson etcd stand-in: serving /health on http://{a}");
        tasks.push(tokio::spawn(async move {
            loop {
                let Ok((mut conn, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let n = conn.read(&mut buf).await.unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]);
                    let line = head.lines().next().unwrap_or("");
                    let path = line.split(' ').nth(1).unwrap_or("");
                    let (status, body) = if path == "/health" || path.starts_with("/health?") {
                        ("200 OK", "{\"health\":\"true\"}".to_string())
                    } else {
                        (
                            "501 Not Implemented",
                            format!(
                                "{{\"error\":\"this is Keelson's etcd stand-in: it serves /health only; {} is not served (Keelson keeps its data itself)\"}}",
                                path.replace('"', "")
                            ),
                        )
                    };
                    let resp = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{}: true\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        crate::kube_apiserver::STANDIN_HEADER,
                        body.len()
                    );
                    let _ = conn.write_all(resp.as_bytes()).await;
                    let _ = conn.shutdown().await;
                });
            }
        }));
    }
    keelson_runtime::shutdown_signal().await;
    for t in tasks {
        t.abort();
    }
    Ok(())
}
