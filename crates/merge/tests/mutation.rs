//! MutatingAdmissionPolicy's apply-configuration merge against the
//! built-in schemas: kube's `mutating/patch` tests' cases (the atomic
//! selector refused, containers merged by name, undeclared fields).

use keelson_merge::mutation::apply_configuration;
use keelson_registry::Catalog;
use serde_json::{json, Value};

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "a"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [
                {"name": "app", "image": "a:1"}
            ]}}
        }
    })
}

fn apply(patch: Value) -> Result<Value, String> {
    let catalog = Catalog::builtin();
    let snap = catalog.snapshot();
    let mut patch = patch;
    patch["apiVersion"] = "apps/v1".into();
    patch["kind"] = "Deployment".into();
    apply_configuration(&snap, "apps/v1", "Deployment", &deployment(), &patch)
}

#[test]
fn granular_fields_merge_and_lists_merge_by_key() {
    let out = apply(json!({"metadata": {"labels": {"env": "prod"}}, "spec": {"replicas": 3,
        "template": {"spec": {"containers": [{"name": "sidecar", "image": "s:1"}, {"name": "app", "image": "a:2"}]}}}}))
    .unwrap();
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "a", "env": "prod"})
    );
    assert_eq!(out["spec"]["replicas"], 3);
    let containers = &out["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        containers,
        &json!([{"name": "sidecar", "image": "s:1"}, {"name": "app", "image": "a:2"}])
    );
    assert_eq!(
        out["spec"]["selector"],
        json!({"matchLabels": {"app": "a"}})
    );
}

#[test]
fn atomic_parts_and_undeclared_fields_are_refused() {
    assert_eq!(
        apply(json!({"spec": {"selector": {"matchLabels": {"l": "v"}}}})).unwrap_err(),
        "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector"
    );
    assert_eq!(
        apply(json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "command": ["sh"]}]}}}}))
            .unwrap_err(),
        "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.template.spec.containers[0].command"
    );
    assert_eq!(
        apply(json!({"spec": {"bogus": 1}})).unwrap_err(),
        "failed to convert patch object to typed object: .spec.bogus: field not declared in schema"
    );
    // Values of the wrong type, as structured-merge-diff words them.
    assert_eq!(
        apply(json!({"spec": {"replicas": "many"}})).unwrap_err(),
        "failed to convert patch object to typed object: .spec.replicas: expected numeric (int or float), got string"
    );
    assert_eq!(
        apply(json!({"metadata": {"labels": {"tier": 2}}, "spec": {"paused": "no"}})).unwrap_err(),
        "failed to convert patch object to typed object: errors:\n  .metadata.labels.tier: expected string, got &value.valueUnstructured{Value:2}\n  .spec.paused: expected boolean, got &{no}"
    );
}
