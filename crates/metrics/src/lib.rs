//! Prometheus metrics with kube-apiserver's names, help texts, labels and
//! histogram buckets (`k8s.io/apiserver/pkg/endpoints/metrics`), kept in
//! one registry per process and written in the Prometheus text format by
//! [`Metrics::encode`]. Built on the `prometheus` crate.

mod http;

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

pub use http::{serve_http, MetricsServerError};

/// kube's `etcd_request_duration_seconds` buckets (the request buckets).
pub const STORAGE_DURATION_BUCKETS: [f64; 23] = REQUEST_DURATION_BUCKETS;

/// go-grpc-prometheus' `grpc_server_handling_seconds` buckets (Prometheus'
/// default buckets).
pub const GRPC_HANDLING_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A refresh run before every scrape (object counts read from storage).
pub type Refresh = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// kube's `apiserver_request_duration_seconds` buckets.
pub const REQUEST_DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// The `component` label of every request metric.
pub const COMPONENT: &str = "apiserver";

/// What a request metric is labelled with (kube's `RequestInfo` view).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestLabels {
    /// kube's metric verb: `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`,
    /// `APPLY`, `DELETE`, `DELETECOLLECTION`, or the HTTP method of a
    /// non-resource request.
    pub verb: String,
    /// `All` for dry-run requests, else empty.
    pub dry_run: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    /// `resource` (one named object), `namespace`, `cluster`, or empty for
    /// non-resource requests.
    pub scope: String,
}

