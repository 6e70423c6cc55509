//! Request metrics of the gateway (kube's `MonitorRequest`) over
//! `keelson-metrics`: every request is counted with kube's labels when its
//! answer is ready; a watch is a long-running request, counted when its
//! stream ends. `/metrics` serves them in the Prometheus text format.

use std::time::Instant;

use http::{HeaderMap, Method, Response};
use http_body_util::BodyExt;
use keelson_metrics::{LongRunning, Metrics, RequestLabels};

use crate::filters::request_info::{RequestInfo, Target, Verb};
use crate::http_util::{bytes_response, Body, Query};

/// kube's labels of a request: the metric verb (`GET`, `LIST`, `WATCH`,
/// `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`, or the method of a
/// non-resource request), `dry_run`, group, version, resource,
/// subresource and scope.
pub fn labels(
    info: &RequestInfo,
    method: &Method,
    query: &Query,
    headers: &HeaderMap,
) -> RequestLabels {
    let mut l = RequestLabels {
        verb: method.as_str().to_string(),
        ..Default::default()
    };
    let Target::Resource(ri) = &info.target else {
        return l;
    };
    l.scope = if !ri.name.is_empty() {
        "resource"
    } else if !ri.namespace.is_empty() {
        "namespace"
    } else {
        "cluster"
    }
    .to_string();
    l.verb = match (info.verb, method) {
        (Some(Verb::Watch), _) => "WATCH".into(),
        (Some(Verb::List), _) => "LIST".into(),
        (Some(Verb::Patch), _)
            if headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ct| ct.starts_with("application/apply-patch")) =>
        {
            "APPLY".into()
        }
        (_, m) if m == Method::HEAD => "GET".into(),
        (_, m) => m.as_str().to_string(),
    };
    if query.get("dryRun").is_some_and(|v| !v.is_empty()) {
        l.dry_run = "All".into();
    }
    l.group = ri.group.clone();
    l.version = ri.version.clone();
    l.resource = ri.resource.clone();
    l.subresource = ri.subresource.clone();
    l
}

/// Record `resp` for a request labelled `l` that started at `started`. A
/// watch is counted when its body ends (its duration is the watch's), and
/// is a long-running request until then.
pub fn record(l: RequestLabels, started: Instant, resp: Response<Body>) -> Response<Body> {
    let m = Metrics::global();
    let code = resp.status().as_u16();
    if l.verb != "WATCH" || !resp.status().is_success() {
        m.observe_request(&l, code, started.elapsed());
        return resp;
    }
    let guard = WatchGuard {
        _running: m.longrunning(&l),
        labels: l,
        started,
        code,
    };
    let (parts, body) = resp.into_parts();
    let body = body
        .map_frame(move |f| {
            let _ = &guard;
            f
        })
        .boxed_unsync();
    Response::from_parts(parts, body)
}

/// A watch in progress: counted as a request when it ends.
struct WatchGuard {
    _running: LongRunning,
    labels: RequestLabels,
    started: Instant,
    code: u16,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        Metrics::global().observe_request(&self.labels, self.code, self.started.elapsed());
    }
}

/// `GET /metrics` (the scrape refreshes first: the embedded store's
/// object counts).
pub async fn serve() -> Response<Body> {
    bytes_response(
        200,
        keelson_metrics::CONTENT_TYPE,
        Metrics::global().scrape().await,
    )
}

/// kube-apiserver's span name: `METHOD /api/v1/namespaces/{:namespace}/pods/{:name}`
/// for a resource request, the bare method otherwise.
pub fn span_name(info: &RequestInfo, method: &Method) -> String {
    let Target::Resource(ri) = &info.target else {
        return method.as_str().to_string();
    };
    let mut name = format!("{} /", method.as_str());
    if ri.group.is_empty() {
        name.push_str("api");
    } else {
        name.push_str("apis/");
        name.push_str(&ri.group);
    }
    name.push('/');
    name.push_str(&ri.version);
    if !ri.namespace.is_empty() {
        name.push_str("/namespaces/{:namespace}");
    }
    name.push('/');
    name.push_str(&ri.resource);
    if !ri.name.is_empty() {
        name.push_str("/{:name}");
    }
    if !ri.subresource.is_empty() {
        name.push('/');
        name.push_str(&ri.subresource);
    }
    name
}

