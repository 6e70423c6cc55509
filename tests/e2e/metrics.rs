//! `/metrics`: kube-apiserver's request and watch metrics in the
//! Prometheus text format, behind authorization.

mod support;

use std::time::Duration;

use support::{block_on, Cluster, Mode};

async fn metrics_text(c: &Cluster) -> String {
    let r = c
        .client()
        .get(format!("{}/metrics", c.url))
        .send()
        .await
        .expect("metrics");
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    r.text().await.expect("body")
}

async fn scenario(c: &Cluster) {
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    for _ in 0..3 {
        let r = http.get(&cms).send().await.expect("list");
        assert_eq!(r.status(), 200);
    }
    let r = http
        .get(format!("{cms}/missing"))
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 404);
    // A watch is a long-running request and a registered watcher while it
    // lasts.
    let mut watch = http
        .get(format!("{cms}?watch=true&timeoutSeconds=30"))
        .send()
        .await
        .expect("watch");
    let _ = tokio::time::timeout(Duration::from_millis(500), watch.chunk()).await;

    let t = metrics_text(c).await;
    assert!(t.contains("# TYPE apiserver_request_total counter"), "{t}");
    assert!(
        t.contains(r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 3"#),
        "{t}"
    );
    assert!(
        t.contains(r#"apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 1"#),
        "{t}"
    );
    assert!(t.contains(r#"apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1",le="60"} 3"#), "{t}");
    assert!(
        t.contains(r#"apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"} 1"#),
        "{t}"
    );
    assert!(
        t.contains(r#"apiserver_registered_watchers{group="",kind="ConfigMap",version="v1"} 1"#),
        "{t}"
    );
    drop(watch);
    // Anonymous users may not read metrics (RBAC: system:monitoring).
    let r = c
        .anonymous_client()
        .get(format!("{}/metrics", c.url))
        .send()
        .await
        .expect("metrics");
    assert_eq!(r.status(), 403);
}

#[test]
fn metrics_embedded() {
    let c = Cluster::start(Mode::Embedded);
    block_on(scenario(&c));
}

/// `GET url` (a service's plain-HTTP `/metrics`).
async fn scrape(url: &str) -> String {
    let r = reqwest::get(url).await.expect("scrape");
    assert_eq!(r.status(), 200, "{url}");
    assert_eq!(
        r.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    r.text().await.expect("body")
}

/// The value of the sample `series` (`name{labels}` as written), if any.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// The store's and a watch replica's own `/metrics` in distributed mode:
/// kube's storage metrics, go-grpc-prometheus' server metrics and the
/// process metrics.
#[test]
fn metrics_of_the_internal_services() {
    let c = Cluster::start(Mode::Distributed);
    c.ok(&["create", "namespace", "metrics-e2e"]);
    for i in 0..3 {
        c.ok(&[
            "create",
            "configmap",
            &format!("cm-{i}"),
            "-n",
            "metrics-e2e",
            "--from-literal=a=b",
        ]);
    }
    // The namespace's kube-root-ca.crt comes from a controller: wait for
    // it, so that the number of ConfigMaps is settled.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !c
        .kubectl(&["get", "configmap", "kube-root-ca.crt", "-n", "metrics-e2e"])
        .status
        .success()
    {
        assert!(std::time::Instant::now() < deadline, "no kube-root-ca.crt");
        std::thread::sleep(Duration::from_millis(200));
    }
    let all = c.ok(&["get", "configmaps", "-A", "-o", "name"]);
    let configmaps = all.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(configmaps >= 4, "{all}");
    // A get of a missing object is a NotFound from the store.
    assert!(!c
        .kubectl(&["get", "configmap", "missing", "-n", "metrics-e2e"])
        .status
        .success());

    let store = c
        .metrics_url("keelson-store")
        .expect("store metrics address");
    let t = block_on(scrape(&store));
    assert_eq!(
        sample(
            &t,
            r#"apiserver_resource_objects{group="",resource="configmaps"}"#
        ),
        Some(configmaps as f64),
        "{t}"
    );
    assert_eq!(
        sample(&t, r#"apiserver_storage_objects{resource="configmaps"}"#),
        Some(configmaps as f64),
        "{t}"
    );
    let namespaces = c.ok(&["get", "namespaces", "-o", "name"]).lines().count();
    assert_eq!(
        sample(
            &t,
            r#"apiserver_resource_objects{group="",resource="namespaces"}"#
        ),
        Some(namespaces as f64),
        "{t}"
    );
    let creates = sample(
        &t,
        r#"etcd_requests_total{group="",operation="create",resource="configmaps"}"#,
    )
    .unwrap_or_else(|| panic!("{t}"));
    assert!(creates >= 3.0, "{t}");
    assert!(
        sample(
            &t,
            r#"etcd_request_duration_seconds_bucket{group="",operation="create",resource="configmaps",le="60"}"#
        ) == Some(creates),
        "{t}"
    );
    assert!(
        t.contains("# TYPE etcd_request_duration_seconds histogram"),
        "{t}"
    );
    let store_creates = sample(
        &t,
        r#"grpc_server_handled_total{grpc_code="OK",grpc_method="Create",grpc_service="keelson.store.v1.Store",grpc_type="unary"}"#,
    )
    .unwrap_or_else(|| panic!("{t}"));
    assert!(
        store_creates >= 4.0,
        "namespace and 3 ConfigMaps at least: {t}"
    );
    assert!(
        sample(
            &t,
            r#"grpc_server_handled_total{grpc_code="NotFound",grpc_method="Get",grpc_service="keelson.store.v1.Store",grpc_type="unary"}"#
        )
        .is_some_and(|n| n >= 1.0),
        "{t}"
    );
    assert!(
        t.contains(r#"grpc_server_handling_seconds_bucket{grpc_method="Create",grpc_service="keelson.store.v1.Store",grpc_type="unary",le="+Inf"}"#),
        "{t}"
    );
    assert!(
        sample(&t, "process_resident_memory_bytes").is_some_and(|b| b > 0.0),
        "{t}"
    );
    assert!(sample(&t, "process_cpu_seconds_total").is_some(), "{t}");

    // Lists are served by the watch replicas (spread over both): their
    // List calls are server streams, counted when they end.
    c.ok(&["get", "configmaps", "-n", "metrics-e2e"]);
    let mut lists = 0.0;
    for i in 0..support::WATCH_REPLICAS {
        let url = c
            .metrics_url(&format!("keelson-watch-{i}"))
            .expect("watch metrics address");
        let t = block_on(scrape(&url));
        assert!(sample(&t, "process_resident_memory_bytes").is_some(), "{t}");
        lists += sample(
            &t,
            r#"grpc_server_handled_total{grpc_code="OK",grpc_method="List",grpc_service="keelson.watch.v1.WatchCache",grpc_type="server_stream"}"#,
        )
        .unwrap_or(0.0);
    }
    assert!(lists >= 1.0, "no List counted by the watch replicas");
    // Every internal service serves /metrics.
    for name in ["keelson-admission", "keelson-merge", "keelson-controllers"] {
        let url = c
            .metrics_url(name)
            .unwrap_or_else(|| panic!("{name} metrics"));
        let t = block_on(scrape(&url));
        assert!(t.contains("process_cpu_seconds_total"), "{name}: {t}");
    }
}

/// The embedded server's /metrics has the storage metrics too.
#[test]
fn storage_metrics_embedded() {
    let c = Cluster::start(Mode::Embedded);
    c.ok(&["create", "configmap", "one", "--from-literal=a=b"]);
    let t = block_on(metrics_text(&c));
    assert!(
        sample(
            &t,
            r#"etcd_requests_total{group="",operation="create",resource="configmaps"}"#
        )
        .is_some_and(|n| n >= 1.0),
        "{t}"
    );
    let all = c.ok(&["get", "configmaps", "-A", "-o", "name"]);
    let n = all.lines().filter(|l| !l.trim().is_empty()).count();
    // Counted at the scrape; a controller may add a ConfigMap in between.
    let counted = sample(
        &t,
        r#"apiserver_resource_objects{group="",resource="configmaps"}"#,
    )
    .unwrap_or_else(|| panic!("{t}"));
    assert!(
        counted >= 1.0 && counted <= n as f64,
        "{counted} of {n}: {t}"
    );
}