/// Every metric of one process.
pub struct Metrics {
    registry: Registry,
    request_total: IntCounterVec,
    request_duration: HistogramVec,
    longrunning: IntGaugeVec,
    registered_watchers: IntGaugeVec,
    watch_events: IntCounterVec,
    requested_deprecated_apis: IntGaugeVec,
    grpc_started: IntCounterVec,
    grpc_handled: IntCounterVec,
    grpc_handling: HistogramVec,
    storage_duration: HistogramVec,
    storage_requests: IntCounterVec,
    storage_errors: IntCounterVec,
    storage_objects: IntGaugeVec,
    resource_objects: IntGaugeVec,
    declarative_mismatch: IntCounter,
    declarative_panic: IntCounter,
    refreshes: Mutex<Vec<std::sync::Arc<Refresh>>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// Label names of the request counter (kube's order).
const REQUEST_TOTAL_LABELS: [&str; 9] = [
    "verb",
    "dry_run",
    "group",
    "version",
    "resource",
    "subresource",
    "scope",
    "component",
    "code",
];

impl Metrics {
    fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let request_total = IntCounterVec::new(
            Opts::new(
                "apiserver_request_total",
                "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            ),
            &REQUEST_TOTAL_LABELS,
        )?;
        let request_duration = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_request_duration_seconds",
                "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            )
            .buckets(REQUEST_DURATION_BUCKETS.to_vec()),
            &REQUEST_TOTAL_LABELS[..8],
        )?;
        let longrunning = IntGaugeVec::new(
            Opts::new(
                "apiserver_longrunning_requests",
                "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
            ),
            &["verb", "group", "version", "resource", "subresource", "scope", "component"],
        )?;
        let registered_watchers = IntGaugeVec::new(
            Opts::new(
                "apiserver_registered_watchers",
                "[ALPHA] Number of currently registered watchers for a given resources",
            ),
            &["group", "version", "kind"],
        )?;
        let watch_events = IntCounterVec::new(
            Opts::new(
                "apiserver_watch_events_total",
                "[ALPHA] Number of events sent in watch clients",
            ),
            &["group", "version", "kind"],
        )?;
        registry.register(Box::new(request_total.clone()))?;
        registry.register(Box::new(request_duration.clone()))?;
        registry.register(Box::new(longrunning.clone()))?;
        registry.register(Box::new(registered_watchers.clone()))?;
        registry.register(Box::new(watch_events.clone()))?;
        let requested_deprecated_apis = IntGaugeVec::new(
            Opts::new(
                "apiserver_requested_deprecated_apis",
                "[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.",
            ),
            &["group", "version", "resource", "subresource", "removed_release"],
        )?;
        registry.register(Box::new(requested_deprecated_apis.clone()))?;
        let grpc_labels = ["grpc_method", "grpc_service", "grpc_type"];
        let grpc_started = IntCounterVec::new(
            Opts::new(
                "grpc_server_started_total",
                "Total number of RPCs started on the server.",
            ),
            &grpc_labels,
        )?;
        let grpc_handled = IntCounterVec::new(
            Opts::new(
                "grpc_server_handled_total",
                "Total number of RPCs completed on the server, regardless of success or failure.",
            ),
            &["grpc_code", "grpc_method", "grpc_service", "grpc_type"],
        )?;
        let grpc_handling = HistogramVec::new(
            HistogramOpts::new(
                "grpc_server_handling_seconds",
                "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
            )
            .buckets(GRPC_HANDLING_BUCKETS.to_vec()),
            &grpc_labels,
        )?;
        let storage_labels = ["operation", "group", "resource"];
        let storage_duration = HistogramVec::new(
            HistogramOpts::new(
                "etcd_request_duration_seconds",
                "[ALPHA] Etcd request latency in seconds for each operation and object type.",
            )
            .buckets(STORAGE_DURATION_BUCKETS.to_vec()),
            &storage_labels,
        )?;
        let storage_requests = IntCounterVec::new(
            Opts::new(
                "etcd_requests_total",
                "[ALPHA] Etcd request counts for each operation and object type.",
            ),
            &storage_labels,
        )?;
        let storage_errors = IntCounterVec::new(
            Opts::new(
                "etcd_request_errors_total",
                "[ALPHA] Etcd failed request counts for each operation and object type.",
            ),
            &storage_labels,
        )?;
        let storage_objects = IntGaugeVec::new(
            Opts::new(
                "apiserver_storage_objects",
                "[STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            ),
            &["resource"],
        )?;
        let resource_objects = IntGaugeVec::new(
            Opts::new(
                "apiserver_resource_objects",
                "[ALPHA] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            ),
            &["group", "resource"],
        )?;
        for c in [
            &grpc_started,
            &grpc_handled,
            &storage_requests,
            &storage_errors,
        ] {
            registry.register(Box::new(c.clone()))?;
        }
        for h in [&grpc_handling, &storage_duration] {
            registry.register(Box::new(h.clone()))?;
        }
        for g in [&storage_objects, &resource_objects] {
            registry.register(Box::new(g.clone()))?;
        }
        let declarative_mismatch = IntCounter::new(
            "apiserver_validation_declarative_validation_mismatch_total",
            "[BETA] Number of times declarative validation results differed from handwritten validation results for core types.",
        )?;
        let declarative_panic = IntCounter::new(
            "apiserver_validation_declarative_validation_panic_total",
            "[BETA] Number of times declarative validation has panicked during validation.",
        )?;
        registry.register(Box::new(declarative_mismatch.clone()))?;
        registry.register(Box::new(declarative_panic.clone()))?;
        #[cfg(target_os = "linux")]
        registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ))?;
        Ok(Metrics {
            registry,
            request_total,
            request_duration,
            longrunning,
            registered_watchers,
            watch_events,
            requested_deprecated_apis,
            grpc_started,
            grpc_handled,
            grpc_handling,
            storage_duration,
            storage_requests,
            storage_errors,
            storage_objects,
            resource_objects,
            declarative_mismatch,
            declarative_panic,
            refreshes: Mutex::new(Vec::new()),
        })
    }

