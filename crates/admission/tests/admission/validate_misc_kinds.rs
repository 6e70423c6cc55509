//! HorizontalPodAutoscaler metric sources, Event series and update rules,
//! ClusterRole aggregation selectors, RuntimeClass overhead and
//! tolerations, PodDisruptionBudget status conditions and ResourceQuota
//! quantities and scopes: kube 1.34's exact messages, and realistic valid
//! objects that must pass.

use keelson_api::AdmissionRequest;
use serde_json::{json, Value};

use crate::support::{accepted, admitted, create, message, update};

const AS: &str = "autoscaling";
const HPAS: &str = "horizontalpodautoscalers";

fn hpa(metrics: Value) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 10, "metrics": metrics}})
}

fn object_metric() -> Value {
    json!({"type": "Object", "object": {
        "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main-route"},
        "metric": {"name": "requests-per-second"},
        "target": {"type": "Value", "value": "2k"}}})
}

fn external_metric() -> Value {
    json!({"type": "External", "external": {
        "metric": {"name": "queue_messages_ready", "selector": {"matchLabels": {"queue": "worker_tasks"}}},
        "target": {"type": "AverageValue", "averageValue": "30"}}})
}

fn pods_metric() -> Value {
    json!({"type": "Pods", "pods": {"metric": {"name": "packets-per-second"},
        "target": {"type": "AverageValue", "averageValue": "1k"}}})
}

