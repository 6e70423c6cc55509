//! Workload validation (apps, batch, autoscaling, policy): kube's exact
//! 422 causes, and no refusal of realistic valid objects.

use keelson_admission::LocalAdmission;
use keelson_api::{AdmissionApi, AdmissionRequest, ApiError, Operation};
use serde_json::{json, Value};

use crate::support::{admission, create};

fn update(group: &str, resource: &str, sub: &str, new: Value, old: Value) -> AdmissionRequest {
    let mut req = create(group, resource, "default", new);
    req.operation = Operation::Update;
    req.subresource = sub.into();
    req.old_object = Some(old);
    req
}

async fn refused(adm: &LocalAdmission, req: AdmissionRequest) -> ApiError {
    let err = adm.admit(req).await.unwrap_err();
    assert_eq!(
        (err.code, err.reason.as_str()),
        (422, "Invalid"),
        "{}",
        err.message
    );
    err
}

/// The `(field, reason, message)` causes of a 422.
fn causes(err: &ApiError) -> Vec<(String, String, String)> {
    err.details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| (c.field.clone(), c.reason.clone(), c.message.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn has(err: &ApiError, field: &str, reason: &str, message: &str) {
    let all = causes(err);
    assert!(
        all.iter()
            .any(|(f, r, m)| f == field && r == reason && m == message),
        "no cause {field} {reason} {message:?} in {all:#?}"
    );
}

fn container() -> Value {
    json!({"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]})
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [container()]}}}})
}

/// The brief's Deployment: the replicas and selector-mismatch causes are
/// this module's.
fn five_mistakes() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": -1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"tier": "x", "app": "other"}},
                "spec": {"containers": [{"name": "Bad_Name", "image": "",
                    "ports": [{"containerPort": 70000}]}]}}}})
}

#[tokio::test]
async fn deployment_replicas_and_selector_mismatch() {
    let adm = admission().await;
    let err = refused(
        &adm,
        create("apps", "deployments", "default", five_mistakes()),
    )
    .await;
    assert!(err
        .message
        .starts_with("Deployment.apps \"web\" is invalid: "));
    let c = causes(&err);
    assert_eq!(
        c[0],
        (
            "spec.replicas".into(),
            "FieldValueInvalid".into(),
            "Invalid value: -1: must be greater than or equal to 0".into()
        )
    );
    has(
        &err,
        "spec.template.metadata.labels",
        "FieldValueInvalid",
        "Invalid value: {\"app\":\"other\",\"tier\":\"x\"}: `selector` does not match template `labels`",
    );
    assert!(err.message.contains("spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: {\"app\":\"other\",\"tier\":\"x\"}: `selector` does not match template `labels`"), "{}", err.message);
}

/// The Deployment, whole: kube's five causes in kube's order.
#[tokio::test]
async fn deployment_five_causes_in_kube_order() {
    let adm = admission().await;
    let err = refused(
        &adm,
        create("apps", "deployments", "default", five_mistakes()),
    )
    .await;
    let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        err.message,
        format!("Deployment.apps \"web\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: {{\"app\":\"other\",\"tier\":\"x\"}}: `selector` does not match template `labels`, spec.template.spec.containers[0].name: Invalid value: \"Bad_Name\": {label}, spec.template.spec.containers[0].image: Required value, spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive]")
    );
    assert_eq!(causes(&err).len(), 5);
}

