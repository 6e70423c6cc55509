//! ResourceQuota admission over the real store: what a client sees when a
//! write does not fit a quota, and what a write that fits is charged.

use std::sync::Arc;

use keelson_admission::LocalAdmission;
use keelson_api::{
    AdmissionApi, AdmissionRequest, ApiError, CreateOptions, FieldValidation, GroupResource,
    ObjectKey, Operation, StoreApi,
};
use serde_json::{json, Value};

fn quotas() -> GroupResource {
    GroupResource::new("", "resourcequotas")
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<dyn StoreApi>,
    admission: LocalAdmission,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn StoreApi> = Arc::new(
        keelson_storage::LocalStore::open(dir.path(), Default::default())
            .await
            .unwrap(),
    );
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"},
        "status": {"phase": "Active"}});
    store
        .create(
            &ObjectKey::new(GroupResource::new("", "namespaces"), "", "team"),
            ns,
            CreateOptions::default(),
        )
        .await
        .unwrap();
    // The ServiceAccount plugin wants the namespace's `default` account.
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "default", "namespace": "team"}});
    store
        .create(
            &ObjectKey::new(GroupResource::new("", "serviceaccounts"), "team", "default"),
            sa,
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let admission = LocalAdmission::new(store.clone(), keelson_registry::Catalog::builtin());
    Fixture {
        _dir: dir,
        store,
        admission,
    }
}

/// A quota as the controller leaves it: `status.hard` the spec's, `used`.
async fn put_quota(store: &dyn StoreApi, name: &str, hard: Value, used: Value) {
    let q = json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"hard": hard.clone()},
        "status": {"hard": hard, "used": used}});
    store
        .create(
            &ObjectKey::new(quotas(), "team", name),
            q,
            CreateOptions::default(),
        )
        .await
        .unwrap();
}

async fn used(store: &dyn StoreApi, name: &str) -> Value {
    store
        .get(&ObjectKey::new(quotas(), "team", name))
        .await
        .unwrap()["status"]["used"]
        .clone()
}

fn create(resource: &str, object: Value, dry_run: bool) -> AdmissionRequest {
    AdmissionRequest {
        operation: Operation::Create,
        gr: GroupResource::new("", resource),
        api_version: "v1".into(),
        kind: object["kind"].as_str().unwrap_or("").into(),
        kind_api_version: String::new(),
        namespace: "team".into(),
        name: object["metadata"]["name"].as_str().unwrap_or("").into(),
        subresource: String::new(),
        object: Some(object),
        old_object: None,
        raw_body: None,
        is_patch: false,
        field_validation: FieldValidation::Strict,
        dry_run,
        user: None,
        options: None,
    }
}

fn pod(name: &str, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx",
            "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}})
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

fn forbidden(e: ApiError) -> (u16, String) {
    (e.code, e.message)
}

#[tokio::test]
async fn a_create_over_quota_is_refused_with_kubes_message() {
    let f = fixture().await;
    put_quota(
        &*f.store,
        "compute",
        json!({"requests.cpu": "2", "pods": "10"}),
        json!({"requests.cpu": "1", "pods": "1"}),
    )
    .await;
    let err = f
        .admission
        .admit(create("pods", pod("p", "2"), false))
        .await
        .unwrap_err();
    assert_eq!(
        forbidden(err),
        (
            403,
            "pods \"p\" is forbidden: exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=1, limited: requests.cpu=2".into()
        )
    );
    // Nothing was charged.
    assert_eq!(
        used(&*f.store, "compute").await,
        json!({"pods": "1", "requests.cpu": "1"})
    );
}

#[tokio::test]
async fn a_create_that_fits_is_charged_and_a_dry_run_is_not() {
    let f = fixture().await;
    put_quota(
        &*f.store,
        "compute",
        json!({"requests.cpu": "1", "pods": "2"}),
        json!({"requests.cpu": "0", "pods": "0"}),
    )
    .await;
    f.admission
        .admit(create("pods", pod("a", "500m"), true))
        .await
        .unwrap();
    assert_eq!(
        used(&*f.store, "compute").await,
        json!({"pods": "0", "requests.cpu": "0"})
    );
    f.admission
        .admit(create("pods", pod("a", "500m"), false))
        .await
        .unwrap();
    assert_eq!(
        used(&*f.store, "compute").await,
        json!({"pods": "1", "requests.cpu": "500m"})
    );
    f.admission
        .admit(create("pods", pod("b", "500m"), false))
        .await
        .unwrap();
    assert_eq!(
        used(&*f.store, "compute").await,
        json!({"pods": "2", "requests.cpu": "1"})
    );
    let err = f
        .admission
        .admit(create("pods", pod("c", "100m"), false))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "pods \"c\" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=100m, used: pods=2,requests.cpu=1, limited: pods=2,requests.cpu=1"
    );
}

