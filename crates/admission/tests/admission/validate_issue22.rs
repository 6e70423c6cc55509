//! Core Event metadata, Job pod-condition types, HPA behavior defaults,
//! Node-specific annotations, FlowSchema / PriorityLevelConfiguration
//! mandatory objects and exempt settings, VolumeAttachment inline volume
//! specs: kube 1.34's exact messages.

use serde_json::{json, Value};

use crate::support::{accepted, create, message, update};

fn core_event(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Started", "message": "ok", "type": "Normal", "count": 1})
}

#[tokio::test]
async fn core_event_names_are_path_segments() {
    // Not a DNS subdomain, but a valid path segment: kube's generic
    // metadata check accepts it.
    accepted(create("", "events", "default", core_event("Pod_X.17f:a"))).await;
    // A core Event without an involvedObject: kube reports no required
    // field.
    let mut e = core_event("e2");
    e.as_object_mut().unwrap().remove("involvedObject");
    e["metadata"]["namespace"] = json!("default");
    accepted(create("", "events", "default", e)).await;
    assert_eq!(
        message(create("", "events", "default", core_event("a/b"))).await,
        "Event \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not contain '/'"
    );
    // The metadata rules run only once the legacy rules passed.
    let mut both = core_event("a%b");
    both["metadata"]["labels"] = json!({"bad key": "v"});
    both["involvedObject"]["namespace"] = json!("other");
    assert_eq!(
        message(create("", "events", "default", both)).await,
        "Event \"a%b\" is invalid: involvedObject.namespace: Invalid value: \"other\": does not match event.namespace"
    );
    // On update both run, metadata first.
    let old = core_event("e1");
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"k": "-x"});
    new["involvedObject"]["namespace"] = json!("other");
    assert_eq!(
        message(update("", "events", "default", old, new)).await,
        "Event \"e1\" is invalid: [metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), involvedObject.namespace: Invalid value: \"other\": does not match event.namespace]"
    );
}

#[tokio::test]
async fn job_pod_condition_type_is_a_qualified_name() {
    let j = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "k"},
        "spec": {"podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [
            {"type": "", "status": "True"}]}]},
        "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl:5.34"}]}}}});
    assert_eq!(
        message(create("batch", "jobs", "default", j)).await,
        "Job.batch \"k\" is invalid: [spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: \"\": name part must be non-empty, spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]"
    );
}

fn hpa(behavior: Value) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 10, "behavior": behavior}})
}

#[tokio::test]
async fn hpa_rules_without_policies_get_kubes_defaults() {
    // Absent or null policies are defaulted by kube (valid).
    accepted(create(
        "autoscaling",
        "horizontalpodautoscalers",
        "default",
        hpa(json!({"scaleUp": {"stabilizationWindowSeconds": 60},
            "scaleDown": {"selectPolicy": "Min", "policies": null}})),
    ))
    .await;
    assert_eq!(
        message(create(
            "autoscaling",
            "horizontalpodautoscalers",
            "default",
            hpa(json!({"scaleDown": {"policies": []}}))
        ))
        .await,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"
    );
}

fn node(annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n1", "annotations": annotations}})
}

const AVOID: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";

