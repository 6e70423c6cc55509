use keelson_apimachinery::FieldError;
use serde_json::{json, Value};

use crate::props::Props;
use crate::resources::{catalog_entries, definition_name, pointer};
use crate::validation::validate_create;
use crate::{Compiled, Crd};

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com", "uid": "u1", "generation": 1},
        "spec": {
            "group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "listKind": "CronTabList", "shortNames": ["ct"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
                        "image": {"type": "string", "default": "nginx"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                        "color": {"type": "string", "enum": ["red", "blue"]},
                        "port": {"x-kubernetes-int-or-string": true},
                        "email": {"type": "string", "format": "email"},
                        "note": {"type": "string", "nullable": true},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 2}
                    }},
                    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
                }}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "additionalPrinterColumns": [{"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"}]
            }]
        }
    })
}

fn compiled() -> Compiled {
    let c = Crd::from_value(&crd()).unwrap();
    let props: Props = c.spec.versions[0]
        .schema
        .clone()
        .unwrap()
        .open_api_v3_schema
        .unwrap();
    Compiled::new(props)
}

fn messages(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

#[test]
fn valid_crd_has_no_errors() {
    let c = Crd::from_value(&crd()).unwrap();
    assert_eq!(messages(&validate_create(&c, &crd())), Vec::<String>::new());
}

#[test]
fn crd_rules_with_kube_wording() {
    let mut v = crd();
    v["metadata"]["name"] = json!("wrong.stable.example.com");
    v["spec"]["scope"] = json!("Galaxy");
    v["spec"]["versions"][0]["storage"] = json!(false);
    v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["bad"] = json!({"description": "no type"});
    let c = Crd::from_value(&v).unwrap();
    let errs = messages(&validate_create(&c, &v));
    assert!(errs.contains(&"metadata.name: Invalid value: \"wrong.stable.example.com\": must be spec.names.plural+\".\"+spec.group".to_string()), "{errs:?}");
    assert!(errs.contains(&"spec.scope: Unsupported value: \"Galaxy\": supported values: \"Cluster\", \"Namespaced\"".to_string()), "{errs:?}");
    assert!(
        errs.iter()
            .any(|e| e.starts_with("spec.versions: Invalid value: ")
                && e.ends_with("must have exactly one version marked as storage version")),
        "{errs:?}"
    );
    assert!(errs.contains(&"spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[bad].type: Required value: must not be empty for specified object fields".to_string()), "{errs:?}");
    let mut v = crd();
    v["spec"]["versions"][0]
        .as_object_mut()
        .unwrap()
        .remove("schema");
    let c = Crd::from_value(&v).unwrap();
    assert_eq!(
        messages(&validate_create(&c, &v)),
        vec!["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
    );
}

#[test]
fn selectable_fields_with_kube_wording() {
    let mut v = crd();
    v["spec"]["versions"][0]["selectableFields"] = json!([
        {"jsonPath": ".spec.color"},
        {"jsonPath": ".spec.replicas"},
        {"jsonPath": ".spec.image"}
    ]);
    let c = Crd::from_value(&v).unwrap();
    assert_eq!(messages(&validate_create(&c, &v)), Vec::<String>::new());
    // The labels a field selector names.
    let entries = catalog_entries(&c);
    assert_eq!(
        entries.resources[0].strategy.selectable_fields,
        Some(vec![
            "spec.color".to_string(),
            "spec.replicas".into(),
            "spec.image".into()
        ])
    );

    let f = "spec.versions[0].selectableFields";
    v["spec"]["versions"][0]["selectableFields"] = json!([
        {"jsonPath": ".spec.tags"},
        {"jsonPath": ".spec.nope"},
        {"jsonPath": "spec.color"},
        {"jsonPath": ".spec.tags[0]"},
        {"jsonPath": ".spec.free.anything"},
        {"jsonPath": ".metadata.name"},
        {"jsonPath": ".spec.color"},
        {"jsonPath": ".spec.color"},
        {"jsonPath": ""},
        {"jsonPath": ".spec.port"},
        {"jsonPath": ".spec.image"},
        {"jsonPath": ".spec.email"},
        {"jsonPath": ".spec.note"},
        {"jsonPath": ".status.replicas"},
        {"jsonPath": ".spec.cronSpec"},
        {"jsonPath": ".spec.replicas"}
    ]);
    let c = Crd::from_value(&v).unwrap();
    let errs = messages(&validate_create(&c, &v));
    let want = [
        format!("{f}[0].jsonPath: Invalid value: \".spec.tags\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."),
        format!("{f}[1].jsonPath: Invalid value: \".spec.nope\": is an invalid path: does not refer to a valid field"),
        format!("{f}[2].jsonPath: Invalid value: \"spec.color\": is an invalid path: expected [ or . but got: spec"),
        format!("{f}[3].jsonPath: Invalid value: \".spec.tags[0]\": is an invalid path: array notation is not allowed"),
        format!("{f}[4].jsonPath: Invalid value: \".spec.free.anything\": is an invalid path: does not refer to a valid field"),
        format!("{f}[5].jsonPath: Invalid value: \".metadata.name\": is an invalid path: does not refer to a valid field"),
        format!("{f}[7].jsonPath: Duplicate value: \".spec.color\""),
        format!("{f}[8].jsonPath: Required value"),
        format!("{f}[9].jsonPath: Invalid value: \".spec.port\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."),
        format!("{f}: Too many: 9: must have at most 8 items"),
    ];
    for w in &want {
        assert!(errs.contains(w), "missing {w}\n in {errs:#?}");
    }
    assert_eq!(errs.len(), want.len(), "{errs:#?}");
}

#[test]
fn prune_default_validate() {
    let s = compiled();
    let mut o = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "x"},
        "spec": {"cronSpec": "* * * * */5", "unknown": 1, "free": {"anything": {"goes": true}}, "note": null},
        "extra": true});
    let removed = s.prune(&mut o);
    assert_eq!(removed, vec!["spec.unknown", "extra"]);
    s.default(&mut o);
    assert_eq!(o["spec"]["image"], "nginx");
    assert_eq!(o["spec"]["free"]["anything"]["goes"], true);
    assert!(s.validate(&o).is_empty(), "{:?}", s.validate(&o));

    let bad = json!({"spec": {"cronSpec": "nope", "replicas": 20, "color": "pink", "port": true,
                              "email": "x", "tags": ["a", "a", "b"], "image": 3}});
    let errs = messages(&s.validate(&bad));
    for want in [
        "spec.cronSpec: Invalid value: \"nope\": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
        "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
        "spec.color: Unsupported value: \"pink\": supported values: \"red\", \"blue\"",
        "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
        "spec.email: Invalid value: \"x\": spec.email in body must be of type email: \"x\"",
        "spec.tags: Too many: 3: must have at most 2 items",
        "spec.tags[1]: Duplicate value: \"a\"",
        "spec.image: Invalid value: \"integer\": spec.image in body must be of type string: \"integer\"",
    ] {
        assert!(errs.contains(&want.to_string()), "missing {want}\n{errs:#?}");
    }
}

