//! Pod, PodTemplate and ReplicationController validation: kube's exact
//! messages for common mistakes, and realistic valid pods that must pass.

use keelson_api::{AdmissionApi, AdmissionRequest, Operation};
use serde_json::{json, Value};

use crate::support::{admission, create, message, pod};

async fn pod_message(spec: Value) -> String {
    message(create("", "pods", "default", pod(spec))).await
}

#[tokio::test]
async fn missing_containers_and_bad_restart_policy() {
    assert_eq!(
        pod_message(json!({"restartPolicy": "Sometimes"})).await,
        "Pod \"p\" is invalid: [spec.containers: Required value, spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"]"
    );
}

#[tokio::test]
async fn container_name_image_and_ports() {
    let msg = pod_message(json!({"containers": [
        {"name": "Web", "ports": [{"containerPort": 70000, "protocol": "ICMP"}]},
        {"name": "Web", "image": "nginx"}
    ]}))
    .await;
    let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [spec.containers[0].name: Invalid value: \"Web\": {label}, spec.containers[0].image: Required value, spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.containers[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\", spec.containers[1].name: Invalid value: \"Web\": {label}, spec.containers[1].name: Duplicate value: \"Web\"]")
    );
}

#[tokio::test]
async fn env_volumes_mounts_resources_probes() {
    let msg = pod_message(json!({
        "volumes": [{"name": "v", "emptyDir": {}, "secret": {"secretName": "s"}}, {"name": "w"}],
        "containers": [{"name": "c", "image": "i",
            "env": [{"name": "A=B"}, {"name": "X", "value": "1", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}],
            "volumeMounts": [{"name": "v", "mountPath": "/a"}],
            "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}},
            "livenessProbe": {"successThreshold": 2, "periodSeconds": 10},
        }]
    }))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: [spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type, spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '=', spec.containers[0].env[1].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty, spec.containers[0].volumeMounts[0].name: Not found: \"v\", spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1, spec.containers[0].livenessProbe: Required value: must specify a handler type, spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1]"
    );
}

#[tokio::test]
async fn tolerations_deadline_and_hostname() {
    let msg = pod_message(json!({
        "containers": [{"name": "c", "image": "i"}],
        "activeDeadlineSeconds": 0, "hostname": "A_B",
        "tolerations": [{"operator": "Equal", "value": "x"}, {"key": "k", "operator": "Maybe", "effect": "Sometimes"}]
    }))
    .await;
    assert!(msg.starts_with("Pod \"p\" is invalid: [spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive, spec.hostname: Invalid value: \"A_B\": "), "{msg}");
    assert!(msg.ends_with("spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\", spec.tolerations[1].operator: Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\", spec.tolerations[1].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"]"), "{msg}");
}

fn update(old: Value, new: Value) -> AdmissionRequest {
    let mut req = create("", "pods", "default", new);
    req.operation = Operation::Update;
    req.old_object = Some(old);
    req
}

#[tokio::test]
async fn pod_update_only_image_changes() {
    let adm = admission().await;
    let old = adm
        .admit(create(
            "",
            "pods",
            "default",
            pod(json!({"containers": [{"name": "c", "image": "a"}]})),
        ))
        .await
        .unwrap()
        .object
        .unwrap();
    let mut img = old.clone();
    img["spec"]["containers"][0]["image"] = json!("b");
    adm.admit(update(old.clone(), img)).await.unwrap();
    let mut env = old.clone();
    env["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    let msg = message(update(old, env)).await;
    assert!(msg.starts_with("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"), "{msg}");
}

#[tokio::test]
async fn replication_controller_selector_and_restart_policy() {
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "r"},
        "spec": {"replicas": -1, "selector": {"app": "a"}, "template": {"metadata": {"labels": {"app": "b"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}});
    assert_eq!(
        message(create("", "replicationcontrollers", "default", rc)).await,
        "ReplicationController \"r\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: {\"app\":\"b\"}: `selector` does not match template `labels`, spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"]"
    );
}

#[tokio::test]
async fn pod_template_spec_is_validated() {
    let pt = json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
        "template": {"spec": {"containers": [{"name": "c"}]}}});
    assert_eq!(
        message(create("", "podtemplates", "default", pt)).await,
        "PodTemplate \"t\" is invalid: template.spec.containers[0].image: Required value"
    );
}