#[tokio::test]
async fn deployment_selector_rules() {
    let adm = admission().await;
    let mut d = deployment("a");
    d["spec"].as_object_mut().unwrap().remove("selector");
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(err.message, "Deployment.apps \"a\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"a\"}: `selector` does not match template `labels`]");

    let mut d = deployment("b");
    d["spec"]["selector"] = json!({});
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(
        err.message,
        "Deployment.apps \"b\" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for deployment"
    );

    let mut d = deployment("c");
    d["spec"]["selector"] =
        json!({"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["c"]}]});
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    has(
        &err,
        "spec.selector.matchExpressions[0].operator",
        "FieldValueInvalid",
        "Invalid value: \"Equals\": not a valid selector operator",
    );
    has(
        &err,
        "spec.selector",
        "FieldValueInvalid",
        "Invalid value: {\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Equals\",\"values\":[\"c\"]}]}: invalid label selector",
    );

    let mut d = deployment("d");
    d["spec"]["selector"] = json!({"matchExpressions": [{"key": "app", "operator": "In"}]});
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    has(
        &err,
        "spec.selector.matchExpressions[0].values",
        "FieldValueRequired",
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
    );
}

#[tokio::test]
async fn deployment_template_and_strategy() {
    let adm = admission().await;
    let mut d = deployment("a");
    d["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(err.message, "Deployment.apps \"a\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"");

    let mut d = deployment("b");
    d["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}});
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(err.message, "Deployment.apps \"b\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0");

    let mut d = deployment("c");
    d["spec"]["strategy"] = json!({"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "x%", "maxUnavailable": "150%"}});
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(err.message, "Deployment.apps \"c\" is invalid: [spec.strategy.rollingUpdate.maxSurge: Invalid value: \"x%\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%'), spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%]");

    let mut d = deployment("d");
    d["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}});
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(err.message, "Deployment.apps \"d\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'");

    let mut d = deployment("e");
    d["spec"]["minReadySeconds"] = json!(700);
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(err.message, "Deployment.apps \"e\" is invalid: spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds");

    let mut d = deployment("f");
    d["spec"]["revisionHistoryLimit"] = json!(-2);
    let err = refused(&adm, create("apps", "deployments", "default", d)).await;
    assert_eq!(err.message, "Deployment.apps \"f\" is invalid: spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0");
}

#[tokio::test]
async fn selector_is_immutable_and_scale_is_not() {
    let adm = admission().await;
    let old = adm
        .admit(create("apps", "deployments", "default", deployment("web")))
        .await
        .unwrap()
        .object
        .unwrap();
    // Scale and image change: admitted.
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(5);
    new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    adm.admit(update("apps", "deployments", "", new, old.clone()))
        .await
        .unwrap();
    // A new selector (and matching labels): refused.
    let mut new = old.clone();
    new["spec"]["selector"] = json!({"matchLabels": {"app": "web", "tier": "x"}});
    new["spec"]["template"]["metadata"]["labels"] = json!({"app": "web", "tier": "x"});
    let err = refused(&adm, update("apps", "deployments", "", new, old.clone())).await;
    assert_eq!(err.message, "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"tier\":\"x\"}}: field is immutable");
    // Status: ready above replicas.
    let mut new = old.clone();
    new["status"] = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": 1});
    let err = refused(&adm, update("apps", "deployments", "status", new, old)).await;
    assert_eq!(err.message, "Deployment.apps \"web\" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas");
}

fn stateful_set() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "replicas": 3, "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "pg", "image": "postgres:17",
                    "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}}]}})
}

#[tokio::test]
async fn stateful_set_rules() {
    let adm = admission().await;
    let mut s = stateful_set();
    s["spec"]["podManagementPolicy"] = json!("Random");
    s["spec"]["persistentVolumeClaimRetentionPolicy"] =
        json!({"whenDeleted": "Keep", "whenScaled": "Retain"});
    let err = refused(&adm, create("apps", "statefulsets", "default", s)).await;
    assert_eq!(err.message, "StatefulSet.apps \"db\" is invalid: [spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel', spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"]");

    let old = adm
        .admit(create("apps", "statefulsets", "default", stateful_set()))
        .await
        .unwrap()
        .object
        .unwrap();
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(5);
    new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("postgres:17.1");
    adm.admit(update("apps", "statefulsets", "", new, old.clone()))
        .await
        .unwrap();
    // What a client sends back: zero values dropped or added (kube compares
    // semantically).
    let mut new = old.clone();
    new["spec"]["volumeClaimTemplates"][0]["metadata"]["creationTimestamp"] = Value::Null;
    new["spec"]["volumeClaimTemplates"][0]["status"] = json!({});
    adm.admit(update("apps", "statefulsets", "", new.clone(), old.clone()))
        .await
        .unwrap();
    adm.admit(update("apps", "statefulsets", "", old.clone(), new))
        .await
        .unwrap();
    let mut new = old.clone();
    new["spec"]["serviceName"] = json!("other");
    let err = refused(&adm, update("apps", "statefulsets", "", new, old)).await;
    assert_eq!(err.message, "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden");
}

fn daemon_set() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "agent:1"}],
                    "tolerations": [{"operator": "Exists"}]}}}})
}