#[tokio::test]
async fn node_specific_annotations() {
    let ok = json!({"preferAvoidPods": [{"podSignature": {"podController": {"apiVersion": "v1",
        "kind": "ReplicationController", "name": "foo", "uid": "abcdef123456", "controller": true}},
        "reason": "some reason", "message": "some message"}]});
    accepted(create(
        "",
        "nodes",
        "",
        node(json!({AVOID: ok.to_string()})),
    ))
    .await;
    let bad = json!({"preferAvoidPods": [{"reason": "r"}, {"podSignature": {"podController": {
        "apiVersion": "v1", "kind": "ReplicationController", "name": "foo", "uid": "u", "controller": false}}}]});
    assert_eq!(
        message(create("", "nodes", "", node(json!({AVOID: bad.to_string()})))).await,
        "Node \"n1\" is invalid: [metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[0].PodSignature: Required value, metadata.annotations.scheduler.alpha.kubernetes.io/preferAvoidPods[1].PodSignature.PodController.Controller: Invalid value: false: must point to a controller]"
    );
    assert_eq!(
        message(create("", "nodes", "", node(json!({AVOID: "nope"})))).await,
        "Node \"n1\" is invalid: metadata.annotations.AvoidPods: Invalid value: \"scheduler.alpha.kubernetes.io/preferAvoidPods\": invalid character 'o' in literal null (expecting 'u')"
    );
    assert_eq!(
        message(create("", "nodes", "", node(json!({AVOID: "[]"})))).await,
        "Node \"n1\" is invalid: metadata.annotations.AvoidPods: Invalid value: \"scheduler.alpha.kubernetes.io/preferAvoidPods\": json: cannot unmarshal array into Go value of type v1.AvoidPods"
    );
    let taints = "[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"Sometimes\"}]";
    assert_eq!(
        message(create("", "nodes", "", node(json!({"scheduler.alpha.kubernetes.io/taints": taints})))).await,
        "Node \"n1\" is invalid: metadata.annotations.scheduler.alpha.kubernetes.io/taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
    );
    // Updates check them too.
    let old = node(json!({}));
    let new = node(json!({AVOID: "{}", "scheduler.alpha.kubernetes.io/taints": "{}"}));
    assert_eq!(
        message(update("", "nodes", "", old, new)).await,
        "Node \"n1\" is invalid: metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/taints\": json: cannot unmarshal object into Go value of type []core.Taint"
    );
}

const FC: &str = "flowcontrol.apiserver.k8s.io";

fn flow_schema(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": name}, "spec": spec})
}

fn plc(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name}, "spec": spec})
}

fn mandatory_rules(groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"kind": "Group", "group": {"name": g}}))
        .collect();
    json!([{"subjects": subjects,
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}])
}

