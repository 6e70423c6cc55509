use super::*;

const DEFS: &str = r##"{"$defs": {
  "io.k8s.api.apps.v1.Widget": {
    "type": "object",
    "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Widget", "version": "v1"}],
    "properties": {
      "apiVersion": {"type": ["string", "null"], "enum": ["apps/v1"]},
      "spec": {"$ref": "#/$defs/io.k8s.api.apps.v1.WidgetSpec", "description": "the spec"}
    }
  },
  "io.k8s.api.apps.v1.WidgetList": {
    "type": "object",
    "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "WidgetList", "version": "v1"}],
    "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/io.k8s.api.apps.v1.Widget"}}}
  },
  "io.k8s.api.apps.v1.WidgetSpec": {
    "type": ["object", "null"],
    "properties": {
      "port": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
      "raw": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.runtime.RawExtension"},
      "parts": {"type": ["array", "null"], "items": {"type": ["string", "null"]},
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}
    }
  },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"oneOf": [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]},
  "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"},
  "io.k8s.api.apps.v1.Empty": {"type": "object"},
  "io.k8s.unused.Thing": {"type": "object"}
}}"##;

const TABLE: &str = r#"
groups:
  - name: apps
    versions:
      - version: v1
        resources:
          - {kind: Widget, plural: widgets, namespaced: true, shortNames: [wd], subresources: [scale, status]}
"#;

#[test]
fn generates_resources_and_reachable_definitions_only() {
    let (_, data) = gen_catalog(DEFS, TABLE).unwrap();
    let r = &data.resources[0];
    assert_eq!(r.definition, "io.k8s.api.apps.v1.Widget");
    assert_eq!(r.list_kind, "WidgetList");
    assert_eq!(r.singular, "widget");
    assert_eq!(r.verbs.len(), 8);
    assert_eq!(r.subresources[0].kind, "Scale");
    assert_eq!(r.subresources[0].group, "autoscaling");
    assert_eq!(r.subresources[1].kind, "Widget");
    assert!(!data.definitions.contains_key("io.k8s.unused.Thing"));
    assert!(data
        .definitions
        .contains_key("io.k8s.api.apps.v1.WidgetList"));
    let spec = &data.definitions["io.k8s.api.apps.v1.WidgetSpec"];
    assert_eq!(spec.type_.as_deref(), Some("object"));
    assert!(
        data.definitions["io.k8s.apimachinery.pkg.runtime.RawExtension"].preserve_unknown_fields
    );
    assert!(!data.definitions.contains_key("io.k8s.api.apps.v1.Empty"));
    let parts = &spec.properties["parts"];
    assert_eq!(parts.list_map_keys, ["name"]);
    assert_eq!(
        parts.items.as_ref().unwrap().type_.as_deref(),
        Some("string")
    );
    assert!(data.definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].int_or_string);
    let widget = &data.definitions["io.k8s.api.apps.v1.Widget"];
    assert!(widget.properties["apiVersion"].enum_values.is_empty());
    assert_eq!(
        widget.properties["spec"].reference.as_deref(),
        Some("io.k8s.api.apps.v1.WidgetSpec")
    );
}

#[test]
fn output_is_deterministic() {
    let (a, _) = gen_catalog(DEFS, TABLE).unwrap();
    let (b, _) = gen_catalog(DEFS, TABLE).unwrap();
    assert_eq!(a, b);
}

#[test]
fn unknown_kind_fails_loudly() {
    let table = TABLE.replace("kind: Widget", "kind: Gadget");
    let err = gen_catalog(DEFS, &table).unwrap_err().to_string();
    assert!(err.contains("apps/v1/Gadget"), "{err}");
}

#[test]
fn unknown_extra_definition_fails() {
    let table = format!("extraDefinitions: [io.k8s.Nope]\n{TABLE}");
    assert!(matches!(
        gen_catalog(DEFS, &table),
        Err(GenError::UnknownDefinition(_))
    ));
}

#[test]
fn storage_version_hash_matches_kube() {
    // Values published in kube-apiserver's /api/v1 discovery.
    assert_eq!(storage_version_hash("/v1/Pod"), "xPOwRZ+Yhw8=");
    assert_eq!(storage_version_hash("/v1/ConfigMap"), "qFsyl6wFWjQ=");
}

#[test]
fn committed_table_parses() {
    let yaml = include_str!("../resources.yaml");
    let t: ResourceTable = serde_yaml::from_str(yaml).unwrap();
    assert_eq!(t.groups[0].name, "");
}
