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
    let store = Arc::new(MemStore::watchable());
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
async fn audit_records_kube_s_annotations() {
    let mut p = max_replicas();
    p["spec"]["auditAnnotations"] = json!([
        {"key": "replicas", "valueExpression": "'asked ' + string(object.spec.replicas)"},
        {"key": "never", "valueExpression": "null"}
    ]);
    let adm = with(p, binding(json!(["Warn", "Audit"]), None)).await;
    let r = create_deploy(&adm, 10).await.unwrap();
    assert_eq!(
        r.audit_annotations,
        [
            (
                "max-replicas/replicas".to_string(),
                "asked 10".to_string()
            ),
            (
                "validation.policy.admission.k8s.io/validation_failure".to_string(),
                r#"[{"message":"replicas must be no greater than 5","policy":"max-replicas","binding":"max-replicas-binding","expressionIndex":0,"validationActions":["Warn","Audit"]}]"#.to_string()
            ),
        ]
        .into()
    );
    // A passing write records only the auditAnnotations' values.
    let r = create_deploy(&adm, 1).await.unwrap();
    assert_eq!(
        r.audit_annotations.keys().collect::<Vec<_>>(),
        ["max-replicas/replicas"]
    );
    // A denial carries them on the error.
    let adm = with(max_replicas(), binding(json!(["Deny", "Audit"]), None)).await;
    let e = create_deploy(&adm, 10).await.unwrap_err();
    assert!(e
        .audit_annotations
        .is_some_and(|a| a.contains_key("validation.policy.admission.k8s.io/validation_failure")));
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

async fn put_object(store: &MemStore, group: &str, resource: &str, obj: Value) {
    let ns = obj["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let key = ObjectKey::new(GroupResource::new(group, resource), &ns, &name);
    store
        .create(&key, obj, CreateOptions::default())
        .await
        .unwrap();
}

fn config_map(namespace: &str, name: &str, max: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "data": {"max": max}})
}

/// A policy reading its limit from a ConfigMap param.
fn param_policy() -> Value {
    policy(
        json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}),
        json!({"expression": "object.spec.replicas <= int(params.data.max)",
            "messageExpression": "'replicas must be no greater than ' + params.data.max + ' (' + params.metadata.name + ')'"}),
    )
}

fn param_binding(param_ref: Value) -> Value {
    let mut b = binding(json!(["Deny"]), None);
    b["spec"]["paramRef"] = param_ref;
    b
}

async fn with_objects(policy: Value, binding: Value, objects: Vec<Value>) -> LocalAdmission {
    let store = Arc::new(MemStore::default());
    put(&store, "validatingadmissionpolicies", "", policy).await;
    put(&store, "validatingadmissionpolicybindings", "", binding).await;
    for o in objects {
        put_object(&store, "", "configmaps", o).await;
    }
    admission_over(store).await
}

#[tokio::test]
async fn params_by_name_default_to_the_request_namespace() {
    let adm = with_objects(
        param_policy(),
        param_binding(json!({"name": "limits", "parameterNotFoundAction": "Deny"})),
        vec![
            config_map("default", "limits", "3", json!({})),
            config_map("other", "limits", "50", json!({})),
        ],
    )
    .await;
    assert!(create_deploy(&adm, 3).await.is_ok());
    let e = create_deploy(&adm, 4).await.unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be no greater than 3 (limits)"
    );
    // An explicit namespace wins.
    let adm = with_objects(
        param_policy(),
        param_binding(
            json!({"name": "limits", "namespace": "other", "parameterNotFoundAction": "Deny"}),
        ),
        vec![config_map("other", "limits", "50", json!({}))],
    )
    .await;
    assert!(create_deploy(&adm, 40).await.is_ok());
}