#[tokio::test]
async fn flowcontrol_mandatory_objects() {
    let exempt = json!({"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "exempt"},
        "rules": mandatory_rules(&["system:masters"])});
    accepted(create(
        FC,
        "flowschemas",
        "",
        flow_schema("exempt", exempt.clone()),
    ))
    .await;
    let catch_all = json!({"matchingPrecedence": 10000, "priorityLevelConfiguration": {"name": "catch-all"},
        "distinguisherMethod": {"type": "ByUser"},
        "rules": mandatory_rules(&["system:unauthenticated", "system:authenticated"])});
    accepted(create(
        FC,
        "flowschemas",
        "",
        flow_schema("catch-all", catch_all),
    ))
    .await;
    let mut changed = exempt.clone();
    changed["rules"][0]["subjects"][0]["group"]["name"] = json!("admins");
    assert_eq!(
        message(create(FC, "flowschemas", "", flow_schema("exempt", changed))).await,
        "FlowSchema.flowcontrol.apiserver.k8s.io \"exempt\" is invalid: spec: Invalid value: {\"PriorityLevelConfiguration\":{\"Name\":\"exempt\"},\"MatchingPrecedence\":1,\"DistinguisherMethod\":null,\"Rules\":[{\"Subjects\":[{\"Kind\":\"Group\",\"User\":null,\"Group\":{\"Name\":\"admins\"},\"ServiceAccount\":null}],\"ResourceRules\":[{\"Verbs\":[\"*\"],\"APIGroups\":[\"*\"],\"Resources\":[\"*\"],\"ClusterScope\":true,\"Namespaces\":[\"*\"]}],\"NonResourceRules\":[{\"Verbs\":[\"*\"],\"NonResourceURLs\":[\"*\"]}]}]}: spec of 'exempt' must equal the fixed value"
    );
    let mut dm = exempt.clone();
    dm["distinguisherMethod"] = json!({"type": "ByPod"});
    dm["matchingPrecedence"] = json!(500);
    assert_eq!(
        message(create(FC, "flowschemas", "", flow_schema("mine", dm))).await,
        "FlowSchema.flowcontrol.apiserver.k8s.io \"mine\" is invalid: spec.distinguisherMethod.type: Unsupported value: {\"Type\":\"ByPod\"}: supported values: \"ByNamespace\", \"ByUser\""
    );

    let fixed = json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
        "limitResponse": {"type": "Reject"}}});
    accepted(create(
        FC,
        "prioritylevelconfigurations",
        "",
        plc("catch-all", fixed.clone()),
    ))
    .await;
    let mut more = fixed.clone();
    more["limited"]["nominalConcurrencyShares"] = json!(10);
    assert_eq!(
        message(create(FC, "prioritylevelconfigurations", "", plc("catch-all", more))).await,
        "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"catch-all\" is invalid: spec: Invalid value: {\"Type\":\"Limited\",\"Limited\":{\"NominalConcurrencyShares\":10,\"LimitResponse\":{\"Type\":\"Reject\",\"Queuing\":null},\"LendablePercent\":0,\"BorrowingLimitPercent\":null},\"Exempt\":null}: spec of 'catch-all' must equal the fixed value"
    );
    // The exempt level's settings may change, within bounds.
    accepted(create(
        FC,
        "prioritylevelconfigurations",
        "",
        plc("exempt", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 10, "lendablePercent": 50}})),
    ))
    .await;
    assert_eq!(
        message(create(
            FC,
            "prioritylevelconfigurations",
            "",
            plc("exempt", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": -1, "lendablePercent": 101}}))
        ))
        .await,
        "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"exempt\" is invalid: [spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer, spec.exempt.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive]"
    );
    assert_eq!(
        message(create(
            FC,
            "prioritylevelconfigurations",
            "",
            plc("mine", json!({"type": "Limited", "exempt": {}, "limited": {"nominalConcurrencyShares": -2,
                "limitResponse": {"type": "Reject"}}}))
        ))
        .await,
        "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"mine\" is invalid: [spec.exempt: Forbidden: must be nil if the type is Limited, spec.limited.nominalConcurrencyShares: Invalid value: -2: must be a non-negative integer]"
    );
    // Zero shares are allowed (1.34's AllowZeroLimitedNominalConcurrencyShares).
    accepted(create(
        FC,
        "prioritylevelconfigurations",
        "",
        plc(
            "mine",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 0,
            "limitResponse": {"type": "Reject"}}}),
        ),
    ))
    .await;
}

#[tokio::test]
async fn volume_attachment_inline_volume_spec() {
    let va = |inline: Value| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
            "spec": {"attacher": "csi.example.com", "nodeName": "n", "source": {"inlineVolumeSpec": inline}}})
    };
    accepted(create(
        "storage.k8s.io",
        "volumeattachments",
        "",
        va(json!({"accessModes": ["ReadWriteOnce"], "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1"}})),
    ))
    .await;
    assert_eq!(
        message(create(
            "storage.k8s.io",
            "volumeattachments",
            "",
            va(json!({"capacity": {"storage": "1Gi"}, "claimRef": {"name": "c"},
                "nfs": {"server": "s", "path": "/x"}}))
        ))
        .await,
        "VolumeAttachment.storage.k8s.io \"va\" is invalid: [spec.source.inlineVolumeSpec.claimRef: Forbidden: may not be specified in the context of inline volumes, spec.source.inlineVolumeSpec.capacity: Forbidden: may not be specified in the context of inline volumes, spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes, spec.source.inlineVolumeSpec.accessModes: Required value]"
    );
}

fn lease_candidate(spec: Value) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1beta1", "kind": "LeaseCandidate",
        "metadata": {"name": "kube-scheduler-node-1", "namespace": "default"}, "spec": spec})
}

