//! Per-kind validation: kube's exact messages for common mistakes, and
//! realistic valid objects (and updates) that must pass.

use keelson_api::{AdmissionApi, AdmissionRequest};
use serde_json::{json, Value};

use crate::support::{admission, create, update};

/// The 422 message of `req`.
async fn message(req: AdmissionRequest) -> String {
    let adm = admission().await;
    match adm.admit(req).await {
        Ok(_) => panic!("admitted"),
        Err(e) => {
            assert_eq!(e.code, 422, "{}", e.message);
            e.message
        }
    }
}

const CONFIG_KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

#[tokio::test]
async fn config_map_keys_overlap_and_size() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
        "data": {"a b": "x", "..": "y"}, "binaryData": {"..x": "eQ==", "k": "eQ=="}});
    let mut cm = cm;
    cm["data"]["k"] = json!("z");
    let msg = message(create("", "configmaps", "default", cm)).await;
    assert_eq!(
        msg,
        format!("ConfigMap \"c\" is invalid: [data[a b]: Invalid value: \"a b\": {CONFIG_KEY}, data[..]: Invalid value: \"..\": must not be '..', binaryData[..x]: Invalid value: \"..x\": must not start with '..', binaryData[k]: Invalid value: \"k\": duplicate of key present in data]")
    );
    let big = "x".repeat(1024 * 1024 + 1);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": big}});
    let msg = message(create("", "configmaps", "default", cm)).await;
    assert_eq!(
        msg,
        "ConfigMap \"c\" is invalid: Too long: may not be more than 1048576 bytes"
    );
}

#[tokio::test]
async fn secret_types_and_size() {
    let s = |ty: &str, data: Value| {
        create(
            "",
            "secrets",
            "default",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": ty, "data": data}),
        )
    };
    assert_eq!(
        message(s("kubernetes.io/tls", json!({"tls.crt": "eA=="}))).await,
        "Secret \"s\" is invalid: data[tls.key]: Required value"
    );
    assert_eq!(
        message(s("kubernetes.io/dockerconfigjson", json!({".dockerconfigjson": "bm90IGpzb24="}))).await,
        "Secret \"s\" is invalid: data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character 'o' in literal null (expecting 'u')"
    );
    assert_eq!(
        message(s("kubernetes.io/dockerconfigjson", json!({}))).await,
        "Secret \"s\" is invalid: data[.dockerconfigjson]: Required value"
    );
    assert_eq!(
        message(s("kubernetes.io/dockercfg", json!({".dockercfg": "W10="}))).await,
        "Secret \"s\" is invalid: data[.dockercfg]: Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
    assert_eq!(
        message(s("kubernetes.io/basic-auth", json!({}))).await,
        "Secret \"s\" is invalid: [data[username]: Required value, data[password]: Required value]"
    );
    assert_eq!(
        message(s("kubernetes.io/ssh-auth", json!({}))).await,
        "Secret \"s\" is invalid: data[ssh-privatekey]: Required value"
    );
    assert_eq!(
        message(s("kubernetes.io/service-account-token", json!({}))).await,
        "Secret \"s\" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value"
    );
    // 1 MiB + 1 decoded bytes.
    use base64::Engine as _;
    let big = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 1024 * 1024 + 1]);
    assert_eq!(
        message(s("Opaque", json!({"k": big}))).await,
        "Secret \"s\" is invalid: data: Too long: may not be more than 1048576 bytes"
    );
}

#[tokio::test]
async fn immutable_config_and_secret_updates() {
    let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "immutable": true, "data": {"a": "1"}});
    let new = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "immutable": false, "data": {"a": "2"}});
    assert_eq!(
        message(update("", "configmaps", "default", old, new)).await,
        "ConfigMap \"c\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]"
    );
    let old = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque", "immutable": true, "data": {"a": "MQ=="}});
    let new = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque", "immutable": true, "data": {"a": "Mg=="}});
    assert_eq!(
        message(update("", "secrets", "default", old.clone(), new)).await,
        "Secret \"s\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
    let new = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Other", "immutable": true, "data": {"a": "MQ=="}});
    assert_eq!(
        message(update("", "secrets", "default", old, new)).await,
        "Secret \"s\" is invalid: type: Invalid value: \"Other\": field is immutable"
    );
}

fn svc(spec: Value) -> AdmissionRequest {
    create(
        "",
        "services",
        "default",
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": spec}),
    )
}

#[tokio::test]
async fn service_mistakes() {
    assert_eq!(
        message(svc(json!({"type": "Bogus"}))).await,
        "Service \"web\" is invalid: [spec.ports: Required value, spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"]"
    );
    let msg = message(svc(json!({"ports": [{"port": 80}, {"port": 0, "name": "Web", "protocol": "ICMP", "targetPort": "no_way"}]}))).await;
    assert_eq!(
        msg,
        "Service \"web\" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\", spec.ports[1].targetPort: Invalid value: \"no_way\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)]"
    );
    assert_eq!(
        message(svc(
            json!({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]})
        ))
        .await,
        "Service \"web\" is invalid: spec.ports[1].name: Duplicate value: \"a\""
    );
    assert_eq!(
        message(svc(json!({"type": "ExternalName"}))).await,
        "Service \"web\" is invalid: spec.externalName: Required value"
    );
    assert_eq!(
        message(svc(json!({"type": "ExternalName", "externalName": "Bad_Name", "ipFamilyPolicy": "SingleStack"}))).await,
        "Service \"web\" is invalid: [spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services, spec.externalName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"
    );
    assert_eq!(
        message(svc(json!({"ports": [{"port": 80}], "sessionAffinity": "Sticky"}))).await,
        "Service \"web\" is invalid: spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\""
    );
    assert_eq!(
        message(svc(json!({"type": "NodePort", "ports": [{"port": 80}], "externalTrafficPolicy": "Nearest"}))).await,
        "Service \"web\" is invalid: spec.externalTrafficPolicy: Unsupported value: \"Nearest\": supported values: \"Cluster\", \"Local\""
    );
    assert_eq!(
        message(svc(json!({"ports": [{"port": 80}], "selector": {"app": "a b"}}))).await,
        "Service \"web\" is invalid: spec.selector: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    );
    assert_eq!(
        message(svc(json!({"ports": [{"port": 80, "name": "a"}, {"port": 80, "name": "b"}]}))).await,
        "Service \"web\" is invalid: spec.ports[1]: Duplicate value: {\"Name\":\"\",\"Protocol\":\"TCP\",\"AppProtocol\":null,\"Port\":80,\"TargetPort\":0,\"NodePort\":0}"
    );
}

#[tokio::test]
async fn endpoints_mistakes() {
    let ep = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "not-an-ip"}], "ports": [{"port": 70000, "protocol": "TCP"}]}]});
    assert_eq!(
        message(create("", "endpoints", "default", ep)).await,
        "Endpoints \"web\" is invalid: [subsets[0].addresses[0].ip: Invalid value: \"not-an-ip\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), subsets[0].addresses[0].ip: Invalid value: \"not-an-ip\": must be a valid IP address, subsets[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive]"
    );
}

#[tokio::test]
async fn pvc_namespace_mistakes() {
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "d"},
        "spec": {"volumeMode": "Raw"}});
    assert_eq!(
        message(create("", "persistentvolumeclaims", "default", pvc)).await,
        "PersistentVolumeClaim \"d\" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value, spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"]"
    );
    let pvc = |size: &str, class: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "d"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class, "resources": {"requests": {"storage": size}}}})
    };
    assert_eq!(
        message(create("", "persistentvolumeclaims", "default", pvc("0", "fast"))).await,
        "PersistentVolumeClaim \"d\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero"
    );
    assert_eq!(
        message(update("", "persistentvolumeclaims", "default", pvc("1Gi", "fast"), pvc("1Gi", "slow"))).await,
        "PersistentVolumeClaim \"d\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
    );
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}, "spec": {"finalizers": ["custom"]}});
    assert_eq!(
        message(create("", "namespaces", "", ns)).await,
        "Namespace \"n\" is invalid: spec.finalizers: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"
    );
}

const RBAC: &str = "rbac.authorization.k8s.io";

#[tokio::test]
async fn rbac_mistakes() {
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"},
        "rules": [{"apiGroups": [""]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
    assert_eq!(
        message(create(RBAC, "roles", "default", role)).await,
        "Role.rbac.authorization.k8s.io \"r\" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, rules[0].resources: Required value: resource rules must supply at least one resource, rules[1].nonResourceURLs: Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs]"
    );
    let crb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": ""},
        "subjects": [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "Robot", "name": "x"}]});
    assert_eq!(
        message(create(RBAC, "clusterrolebindings", "", crb)).await,
        "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: [roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\", roleRef.name: Required value, subjects[0].namespace: Required value, subjects[1].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"]"
    );
    let rb = |name: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": name},
            "subjects": [{"kind": "User", "name": "alice", "apiGroup": RBAC}]})
    };
    assert_eq!(
        message(update(RBAC, "rolebindings", "default", rb("a"), rb("b"))).await,
        "RoleBinding.rbac.authorization.k8s.io \"b\" is invalid: roleRef: Invalid value: {\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":\"Role\",\"Name\":\"b\"}: cannot change roleRef"
    );
}

#[tokio::test]
async fn rbac_non_resource_urls_render_as_kube_134_json() {
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"},
        "rules": [{"verbs": ["get"], "resources": ["pods"], "nonResourceURLs": ["/healthz", "/metrics"]}]});
    assert_eq!(
        message(create(RBAC, "clusterroles", "", role)).await,
        "ClusterRole.rbac.authorization.k8s.io \"r\" is invalid: rules[0].nonResourceURLs: Invalid value: [\"/healthz\",\"/metrics\"]: rules cannot apply to both regular resources and non-resource URLs"
    );
}