#[tokio::test]
async fn daemon_set_update_strategy() {
    let adm = admission().await;
    let mut d = daemon_set();
    d["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}});
    let err = refused(&adm, create("apps", "daemonsets", "default", d)).await;
    assert_eq!(err.message, "DaemonSet.apps \"agent\" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero");
    let mut d = daemon_set();
    d["spec"]["updateStrategy"] = json!({"type": "Sometimes"});
    let err = refused(&adm, create("apps", "daemonsets", "default", d)).await;
    assert_eq!(err.message, "DaemonSet.apps \"agent\" is invalid: spec.updateStrategy: Unsupported value: {\"type\":\"Sometimes\"}: supported values: \"RollingUpdate\", \"OnDelete\"");
}

const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// kube 1.34's `ValidateStatefulSet`: on create, the serviceName is a DNS
/// label and each claim template's spec is a claim's spec (at
/// `spec.volumeClaimTemplates[i].spec`), in kube's order (templates after
/// the retention policy, serviceName before the selector).
#[tokio::test]
async fn stateful_set_service_name_and_claim_templates_on_create() {
    let adm = admission().await;
    let mut s = stateful_set();
    s["spec"]["serviceName"] = json!("DB_svc");
    s["spec"]["volumeClaimTemplates"][0]["spec"] = json!({"resources": {"requests": {}}});
    s["spec"]["replicas"] = json!(-1);
    let err = refused(&adm, create("apps", "statefulsets", "default", s)).await;
    assert_eq!(
        err.message,
        format!("StatefulSet.apps \"db\" is invalid: [spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access mode is required, spec.volumeClaimTemplates[0].spec.resources[storage]: Required value, spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.serviceName: Invalid value: \"DB_svc\": {DNS_LABEL_MSG}]")
    );
    has(
        &err,
        "spec.volumeClaimTemplates[0].spec.accessModes",
        "FieldValueRequired",
        "Required value: at least 1 access mode is required",
    );

    // The second template, with a bad mode, zero storage and class; a
    // template without a spec is the zero claim spec.
    let mut s = stateful_set();
    s["spec"]["volumeClaimTemplates"] = json!([
        s["spec"]["volumeClaimTemplates"][0].clone(),
        {"metadata": {"name": "logs"}, "spec": {"accessModes": ["ReadWriteSometimes"],
            "resources": {"requests": {"storage": "0"}}, "storageClassName": "Fast_SSD"}},
        {"metadata": {"name": "tmp"}}]);
    let err = refused(&adm, create("apps", "statefulsets", "default", s)).await;
    let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    assert_eq!(
        err.message,
        format!("StatefulSet.apps \"db\" is invalid: [spec.volumeClaimTemplates[1].spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\", spec.volumeClaimTemplates[1].spec.resources[storage]: Invalid value: \"0\": must be greater than zero, spec.volumeClaimTemplates[1].spec.storageClassName: Invalid value: \"Fast_SSD\": {subdomain}, spec.volumeClaimTemplates[2].spec.accessModes: Required value: at least 1 access mode is required, spec.volumeClaimTemplates[2].spec.resources[storage]: Required value]")
    );

    // A headless service name that is a label, and no serviceName at all.
    let mut s = stateful_set();
    s["metadata"]["name"] = json!("no-service");
    s["spec"].as_object_mut().unwrap().remove("serviceName");
    adm.admit(create("apps", "statefulsets", "default", s))
        .await
        .unwrap();
}

/// `StatefulSetValidationOptions` on update: a stored invalid serviceName
/// and invalid claim templates (both immutable) do not block other
/// updates, so objects stored before 1.34 stay writable.
#[tokio::test]
async fn stateful_set_update_keeps_stored_service_name_and_claim_templates() {
    let adm = admission().await;
    // A stored object from before 1.34: its serviceName and claim template
    // would not be admitted on create now.
    let mut old = adm
        .admit(create("apps", "statefulsets", "default", stateful_set()))
        .await
        .unwrap()
        .object
        .unwrap();
    old["spec"]["serviceName"] = json!("DB_svc");
    let claim = old["spec"]["volumeClaimTemplates"][0]["spec"]
        .as_object_mut()
        .unwrap();
    claim.remove("accessModes");
    claim.remove("resources");
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(5);
    adm.admit(update("apps", "statefulsets", "", new, old.clone()))
        .await
        .unwrap();
    // Changing them is still the immutable-spec error, alone.
    let mut new = old.clone();
    new["spec"]["serviceName"] = json!("Other_svc");
    let err = refused(&adm, update("apps", "statefulsets", "", new, old)).await;
    assert_eq!(err.message, "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden");
}

/// kube's `Validate{Deployment,StatefulSet,DaemonSet}StatusUpdate`: the
/// collision count may not go down, nor be removed (read as 0).
#[tokio::test]
async fn collision_count_cannot_be_decremented() {
    let adm = admission().await;
    let cases = [
        ("deployments", "Deployment", deployment("web")),
        ("statefulsets", "StatefulSet", stateful_set()),
        ("daemonsets", "DaemonSet", daemon_set()),
    ];
    for (resource, kind, obj) in cases {
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let mut old = adm
            .admit(create("apps", resource, "default", obj))
            .await
            .unwrap()
            .object
            .unwrap();
        old["status"] = json!({"collisionCount": 2});
        let with = |status: Value| {
            let mut new = old.clone();
            new["status"] = status;
            new
        };
        let err = refused(
            &adm,
            update(
                "apps",
                resource,
                "status",
                with(json!({"collisionCount": 1})),
                old.clone(),
            ),
        )
        .await;
        assert_eq!(
            err.message,
            format!("{kind}.apps \"{name}\" is invalid: status.collisionCount: Invalid value: 1: cannot be decremented")
        );
        let err = refused(
            &adm,
            update("apps", resource, "status", with(json!({})), old.clone()),
        )
        .await;
        assert_eq!(
            err.message,
            format!("{kind}.apps \"{name}\" is invalid: status.collisionCount: Invalid value: 0: cannot be decremented")
        );
        // Negative and decremented: both causes, the status rule first.
        let err = refused(
            &adm,
            update(
                "apps",
                resource,
                "status",
                with(json!({"collisionCount": -1})),
                old.clone(),
            ),
        )
        .await;
        assert_eq!(
            err.message,
            format!("{kind}.apps \"{name}\" is invalid: [status.collisionCount: Invalid value: -1: must be greater than or equal to 0, status.collisionCount: Invalid value: -1: cannot be decremented]")
        );
        // Kept or raised: admitted.
        for status in [json!({"collisionCount": 2}), json!({"collisionCount": 3})] {
            adm.admit(update(
                "apps",
                resource,
                "status",
                with(status),
                old.clone(),
            ))
            .await
            .unwrap();
        }
    }
    // A first collision count, set from none: admitted.
    let old = adm
        .admit(create(
            "apps",
            "deployments",
            "default",
            deployment("fresh"),
        ))
        .await
        .unwrap()
        .object
        .unwrap();
    let mut new = old.clone();
    new["status"] = json!({"collisionCount": 1});
    adm.admit(update("apps", "deployments", "status", new, old))
        .await
        .unwrap();
}

/// A DaemonSet's template change is admitted: `spec.templateGeneration`
/// is an internal field (the `deprecated.daemonset.template.generation`
/// annotation in apps/v1) that kube's update strategy sets from the stored
/// object before validating, so its rules never fire through the API.
#[tokio::test]
async fn daemon_set_template_update_is_admitted() {
    let adm = admission().await;
    let old = adm
        .admit(create("apps", "daemonsets", "default", daemon_set()))
        .await
        .unwrap()
        .object
        .unwrap();
    let mut new = old.clone();
    new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("agent:2");
    adm.admit(update("apps", "daemonsets", "", new, old.clone()))
        .await
        .unwrap();
    let mut new = old.clone();
    new["metadata"]["annotations"] = json!({"deprecated.daemonset.template.generation": "0"});
    adm.admit(update("apps", "daemonsets", "", new, old))
        .await
        .unwrap();
}

fn job(name: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl:5.34",
                "command": ["perl", "-e", "print 1"]}]}}}})
}

