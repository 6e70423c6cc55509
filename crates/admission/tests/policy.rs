//! ValidatingAdmissionPolicy through the admission API: what a client sees
//! when a bound policy denies, warns or lets a write through.

#[path = "admission/support.rs"]
#[allow(dead_code)]
mod support;

use std::sync::Arc;
use std::time::Duration;

use keelson_admission::LocalAdmission;
use keelson_api::{
    AdmissionApi, AdmissionResponse, ApiResult, CreateOptions, GroupResource, ObjectKey, Operation,
    StoreApi,
};
use serde_json::{json, Value};
use support::{admission_over, create, MemStore};

const MSG: &str = "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be no greater than 5";

fn deployment(name: &str, replicas: i64, labels: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}
            }
        }
    })
}

fn policy(spec_extra: Value, validation: Value) -> Value {
    let mut spec = json!({
        "matchConstraints": {"resourceRules": [{
            "apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]
        }]},
        "validations": [validation]
    });
    if let (Some(s), Some(extra)) = (spec.as_object_mut(), spec_extra.as_object()) {
        for (k, v) in extra {
            s.insert(k.clone(), v.clone());
        }
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "max-replicas"}, "spec": spec})
}

fn max_replicas() -> Value {
    policy(
        json!({}),
        json!({"expression": "object.spec.replicas <= 5", "message": "replicas must be no greater than 5"}),
    )
}

fn binding(actions: Value, match_resources: Option<Value>) -> Value {
    let mut spec = json!({"policyName": "max-replicas", "validationActions": actions});
    if let Some(m) = match_resources {
        spec["matchResources"] = m;
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "max-replicas-binding"}, "spec": spec})
}

async fn put(store: &MemStore, resource: &str, namespace: &str, obj: Value) {
    let group = if resource == "namespaces" {
        ""
    } else {
        "admissionregistration.k8s.io"
    };
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let key = ObjectKey::new(GroupResource::new(group, resource), namespace, &name);
    store
        .create(&key, obj, CreateOptions::default())
        .await
        .unwrap();
}

/// Admission over a store holding `policy` and `binding`.
async fn with(policy: Value, binding: Value) -> LocalAdmission {
    let store = Arc::new(MemStore::default());
    put(&store, "validatingadmissionpolicies", "", policy).await;
    put(&store, "validatingadmissionpolicybindings", "", binding).await;
    admission_over(store).await
}

async fn create_deploy(adm: &LocalAdmission, replicas: i64) -> ApiResult<AdmissionResponse> {
    adm.admit(create(
        "apps",
        "deployments",
        "default",
        deployment("big", replicas, json!({})),
    ))
    .await
}

#[tokio::test]
async fn deny_answers_as_kube_with_reason_invalid() {
    let adm = with(max_replicas(), binding(json!(["Deny"]), None)).await;
    let e = create_deploy(&adm, 10).await.unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        e.to_status_json(),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("deployments.apps \"big\" is forbidden: {MSG}"),
            "reason": "Invalid",
            "details": {"name": "big", "group": "apps", "kind": "deployments",
                "causes": [{"message": MSG}]},
            "code": 422
        })
    );
    assert!(create_deploy(&adm, 5).await.is_ok());
}

#[tokio::test]
async fn dry_run_is_denied_too() {
    let adm = with(max_replicas(), binding(json!(["Deny"]), None)).await;
    let mut req = create(
        "apps",
        "deployments",
        "default",
        deployment("big", 10, json!({})),
    );
    req.dry_run = true;
    assert_eq!(adm.admit(req).await.unwrap_err().code, 422);
}

