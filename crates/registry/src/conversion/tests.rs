//! Table tests after kube's `pkg/apis/autoscaling/v1/conversion_test.go`
//! cases: CPU utilization ⇄ `targetCPUUtilizationPercentage`, other
//! metrics, current metrics, conditions and behaviour through the
//! annotations, and round trips both ways.

use serde_json::{json, Value};

use super::*;

fn v2(spec: Value, status: Value, annotations: Value) -> Value {
    let mut o = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "h", "namespace": "default", "annotations": annotations},
           "spec": spec, "status": status});
    if o["metadata"]["annotations"] == json!({}) {
        o["metadata"]
            .as_object_mut()
            .map(|m| m.remove("annotations"));
    }
    o
}

fn target_ref() -> Value {
    json!({"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"})
}

fn cpu(n: i64) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": n}}})
}

fn to(mut o: Value, version: &str) -> Value {
    convert(&mut o, version).expect("converts");
    o
}

fn annotation(o: &Value, key: &str) -> Value {
    let s = o["metadata"]["annotations"][key].as_str().unwrap_or("null");
    serde_json::from_str(s).expect("annotation is JSON")
}

#[test]
fn storage_versions() {
    assert_eq!(
        storage_version("autoscaling", "horizontalpodautoscalers"),
        Some("v2")
    );
    assert_eq!(storage_version("", "pods"), None);
    assert!(needs_conversion(
        "autoscaling",
        "v1",
        "horizontalpodautoscalers"
    ));
    assert!(!needs_conversion(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers"
    ));
    assert!(!needs_conversion("apps", "v1", "deployments"));
}