#[tokio::test]
async fn networking_mistakes() {
    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
        "spec": {"rules": [{"host": "*.a.*", "http": {"paths": [
            {"path": "api", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80, "name": "http"}}}},
            {"path": "/x", "pathType": "Regex", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}});
    assert_eq!(
        message(create("networking.k8s.io", "ingresses", "default", ing)).await,
        "Ingress.networking.k8s.io \"i\" is invalid: [spec.rules[0].host: Invalid value: \"*.a.*\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.rules[0].http.paths[0].path: Invalid value: \"api\": must be an absolute path, spec.rules[0].http.paths[0].backend: Invalid value: \"\": cannot set both port name & port number, spec.rules[0].http.paths[1].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"]"
    );
    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}, "spec": {}});
    assert_eq!(
        message(create("networking.k8s.io", "ingresses", "default", ing)).await,
        "Ingress.networking.k8s.io \"i\" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"
    );
    let np = json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n"},
        "spec": {"podSelector": {}, "ingress": [{"from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}]}], "policyTypes": ["Sideways"]}});
    assert_eq!(
        message(create("networking.k8s.io", "networkpolicies", "default", np)).await,
        "NetworkPolicy.networking.k8s.io \"n\" is invalid: [spec.ingress[0].from[0]: Required value: must specify a peer, spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`, spec.policyTypes[0]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"]"
    );
    let ic = |c: &str| json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "c"}, "spec": {"controller": c}});
    assert_eq!(
        message(create("networking.k8s.io", "ingressclasses", "", ic("nginx"))).await,
        "IngressClass.networking.k8s.io \"c\" is invalid: spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
    );
    assert_eq!(
        message(update("networking.k8s.io", "ingressclasses", "", ic("a.io/x"), ic("b.io/x"))).await,
        "IngressClass.networking.k8s.io \"c\" is invalid: spec.controller: Invalid value: \"b.io/x\": field is immutable"
    );
}

#[tokio::test]
async fn scheduling_coordination_storage_mistakes() {
    let pc = |name: &str, v: i64| json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": v, "preemptionPolicy": "PreemptLowerPriority"});
    assert_eq!(
        message(create("scheduling.k8s.io", "priorityclasses", "", pc("high", 2_000_000_000))).await,
        "PriorityClass.scheduling.k8s.io \"high\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    );
    assert_eq!(
        message(create("scheduling.k8s.io", "priorityclasses", "", pc("system-mine", 5))).await,
        "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
    );
    assert_eq!(
        message(update("scheduling.k8s.io", "priorityclasses", "", pc("high", 5), pc("high", 6))).await,
        "PriorityClass.scheduling.k8s.io \"high\" is invalid: value: Forbidden: may not be changed in an update."
    );
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
        "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}});
    assert_eq!(
        message(create("coordination.k8s.io", "leases", "default", lease)).await,
        "Lease.coordination.k8s.io \"l\" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]"
    );
    let sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"},
        "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"});
    assert_eq!(
        message(create("storage.k8s.io", "storageclasses", "", sc)).await,
        "StorageClass.storage.k8s.io \"s\" is invalid: [provisioner: Required value, reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\", volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"]"
    );
    let sc = |p: &str| json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": p, "parameters": {"type": p}});
    assert_eq!(
        message(update("storage.k8s.io", "storageclasses", "", sc("a.io/x"), sc("b.io/x"))).await,
        "StorageClass.storage.k8s.io \"s\" is invalid: [parameters: Forbidden: updates to parameters are forbidden., provisioner: Forbidden: updates to provisioner are forbidden.]"
    );
}

#[tokio::test]
async fn valid_objects_and_updates_pass() {
    let adm = admission().await;
    let b64 = |s: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(s)
    };
    let creates: Vec<(&str, &str, &str, Value)> = vec![
        (
            "",
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}, "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "dns", "port": 53, "protocol": "UDP"}]}}),
        ),
        (
            "",
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}], "externalTrafficPolicy": "Local"}}),
        ),
        (
            "",
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 443, "targetPort": 8443}], "loadBalancerSourceRanges": ["10.0.0.0/8"], "sessionAffinity": "ClientIP"}}),
        ),
        (
            "",
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "d"}, "spec": {"clusterIP": "None", "selector": {"app": "db"}}}),
        ),
        (
            "",
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "e"}, "spec": {"type": "ExternalName", "externalName": "db.example.com."}}),
        ),
        (
            "",
            "endpoints",
            "default",
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "a"}, "subsets": [{"addresses": [{"ip": "10.1.2.3", "nodeName": "node-1"}], "ports": [{"name": "http", "port": 8080}, {"name": "dns", "port": 53, "protocol": "UDP"}]}]}),
        ),
        (
            "",
            "configmaps",
            "default",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"app.properties": "x=1", "KEY_NAME": "v"}, "binaryData": {"logo.png": "iVBORw0KGgo="}}),
        ),
        (
            "",
            "secrets",
            "default",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}, "type": "kubernetes.io/tls", "data": {"tls.crt": b64("crt"), "tls.key": b64("key")}}),
        ),
        (
            "",
            "secrets",
            "default",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}, "type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": b64("{\"auths\":{\"r.io\":{\"auth\":\"eDp5\"}}}")}}),
        ),
        (
            "",
            "secrets",
            "default",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}, "stringData": {"password": "hunter2"}}),
        ),
        (
            "",
            "secrets",
            "default",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "d"}, "type": "kubernetes.io/basic-auth", "stringData": {"username": "u"}}),
        ),
        (
            "",
            "secrets",
            "default",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "e", "annotations": {"kubernetes.io/service-account.name": "default"}}, "type": "kubernetes.io/service-account-token"}),
        ),
        (
            "",
            "persistentvolumeclaims",
            "default",
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "a"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard", "resources": {"requests": {"storage": "10Gi"}}}}),
        ),
        (
            "",
            "namespaces",
            "",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}, "spec": {"finalizers": ["kubernetes", "example.com/cleanup"]}}),
        ),
        (
            "",
            "events",
            "default",
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "default"}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "Started", "message": "ok", "type": "Normal"}),
        ),
        (
            "events.k8s.io",
            "events",
            "default",
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e2", "namespace": "default"}, "eventTime": "2026-01-01T00:00:00.000000Z", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, "reportingController": "example.com/ctl", "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "note": "done", "type": "Normal"}),
        ),
        (
            RBAC,
            "roles",
            "default",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "a"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cfg"], "verbs": ["get", "update"]}]}),
        ),
        (
            RBAC,
            "clusterroles",
            "",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "a"}, "rules": [{"nonResourceURLs": ["/healthz", "/metrics"], "verbs": ["get"]}, {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}]}),
        ),
        (
            RBAC,
            "clusterroles",
            "",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}),
        ),
        (
            RBAC,
            "rolebindings",
            "default",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "a"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "ServiceAccount", "name": "default"}, {"kind": "Group", "name": "devs"}]}),
        ),
        (
            RBAC,
            "clusterrolebindings",
            "",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "a"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}, {"kind": "User", "name": "alice"}]}),
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "default",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "a"}, "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com", "*.example.com"], "secretName": "tls"}], "defaultBackend": {"service": {"name": "web", "port": {"name": "http"}}}, "rules": [{"host": "*.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}, {"path": "/exact", "pathType": "Exact", "backend": {"resource": {"apiGroup": "k8s.example.com", "kind": "Bucket", "name": "b"}}}]}}, {"http": {"paths": [{"pathType": "ImplementationSpecific", "backend": {"service": {"name": "web", "port": {"number": 8080}}}}]}}]}}),
        ),
        (
            "networking.k8s.io",
            "ingressclasses",
            "",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"}}}),
        ),
        (
            "networking.k8s.io",
            "networkpolicies",
            "default",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "a"}, "spec": {"podSelector": {"matchLabels": {"app": "db"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}, {"namespaceSelector": {}, "podSelector": {}}], "ports": [{"port": 5432}, {"port": 8000, "endPort": 9000}, {"port": "http"}]}], "egress": [{"to": [{"ipBlock": {"cidr": "fd00::/8"}}]}], "policyTypes": ["Ingress", "Egress"]}}),
        ),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            "",
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1_000_000_000, "preemptionPolicy": "Never", "description": "high"}),
        ),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            "",
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-node-critical"}, "value": 2_000_001_000}),
        ),
        (
            "coordination.k8s.io",
            "leases",
            "default",
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "a"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "leaseTransitions": 0, "renewTime": "2026-01-01T00:00:00.000000Z"}}),
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            "",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}, "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3"}, "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true}),
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            "",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner"}),
        ),
        (
            "node.k8s.io",
            "runtimeclasses",
            "",
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata-qemu", "overhead": {"podFixed": {"cpu": "250m", "memory": "160Mi"}}, "scheduling": {"nodeSelector": {"katacontainers.io/kata-runtime": "true"}, "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}]}}),
        ),
    ];
    for (group, resource, ns, obj) in creates {
        let name = obj["metadata"]["name"].clone();
        if let Err(e) = adm.admit(create(group, resource, ns, obj)).await {
            panic!("{resource}/{name}: {}", e.message);
        }
    }
    // Valid updates.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "b"}}, "immutable": true, "data": {"a": "1"}});
    let mut cm2 = cm.clone();
    cm2["metadata"]["labels"]["a"] = json!("c");
    let pvc = |size: &str, vol: Option<&str>| {
        let mut p = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "d"},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem", "resources": {"requests": {"storage": size}}}, "status": {"phase": "Bound"}});
        if let Some(v) = vol {
            p["spec"]["volumeName"] = json!(v);
        }
        p
    };
    let rb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"},
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"}, "subjects": []});
    let mut rb2 = rb.clone();
    rb2["subjects"] = json!([{"kind": "User", "name": "bob"}]);
    let updates: Vec<(&str, &str, &str, Value, Value)> = vec![
        ("", "configmaps", "default", cm.clone(), cm2),
        (
            "",
            "persistentvolumeclaims",
            "default",
            // Binding the claim (growing it needs a StorageClass with
            // allowVolumeExpansion in the store: PersistentVolumeClaimResize).
            pvc("1Gi", None),
            pvc("1Gi", Some("pv-1")),
        ),
        (RBAC, "rolebindings", "default", rb, rb2),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            "",
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": 5}),
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": 5, "description": "d"}),
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            "",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "a.io/x"}),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "a.io/x", "allowVolumeExpansion": true}),
        ),
        (
            "node.k8s.io",
            "runtimeclasses",
            "",
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata"}),
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata", "labels": {"a": "b"}}, "handler": "kata", "scheduling": {"nodeSelector": {"kata": "true"}}}),
        ),
        (
            "",
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}}),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}, "spec": {"ports": [{"port": 81}]}}),
        ),
    ];
    for (group, resource, ns, old, new) in updates {
        if let Err(e) = adm.admit(update(group, resource, ns, old, new)).await {
            panic!("update {resource}: {}", e.message);
        }
    }
}

