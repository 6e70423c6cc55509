//! kube-apiserver's default admission plugins (ServiceAccount, Priority,
//! DefaultTolerationSeconds, LimitRanger, the storage and ingress class
//! defaults, RuntimeClass, ...): what they add and kube's refusals.

use std::sync::Arc;

use keelson_admission::{LocalAdmission, PluginConfig};
use keelson_api::{
    AdmissionApi, AdmissionRequest, ApiError, CreateOptions, GroupResource, ObjectKey, Operation,
    StoreApi,
};
use serde_json::{json, Value};

use crate::support::{admission_over, create, MemStore};

async fn put(store: &MemStore, group: &str, resource: &str, ns: &str, obj: Value) {
    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
    store
        .create(
            &ObjectKey::new(GroupResource::new(group, resource), ns, &name),
            obj,
            CreateOptions::default(),
        )
        .await
        .unwrap();
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
}

fn one_container() -> Value {
    json!({"containers": [{"name": "c", "image": "nginx"}]})
}

async fn admit(adm: &LocalAdmission, req: AdmissionRequest) -> Result<Value, ApiError> {
    adm.admit(req).await.map(|r| r.object.unwrap())
}

async fn admit_pod(adm: &LocalAdmission, spec: Value) -> Result<Value, ApiError> {
    admit(adm, create("", "pods", "default", pod(spec))).await
}

fn refused(e: &ApiError) -> (u16, &str) {
    (e.code, e.message.as_str())
}