#[test]
fn cpu_utilization_is_the_v1_field() {
    let o = v2(
        json!({"scaleTargetRef": target_ref(), "minReplicas": 1, "maxReplicas": 5, "metrics": [cpu(50)]}),
        json!({"currentReplicas": 2, "desiredReplicas": 3,
               "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40, "averageValue": "120m"}}}]}),
        json!({"keep": "me"}),
    );
    let v1 = to(o.clone(), "v1");
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(
        v1["spec"],
        json!({"scaleTargetRef": target_ref(), "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50})
    );
    assert_eq!(
        v1["status"],
        json!({"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 40})
    );
    // The CPU metric is not repeated in the metrics annotation; the raw
    // current value is kept in current-metrics.
    assert!(v1["metadata"]["annotations"]
        .get(hpa::METRIC_SPECS)
        .is_none());
    assert_eq!(
        annotation(&v1, hpa::METRIC_STATUSES),
        json!([{"type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 40, "currentAverageValue": "120m"}}])
    );
    assert_eq!(v1["metadata"]["annotations"]["keep"], "me");
    // And back: the same v2 object.
    assert_eq!(to(v1, "v2"), o);
}

#[test]
fn other_metrics_travel_in_annotations() {
    let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}});
    let object = json!({"type": "Object", "object": {
        "describedObject": {"kind": "Service", "name": "front", "apiVersion": "v1"},
        "target": {"type": "Value", "value": "1k"},
        "metric": {"name": "hits", "selector": {"matchLabels": {"a": "b"}}}}});
    let external = json!({"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "30"}}});
    let memory = json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}});
    let container = json!({"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app", "target": {"type": "Utilization", "averageUtilization": 60}}});
    let o = v2(
        json!({"scaleTargetRef": target_ref(), "maxReplicas": 9,
               "metrics": [pods, cpu(70), object, external, memory, container]}),
        json!({"currentReplicas": 1, "desiredReplicas": 1}),
        json!({}),
    );
    let v1 = to(o.clone(), "v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70);
    assert_eq!(
        annotation(&v1, hpa::METRIC_SPECS),
        json!([
            {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}},
            {"type": "Object", "object": {"target": {"kind": "Service", "name": "front", "apiVersion": "v1"},
                "metricName": "hits", "targetValue": "1k", "selector": {"matchLabels": {"a": "b"}}}},
            {"type": "External", "external": {"metricName": "queue", "targetAverageValue": "30"}},
            {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "1Gi"}},
            {"type": "ContainerResource", "containerResource": {"name": "cpu", "targetAverageUtilization": 60, "container": "app"}}
        ])
    );
    // Back to v2: the other metrics first, the CPU metric last (kube's order).
    let back = to(v1, "v2");
    let metrics = back["spec"]["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 6);
    assert_eq!(metrics[5], cpu(70));
    assert_eq!(metrics[0], o["spec"]["metrics"][0]);
    assert_eq!(metrics[2], o["spec"]["metrics"][3]);
    assert_eq!(metrics[3], o["spec"]["metrics"][4]);
    assert_eq!(metrics[4], o["spec"]["metrics"][5]);
    // An Object target written as a Value keeps it.
    assert_eq!(
        metrics[1]["object"]["target"],
        json!({"type": "Value", "value": "1k"})
    );
    assert!(
        back["metadata"].get("annotations").is_none(),
        "round-trip annotations dropped"
    );
}

#[test]
fn v1_without_target_gets_the_default_cpu_metric() {
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}});
    let v2 = to(v1, "v2");
    assert_eq!(v2["spec"]["metrics"], json!([cpu(80)]));
    assert!(v2.get("status").is_none());
}

#[test]
fn conditions_and_behavior_round_trip() {
    let conditions = json!([{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2024-02-22T07:57:16Z",
                             "reason": "ReadyForNewScale", "message": "recommended size matches current size"}]);
    let behavior = json!({
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 120, "selectPolicy": "Min",
                      "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}});
    let o = v2(
        json!({"scaleTargetRef": target_ref(), "minReplicas": 2, "maxReplicas": 4, "metrics": [cpu(80)], "behavior": behavior}),
        json!({"observedGeneration": 3, "currentReplicas": 2, "desiredReplicas": 2, "conditions": conditions}),
        json!({}),
    );
    let v1 = to(o.clone(), "v1");
    assert_eq!(annotation(&v1, hpa::CONDITIONS), conditions);
    // The behaviour is the internal Go type's JSON: capitalised names.
    let raw = v1["metadata"]["annotations"][hpa::BEHAVIOR]
        .as_str()
        .expect("behavior");
    assert_eq!(
        raw,
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":120,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}"#
    );
    assert_eq!(v1["status"]["observedGeneration"], 3);
    assert_eq!(to(v1, "v2"), o);
}

#[test]
fn partial_behavior_from_v1_is_defaulted() {
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "annotations": {hpa::BEHAVIOR: r#"{"ScaleDown":{"StabilizationWindowSeconds":60}}"#}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}});
    let v2 = to(v1, "v2");
    assert_eq!(
        v2["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        60
    );
    assert_eq!(v2["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Max");
    assert_eq!(
        v2["spec"]["behavior"]["scaleUp"]["policies"][0],
        json!({"type": "Pods", "value": 4, "periodSeconds": 15})
    );
    assert!(v2["metadata"].get("annotations").is_none());
}

#[test]
fn bad_annotations_are_ignored_and_dropped() {
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "annotations": {hpa::METRIC_SPECS: "not json", "x": "y"}},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}});
    let v2 = to(v1, "v2");
    assert_eq!(v2["spec"]["metrics"], json!([cpu(50)]));
    assert_eq!(v2["metadata"]["annotations"], json!({"x": "y"}));
}

#[test]
fn same_version_and_unknown_kinds() {
    let mut o =
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": {}});
    let before = o.clone();
    convert(&mut o, "v2").expect("no-op");
    assert_eq!(o, before);
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    assert!(matches!(
        convert(&mut cm, "v2"),
        Err(ConversionError::Unsupported { .. })
    ));
}

#[test]
fn beta_storage_versions() {
    assert_eq!(
        storage_version("storage.k8s.io", "volumeattributesclasses"),
        Some("v1")
    );
    assert!(needs_conversion(
        "storage.k8s.io",
        "v1beta1",
        "volumeattributesclasses"
    ));
    assert!(needs_conversion(
        "resource.k8s.io",
        "v1beta2",
        "resourceslices"
    ));
    assert!(!needs_conversion("resource.k8s.io", "v1", "resourceslices"));
    // Beta-only kinds are stored as written.
    assert_eq!(
        storage_version("coordination.k8s.io", "leasecandidates"),
        None
    );
}

#[test]
fn same_schema_versions_change_the_api_version_only() {
    let vac = json!({"apiVersion": "storage.k8s.io/v1beta1", "kind": "VolumeAttributesClass",
        "metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "300"}});
    let v1 = to(vac.clone(), "v1");
    assert_eq!(v1["apiVersion"], "storage.k8s.io/v1");
    assert_eq!(v1["parameters"], vac["parameters"]);
    assert_eq!(to(v1, "v1beta1"), vac);
    let claim = json!({"apiVersion": "resource.k8s.io/v1beta2", "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}});
    let v1 = to(claim.clone(), "v1");
    assert_eq!(v1["spec"], claim["spec"]);
    assert!(convert(
        &mut json!({"apiVersion": "storage.k8s.io/v1beta1", "kind": "StorageClass"}),
        "v1"
    )
    .is_err());
}

#[test]
fn dra_v1beta1_device_requests() {
    let beta = json!({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {"devices": {"requests": [
        {"name": "gpu", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2,
         "selectors": [{"cel": {"expression": "true"}}]},
        {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "big.example.com"}]}
    ]}}});
    let v1 = to(beta.clone(), "v1");
    assert_eq!(v1["apiVersion"], "resource.k8s.io/v1");
    assert_eq!(
        v1["spec"]["devices"]["requests"][0],
        json!({"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "selectors": [{"cel": {"expression": "true"}}],
               "allocationMode": "ExactCount", "count": 2}})
    );
    assert_eq!(
        v1["spec"]["devices"]["requests"][1],
        json!({"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "big.example.com"}]})
    );
    let back = to(v1, "v1beta1");
    assert_eq!(
        back["spec"]["devices"]["requests"][1],
        beta["spec"]["devices"]["requests"][1]
    );
    let r0 = &back["spec"]["devices"]["requests"][0];
    assert_eq!(r0["deviceClassName"], "gpu.example.com");
    assert_eq!(r0["count"], 2);
    assert!(r0.get("exactly").is_none());
    // A template's claim spec is one level deeper.
    let t = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "d"}}]}}}});
    let b = to(t, "v1beta1");
    assert_eq!(
        b["spec"]["spec"]["devices"]["requests"][0],
        json!({"name": "r", "deviceClassName": "d"})
    );
}

#[test]
fn dra_v1beta1_basic_devices() {
    let v1 = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": "n1",
                 "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "x"}}, "capacity": {"mem": {"value": "1Gi"}}}]}});
    let beta = to(v1.clone(), "v1beta1");
    assert_eq!(
        beta["spec"]["devices"][0],
        json!({"name": "gpu-0", "basic": {"attributes": {"model": {"string": "x"}}, "capacity": {"mem": {"value": "1Gi"}}}})
    );
    assert_eq!(beta["spec"]["nodeName"], "n1");
    assert_eq!(to(beta, "v1"), v1);
}
