//! The built-in generation's data.

use std::time::Instant;

use crate::*;
// These tests read one snapshot: the built-in generation.
use crate::CatalogSnapshot as Catalog;

fn catalog() -> &'static CatalogSnapshot {
    CatalogSnapshot::builtin()
}

#[test]
fn catalog_loads_quickly_and_is_consistent() {
    let start = Instant::now();
    let c = Catalog::from_json(include_str!("../../data/catalog.json")).unwrap();
    let took = start.elapsed();
    // Generous bound for an unoptimised debug build on a busy 2-core box.
    assert!(took.as_millis() < 3000, "catalog parse took {took:?}");
    assert!(c.resources().len() > 60);
    for r in c.resources() {
        assert!(c.definition(&r.definition).is_some(), "{}", r.plural);
        assert!(c
            .group(&r.group)
            .is_some_and(|g| g.versions.contains(&r.version)));
    }
}

#[test]
fn lookups_by_plural_and_kind() {
    let c = catalog();
    let pods = c.lookup("", "v1", "pods").unwrap();
    assert_eq!(pods.kind, "Pod");
    assert_eq!(pods.list_kind, "PodList");
    assert_eq!(pods.singular, "pod");
    assert!(pods.namespaced);
    assert_eq!(pods.api_version(), "v1");
    assert_eq!(
        pods.gr(),
        keelson_apimachinery::GroupResource::new("", "pods")
    );
    let deploy = c.lookup_kind("apps", "v1", "Deployment").unwrap();
    assert_eq!(deploy.plural, "deployments");
    assert_eq!(deploy.api_version(), "apps/v1");
    assert!(c.lookup("apps", "v1", "pods").is_none());
    assert!(c.lookup("", "v2", "pods").is_none());
    assert!(c.lookup_kind("", "v1", "Deployment").is_none());
}

#[test]
fn pods_short_names_categories_subresources() {
    let pods = catalog().lookup("", "v1", "pods").unwrap();
    assert_eq!(pods.short_names, ["po"]);
    assert_eq!(pods.categories, ["all"]);
    let names: Vec<&str> = pods.subresources.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "resize",
            "status"
        ]
    );
    let eviction = pods.subresource("eviction").unwrap();
    assert_eq!(
        (eviction.group.as_str(), eviction.kind.as_str()),
        ("policy", "Eviction")
    );
    assert!(pods.has_verb("watch"));
    assert!(pods.tracks_generation());
}

#[test]
fn scale_subresource_is_autoscaling_v1_scale() {
    let c = catalog();
    for plural in ["deployments", "replicasets", "statefulsets"] {
        let r = c.lookup("apps", "v1", plural).unwrap();
        let s = r.subresource("scale").unwrap();
        assert_eq!(
            (s.group.as_str(), s.version.as_str(), s.kind.as_str()),
            ("autoscaling", "v1", "Scale")
        );
        assert_eq!(s.verbs, ["get", "patch", "update"]);
        assert!(r.has_subresource("status"));
    }
    assert!(c
        .lookup("", "v1", "replicationcontrollers")
        .unwrap()
        .has_subresource("scale"));
    assert!(c.definition("io.k8s.api.autoscaling.v1.Scale").is_some());
}

#[test]
fn odd_verbs_and_short_names() {
    let c = catalog();
    assert_eq!(c.lookup("", "v1", "bindings").unwrap().verbs, ["create"]);
    assert_eq!(
        c.lookup("", "v1", "componentstatuses").unwrap().verbs,
        ["get", "list"]
    );
    let tr = c
        .lookup("authentication.k8s.io", "v1", "tokenreviews")
        .unwrap();
    assert_eq!(tr.verbs, ["create"]);
    assert!(!c
        .lookup("", "v1", "configmaps")
        .unwrap()
        .tracks_generation());
    let ns = c.lookup("", "v1", "namespaces").unwrap();
    assert!(!ns.has_verb("deletecollection"));
    let crd = c
        .lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    assert_eq!(crd.short_names, ["crd", "crds"]);
    assert_eq!(crd.categories, ["api-extensions"]);
    assert_eq!(
        c.lookup("", "v1", "endpoints").unwrap().singular,
        "endpoints"
    );
}