/// The request's server span, as kube-apiserver's `WithTracing` makes it
/// (otelhttp's attributes and kube's `http.target`), child of the
/// request's W3C `traceparent` when it has one. `Span::none()` when tracing
/// is off.
pub fn request_span<B>(req: &http::Request<B>, info: &RequestInfo) -> tracing::Span {
    use keelson_runtime::telemetry;
    if !telemetry::enabled() {
        return tracing::Span::none();
    }
    let target = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let user_agent = req
        .headers()
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let version = match req.version() {
        http::Version::HTTP_2 => "2",
        http::Version::HTTP_10 => "1.0",
        _ => "1.1",
    };
    let span = tracing::info_span!(
        target: telemetry::TARGET,
        "HTTP",
        otel.name = %span_name(info, req.method()),
        otel.kind = "server",
        http.method = %req.method(),
        http.scheme = "https",
        http.target = %target,
        user_agent.original = %user_agent,
        net.protocol.version = version,
        http.status_code = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    telemetry::set_parent_from(&span, req.headers());
    span
}

/// Record the answer's status on the request span (5xx: an error, as
/// otelhttp marks it).
pub fn end_span(span: &tracing::Span, code: u16) {
    if span.is_none() {
        return;
    }
    span.record("http.status_code", code);
    if code >= 500 {
        span.record("otel.status_code", "ERROR");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(method: Method, path: &str, query: &str, ct: Option<&str>) -> RequestLabels {
        let mut h = HeaderMap::new();
        if let Some(ct) = ct {
            h.insert(http::header::CONTENT_TYPE, ct.parse().unwrap());
        }
        let q = Query::parse(Some(query));
        labels(&RequestInfo::new(&method, path, &q), &method, &q, &h)
    }

    #[test]
    fn span_names_as_kube_makes_them() {
        let name = |m: Method, path: &str| {
            let q = Query::parse(None);
            span_name(&RequestInfo::new(&m, path, &q), &m)
        };
        assert_eq!(
            name(Method::POST, "/api/v1/namespaces/d/configmaps"),
            "POST /api/v1/namespaces/{:namespace}/configmaps"
        );
        assert_eq!(
            name(
                Method::GET,
                "/apis/apps/v1/namespaces/d/deployments/x/scale"
            ),
            "GET /apis/apps/v1/namespaces/{:namespace}/deployments/{:name}/scale"
        );
        assert_eq!(name(Method::GET, "/api/v1/nodes"), "GET /api/v1/nodes");
        assert_eq!(name(Method::GET, "/readyz"), "GET");
    }

    #[test]
    fn verbs_and_scopes_as_kube_labels_them() {
        let list = l(
            Method::GET,
            "/apis/apps/v1/namespaces/d/deployments",
            "",
            None,
        );
        assert_eq!(
            (
                list.verb.as_str(),
                list.scope.as_str(),
                list.group.as_str(),
                list.resource.as_str()
            ),
            ("LIST", "namespace", "apps", "deployments")
        );
        let watch = l(Method::GET, "/api/v1/pods", "watch=true", None);
        assert_eq!(
            (watch.verb.as_str(), watch.scope.as_str()),
            ("WATCH", "cluster")
        );
        let get = l(Method::GET, "/api/v1/namespaces/d/pods/p/status", "", None);
        assert_eq!(
            (
                get.verb.as_str(),
                get.scope.as_str(),
                get.subresource.as_str()
            ),
            ("GET", "resource", "status")
        );
        let apply = l(
            Method::PATCH,
            "/api/v1/namespaces/d/configmaps/c",
            "dryRun=All",
            Some("application/apply-patch+yaml"),
        );
        assert_eq!(
            (apply.verb.as_str(), apply.dry_run.as_str()),
            ("APPLY", "All")
        );
        let health = l(Method::GET, "/readyz", "", None);
        assert_eq!((health.verb.as_str(), health.scope.as_str()), ("GET", ""));
    }
}