#[tokio::test]
async fn hpa_with_pods_object_and_external_metrics_passes() {
    let mut h = hpa(json!([
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
        pods_metric(), object_metric(), external_metric(),
        {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app",
            "target": {"type": "AverageValue", "averageValue": "500Mi"}}}]));
    h["spec"]["behavior"] = json!({"scaleDown": {"stabilizationWindowSeconds": 300,
        "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}});
    accepted(create(AS, HPAS, "default", h)).await;
    // The only scalable core kind may leave out the group.
    let mut rc = hpa(json!([pods_metric()]));
    rc["spec"]["scaleTargetRef"] = json!({"kind": "ReplicationController", "name": "web"});
    accepted(create(AS, HPAS, "default", rc)).await;
}

#[tokio::test]
async fn hpa_object_metric_details() {
    let h = hpa(json!([{"type": "Object", "object": {
        "describedObject": {"apiVersion": "a/b/c", "name": "web"},
        "metric": {"name": "a/b"},
        "target": {"type": "Bogus", "value": "-1"}}}]));
    assert_eq!(
        message(create(AS, HPAS, "default", h)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.metrics[0].object.describedObject.kind: Required value, spec.metrics[0].object.describedObject.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c, spec.metrics[0].object.metric.name: Invalid value: \"a/b\": may not contain '/', spec.metrics[0].object.target.type: Invalid value: \"Bogus\": must be either Utilization, Value, or AverageValue, spec.metrics[0].object.target.value: Invalid value: \"-1\": must be positive]"
    );
    let h = hpa(json!([{"type": "Object", "object": {
        "describedObject": {"kind": "Service", "name": "web"},
        "metric": {"name": "rps"}, "target": {"type": "Value"}}}]));
    assert_eq!(
        message(create(AS, HPAS, "default", h)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue"
    );
}

#[tokio::test]
async fn hpa_pods_and_external_targets() {
    let h = hpa(json!([
        {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "Value", "value": "10"}}},
        {"type": "External", "external": {"metric": {"name": "queue"},
            "target": {"type": "Value", "value": "10", "averageValue": "5"}}},
        {"type": "External", "external": {"metric": {}, "target": {"type": "AverageValue"}}}]));
    assert_eq!(
        message(create(AS, HPAS, "default", h)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue, spec.metrics[1].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target, spec.metrics[2].external.metric.name: Required value: must specify a metric name, spec.metrics[2].external.target.averageValue: Required value: must set either a target value for metric or a per-pod target]"
    );
}

#[tokio::test]
async fn hpa_metric_source_must_match_type() {
    let mut m = object_metric();
    m["type"] = json!("Pods");
    assert_eq!(
        message(create(AS, HPAS, "default", hpa(json!([m])))).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.metrics[0].pods: Required value: must populate information for the given metric source"
    );
    let mut m = pods_metric();
    m["external"] = external_metric()["external"].clone();
    assert_eq!(
        message(create(AS, HPAS, "default", hpa(json!([m])))).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.metrics[0].external: Forbidden: must populate the given metric source only"
    );
    let h = hpa(
        json!([{"type": "ContainerResource", "containerResource": {"name": "pods",
        "container": "App_1", "target": {"type": "Utilization", "averageUtilization": 60}}}]),
    );
    assert_eq!(
        message(create(AS, HPAS, "default", h)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.metrics[0].containerResource.name: Invalid value: \"pods\": must be a standard resource for containers, spec.metrics[0].containerResource.container: Invalid value: \"App_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"
    );
}

#[tokio::test]
async fn hpa_scale_to_zero_is_gated_and_ratchets() {
    let mut h = hpa(json!([pods_metric()]));
    h["spec"]["minReplicas"] = json!(0);
    assert_eq!(
        message(create(AS, HPAS, "default", h)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]"
    );
    // A stored object with minReplicas 0 may keep it.
    let mut old = hpa(json!([external_metric()]));
    old["spec"]["minReplicas"] = json!(0);
    let mut new = old.clone();
    new["spec"]["maxReplicas"] = json!(20);
    accepted(update(AS, HPAS, "default", old, new)).await;
}

#[tokio::test]
async fn hpa_scale_target_api_version() {
    let mut h = hpa(json!([pods_metric()]));
    h["spec"]["scaleTargetRef"] = json!({"kind": "Deployment", "name": "web"});
    assert_eq!(
        message(create(AS, HPAS, "default", h.clone())).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.scaleTargetRef.apiVersion: Invalid value: \"\": apiVersion must specify API group"
    );
    // An update that keeps the kind and apiVersion is not rechecked.
    let mut new = h.clone();
    new["spec"]["maxReplicas"] = json!(20);
    accepted(update(AS, HPAS, "default", h, new)).await;
}

#[tokio::test]
async fn hpa_v1_is_validated_as_the_internal_type() {
    let h = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5, "targetCPUUtilizationPercentage": 0}});
    assert_eq!(
        message(create(AS, HPAS, "default", h)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"
    );
    // The metrics a v1 object carries in its annotation come first.
    let h = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default", "annotations": {
            "autoscaling.alpha.kubernetes.io/metrics": "[{\"type\":\"Pods\",\"pods\":{\"metricName\":\"\",\"targetAverageValue\":\"1\"}}]"}},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5, "targetCPUUtilizationPercentage": 0}});
    assert_eq!(
        message(create(AS, HPAS, "default", h)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.metrics[0].pods.metric.name: Required value: must specify a metric name, spec.metrics[1].resource.target.averageUtilization: Invalid value: 0: must be greater than 0]"
    );
}

#[tokio::test]
async fn hpa_tolerance_is_dropped_while_the_gate_is_off() {
    let mut h = hpa(json!([pods_metric()]));
    h["spec"]["behavior"] = json!({"scaleUp": {"tolerance": "0.05",
        "policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}]}});
    let o = admitted(create(AS, HPAS, "default", h.clone())).await;
    assert_eq!(o["spec"]["behavior"]["scaleUp"].get("tolerance"), None);
    // A stored tolerance stays, and is validated.
    let mut new = h.clone();
    new["spec"]["behavior"]["scaleUp"]["tolerance"] = json!("-1");
    assert_eq!(
        message(update(AS, HPAS, "default", h, new)).await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.behavior.scaleUp.tolerance: Invalid value: \"-1\": must be greater than or equal to 0"
    );
}

const EV: &str = "events.k8s.io";

fn event() -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "web.17f", "namespace": "default"},
        "eventTime": "2026-01-01T10:00:00.000000Z",
        "series": {"count": 3, "lastObservedTime": "2026-01-01T10:05:00.000000Z"},
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web-0", "apiVersion": "v1"},
        "reportingController": "kubelet", "reportingInstance": "node-1",
        "action": "Pulling", "reason": "BackOff", "note": "Back-off pulling image", "type": "Warning"})
}