#[tokio::test]
async fn realistic_pods_pass() {
    let adm = admission().await;
    let spec = json!({
        "volumes": [
            {"name": "cfg", "configMap": {"name": "cm", "items": [{"key": "a", "path": "a"}]}},
            {"name": "sec", "secret": {"secretName": "s"}},
            {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
            {"name": "proj", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
            {"name": "host", "hostPath": {"path": "/var/log", "type": "Directory"}}
        ],
        "initContainers": [
            {"name": "init", "image": "busybox", "command": ["true"]},
            {"name": "sidecar", "image": "envoy", "restartPolicy": "Always",
             "readinessProbe": {"tcpSocket": {"port": 9901}}}
        ],
        "containers": [{
            "name": "app", "image": "nginx:1.27",
            "ports": [{"name": "http", "containerPort": 80}, {"containerPort": 53, "protocol": "UDP", "hostPort": 5353}],
            "env": [
                {"name": "PLAIN", "value": "x"},
                {"name": "FROM_CM", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a"}}},
                {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "pw", "optional": true}}},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}}
            ],
            "envFrom": [{"configMapRef": {"name": "cm"}}],
            "volumeMounts": [
                {"name": "cfg", "mountPath": "/etc/cfg"}, {"name": "sec", "mountPath": "/etc/sec", "readOnly": true},
                {"name": "tmp", "mountPath": "/tmp"}, {"name": "proj", "mountPath": "/var/run/x"},
                {"name": "data", "mountPath": "/data"}, {"name": "host", "mountPath": "/host"}
            ],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
            "readinessProbe": {"exec": {"command": ["cat", "/tmp/ok"]}, "successThreshold": 2},
            "startupProbe": {"grpc": {"port": 9090}, "failureThreshold": 30},
            "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}}
        }],
        "securityContext": {"runAsUser": 1000, "fsGroup": 2000, "seccompProfile": {"type": "RuntimeDefault"}},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}}}],
        "hostname": "web-0", "subdomain": "web", "activeDeadlineSeconds": 600,
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30
    });
    let res = adm.admit(create("", "pods", "default", pod(spec))).await;
    assert!(res.is_ok(), "{:?}", res.err().map(|e| e.message));
}

#[tokio::test]
async fn pod_update_validates_new_spec_and_container_count() {
    let adm = admission().await;
    let old = adm
        .admit(create(
            "",
            "pods",
            "default",
            pod(json!({"containers": [{"name": "c", "image": "a"}]})),
        ))
        .await
        .unwrap()
        .object
        .unwrap();
    let mut added = old.clone();
    let c = added["spec"]["containers"][0].clone();
    added["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "d", "image": "b", "terminationMessagePolicy": c["terminationMessagePolicy"], "imagePullPolicy": "Always"}));
    assert_eq!(
        message(update(old.clone(), added)).await,
        "Pod \"p\" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers"
    );
    let mut bad_deadline = old.clone();
    bad_deadline["spec"]["activeDeadlineSeconds"] = json!(0);
    let msg = message(update(old, bad_deadline)).await;
    assert!(
        msg.starts_with("Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"),
        "{msg}"
    );
}

#[tokio::test]
async fn topology_spread_constraints() {
    let msg = pod_message(json!({
        "containers": [{"name": "c", "image": "i"}],
        "topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Maybe"}]
    }))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: [spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero, spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty, spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Maybe\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"]"
    );
}

#[tokio::test]
async fn host_port_conflicts_across_containers() {
    let msg = pod_message(json!({"containers": [
        {"name": "a", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]},
        {"name": "b", "image": "i", "ports": [{"containerPort": 81, "hostPort": 8080}]}
    ]}))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\""
    );
}