    /// The process's metrics.
    pub fn global() -> &'static Metrics {
        static METRICS: OnceLock<Metrics> = OnceLock::new();
        // The definitions are constants: a failure is a defect of this file.
        METRICS.get_or_init(|| Metrics::new().unwrap_or_else(|e| panic!("metrics: {e}")))
    }

    /// Count one write whose declarative validation disagreed with the
    /// handwritten one (kube's `IncDeclarativeValidationMismatchMetric`).
    pub fn declarative_validation_mismatch(&self) {
        self.declarative_mismatch.inc();
    }

    /// Count one declarative validation run that panicked.
    pub fn declarative_validation_panic(&self) {
        self.declarative_panic.inc();
    }

    /// Count a finished request and observe its latency (kube's
    /// `MonitorRequest`). Watches are counted when they end, as kube does.
    pub fn observe_request(&self, l: &RequestLabels, code: u16, elapsed: Duration) {
        let code = code.to_string();
        self.request_total
            .with_label_values(&[
                &l.verb,
                &l.dry_run,
                &l.group,
                &l.version,
                &l.resource,
                &l.subresource,
                &l.scope,
                COMPONENT,
                &code,
            ])
            .inc();
        self.request_duration
            .with_label_values(&[
                &l.verb,
                &l.dry_run,
                &l.group,
                &l.version,
                &l.resource,
                &l.subresource,
                &l.scope,
                COMPONENT,
            ])
            .observe(elapsed.as_secs_f64());
    }

    /// A long-running request (a watch) started; the guard ends it.
    pub fn longrunning(&'static self, l: &RequestLabels) -> LongRunning {
        let gauge = self.longrunning.with_label_values(&[
            &l.verb,
            &l.group,
            &l.version,
            &l.resource,
            &l.subresource,
            &l.scope,
            COMPONENT,
        ]);
        gauge.inc();
        LongRunning { gauge }
    }

    /// A deprecated API was requested: its `apiserver_requested_deprecated_apis`
    /// series is 1 from now on (`removed_release` empty when no removal is
    /// planned).
    pub fn deprecated_api_requested(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
        removed_release: &str,
    ) {
        self.requested_deprecated_apis
            .with_label_values(&[group, version, resource, subresource, removed_release])
            .set(1);
    }

    /// A watcher of `group`/`version`/`kind` registered; the guard
    /// unregisters it.
    pub fn watcher(&'static self, group: &str, version: &str, kind: &str) -> Watcher {
        let gauge = self
            .registered_watchers
            .with_label_values(&[group, version, kind]);
        gauge.inc();
        Watcher {
            gauge,
            events: self.watch_events.with_label_values(&[group, version, kind]),
        }
    }

    /// A gRPC call of `service`/`method` (`grpc_type` `unary` or
    /// `server_stream`) started (go-grpc-prometheus' server metrics).
    pub fn grpc_started(&self, service: &str, method: &str, kind: &str) {
        self.grpc_started
            .with_label_values(&[method, service, kind])
            .inc();
    }

    /// A gRPC call ended with `code` (`OK`, `NotFound`, ...) after
    /// `elapsed`.
    pub fn grpc_handled(
        &self,
        service: &str,
        method: &str,
        kind: &str,
        code: &str,
        elapsed: Duration,
    ) {
        self.grpc_handled
            .with_label_values(&[code, method, service, kind])
            .inc();
        self.grpc_handling
            .with_label_values(&[method, service, kind])
            .observe(elapsed.as_secs_f64());
    }

    /// One storage request (kube's `RecordEtcdRequest`): `operation` on
    /// `group`/`resource` took `elapsed`, and failed when `failed`.
    pub fn storage_request(
        &self,
        operation: &str,
        group: &str,
        resource: &str,
        elapsed: Duration,
        failed: bool,
    ) {
        let labels = [operation, group, resource];
        self.storage_duration
            .with_label_values(&labels)
            .observe(elapsed.as_secs_f64());
        self.storage_requests.with_label_values(&labels).inc();
        if failed {
            self.storage_errors.with_label_values(&labels).inc();
        }
    }

    /// The number of stored objects of `group`/`resource` (kube's
    /// `UpdateStoreStats`; -1 when the count failed). Sets both
    /// `apiserver_storage_objects{resource}` (kube's `resource.group`) and
    /// `apiserver_resource_objects{group,resource}`.
    pub fn set_object_count(&self, group: &str, resource: &str, count: i64) {
        let gr = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        self.storage_objects.with_label_values(&[&gr]).set(count);
        self.resource_objects
            .with_label_values(&[group, resource])
            .set(count);
    }

    /// Run `refresh` before every scrape ([`Metrics::scrape`]).
    pub fn on_scrape(&self, refresh: Refresh) {
        if let Ok(mut r) = self.refreshes.lock() {
            r.push(std::sync::Arc::new(refresh));
        }
    }

    /// Run the scrape refreshes, then [`Metrics::encode`].
    pub async fn scrape(&self) -> Vec<u8> {
        let refreshes: Vec<_> = match self.refreshes.lock() {
            Ok(r) => r.clone(),
            Err(_) => Vec::new(),
        };
        for r in refreshes {
            r().await;
        }
        self.encode()
    }

    /// Every metric in the Prometheus text format (version 0.0.4).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing to a Vec fails only on a malformed family, which the
        // definitions above rule out.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        out
    }
}

