use serde_json::json;

use super::*;
use keelson_registry::CatalogSnapshot;

const T1: &str = "2025-01-01T00:00:01Z";
const T2: &str = "2025-01-01T00:00:02Z";

fn cm_manager() -> FieldManager<'static> {
    let snap = CatalogSnapshot::builtin();
    FieldManager::new(
        TypeRef::for_kind(snap, "v1", "ConfigMap"),
        "v1",
        "ConfigMap",
        "",
        false,
    )
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}, "data": data})
}

#[test]
fn create_records_an_update_entry_of_the_added_fields() {
    let fm = cm_manager();
    let out = fm.update(&Value::Null, cm(json!({"a": "1"})), "kubectl-create", T1);
    assert_eq!(
        out["metadata"]["managedFields"],
        json!([{"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T1,
            "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:a": {}}}}])
    );
}

#[test]
fn an_unchanged_update_keeps_managed_fields_and_their_time() {
    let fm = cm_manager();
    let created = fm.update(&Value::Null, cm(json!({"a": "1"})), "m", T1);
    let again = fm.update(&created, created.clone(), "m", T2);
    assert_eq!(again, created);
    let other = fm.update(&created, created.clone(), "other", T2);
    assert_eq!(
        other["metadata"]["managedFields"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn an_update_takes_changed_fields_from_other_managers() {
    let fm = cm_manager();
    let created = fm.update(&Value::Null, cm(json!({"a": "1", "b": "1"})), "first", T1);
    let mut changed = created.clone();
    changed["data"]["a"] = json!("2");
    let out = fm.update(&created, changed, "second", T2);
    assert_eq!(
        out["metadata"]["managedFields"],
        json!([
            {"manager": "first", "operation": "Update", "apiVersion": "v1", "time": T1,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:b": {}}}},
            {"manager": "second", "operation": "Update", "apiVersion": "v1", "time": T2,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}
        ])
    );
}

#[test]
fn empty_managed_fields_in_an_update_clear_them() {
    let fm = cm_manager();
    let created = fm.update(&Value::Null, cm(json!({"a": "1"})), "m", T1);
    for reset in [json!([]), json!([{}])] {
        let mut next = created.clone();
        next["data"]["b"] = json!("2");
        next["metadata"]["managedFields"] = reset;
        let out = fm.update(&created, next, "m", T2);
        assert!(out["metadata"].get("managedFields").is_none(), "{out}");
    }
}

#[test]
fn applies_share_equal_values_and_conflict_on_different_ones() {
    let fm = cm_manager();
    let a = fm
        .apply(&Value::Null, &cm(json!({"k": "v"})), "a", false, T1)
        .unwrap();
    let shared = fm
        .apply(&a, &cm(json!({"k": "v"})), "b", false, T2)
        .unwrap();
    let entries = shared["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    // The object did not change, so b's entry has no time (as kube).
    assert!(entries
        .iter()
        .any(|e| e["manager"] == "b" && e.get("time").is_none()));

    let err = fm
        .apply(&shared, &cm(json!({"k": "other"})), "c", false, T2)
        .unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .data.k\nconflicts with \"b\":\n- .data.k"
    );
    let causes = &err.details.as_ref().unwrap().causes;
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    assert_eq!(causes[0].field, ".data.k");
    assert_eq!(causes[0].message, "conflict with \"a\"");

    let forced = fm
        .apply(&shared, &cm(json!({"k": "other"})), "c", true, T2)
        .unwrap();
    assert_eq!(forced["data"]["k"], "other");
    let entries = forced["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["manager"], "c");
}

#[test]
fn an_applier_removes_what_it_stops_specifying_unless_shared() {
    let fm = cm_manager();
    let a = fm
        .apply(
            &Value::Null,
            &cm(json!({"x": "1", "y": "1"})),
            "a",
            false,
            T1,
        )
        .unwrap();
    let b = fm
        .apply(&a, &cm(json!({"y": "1"})), "b", false, T1)
        .unwrap();
    let out = fm.apply(&b, &cm(json!({})), "a", false, T2).unwrap();
    assert_eq!(out["data"], json!({"y": "1"}));
}

#[test]
fn apply_checks_kind_and_managed_fields_and_schema() {
    let fm = cm_manager();
    let mut wrong = cm(json!({}));
    wrong["kind"] = json!("Secret");
    assert_eq!(
        fm.apply(&Value::Null, &wrong, "a", false, T1)
            .unwrap_err()
            .message,
        "invalid object type: /v1, Kind=Secret"
    );
    let mut mf = cm(json!({}));
    mf["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        fm.apply(&Value::Null, &mf, "a", false, T1)
            .unwrap_err()
            .message,
        "metadata.managedFields must be nil"
    );
    let mut unknown = cm(json!({}));
    unknown["spec"] = json!({});
    let e = fm
        .apply(&Value::Null, &unknown, "a", false, T1)
        .unwrap_err();
    assert_eq!(e.code, 500);
    assert_eq!(
        e.message,
        "failed to create typed patch object (d/c; /v1, Kind=ConfigMap): .spec: field not declared in schema"
    );
}

#[test]
fn a_created_deployment_does_not_own_its_zero_structs() {
    let snap = CatalogSnapshot::builtin();
    let fm = FieldManager::new(
        TypeRef::for_kind(snap, "apps/v1", "Deployment"),
        "apps/v1",
        "Deployment",
        "",
        true,
    );
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"app": "x"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
        "status": {}});
    let out = fm.update(&Value::Null, d, "kubectl-create", T1);
    assert_eq!(
        out["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:replicas": {}, "f:selector": {},
                "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
}

#[test]
fn a_kubectl_server_side_apply_keeps_the_last_applied_annotation_in_step() {
    let fm = cm_manager();
    let mut live = fm.update(
        &Value::Null,
        cm(json!({"a": "1"})),
        "kubectl-client-side-apply",
        T1,
    );
    live["metadata"]["annotations"] = json!({LAST_APPLIED: "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"1\"}}\n"});
    let mut config = cm(json!({"a": "2"}));
    config["metadata"]["annotations"] = json!({});
    // The client-side owner's field is taken over without a conflict: the
    // live value is the last-applied one.
    let out = fm.apply(&live, &config, "kubectl", false, T2).unwrap();
    assert_eq!(out["data"]["a"], "2");
    assert_eq!(
        out["metadata"]["annotations"][LAST_APPLIED],
        "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"c\",\"namespace\":\"d\"}}\n"
    );
    // Another manager name gets the conflict.
    let e = fm.apply(&live, &config, "other", false, T2).unwrap_err();
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.a"
    );
}