#[tokio::test]
async fn pod_specific_annotations() {
    let mut p = pod(json!({"containers": [{"name": "web", "image": "nginx"}]}));
    p["metadata"]["annotations"] = json!({
        "kubernetes.io/config.mirror": "x",
        "controller.kubernetes.io/pod-deletion-cost": "+10",
        "seccomp.security.alpha.kubernetes.io/pod": "bogus",
        "container.seccomp.security.alpha.kubernetes.io/web": "localhost//etc/x",
        "container.apparmor.security.beta.kubernetes.io/db": "enforce",
    });
    assert_eq!(
        message(create("", "pods", "default", p.clone())).await,
        "Pod \"p\" is invalid: [metadata.annotations[kubernetes.io/config.mirror]: Invalid value: \"x\": must set spec.nodeName if mirror pod annotation is set, metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: \"+10\": must be a 32bit integer, metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: \"bogus\": must be a valid seccomp profile, metadata.annotations.container.seccomp.security.alpha.kubernetes.io/web: Invalid value: \"/etc/x\": must be a relative path, metadata.annotations[container.apparmor.security.beta.kubernetes.io/db]: Invalid value: \"db\": container not found, metadata.annotations[container.apparmor.security.beta.kubernetes.io/db]: Invalid value: \"enforce\": invalid AppArmor profile name: \"enforce\"]"
    );
    // Updates may not add AppArmor annotations; a stored invalid cost is kept.
    let mut old = pod(json!({"containers": [{"name": "web", "image": "nginx"}]}));
    old["metadata"]["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": "007"});
    // As stored (defaulted); the invalid cost came from before the rule.
    let mut ok = old.clone();
    ok["metadata"]["annotations"] = json!({});
    let mut old = crate::support::admitted(create("", "pods", "default", ok)).await;
    old["metadata"]["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": "007"});
    let mut new = old.clone();
    new["metadata"]["annotations"]["container.apparmor.security.beta.kubernetes.io/web"] =
        json!("runtime/default");
    assert_eq!(
        message(update(old, new)).await,
        "Pod \"p\" is invalid: metadata.annotations[container.apparmor.security.beta.kubernetes.io/web]: Forbidden: may not add AppArmor annotations"
    );
}

#[tokio::test]
async fn extended_resources_are_whole_and_requests_equal_limits() {
    let msg = pod_message(
        json!({"containers": [{"name": "c", "image": "i", "resources": {
            "limits": {"example.com/bar": "2", "example.com/foo": "1.5", "example.com/neg": "-1.5",
                "kubernetes.io/native": "1.5"},
            "requests": {"example.com/bar": "1", "example.com/foo": "1.5", "pods": "500m"}
        }}]}),
    )
    .await;
    // The defaulted requests copy the limits they lack (`example.com/neg`).
    let r = "spec.containers[0].resources";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [{r}.limits[example.com/foo]: Invalid value: \"1500m\": must be an integer, {r}.limits[example.com/neg]: Invalid value: \"-1500m\": must be greater than or equal to 0, {r}.limits[example.com/neg]: Invalid value: \"-1500m\": must be an integer, {r}.requests: Invalid value: \"1\": must be equal to example.com/bar limit of 2, {r}.requests[example.com/foo]: Invalid value: \"1500m\": must be an integer, {r}.requests[example.com/neg]: Invalid value: \"-1500m\": must be greater than or equal to 0, {r}.requests[example.com/neg]: Invalid value: \"-1500m\": must be an integer, {r}.requests[pods]: Invalid value: \"pods\": must be a standard resource for containers, {r}.requests[pods]: Invalid value: \"500m\": must be an integer]")
    );
    // Whole extended quantities, however written, pass.
    let ok = pod(
        json!({"containers": [{"name": "c", "image": "i", "resources": {
            "limits": {"example.com/gpu": "2000m", "cpu": "1.5"},
            "requests": {"example.com/gpu": "2", "cpu": "0.5"}
        }}]}),
    );
    crate::support::admitted(create("", "pods", "default", ok)).await;
}

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

