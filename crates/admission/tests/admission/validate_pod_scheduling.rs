//! Pod scheduling, DNS and the remaining container rules (kube 1.34's
//! `validateAffinity`, `validatePodDNSConfig`, readiness and scheduling
//! gates, host aliases, class names, overhead, pod-level resources,
//! ephemeral containers; `envFrom`, lifecycle hooks, `volumeDevices`,
//! `resizePolicy`, resource names): kube's exact messages, and realistic
//! pods and workloads that must still be admitted.

use serde_json::{json, Value};

use crate::support::{admitted, create, message, pod};

/// A pod spec with one valid container and `extra` merged in.
fn spec_with(extra: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "i"}]});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    spec
}

async fn pod_message(spec: Value) -> String {
    message(create("", "pods", "default", pod(spec))).await
}

const QUALIFIED: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

#[tokio::test]
async fn node_affinity_terms_operators_and_fields() {
    let msg = pod_message(spec_with(json!({"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [
                {"key": "zone", "operator": "In"},
                {"key": "zone", "operator": "Exists", "values": ["a"]},
                {"key": "n", "operator": "Gt", "values": ["1", "2"]},
                {"key": "bad key", "operator": "Near", "values": ["-x-"]}
            ],
            "matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
                {"key": "spec.nodeName", "operator": "Exists"}
            ]
        }]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["-loose-"]}]}}
        ]
    }}})))
    .await;
    let na = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [{na}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', {na}.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist', {na}.matchExpressions[2].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt', {na}.matchExpressions[3].operator: Invalid value: \"Near\": not a valid selector operator, {na}.matchExpressions[3].key: Invalid value: \"bad key\": {QUALIFIED}, {na}.matchExpressions[3].values[0]: Invalid value: \"-x-\": {LABEL_VALUE}, {na}.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector, {na}.matchFields[1].operator: Invalid value: \"Exists\": not a valid selector operator, {na}.matchFields[1].key: Invalid value: \"spec.nodeName\": not a valid field selector key, spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100]")
    );
}

#[tokio::test]
async fn empty_node_selector_terms() {
    assert_eq!(
        pod_message(spec_with(json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
        }}})))
        .await,
        "Pod \"p\" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term"
    );
}

#[tokio::test]
async fn pod_affinity_and_anti_affinity_terms() {
    let msg = pod_message(spec_with(json!({"affinity": {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]},
            "namespaces": ["Bad_NS"],
            "topologyKey": ""
        }]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 101,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "app", "operator": "Exists"}]},
                "matchLabelKeys": ["app", "pod-template-hash"],
                "mismatchLabelKeys": ["pod-template-hash"],
                "topologyKey": "kubernetes.io/hostname"
            }
        }, {
            "weight": 1,
            "podAffinityTerm": {"matchLabelKeys": ["app"], "topologyKey": "zone"}
        }]}
    }})))
    .await;
    let pa = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
    let anti = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution";
    let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [{pa}.labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', {pa}.namespace: Invalid value: \"Bad_NS\": {label}, {pa}.topologyKey: Required value: can not be empty, {pa}.topologyKey: Invalid value: \"\": name part must be non-empty, {pa}.topologyKey: Invalid value: \"\": {QUALIFIED}, {anti}[0].weight: Invalid value: 101: must be in the range 1-100, {anti}[0].podAffinityTerm[0]: Invalid value: \"app\": exists in both matchLabelKeys and labelSelector, {anti}[0].podAffinityTerm.matchLabelKeys[1]: Invalid value: \"pod-template-hash\": exists in both matchLabelKeys and mismatchLabelKeys, {anti}[1].podAffinityTerm.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set]")
    );
}

#[tokio::test]
async fn dns_policy_none_needs_config_and_nameservers() {
    assert_eq!(
        pod_message(spec_with(json!({"dnsPolicy": "None"}))).await,
        "Pod \"p\" is invalid: spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"
    );
    assert_eq!(
        pod_message(spec_with(
            json!({"dnsPolicy": "None", "dnsConfig": {"searches": ["ns.svc"]}})
        ))
        .await,
        "Pod \"p\" is invalid: spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None"
    );
}