#[tokio::test]
async fn job_rules() {
    let adm = admission().await;
    let mut j = job("a");
    j["spec"]["parallelism"] = json!(-1);
    j["spec"]["backoffLimit"] = json!(-3);
    j["spec"]["completionMode"] = json!("Sometimes");
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"a\" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.backoffLimit: Invalid value: -3: must be greater than or equal to 0, spec.completionMode: Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\"]");

    let mut j = job("b");
    j["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"b\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"");

    let mut j = job("c");
    j["spec"]["backoffLimitPerIndex"] = json!(2);
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"c\" is invalid: spec.backoffLimitPerIndex: Invalid value: 2: requires indexed completion mode");

    let mut j = job("d");
    j["spec"]["podFailurePolicy"] = json!({"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 3, 2]}},
        {"action": "Explode", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]});
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"d\" is invalid: [spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator, spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0,3,2]: must be ordered, spec.podFailurePolicy.rules[1].action: Unsupported value: \"Explode\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"]");

    let mut j = job("e");
    j["spec"]["manualSelector"] = json!(true);
    j["spec"]["selector"] = json!({"matchLabels": {"app": "e"}});
    j["spec"]["template"]["metadata"] = json!({"labels": {"app": "x"}});
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"e\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"x\"}: `selector` does not match template `labels`");
}