#[test]
fn name_rules() {
    let c = catalog();
    assert_eq!(
        c.lookup("", "v1", "namespaces").unwrap().name_rule,
        NameRule::Label
    );
    assert_eq!(
        c.lookup("", "v1", "services").unwrap().name_rule,
        NameRule::Dns1035
    );
    assert_eq!(
        c.lookup("", "v1", "pods").unwrap().name_rule,
        NameRule::Subdomain
    );
    assert_eq!(
        c.lookup("rbac.authorization.k8s.io", "v1", "roles")
            .unwrap()
            .name_rule,
        NameRule::PathSegment
    );
}

#[test]
fn groups_in_discovery_order_with_preferred_first() {
    let c = catalog();
    let names: Vec<&str> = c.groups().iter().map(|g| g.name.as_str()).collect();
    assert_eq!(&names[..3], ["", "apiregistration.k8s.io", "apps"]);
    let autoscaling = c.group("autoscaling").unwrap();
    assert_eq!(autoscaling.versions, ["v2", "v1"]);
    assert_eq!(autoscaling.preferred_version(), Some("v2"));
}

#[test]
fn pod_containers_merge_metadata() {
    let c = catalog();
    let pod = c.definition("io.k8s.api.core.v1.Pod").unwrap();
    let spec = c.resolve(pod.property("spec").unwrap());
    let containers = spec.property("containers").unwrap();
    assert_eq!(containers.type_.as_deref(), Some("array"));
    assert_eq!(containers.list_type.as_deref(), Some("map"));
    assert_eq!(containers.list_map_keys, ["name"]);
    assert_eq!(containers.patch_merge_key.as_deref(), Some("name"));
    assert_eq!(containers.patch_strategy.as_deref(), Some("merge"));
    let item = containers.items.as_deref().unwrap();
    assert_eq!(
        item.reference.as_deref(),
        Some("io.k8s.api.core.v1.Container")
    );
    assert!(pod
        .description
        .as_deref()
        .unwrap_or("")
        .contains("containers"));
    assert_eq!(
        pod.gvk,
        [GroupVersionKind {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into()
        }]
    );
}

#[test]
fn int_or_string_and_free_form_marked() {
    let c = catalog();
    let ios = c
        .definition("io.k8s.apimachinery.pkg.util.intstr.IntOrString")
        .unwrap();
    assert!(ios.int_or_string);
    assert_eq!(ios.type_, None);
    let port = c.definition("io.k8s.api.core.v1.ServicePort").unwrap();
    let target = c.resolve(port.property("targetPort").unwrap());
    assert!(target.int_or_string);
    assert!(
        c.definition("io.k8s.apimachinery.pkg.runtime.RawExtension")
            .unwrap()
            .preserve_unknown_fields
    );
    let pod = c.definition("io.k8s.api.core.v1.Pod").unwrap();
    assert!(pod.property("apiVersion").unwrap().enum_values.is_empty());
}

#[test]
fn storage_version_hashes() {
    let c = catalog();
    assert_eq!(
        c.lookup("", "v1", "pods").unwrap().storage_version_hash,
        "xPOwRZ+Yhw8="
    );
    // events.k8s.io/v1 Event is stored as core v1 Event.
    assert_eq!(
        c.lookup("events.k8s.io", "v1", "events")
            .unwrap()
            .storage_version_hash,
        "r2yiGXH7wu8="
    );
    assert_eq!(
        c.lookup("", "v1", "bindings").unwrap().storage_version_hash,
        ""
    );
}

#[test]
fn bad_catalog_is_an_error_not_a_panic() {
    assert!(matches!(
        Catalog::from_json("{"),
        Err(CatalogError::Parse(_))
    ));
    let json = r#"{"kubernetesVersion":"v","groups":[],"definitions":{},
      "resources":[{"group":"","version":"v1","kind":"X","listKind":"XList","plural":"xs",
      "singular":"x","namespaced":true,"verbs":[],"definition":"nope","nameRule":"Subdomain"}]}"#;
    assert!(matches!(
        Catalog::from_json(json),
        Err(CatalogError::MissingDefinition { .. })
    ));
}