#[tokio::test]
async fn events_series_rules() {
    accepted(create(EV, "events", "default", event())).await;
    let mut e = event();
    e["series"] = json!({"count": 1});
    assert_eq!(
        message(create(EV, "events", "default", e)).await,
        "Event.events.k8s.io \"web.17f\" is invalid: [series.count: Invalid value: \"\": should be at least 2, series.lastObservedTime: Required value]"
    );
    // A series update is checked only when the series changes.
    let mut new = event();
    new["series"]["count"] = json!(4);
    new["series"]["lastObservedTime"] = json!("2026-01-01T10:06:00.000000Z");
    accepted(update(EV, "events", "default", event(), new)).await;
}

#[tokio::test]
async fn events_update_immutability() {
    let mut new = event();
    new["note"] = json!("changed");
    new["regarding"]["name"] = json!("web-1");
    new["deprecatedCount"] = json!(2);
    assert_eq!(
        message(update(EV, "events", "default", event(), new)).await,
        "Event.events.k8s.io \"web.17f\" is invalid: [involvedObject: Invalid value: {\"Kind\":\"Pod\",\"Namespace\":\"default\",\"Name\":\"web-1\",\"UID\":\"\",\"APIVersion\":\"v1\",\"ResourceVersion\":\"\",\"FieldPath\":\"\"}: field is immutable, message: Invalid value: \"changed\": field is immutable, count: Invalid value: 2: field is immutable]"
    );
    // A core v1 update gets the legacy rules only.
    let core = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Started", "message": "ok", "type": "Normal", "count": 1});
    let mut changed = core.clone();
    changed["message"] = json!("changed");
    changed["count"] = json!(2);
    accepted(update("", "events", "default", core, changed)).await;
}

#[tokio::test]
async fn core_events_with_event_time_need_reporting_fields() {
    let e = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "default"},
        "eventTime": "2026-01-01T10:00:00.000000Z",
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reportingComponent": "ctl", "reason": "Started", "type": "Normal"});
    assert_eq!(
        message(create("", "events", "default", e)).await,
        "Event \"e1\" is invalid: [reportingInstance: Required value, action: Required value]"
    );
}

const RBAC: &str = "rbac.authorization.k8s.io";

const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn cluster_role(selectors: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "monitoring"}, "aggregationRule": {"clusterRoleSelectors": selectors}})
}

#[tokio::test]
async fn cluster_role_aggregation_selectors() {
    accepted(create(
        RBAC,
        "clusterroles",
        "",
        cluster_role(json!([
        {"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}},
        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["ops"]}]}])),
    ))
    .await;
    let r = cluster_role(json!([
        {"matchLabels": {"a": "b c"}},
        {"matchExpressions": [{"key": "k", "operator": "Foo"}]}]));
    assert_eq!(
        message(create(RBAC, "clusterroles", "", r)).await,
        format!("ClusterRole.rbac.authorization.k8s.io \"monitoring\" is invalid: [aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: \"b c\": {LABEL_VALUE}, aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector., aggregationRule.clusterRoleSelectors[1].matchExpressions[0].operator: Invalid value: \"Foo\": not a valid selector operator, aggregationRule.clusterRoleSelectors[1]: Invalid value: null: invalid label selector.]")
    );
    // A stored selector value that is invalid may stay; it still does not
    // convert.
    let old = cluster_role(
        json!([{"matchExpressions": [{"key": "k", "operator": "In", "values": ["b c"]}]}]),
    );
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"x": "y"});
    assert_eq!(
        message(update(RBAC, "clusterroles", "", old, new)).await,
        "ClusterRole.rbac.authorization.k8s.io \"monitoring\" is invalid: aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector."
    );
}

fn runtime_class() -> Value {
    json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "gvisor"},
        "handler": "runsc",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"sandbox.example.com/runtime": "gvisor"},
            "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "dedicated", "operator": "Equal", "value": "gvisor", "effect": "NoExecute", "tolerationSeconds": 60}]}})
}