#[tokio::test]
async fn concurrent_creates_cannot_both_take_the_last_unit() {
    let f = fixture().await;
    put_quota(
        &*f.store,
        "objects",
        json!({"configmaps": "3"}),
        json!({"configmaps": "2"}),
    )
    .await;
    let a = f
        .admission
        .admit(create("configmaps", configmap("a"), false));
    let b = f
        .admission
        .admit(create("configmaps", configmap("b"), false));
    let (a, b) = tokio::join!(a, b);
    assert_eq!(
        [a.is_ok(), b.is_ok()].iter().filter(|x| **x).count(),
        1,
        "{a:?} {b:?}"
    );
    let refused = a.err().or(b.err()).unwrap();
    assert!(refused.message.ends_with(
        "is forbidden: exceeded quota: objects, requested: configmaps=1, used: configmaps=3, limited: configmaps=3"
    ), "{}", refused.message);
    assert_eq!(used(&*f.store, "objects").await, json!({"configmaps": "3"}));
}

#[tokio::test]
async fn a_quota_on_cpu_requires_every_container_to_state_it() {
    let f = fixture().await;
    put_quota(
        &*f.store,
        "compute",
        json!({"limits.memory": "1Gi", "requests.cpu": "4"}),
        json!({"limits.memory": "0", "requests.cpu": "0"}),
    )
    .await;
    let err = f
        .admission
        .admit(create("pods", pod("p", "1"), false))
        .await
        .unwrap_err();
    assert_eq!(
        forbidden(err),
        (
            403,
            "pods \"p\" is forbidden: failed quota: compute: must specify limits.memory for: app"
                .into()
        )
    );
}

#[tokio::test]
async fn a_quota_without_usage_yet_refuses_what_it_covers() {
    let f = fixture().await;
    let q = json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "fresh", "namespace": "team"},
        "spec": {"hard": {"configmaps": "3"}},
        "status": {"hard": {"configmaps": "3"}}});
    f.store
        .create(
            &ObjectKey::new(quotas(), "team", "fresh"),
            q,
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let err = f
        .admission
        .admit(create("configmaps", configmap("x"), false))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "configmaps \"x\" is forbidden: status unknown for quota: fresh, resources: configmaps"
    );
    // Pods are not covered by it.
    f.admission
        .admit(create("pods", pod("p", "1"), false))
        .await
        .unwrap();
}

#[tokio::test]
async fn generic_object_counts_cover_any_resource() {
    let f = fixture().await;
    put_quota(
        &*f.store,
        "apps",
        json!({"count/deployments.apps": "0"}),
        json!({"count/deployments.apps": "0"}),
    )
    .await;
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
    let mut req = create("deployments", deploy, false);
    req.gr = GroupResource::new("apps", "deployments");
    req.api_version = "apps/v1".into();
    let err = f.admission.admit(req).await.unwrap_err();
    assert_eq!(
        err.message,
        "deployments.apps \"web\" is forbidden: exceeded quota: apps, requested: count/deployments.apps=1, used: count/deployments.apps=0, limited: count/deployments.apps=0"
    );
}

#[tokio::test]
async fn two_admissions_over_one_store_retry_on_conflict() {
    let f = fixture().await;
    let other = LocalAdmission::new(f.store.clone(), keelson_registry::Catalog::builtin());
    put_quota(
        &*f.store,
        "objects",
        json!({"configmaps": "4"}),
        json!({"configmaps": "2"}),
    )
    .await;
    // Each charge is written with the quota's resourceVersion; the loser
    // of a race reads the quota again and is charged on top.
    let a = f
        .admission
        .admit(create("configmaps", configmap("a"), false));
    let b = other.admit(create("configmaps", configmap("b"), false));
    let (a, b) = tokio::join!(a, b);
    assert!(a.is_ok() && b.is_ok(), "{a:?} {b:?}");
    assert_eq!(used(&*f.store, "objects").await, json!({"configmaps": "4"}));
    let c = other
        .admit(create("configmaps", configmap("c"), false))
        .await
        .unwrap_err();
    assert_eq!(c.code, 403);
}
