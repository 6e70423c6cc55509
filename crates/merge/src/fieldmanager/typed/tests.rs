use serde_json::json;

use super::*;
use keelson_registry::CatalogSnapshot;

fn pod() -> TypeRef<'static> {
    TypeRef::for_kind(CatalogSnapshot::builtin(), "v1", "Pod")
}

fn fields(set: &Set) -> Value {
    set.to_fields_v1()
}

#[test]
fn field_set_of_a_config_has_items_and_map_keys_but_not_structs() {
    let config = json!({"metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}});
    let set = to_field_set(&config, pod()).unwrap();
    assert_eq!(
        fields(&set),
        json!({"f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {},
                "f:image": {}, "f:name": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}}}})
    );
}

#[test]
fn compare_reports_added_containers_and_modified_leaves() {
    let a = json!({"metadata": {}, "spec": {"containers": [{"name": "c", "image": "1"}]}});
    let b = json!({"metadata": {"labels": {"x": "y"}},
        "spec": {"containers": [{"name": "c", "image": "2"}, {"name": "d", "image": "1"}]}});
    let c = compare(&a, &b, pod()).unwrap();
    assert_eq!(
        fields(&c.added),
        json!({"f:metadata": {"f:labels": {".": {}, "f:x": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"d\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
    );
    assert_eq!(
        fields(&c.modified),
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {"f:image": {}}}}})
    );
    assert!(c.removed.is_empty());
    let back = compare(&b, &a, pod()).unwrap();
    assert_eq!(fields(&back.removed), fields(&c.added));
}

#[test]
fn merge_keeps_live_items_and_takes_config_values_in_config_order() {
    let live = json!({"spec": {"containers": [
        {"name": "a", "image": "1"}, {"name": "b", "image": "1"}, {"name": "c", "image": "1"}]}});
    let config =
        json!({"spec": {"containers": [{"name": "c", "image": "2"}, {"name": "a", "image": "2"}]}});
    let out = merge(&live, &config, pod()).unwrap();
    let names: Vec<&str> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b", "c", "a"]);
    assert_eq!(out["spec"]["containers"][1]["image"], "2");
    // Atomic lists are replaced.
    let live = json!({"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}});
    let config = json!({"spec": {"containers": [{"name": "a", "args": ["z"]}]}});
    let out = merge(&live, &config, pod()).unwrap();
    assert_eq!(out["spec"]["containers"][0]["args"], json!(["z"]));
}

#[test]
fn remove_items_drops_members_and_emptied_maps() {
    let obj = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
    let mut set = Set::new();
    set.insert(&[
        PathElement::field("metadata"),
        PathElement::field("labels"),
        PathElement::field("a"),
    ]);
    set.insert(&[
        PathElement::field("spec"),
        PathElement::field("containers"),
        PathElement::Key(vec![("name".into(), json!("a"))].into()),
    ]);
    let out = remove_items(&obj, &set, pod());
    assert_eq!(
        out,
        json!({"metadata": {}, "spec": {"containers": [{"name": "b"}]}})
    );
}

#[test]
fn validation_names_undeclared_fields_and_missing_keys() {
    let errs = validate(
        &json!({"spec": {"containers": [{"image": "x"}], "foo": 1, "bar": 2}}),
        pod(),
    );
    assert_eq!(
        errs,
        // The walk stops at the first undeclared field of a struct.
        [
            ".spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)",
            ".spec.foo: field not declared in schema",
        ]
    );
}
