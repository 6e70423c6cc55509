//! Restarting `keelson` on the same data directory keeps every object, every
//! resourceVersion and the revision counter.

mod support;

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

async fn get(c: &Cluster, path: &str) -> Value {
    let r = c
        .client()
        .get(format!("{}{}", c.url, path))
        .send()
        .await
        .expect("get");
    assert_eq!(r.status().as_u16(), 200);
    r.json().await.expect("json")
}

#[test]
fn restart_keeps_objects_and_revisions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut c = Cluster::start_in(Mode::Embedded, &data);
    let cms = "/api/v1/namespaces/default/configmaps";
    let before: Vec<Value> = block_on(async {
        let mut out = Vec::new();
        for i in 0..20 {
            let body =
                json!({"metadata": {"name": format!("cm-{i}")}, "data": {"i": i.to_string()}});
            let r = c
                .client()
                .post(format!("{}{}", c.url, cms))
                .json(&body)
                .send()
                .await
                .expect("post");
            assert_eq!(r.status().as_u16(), 201);
            out.push(r.json::<Value>().await.expect("json"));
        }
        // One update so an object has a resourceVersion above its creation.
        let r = c
            .client()
            .patch(format!("{}{}/cm-3", c.url, cms))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"data":{"i":"updated"}}"#)
            .send()
            .await
            .expect("patch");
        assert_eq!(r.status().as_u16(), 200);
        out[3] = r.json().await.expect("json");
        out
    });
    let list_rv_before = block_on(get(&c, cms))["metadata"]["resourceVersion"].clone();
    c.stop();

    let c = Cluster::start_in(Mode::Embedded, &data);
    block_on(async {
        for obj in &before {
            let name = obj["metadata"]["name"].as_str().unwrap();
            let now = get(&c, &format!("{cms}/{name}")).await;
            assert_eq!(&now, obj, "object {name} changed across restart");
        }
        let list = get(&c, cms).await;
        // The API server's own writes on start (the `kubernetes` Endpoints
        // follow the new port) may move the list's revision forward.
        let rv =
            |v: &serde_json::Value| v.as_str().and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        assert!(rv(&list["metadata"]["resourceVersion"]) >= rv(&list_rv_before));
        let max_before: u64 = before
            .iter()
            .map(|o| {
                o["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap()
            })
            .max()
            .unwrap();
        let r = c
            .client()
            .post(format!("{}{}", c.url, cms))
            .json(&json!({"metadata": {"name": "after"}}))
            .send()
            .await
            .expect("post");
        let after: Value = r.json().await.expect("json");
        let rv: u64 = after["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            rv > max_before,
            "revision counter went back: {rv} <= {max_before}"
        );
    });
}