#[tokio::test]
async fn lease_candidate_spec_is_kube_validated() {
    let lc = |spec: Value| {
        create(
            "coordination.k8s.io",
            "leasecandidates",
            "default",
            lease_candidate(spec),
        )
    };
    accepted(lc(
        json!({"leaseName": "kube-scheduler", "binaryVersion": "1.34.0",
        "emulationVersion": "1.33.0", "strategy": "OldestEmulationVersion"}),
    ))
    .await;
    accepted(lc(
        json!({"leaseName": "l", "binaryVersion": "1.34.0", "strategy": "example.com/mine"}),
    ))
    .await;
    assert_eq!(
        message(lc(json!({}))).await,
        "LeaseCandidate.coordination.k8s.io \"kube-scheduler-node-1\" is invalid: [spec.leaseName: Required value, spec.binaryVersion: Required value, spec.strategy: Required value]"
    );
    assert_eq!(
        message(lc(json!({"leaseName": "l", "binaryVersion": "v1.34", "emulationVersion": "1.33",
            "strategy": "OldestEmulationVersion"}))).await,
        "LeaseCandidate.coordination.k8s.io \"kube-scheduler-node-1\" is invalid: [spec.emulationVersion: Invalid value: \"1.33\": must be a valid semantic version, spec.binaryVersion: Invalid value: \"v1.34\": must be a valid semantic version, spec.emulationVersion: Required value: must be specified when `strategy` is 'OldestEmulationVersion']"
    );
    assert_eq!(
        message(lc(json!({"leaseName": "l", "binaryVersion": "1.33.0", "emulationVersion": "1.34.0+build",
            "strategy": "Newest"}))).await,
        "LeaseCandidate.coordination.k8s.io \"kube-scheduler-node-1\" is invalid: [spec.binaryVersion: Invalid value: \"1.33.0\": must be greater than or equal to `emulationVersion`, spec.strategy.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\"]"
    );
    assert_eq!(
        message(lc(json!({"leaseName": "l", "binaryVersion": "1.34.0", "strategy": "a/b/c"}))).await,
        "LeaseCandidate.coordination.k8s.io \"kube-scheduler-node-1\" is invalid: spec.strategy.strategy: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    );
    // The name is a ConfigMap key: `..` is not one.
    let mut bad = lease_candidate(
        json!({"leaseName": "l", "binaryVersion": "1.34.0", "strategy": "OldestEmulationVersion", "emulationVersion": "1.34.0"}),
    );
    bad["metadata"]["name"] = json!("a b");
    assert_eq!(
        message(create("coordination.k8s.io", "leasecandidates", "default", bad)).await,
        "LeaseCandidate.coordination.k8s.io \"a b\" is invalid: metadata.name: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
    );
    let old = lease_candidate(
        json!({"leaseName": "a", "binaryVersion": "1.34.0", "strategy": "OldestEmulationVersion", "emulationVersion": "1.34.0"}),
    );
    let mut new = old.clone();
    new["spec"]["leaseName"] = json!("b");
    assert_eq!(
        message(update("coordination.k8s.io", "leasecandidates", "default", old, new)).await,
        "LeaseCandidate.coordination.k8s.io \"kube-scheduler-node-1\" is invalid: spec.leaseName: Invalid value: \"b\": field is immutable"
    );
}

#[tokio::test]
async fn lease_strategy_is_a_known_or_qualified_name() {
    let lease = |s: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
        "spec": {"strategy": s}})
    };
    accepted(create(
        "coordination.k8s.io",
        "leases",
        "default",
        lease("OldestEmulationVersion"),
    ))
    .await;
    accepted(create(
        "coordination.k8s.io",
        "leases",
        "default",
        lease("example.com/custom"),
    ))
    .await;
    assert_eq!(
        message(create("coordination.k8s.io", "leases", "default", lease("Custom"))).await,
        "Lease.coordination.k8s.io \"l\" is invalid: spec.strategy.strategy: Unsupported value: \"Custom\": supported values: \"OldestEmulationVersion\""
    );
}
