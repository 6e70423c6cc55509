//! The write path's JSON form: `go_json::normalize` of 10,000 Deployments
//! (kube's field order, Go zero values, Go maps' keys sorted) as the store
//! runs it on every version it writes, and their YAML (the go-yaml v2
//! emitter) as a YAML GET writes it.
//! Run: `cargo bench -p keelson-codec --bench kube_form`.

use std::time::Instant;

use serde_json::{json, Value};

/// A Deployment as a client sends it: keys in no Go order, maps unsorted.
fn deployment(i: usize) -> Value {
    json!({
        "spec": {
            "template": {
                "spec": {"containers": [{"resources": {"requests": {"memory": "64Mi", "cpu": "100m"}},
                    "image": "nginx:1.27", "name": "web", "env": [{"value": "1", "name": "B"}]}],
                    "nodeSelector": {"zone": "a", "disk": "ssd"}},
                "metadata": {"labels": {"tier": "front", "app": "web"}},
            },
            "selector": {"matchLabels": {"tier": "front", "app": "web"}},
            "replicas": 3,
        },
        "metadata": {"name": format!("web-{i}"), "namespace": "bench",
            "labels": {"z": "1", "app": "web", "team": "core"},
            "annotations": {"note": "x", "deployment.kubernetes.io/revision": "1"}},
        "kind": "Deployment",
        "apiVersion": "apps/v1",
    })
}

fn best_of(name: &str, runs: usize, mut f: impl FnMut() -> usize) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..runs {
        let start = Instant::now();
        n = f();
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{name:<10} best of {runs}: {:>7.2} ms  ({:.2} us per object)",
        best * 1e3,
        best * 1e6 / n as f64
    );
}

fn main() {
    let objects: Vec<Value> = (0..10_000).map(deployment).collect();
    best_of("normalize", 10, || {
        let mut all = objects.clone();
        for o in &mut all {
            keelson_codec::protobuf::go_json::normalize(o);
        }
        all.len()
    });
    best_of("clone", 10, || objects.clone().len());
    let mut normalized = objects.clone();
    for o in &mut normalized {
        keelson_codec::protobuf::go_json::normalize(o);
    }
    best_of("json", 10, || {
        let bytes: usize = normalized
            .iter()
            .map(|o| serde_json::to_vec(o).expect("json").len())
            .sum();
        std::hint::black_box(bytes);
        normalized.len()
    });
    best_of("yaml", 10, || {
        let bytes: usize = normalized
            .iter()
            .map(|o| {
                keelson_codec::encode(keelson_codec::Format::YAML, o)
                    .expect("yaml")
                    .len()
            })
            .sum();
        std::hint::black_box(bytes);
        normalized.len()
    });
}
