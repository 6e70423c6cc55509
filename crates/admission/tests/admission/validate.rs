//! Validation: `422 Invalid` with kube's field errors.

use keelson_api::AdmissionApi;
use serde_json::json;

use crate::support::{admission, create};

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

#[tokio::test]
async fn invalid_names_per_resource_rule() {
    let adm = admission().await;
    let cases = [
        (
            "configmaps",
            "default",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Foo_Bar"}}),
            "ConfigMap",
            "Foo_Bar",
            SUBDOMAIN,
        ),
        (
            "namespaces",
            "",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "A_b"}}),
            "Namespace",
            "A_b",
            LABEL,
        ),
        // A valid subdomain fails as a label only for its dots.
        (
            "namespaces",
            "",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}),
            "Namespace",
            "a.b",
            "must not contain dots",
        ),
        (
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1abc"}, "spec": {"ports": [{"port": 80}]}}),
            "Service",
            "1abc",
            DNS1035,
        ),
    ];
    for (resource, ns, obj, kind, name, msg) in cases {
        let err = adm.admit(create("", resource, ns, obj)).await.unwrap_err();
        assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
        assert_eq!(
            err.message,
            format!("{kind} {name:?} is invalid: metadata.name: Invalid value: {name:?}: {msg}")
        );
        let d = err.details.unwrap();
        assert_eq!((d.kind.as_str(), d.name.as_str()), (kind, name));
        assert_eq!(d.causes.len(), 1);
        assert_eq!(d.causes[0].field, "metadata.name");
        assert_eq!(d.causes[0].reason, "FieldValueInvalid");
    }
}

#[tokio::test]
async fn rbac_names_are_path_segments() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "a/b"}});
    let err = adm
        .admit(create("rbac.authorization.k8s.io", "clusterroles", "", obj))
        .await
        .unwrap_err();
    assert_eq!(err.message, "ClusterRole.rbac.authorization.k8s.io \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not contain '/'");
    assert_eq!(err.details.unwrap().group, "rbac.authorization.k8s.io");
}

#[tokio::test]
async fn missing_name_and_bad_generate_name() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
    let err = adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .unwrap_err();
    assert_eq!(err.message, "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required");

    let obj =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "Web-"}});
    let err = adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .unwrap_err();
    assert_eq!(err.message, format!("ConfigMap \"Web-\" is invalid: metadata.generateName: Invalid value: \"Web-\": {SUBDOMAIN}"));

    let obj =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "web-"}});
    assert!(adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .is_ok());
}

#[tokio::test]
async fn labels_and_annotations() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
        "labels": {"-bad": "ok", "good": "bad value"}}});
    let err = adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .unwrap_err();
    assert_eq!(err.message, "ConfigMap \"c\" is invalid: [metadata.labels: Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]");

    // Annotation keys are checked case-insensitively.
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
        "annotations": {"Example.COM/Key": "x"}}});
    assert!(adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .is_ok());

    let big = "x".repeat(262_144);
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {"a": big}}});
    let err = adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .unwrap_err();
    assert_eq!(err.message, "ConfigMap \"c\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes");
    assert_eq!(err.details.unwrap().causes[0].reason, "FieldValueTooLong");
}

#[tokio::test]
async fn namespace_scope() {
    let adm = admission().await;
    // A namespaced object without a namespace anywhere.
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let err = adm
        .admit(create("", "configmaps", "", obj))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "ConfigMap \"c\" is invalid: metadata.namespace: Required value"
    );

    // The request namespace fills an empty one.
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let resp = adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .unwrap();
    assert_eq!(resp.object.unwrap()["metadata"]["namespace"], "default");

    // A different one is a 400.
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "other"}});
    let err = adm
        .admit(create("", "configmaps", "default", obj))
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            400,
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    );

    // Cluster-scoped objects lose a namespace, as kube's BeforeCreate does.
    let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "namespace": "x"}});
    let resp = adm.admit(create("", "namespaces", "", obj)).await.unwrap();
    assert!(resp.object.unwrap()["metadata"].get("namespace").is_none());
}

#[tokio::test]
async fn required_fields_use_validation_paths() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}});
    let err = adm
        .admit(create("", "pods", "default", obj))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Pod \"p\" is invalid: spec.containers: Required value"
    );
    assert_eq!(err.details.unwrap().causes[0].reason, "FieldValueRequired");

    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"image": "nginx", "ports": [{"name": "http"}]}]}});
    let err = adm
        .admit(create("", "pods", "default", obj))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Pod \"p\" is invalid: [spec.containers[0].name: Required value, spec.containers[0].ports[0].containerPort: Required value]");
}