#[tokio::test]
async fn params_by_selector_evaluate_once_per_param() {
    let adm = with_objects(
        param_policy(),
        param_binding(json!({"selector": {"matchLabels": {"limits": "replicas"}}, "parameterNotFoundAction": "Allow"})),
        vec![
            config_map("default", "loose", "8", json!({"limits": "replicas"})),
            config_map("default", "strict", "4", json!({"limits": "replicas"})),
            config_map("default", "unrelated", "1", json!({})),
        ],
    )
    .await;
    assert!(create_deploy(&adm, 4).await.is_ok());
    let e = create_deploy(&adm, 6).await.unwrap_err();
    assert!(
        e.message
            .ends_with("denied request: replicas must be no greater than 4 (strict)"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn missing_params_follow_parameter_not_found_action() {
    let adm = with_objects(
        param_policy(),
        param_binding(json!({"name": "absent", "parameterNotFoundAction": "Deny"})),
        vec![],
    )
    .await;
    let e = create_deploy(&adm, 1).await.unwrap_err();
    assert_eq!(
        e.to_status_json(),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
            "reason": "Invalid",
            "details": {"name": "big", "group": "apps", "kind": "deployments",
                "causes": [{"message": "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"}]},
            "code": 422
        })
    );
    // Allow: nothing to evaluate, admitted.
    let adm = with_objects(
        param_policy(),
        param_binding(json!({"selector": {}, "parameterNotFoundAction": "Allow"})),
        vec![],
    )
    .await;
    assert!(create_deploy(&adm, 100).await.is_ok());
    // failurePolicy Ignore skips the configuration error.
    let mut p = param_policy();
    p["spec"]["failurePolicy"] = json!("Ignore");
    let adm = with_objects(
        p,
        param_binding(json!({"name": "absent", "parameterNotFoundAction": "Deny"})),
        vec![],
    )
    .await;
    assert!(create_deploy(&adm, 100).await.is_ok());
}

#[tokio::test]
async fn a_param_kind_not_served_is_a_policy_configuration_error() {
    let p = policy(
        json!({"paramKind": {"apiVersion": "example.com/v1", "kind": "Limits"}}),
        json!({"expression": "object.spec.replicas <= params.max"}),
    );
    let adm = with_objects(
        p,
        param_binding(json!({"name": "x", "parameterNotFoundAction": "Deny"})),
        vec![],
    )
    .await;
    let e = create_deploy(&adm, 1).await.unwrap_err();
    assert_eq!(
        (e.code, e.to_status_json()["reason"].clone()),
        (422, json!("Invalid"))
    );
    assert_eq!(
        e.message,
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Limits'"
    );
    // A binding without paramRef evaluates with params null.
    let p = policy(
        json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}),
        json!({"expression": "params == null", "message": "params given"}),
    );
    let adm = with_objects(p, binding(json!(["Deny"]), None), vec![]).await;
    assert!(create_deploy(&adm, 1).await.is_ok());
}

#[tokio::test]
async fn a_cluster_scoped_request_cannot_default_a_namespaced_param() {
    let p = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "max-replicas"},
        "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["namespaces"]}]},
            "validations": [{"expression": "true"}]}});
    let adm = with_objects(
        p,
        param_binding(json!({"name": "x", "parameterNotFoundAction": "Deny"})),
        vec![],
    )
    .await;
    let ns = create(
        "",
        "namespaces",
        "",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}}),
    );
    assert_eq!(
        adm.admit(ns).await.unwrap_err().message,
        "namespaces \"fresh\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
    );
}