#[test]
fn catalog_entries_of_a_crd() {
    let c = Crd::from_value(&crd()).unwrap();
    let e = catalog_entries(&c);
    assert_eq!(e.resources.len(), 1);
    let r = &e.resources[0];
    assert_eq!(
        (r.kind.as_str(), r.plural.as_str(), r.namespaced),
        ("CronTab", "crontabs", true)
    );
    assert_eq!(r.short_names, vec!["ct"]);
    assert_eq!(r.definition, "com.example.stable.v1.CronTab");
    assert_eq!(
        definition_name("stable.example.com", "v1", "CronTabList"),
        "com.example.stable.v1.CronTabList"
    );
    assert!(r.has_subresource("status") && r.has_subresource("scale"));
    let scale = r.strategy.scale.as_ref().unwrap();
    assert_eq!(scale.spec_replicas, "/spec/replicas");
    assert_eq!(pointer(".status.replicas"), "/status/replicas");
    let custom = r.custom.as_ref().unwrap();
    assert_eq!(custom.printer_columns.len(), 2);
    assert_eq!(custom.printer_columns[1].name, "Age");
    let def = &e.definitions["com.example.stable.v1.CronTab"];
    assert_eq!(
        def.properties["metadata"].reference.as_deref(),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    );
    assert!(def.properties["spec"].properties["port"].int_or_string);
    assert_eq!(
        def.properties["spec"].properties["tags"]
            .list_type
            .as_deref(),
        Some("set")
    );
}

#[tokio::test]
async fn follower_serves_accepted_crds_and_drops_deleted_ones() {
    use std::sync::Arc;
    use std::time::Duration;

    use keelson_api::{CreateOptions, DeleteOptions, ObjectKey, StoreApi};
    use keelson_registry::Catalog;

    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn StoreApi> = Arc::new(
        keelson_storage::LocalStore::open(dir.path(), Default::default())
            .await
            .unwrap(),
    );
    let catalog = Catalog::builtin();
    crate::CatalogFollower::spawn(store.clone(), catalog.clone());
    let mut v = crd();
    v["status"] = json!({"conditions": [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": ""}]});
    let key = ObjectKey::new(crate::crd_resource(), "", "crontabs.stable.example.com");
    store
        .create(&key, v, CreateOptions::default())
        .await
        .unwrap();
    let served = |c: &Catalog| {
        c.snapshot()
            .lookup("stable.example.com", "v1", "crontabs")
            .is_some()
    };
    for _ in 0..100 {
        if served(&catalog) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(served(&catalog));
    let snap = catalog.snapshot();
    assert!(snap.definition("com.example.stable.v1.CronTab").is_some());
    assert!(snap.group("stable.example.com").is_some());
    store.delete(&key, DeleteOptions::default()).await.unwrap();
    for _ in 0..100 {
        if !served(&catalog) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!served(&catalog));
    assert!(catalog.snapshot().group("stable.example.com").is_none());
}