#[tokio::test]
async fn runtime_class_overhead_and_tolerations() {
    accepted(create("node.k8s.io", "runtimeclasses", "", runtime_class())).await;
    let mut rc = runtime_class();
    rc["overhead"]["podFixed"] = json!({"cpu": "-1", "foo": "1"});
    assert_eq!(
        message(create("node.k8s.io", "runtimeclasses", "", rc)).await,
        "RuntimeClass.node.k8s.io \"gvisor\" is invalid: [overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0, overhead.limits[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified, overhead.limits[foo]: Invalid value: \"foo\": must be a standard resource for containers]"
    );
    let mut rc = runtime_class();
    rc["scheduling"]["tolerations"] = json!([
        {"key": "sandbox", "operator": "Exists", "value": "yes", "effect": "NoSchedule"},
        {"operator": "Equal", "value": "x"}]);
    assert_eq!(
        message(create("node.k8s.io", "runtimeclasses", "", rc)).await,
        "RuntimeClass.node.k8s.io \"gvisor\" is invalid: [scheduling.tolerations[0].operator: Invalid value: {\"Key\":\"sandbox\",\"Operator\":\"Exists\",\"Value\":\"yes\",\"Effect\":\"NoSchedule\",\"TolerationSeconds\":null}: value must be empty when `operator` is 'Exists', scheduling.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"]"
    );
}

fn pdb() -> Value {
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default", "generation": 1},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
}

fn status_update(old: Value, new: Value) -> AdmissionRequest {
    let mut req = update("policy", "poddisruptionbudgets", "default", old, new);
    req.subresource = "status".into();
    req
}

#[tokio::test]
async fn pdb_status_conditions() {
    let mut ok = pdb();
    ok["status"] = json!({"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 2,
        "desiredHealthy": 1, "expectedPods": 2,
        "conditions": [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
            "message": "", "observedGeneration": 1, "lastTransitionTime": "2026-01-01T10:00:00Z"}]});
    accepted(status_update(pdb(), ok.clone())).await;
    let mut bad = ok.clone();
    bad["status"]["conditions"] = json!([
        {"type": "DisruptionAllowed", "status": "Maybe", "reason": "1bad", "observedGeneration": -1},
        {"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
            "lastTransitionTime": "2026-01-01T10:00:00Z"}]);
    assert_eq!(
        message(status_update(ok, bad)).await,
        "PodDisruptionBudget.policy \"web\" is invalid: [status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\", status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to zero, status.conditions[0].lastTransitionTime: Required value, status.conditions[0].reason: Invalid value: \"1bad\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?'), status.conditions[1].type: Duplicate value: \"DisruptionAllowed\"]"
    );
}

fn quota(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "default"}, "spec": spec})
}

#[tokio::test]
async fn resource_quota_integers_and_scopes() {
    for spec in [
        json!({"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi"}, "scopes": ["NotTerminating"]}),
        json!({"hard": {"pods": "5"}, "scopes": ["BestEffort"]}),
        json!({"hard": {"persistentvolumeclaims": "3", "requests.storage": "10Gi"},
            "scopeSelector": {"matchExpressions": [{"scopeName": "VolumeAttributesClass", "operator": "In", "values": ["gold"]}]}}),
        json!({"hard": {"count/deployments.apps": "3", "requests.nvidia.com/gpu": "2"}, "scopes": ["Terminating"]}),
    ] {
        accepted(create("", "resourcequotas", "default", quota(spec))).await;
    }
    let q = quota(
        json!({"hard": {"pods": "1.5", "requests.storage": "1Gi", "cpu": "1"},
        "scopes": ["Terminating", "BestEffort"]}),
    );
    assert_eq!(
        message(create("", "resourcequotas", "default", q)).await,
        "ResourceQuota \"q\" is invalid: [spec.hard[pods]: Invalid value: \"1500m\": must be an integer, spec.scopes: Invalid value: [\"Terminating\",\"BestEffort\"]: unsupported scope applied to resource]"
    );
}