#[tokio::test]
async fn reason_forbidden_is_403() {
    let p = policy(
        json!({}),
        json!({"expression": "object.spec.replicas <= 5", "reason": "Forbidden"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    let e = create_deploy(&adm, 6).await.unwrap_err();
    assert_eq!(
        (e.code, e.to_status_json()["reason"].clone()),
        (403, json!("Forbidden"))
    );
    // no message: kube's default names the expression
    assert_eq!(
        e.message,
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5"
    );
}

#[tokio::test]
async fn warn_admits_with_a_warning() {
    let adm = with(max_replicas(), binding(json!(["Warn", "Audit"]), None)).await;
    let r = create_deploy(&adm, 10).await.unwrap();
    assert_eq!(
        r.warnings,
        vec!["Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding': replicas must be no greater than 5"]
    );
    assert!(create_deploy(&adm, 1).await.unwrap().warnings.is_empty());
}

#[tokio::test]
async fn message_expression_and_variables() {
    let p = policy(
        json!({"variables": [{"name": "r", "expression": "object.spec.replicas"}]}),
        json!({"expression": "variables.r <= 5",
            "messageExpression": "'replicas ' + string(variables.r) + ' > 5 in ' + request.namespace + ' on ' + request.operation",
            "message": "unused"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    let e = create_deploy(&adm, 7).await.unwrap_err();
    assert!(
        e.message
            .ends_with("denied request: replicas 7 > 5 in default on CREATE"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn match_conditions_must_all_hold() {
    let p = policy(
        json!({"matchConditions": [
            {"name": "labelled", "expression": "has(object.metadata.labels) && 'strict' in object.metadata.labels"}
        ]}),
        json!({"expression": "object.spec.replicas <= 5"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    assert!(create_deploy(&adm, 10).await.is_ok());
    let strict = create(
        "apps",
        "deployments",
        "default",
        deployment("big", 10, json!({"strict": "yes"})),
    );
    assert_eq!(adm.admit(strict).await.unwrap_err().code, 422);
}

#[tokio::test]
async fn rules_decide_which_writes_are_checked() {
    // UPDATE only: a create is not checked.
    let p = policy(
        json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
            "operations": ["UPDATE"], "resources": ["*"]}]}}),
        json!({"expression": "object.spec.replicas <= 5"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    assert!(create_deploy(&adm, 10).await.is_ok());

    // Excluded by name.
    let p = policy(
        json!({"matchConstraints": {
            "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"], "resources": ["deployments"]}],
            "excludeResourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"], "resources": ["deployments"], "resourceNames": ["big"]}]
        }}),
        json!({"expression": "object.spec.replicas <= 5"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    assert!(create_deploy(&adm, 10).await.is_ok());

    // The binding narrows to an object selector.
    let adm = with(
        max_replicas(),
        binding(
            json!(["Deny"]),
            Some(json!({"objectSelector": {"matchLabels": {"tier": "web"}}})),
        ),
    )
    .await;
    assert!(create_deploy(&adm, 10).await.is_ok());
    let web = create(
        "apps",
        "deployments",
        "default",
        deployment("big", 10, json!({"tier": "web"})),
    );
    assert_eq!(
        adm.admit(web).await.unwrap_err().message,
        format!("deployments.apps \"big\" is forbidden: {MSG}")
    );
}

#[tokio::test]
async fn namespace_selector_and_namespace_object() {
    let store = Arc::new(MemStore::default());
    put(&store, "validatingadmissionpolicies", "", policy(
        json!({}),
        json!({"expression": "object.spec.replicas <= 5", "messageExpression": "'too many in ' + namespaceObject.metadata.name"}),
    ))
    .await;
    put(&store, "validatingadmissionpolicybindings", "", binding(
        json!(["Deny"]),
        Some(json!({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": ["test"]}]}})),
    ))
    .await;
    put(
        &store,
        "namespaces",
        "",
        json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "qa", "labels": {"env": "test"}}, "status": {"phase": "Active"}}),
    )
    .await;
    let adm = admission_over(store).await;
    assert!(create_deploy(&adm, 10).await.is_ok());
    let qa = create(
        "apps",
        "deployments",
        "qa",
        deployment("big", 10, json!({})),
    );
    let e = adm.admit(qa).await.unwrap_err();
    assert!(
        e.message.ends_with("denied request: too many in qa"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn failure_policy_decides_on_errors() {
    let expr = json!({"expression": "object.spec.nope > 1"});
    let adm = with(
        policy(json!({}), expr.clone()),
        binding(json!(["Deny"]), None),
    )
    .await;
    let e = create_deploy(&adm, 1).await.unwrap_err();
    assert_eq!(
        e.message,
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: expression 'object.spec.nope > 1' resulted in error: no such key: nope"
    );
    let ignore = policy(json!({"failurePolicy": "Ignore"}), expr);
    let adm = with(ignore, binding(json!(["Deny"]), None)).await;
    assert!(create_deploy(&adm, 1).await.is_ok());
}

#[tokio::test]
async fn old_object_on_update() {
    let p = policy(
        json!({}),
        json!({"expression": "oldObject == null || object.spec.replicas >= oldObject.spec.replicas",
            "message": "no scaling down"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    assert!(create_deploy(&adm, 3).await.is_ok());
    let update = |new: i64, old: i64| {
        let mut r = create(
            "apps",
            "deployments",
            "default",
            deployment("big", new, json!({})),
        );
        r.operation = Operation::Update;
        r.old_object = Some(deployment("big", old, json!({})));
        r
    };
    assert!(adm.admit(update(4, 3)).await.is_ok());
    let e = adm.admit(update(2, 3)).await.unwrap_err();
    assert!(
        e.message.ends_with("denied request: no scaling down"),
        "{}",
        e.message
    );
}

/// With a watchable store the policies are followed: a binding made after
/// admission started is enforced without a store read per write.
#[tokio::test]
async fn follows_policies_as_they_change() {
    let store = Arc::new(MemStore::watchable());
    let adm = admission_over(store.clone()).await;
    assert!(create_deploy(&adm, 10).await.is_ok());
    put(&store, "validatingadmissionpolicies", "", max_replicas()).await;
    put(
        &store,
        "validatingadmissionpolicybindings",
        "",
        binding(json!(["Deny"]), None),
    )
    .await;
    let mut last = None;
    for _ in 0..100 {
        match create_deploy(&adm, 10).await {
            Err(e) => {
                last = Some(e);
                break;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    assert_eq!(
        last.map(|e| e.message),
        Some(format!("deployments.apps \"big\" is forbidden: {MSG}"))
    );
    let key = ObjectKey::new(
        GroupResource::new(
            "admissionregistration.k8s.io",
            "validatingadmissionpolicybindings",
        ),
        "",
        "max-replicas-binding",
    );
    store.delete(&key, Default::default()).await.unwrap();
    let mut admitted = false;
    for _ in 0..100 {
        if create_deploy(&adm, 10).await.is_ok() {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(admitted, "the deleted binding is still enforced");
}

#[tokio::test]
async fn a_failing_variable_fails_only_the_expressions_that_read_it() {
    let p = policy(
        json!({"variables": [
            {"name": "broken", "expression": "object.spec.nope"},
            {"name": "r", "expression": "object.spec.replicas"}
        ]}),
        json!({"expression": "variables.r <= 5"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    assert!(create_deploy(&adm, 3).await.is_ok());
    assert!(create_deploy(&adm, 6)
        .await
        .unwrap_err()
        .message
        .ends_with("denied request: failed expression: variables.r <= 5"));

    let p = policy(
        json!({"variables": [{"name": "broken", "expression": "object.spec.nope"}]}),
        json!({"expression": "variables.broken > 1"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    let e = create_deploy(&adm, 3).await.unwrap_err();
    assert!(
        e.message.ends_with("denied request: expression 'variables.broken > 1' resulted in error: composited variable \"broken\" fails to evaluate: no such key: nope"),
        "{}",
        e.message
    );
}