#[tokio::test]
async fn runtime_class_rules() {
    const NODE: &str = "node.k8s.io";
    let rc = |handler: &str| {
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}, "handler": handler,
            "scheduling": {"nodeSelector": {"bad key!": "v"}}})
    };
    assert_eq!(
        message(create(NODE, "runtimeclasses", "", rc("Bad_Handler"))).await,
        "RuntimeClass.node.k8s.io \"rc\" is invalid: [handler: Invalid value: \"Bad_Handler\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), scheduling.nodeSelector: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]"
    );
    // A missing handler is kube's Invalid "", not a schema Required.
    let none =
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}});
    assert_eq!(
        message(create(NODE, "runtimeclasses", "", none)).await,
        "RuntimeClass.node.k8s.io \"rc\" is invalid: handler: Invalid value: \"\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    );
    let old = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}, "handler": "a"});
    let new = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}, "handler": "b"});
    assert_eq!(
        message(update(NODE, "runtimeclasses", "", old, new)).await,
        "RuntimeClass.node.k8s.io \"rc\" is invalid: handler: Invalid value: \"b\": field is immutable"
    );
}

fn slice(body: Value) -> Value {
    let mut s = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "web-abc"}});
    for (k, v) in body.as_object().unwrap() {
        s[k] = v.clone();
    }
    s
}

#[tokio::test]
async fn endpoint_slice_mistakes() {
    const ES: &str = "discovery.k8s.io";
    let msg = message(create(
        ES,
        "endpointslices",
        "default",
        slice(json!({
        "addressType": "IP", "endpoints": [{"addresses": []}]})),
    ))
    .await;
    assert_eq!(
        msg,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: [addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\", endpoints[0].addresses: Required value: must contain at least 1 address]"
    );
    let msg = message(create(
        ES,
        "endpointslices",
        "default",
        slice(json!({
        "addressType": "FQDN",
        "endpoints": [{"addresses": ["localhost", "Bad_Host.example.com", "ok.example.com."],
            "nodeName": "Node_1", "hostname": "a.b",
            "hints": {"forZones": [{"name": "z1"}, {"name": "z1"}]}}],
        "ports": [{"name": "http", "port": 80, "protocol": "TCP"},
            {"name": "http", "port": 81, "protocol": "ICMP", "appProtocol": "bad proto"}]})),
    ))
    .await;
    assert_eq!(
        msg,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: [ports[1].name: Duplicate value: \"http\", ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\", ports[1].appProtocol: Invalid value: \"bad proto\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), endpoints[0].addresses[0]: Invalid value: \"localhost\": should be a domain with at least two segments separated by dots, endpoints[0].addresses[1]: Invalid value: \"Bad_Host.example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), endpoints[0].nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), endpoints[0].hostname: Invalid value: \"a.b\": must not contain dots, endpoints[0].hints.forZones[1].name: Duplicate value: \"z1\"]"
    );
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"addresses": [format!("10.0.0.{}", i % 250)]}))
        .collect();
    // kube 1.34's limit is 20000 ports (the API docs' 100 is not enforced).
    let ports: Vec<Value> = (0..20001)
        .map(|i| json!({"name": format!("p{i}"), "port": 1 + i % 60000, "protocol": "TCP"}))
        .collect();
    let addrs: Vec<String> = (0..101).map(|i| format!("10.0.1.{}", i % 250)).collect();
    let msg = message(create(
        ES,
        "endpointslices",
        "default",
        slice(json!({
        "addressType": "IPv4", "ports": ports, "endpoints": [{"addresses": addrs}]})),
    ))
    .await;
    assert_eq!(
        msg,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: [ports: Too many: 20001: must have at most 20000 items, endpoints[0].addresses: Too many: 101: must have at most 100 items]"
    );
    let eps: Vec<Value> = (0..1001).map(|_| many[0].clone()).collect();
    let msg = message(create(
        ES,
        "endpointslices",
        "default",
        slice(json!({
        "addressType": "IPv4", "endpoints": eps})),
    ))
    .await;
    assert_eq!(
        msg,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: endpoints: Too many: 1001: must have at most 1000 items"
    );
    let old = slice(json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}]}));
    let new = slice(json!({"addressType": "IPv6", "endpoints": [{"addresses": ["10.0.0.1"]}]}));
    assert_eq!(
        message(update(ES, "endpointslices", "default", old, new)).await,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: addressType: Invalid value: \"IPv6\": field is immutable"
    );
}

/// Valid objects (with the optional fields real manifests use) of the kinds
/// whose rules came last; the fuzz test mutates them too.
pub(crate) fn valid_newer_kinds() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    vec![
        (
            "discovery.k8s.io",
            "endpointslices",
            "default",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "web-x7k2p", "labels": {"kubernetes.io/service-name": "web",
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.244.1.5"], "conditions": {"ready": true, "serving": true, "terminating": false},
                "hostname": "web-0", "nodeName": "node-1.example", "zone": "us-east-1a",
                "targetRef": {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": "0f5e3c6e-1c2a-4a8e-9a53-3f1b2b8e6d11"},
                "hints": {"forZones": [{"name": "us-east-1a"}]}},
                {"addresses": ["10.244.2.7"], "conditions": {"ready": false}}],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "appProtocol": "http"},
                {"name": "metrics", "port": 9090, "protocol": "TCP"}]}),
        ),
        (
            "discovery.k8s.io",
            "endpointslices",
            "default",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "ext"}, "addressType": "FQDN",
            "endpoints": [{"addresses": ["db.example.com."]}], "ports": [{"port": 5432}]}),
        ),
        (
            "discovery.k8s.io",
            "endpointslices",
            "default",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "empty"}, "addressType": "IPv6"}),
        ),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "replica-limit.example.com"},
            "spec": {"failurePolicy": "Fail",
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["deployments", "deployments/scale"], "scope": "Namespaced"}],
                    "excludeResourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"],
                        "resources": ["deployments"], "resourceNames": ["system-critical"]}],
                    "namespaceSelector": {"matchExpressions": [{"key": "environment", "operator": "In", "values": ["prod", "staging"]}]},
                    "matchPolicy": "Equivalent"},
                "matchConditions": [{"name": "exclude-leases", "expression": "!(request.resource.group == 'coordination.k8s.io')"}],
                "variables": [{"name": "replicas", "expression": "object.spec.replicas"}, {"name": "_max2", "expression": "int(params.data.max)"}],
                "validations": [{"expression": "variables.replicas <= variables._max2", "message": "too many replicas",
                    "reason": "Invalid", "messageExpression": "'replicas must be at most ' + params.data.max"},
                    {"expression": "object.metadata.name.size() < 40", "reason": "Forbidden"}],
                "auditAnnotations": [{"key": "high-replica-count", "valueExpression": "'Deployment spec.replicas set to ' + string(object.spec.replicas)"}]}}),
        ),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "audit-only"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}]},
                "auditAnnotations": [{"key": "seen", "valueExpression": "'yes'"}]}}),
        ),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicybindings",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "replica-limit-binding"},
            "spec": {"policyName": "replica-limit.example.com", "validationActions": ["Deny", "Audit"],
                "paramRef": {"name": "replica-limit", "namespace": "default", "parameterNotFoundAction": "Deny"},
                "matchResources": {"namespaceSelector": {"matchLabels": {"environment": "test"}},
                    "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]}}}),
        ),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicybindings",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "by-selector"},
            "spec": {"policyName": "audit-only", "validationActions": ["Warn", "Audit"],
                "paramRef": {"selector": {"matchLabels": {"role": "limit"}}, "parameterNotFoundAction": "Allow"}}}),
        ),
        (
            "admissionregistration.k8s.io",
            "mutatingadmissionpolicies",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "sidecar.example.com"},
            "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}],
                    "excludeResourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"],
                        "resources": ["deployments"], "resourceNames": ["system-critical"]}]},
                "matchConditions": [{"name": "not-atomic", "expression": "!object.metadata.name.startsWith('atomic')"}],
                "variables": [{"name": "image", "expression": "params.data.image"}],
                "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                        "Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: 'sidecar', image: variables.image}]}}}}"}},
                    {"patchType": "JSONPatch", "jsonPatch": {"expression":
                        "[JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('example.com/by'), value: request.userInfo.username}]"}}],
                "reinvocationPolicy": "IfNeeded"}}),
        ),
        (
            "admissionregistration.k8s.io",
            "mutatingadmissionpolicybindings",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "sidecar-binding"},
            "spec": {"policyName": "sidecar.example.com",
                "paramRef": {"name": "sidecar", "namespace": "default", "parameterNotFoundAction": "Allow"},
                "matchResources": {"namespaceSelector": {"matchLabels": {"environment": "test"}},
                    "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"], "resources": ["deployments"]}]}}}),
        ),
        (
            "certificates.k8s.io",
            "certificatesigningrequests",
            "",
            json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "jane-client", "labels": {"team": "dev"}},
            "spec": {"request": CSR_B64, "signerName": "kubernetes.io/kube-apiserver-client",
                "expirationSeconds": 86400, "usages": ["digital signature", "key encipherment", "client auth"]}}),
        ),
        (
            "certificates.k8s.io",
            "certificatesigningrequests",
            "",
            json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "serving"},
            "spec": {"request": CSR_B64, "signerName": "example.com/my-signer.v1", "usages": ["server auth"]}}),
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "flowschemas",
            "",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "kube-controller-manager"},
            "spec": {"matchingPrecedence": 800, "priorityLevelConfiguration": {"name": "workload-high"},
                "distinguisherMethod": {"type": "ByNamespace"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "system:kube-controller-manager"}},
                        {"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": "kube-system"}},
                        {"kind": "Group", "group": {"name": "system:serviceaccounts"}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]},
                        {"verbs": ["get", "list", "watch"], "apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "namespaces": ["default", "kube-system"]}],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/metrics/*", "/"]}]}]}}),
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "flowschemas",
            "",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "exempt"},
            "spec": {"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "exempt"},
                "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:masters"}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}),
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "prioritylevelconfigurations",
            "",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "workload-high"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 40, "lendablePercent": 50,
                "borrowingLimitPercent": 100,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}}),
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "prioritylevelconfigurations",
            "",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "catch-all"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"}}}}),
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "prioritylevelconfigurations",
            "",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "exempt"}, "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0}}}),
        ),
        (
            "",
            "persistentvolumes",
            "",
            json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-nfs", "labels": {"type": "nfs"}},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteMany", "ReadOnlyMany"],
                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "nfs-client",
                "mountOptions": ["hard", "nfsvers=4.1"], "volumeMode": "Filesystem",
                "nfs": {"server": "nfs.example.com", "path": "/exports/data"},
                "claimRef": {"namespace": "default", "name": "data"}}}),
        ),
        (
            "",
            "persistentvolumes",
            "",
            json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "local-pv"},
            "spec": {"capacity": {"storage": "100Gi"}, "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "local-storage",
                "local": {"path": "/mnt/disks/ssd1"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}}}),
        ),
        (
            "",
            "persistentvolumes",
            "",
            json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "csi-pv"},
            "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOncePod"], "volumeMode": "Block",
                "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-0abc", "fsType": "ext4",
                    "volumeAttributes": {"type": "gp3"}}}}),
        ),
        (
            "",
            "persistentvolumes",
            "",
            json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "host"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/data", "type": "DirectoryOrCreate"}}}),
        ),
    ]
}

