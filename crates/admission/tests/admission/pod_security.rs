//! PodSecurity: the `pod-security.kubernetes.io/*` namespace labels,
//! enforce refusals and warn warnings with kube's exact words, versions,
//! workloads, namespace label checks and exemptions.

use std::sync::Arc;

use keelson_admission::{LocalAdmission, PluginConfig, PodSecurityConfig};
use keelson_api::{
    AdmissionApi, AdmissionRequest, AdmissionResponse, ApiError, CreateOptions, GroupResource,
    ObjectKey, Operation, StoreApi, UpdateOptions,
};
use serde_json::{json, Value};

use crate::support::{admission_over, create, MemStore};

fn ns_key(name: &str) -> ObjectKey {
    ObjectKey::new(GroupResource::new("", "namespaces"), "", name)
}

fn namespace(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labels}, "status": {"phase": "Active"}})
}

/// A namespace with `labels` and its `default` ServiceAccount, straight
/// in the store.
async fn labeled(store: &MemStore, name: &str, labels: Value) {
    store
        .create(
            &ns_key(name),
            namespace(name, labels),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    store
        .create(
            &ObjectKey::new(GroupResource::new("", "serviceaccounts"), name, "default"),
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": "default", "namespace": name}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
}

fn pod(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

fn plain() -> Value {
    json!({"containers": [{"name": "c", "image": "nginx"}]})
}

fn privileged() -> Value {
    json!({"containers": [{"name": "c", "image": "nginx",
        "securityContext": {"privileged": true}}]})
}

/// A pod restricted admits.
fn hardened() -> Value {
    json!({
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "image": "nginx", "securityContext": {
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]
    })
}

async fn admit(adm: &LocalAdmission, req: AdmissionRequest) -> Result<AdmissionResponse, ApiError> {
    adm.admit(req).await
}

async fn admit_pod(
    adm: &LocalAdmission,
    ns: &str,
    name: &str,
    spec: Value,
) -> Result<AdmissionResponse, ApiError> {
    admit(adm, create("", "pods", ns, pod(name, spec))).await
}

async fn setup() -> (Arc<MemStore>, LocalAdmission) {
    let store = Arc::new(MemStore::default());
    let adm = admission_over(store.clone()).await;
    (store, adm)
}

const RESTRICTED_PLAIN: &str = concat!(
    r#"allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), "#,
    r#"unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), "#,
    r#"runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), "#,
    r#"seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#
);

#[tokio::test]
async fn a_privileged_pod_in_a_baseline_namespace_is_refused() {
    let (store, adm) = setup().await;
    labeled(
        &store,
        "base",
        json!({"pod-security.kubernetes.io/enforce": "baseline"}),
    )
    .await;
    let e = admit_pod(&adm, "base", "p", privileged())
        .await
        .unwrap_err();
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        r#"pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)"#
    );
    // Baseline admits a plain pod, with no warning (warn follows enforce).
    let ok = admit_pod(&adm, "base", "q", plain()).await.unwrap();
    assert!(ok.warnings.is_empty(), "{:?}", ok.warnings);
    // Several baseline violations, in kube's check order.
    let spec = json!({"hostNetwork": true, "hostPID": true,
        "initContainers": [{"name": "init", "image": "busybox",
            "securityContext": {"privileged": true, "capabilities": {"add": ["SYS_ADMIN", "NET_RAW", "CHOWN"]}}}],
        "containers": [{"name": "b", "image": "nginx", "ports": [{"containerPort": 8080, "hostPort": 8080}, {"containerPort": 443, "hostPort": 443}],
            "securityContext": {"privileged": true}}],
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}]});
    let e = admit_pod(&adm, "base", "many", spec).await.unwrap_err();
    assert_eq!(
        e.message,
        concat!(
            r#"pods "many" is forbidden: violates PodSecurity "baseline:latest": "#,
            r#"non-default capabilities (container "init" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add), "#,
            r#"host namespaces (hostNetwork=true, hostPID=true), "#,
            r#"hostPath volumes (volume "root"), "#,
            r#"hostPort (container "b" uses hostPorts 443, 8080), "#,
            r#"privileged (containers "init", "b" must not set securityContext.privileged=true)"#
        )
    );
}

