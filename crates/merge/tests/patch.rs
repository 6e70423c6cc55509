//! Patches as a client sees them: results and exact errors.

use keelson_api::{GroupResource, MergeApi, PatchRequest, PatchType};
use keelson_merge::LocalMerge;
use serde_json::{json, Value};

fn original() -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "labels": {"a": "1", "b": "2"}},
        "data": {"k": "v", "list": "x"}})
}

async fn patch(patch_type: PatchType, body: &str) -> Result<Value, keelson_api::ApiError> {
    LocalMerge::new(keelson_registry::Catalog::builtin())
        .patch(PatchRequest {
            patch_type,
            gr: GroupResource::new("", "configmaps"),
            kind: "ConfigMap".into(),
            owner: keelson_api::FieldOwner {
                manager: "test".into(),
                api_version: "v1".into(),
                subresource: String::new(),
            },
            force: false,
            original: original(),
            patch: body.as_bytes().to_vec(),
        })
        .await
}

#[tokio::test]
async fn json_patch_operations() {
    let body = r#"[
        {"op": "test", "path": "/data/k", "value": "v"},
        {"op": "add", "path": "/data/new", "value": "n"},
        {"op": "replace", "path": "/data/k", "value": "v2"},
        {"op": "remove", "path": "/metadata/labels/b"},
        {"op": "copy", "from": "/data/new", "path": "/data/copied"},
        {"op": "move", "from": "/data/list", "path": "/data/moved"}
    ]"#;
    let out = patch(PatchType::Json, body).await.unwrap();
    assert_eq!(
        out["data"],
        json!({"k": "v2", "new": "n", "copied": "n", "moved": "x"})
    );
    assert_eq!(out["metadata"]["labels"], json!({"a": "1"}));
}

#[tokio::test]
async fn failing_json_patch_ops_are_generic_422() {
    for body in [
        r#"[{"op": "test", "path": "/data/k", "value": "other"}]"#,
        r#"[{"op": "remove", "path": "/data/missing"}]"#,
        r#"[{"op": "frobnicate", "path": "/data/k"}]"#,
    ] {
        let err = patch(PatchType::Json, body).await.unwrap_err();
        assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"), "{body}");
        assert_eq!(
            err.message,
            "the server rejected our request due to an error in our request"
        );
        assert_eq!(err.to_status_json()["details"], json!({}));
    }
}

#[tokio::test]
async fn undecodable_json_patches_are_400() {
    let cases = [
        ("not json", "error decoding patch: invalid character 'o' in literal null (expecting 'u')"),
        (r#"{"op": "add"}"#, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
        (r#"[{"op": 1, "path": "/a"}]"#, "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"),
        (r#"[5]"#, "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp"),
    ];
    for (body, msg) in cases {
        let err = patch(PatchType::Json, body).await.unwrap_err();
        assert_eq!(
            (err.code, err.reason.as_str()),
            (400, "BadRequest"),
            "{body}"
        );
        assert_eq!(err.message, msg);
    }
}

#[tokio::test]
async fn oversized_json_patches_are_413() {
    let ops: Vec<Value> = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/kind", "value": "ConfigMap"}))
        .collect();
    let body = serde_json::to_string(&ops).unwrap();
    let err = patch(PatchType::Json, &body).await.unwrap_err();
    assert_eq!(
        (err.code, err.reason.as_str()),
        (413, "RequestEntityTooLarge")
    );
    assert_eq!(err.message, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001");

    let body = serde_json::to_string(&ops[..10_000]).unwrap();
    assert!(patch(PatchType::Json, &body).await.is_ok());
}

#[tokio::test]
async fn json_patch_must_leave_an_object() {
    let err = patch(
        PatchType::Json,
        r#"[{"op": "replace", "path": "", "value": 5}]"#,
    )
    .await
    .unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(err.message.starts_with(" \"\" is invalid: patch: Invalid value: \"5\": couldn't get version/kind; json parse error: json: cannot unmarshal number into Go value of type struct"), "{}", err.message);
}

#[tokio::test]
async fn merge_patch_sets_and_deletes() {
    let out = patch(
        PatchType::Merge,
        r#"{"data": {"k": null, "n": "1"}, "metadata": {"labels": {"a": null}}}"#,
    )
    .await
    .unwrap();
    assert_eq!(out["data"], json!({"list": "x", "n": "1"}));
    assert_eq!(out["metadata"]["labels"], json!({"b": "2"}));
    assert_eq!(out["metadata"]["name"], "c");
}

#[tokio::test]
async fn bad_merge_patches_are_400() {
    let cases = [
        ("{", "error decoding patch: unexpected end of JSON input"),
        ("[1]", "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("\"x\"", "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}"),
        ("null", "Invalid JSON Patch"),
    ];
    for (body, msg) in cases {
        let err = patch(PatchType::Merge, body).await.unwrap_err();
        assert_eq!(
            (err.code, err.reason.as_str(), err.message.as_str()),
            (400, "BadRequest", msg)
        );
    }
}

#[tokio::test]
async fn apply_bodies_are_yaml_and_must_be_objects() {
    let err = patch(PatchType::Apply, "a: [").await.unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (400, "BadRequest"));
    assert!(
        err.message.starts_with("error decoding YAML: "),
        "{}",
        err.message
    );
    let err = patch(PatchType::Apply, "[1]").await.unwrap_err();
    assert_eq!(err.code, 400);
    let out = patch(
        PatchType::Apply,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\ndata:\n  n: applied\n",
    )
    .await
    .unwrap();
    assert_eq!(out["data"]["n"], "applied");
    assert_eq!(out["metadata"]["managedFields"][0]["manager"], "test");
    assert_eq!(out["metadata"]["managedFields"][0]["operation"], "Apply");
    // The fields nobody tracked belong to kube's `before-first-apply`.
    assert_eq!(
        out["metadata"]["managedFields"][1]["manager"],
        "before-first-apply"
    );
    let err = patch(
        PatchType::Apply,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\ndata:\n  k: mine\n",
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.k"
    );
}