/// The content type of [`Metrics::encode`].
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// An active long-running request; dropping it decrements the gauge.
#[derive(Debug)]
pub struct LongRunning {
    gauge: prometheus::IntGauge,
}

impl Drop for LongRunning {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// A registered watcher; counts the events sent to it and unregisters on
/// drop.
#[derive(Debug)]
pub struct Watcher {
    gauge: prometheus::IntGauge,
    events: prometheus::IntCounter,
}

impl Watcher {
    /// `n` events were sent.
    pub fn sent(&self, n: u64) {
        self.events.inc_by(n);
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> String {
        String::from_utf8(Metrics::global().encode()).unwrap()
    }

    #[test]
    fn requests_are_counted_with_kubes_labels_and_buckets() {
        let m = Metrics::global();
        let l = RequestLabels {
            verb: "LIST".into(),
            group: "apps".into(),
            version: "v1".into(),
            resource: "deployments".into(),
            scope: "namespace".into(),
            ..Default::default()
        };
        m.observe_request(&l, 200, Duration::from_millis(30));
        let t = text();
        assert!(t.contains("# TYPE apiserver_request_total counter"), "{t}");
        assert!(t.contains(r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="namespace",subresource="",verb="LIST",version="v1"} 1"#), "{t}");
        assert!(t.contains(r#"apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="apps",resource="deployments",scope="namespace",subresource="",verb="LIST",version="v1",le="0.05"} 1"#), "{t}");
        assert!(t.contains(r#"le="0.025"} 0"#), "{t}");
    }

    #[test]
    fn long_running_requests_and_watchers_are_gauges() {
        let m = Metrics::global();
        let l = RequestLabels {
            verb: "WATCH".into(),
            version: "v1".into(),
            resource: "pods".into(),
            scope: "cluster".into(),
            ..Default::default()
        };
        let lr = m.longrunning(&l);
        let w = m.watcher("", "v1", "Pod");
        w.sent(3);
        let t = text();
        assert!(t.contains(r#"apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 1"#), "{t}");
        assert!(
            t.contains(r#"apiserver_registered_watchers{group="",kind="Pod",version="v1"} 1"#),
            "{t}"
        );
        assert!(
            t.contains(r#"apiserver_watch_events_total{group="",kind="Pod",version="v1"} 3"#),
            "{t}"
        );
        drop((lr, w));
        let t = text();
        assert!(t.contains(r#"verb="WATCH",version="v1"} 0"#), "{t}");
        assert!(
            t.contains(r#"apiserver_registered_watchers{group="",kind="Pod",version="v1"} 0"#),
            "{t}"
        );
    }
}
