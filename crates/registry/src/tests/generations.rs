//! Catalog generations: copy-on-write inserts and removals.

use std::collections::BTreeMap;

use crate::*;

fn widget_schema() -> Schema {
    let mut s = Schema {
        type_: Some("object".into()),
        ..Schema::default()
    };
    s.properties.insert(
        "spec".into(),
        Schema {
            type_: Some("object".into()),
            preserve_unknown_fields: true,
            ..Schema::default()
        },
    );
    s
}

fn widget(version: &str) -> ResourceInfo {
    ResourceInfo {
        group: "example.com".into(),
        version: version.into(),
        kind: "Widget".into(),
        list_kind: "WidgetList".into(),
        plural: "widgets".into(),
        singular: "widget".into(),
        namespaced: true,
        verbs: vec!["create".into(), "get".into(), "list".into(), "watch".into()],
        definition: "com.example.v1.Widget".into(),
        strategy: Strategy {
            tracks_generation: true,
            ..Strategy::default()
        },
        ..ResourceInfo::default()
    }
}

fn defs() -> BTreeMap<String, Schema> {
    BTreeMap::from([("com.example.v1.Widget".to_owned(), widget_schema())])
}

#[test]
fn builtin_handle_starts_at_the_builtin_generation() {
    let c = Catalog::builtin();
    let s = c.snapshot();
    assert_eq!(s.generation(), BUILTIN_GENERATION);
    assert!(std::sync::Arc::ptr_eq(&s, CatalogSnapshot::builtin()));
    assert!(s.lookup("example.com", "v1", "widgets").is_none());
}

#[test]
fn insert_makes_a_new_generation_and_leaves_the_old_one() {
    let c = Catalog::builtin();
    let old = c.snapshot();
    let new = c.insert(vec![widget("v1")], defs()).unwrap();
    assert_eq!(new.generation(), old.generation() + 1);
    assert_eq!(c.snapshot().generation(), new.generation());

    // The new generation serves the resource...
    let w = new.lookup("example.com", "v1", "widgets").unwrap();
    assert_eq!(w.kind, "Widget");
    assert!(w.tracks_generation());
    assert_eq!(
        new.lookup_kind("example.com", "v1", "Widget")
            .unwrap()
            .plural,
        "widgets"
    );
    assert_eq!(new.resources_in("example.com", "v1").count(), 1);
    assert_eq!(new.resources().len(), old.resources().len() + 1);
    let g = new.group("example.com").unwrap();
    assert_eq!(g.versions, ["v1"]);
    assert_eq!(new.groups().last().unwrap().name, "example.com");
    assert!(new.definition("com.example.v1.Widget").is_some());
    let spec = new
        .definition("com.example.v1.Widget")
        .and_then(|d| d.property("spec"))
        .unwrap();
    assert!(std::ptr::eq(new.resolve(spec), spec));

    // ...and the old one is unchanged.
    assert!(old.lookup("example.com", "v1", "widgets").is_none());
    assert!(old.group("example.com").is_none());
    assert!(old.definition("com.example.v1.Widget").is_none());
    assert_eq!(old.generation(), BUILTIN_GENERATION);
    // Clones share the current generation; a fresh built-in handle does not.
    assert_eq!(c.clone().snapshot().generation(), new.generation());
    assert_eq!(
        Catalog::builtin().snapshot().generation(),
        BUILTIN_GENERATION
    );
}

#[test]
fn a_second_version_is_not_preferred_and_replacing_keeps_one_entry() {
    let c = Catalog::builtin();
    c.insert(vec![widget("v1")], defs()).unwrap();
    let s = c.insert(vec![widget("v2")], BTreeMap::new()).unwrap();
    assert_eq!(s.group("example.com").unwrap().versions, ["v1", "v2"]);
    assert_eq!(
        s.group("example.com").unwrap().preferred_version(),
        Some("v1")
    );

    let mut cluster = widget("v1");
    cluster.namespaced = false;
    let s = c.insert(vec![cluster], BTreeMap::new()).unwrap();
    assert_eq!(s.generation(), BUILTIN_GENERATION + 3);
    assert_eq!(s.resources_in("example.com", "v1").count(), 1);
    assert!(!s.lookup("example.com", "v1", "widgets").unwrap().namespaced);
}

#[test]
fn custom_group_versions_are_in_kube_priority_order() {
    let c = Catalog::builtin();
    let custom = |v: &str| {
        let mut r = widget(v);
        r.custom = Some(Box::new(crate::CustomResource {
            crd_name: "widgets.example.com".into(),
            storage_version: "v1beta1".into(),
            ..Default::default()
        }));
        r
    };
    c.insert(vec![custom("v1beta1"), custom("v1alpha1")], defs())
        .unwrap();
    let s = c.insert(vec![custom("v1")], BTreeMap::new()).unwrap();
    let g = s.group("example.com").unwrap();
    assert_eq!(g.versions, ["v1", "v1beta1", "v1alpha1"]);
    assert_eq!(g.preferred_version(), Some("v1"));
}

#[test]
fn remove_drops_the_resource_and_an_empty_group() {
    let c = Catalog::builtin();
    c.insert(vec![widget("v1"), widget("v2")], defs()).unwrap();
    let s = c.remove("example.com", "v2", "widgets").unwrap();
    assert_eq!(s.group("example.com").unwrap().versions, ["v1"]);
    let s = c.remove("example.com", "v1", "widgets").unwrap();
    assert!(s.group("example.com").is_none());
    assert!(s.lookup("example.com", "v1", "widgets").is_none());
    assert_eq!(s.groups(), CatalogSnapshot::builtin().groups());
    assert_eq!(s.generation(), BUILTIN_GENERATION + 3);
}

#[test]
fn bad_inserts_are_errors_and_change_nothing() {
    let c = Catalog::builtin();
    let missing = c.insert(vec![widget("v1")], BTreeMap::new());
    assert!(matches!(
        missing,
        Err(CatalogError::MissingDefinition { .. })
    ));
    let mut nameless = widget("v1");
    nameless.plural.clear();
    assert!(matches!(
        c.insert(vec![nameless], defs()),
        Err(CatalogError::Incomplete { .. })
    ));
    assert_eq!(c.snapshot().generation(), BUILTIN_GENERATION);
}

#[test]
fn strategy_round_trips_and_is_left_out_when_default() {
    let mut w = widget("v1");
    let json = serde_json::to_value(&w).unwrap();
    assert_eq!(
        json["strategy"],
        serde_json::json!({"tracksGeneration": true, "status": "Plain", "gracefulDeletion": "Immediate", "returnsDeletedObject": false, "allowCreateOnUpdate": false, "requiresResourceVersion": false})
    );
    assert_eq!(serde_json::from_value::<ResourceInfo>(json).unwrap(), w);
    w.strategy = Strategy::default();
    assert!(serde_json::to_value(&w).unwrap().get("strategy").is_none());
}