#[tokio::test]
async fn job_updates() {
    let adm = admission().await;
    let mut j = job("a");
    j["spec"]["suspend"] = json!(true);
    let old = adm
        .admit(create("batch", "jobs", "default", j))
        .await
        .unwrap()
        .object
        .unwrap();
    // A suspended, never started Job may change its scheduling directives.
    let mut new = old.clone();
    new["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    new["spec"]["suspend"] = json!(false);
    adm.admit(update("batch", "jobs", "", new, old.clone()))
        .await
        .unwrap();
    // Not its image, nor completions.
    let mut new = old.clone();
    new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl:5.40");
    new["spec"]["completions"] = json!(4);
    let err = refused(&adm, update("batch", "jobs", "", new, old)).await;
    has(
        &err,
        "spec.completions",
        "FieldValueInvalid",
        "Invalid value: 4: field is immutable",
    );
    assert!(causes(&err)
        .iter()
        .any(|(f, _, m)| f == "spec.template" && m.ends_with(": field is immutable")));
}

fn indexed_job(name: &str, completions: i64) -> Value {
    let mut j = job(name);
    j["spec"]["completionMode"] = json!("Indexed");
    j["spec"]["completions"] = json!(completions);
    j
}

/// kube's `validateJobSpec` limits of an Indexed Job.
#[tokio::test]
async fn indexed_job_limits() {
    let adm = admission().await;
    let mut j = indexed_job("a", 5);
    j["spec"]["backoffLimitPerIndex"] = json!(1);
    j["spec"]["maxFailedIndexes"] = json!(6);
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"a\" is invalid: spec.maxFailedIndexes: Invalid value: 6: must be less than or equal to completions");

    let mut j = indexed_job("b", 5);
    j["spec"]["parallelism"] = json!(100_001);
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"b\" is invalid: spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed");

    // Above 100000 completions with a per-index backoff limit.
    let mut j = indexed_job("c", 200_000);
    j["spec"]["backoffLimitPerIndex"] = json!(1);
    j["spec"]["parallelism"] = json!(20_000);
    j["spec"]["maxFailedIndexes"] = json!(150_000);
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"c\" is invalid: [spec.maxFailedIndexes: Invalid value: 150000: must be less than or equal to 100000, spec.parallelism: Invalid value: 20000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index, spec.maxFailedIndexes: Invalid value: 150000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index]");

    let mut j = indexed_job("d", 200_000);
    j["spec"]["backoffLimitPerIndex"] = json!(1);
    j["spec"]["parallelism"] = json!(10);
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"d\" is invalid: spec.maxFailedIndexes: Required value: must be specified when completions is above 100000");

    // Without a per-index backoff limit the high-completion rules stay off.
    let mut j = indexed_job("e", 200_000);
    j["spec"]["parallelism"] = json!(20_000);
    adm.admit(create("batch", "jobs", "default", j))
        .await
        .unwrap();
    // kube's "valid parallelism and maxFailedIndexes for high completions".
    let mut j = indexed_job("f", 100_000);
    j["spec"]["parallelism"] = json!(100_000);
    j["spec"]["maxFailedIndexes"] = json!(100_000);
    j["spec"]["backoffLimitPerIndex"] = json!(1);
    adm.admit(create("batch", "jobs", "default", j))
        .await
        .unwrap();
    let mut j = indexed_job("g", 1_000_000_000);
    j["spec"]["parallelism"] = json!(10_000);
    j["spec"]["maxFailedIndexes"] = json!(10_000);
    j["spec"]["backoffLimitPerIndex"] = json!(1);
    adm.admit(create("batch", "jobs", "default", j))
        .await
        .unwrap();

    // The per-index fields need Indexed mode (an unset mode is NonIndexed).
    let mut j = job("h");
    j["spec"]["backoffLimitPerIndex"] = json!(1);
    j["spec"]["maxFailedIndexes"] = json!(1);
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"h\" is invalid: [spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode, spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode]");
    let mut j = job("i");
    j["spec"]["completionMode"] = json!("NonIndexed");
    j["spec"]["maxFailedIndexes"] = json!(1);
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"i\" is invalid: [spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified, spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode]");
}

