//! `/livez`, `/readyz`, `/healthz` as kube-apiserver's `healthz` package
//! serves them: `ok`, `?verbose`, `?exclude=<check>`, `/<endpoint>/<check>`.

use http::Response;

use crate::http_util::{bytes_response, Body, Query};
use crate::Backends;

const PLAIN: &str = "text/plain; charset=utf-8";

/// The checks of one endpoint, in registration order; on etcd, kube's
/// `etcd` (and, for readiness, `etcd-readiness`) after `log`.
fn checks(endpoint: &str, etcd: bool) -> &'static [&'static str] {
    match (endpoint, etcd) {
        ("livez", false) => &["ping", "log"],
        ("livez", true) => &["ping", "log", "etcd"],
        (_, false) => &["ping", "log", "store", "admission", "merge", "watch"],
        (_, true) => &[
            "ping",
            "log",
            "etcd",
            "etcd-readiness",
            "store",
            "admission",
            "merge",
            "watch",
        ],
    }
}

async fn run_check(b: &Backends, name: &str) -> Result<(), String> {
    let r = match name {
        // The store answers while its etcd does.
        "store" | "etcd" | "etcd-readiness" => b.store.ready().await,
        "admission" => b.admission.ready().await,
        "merge" => b.merge.ready().await,
        "watch" => b.watch.ready().await,
        _ => Ok(()),
    };
    r.map_err(|e| e.message)
}

fn text(code: u16, body: String) -> Response<Body> {
    let mut r = bytes_response(code, PLAIN, body);
    r.headers_mut().insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    r
}

/// Serve a health endpoint.
pub async fn serve(
    b: &Backends,
    etcd: bool,
    endpoint: &str,
    check: Option<&str>,
    q: &Query,
) -> Response<Body> {
    let all = checks(endpoint, etcd);
    if let Some(c) = check {
        if !all.contains(&c) {
            return text(404, "404 page not found\n".into());
        }
        return match run_check(b, c).await {
            Ok(()) => text(200, "ok".into()),
            Err(e) => text(500, format!("internal server error: {}\n", e)),
        };
    }
    let excluded: Vec<&str> = q
        .all("exclude")
        .into_iter()
        .flat_map(|s| s.split(','))
        .collect();
    let mut out = String::new();
    let mut failed = false;
    for c in all {
        if excluded.contains(c) {
            out.push_str(&format!("[+]{} excluded: ok\n", c));
            continue;
        }
        match run_check(b, c).await {
            Ok(()) => out.push_str(&format!("[+]{} ok\n", c)),
            Err(_) => {
                failed = true;
                out.push_str(&format!("[-]{} failed: reason withheld\n", c));
            }
        }
    }
    if failed {
        out.push_str(&format!("{} check failed\n", endpoint));
        return text(500, out);
    }
    if q.has("verbose") {
        out.push_str(&format!("{} check passed\n", endpoint));
        text(200, out)
    } else {
        text(200, "ok".into())
    }
}
