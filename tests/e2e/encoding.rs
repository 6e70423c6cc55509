//! What every representation shares: kube's JSON form of built-in objects
//! (field order, zero values Go always writes) and response compression.

mod support;

use std::io::Read;

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

async fn kube_json_form(c: &Cluster) {
    let http = c.client();
    let rcs = format!("{}/api/v1/namespaces/default/replicationcontrollers", c.url);
    // A minimal body, fields in an order no Go encoder would write.
    let body = json!({
        "spec": {
            "template": {
                "spec": {"containers": [{"image": "nginx", "name": "web"}]},
                "metadata": {"labels": {"app": "web"}},
            },
            "selector": {"app": "web"},
        },
        "metadata": {"name": "rc"},
        "kind": "ReplicationController",
        "apiVersion": "v1",
    });
    let r = http.post(&rcs).json(&body).send().await.expect("create");
    assert_eq!(r.status(), 201);
    let created = r.text().await.expect("body");
    let v: Value = serde_json::from_str(&created).expect("json");
    assert_eq!(
        keys(&v),
        ["kind", "apiVersion", "metadata", "spec", "status"]
    );
    assert_eq!(
        keys(&v["metadata"]),
        [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "labels",
            "managedFields"
        ]
    );
    // Go's value fields are there even when zero.
    assert_eq!(v["status"], json!({"replicas": 0}));
    let template = &v["spec"]["template"];
    assert_eq!(keys(template), ["metadata", "spec"]);
    assert!(template["metadata"]
        .as_object()
        .is_some_and(|m| m.get("creationTimestamp") == Some(&Value::Null)));
    assert_eq!(template["spec"]["containers"][0]["resources"], json!({}));
    assert_eq!(
        keys(&template["spec"]["containers"][0])[..2],
        ["name", "image"]
    );
    // A read answers the same bytes as the create did.
    let got = http
        .get(format!("{rcs}/rc"))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("body");
    assert_eq!(got, created);

    // A DaemonSet's status counters.
    let ds = json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    });
    let r = http
        .post(format!(
            "{}/apis/apps/v1/namespaces/default/daemonsets",
            c.url
        ))
        .json(&ds)
        .send()
        .await
        .expect("create");
    assert_eq!(r.status(), 201);
    let v: Value = r.json().await.expect("json");
    assert_eq!(
        v["status"],
        json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0})
    );
}

/// Discovery documents are API objects (a final newline); `/version` is
/// kube's raw JSON (indented, no newline).
async fn document_shapes(c: &Cluster) {
    let http = c.client();
    for path in ["/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1"] {
        let body = http
            .get(format!("{}{path}", c.url))
            .send()
            .await
            .expect("get")
            .text()
            .await
            .expect("body");
        assert!(
            body.ends_with("}\n") && !body.contains("\n "),
            "{path}: {body}"
        );
    }
    let r = http
        .get(format!("{}/api", c.url))
        .header(
            "Accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )
        .send()
        .await
        .expect("get");
    assert!(r.text().await.expect("body").ends_with("}\n"));
    let version = http
        .get(format!("{}/version", c.url))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("body");
    assert!(version.starts_with("{\n  \"major\": \"1\","), "{version}");
    assert!(version.ends_with("\n}"), "{version}");
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b)
        .read_to_end(&mut out)
        .expect("a gzip body");
    out
}

async fn compression(c: &Cluster) {
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    for i in 0..40 {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("big-{i}")}, "data": {"k": "x".repeat(5000)}});
        let r = http.post(&cms).json(&body).send().await.expect("create");
        assert_eq!(r.status(), 201);
    }
    // Over 128 KiB with `Accept-Encoding: gzip`: compressed.
    let r = http
        .get(&cms)
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .expect("list");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-encoding"], "gzip");
    assert_eq!(r.headers()["vary"], "Accept-Encoding");
    let body = gunzip(&r.bytes().await.expect("body"));
    let list: Value = serde_json::from_slice(&body).expect("json");
    // 40 and the root CA publisher's `kube-root-ca.crt`.
    let items = list["items"].as_array().cloned().unwrap_or_default();
    let ours = items
        .iter()
        .filter(|i| i["metadata"]["name"] != "kube-root-ca.crt")
        .count();
    assert_eq!(ours, 40);
    // The same list without the header, and a small answer with it: plain.
    let r = http.get(&cms).send().await.expect("list");
    assert!(r.headers().get("content-encoding").is_none());
    let plain = r.bytes().await.expect("body");
    assert_eq!(
        serde_json::from_slice::<Value>(&plain).expect("json")["items"],
        list["items"]
    );
    let r = http
        .get(format!("{cms}/big-1"))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .expect("get");
    assert!(r.headers().get("content-encoding").is_none());
    // A watch is never compressed, however much it sends.
    let r = http
        .get(format!("{cms}?watch=true&timeoutSeconds=1"))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .expect("watch");
    assert!(r.headers().get("content-encoding").is_none());
    let body = r.bytes().await.expect("body");
    assert!(body.len() > 128 * 1024);
    let first: Value = serde_json::from_slice(body.split(|b| *b == b'\n').next().expect("a line"))
        .expect("a JSON event");
    assert_eq!(first["type"], "ADDED");
}

#[test]
fn encoding_embedded() {
    let c = Cluster::start(Mode::Embedded);
    block_on(kube_json_form(&c));
    block_on(compression(&c));
    block_on(document_shapes(&c));
}

#[test]
fn encoding_distributed() {
    let c = Cluster::start(Mode::Distributed);
    block_on(kube_json_form(&c));
    block_on(compression(&c));
}