/// kube's `validateJobSpec`: managedBy, successPolicy and
/// podReplacementPolicy.
#[tokio::test]
async fn job_managed_by_success_and_replacement_policies() {
    let adm = admission().await;
    let mut j = job("a");
    j["spec"]["managedBy"] = json!("invalid custom controller name");
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"a\" is invalid: spec.managedBy: Invalid value: \"invalid custom controller name\": must be a domain-prefixed path (such as \"acme.io/foo\")");

    let mut j = job("b");
    j["spec"]["managedBy"] = json!(format!("example.com/{}", "x".repeat(60)));
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(
        err.message,
        "Job.batch \"b\" is invalid: spec.managedBy: Too long: may not be more than 63 bytes"
    );

    let mut j = job("c");
    j["spec"]["managedBy"] = json!("Example.com/a b");
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    has(
        &err,
        "spec.managedBy",
        "FieldValueInvalid",
        "Invalid value: \"a b\": Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
    );
    assert!(causes(&err).iter().any(|(f, _, m)| f == "spec.managedBy"
        && m.starts_with("Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain")));

    // A success policy needs Indexed mode.
    let mut j = job("d");
    j["spec"]["successPolicy"] = json!({"rules": [{"succeededCount": 1}]});
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    let c = causes(&err);
    assert_eq!(c.len(), 1, "{c:#?}");
    assert_eq!(
        (c[0].0.as_str(), c[0].1.as_str()),
        ("spec.successPolicy", "FieldValueInvalid")
    );
    assert!(
        c[0].2.ends_with(": requires indexed completion mode"),
        "{c:#?}"
    );

    let mut j = indexed_job("e", 5);
    j["spec"]["successPolicy"] = json!({"rules": [
        {"succeededIndexes": "0,2-1"},
        {"succeededCount": 6},
        {},
        {"succeededIndexes": "0-1", "succeededCount": 3},
        {"succeededIndexes": "1,7"},
        {"succeededIndexes": "x-3"},
        {"succeededIndexes": "1-2-3"}]});
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"e\" is invalid: [spec.successPolicy.rules[0].succeededIndexes: Invalid value: \"0,2-1\": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1, spec.successPolicy.rules[1].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions), spec.successPolicy.rules[2]: Required value: at least one of succeededCount or succeededIndexes must be specified, spec.successPolicy.rules[3].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field), spec.successPolicy.rules[4].succeededIndexes: Invalid value: \"1,7\": error parsing succeededIndexes: too large index: \"7\", spec.successPolicy.rules[5].succeededIndexes: Invalid value: \"x-3\": error parsing succeededIndexes: cannot convert string to integer for index: \"x\", spec.successPolicy.rules[6].succeededIndexes: Invalid value: \"1-2-3\": error parsing succeededIndexes: the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts separated by '-']");

    let mut j = indexed_job("f", 5);
    j["spec"]["successPolicy"] = json!({"rules": []});
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"f\" is invalid: spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified");

    let mut j = indexed_job("g", 10);
    j["spec"]["successPolicy"] = json!({"rules": [
        {"succeededIndexes": "0,2,4", "succeededCount": 1}, {"succeededIndexes": "1,3,5-9"}]});
    adm.admit(create("batch", "jobs", "default", j))
        .await
        .unwrap();

    // podReplacementPolicy: only Failed with a pod failure policy.
    let mut j = job("h");
    j["spec"]["podReplacementPolicy"] = json!("TerminatingOrFailed");
    j["spec"]["podFailurePolicy"] = json!({"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]});
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"h\" is invalid: spec.podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\"");
    let mut j = job("i");
    j["spec"]["podReplacementPolicy"] = json!("Sometimes");
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"i\" is invalid: spec.podReplacementPolicy: Unsupported value: \"Sometimes\": supported values: \"Failed\", \"TerminatingOrFailed\"");
    let mut j = job("j");
    j["spec"]["podReplacementPolicy"] = json!("Failed");
    j["spec"]["managedBy"] = json!("example.com/foo");
    adm.admit(create("batch", "jobs", "default", j))
        .await
        .unwrap();

    // At most 20 onPodConditions patterns per rule.
    let mut j = job("k");
    let patterns: Vec<Value> = (0..21)
        .map(|i| json!({"type": format!("Cond{i}"), "status": "True"}))
        .collect();
    j["spec"]["podFailurePolicy"] =
        json!({"rules": [{"action": "Ignore", "onPodConditions": patterns}]});
    let err = refused(&adm, create("batch", "jobs", "default", j)).await;
    assert_eq!(err.message, "Job.batch \"k\" is invalid: spec.podFailurePolicy.rules[0].onPodConditions: Too many: 21: must have at most 20 items");
}

fn cron_job(schedule: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
        "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure",
            "containers": [{"name": "c", "image": "busybox", "command": ["date"]}]}}}}}})
}