#[tokio::test]
async fn dns_config_nameservers_searches_options() {
    let msg = pod_message(spec_with(json!({"dnsConfig": {
        "nameservers": ["1.1.1.1", "8.8.8.8", "9.9.9.9", "dns.example"],
        "searches": ["Bad.Domain", "_sip._tcp.example.com", ".", "svc.cluster.local."],
        "options": [{"name": "ndots", "value": "2"}, {"value": "x"}]
    }})))
    .await;
    let relaxed = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [spec.dnsConfig.nameservers: Invalid value: [\"1.1.1.1\",\"8.8.8.8\",\"9.9.9.9\",\"dns.example\"]: must not have more than 3 nameservers, spec.dnsConfig.nameservers[3]: Invalid value: \"dns.example\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), spec.dnsConfig.searches[0]: Invalid value: \"Bad.Domain\": {relaxed}, spec.dnsConfig.options[1]: Required value: must not be empty]")
    );
}

#[tokio::test]
async fn readiness_and_scheduling_gates() {
    let msg = pod_message(spec_with(json!({
        "readinessGates": [{"conditionType": "example.com/ready"}, {"conditionType": "not ok"}],
        "schedulingGates": [{"name": "example.com/gate"}, {"name": "example.com/gate"}, {"name": "-bad"}]
    })))
    .await;
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [spec.readinessGates[1].conditionType: Invalid value: \"not ok\": {QUALIFIED}, spec.schedulingGates[1]: Duplicate value: \"example.com/gate\", spec.schedulingGates[2]: Invalid value: \"-bad\": {QUALIFIED}]")
    );
}

#[tokio::test]
async fn node_name_with_scheduling_gates_on_create() {
    assert_eq!(
        pod_message(spec_with(
            json!({"nodeName": "n1", "schedulingGates": [{"name": "wait"}]})
        ))
        .await,
        "Pod \"p\" is invalid: spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"
    );
}

/// Priority and RuntimeClass admission act on pods before validation, so
/// class names and overhead are checked on a Deployment's template.
#[tokio::test]
async fn host_aliases_classes_preemption_overhead() {
    let d = deployment(spec_with(json!({
        "hostAliases": [{"ip": "10.0.0.300", "hostnames": ["ok.example", "Not_OK"]}],
        "priorityClassName": "High",
        "runtimeClassName": "",
        "preemptionPolicy": "Sometimes",
        "overhead": {"cpu": "-1", "gpu": "1"}
    })));
    let msg = message(create("apps", "deployments", "default", d)).await;
    let s = "spec.template.spec";
    assert_eq!(
        msg,
        format!("Deployment.apps \"web\" is invalid: [{s}.hostAliases[0].ip: Invalid value: \"10.0.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), {s}.hostAliases[0].hostnames[1]: Invalid value: \"Not_OK\": {SUBDOMAIN}, {s}.priorityClassName: Invalid value: \"High\": {SUBDOMAIN}, {s}.runtimeClassName: Invalid value: \"\": {SUBDOMAIN}, {s}.preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\", {s}.overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0, {s}.overhead.limits[gpu]: Invalid value: \"gpu\": must be a standard resource type or fully qualified, {s}.overhead.limits[gpu]: Invalid value: \"gpu\": must be a standard resource for containers]")
    );
}

#[tokio::test]
async fn pod_level_resources() {
    let msg = pod_message(json!({
        "resources": {"limits": {"cpu": "1", "ephemeral-storage": "1Gi"}, "requests": {"cpu": "2"}},
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "2"}}}]
    }))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: [spec.resources.limits[ephemeral-storage]: Unsupported value: \"ephemeral-storage\": supported values: \"cpu\", \"hugepages-\", \"memory\", spec.resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1, spec.resources.containers[0][cpu].limits: Invalid value: \"2\": must be less than or equal to pod limits of 1]"
    );
}

/// kube's `AggregateContainerRequests`: sidecars add up with the regular
/// containers, an init container runs beside the sidecars started before it.
#[tokio::test]
async fn pod_level_requests_cover_the_containers() {
    let msg = pod_message(json!({
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        "initContainers": [
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
            {"name": "migrate", "image": "tool", "resources": {"requests": {"cpu": "1"}}}
        ],
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "300m", "memory": "512Mi"}}}]
    }))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: spec.resources.requests[cpu]: Invalid value: \"1\": must be greater than or equal to aggregate container requests of 1200m"
    );
}