#[tokio::test]
async fn resource_claims_and_container_claim_references() {
    let msg = pod_message(json!({
        "resourceClaims": [
            {"name": "gpu", "resourceClaimName": "claim-a"},
            {"name": "gpu", "resourceClaimTemplateName": "Bad_Template"},
            {"name": "Net", "resourceClaimName": "a", "resourceClaimTemplateName": "b"},
            {"name": ""}
        ],
        "containers": [{"name": "c", "image": "i", "resources": {"claims": [
            {"name": "gpu", "request": "r1"}, {"name": "gpu"}, {"name": "gpu"},
            {"name": "other"}
        ]}}]
    }))
    .await;
    let s = "spec.resourceClaims";
    let c = "spec.containers[0].resources.claims";
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [{s}[1].name: Duplicate value: \"gpu\", {s}[1].resourceClaimTemplateName: Invalid value: \"Bad_Template\": {SUBDOMAIN}, {s}[2].name: Invalid value: \"Net\": {LABEL}, {s}[2]: Invalid value: {{\"Name\":\"Net\",\"ResourceClaimName\":\"a\",\"ResourceClaimTemplateName\":\"b\"}}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified, {s}[3].name: Required value, {s}[3]: Invalid value: {{\"Name\":\"\",\"ResourceClaimName\":null,\"ResourceClaimTemplateName\":null}}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`, {c}[1]: Duplicate value: \"gpu\", {c}[2]: Duplicate value: \"gpu\", {c}[3]: Not found: \"other\": must be one of the names in pod.spec.resourceClaims: Net, gpu]")
    );
    // Without pod-level claims; pod-level resources may not name claims.
    let msg = pod_message(json!({
        "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
        "resources": {"claims": [{"name": "gpu"}]}
    }))
    .await;
    assert_eq!(
        msg,
        "Pod \"p\" is invalid: [spec.containers[0].resources.claims[0]: Not found: \"gpu\": must be one of the names in pod.spec.resourceClaims which is empty, spec.resources.claims: Forbidden: claims cannot be set for Resources at pod-level, spec.resources.claims[0]: Not found: \"gpu\": must be one of the names in pod.spec.resourceClaims which is empty]"
    );
    let ok = pod(json!({
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"},
            {"name": "net", "resourceClaimName": "shared-net"}],
        "containers": [{"name": "c", "image": "i", "resources": {"claims": [
            {"name": "gpu", "request": "a"}, {"name": "gpu", "request": "b"}, {"name": "net"}]}}]
    }));
    crate::support::admitted(create("", "pods", "default", ok)).await;
}

#[tokio::test]
async fn topology_spread_match_label_keys_and_constraint_rules() {
    let spec = json!({
        "containers": [{"name": "c", "image": "i"}],
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "web"}},
             "matchLabelKeys": ["app", "pod-template-hash", "Bad Key"]},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "matchLabelKeys": ["app"], "minDomains": 0},
            {"maxSkew": 1, "topologyKey": "not a label key", "whenUnsatisfiable": "ScheduleAnyway",
             "minDomains": 2, "nodeAffinityPolicy": "Sometimes", "nodeTaintsPolicy": "Honor",
             "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}
        ]
    });
    let mut p = pod(spec.clone());
    p["metadata"]["labels"] = json!({"app": "web", "pod-template-hash": "abc"});
    let t = "spec.topologySpreadConstraints";
    // On create kube merges `app In (web)` into the selector first, so the
    // key is then in both (reported at the constraint indexed by the key).
    let both = format!(
        "{t}[0][0]: Invalid value: \"app\": exists in both matchLabelKeys and labelSelector, "
    );
    let expected = |both: &str, t: &str| {
        format!("[{t}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: \"{{zone, DoNotSchedule}}\", {t}[0].matchLabelKeys[2]: Invalid value: \"Bad Key\": {QUALIFIED}, {both}{t}[1].minDomains: Invalid value: 0: must be greater than zero, {t}[1].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set, {t}[2].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway, {t}[2].nodeAffinityPolicy: Unsupported value: \"Sometimes\": supported values: \"Honor\", \"Ignore\"]")
    };
    assert_eq!(
        message(create("", "pods", "default", p)).await,
        format!("Pod \"p\" is invalid: {}", expected(&both, t))
    );
    // A pod template is not merged: the same constraints lack that error.
    let pt = json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec}});
    assert_eq!(
        message(create("", "podtemplates", "default", pt)).await,
        format!(
            "PodTemplate \"t\" is invalid: {}",
            expected("", "template.spec.topologySpreadConstraints")
        )
    );
}

#[tokio::test]
async fn pod_affinity_label_keys_after_the_create_merge() {
    let term = |sel: Value, keys: Value| json!({"labelSelector": sel, "matchLabelKeys": keys, "topologyKey": "zone"});
    let mut p = pod(json!({
        "containers": [{"name": "c", "image": "i"}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            term(json!({"matchLabels": {"app": "web"}}), json!(["app"])),
            // Not carried by the pod: nothing is merged.
            term(json!({"matchLabels": {"tier": "x"}}), json!(["tier"])),
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
             "mismatchLabelKeys": ["app"], "topologyKey": "zone"}
        ]}}
    }));
    p["metadata"]["labels"] = json!({"app": "web"});
    assert_eq!(
        message(create("", "pods", "default", p)).await,
        "Pod \"p\" is invalid: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]: Invalid value: \"app\": exists in both matchLabelKeys and labelSelector"
    );
}