#[tokio::test]
async fn newer_kinds_valid_objects_pass_create_and_update() {
    let adm = admission().await;
    for (group, resource, ns, obj) in valid_newer_kinds() {
        let name = obj["metadata"]["name"].clone();
        let created = match adm.admit(create(group, resource, ns, obj.clone())).await {
            Ok(r) => r.object.expect("an admitted object"),
            Err(e) => panic!("create {resource}/{name}: {}", e.message),
        };
        let mut changed = created.clone();
        changed["metadata"]["labels"]["touched"] = json!("yes");
        if let Err(e) = adm
            .admit(update(group, resource, ns, created, changed))
            .await
        {
            panic!("update {resource}/{name}: {}", e.message);
        }
    }
}

const AR: &str = "admissionregistration.k8s.io";

fn vap(spec: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "demo"}, "spec": spec})
}

fn vapb(spec: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "demo-binding"}, "spec": spec})
}

#[tokio::test]
async fn admission_policy_mistakes() {
    let p = "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"demo\" is invalid: ";
    assert_eq!(
        message(create(AR, "validatingadmissionpolicies", "", vap(json!({})))).await,
        format!("{p}[spec.matchConstraints: Required value, spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]")
    );
    let bad = vap(json!({
        "failurePolicy": "Sometimes",
        "paramKind": {"apiVersion": "a/b/c", "kind": "Config_Map"},
        "matchConstraints": {"matchPolicy": "Loose", "resourceRules": [{"operations": [], "apiGroups": ["apps"],
            "apiVersions": ["v1"], "resources": ["deployments"], "resourceNames": ["a/b", "x", "x"]}]},
        "matchConditions": [{"name": "", "expression": " "}, {"name": "bad name", "expression": "true"}],
        "variables": [{"name": "in", "expression": ""}, {"name": "", "expression": "1"}],
        "validations": [{"expression": "", "message": "two\nlines", "reason": "NotFound"},
            {"expression": "true", "messageExpression": "  ", "message": "  "}],
        "auditAnnotations": [{"key": "k", "valueExpression": ""}, {"key": "k", "valueExpression": "'v'"}]
    }));
    assert_eq!(
        message(create(AR, "validatingadmissionpolicies", "", bad)).await,
        format!("{p}[spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\", spec.paramKind.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c, spec.paramKind.kind: Invalid value: \"Config_Map\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), spec.matchConstraints.matchPolicy: Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\", spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: \"a/b\": may not contain '/', spec.matchConstraints.resourceRules[0].resourceNames[2]: Duplicate value: \"x\", spec.matchConstraints.resourceRules[0].operations: Required value, spec.matchConditions[0].expression: Required value, spec.matchConditions[0].name: Required value, spec.matchConditions[1].name: Invalid value: \"bad name\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.variables[0].name: Invalid value: \"in\": name is not a valid CEL identifier, spec.variables[0].expression: Required value: expression is not specified, spec.variables[1].name: Required value: name is not specified, spec.validations[0].expression: Required value: expression is not specified, spec.validations[0].message: Invalid value: \"two\\nlines\": message must not contain line breaks, spec.validations[0].reason: Unsupported value: \"NotFound\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\", spec.validations[1].messageExpression: Invalid value: \"  \": must be non-empty if specified, spec.validations[1].message: Invalid value: \"  \": message must be non-empty if specified, spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified, spec.auditAnnotations[1].key: Duplicate value: \"k\"]")
    );
    let no_rules = vap(json!({"matchConstraints": {}, "validations": [{"expression": "true"}]}));
    assert_eq!(
        message(create(AR, "validatingadmissionpolicies", "", no_rules)).await,
        format!("{p}spec.matchConstraints.resourceRules: Required value")
    );
}

/// kube compiles a policy's expressions when it is written: compile and
/// result-type errors are field errors (message expressions have no
/// `authorizer`; matchConditions no `variables`).
#[tokio::test]
async fn admission_policy_expressions_are_compiled() {
    let p = "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"demo\" is invalid: ";
    let rules = json!({"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
        "apiVersions": ["v1"], "resources": ["deployments"]}]});
    let bad = vap(json!({
        "failurePolicy": "Fail",
        "matchConstraints": rules,
        "matchConditions": [{"name": "c", "expression": "variables.ok"}],
        "variables": [{"name": "ok", "expression": "object.spec.replicas > 1"}],
        "validations": [{"expression": "x == 1"}, {"expression": "object.spec.replicas", "messageExpression": "authorizer.path('/').check('get').reason()"},
            {"expression": "variables.ok && authorizer.requestResource.check('get').allowed()"}],
        "auditAnnotations": [{"key": "k", "valueExpression": "1"}]
    }));
    assert_eq!(
        message(create(AR, "validatingadmissionpolicies", "", bad)).await,
        format!("{p}[spec.matchConditions[0].expression: Invalid value: \"variables.ok\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.ok\n | ^, spec.validations[0].expression: Invalid value: \"x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x == 1\n | ^, spec.validations[1].expression: Invalid value: \"object.spec.replicas\": must evaluate to bool but got dyn, spec.validations[1].messageExpression: Invalid value: \"authorizer.path('/').check('get').reason()\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.path('/').check('get').reason()\n | ^, spec.auditAnnotations[0].valueExpression: Invalid value: \"1\": must evaluate to one of [string null_type] but got int]")
    );
}

#[tokio::test]
async fn admission_policy_binding_mistakes() {
    let p = "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"demo-binding\" is invalid: ";
    assert_eq!(
        message(create(AR, "validatingadmissionpolicybindings", "", vapb(json!({})))).await,
        format!("{p}[spec.policyName: Required value, spec.validationActions: Required value: at least one validation action is required]")
    );
    let bad = vapb(
        json!({"policyName": "Demo", "validationActions": ["Deny", "Warn", "Deny", "Block"],
        "paramRef": {"name": "cfg", "selector": {"matchLabels": {"a": "b"}}, "parameterNotFoundAction": "Ignore"},
        "matchResources": {"matchPolicy": "Loose"}}),
    );
    assert_eq!(
        message(create(AR, "validatingadmissionpolicybindings", "", bad)).await,
        format!("{p}[spec.policyName: Invalid value: \"Demo\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, spec.paramRef.parameterNotFoundAction: Unsupported value: \"Ignore\": supported values: \"Deny\", \"Allow\", spec.matchResouces.matchPolicy: Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\", spec.validationActions[2]: Duplicate value: \"Deny\", spec.validationActions[3]: Unsupported value: \"Block\": supported values: \"Audit\", \"Deny\", \"Warn\", spec.validationActions: Invalid value: [\"Deny\",\"Warn\",\"Deny\",\"Block\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)]")
    );
    let no_ref =
        vapb(json!({"policyName": "demo", "validationActions": ["Audit"], "paramRef": {}}));
    assert_eq!(
        message(create(AR, "validatingadmissionpolicybindings", "", no_ref)).await,
        format!("{p}[spec.paramRef: Required value: one of name or selector must be specified, spec.paramRef.parameterNotFoundAction: Required value]")
    );
}