#[tokio::test]
async fn cron_job_rules() {
    let adm = admission().await;
    let err = refused(
        &adm,
        create("batch", "cronjobs", "default", cron_job("bad")),
    )
    .await;
    assert_eq!(err.message, "CronJob.batch \"nightly\" is invalid: spec.schedule: Invalid value: \"bad\": expected exactly 5 fields, found 1: [bad]");
    let err = refused(
        &adm,
        create("batch", "cronjobs", "default", cron_job("61 * * * *")),
    )
    .await;
    assert_eq!(err.message, "CronJob.batch \"nightly\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61");
    let err = refused(
        &adm,
        create("batch", "cronjobs", "default", cron_job("TZ=UTC 0 * * * *")),
    )
    .await;
    assert_eq!(err.message, "CronJob.batch \"nightly\" is invalid: spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead");

    let mut c = cron_job("@daily");
    c["spec"]["concurrencyPolicy"] = json!("Sometimes");
    c["spec"]["successfulJobsHistoryLimit"] = json!(-1);
    c["spec"]["timeZone"] = json!("Mars/Olympus");
    let err = refused(&adm, create("batch", "cronjobs", "default", c)).await;
    has(
        &err,
        "spec.concurrencyPolicy",
        "FieldValueNotSupported",
        "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
    );
    has(
        &err,
        "spec.successfulJobsHistoryLimit",
        "FieldValueInvalid",
        "Invalid value: -1: must be greater than or equal to 0",
    );
    if std::path::Path::new("/usr/share/zoneinfo").is_dir() {
        has(
            &err,
            "spec.timeZone",
            "FieldValueInvalid",
            "Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus",
        );
    }

    let mut c = cron_job("*/5 * * * *");
    c["spec"]["jobTemplate"]["spec"]["selector"] = json!({"matchLabels": {"a": "b"}});
    let err = refused(&adm, create("batch", "cronjobs", "default", c)).await;
    assert_eq!(err.message, "CronJob.batch \"nightly\" is invalid: spec.jobTemplate.spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\"}}: `selector` will be auto-generated");

    let mut c = cron_job("*/5 * * * *");
    c["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    let err = refused(&adm, create("batch", "cronjobs", "default", c)).await;
    assert_eq!(err.message, "CronJob.batch \"nightly\" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"");
}

fn hpa_v2() -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2, "maxReplicas": 10,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 70}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300,
                "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]},
                "scaleUp": {"selectPolicy": "Max", "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15}]}}}})
}

#[tokio::test]
async fn hpa_rules() {
    let adm = admission().await;
    let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "", "name": ""}, "minReplicas": 0, "maxReplicas": 0}});
    let err = refused(
        &adm,
        create("autoscaling", "horizontalpodautoscalers", "default", hpa),
    )
    .await;
    assert_eq!(err.message, "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.maxReplicas: Invalid value: 0: must be greater than 0, spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value, spec.scaleTargetRef.apiVersion: Invalid value: \"\": apiVersion must specify API group, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]");

    let mut hpa = hpa_v2();
    hpa["spec"]["minReplicas"] = json!(5);
    hpa["spec"]["maxReplicas"] = json!(3);
    let err = refused(
        &adm,
        create("autoscaling", "horizontalpodautoscalers", "default", hpa),
    )
    .await;
    assert_eq!(err.message, "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`");

    let mut hpa = hpa_v2();
    hpa["spec"]["metrics"][0]["resource"]["target"] = json!({"type": "Utilization"});
    let err = refused(
        &adm,
        create("autoscaling", "horizontalpodautoscalers", "default", hpa),
    )
    .await;
    assert_eq!(err.message, "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization");

    let mut hpa = hpa_v2();
    hpa["spec"]["behavior"]["scaleUp"]["policies"][0] =
        json!({"type": "Nodes", "value": 0, "periodSeconds": 2000});
    let err = refused(
        &adm,
        create("autoscaling", "horizontalpodautoscalers", "default", hpa),
    )
    .await;
    assert_eq!(err.message, "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: [spec.behavior.scaleUp.policies[0].type: Unsupported value: \"Nodes\": supported values: \"Percent\", \"Pods\", spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero, spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800]");
}

fn pdb() -> Value {
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}})
}

#[tokio::test]
async fn pdb_rules() {
    let adm = admission().await;
    let mut p = pdb();
    p["spec"]["maxUnavailable"] = json!(1);
    let err = refused(&adm, create("policy", "poddisruptionbudgets", "default", p)).await;
    assert_eq!(err.message, "PodDisruptionBudget.policy \"web\" is invalid: spec: Invalid value: {\"minAvailable\":\"50%\",\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"maxUnavailable\":1}: minAvailable and maxUnavailable cannot be both set");

    let mut p = pdb();
    p["spec"]["minAvailable"] = json!(-1);
    p["spec"]["unhealthyPodEvictionPolicy"] = json!("Never");
    let err = refused(&adm, create("policy", "poddisruptionbudgets", "default", p)).await;
    assert_eq!(err.message, "PodDisruptionBudget.policy \"web\" is invalid: [spec.minAvailable: Invalid value: -1: must be greater than or equal to 0, spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"]");

    let mut p = pdb();
    p["spec"]["minAvailable"] = json!("120%");
    p["spec"]["selector"] = json!({"matchLabels": {"app": "bad value!"}});
    let err = refused(&adm, create("policy", "poddisruptionbudgets", "default", p)).await;
    has(
        &err,
        "spec.minAvailable",
        "FieldValueInvalid",
        "Invalid value: \"120%\": must not be greater than 100%",
    );
    assert!(causes(&err)
        .iter()
        .any(|(f, _, m)| f == "spec.selector.matchLabels"
            && m.starts_with("Invalid value: \"bad value!\"")));
}

