//! The merge service alone: Server-Side Apply and the `Update` bookkeeping
//! of a Deployment with 1 and 200 containers, and the managedFields bytes
//! they leave. `cargo bench -p keelson-merge --bench apply`.

use std::time::{Duration, Instant};

use keelson_api::{
    FieldOwner, GroupResource, ManagedFieldsRequest, MergeApi, PatchRequest, PatchType,
};
use keelson_merge::LocalMerge;
use serde_json::{json, Value};

fn deployment(containers: usize, round: usize) -> Value {
    let cs: Vec<Value> = (0..containers)
        .map(|i| {
            json!({
                "name": format!("c{i}"), "image": format!("registry.example/app-{i}:v{round}"),
                "ports": [{"containerPort": 8000 + i, "name": format!("p{i}")}],
                "env": [{"name": "MODE", "value": "bench"}],
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
            })
        })
        .collect();
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": cs}}},
    })
}

fn owner(manager: &str) -> FieldOwner {
    FieldOwner {
        manager: manager.into(),
        api_version: "apps/v1".into(),
        subresource: String::new(),
    }
}

fn percentiles(mut lat: Vec<Duration>) -> (f64, f64) {
    lat.sort();
    let at = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)].as_secs_f64() * 1e6;
    (at(0.50), at(0.99))
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let merge = LocalMerge::new(keelson_registry::Catalog::builtin());
    let gr = GroupResource::new("apps", "deployments");
    for containers in [1usize, 200] {
        let iterations = if containers == 1 { 2000 } else { 100 };
        let apply = |original: Value, round: usize| PatchRequest {
            patch_type: PatchType::Apply,
            gr: gr.clone(),
            kind: "Deployment".into(),
            owner: owner("bench"),
            force: false,
            original,
            patch: deployment(containers, round).to_string().into_bytes(),
        };
        let mut live = rt
            .block_on(merge.patch(apply(Value::Null, 0)))
            .expect("create by apply");
        let mut apply_lat = Vec::with_capacity(iterations);
        for round in 1..=iterations {
            let start = Instant::now();
            live = rt.block_on(merge.patch(apply(live, round))).expect("apply");
            apply_lat.push(start.elapsed());
        }
        let bytes = serde_json::to_vec(&live["metadata"]["managedFields"])
            .expect("json")
            .len();
        let mut update_lat = Vec::with_capacity(iterations);
        for round in 1..=iterations {
            let mut new = deployment(containers, iterations + round);
            new["metadata"]["managedFields"] = live["metadata"]["managedFields"].clone();
            let start = Instant::now();
            live = rt
                .block_on(merge.update_managed_fields(ManagedFieldsRequest {
                    gr: gr.clone(),
                    kind: "Deployment".into(),
                    owner: owner("bench-update"),
                    old: live,
                    new,
                }))
                .expect("update");
            update_lat.push(start.elapsed());
        }
        let (ap50, ap99) = percentiles(apply_lat);
        let (up50, up99) = percentiles(update_lat);
        println!(
            "containers={containers:<3} apply p50={ap50:.0}µs p99={ap99:.0}µs | update bookkeeping p50={up50:.0}µs p99={up99:.0}µs | managedFields after apply: {bytes} bytes"
        );
    }
}