fn map(spec: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "demo"}, "spec": spec})
}

fn mapb(spec: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "demo-binding"}, "spec": spec})
}

/// A JSON patch that compiles.
const PATCH: &str = r#"[JSONPatch{op: "add", path: "/metadata/labels/a", value: "b"}]"#;

/// A rule for the mutating policies' tests.
fn map_rules() -> Value {
    json!({"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
        "apiVersions": ["v1"], "resources": ["deployments"]}]})
}

/// kube 1.34's `validateMutatingAdmissionPolicySpec`: `failurePolicy` is
/// defaulted (Fail), `reinvocationPolicy` is not; a mutation's `patchType`
/// picks the member that must be set; DELETE cannot be matched.
#[tokio::test]
async fn mutating_admission_policy_mistakes() {
    let p = "MutatingAdmissionPolicy.admissionregistration.k8s.io \"demo\" is invalid: ";
    assert_eq!(
        message(create(AR, "mutatingadmissionpolicies", "", map(json!({})))).await,
        format!("{p}[spec.matchConstraints: Required value, spec.mutations: Required value: mutations must contain at least one item, spec.reinvocationPolicy: Required value]")
    );
    let bad = map(json!({
        "failurePolicy": "Sometimes",
        "matchConstraints": {"resourceRules": [{"operations": ["DELETE", "CREATE"], "apiGroups": ["apps"],
            "apiVersions": ["v1"], "resources": ["deployments"]}]},
        "mutations": [{"patchType": "Strategic"}, {"patchType": "ApplyConfiguration"},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "  "}, "applyConfiguration": {"expression": "Object{}"}},
            {"applyConfiguration": {"expression": "Object{}"}},
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}, "jsonPatch": {}}],
        "reinvocationPolicy": "Always"
    }));
    assert_eq!(
        message(create(AR, "mutatingadmissionpolicies", "", bad)).await,
        format!("{p}[spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\", spec.matchConstraints.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"UPDATE\", spec.mutations[0].patchType: Unsupported value: \"Strategic\": supported values: \"ApplyConfiguration\", \"JSONPatch\", spec.mutations[1].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration, spec.mutations[2].jsonPatch.expression: Required value, spec.mutations[2].applyConfiguration: Invalid value: \"{{applyConfiguration}}\": must not be specified when patchType is JSONPatch, spec.mutations[3].patchType: Required value, spec.mutations[4].jsonPatch: Invalid value: \"{{jsonPatch}}\": must not be specified when patchType is ApplyConfiguration, spec.reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\"]")
    );
    let no_rules = map(
        json!({"matchConstraints": {}, "reinvocationPolicy": "Never",
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": PATCH}}]}),
    );
    assert_eq!(
        message(create(AR, "mutatingadmissionpolicies", "", no_rules)).await,
        format!("{p}spec.matchConstraints.resourceRules: Required value")
    );
    // The shared rules of paramKind, match conditions and variables.
    let shared = map(
        json!({"paramKind": {"apiVersion": "v1"}, "matchConstraints": map_rules(),
        "matchConditions": [{"name": "c", "expression": ""}], "variables": [{"name": "in", "expression": "1"}],
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": PATCH}}], "reinvocationPolicy": "IfNeeded"}),
    );
    assert_eq!(
        message(create(AR, "mutatingadmissionpolicies", "", shared)).await,
        format!("{p}[spec.paramKind.kind: Required value, spec.matchConditions[0].expression: Required value, spec.variables[0].name: Invalid value: \"in\": name is not a valid CEL identifier]")
    );
}

/// A mutation's expression is compiled (trimmed) with the patch types:
/// an apply configuration must be an `Object`, a JSON patch a
/// `list(JSONPatch)`; `params` only with a `paramKind`, `variables` only
/// when the policy has some.
#[tokio::test]
async fn mutating_admission_policy_expressions_are_compiled() {
    let p = "MutatingAdmissionPolicy.admissionregistration.k8s.io \"demo\" is invalid: ";
    let bad = map(json!({
        "matchConstraints": map_rules(),
        "reinvocationPolicy": "Never",
        "mutations": [
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": " object.spec "}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "[1]"}},
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{spec: params.spec}"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: variables.p}]"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: \"add\", path: \"/x\", value: authorizer.group('').resource('x').check('get').allowed()}]"}},
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}}
        ]
    }));
    assert_eq!(
        message(create(AR, "mutatingadmissionpolicies", "", bad)).await,
        format!("{p}[spec.mutations[0].applyConfiguration.expression: Invalid value: \"object.spec\": must evaluate to Object but got dyn, spec.mutations[1].jsonPatch.expression: Invalid value: \"[1]\": must evaluate to list(JSONPatch) but got list(int), spec.mutations[2].applyConfiguration.expression: Invalid value: \"Object{{spec: params.spec}}\": compilation failed: ERROR: <input>:1:14: undeclared reference to 'params' (in container '')\n | Object{{spec: params.spec}}\n | .............^, spec.mutations[3].jsonPatch.expression: Invalid value: \"[JSONPatch{{op: 'add', path: variables.p}}]\": compilation failed: ERROR: <input>:1:29: undeclared reference to 'variables' (in container '')\n | [JSONPatch{{op: 'add', path: variables.p}}]\n | ............................^]")
    );
}

/// On update, match conditions that kept their `paramKind` and
/// expressions are not checked again (kube's
/// `ignoreMutatingAdmissionPolicyMatchConditions`); the rest is.
#[tokio::test]
async fn mutating_admission_policy_update_keeps_old_match_conditions() {
    let p = "MutatingAdmissionPolicy.admissionregistration.k8s.io \"demo\" is invalid: ";
    let spec = |param: Value| {
        json!({"failurePolicy": "Fail", "paramKind": param, "matchConstraints": map_rules(),
            "matchConditions": [{"name": "c", "expression": "nope == 1"}],
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": PATCH}}],
            "reinvocationPolicy": "Never"})
    };
    let mut old = map(spec(json!({"apiVersion": "v1", "kind": "ConfigMap"})));
    old["metadata"]["resourceVersion"] = json!("1");
    let adm = admission().await;
    let mut same = old.clone();
    same["metadata"]["labels"] = json!({"touched": "yes"});
    if let Err(e) = adm
        .admit(update(
            AR,
            "mutatingadmissionpolicies",
            "",
            old.clone(),
            same,
        ))
        .await
    {
        panic!("update: {}", e.message);
    }
    let mut changed = old.clone();
    changed["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "Secret"});
    changed["spec"]["reinvocationPolicy"] = json!("");
    assert_eq!(
        message(update(AR, "mutatingadmissionpolicies", "", old, changed)).await,
        format!("{p}[spec.matchConditions[0].expression: Invalid value: \"nope == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope == 1\n | ^, spec.reinvocationPolicy: Required value]")
    );
}

#[tokio::test]
async fn mutating_admission_policy_binding_mistakes() {
    let p =
        "MutatingAdmissionPolicyBinding.admissionregistration.k8s.io \"demo-binding\" is invalid: ";
    assert_eq!(
        message(create(
            AR,
            "mutatingadmissionpolicybindings",
            "",
            mapb(json!({}))
        ))
        .await,
        format!("{p}spec.policyName: Required value")
    );
    let bad = mapb(json!({"policyName": "Demo",
        "paramRef": {"name": "cfg", "selector": {"matchLabels": {"a": "b"}}, "parameterNotFoundAction": "Ignore"},
        "matchResources": {"matchPolicy": "Loose", "resourceRules": [{"operations": ["DELETE"], "apiGroups": ["apps"],
            "apiVersions": ["v1"], "resources": ["deployments"]}]}}));
    assert_eq!(
        message(create(AR, "mutatingadmissionpolicybindings", "", bad)).await,
        format!("{p}[spec.policyName: Invalid value: \"Demo\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, spec.paramRef.parameterNotFoundAction: Unsupported value: \"Ignore\": supported values: \"Deny\", \"Allow\", spec.matchResouces.matchPolicy: Unsupported value: \"Loose\": supported values: \"Equivalent\", \"Exact\", spec.matchResources.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"UPDATE\"]")
    );
    let no_ref = mapb(json!({"policyName": "demo", "paramRef": {}}));
    assert_eq!(
        message(create(AR, "mutatingadmissionpolicybindings", "", no_ref)).await,
        format!("{p}[spec.paramRef: Required value: one of name or selector must be specified, spec.paramRef.parameterNotFoundAction: Required value]")
    );
}

/// A PKCS#10 request (P-256, CN=jane, O=dev) made with openssl for these tests.
const CSR_B64: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIWU1IOENBUUF3SFRFTk1Bc0dBMVVFQXd3RWFtRnVaVEVNTUFvR0ExVUVDZ3dEWkdWMk1Ga3dFd1lIS29aSQp6ajBDQVFZSUtvWkl6ajBEQVFjRFFnQUVBUlQ0U3g2N2RHaXRIVjZxVkYzT1RERWl0RnpZQ3lrTjQwRHVjUndqClpZbzk3N1V2K0lQTGNkc2FRZ3Y0VkVCMHBSWmM0dytpeS9IZStxUmcwNVBRS3FBQU1Bb0dDQ3FHU000OUJBTUMKQTBrQU1FWUNJUURYTWd1VlZXMHFGMk9XYlV0WGU0U08wTGlVazIxNXB5NnhseHZjV3JCQm9BSWhBTFNmQUZlTApUbzgzeW02OXdyTU5MdlRSZmx3NjYvaDljcFV4bnd4anRjcFgKLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==";

fn csr(spec: Value) -> Value {
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "jane"}, "spec": spec})
}