#[tokio::test]
async fn ephemeral_containers_on_create_and_in_templates() {
    let msg = pod_message(spec_with(json!({"ephemeralContainers": [
        {"name": "c", "image": "busybox", "targetContainerName": "missing",
         "ports": [{"containerPort": 80}], "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}
    ]})))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: [spec.ephemeralContainers[0].name: Duplicate value: \"c\", spec.ephemeralContainers[0].targetContainerName: Not found: \"missing\", spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers: Forbidden: cannot be set on create]"
    );
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
    "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {
        "metadata": {"labels": {"app": "a"}},
        "spec": spec_with(json!({"ephemeralContainers": [{"name": "dbg", "image": "busybox",
            "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}]}))
    }}});
    assert_eq!(
        message(create("apps", "deployments", "default", d)).await,
        "Deployment.apps \"d\" is invalid: spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template"
    );
}

#[tokio::test]
async fn env_from_sources() {
    let msg = pod_message(
        json!({"containers": [{"name": "c", "image": "i", "envFrom": [
            {"prefix": "A=", "configMapRef": {"name": "cfg"}},
            {"prefix": "OK_"},
            {"configMapRef": {"name": "c"}, "secretRef": {"name": ""}},
            {"secretRef": {"name": "Bad_Name"}}
        ]}]}),
    )
    .await;
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [spec.containers[0].envFrom[0].prefix: Invalid value: \"A=\": a valid environment variable name must consist only of printable ASCII characters other than '=', spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`, spec.containers[0].envFrom[2].secretRef.name: Required value, spec.containers[0].envFrom: Invalid value: \"\": may not have more than one field specified at a time, spec.containers[0].envFrom[3].secretRef.name: Invalid value: \"Bad_Name\": {SUBDOMAIN}]")
    );
}

#[tokio::test]
async fn lifecycle_hooks() {
    let msg = pod_message(json!({"terminationGracePeriodSeconds": 10, "containers": [{"name": "c", "image": "i", "lifecycle": {
        "postStart": {},
        "preStop": {"sleep": {"seconds": 30}, "exec": {"command": []}}
    }}]}))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: [spec.containers[0].lifecycle.postStart: Required value: must specify a handler type, spec.containers[0].lifecycle.preStop.exec.command: Required value, spec.containers[0].lifecycle.preStop.sleep: Forbidden: may not specify more than 1 handler type]"
    );
    let msg = pod_message(json!({"terminationGracePeriodSeconds": 10, "containers": [{"name": "c", "image": "i", "lifecycle": {
        "preStop": {"sleep": {"seconds": 30}}
    }}]}))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: spec.containers[0].lifecycle.preStop.sleep: Invalid value: 30: must be non-negative and less than terminationGracePeriodSeconds (10)"
    );
}

#[tokio::test]
async fn volume_devices_and_mount_overlaps() {
    let msg = pod_message(json!({
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}}, {"name": "scratch", "emptyDir": {}}],
        "containers": [{"name": "c", "image": "i",
            "volumeMounts": [{"name": "data", "mountPath": "/dev/xvda"}],
            "volumeDevices": [
                {"name": "data", "devicePath": "/dev/xvda"},
                {"name": "scratch", "devicePath": "/dev/../sdb"},
                {"name": "gone", "devicePath": ""}
            ]}]
    }))
    .await;
    let c = "spec.containers[0]";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [{c}.volumeMounts[0].name: Invalid value: \"data\": must not already exist in volumeDevices, {c}.volumeMounts[0].mountPath: Invalid value: \"/dev/xvda\": must not already exist as a path in volumeDevices, {c}.volumeDevices[0].name: Invalid value: \"data\": must not already exist in volumeMounts, {c}.volumeDevices[0].devicePath: Invalid value: \"/dev/xvda\": must not already exist as a path in volumeMounts, {c}.volumeDevices[1].name: Invalid value: \"scratch\": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode, {c}.volumeDevices[1].devicePath: Invalid value: \"/dev/../sdb\": can not contain backsteps ('..'), {c}.volumeDevices[2].name: Not found: \"gone\", {c}.volumeDevices[2].devicePath: Required value]")
    );
}

#[tokio::test]
async fn resize_policy_rules() {
    let msg = pod_message(json!({"restartPolicy": "Never", "containers": [{"name": "c", "image": "i", "resizePolicy": [
        {"resourceName": "cpu", "restartPolicy": "NotRequired"},
        {"resourceName": "cpu", "restartPolicy": "RestartContainer"},
        {"resourceName": "gpu", "restartPolicy": "Later"}
    ]}]}))
    .await;
    let rp = "spec.containers[0].resizePolicy";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [{rp}[1]: Duplicate value: \"cpu\", {rp}: Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never', {rp}: Unsupported value: \"gpu\": supported values: \"cpu\", \"memory\", {rp}: Unsupported value: \"Later\": supported values: \"NotRequired\", \"RestartContainer\", {rp}: Invalid value: \"Later\": must be 'NotRequired' when `restartPolicy` is 'Never']")
    );
}

