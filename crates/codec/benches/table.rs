//! Table rows per object: a LIST of 10,000 pods encoded as a JSON Table
//! (`as=Table;g=meta.k8s.io;v=v1`, rows with PartialObjectMetadata), beside
//! the same list as plain JSON.
//! Run: `cargo bench -p keelson-codec --bench table`.

use std::time::Instant;

use keelson_codec::{Encoding, Format, ListEncoder, MetaVersion, TableOptions, Target};
use serde_json::json;

/// A pod as a create of a one-container pod stores it (managedFields
/// included), as a list item.
fn pod(i: usize) -> Vec<u8> {
    let v = json!({
        "metadata": {
            "name": format!("pod-{i}"), "namespace": "fmt",
            "uid": "6b1a4c1e-6a7d-4c1e-9c55-0d3b1f5c2a10", "resourceVersion": format!("{}", 1000 + i),
            "creationTimestamp": "2026-11-27T03:00:00Z",
            "labels": {"app": "web", "tier": "front"},
            "managedFields": [{"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
                "time": "2026-11-27T03:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tier": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {},
                        "f:name": {}, "f:resources": {}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                    "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                    "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}}]
        },
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "resources": {},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "securityContext": {}, "schedulerName": "default-scheduler", "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0},
        "status": {"phase": "Pending", "qosClass": "BestEffort"}
    });
    serde_json::to_vec(&v).expect("a pod encodes")
}

fn run(name: &str, format: Format, items: &[Vec<u8>]) {
    let head =
        json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "99999"}});
    let mut best = f64::MAX;
    let mut bytes = 0;
    for _ in 0..10 {
        let start = Instant::now();
        let mut enc = ListEncoder::with_options(
            format,
            &head,
            &TableOptions::default(),
            keelson_codec::table::time::now(),
        )
        .expect("a list head");
        bytes = 0;
        for item in items {
            if let Some(frame) = enc.push(item).expect("an item encodes") {
                bytes += frame.len();
            }
        }
        bytes += enc.finish().expect("a list ends").len();
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{name:<8} {bytes:>11} bytes  best of 10: {:>7.2} ms  ({:.2} us per item)",
        best * 1e3,
        best * 1e6 / items.len() as f64
    );
}

fn main() {
    let items: Vec<Vec<u8>> = (0..10_000).map(pod).collect();
    run("json", Format::JSON, &items);
    run(
        "table",
        Format {
            encoding: Encoding::Json,
            target: Target::Table(MetaVersion::V1),
        },
        &items,
    );
}