#[tokio::test]
async fn a_plain_pod_in_a_restricted_namespace_gets_the_four_violations() {
    let (store, adm) = setup().await;
    labeled(
        &store,
        "strict",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    let e = admit_pod(&adm, "strict", "p", plain()).await.unwrap_err();
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        format!(
            r#"pods "p" is forbidden: violates PodSecurity "restricted:latest": {RESTRICTED_PLAIN}"#
        )
    );
    // Nothing is refused once the pod is hardened.
    let ok = admit_pod(&adm, "strict", "h", hardened()).await.unwrap();
    assert!(ok.warnings.is_empty());
    // Restricted's own refusals of what baseline allows.
    let mut spec = hardened();
    spec["securityContext"]["runAsUser"] = json!(0);
    spec["containers"][0]["securityContext"]["capabilities"]["add"] =
        json!(["NET_BIND_SERVICE", "CHOWN"]);
    spec["volumes"] =
        json!([{"name": "n", "nfs": {"server": "s", "path": "/"}}, {"name": "e", "emptyDir": {}}]);
    let e = admit_pod(&adm, "strict", "r", spec).await.unwrap_err();
    assert_eq!(
        e.message,
        concat!(
            r#"pods "r" is forbidden: violates PodSecurity "restricted:latest": "#,
            r#"unrestricted capabilities (container "c" must not include "CHOWN" in securityContext.capabilities.add), "#,
            r#"restricted volume types (volume "n" uses restricted volume type "nfs"), "#,
            r#"runAsUser=0 (pod must not set runAsUser=0)"#
        )
    );
}

#[tokio::test]
async fn warn_mode_warns_on_pods_and_workloads() {
    let (store, adm) = setup().await;
    labeled(
        &store,
        "w",
        json!({"pod-security.kubernetes.io/warn": "restricted"}),
    )
    .await;
    let ok = admit_pod(&adm, "w", "p", plain()).await.unwrap();
    assert_eq!(
        ok.warnings,
        vec![format!(
            r#"would violate PodSecurity "restricted:latest": {RESTRICTED_PLAIN}"#
        )]
    );
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": plain()}}});
    let ok = admit(&adm, create("apps", "deployments", "w", deployment.clone()))
        .await
        .unwrap();
    assert_eq!(
        ok.warnings,
        vec![format!(
            r#"would violate PodSecurity "restricted:latest": {RESTRICTED_PLAIN}"#
        )]
    );
    // A workload is never refused, even where pods are enforced: it warns.
    labeled(
        &store,
        "e",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    let ok = admit(&adm, create("apps", "deployments", "e", deployment))
        .await
        .unwrap();
    assert_eq!(ok.warnings.len(), 1);
    let job = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "j", "image": "busybox",
                "securityContext": {"privileged": true}}]}}}}}});
    let ok = admit(&adm, create("batch", "cronjobs", "w", job))
        .await
        .unwrap();
    assert!(
        ok.warnings[0].starts_with(
            r#"would violate PodSecurity "restricted:latest": privileged (container "j" must not set securityContext.privileged=true), allowPrivilegeEscalation != false"#
        ),
        "{:?}",
        ok.warnings
    );
}

#[tokio::test]
async fn audit_only_namespaces_change_no_answer() {
    let (store, adm) = setup().await;
    labeled(
        &store,
        "a",
        json!({"pod-security.kubernetes.io/audit": "restricted"}),
    )
    .await;
    let ok = admit_pod(&adm, "a", "p", privileged()).await.unwrap();
    assert!(ok.warnings.is_empty());
    assert!(ok.object.is_some());
}