/// The hugepage limit is also a request: requests default from limits.
#[tokio::test]
async fn container_resource_names_hugepages_and_extended() {
    let msg = pod_message(
        json!({"containers": [{"name": "c", "image": "i", "resources": {
            "limits": {"example.com/gpu": "2", "hugepages-2Mi": "3Mi"},
            "requests": {"example.com/gpu": "1", "example.com/fpga": "1", "pods": "1"}
        }}]}),
    )
    .await;
    let r = "spec.containers[0].resources";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [{r}.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi, {r}.limits: Required value: Limit must be set for non overcommitable resources, {r}.requests: Invalid value: \"1\": must be equal to example.com/gpu limit of 2, {r}.requests[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi, {r}.requests[pods]: Invalid value: \"pods\": must be a standard resource for containers, {r}: Forbidden: HugePages require cpu or memory]")
    );
}

fn deployment(template_spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template_spec}}})
}

#[tokio::test]
async fn realistic_scheduling_and_container_settings_pass() {
    let spec = json!({
        "terminationGracePeriodSeconds": 60,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a", "eu-west-1b"]},
                    {"key": "kubernetes.io/arch", "operator": "NotIn", "values": ["arm"]}
                ]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": {"matchExpressions": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "Exists"}
                ]}}]
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": "kubernetes.io/hostname"
                }],
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
                    "matchLabelKeys": ["pod-template-hash"],
                    "namespaces": ["default"],
                    "topologyKey": "topology.kubernetes.io/zone"
                }}]
            }
        },
        "dnsPolicy": "ClusterFirst",
        "dnsConfig": {"options": [{"name": "ndots", "value": "2"}, {"name": "single-request-reopen"}], "searches": ["svc.cluster.local"]},
        "readinessGates": [{"conditionType": "target-health.elbv2.k8s.aws/web"}],
        "hostAliases": [{"ip": "127.0.0.1", "hostnames": ["foo.local", "bar.local"]}],
        "containers": [{"name": "web", "image": "nginx:1.27",
            "envFrom": [{"configMapRef": {"name": "web-config"}}, {"prefix": "DB_", "secretRef": {"name": "db", "optional": true}}],
            "lifecycle": {"preStop": {"sleep": {"seconds": 15}}, "postStart": {"exec": {"command": ["sh", "-c", "echo hi"]}}},
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}, {"resourceName": "memory", "restartPolicy": "RestartContainer"}],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi", "hugepages-2Mi": "4Mi", "example.com/gpu": "1"},
                          "limits": {"memory": "512Mi", "hugepages-2Mi": "4Mi", "example.com/gpu": "1"}}
        }],
        "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
            "lifecycle": {"preStop": {"exec": {"command": ["/bin/drain"]}}}}]
    });
    admitted(create(
        "apps",
        "deployments",
        "default",
        deployment(spec.clone()),
    ))
    .await;
    admitted(create("", "pods", "default", pod(spec))).await;
}

#[tokio::test]
async fn realistic_statefulset_and_block_device_pass() {
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
    "spec": {"serviceName": "db", "replicas": 3, "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}}]}},
            "dnsPolicy": "None",
            "dnsConfig": {"nameservers": ["10.96.0.10"], "searches": ["db.default.svc.cluster.local", "_tcp.example.com"]},
            "schedulingGates": [{"name": "example.com/quota"}],
            "overhead": {"cpu": "100m", "memory": "64Mi"},
            "resources": {"limits": {"cpu": "2", "memory": "2Gi"}},
            "containers": [{"name": "db", "image": "postgres:17",
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                "volumeDevices": [{"name": "raw", "devicePath": "/dev/xvdb"}],
                "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql"}]}],
            "volumes": [{"name": "raw", "ephemeral": {"volumeClaimTemplate": {"spec": {
                "accessModes": ["ReadWriteOnce"], "volumeMode": "Block", "resources": {"requests": {"storage": "1Gi"}}}}}}]
        }},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}]
    }});
    admitted(create("apps", "statefulsets", "default", sts)).await;
}