#[tokio::test]
async fn no_false_rejections() {
    let adm = admission().await;
    let mut rolling = deployment("rolling");
    rolling["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}});
    rolling["spec"]["minReadySeconds"] = json!(10);
    rolling["spec"]["selector"] = json!({"matchLabels": {"app": "rolling"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]},
            {"key": "canary", "operator": "DoesNotExist"}]});
    rolling["spec"]["template"]["metadata"]["labels"] = json!({"app": "rolling", "tier": "web"});
    let mut recreate = deployment("recreate");
    recreate["spec"]["strategy"] = json!({"type": "Recreate"});
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "rs"}},
            "template": {"metadata": {"labels": {"app": "rs"}},
                "spec": {"containers": [container()]}}}});
    let mut parallel = stateful_set();
    parallel["metadata"]["name"] = json!("cache");
    parallel["spec"]["podManagementPolicy"] = json!("Parallel");
    parallel["spec"]["updateStrategy"] = json!({"type": "RollingUpdate",
        "rollingUpdate": {"partition": 1}});
    parallel["spec"]["persistentVolumeClaimRetentionPolicy"] =
        json!({"whenDeleted": "Delete", "whenScaled": "Retain"});
    parallel["spec"]["ordinals"] = json!({"start": 1});
    let mut on_delete = daemon_set();
    on_delete["metadata"]["name"] = json!("agent-2");
    on_delete["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    let mut surge = daemon_set();
    surge["metadata"]["name"] = json!("agent-3");
    surge["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}});
    let mut indexed = job("indexed");
    indexed["spec"]["completionMode"] = json!("Indexed");
    indexed["spec"]["completions"] = json!(5);
    indexed["spec"]["parallelism"] = json!(2);
    indexed["spec"]["backoffLimitPerIndex"] = json!(1);
    indexed["spec"]["maxFailedIndexes"] = json!(2);
    indexed["spec"]["podFailurePolicy"] = json!({"rules": [
        {"action": "FailIndex", "onExitCodes": {"containerName": "pi", "operator": "In", "values": [1, 42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]});
    let mut onfailure = job("onfailure");
    onfailure["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    onfailure["spec"]["ttlSecondsAfterFinished"] = json!(100);
    onfailure["spec"]["activeDeadlineSeconds"] = json!(600);
    let mut manual = job("manual");
    manual["spec"]["manualSelector"] = json!(true);
    manual["spec"]["selector"] = json!({"matchLabels": {"job": "manual"}});
    manual["spec"]["template"]["metadata"] = json!({"labels": {"job": "manual"}});
    let mut cron_tz = cron_job("30 2 * * 1-5");
    cron_tz["metadata"]["name"] = json!("weekday");
    cron_tz["spec"]["timeZone"] = json!("UTC");
    cron_tz["spec"]["concurrencyPolicy"] = json!("Forbid");
    cron_tz["spec"]["startingDeadlineSeconds"] = json!(200);
    cron_tz["spec"]["successfulJobsHistoryLimit"] = json!(0);
    let mut cron_names = cron_job("0 0 1 jan,jul SUN");
    cron_names["metadata"]["name"] = json!("names");
    let mut cron_every = cron_job("@every 2h30m");
    cron_every["metadata"]["name"] = json!("every");
    let hpa_v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "v1"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 80}});
    let mut hpa_pods = hpa_v2();
    hpa_pods["metadata"]["name"] = json!("pods");
    hpa_pods["spec"]["metrics"] = json!([
        {"type": "Pods", "pods": {"metric": {"name": "rps"},
            "target": {"type": "AverageValue", "averageValue": "100"}}},
        {"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": "500Mi"}}}]);
    let pdb_max = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "max"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}},
            "unhealthyPodEvictionPolicy": "AlwaysAllow"}});
    let cases = [
        ("apps", "deployments", deployment("plain")),
        ("apps", "deployments", rolling),
        ("apps", "deployments", recreate),
        ("apps", "replicasets", rs),
        ("apps", "statefulsets", stateful_set()),
        ("apps", "statefulsets", parallel),
        ("apps", "daemonsets", daemon_set()),
        ("apps", "daemonsets", on_delete),
        ("apps", "daemonsets", surge),
        ("batch", "jobs", job("plain")),
        ("batch", "jobs", indexed),
        ("batch", "jobs", onfailure),
        ("batch", "jobs", manual),
        ("batch", "cronjobs", cron_job("*/15 * * * *")),
        ("batch", "cronjobs", cron_tz),
        ("batch", "cronjobs", cron_names),
        ("batch", "cronjobs", cron_every),
        ("autoscaling", "horizontalpodautoscalers", hpa_v1),
        ("autoscaling", "horizontalpodautoscalers", hpa_v2()),
        ("autoscaling", "horizontalpodautoscalers", hpa_pods),
        ("policy", "poddisruptionbudgets", pdb()),
        ("policy", "poddisruptionbudgets", pdb_max),
    ];
    for (group, resource, obj) in cases {
        let name = obj["metadata"]["name"].clone();
        if let Err(e) = adm.admit(create(group, resource, "default", obj)).await {
            panic!("{resource}/{name} refused: {}", e.message);
        }
    }
}