#[tokio::test]
async fn certificate_signing_request_mistakes() {
    const C: &str = "certificates.k8s.io";
    let p = "CertificateSigningRequest.certificates.k8s.io \"jane\" is invalid: ";
    let bad = csr(
        json!({"request": "bm90IGEgY3Ny", "signerName": "example.com", "expirationSeconds": 60}),
    );
    assert_eq!(
        message(create(C, "certificatesigningrequests", "", bad)).await,
        format!("{p}[spec.request: Invalid value: \"bm90IGEgY3Ny\": PEM block type must be CERTIFICATE REQUEST, spec.usages: Required value, spec.signerName: Invalid value: \"example.com\": must be a fully qualified domain and path of the form 'example.com/signer-name', spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)]")
    );
    let bad = csr(
        json!({"request": CSR_B64, "signerName": "kubernetes.io/legacy-unknown",
        "usages": ["client auth", "bogus", "client auth"]}),
    );
    assert_eq!(
        message(create(C, "certificatesigningrequests", "", bad)).await,
        format!("{p}[spec.usages[1]: Unsupported value: \"bogus\": supported values: \"any\", \"cert sign\", \"client auth\", \"code signing\", \"content commitment\", \"crl sign\", \"data encipherment\", \"decipher only\", \"digital signature\", \"email protection\", \"encipher only\", \"ipsec end system\", \"ipsec tunnel\", \"ipsec user\", \"key agreement\", \"key encipherment\", \"microsoft sgc\", \"netscape sgc\", \"ocsp signing\", \"s/mime\", \"server auth\", \"signing\", \"timestamping\", spec.usages[2]: Duplicate value: \"client auth\", spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version]")
    );
    let bad =
        csr(json!({"request": CSR_B64, "signerName": "Example/a_b", "usages": ["client auth"]}));
    assert_eq!(
        message(create(C, "certificatesigningrequests", "", bad)).await,
        format!("{p}[spec.signerName: Invalid value: \"Example\": validating label \"Example\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.signerName: Invalid value: \"Example\": should be a domain with at least two segments separated by dots, spec.signerName: Invalid value: \"a_b\": validating label \"a_b\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]")
    );
    let no_signer = csr(json!({"request": CSR_B64, "usages": ["client auth"]}));
    assert_eq!(
        message(create(C, "certificatesigningrequests", "", no_signer)).await,
        format!("{p}spec.signerName: Required value")
    );
    // Conditions, on the approval subresource.
    let stored = csr(
        json!({"request": CSR_B64, "signerName": "example.com/signer", "usages": ["client auth"]}),
    );
    let mut both = stored.clone();
    both["status"] = json!({"conditions": [
        {"type": "Approved", "status": "True", "reason": "OK"},
        {"type": "Denied", "status": "False"},
        {"type": "Approved", "status": "True"},
        {"type": "", "status": "Maybe"}]});
    let mut req = update(C, "certificatesigningrequests", "", stored.clone(), both);
    req.subresource = "approval".into();
    assert_eq!(
        message(req).await,
        format!("{p}[status.conditions[1].status: Unsupported value: \"False\": supported values: \"True\", status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive, status.conditions[2].type: Invalid value: \"Approved\": Approved and Denied conditions are mutually exclusive, status.conditions[2].type: Duplicate value: \"Approved\", status.conditions[3].type: Required value, status.conditions[3].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"]")
    );
    let mut approved = stored.clone();
    approved["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    let mut req = update(C, "certificatesigningrequests", "", approved, stored);
    req.subresource = "approval".into();
    assert_eq!(
        message(req).await,
        format!("{p}status.conditions: Forbidden: updates may not remove a condition of type \"Approved\"")
    );
}

const FC: &str = "flowcontrol.apiserver.k8s.io";

#[tokio::test]
async fn flow_schema_mistakes() {
    let p = "FlowSchema.flowcontrol.apiserver.k8s.io \"probes\" is invalid: ";
    let fs = |spec: Value| {
        create(
            FC,
            "flowschemas",
            "",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "FlowSchema", "metadata": {"name": "probes"}, "spec": spec}),
        )
    };
    assert_eq!(
        message(fs(json!({"matchingPrecedence": 1}))).await,
        format!("{p}[spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1, spec.priorityLevelConfiguration.name: Required value: must reference a priority level]")
    );
    let bad = json!({"matchingPrecedence": 10001, "priorityLevelConfiguration": {"name": "Workload_High"},
        "rules": [
            {"subjects": []},
            {"subjects": [{"kind": "ServiceAccount", "user": {"name": "u"}},
                          {"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": ""}},
                          {"kind": "User", "user": {"name": ""}},
                          {"kind": "Group"},
                          {"kind": "Robot"}],
             "resourceRules": [{"verbs": ["get", "bogus"], "apiGroups": ["*", "apps"], "resources": [], "namespaces": ["Kube_System"]},
                               {"verbs": ["*", "get"], "apiGroups": [""], "resources": ["pods"]}],
             "nonResourceURLs": [],
             "nonResourceRules": [{"verbs": [], "nonResourceURLs": ["healthz", "/a//b", "/a*b", "/*", "*", "/x y"]},
                                  {"verbs": ["get"], "nonResourceURLs": ["*", "/x"]}]}]});
    assert_eq!(
        message(fs(bad)).await,
        format!("{p}[spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000, spec.priorityLevelConfiguration.name: Invalid value: \"Workload_High\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.rules[0].subjects: Required value: subjects must contain at least one value, spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty, spec.rules[1].subjects[0].serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount', spec.rules[1].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User', spec.rules[1].subjects[1].serviceAccount.namespace: Required value: must specify namespace for service account, spec.rules[1].subjects[2].user.name: Required value, spec.rules[1].subjects[3].group: Required value: group is required when subject kind is 'Group', spec.rules[1].subjects[4].kind: Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\", spec.rules[1].resourceRules[0].verbs: Unsupported value: [\"get\",\"bogus\"]: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\", spec.rules[1].resourceRules[0].apiGroups: Invalid value: [\"*\",\"apps\"]: if '*' is present, must not specify other api groups, spec.rules[1].resourceRules[0].resources: Required value: resource rules must supply at least one resource, spec.rules[1].resourceRules[0].namespaces[0]: Invalid value: \"Kube_System\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.rules[1].resourceRules[1].verbs: Invalid value: [\"*\",\"get\"]: if '*' is present, must not specify other verbs, spec.rules[1].resourceRules[1].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace, spec.rules[1].nonResourceRules[0].verbs: Required value: verbs must contain at least one value, spec.rules[1].nonResourceRules[0].nonResourceURLs: Invalid value: [\"healthz\",\"/a//b\",\"/a*b\",\"/*\",\"*\",\"/x y\"]: if '*' is present, must not specify other non-resource URLs, spec.rules[1].nonResourceRules[1].nonResourceURLs: Invalid value: [\"*\",\"/x\"]: if '*' is present, must not specify other non-resource URLs]")
    );
    let urls = json!({"priorityLevelConfiguration": {"name": "global-default"},
        "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["healthz", "/a//b", "/a*b", "/x y", ""]}]}]});
    assert_eq!(
        message(fs(urls)).await,
        format!("{p}[spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash, spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a//b\": must not contain double slash, spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: \"/a*b\": wildcard can only do suffix matching, spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: \"/x y\": must not contain white-space, spec.rules[0].nonResourceRules[0].nonResourceURLs[4]: Invalid value: \"\": must not be empty]")
    );
}

#[tokio::test]
async fn priority_level_configuration_mistakes() {
    let plc = |name: &str, spec: Value| {
        create(
            FC,
            "prioritylevelconfigurations",
            "",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": name}, "spec": spec}),
        )
    };
    let p = |n: &str| {
        format!("PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"{n}\" is invalid: ")
    };
    assert_eq!(
        message(plc("exempt", json!({"type": "Limited"}))).await,
        format!("{}[spec.type: Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt', spec.limited: Required value: must not be empty when type is Limited]", p("exempt"))
    );
    assert_eq!(
        message(plc("batch", json!({"type": "Exempt", "limited": {"limitResponse": {"type": "Reject"}}}))).await,
        format!("{}[spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt', spec.limited: Forbidden: must be nil if the type is not Limited]", p("batch"))
    );
    assert_eq!(
        message(plc("batch", json!({"type": "Sometimes"}))).await,
        format!("{}spec.type: Unsupported value: \"Sometimes\": supported values: \"Exempt\", \"Limited\"", p("batch"))
    );
    let bad = json!({"type": "Limited", "limited": {"lendablePercent": 101, "borrowingLimitPercent": -1,
        "limitResponse": {"type": "Queue", "queuing": {"queues": -1, "handSize": -2, "queueLengthLimit": -3}}}});
    assert_eq!(
        message(plc("batch", bad)).await,
        format!("{}[spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -3: must be positive, spec.limited.limitResponse.queuing.queues: Invalid value: -1: must be positive, spec.limited.limitResponse.queuing.handSize: Invalid value: -2: must be positive, spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive, spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer]", p("batch"))
    );
    let hand = json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5}}}});
    assert_eq!(
        message(plc("batch", hand)).await,
        format!("{}spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)", p("batch"))
    );
    let entropy = json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 10000000, "handSize": 10}}}});
    assert_eq!(
        message(plc("batch", entropy)).await,
        format!("{}spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy bits of deckSize 10000000 and handSize 10 should not be greater than 60", p("batch"))
    );
    let reject = json!({"type": "Limited", "limited": {"limitResponse": {"type": "Reject", "queuing": {"queues": 1, "handSize": 1}}}});
    assert_eq!(
        message(plc("batch", reject)).await,
        format!("{}spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited", p("batch"))
    );
    let none = json!({"type": "Limited", "limited": {"limitResponse": {"type": "Drop"}}});
    assert_eq!(
        message(plc("batch", none)).await,
        format!("{}spec.limited.limitResponse.type: Unsupported value: \"Drop\": supported values: \"Queue\", \"Reject\"", p("batch"))
    );
}