#[tokio::test]
async fn versions_pin_the_checks() {
    let (store, adm) = setup().await;
    let mut root = hardened();
    root["securityContext"]["runAsUser"] = json!(0);
    // runAsUser joined restricted in v1.23.
    labeled(
        &store,
        "v122",
        json!({"pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.22"}),
    )
    .await;
    admit_pod(&adm, "v122", "p", root.clone()).await.unwrap();
    labeled(
        &store,
        "v123",
        json!({"pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.23"}),
    )
    .await;
    let e = admit_pod(&adm, "v123", "p", root).await.unwrap_err();
    assert_eq!(
        e.message,
        r#"pods "p" is forbidden: violates PodSecurity "restricted:v1.23": runAsUser=0 (pod must not set runAsUser=0)"#
    );
    // Before v1.22 restricted checks capabilities as baseline does.
    labeled(
        &store,
        "v121",
        json!({"pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.21"}),
    )
    .await;
    let e = admit_pod(&adm, "v121", "p", plain()).await.unwrap_err();
    assert!(
        !e.message.contains("unrestricted capabilities"),
        "{}",
        e.message
    );
    assert!(e.message.starts_with(r#"pods "p" is forbidden: violates PodSecurity "restricted:v1.21": allowPrivilegeEscalation != false"#));
    // Probe hosts are refused from v1.34; a future version is the newest
    // checks, named as labeled.
    let probe = json!({"containers": [{"name": "c", "image": "nginx",
        "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}}]});
    labeled(
        &store,
        "v133",
        json!({"pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": "v1.33"}),
    )
    .await;
    admit_pod(&adm, "v133", "p", probe.clone()).await.unwrap();
    labeled(
        &store,
        "v199",
        json!({"pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": "v1.99"}),
    )
    .await;
    let e = admit_pod(&adm, "v199", "p", probe).await.unwrap_err();
    assert_eq!(
        e.message,
        r#"pods "p" is forbidden: violates PodSecurity "baseline:v1.99": probe or lifecycle host (container "c" uses probe or lifecycle host "10.0.0.1")"#
    );
}

#[tokio::test]
async fn privileged_namespaces_and_unlabeled_ones_admit_everything() {
    let (store, adm) = setup().await;
    labeled(
        &store,
        "priv",
        json!({"pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "privileged"}),
    )
    .await;
    for ns in ["priv", "default"] {
        let spec = json!({"hostNetwork": true, "containers": [{"name": "c", "image": "nginx",
            "securityContext": {"privileged": true, "runAsUser": 0}}]});
        let ok = admit_pod(&adm, ns, "p", spec).await.unwrap();
        assert!(ok.warnings.is_empty(), "{ns}: {:?}", ok.warnings);
    }
}

#[tokio::test]
async fn namespace_labels_are_checked() {
    let (store, adm) = setup().await;
    let bad = namespace(
        "bad",
        json!({"pod-security.kubernetes.io/enforce": "strict",
        "pod-security.kubernetes.io/warn-version": "1.25"}),
    );
    let e = admit(&adm, create("", "namespaces", "", bad))
        .await
        .unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        concat!(
            r#"Namespace "bad" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, "#,
            r#"metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.25": must be "latest" or "v1.x"]"#
        )
    );
    // A namespace that holds such labels anyway evaluates as restricted.
    labeled(
        &store,
        "odd",
        json!({"pod-security.kubernetes.io/enforce": "strict"}),
    )
    .await;
    let e = admit_pod(&adm, "odd", "p", plain()).await.unwrap_err();
    assert_eq!(
        e.message,
        format!(
            r#"pods "p" is forbidden: violates PodSecurity "restricted:latest": {RESTRICTED_PLAIN}"#
        )
    );
}

fn update(resource: &str, ns: &str, new: Value, old: Value) -> AdmissionRequest {
    let mut req = create("", resource, ns, new);
    req.operation = Operation::Update;
    req.old_object = Some(old);
    req
}

#[tokio::test]
async fn raising_the_enforce_level_warns_about_existing_pods() {
    let (store, adm) = setup().await;
    labeled(&store, "x", json!({})).await;
    for (name, spec) in [
        ("b", plain()),
        ("a", plain()),
        ("h", hardened()),
        ("z", privileged()),
    ] {
        let p = pod(name, spec);
        let key = ObjectKey::new(GroupResource::new("", "pods"), "x", name);
        store
            .create(&key, p, CreateOptions::default())
            .await
            .unwrap();
    }
    let mut old = namespace("x", json!({}));
    old["metadata"]["uid"] = json!("u");
    old["metadata"]["resourceVersion"] = json!("1");
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"pod-security.kubernetes.io/enforce": "restricted"});
    let ok = admit(&adm, update("namespaces", "", new.clone(), old.clone()))
        .await
        .unwrap();
    assert_eq!(
        ok.warnings,
        vec![
            r#"existing pods in namespace "x" violate the new PodSecurity enforce level "restricted:latest""#.to_string(),
            "a (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile".to_string(),
            "z: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile".to_string(),
        ]
    );
    // Relaxing it warns about nothing.
    let ok = admit(&adm, update("namespaces", "", old, new))
        .await
        .unwrap();
    assert!(ok.warnings.is_empty());
}

#[tokio::test]
async fn image_changes_are_evaluated_other_pod_updates_are_not() {
    let (store, adm) = setup().await;
    labeled(&store, "s", json!({})).await;
    // The pod as stored (defaulted), created before the namespace was
    // labeled.
    let created = admit_pod(&adm, "s", "p", plain()).await.unwrap();
    let mut old = created.object.unwrap();
    old["metadata"]["uid"] = json!("u");
    old["metadata"]["resourceVersion"] = json!("1");
    let ns = namespace(
        "s",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    );
    store
        .update(&ns_key("s"), ns, UpdateOptions::default())
        .await
        .unwrap();
    let mut relabeled = old.clone();
    relabeled["metadata"]["labels"] = json!({"a": "b"});
    admit(&adm, update("pods", "s", relabeled, old.clone()))
        .await
        .unwrap();
    let mut new_image = old.clone();
    new_image["spec"]["containers"][0]["image"] = json!("nginx:2");
    let e = admit(&adm, update("pods", "s", new_image, old))
        .await
        .unwrap_err();
    assert_eq!(e.code, 403, "{}", e.message);
    assert!(e.message.contains("violates PodSecurity"), "{}", e.message);
}

#[tokio::test]
async fn exemptions_and_disabling() {
    let store = Arc::new(MemStore::default());
    let mut config = PluginConfig::default();
    config.pod_security = PodSecurityConfig {
        exempt_namespaces: vec!["free".into()],
        exempt_runtime_classes: vec!["kata".into()],
        ..PodSecurityConfig::default()
    };
    let adm = with_config(store.clone(), config).await;
    labeled(
        &store,
        "free",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    labeled(
        &store,
        "s",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    admit_pod(&adm, "free", "p", privileged()).await.unwrap();
    store
        .create(
            &ObjectKey::new(
                GroupResource::new("node.k8s.io", "runtimeclasses"),
                "",
                "kata",
            ),
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": "kata"}, "handler": "kata"}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let mut spec = privileged();
    spec["runtimeClassName"] = json!("kata");
    admit_pod(&adm, "s", "k", spec).await.unwrap();
    admit_pod(&adm, "s", "p", privileged()).await.unwrap_err();

    // --disable-admission-plugins=PodSecurity
    let off = PluginConfig::from_flags(&[], &["PodSecurity".to_string()]).unwrap();
    let adm =
        LocalAdmission::with_plugins(store.clone(), keelson_registry::Catalog::builtin(), off);
    admit_pod(&adm, "s", "p", privileged()).await.unwrap();
}

async fn with_config(store: Arc<MemStore>, config: PluginConfig) -> LocalAdmission {
    // The namespaces and account `admission_over` adds.
    drop(admission_over(store.clone()).await);
    LocalAdmission::with_plugins(store, keelson_registry::Catalog::builtin(), config)
}

#[tokio::test]
async fn labels_written_through_admission_apply_at_once_with_a_cache() {
    let store = Arc::new(MemStore::watchable());
    let adm = admission_over(store.clone()).await;
    labeled(&store, "c", json!({})).await;
    // The cache follows the namespaces once the first pod is admitted.
    admit_pod(&adm, "c", "first", plain()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let old = store.get(&ns_key("c")).await.unwrap();
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"pod-security.kubernetes.io/enforce": "restricted"});
    let admitted = admit(&adm, update("namespaces", "", new, old))
        .await
        .unwrap()
        .object
        .unwrap();
    store
        .update(&ns_key("c"), admitted, UpdateOptions::default())
        .await
        .unwrap();
    let e = admit_pod(&adm, "c", "second", plain()).await.unwrap_err();
    assert_eq!(e.code, 403);
}
