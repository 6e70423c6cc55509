//! OpenTelemetry traces across the distributed services: a tiny OTLP/gRPC
//! collector in the test process receives the spans of every service, and
//! one create is one trace — gateway, admission, merge and store spans in
//! one parent chain — continuing the client's `traceparent` when it sends
//! one.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use support::{Cluster, Mode};

/// One received span, flattened.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    name: String,
    trace_id: String,
    span_id: String,
    parent: String,
    attributes: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<Span>>>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn value(v: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        req: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut out = self.spans.lock().unwrap();
        for rs in req.into_inner().resource_spans {
            let service = rs
                .resource
                .iter()
                .flat_map(|r| r.attributes.iter())
                .find(|kv| kv.key == "service.name")
                .map(|kv| value(&kv.value))
                .unwrap_or_default();
            for ss in rs.scope_spans {
                for s in ss.spans {
                    out.push(Span {
                        service: service.clone(),
                        name: s.name.clone(),
                        trace_id: hex(&s.trace_id),
                        span_id: hex(&s.span_id),
                        parent: hex(&s.parent_span_id),
                        attributes: s
                            .attributes
                            .iter()
                            .map(|kv| (kv.key.clone(), value(&kv.value)))
                            .collect(),
                    });
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

impl Collector {
    /// The spans of the trace whose gateway span `pick` selects, once
    /// spans of `services` services have arrived (waits up to 60 s).
    fn trace_of(&self, pick: impl Fn(&Span) -> bool, services: usize) -> (Span, Vec<Span>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = self.spans.lock().unwrap().clone();
            if let Some(root) = spans.iter().find(|s| pick(s)) {
                let trace: Vec<Span> = spans
                    .iter()
                    .filter(|s| s.trace_id == root.trace_id)
                    .cloned()
                    .collect();
                let names: BTreeSet<&str> = trace.iter().map(|s| s.service.as_str()).collect();
                if names.len() >= services {
                    return (root.clone(), trace);
                }
            }
            assert!(
                Instant::now() < deadline,
                "no trace with {services} services; spans: {spans:#?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Every span's parent is in the trace, but the root's.
fn assert_one_chain(root: &Span, trace: &[Span], root_parent: &str) {
    let ids: BTreeSet<&str> = trace.iter().map(|s| s.span_id.as_str()).collect();
    for s in trace {
        if s.span_id == root.span_id {
            assert_eq!(s.parent, root_parent, "root span parent: {s:?}");
        } else {
            assert!(
                ids.contains(s.parent.as_str()),
                "span {s:?} has a parent outside the trace: {trace:#?}"
            );
        }
    }
}

const CREATE: &str = "POST /api/v1/namespaces/{:namespace}/configmaps";

/// A collector on a free port of `rt`: its spans and its endpoint.
fn start_collector(rt: &tokio::runtime::Runtime) -> (Collector, String) {
    let collector = Collector::default();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    rt.spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(collector.clone()))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    (collector, addr.to_string())
}

/// POST a ConfigMap named `name`, with `traceparent` when given.
fn create(rt: &tokio::runtime::Runtime, c: &Cluster, name: &str, traceparent: Option<&str>) {
    let body = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": {"a": "b"}
    });
    let status = rt.block_on(async {
        let mut req = c
            .client()
            .post(format!("{}/api/v1/namespaces/default/configmaps", c.url))
            .json(&body);
        if let Some(tp) = traceparent {
            req = req.header("traceparent", tp);
        }
        req.send().await.expect("create").status()
    });
    assert_eq!(status, 201);
}

/// kube's `--tracing-config-file` on the embedded binary: the endpoint is
/// a bare `host:port`, and `samplingRatePerMillion: 0` samples only
/// requests whose `traceparent` is sampled (parent-based, as kube).
#[test]
fn kubes_tracing_config_file_on_the_embedded_server() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (collector, addr) = start_collector(&rt);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("tracing.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: {addr}\nsamplingRatePerMillion: 0\n"
        ),
    )
    .expect("write");
    let file = file.to_string_lossy().to_string();
    let c = Cluster::start_with(Mode::Embedded, &["--tracing-config-file", &file]);
    // Not sampled: no traceparent, rate 0.
    create(&rt, &c, "unsampled", None);
    // Sampled by its parent.
    let trace_id = "0af7651916cd43dd8448eb211c80319c";
    create(
        &rt,
        &c,
        "sampled",
        Some(&format!("00-{trace_id}-b7ad6b7169203331-01")),
    );
    let (root, _) = collector.trace_of(|s| s.trace_id == trace_id && s.name == CREATE, 1);
    assert_eq!(root.service, "keelson");
    assert_eq!(root.parent, "b7ad6b7169203331");
    assert_eq!(
        root.attributes.get("http.target").map(String::as_str),
        Some("/api/v1/namespaces/default/configmaps")
    );
    let spans = collector.spans.lock().unwrap().clone();
    assert!(
        spans.iter().all(|s| s.trace_id == trace_id),
        "only the sampled request is traced: {spans:#?}"
    );
    drop(c);
}

#[test]
fn one_create_is_one_trace_across_services() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (collector, addr) = start_collector(&rt);
    let endpoint = format!("http://{addr}");
    let c = Cluster::start_with_env(
        Mode::Distributed,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    );

    // kubectl: a fresh trace rooted at the gateway's request span.
    c.ok(&["create", "configmap", "traced", "--from-literal=a=b"]);
    let (root, trace) = collector.trace_of(
        |s| {
            s.service == "keelson-gateway"
                && s.name == CREATE
                && s.attributes
                    .get("http.target")
                    .is_some_and(|t| t.starts_with("/api/v1/namespaces/default/configmaps"))
                && s.attributes
                    .get("user_agent.original")
                    .is_some_and(|u| u.starts_with("kubectl"))
        },
        4,
    );
    assert_eq!(
        root.attributes.get("http.method").map(String::as_str),
        Some("POST")
    );
    assert_eq!(
        root.attributes.get("http.status_code").map(String::as_str),
        Some("201")
    );
    let services: BTreeSet<&str> = trace.iter().map(|s| s.service.as_str()).collect();
    for s in [
        "keelson-gateway",
        "keelson-admission",
        "keelson-merge",
        "keelson-store",
    ] {
        assert!(
            services.contains(s),
            "{s} missing from {services:?}: {trace:#?}"
        );
    }
    assert_one_chain(&root, &trace, "");
    // The store's Create runs inside the gateway's client call to it.
    let store_create = trace
        .iter()
        .find(|s| s.service == "keelson-store" && s.name == "keelson.store.v1.Store/Create")
        .unwrap_or_else(|| panic!("no store Create span: {trace:#?}"));
    let client = trace
        .iter()
        .find(|s| s.span_id == store_create.parent)
        .expect("parent of the store span");
    assert_eq!(client.service, "keelson-gateway");
    assert_eq!(client.parent, root.span_id);

    // A client's traceparent is continued: same trace id, its span the
    // gateway span's parent.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    create(
        &rt,
        &c,
        "with-parent",
        Some(&format!("00-{trace_id}-{parent}-01")),
    );
    let (root, trace) = collector.trace_of(
        |s| s.service == "keelson-gateway" && s.trace_id == trace_id && s.name == CREATE,
        3,
    );
    assert_one_chain(&root, &trace, parent);
    drop(c);
}