fn pv(spec: Value) -> AdmissionRequest {
    create(
        "",
        "persistentvolumes",
        "",
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv-1"}, "spec": spec}),
    )
}

#[tokio::test]
async fn persistent_volume_mistakes() {
    let p = "PersistentVolume \"pv-1\" is invalid: ";
    assert_eq!(
        message(pv(json!({}))).await,
        format!("{p}[spec.accessModes: Required value, spec.capacity: Required value, spec.capacity: Unsupported value: null: supported values: \"storage\", spec: Required value: must specify a volume type]")
    );
    let bad = json!({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "WriteSometimes"],
        "capacity": {"storage": "0Gi", "cpu": "1000m"}, "persistentVolumeReclaimPolicy": "Keep",
        "hostPath": {"path": "/data"}, "nfs": {"server": "nfs.example.com", "path": "/x"},
        "storageClassName": "Fast_SSD", "volumeMode": "Raw"});
    assert_eq!(
        message(pv(bad)).await,
        format!("{p}[spec.accessModes: Unsupported value: \"WriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\", spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes, spec.capacity: Unsupported value: {{\"cpu\":\"1\",\"storage\":\"0\"}}: supported values: \"storage\", spec.capacity[storage]: Invalid value: \"0\": must be greater than zero, spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\", spec.nfs: Forbidden: may not specify more than 1 volume type, spec.storageClassName: Invalid value: \"Fast_SSD\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"]")
    );
    let local = json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "-1Gi"}, "local": {"path": "/mnt/disk"}});
    assert_eq!(
        message(pv(local)).await,
        format!("{p}[spec.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity, spec.capacity[storage]: Invalid value: \"-1Gi\": must be greater than zero, spec.nodeAffinity: Required value: Local volume requires node affinity]")
    );
    let root = json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
        "persistentVolumeReclaimPolicy": "Recycle", "hostPath": {"path": "/"}});
    assert_eq!(
        message(pv(root)).await,
        format!("{p}spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'")
    );
    let old = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
        "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/data"}, "volumeMode": "Filesystem"}});
    let mut new = old.clone();
    new["spec"]["volumeMode"] = json!("Block");
    assert_eq!(
        message(update("", "persistentvolumes", "", old, new)).await,
        format!("{p}volumeMode: Invalid value: \"Block\": field is immutable")
    );
}

fn claim(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "d", "namespace": "default"}, "spec": spec})
}

const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

#[tokio::test]
async fn pvc_selector_and_data_sources() {
    let p = "PersistentVolumeClaim \"d\" is invalid: ";
    let msg = |spec: Value| message(create("", "persistentvolumeclaims", "default", claim(spec)));
    // kube's order: accessModes required, the selector, the access modes,
    // the size, then the data sources; the "must match" value is a Go
    // `*field.Path`, which kube 1.34 prints as JSON: `{}`.
    let bad = json!({"accessModes": ["ReadWriteOnce", "ReadWriteOncePod"],
        "selector": {"matchLabels": {"tier": "gold tier"}, "matchExpressions": [{"key": "zone", "operator": "In"}]},
        "resources": {"requests": {"storage": "0.5Gi"}},
        "dataSource": {"kind": "Snapshot", "name": "s"},
        "dataSourceRef": {"apiGroup": "Snapshots_Group", "kind": "VolumeSnapshot", "name": "s"}});
    assert_eq!(
        msg(bad).await,
        format!("{p}[spec.selector.matchLabels: Invalid value: \"gold tier\": {LABEL_VALUE}, spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes, spec.dataSource: Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing the default apiGroup, spec.dataSourceRef.apiGroup: Invalid value: \"Snapshots_Group\": {SUBDOMAIN}, spec: Invalid value: {{}}: must match dataSourceRef]")
    );
    // kube's strategy copies a lone source into the other field first.
    let lone = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
        "dataSource": {"kind": "PersistentVolumeClaim", "name": ""}});
    assert_eq!(
        msg(lone).await,
        format!(
            "{p}[spec.dataSource.name: Required value, spec.dataSourceRef.name: Required value]"
        )
    );
    // ... and drops a cross-namespace reference (its gate is off in 1.34).
    let ns = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "-1Gi"}},
        "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"},
        "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "src", "namespace": "Other"},
        "volumeAttributesClassName": "Gold"});
    assert_eq!(
        msg(ns).await,
        format!("{p}[spec.resources[storage]: Invalid value: \"-1Gi\": must be greater than zero, spec.volumeAttributesClassName: Invalid value: \"Gold\": {SUBDOMAIN}]")
    );
    // A stored reference keeps it, and its namespace is checked.
    let sourced = |ns: Option<&str>| {
        let mut r = json!({"kind": "PersistentVolumeClaim", "name": "src"});
        if let Some(ns) = ns {
            r["namespace"] = json!(ns);
        }
        claim(
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}, "dataSourceRef": r}),
        )
    };
    assert_eq!(
        message(update("", "persistentvolumeclaims", "default", sourced(None), sourced(Some("Other")))).await,
        format!("{p}[spec.dataSourceRef.namespace: Invalid value: \"Other\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec: Invalid value: {{}}: may not be specified when dataSourceRef.namespace is specified, spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims]")
    );
    // Matching sources, a snapshot by its group, and an empty class pass.
    let good = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
        "selector": {"matchLabels": {"tier": "gold"}},
        "dataSource": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"},
        "dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"},
        "volumeAttributesClassName": ""});
    // A dataSource of another kind without a reference is dropped.
    let dropped = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
        "dataSource": {"kind": "Backup", "name": "b"}});
    let adm = admission().await;
    for spec in [good, dropped] {
        if let Err(e) = adm
            .admit(create("", "persistentvolumeclaims", "default", claim(spec)))
            .await
        {
            panic!("refused: {}", e.message);
        }
    }
}

fn claim_with(spec: Value, status: Value, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "d", "namespace": "default", "annotations": annotations},
        "spec": spec, "status": status})
}

#[tokio::test]
async fn pvc_update_rules() {
    let p = "PersistentVolumeClaim \"d\" is invalid: ";
    const SPEC: &str = "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";
    let spec = |size: &str, extra: Value| {
        let mut s =
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}});
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        s
    };
    let pending = json!({"phase": "Pending"});
    let bound = json!({"phase": "Bound", "capacity": {"storage": "10Gi"}});
    let up = |old: Value, new: Value| update("", "persistentvolumeclaims", "default", old, new);
    let passes = |req: AdmissionRequest| async move {
        let adm = admission().await;
        if let Err(e) = adm.admit(req).await {
            panic!("refused: {}", e.message);
        }
    };
    // A class may be set where there was none; quantities compare by value.
    passes(up(
        claim_with(spec("1Gi", json!({})), pending.clone(), json!({})),
        claim_with(
            spec("1024Mi", json!({"storageClassName": "fast"})),
            pending.clone(),
            json!({}),
        ),
    ))
    .await;
    // The beta annotation may become the field, but not change.
    let ann = |c: &str| json!({"volume.beta.kubernetes.io/storage-class": c});
    passes(up(
        claim_with(spec("1Gi", json!({})), pending.clone(), ann("gold")),
        claim_with(
            spec("1Gi", json!({"storageClassName": "gold"})),
            pending.clone(),
            ann("gold"),
        ),
    ))
    .await;
    assert_eq!(
        message(up(
            claim_with(spec("1Gi", json!({})), pending.clone(), ann("gold")),
            claim_with(spec("1Gi", json!({"storageClassName": "silver"})), pending.clone(), ann("silver")),
        ))
        .await,
        format!("{p}[metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: \"silver\": field is immutable, {SPEC}]")
    );
    // Bound claims may shrink down to above their capacity
    // (RecoverVolumeExpansionFailure, GA in 1.34), not below it.
    let big = claim_with(spec("20Gi", json!({})), bound.clone(), json!({}));
    passes(up(
        big.clone(),
        claim_with(spec("15Gi", json!({})), bound.clone(), json!({})),
    ))
    .await;
    assert_eq!(
        message(up(big.clone(), claim_with(spec("10Gi", json!({})), bound.clone(), json!({})))).await,
        format!("{p}spec.resources.requests.storage: Forbidden: field can not be less than status.capacity")
    );
    // An unbound claim's size and class of volume attributes are fixed.
    assert_eq!(
        message(up(
            claim_with(
                spec("1Gi", json!({"volumeAttributesClassName": "a"})),
                pending.clone(),
                json!({})
            ),
            claim_with(
                spec("1Gi", json!({"volumeAttributesClassName": "b"})),
                pending.clone(),
                json!({})
            ),
        ))
        .await,
        format!("{p}{SPEC}")
    );
    // A bound claim's may change, but not be removed or emptied.
    let vac = |c: Value| {
        claim_with(
            spec("10Gi", json!({"volumeAttributesClassName": c})),
            bound.clone(),
            json!({}),
        )
    };
    passes(up(vac(json!("a")), vac(json!("b")))).await;
    assert_eq!(
        message(up(vac(json!("a")), vac(Value::Null))).await,
        format!("{p}[{SPEC}, spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden]")
    );
    assert_eq!(
        message(up(vac(json!("a")), vac(json!("")))).await,
        format!("{p}spec.volumeAttributesClassName: Forbidden: update from non-nil value to an empty string is forbidden")
    );
    // The volume mode is reported twice, as kube does.
    assert_eq!(
        message(up(
            claim_with(
                spec("1Gi", json!({"volumeMode": "Filesystem"})),
                pending.clone(),
                json!({})
            ),
            claim_with(
                spec("1Gi", json!({"volumeMode": "Block"})),
                pending.clone(),
                json!({})
            ),
        ))
        .await,
        format!("{p}[{SPEC}, volumeMode: Invalid value: \"Block\": field is immutable]")
    );
}

