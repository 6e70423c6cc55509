//! Field validation: wrong types, unknown and duplicate fields.

use keelson_api::{AdmissionApi, FieldValidation};
use serde_json::json;

use crate::support::{admission, create};

fn deployment() -> serde_json::Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}
            }
        }
    })
}

#[tokio::test]
async fn wrong_types_are_400_with_go_wording() {
    let adm = admission().await;
    let cases = [
        (
            "", "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": 5}}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            "", "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": 5}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string",
        ),
        (
            "", "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": []}}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string",
        ),
        (
            "", "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "x"}),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta",
        ),
        (
            "", "secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "aGV$bG8="}}),
            "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3",
        ),
        (
            "", "services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                   "spec": {"ports": [{"port": 80, "targetPort": true}]}}),
            "Service in version \"v1\" cannot be handled as a Service: json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32",
        ),
        (
            "", "pods",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                   "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "lots"}}}]}}),
            "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ];
    for (group, resource, obj, msg) in cases {
        let mut req = create(group, resource, "default", obj);
        req.field_validation = FieldValidation::Ignore;
        let err = adm.admit(req).await.unwrap_err();
        assert_eq!(
            (err.code, err.reason.as_str()),
            (400, "BadRequest"),
            "{msg}"
        );
        assert_eq!(err.message, msg);
        assert!(err.details.is_none());
    }
}

#[tokio::test]
async fn nested_wrong_types_name_the_innermost_struct() {
    let adm = admission().await;
    let mut d = deployment();
    d["spec"]["replicas"] = json!("3");
    let err = adm
        .admit(create("apps", "deployments", "default", d))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32");

    let mut d = deployment();
    d["spec"]["template"]["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": 1}]);
    let err = adm
        .admit(create("apps", "deployments", "default", d))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string");

    let mut d = deployment();
    d["spec"]["replicas"] = json!(1.5);
    let err = adm
        .admit(create("apps", "deployments", "default", d))
        .await
        .unwrap_err();
    assert!(err.message.ends_with("json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"), "{}", err.message);
}

#[tokio::test]
async fn non_object_body_is_a_type_error() {
    let adm = admission().await;
    let mut req = create("", "configmaps", "default", json!({"kind": "ConfigMap"}));
    req.object = Some(json!([1, 2]));
    let err = adm.admit(req).await.unwrap_err();
    assert_eq!(err.code, 400);
    assert_eq!(err.message, "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go value of type v1.ConfigMap");
}

#[tokio::test]
async fn null_values_and_int_or_string_are_accepted() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "labels": null},
        "spec": {"ports": [{"name": "a", "port": 80, "targetPort": "http"}, {"name": "b", "port": 81, "targetPort": 8081}], "selector": null}});
    let resp = adm
        .admit(create("", "services", "default", obj))
        .await
        .unwrap();
    assert!(resp.warnings.is_empty());
}

fn with_unknown_fields() -> (serde_json::Value, Vec<u8>) {
    let raw = br#"{"apiVersion":"apps/v1","kind":"Deployment",
        "metadata":{"name":"web","namespace":"default","name":"web"},
        "spec":{"foo":1,"selector":{"matchLabels":{"app":"web"}},
          "template":{"metadata":{"labels":{"app":"web"}},
            "spec":{"containers":[{"name":"c","image":"nginx:1.27","unknownNested":true}]}}}}"#;
    let obj: serde_json::Value = serde_json::from_slice(raw).unwrap();
    (obj, raw.to_vec())
}

#[tokio::test]
async fn strict_rejects_unknown_and_duplicate_fields_in_document_order() {
    let adm = admission().await;
    let (obj, raw) = with_unknown_fields();
    let mut req = create("apps", "deployments", "default", obj);
    req.raw_body = Some(raw);
    req.field_validation = FieldValidation::Strict;
    let err = adm.admit(req).await.unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (400, "BadRequest"));
    assert_eq!(err.message, "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: duplicate field \"metadata.name\", unknown field \"spec.foo\", unknown field \"spec.template.spec.containers[0].unknownNested\"");
    assert!(err.details.is_none());
}

#[tokio::test]
async fn warn_reports_each_item_and_drops_unknown_fields() {
    let adm = admission().await;
    let (obj, raw) = with_unknown_fields();
    let mut req = create("apps", "deployments", "default", obj);
    req.raw_body = Some(raw);
    let resp = adm.admit(req).await.unwrap();
    assert_eq!(
        resp.warnings,
        [
            "duplicate field \"metadata.name\"",
            "unknown field \"spec.foo\"",
            "unknown field \"spec.template.spec.containers[0].unknownNested\"",
        ]
    );
    let o = resp.object.unwrap();
    assert!(o["spec"].get("foo").is_none());
    assert!(o["spec"]["template"]["spec"]["containers"][0]
        .get("unknownNested")
        .is_none());
    assert_eq!(
        o["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
}

#[tokio::test]
async fn ignore_is_silent_but_still_drops_unknown_fields() {
    let adm = admission().await;
    let (obj, raw) = with_unknown_fields();
    let mut req = create("apps", "deployments", "default", obj);
    req.raw_body = Some(raw);
    req.field_validation = FieldValidation::Ignore;
    let resp = adm.admit(req).await.unwrap();
    assert!(resp.warnings.is_empty());
    assert!(resp.object.unwrap()["spec"].get("foo").is_none());
}

#[tokio::test]
async fn without_a_raw_body_unknown_fields_come_from_the_object() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "bogus": 1}, "data": {"k": "v"}, "extra": {"x": 1}});
    let mut req = create("", "configmaps", "default", obj);
    req.field_validation = FieldValidation::Strict;
    let err = adm.admit(req).await.unwrap_err();
    assert_eq!(err.message, "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"metadata.bogus\", unknown field \"extra\"");
}

#[tokio::test]
async fn strict_patch_failures_are_422_in_patch_form() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "foo": 1});
    let mut req = create("", "configmaps", "default", obj);
    req.is_patch = true;
    req.field_validation = FieldValidation::Strict;
    let err = adm.admit(req).await.unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        r#" "" is invalid: patch: Invalid value: "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"foo\":1}": strict decoding error: unknown field "foo""#
    );
    let d = err.details.unwrap();
    assert_eq!(d.causes[0].field, "patch");
    assert_eq!(d.causes[0].reason, "FieldValueInvalid");
}

/// Warnings recorded before a later step refuses reach the client with
/// the error, as kube's warning recorder sends them.
#[tokio::test]
async fn warnings_ride_on_a_later_refusal() {
    let adm = admission().await;
    let (mut obj, _) = with_unknown_fields();
    obj["spec"]["replicas"] = json!(-1);
    let raw = serde_json::to_vec(&obj).unwrap();
    let mut req = create("apps", "deployments", "default", obj);
    req.raw_body = Some(raw);
    let err = adm.admit(req).await.unwrap_err();
    assert_eq!(err.code, 422, "{}", err.message);
    assert!(
        err.warnings
            .contains(&"unknown field \"spec.foo\"".to_string()),
        "{:?}",
        err.warnings
    );
    // Not part of the Status body.
    assert!(!err.to_status_json().to_string().contains("unknown field"));
}