#[tokio::test]
async fn request_carries_user_options_and_kinds() {
    let p = policy(
        json!({}),
        json!({"expression": "false",
            "messageExpression": "request.userInfo.username + ' ' + request.userInfo.groups[0] + ' ' + request.userInfo.uid + ' ' + request.options.fieldManager + ' ' + request.kind.kind + ' ' + request.requestResource.version + ' ' + string(request.dryRun) + '|' + string(has(request.subResource))"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    let mut req = create(
        "apps",
        "deployments",
        "default",
        deployment("big", 1, json!({})),
    );
    req.user = Some(keelson_api::UserInfo {
        username: "alice".into(),
        uid: "u-1".into(),
        groups: vec!["devs".into(), "system:authenticated".into()],
        extra: Default::default(),
    });
    req.options = Some(
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-create"}),
    );
    let e = adm.admit(req).await.unwrap_err();
    assert!(
        e.message
            .ends_with("denied request: alice devs u-1 kubectl-create Deployment v1 false|false"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn namespace_object_is_null_for_cluster_scoped_requests() {
    let p = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "max-replicas"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["namespaces"]}]},
            "validations": [{"expression": "namespaceObject != null", "messageExpression": "'namespace ' + request.namespace + ' has no namespaceObject'"}]}});
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    let ns = create(
        "",
        "namespaces",
        "",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}}),
    );
    assert!(adm
        .admit(ns)
        .await
        .unwrap_err()
        .message
        .ends_with("denied request: namespace fresh has no namespaceObject"));
}

#[tokio::test]
async fn message_expression_falls_back_as_kube() {
    for (message_expression, want) in [
        ("'  spaced  '", "spaced"),
        ("''", "static message"),
        ("'two\\nlines'", "static message"),
        ("object.spec.nope", "static message"),
        ("1", "static message"),
    ] {
        let p = policy(
            json!({}),
            json!({"expression": "object.spec.replicas <= 5",
                "messageExpression": message_expression, "message": "  static message "}),
        );
        let adm = with(p, binding(json!(["Deny"]), None)).await;
        let e = create_deploy(&adm, 6).await.unwrap_err();
        assert_eq!(
            e.message,
            format!("deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: {want}"),
            "{message_expression}"
        );
    }
}

#[tokio::test]
async fn reasons_give_their_codes() {
    for (reason, code) in [
        ("Invalid", 422),
        ("Forbidden", 403),
        ("Unauthorized", 401),
        ("RequestEntityTooLarge", 413),
    ] {
        let p = policy(
            json!({}),
            json!({"expression": "object.spec.replicas <= 5", "reason": reason}),
        );
        let adm = with(p, binding(json!(["Deny"]), None)).await;
        let e = create_deploy(&adm, 6).await.unwrap_err();
        assert_eq!(
            (e.code, e.to_status_json()["reason"].clone()),
            (code, json!(reason))
        );
    }
}

#[tokio::test]
async fn audit_annotation_errors_deny_under_fail() {
    let p = policy(
        json!({"auditAnnotations": [{"key": "replicas", "valueExpression": "object.spec.replicas"}]}),
        json!({"expression": "true"}),
    );
    let adm = with(p, binding(json!(["Audit"]), None)).await;
    assert_eq!(
        create_deploy(&adm, 1).await.unwrap_err().message,
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: compilation error: must evaluate to one of [string null_type] but got dyn"
    );
    let p = policy(
        json!({"auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}]}),
        json!({"expression": "true"}),
    );
    let adm = with(p, binding(json!(["Audit"]), None)).await;
    assert!(create_deploy(&adm, 1).await.is_ok());
}

#[tokio::test]
async fn match_policy_equivalent_sees_other_served_versions() {
    let hpa = |api_version: &str| {
        let mut spec = json!({"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "minReplicas": 1, "maxReplicas": 10});
        if api_version == "autoscaling/v1" {
            spec["targetCPUUtilizationPercentage"] = json!(80);
        }
        json!({"apiVersion": api_version, "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"}, "spec": spec})
    };
    let policy_for = |match_policy: &str| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "max-replicas"},
            "spec": {"matchConstraints": {"matchPolicy": match_policy, "resourceRules": [{"apiGroups": ["autoscaling"], "apiVersions": ["v2"],
                    "operations": ["CREATE"], "resources": ["horizontalpodautoscalers"]}]},
                "validations": [{"expression": "false",
                    "messageExpression": "'seen as ' + request.kind.version + ' (asked ' + request.requestKind.version + '), ' + object.apiVersion + ', metrics ' + string(has(object.spec.metrics))"}]}})
    };
    let adm = with(policy_for("Equivalent"), binding(json!(["Deny"]), None)).await;
    let e = adm
        .admit(create(
            "autoscaling",
            "horizontalpodautoscalers",
            "default",
            hpa("autoscaling/v1"),
        ))
        .await
        .unwrap_err();
    assert!(
        e.message
            .ends_with("denied request: seen as v2 (asked v1), autoscaling/v2, metrics true"),
        "{}",
        e.message
    );
    let adm = with(policy_for("Exact"), binding(json!(["Deny"]), None)).await;
    assert!(adm
        .admit(create(
            "autoscaling",
            "horizontalpodautoscalers",
            "default",
            hpa("autoscaling/v1")
        ))
        .await
        .is_ok());
}