#[tokio::test]
async fn service_account_token_volume_and_mounts() {
    let adm = admission_over(Arc::new(MemStore::default())).await;
    let spec = json!({
        "initContainers": [{"name": "i", "image": "busybox"}],
        "containers": [{"name": "c", "image": "nginx"},
                       {"name": "own", "image": "nginx", "volumeMounts": [{"name": "x",
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
        "volumes": [{"name": "x", "emptyDir": {}}]
    });
    let o = admit_pod(&adm, spec).await.unwrap();
    let spec = &o["spec"];
    assert_eq!(spec["serviceAccountName"], "default");
    assert_eq!(spec["serviceAccount"], "default");
    let volume = &spec["volumes"][1];
    let name = volume["name"].as_str().unwrap();
    let suffix = name.strip_prefix("kube-api-access-").unwrap();
    assert_eq!(suffix.len(), 5);
    assert!(suffix
        .chars()
        .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    assert_eq!(
        volume["projected"],
        json!({"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ], "defaultMode": 420})
    );
    let mount = json!({"name": name, "readOnly": true,
        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"});
    assert_eq!(spec["initContainers"][0]["volumeMounts"], json!([mount]));
    assert_eq!(spec["containers"][0]["volumeMounts"], json!([mount]));
    // A container that mounts something at the path keeps its own.
    assert_eq!(
        spec["containers"][1]["volumeMounts"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn service_account_automount_pull_secrets_and_refusals() {
    let store = Arc::new(MemStore::default());
    put(
        &store,
        "",
        "serviceaccounts",
        "default",
        json!({"apiVersion": "v1",
        "kind": "ServiceAccount", "metadata": {"name": "quiet", "namespace": "default"},
        "automountServiceAccountToken": false, "imagePullSecrets": [{"name": "regcred"}]}),
    )
    .await;
    let adm = admission_over(store).await;

    // The account opts out; the pod's own choice wins over it.
    let o = admit_pod(
        &adm,
        json!({"serviceAccountName": "quiet",
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap();
    assert!(o["spec"].get("volumes").is_none());
    assert_eq!(o["spec"]["imagePullSecrets"], json!([{"name": "regcred"}]));
    let o = admit_pod(
        &adm,
        json!({"serviceAccountName": "quiet",
        "automountServiceAccountToken": true, "imagePullSecrets": [{"name": "mine"}],
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap();
    assert_eq!(o["spec"]["volumes"].as_array().unwrap().len(), 1);
    assert_eq!(o["spec"]["imagePullSecrets"], json!([{"name": "mine"}]));
    let o = admit_pod(
        &adm,
        json!({"automountServiceAccountToken": false,
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap();
    assert!(o["spec"].get("volumes").is_none());
    assert!(o["spec"]["containers"][0].get("volumeMounts").is_none());

    let e = admit_pod(
        &adm,
        json!({"serviceAccountName": "ghost",
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(refused(&e), (403, "pods \"p\" is forbidden: error looking up service account default/ghost: serviceaccount \"ghost\" not found"));

    let mirror = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "m",
        "annotations": {"kubernetes.io/config.mirror": "x"}},
        "spec": {"serviceAccountName": "default", "containers": [{"name": "c", "image": "nginx"}]}});
    let e = admit(&adm, create("", "pods", "default", mirror))
        .await
        .unwrap_err();
    assert_eq!(
        refused(&e),
        (
            403,
            "pods \"m\" is forbidden: a mirror pod may not reference service accounts"
        )
    );
}

#[tokio::test]
async fn priority_classes_resolve_and_unknown_ones_are_refused() {
    let store = Arc::new(MemStore::default());
    put(
        &store,
        "scheduling.k8s.io",
        "priorityclasses",
        "",
        json!({
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"}),
    )
    .await;
    let adm = admission_over(store.clone()).await;

    let o = admit_pod(&adm, one_container()).await.unwrap();
    assert_eq!(o["spec"]["priority"], 0);
    assert_eq!(o["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert!(o["spec"].get("priorityClassName").is_none());

    let o = admit_pod(
        &adm,
        json!({"priorityClassName": "high",
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        (&o["spec"]["priority"], &o["spec"]["preemptionPolicy"]),
        (&json!(1000), &json!("Never"))
    );

    let o = admit_pod(
        &adm,
        json!({"priorityClassName": "system-cluster-critical",
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap();
    assert_eq!(o["spec"]["priority"], 2_000_000_000);

    let e = admit_pod(
        &adm,
        json!({"priorityClassName": "nope",
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused(&e),
        (
            403,
            "pods \"p\" is forbidden: no PriorityClass with name nope was found"
        )
    );

    let e = admit_pod(
        &adm,
        json!({"priorityClassName": "high", "priority": 5,
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(refused(&e), (403, "pods \"p\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"));

    // A global default names itself on pods without a class; a second
    // default is refused.
    put(
        &store,
        "scheduling.k8s.io",
        "priorityclasses",
        "",
        json!({
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "fallback"}, "value": 7, "globalDefault": true}),
    )
    .await;
    let o = admit_pod(&adm, one_container()).await.unwrap();
    assert_eq!(
        (&o["spec"]["priorityClassName"], &o["spec"]["priority"]),
        (&json!("fallback"), &json!(7))
    );
    let second = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "other"}, "value": 8, "globalDefault": true});
    let e = admit(
        &adm,
        create("scheduling.k8s.io", "priorityclasses", "", second),
    )
    .await
    .unwrap_err();
    assert_eq!(refused(&e), (403, "priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass fallback is already marked as default. Only one default can exist"));
}

#[tokio::test]
async fn default_toleration_seconds() {
    let adm = admission_over(Arc::new(MemStore::default())).await;
    let o = admit_pod(
        &adm,
        json!({"containers": [{"name": "c", "image": "nginx"}],
        "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
            "effect": "NoExecute", "tolerationSeconds": 10}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        o["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ])
    );
}

fn limit_range(limits: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "LimitRange",
        "metadata": {"name": "lr", "namespace": "default"}, "spec": {"limits": limits}})
}

#[tokio::test]
async fn limit_ranger_defaults_and_refusals() {
    let store = Arc::new(MemStore::default());
    put(
        &store,
        "",
        "limitranges",
        "default",
        limit_range(json!([
            {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
             "defaultRequest": {"cpu": "250m", "memory": "128Mi"},
             "max": {"cpu": "1"}, "min": {"cpu": "100m"}, "maxLimitRequestRatio": {"cpu": "4"}},
            {"type": "PersistentVolumeClaim", "max": {"storage": "2Gi"}}
        ])),
    )
    .await;
    let adm = admission_over(store).await;

    let o = admit_pod(
        &adm,
        json!({"containers": [{"name": "c", "image": "nginx",
        "resources": {"limits": {"cpu": "800m"}}}]}),
    )
    .await
    .unwrap();
    let r = &o["spec"]["containers"][0]["resources"];
    assert_eq!(r["limits"], json!({"cpu": "800m", "memory": "256Mi"}));
    // kube's pod defaulting had set the request to the limit already.
    assert_eq!(r["requests"], json!({"cpu": "800m", "memory": "128Mi"}));
    assert_eq!(
        o["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: memory request for container c; memory limit for container c"
    );

    let e = admit_pod(
        &adm,
        json!({"containers": [{"name": "c", "image": "nginx",
        "resources": {"limits": {"cpu": "2"}}}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused(&e),
        (
            403,
            "pods \"p\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
        )
    );

    let e = admit_pod(
        &adm,
        json!({"containers": [{"name": "c", "image": "nginx",
        "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(refused(&e), (403, "pods \"p\" is forbidden: cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000"));

    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "big"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "5Gi"}}}});
    let e = admit(&adm, create("", "persistentvolumeclaims", "default", pvc))
        .await
        .unwrap_err();
    assert_eq!(refused(&e), (403, "persistentvolumeclaims \"big\" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi"));
}

fn storage_class(name: &str, created: &str, default: bool) -> Value {
    let mut sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name, "creationTimestamp": created}, "provisioner": "x"});
    if default {
        sc["metadata"]["annotations"] =
            json!({"storageclass.kubernetes.io/is-default-class": "true"});
    }
    sc
}

#[tokio::test]
async fn claims_get_the_newest_default_class_and_protection() {
    let store = Arc::new(MemStore::default());
    for (name, at, default) in [
        ("old", "2024-01-01T00:00:00Z", true),
        ("new", "2025-01-01T00:00:00Z", true),
        ("newest", "2026-01-01T00:00:00Z", false),
    ] {
        put(
            &store,
            "storage.k8s.io",
            "storageclasses",
            "",
            storage_class(name, at, default),
        )
        .await;
    }
    let adm = admission_over(store).await;
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}}});
    let o = admit(
        &adm,
        create("", "persistentvolumeclaims", "default", pvc.clone()),
    )
    .await
    .unwrap();
    assert_eq!(o["spec"]["storageClassName"], "new");
    assert_eq!(
        o["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let mut explicit = pvc;
    explicit["spec"]["storageClassName"] = json!("");
    let o = admit(
        &adm,
        create("", "persistentvolumeclaims", "default", explicit),
    )
    .await
    .unwrap();
    assert_eq!(o["spec"]["storageClassName"], "");

    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "v"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/tmp/v"}}});
    let o = admit(&adm, create("", "persistentvolumes", "", pv))
        .await
        .unwrap();
    assert_eq!(
        o["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );
}

#[tokio::test]
async fn growing_a_claim_needs_an_expandable_class() {
    let store = Arc::new(MemStore::default());
    put(
        &store,
        "storage.k8s.io",
        "storageclasses",
        "",
        storage_class("fixed", "2024-01-01T00:00:00Z", false),
    )
    .await;
    let adm = admission_over(store).await;
    let claim = |size: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": "default", "uid": "u1", "resourceVersion": "1",
            "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fixed",
            "volumeName": "v", "volumeMode": "Filesystem",
            "resources": {"requests": {"storage": size}}},
        "status": {"phase": "Bound"}})
    };
    let mut req = create("", "persistentvolumeclaims", "default", claim("2Gi"));
    req.operation = Operation::Update;
    req.old_object = Some(claim("1Gi"));
    let e = admit(&adm, req).await.unwrap_err();
    assert_eq!(refused(&e), (403, "persistentvolumeclaims \"c\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"));
}

#[tokio::test]
async fn nodes_ingresses_and_runtime_classes() {
    let store = Arc::new(MemStore::default());
    put(&store, "networking.k8s.io", "ingressclasses", "", json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "k8s.io/ingress-nginx"}})).await;
    put(
        &store,
        "node.k8s.io",
        "runtimeclasses",
        "",
        json!({
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
        "handler": "kata", "overhead": {"podFixed": {"cpu": "250m"}},
        "scheduling": {"nodeSelector": {"runtime": "kata"}}}),
    )
    .await;
    let adm = admission_over(store).await;

    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}});
    let o = admit(&adm, create("", "nodes", "", node)).await.unwrap();
    assert_eq!(
        o["spec"]["taints"],
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );

    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "i"}, "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}});
    let o = admit(
        &adm,
        create("networking.k8s.io", "ingresses", "default", ing),
    )
    .await
    .unwrap();
    assert_eq!(o["spec"]["ingressClassName"], "nginx");

    let o = admit_pod(
        &adm,
        json!({"runtimeClassName": "kata",
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap();
    assert_eq!(o["spec"]["overhead"], json!({"cpu": "250m"}));
    assert_eq!(o["spec"]["nodeSelector"], json!({"runtime": "kata"}));
    let e = admit_pod(
        &adm,
        json!({"runtimeClassName": "kata", "nodeSelector": {"runtime": "runc"},
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(refused(&e), (403, "pods \"p\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc"));
    let e = admit_pod(
        &adm,
        json!({"runtimeClassName": "gvisor",
        "containers": [{"name": "c", "image": "nginx"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused(&e),
        (
            403,
            "pods \"p\" is forbidden: pod rejected: RuntimeClass \"gvisor\" not found"
        )
    );
}

#[tokio::test]
async fn disabled_plugins_do_nothing() {
    let store = Arc::new(MemStore::default());
    admission_over(store.clone()).await;
    let none: Vec<String> = ["ServiceAccount", "Priority", "DefaultTolerationSeconds"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let config = PluginConfig::from_flags(&[], &none).unwrap();
    assert!(!config.enabled("ServiceAccount") && config.enabled("LimitRanger"));
    let adm = LocalAdmission::with_plugins(store, keelson_registry::Catalog::builtin(), config);
    let o = admit(
        &adm,
        create(
            "",
            "pods",
            "default",
            pod(json!({"serviceAccountName": "ghost",
        "containers": [{"name": "c", "image": "nginx"}]})),
        ),
    )
    .await
    .unwrap();
    assert_eq!(o["spec"]["serviceAccount"], "ghost");
    assert!(o["spec"].get("volumes").is_none());
    assert!(o["spec"].get("priority").is_none());
    assert!(o["spec"].get("tolerations").is_none());
}

#[test]
fn plugin_flags_refuse_what_kube_refuses() {
    let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        PluginConfig::from_flags(&s(&["Nope"]), &[]).unwrap_err(),
        "enable-admission-plugins plugin \"Nope\" is unknown"
    );
    assert_eq!(
        PluginConfig::from_flags(&s(&["Priority"]), &s(&["Priority", "Bad"])).unwrap_err(),
        "[disable-admission-plugins plugin \"Bad\" is unknown, [Priority] in enable-admission-plugins and disable-admission-plugins overlapped]"
    );
    let on = PluginConfig::default().enabled_plugins();
    assert_eq!(
        &on[..4],
        [
            "NamespaceLifecycle",
            "LimitRanger",
            "ServiceAccount",
            "TaintNodesByCondition"
        ]
    );
}

#[tokio::test]
async fn toleration_seconds_flags_and_updates_keep_priority() {
    let store = Arc::new(MemStore::default());
    admission_over(store.clone()).await;
    let mut config = PluginConfig::default();
    config.not_ready_toleration_seconds = 60;
    config.unreachable_toleration_seconds = 90;
    let adm = LocalAdmission::with_plugins(store, keelson_registry::Catalog::builtin(), config);
    let o = admit_pod(&adm, one_container()).await.unwrap();
    let seconds: Vec<&Value> = o["spec"]["tolerations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["tolerationSeconds"])
        .collect();
    assert_eq!(seconds, [&json!(60), &json!(90)]);

    // An update that leaves out what admission set on create gets it back
    // (Priority keeps the stored priority, DefaultTolerationSeconds adds
    // its tolerations again), so the pod's immutable spec still validates.
    let mut stored = o.clone();
    stored["metadata"]["uid"] = json!("u1");
    stored["metadata"]["resourceVersion"] = json!("1");
    stored["metadata"]["creationTimestamp"] = json!("2024-01-01T00:00:00Z");
    let mut new = stored.clone();
    for k in ["priority", "preemptionPolicy", "tolerations"] {
        new["spec"].as_object_mut().unwrap().remove(k);
    }
    new["metadata"]["labels"] = json!({"a": "b"});
    let mut req = create("", "pods", "default", new);
    req.operation = Operation::Update;
    req.old_object = Some(stored.clone());
    let updated = admit(&adm, req).await.unwrap();
    assert_eq!(updated["spec"]["priority"], 0);
    assert_eq!(updated["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(
        updated["spec"]["tolerations"],
        stored["spec"]["tolerations"]
    );
}

/// A CertificateSigningRequest named `name` for `signer` asking for a
/// client certificate with subject `O=<group>`.
fn csr(name: &str, signer: &str, group: &str) -> Value {
    use base64::Engine as _;
    let key = rcgen::KeyPair::generate().unwrap();
    let mut p = rcgen::CertificateParams::default();
    p.distinguished_name.push(rcgen::DnType::CommonName, "jane");
    p.distinguished_name
        .push(rcgen::DnType::OrganizationName, group);
    let pem = p.serialize_request(&key).unwrap().pem().unwrap();
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": base64::engine::general_purpose::STANDARD.encode(pem),
            "signerName": signer, "usages": ["client auth"]}})
}

#[tokio::test]
async fn certificate_subject_restriction_refuses_system_masters() {
    let store = Arc::new(MemStore::default());
    let adm = admission_over(store.clone()).await;
    let client = "kubernetes.io/kube-apiserver-client";
    let req = |name, signer, group| {
        create(
            "certificates.k8s.io",
            "certificatesigningrequests",
            "",
            csr(name, signer, group),
        )
    };
    let e = admit(&adm, req("csr", client, "system:masters"))
        .await
        .unwrap_err();
    assert_eq!(
        refused(&e),
        (
            403,
            "certificatesigningrequests.certificates.k8s.io \"csr\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
        )
    );
    // Other groups, and other signers with system:masters, are admitted.
    admit(&adm, req("ok", client, "system:notmasters"))
        .await
        .unwrap();
    admit(&adm, req("kubelet", "example.com/signer", "system:masters"))
        .await
        .unwrap();
    // Disabled, the plugin lets it through.
    let off = vec!["CertificateSubjectRestriction".to_string()];
    let config = PluginConfig::from_flags(&[], &off).unwrap();
    let adm = LocalAdmission::with_plugins(store, keelson_registry::Catalog::builtin(), config);
    admit(&adm, req("csr", client, "system:masters"))
        .await
        .unwrap();
}

/// A ClusterRole granting `verb` on the signers `names`, bound to `user`.
async fn grant_signers(store: &MemStore, user: &str, verb: &str, names: &[&str]) {
    let rbac = "rbac.authorization.k8s.io";
    let role = format!("{user}-{verb}");
    put(
        store,
        rbac,
        "clusterroles",
        "",
        json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": role},
        "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
            "verbs": [verb], "resourceNames": names}]}),
    )
    .await;
    put(
        store,
        rbac,
        "clusterrolebindings",
        "",
        json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": role},
        "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": rbac, "kind": "User", "name": user}]}),
    )
    .await;
}

/// An update of CSR `old` through `subresource` to `new`, by `user`.
fn csr_update(subresource: &str, old: &Value, new: Value, user: &str) -> AdmissionRequest {
    let mut req = create("certificates.k8s.io", "certificatesigningrequests", "", new);
    req.operation = Operation::Update;
    req.subresource = subresource.into();
    req.name = old["metadata"]["name"].as_str().unwrap().into();
    req.old_object = Some(old.clone());
    req.user = Some(keelson_api::UserInfo {
        username: user.into(),
        groups: vec!["system:authenticated".into()],
        ..Default::default()
    });
    req
}

fn condition(type_: &str) -> Value {
    json!({"type": type_, "status": "True", "reason": "Test", "message": "by the test",
        "lastUpdateTime": "2026-12-03T10:00:00Z", "lastTransitionTime": "2026-12-03T10:00:00Z"})
}

#[tokio::test]
async fn certificate_approval_and_signing_need_the_signer_verbs() {
    let store = Arc::new(MemStore::watchable());
    grant_signers(&store, "approver", "approve", &["example.com/*"]).await;
    grant_signers(&store, "exact", "approve", &["example.com/signer"]).await;
    grant_signers(&store, "signer", "sign", &["example.com/signer"]).await;
    let adm = admission_over(store.clone()).await;
    let pending = csr("csr", "example.com/signer", "dev");
    let mut approved = pending.clone();
    approved["status"] = json!({"conditions": [condition("Approved")]});

    // Approving needs `approve` on the signer or its domain's wildcard.
    let approve = |user: &str| csr_update("approval", &pending, approved.clone(), user);
    admit(&adm, approve("approver")).await.unwrap();
    admit(&adm, approve("exact")).await.unwrap();
    for user in ["nobody", "signer"] {
        let e = admit(&adm, approve(user)).await.unwrap_err();
        assert_eq!(
            refused(&e),
            (
                403,
                "certificatesigningrequests.certificates.k8s.io \"csr\" is forbidden: user not permitted to approve requests with signerName \"example.com/signer\""
            ),
            "{user}"
        );
    }
    // The stored signer is checked, not the one the update names.
    let mut other = csr("csr", "other.io/signer", "dev");
    other["status"] = approved["status"].clone();
    let e = admit(
        &adm,
        csr_update("approval", &other, approved.clone(), "exact"),
    )
    .await
    .unwrap_err();
    assert!(
        e.message.ends_with("signerName \"other.io/signer\""),
        "{}",
        e.message
    );

    // A /status update that changes the conditions needs `sign`.
    let mut failed = approved.clone();
    failed["status"]["conditions"] = json!([condition("Approved"), condition("Failed")]);
    admit(
        &adm,
        csr_update("status", &approved, failed.clone(), "signer"),
    )
    .await
    .unwrap();
    let e = admit(&adm, csr_update("status", &approved, failed, "approver"))
        .await
        .unwrap_err();
    assert_eq!(
        refused(&e),
        (
            403,
            "certificatesigningrequests.certificates.k8s.io \"csr\" is forbidden: user not permitted to sign requests with signerName \"example.com/signer\""
        )
    );
    // One that leaves the certificate and conditions alone does not.
    let mut labelled = approved.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    admit(&adm, csr_update("status", &approved, labelled, "nobody"))
        .await
        .unwrap();

    // Disabled, the plugins let both through.
    let off = vec![
        "CertificateApproval".to_string(),
        "CertificateSigning".to_string(),
    ];
    let config = PluginConfig::from_flags(&[], &off).unwrap();
    let adm = LocalAdmission::with_plugins(store, keelson_registry::Catalog::builtin(), config);
    admit(&adm, approve("nobody")).await.unwrap();
}

/// ClusterTrustBundleAttest does nothing while kube's ClusterTrustBundle
/// gate is off (its default; the e2e suite `auth` runs it with the gate).
#[tokio::test]
async fn cluster_trust_bundle_attest_is_off_with_its_gate() {
    let adm = admission_over(Arc::new(MemStore::watchable())).await;
    let bundle = json!({"apiVersion": "certificates.k8s.io/v1beta1", "kind": "ClusterTrustBundle",
        "metadata": {"name": "example.com:signer:a"},
        "spec": {"signerName": "example.com/signer", "trustBundle": "x"}});
    let mut req = create("certificates.k8s.io", "clustertrustbundles", "", bundle);
    req.user = Some(keelson_api::UserInfo {
        username: "nobody".into(),
        ..Default::default()
    });
    let out = adm.admit(req).await;
    assert!(
        out.as_ref().err().is_none_or(|e| e.code != 403),
        "{:?}",
        out.err()
    );
}