#[tokio::test]
async fn persistent_volume_affinity_and_attributes_class() {
    let p = "PersistentVolume \"pv-1\" is invalid: ";
    let base = |extra: Value| {
        let mut s = json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}});
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        s
    };
    let terms = json!({"required": {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "Near", "values": ["n 1"]}],
        "matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["a", "b"]}]}]}});
    assert_eq!(
        message(pv(base(json!({"local": {"path": "/mnt"}, "nodeAffinity": terms})))).await,
        format!("{p}[spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Near\": not a valid selector operator, spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"n 1\": {LABEL_VALUE}, spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector, spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0].key: Invalid value: \"metadata.uid\": not a valid field selector key]")
    );
    // Any affinity counts for a local volume; its `required` is required.
    assert_eq!(
        message(pv(base(
            json!({"local": {"path": "/mnt"}, "nodeAffinity": {}})
        )))
        .await,
        format!(
            "{p}spec.nodeAffinity.required: Required value: must specify required node constraints"
        )
    );
    assert_eq!(
        message(pv(base(json!({"hostPath": {"path": "/d"}, "nodeAffinity": {"required": {"nodeSelectorTerms": []}}})))).await,
        format!("{p}spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term")
    );
    // The common sources' own fields.
    assert_eq!(
        message(pv(base(json!({"hostPath": {"path": "/data/../etc", "type": "Pipe"}})))).await,
        format!("{p}[spec.hostPath.path: Invalid value: \"/data/../etc\": must not contain '..', spec.hostPath.type: Unsupported value: \"Pipe\": supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"]")
    );
    assert_eq!(
        message(pv(base(
            json!({"nfs": {"server": "nfs.example.com", "path": "exports/a"}})
        )))
        .await,
        format!("{p}spec.nfs.path: Invalid value: \"exports/a\": must be an absolute path")
    );
    assert_eq!(
        message(pv(base(json!({"gcePersistentDisk": {"pdName": "d", "partition": 256}})))).await,
        format!("{p}spec.persistentDisk.partition: Invalid value: 256: must be between 1 and 255, inclusive")
    );
    assert_eq!(
        message(pv(base(json!({"csi": {"driver": "CSI_Driver", "volumeHandle": "h",
            "nodePublishSecretRef": {"name": "s"}}})))).await,
        format!("{p}[spec.csi.driver: Invalid value: \"CSI_Driver\": {SUBDOMAIN}, spec.csi.nodePublishSecretRef.namespace: Required value]")
    );
    // `path.Clean` decides whether a hostPath is `/`.
    assert_eq!(
        message(pv(base(json!({"hostPath": {"path": "/tmp/.."}, "persistentVolumeReclaimPolicy": "Recycle"})))).await,
        format!("{p}[spec.hostPath.path: Invalid value: \"/tmp/..\": must not contain '..', spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/']")
    );
    assert_eq!(
        message(pv(base(json!({"hostPath": {"path": "/d"}, "volumeAttributesClassName": ""})))).await,
        format!("{p}[spec.volumeAttributesClassName: Required value: an empty string is disallowed, spec.csi: Required value: has to be specified when using volumeAttributesClassName]")
    );
}

#[tokio::test]
async fn persistent_volume_update_rules() {
    let p = "PersistentVolume \"pv-1\" is invalid: ";
    let vol = |spec: Value| {
        let mut s = json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}});
        for (k, v) in spec.as_object().unwrap() {
            s[k] = v.clone();
        }
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"}, "spec": s})
    };
    let up = |old: Value, new: Value| update("", "persistentvolumes", "", old, new);
    let passes = |req: AdmissionRequest| async move {
        let adm = admission().await;
        if let Err(e) = adm.admit(req).await {
            panic!("refused: {}", e.message);
        }
    };
    // The source is fixed (kube appends a diff to this sentence).
    assert_eq!(
        message(up(vol(json!({"hostPath": {"path": "/data"}})), vol(json!({"hostPath": {"path": "/other"}})))).await,
        format!("{p}spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation")
    );
    // ... but a CSI volume may get a controllerExpandSecretRef, and a
    // volume without node affinity may get one.
    let csi = json!({"driver": "csi.example.com", "volumeHandle": "h-1"});
    let mut with_ref = csi.clone();
    with_ref["controllerExpandSecretRef"] = json!({"name": "s", "namespace": "kube-system"});
    passes(up(vol(json!({"csi": csi})), vol(json!({"csi": with_ref})))).await;
    let zone = |key: &str, value: &str| json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}});
    let beta = "failure-domain.beta.kubernetes.io/zone";
    let ga = "topology.kubernetes.io/zone";
    let with_affinity = |a: Value| vol(json!({"csi": csi, "nodeAffinity": a}));
    passes(up(vol(json!({"csi": csi})), with_affinity(zone(beta, "a")))).await;
    // A beta label may become its GA name; nothing else may change.
    passes(up(
        with_affinity(zone(beta, "a")),
        with_affinity(zone(ga, "a")),
    ))
    .await;
    assert_eq!(
        message(up(with_affinity(zone(beta, "a")), with_affinity(zone(ga, "b")))).await,
        format!("{p}nodeAffinity: Invalid value: {{\"Required\":{{\"NodeSelectorTerms\":[{{\"MatchExpressions\":[{{\"Key\":\"topology.kubernetes.io/zone\",\"Operator\":\"In\",\"Values\":[\"b\"]}}],\"MatchFields\":null}}]}}}}: field is immutable, except for updating from beta label to GA")
    );
    assert_eq!(
        message(up(with_affinity(zone(ga, "a")), vol(json!({"csi": csi})))).await,
        format!("{p}nodeAffinity: Invalid value: null: field is immutable, except for updating from beta label to GA")
    );
    // The class of volume attributes may change but not be removed.
    let classed = |c: &str| vol(json!({"csi": csi, "volumeAttributesClassName": c}));
    passes(up(classed("gold"), classed("silver"))).await;
    assert_eq!(
        message(up(classed("gold"), vol(json!({"csi": csi})))).await,
        format!("{p}spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden")
    );
}

/// A self-signed certificate's PEM; a CA when `ca`.
fn cert_pem(ca: bool) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::new(vec!["example.com".into()]).unwrap();
    if ca {
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    }
    p.self_signed(&key).unwrap().pem()
}

#[tokio::test]
async fn cluster_trust_bundle_mistakes() {
    const C: &str = "certificates.k8s.io";
    let bundle = |name: &str, signer: &str, pem: &str| {
        let mut b = json!({"apiVersion": "certificates.k8s.io/v1beta1", "kind": "ClusterTrustBundle",
            "metadata": {"name": name}, "spec": {"trustBundle": pem}});
        if !signer.is_empty() {
            b["spec"]["signerName"] = json!(signer);
        }
        b
    };
    let ca = cert_pem(true);
    let p = |n: &str| format!("ClusterTrustBundle.certificates.k8s.io \"{n}\" is invalid: ");
    let msg = |b: Value| message(create(C, "clustertrustbundles", "", b));
    // The name follows the signer.
    assert_eq!(
        msg(bundle("example.com:signer:a", "", &ca)).await,
        format!("{}metadata.name: Invalid value: \"example.com:signer:a\": ClusterTrustBundle without signer name must not have \":\" in its name", p("example.com:signer:a"))
    );
    assert_eq!(
        msg(bundle("other", "example.com/signer", &ca)).await,
        format!("{}metadata.name: Invalid value: \"other\": ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:", p("other"))
    );
    // The blocks: a non-CA, a wrong type, then none at all, then twins.
    let two = format!(
        "{}{}",
        cert_pem(false),
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    );
    assert_eq!(
        msg(bundle("b", "", &two)).await,
        format!("{}[spec.trustBundle: Invalid value: \"<value omitted>\": entry 0 does not have the CA bit set, spec.trustBundle: Invalid value: \"<value omitted>\": entry 1 has bad block type: PRIVATE KEY]", p("b"))
    );
    assert_eq!(
        msg(bundle("b", "", "no pem here")).await,
        format!("{}spec.trustBundle: Invalid value: \"<value omitted>\": at least one trust anchor must be provided", p("b"))
    );
    assert_eq!(
        msg(bundle("b", "", &format!("{ca}{}{ca}", cert_pem(true)))).await,
        format!("{}spec.trustBundle: Invalid value: \"<value omitted>\": duplicate trust anchor (indices [0 2])", p("b"))
    );
    // A good one is admitted; its signer is immutable.
    let good = bundle("example.com:signer:a", "example.com/signer", &ca);
    let out = admission()
        .await
        .admit(create(C, "clustertrustbundles", "", good.clone()))
        .await;
    assert!(out.is_ok(), "{:?}", out.err());
    let mut moved = good.clone();
    moved["spec"]["signerName"] = json!("example.com/other");
    moved["metadata"]["name"] = json!("example.com:signer:a");
    let m = message(update(C, "clustertrustbundles", "", good, moved)).await;
    assert!(
        m.contains("spec.signerName: Invalid value: \"example.com/other\": field is immutable"),
        "{m}"
    );
}
