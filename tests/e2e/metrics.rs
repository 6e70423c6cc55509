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