/// The status controller's part: once a policy is seen, its status shows
/// the generation observed and an empty type check.
#[tokio::test]
async fn status_records_the_observed_generation() {
    let store = Arc::new(MemStore::watchable());
    let adm = admission_over(store.clone()).await;
    assert!(create_deploy(&adm, 1).await.is_ok());
    let mut p = max_replicas();
    p["metadata"]["generation"] = json!(1);
    put(&store, "validatingadmissionpolicies", "", p).await;
    let key = ObjectKey::new(
        GroupResource::new(
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies",
        ),
        "",
        "max-replicas",
    );
    let mut status = Value::Null;
    for _ in 0..100 {
        status = store.get(&key).await.unwrap()["status"].clone();
        if !status.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, json!({"observedGeneration": 1, "typeChecking": {}}));
    let stored = store.get(&key).await.unwrap();
    assert_eq!(
        stored["metadata"]["managedFields"][0]["manager"],
        json!("validatingadmissionpolicy-status-controller")
    );
}

/// A stored policy whose expression does not compile (kube refuses such a
/// policy at write time, so it comes from an older server): the
/// evaluation is an error kube words as `compilation error: ...`,
/// decided by `failurePolicy`.
#[tokio::test]
async fn compile_errors_follow_the_failure_policy() {
    let bad = json!({"expression": "x == 1"});
    let adm = with(
        policy(json!({}), bad.clone()),
        binding(json!(["Deny"]), None),
    )
    .await;
    assert_eq!(
        create_deploy(&adm, 1).await.unwrap_err().message,
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x == 1\n | ^"
    );
    let ignore = policy(json!({"failurePolicy": "Ignore"}), bad);
    let adm = with(ignore, binding(json!(["Deny"]), None)).await;
    assert!(create_deploy(&adm, 1).await.is_ok());
    // a variable that does not compile fails the expressions reading it
    let p = policy(
        json!({"variables": [{"name": "v", "expression": "object.spec.replicas +"}]}),
        json!({"expression": "variables.v > 1"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    let m = create_deploy(&adm, 1).await.unwrap_err().message;
    assert!(
        m.contains("denied request: expression 'variables.v > 1' resulted in error: composited variable \"v\" fails to compile: compilation failed: ERROR: <input>:1:"),
        "{m}"
    );
}

/// `authorizer` checks the request's user with the RBAC authorizer.
#[tokio::test]
async fn authorizer_checks_the_request_user() {
    let p = policy(
        json!({}),
        json!({"expression": "authorizer.group('').resource('secrets').namespace(request.namespace).check('get').allowed()",
            "messageExpression": "'no secrets for ' + request.userInfo.username"}),
    );
    let adm = with(p, binding(json!(["Deny"]), None)).await;
    let as_user = |name: &str, groups: Vec<String>| {
        let mut req = create(
            "apps",
            "deployments",
            "default",
            deployment("big", 1, json!({})),
        );
        req.user = Some(keelson_api::UserInfo {
            username: name.into(),
            groups,
            ..Default::default()
        });
        req
    };
    let e = adm.admit(as_user("alice", vec![])).await.unwrap_err();
    assert!(
        e.message.ends_with("denied request: no secrets for alice"),
        "{}",
        e.message
    );
    let admin = as_user("root", vec!["system:masters".into()]);
    assert!(adm.admit(admin).await.is_ok());
}
