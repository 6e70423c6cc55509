//! A CustomResourceDefinition as catalog entries: one [`ResourceInfo`] per
//! served version, and the schema definitions (kind and list) that
//! discovery's OpenAPI, `kubectl explain` and Server-Side Apply read.

use std::collections::BTreeMap;

use base64::Engine as _;
use keelson_registry::{
    CustomResource, GroupVersionKind, NameRule, PrinterColumn, ResourceInfo, ScalePaths, Schema,
    StatusPolicy, Strategy, SubresourceInfo,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::crd::{Crd, Names, Version};
use crate::props::Props;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DOC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#lists-and-simple-lists";

/// What one CRD adds to the catalog.
#[derive(Debug, Clone, Default)]
pub struct CatalogEntries {
    /// One resource per served version.
    pub resources: Vec<ResourceInfo>,
    /// Kind and list definitions per served version.
    pub definitions: BTreeMap<String, Schema>,
}

/// The names a CRD is served under: the accepted names once the controller
/// set them, else the spec's.
pub fn served_names(crd: &Crd) -> &Names {
    if crd.status.accepted_names.plural.is_empty() {
        &crd.spec.names
    } else {
        &crd.status.accepted_names
    }
}

/// The OpenAPI definition name of `kind` in `group`/`version`, as kube
/// names CRD definitions: the group reversed (`com.example.stable.v1.CronTab`).
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{}.{}", reversed.join("."), version, kind)
}

/// kube's discovery `storageVersionHash`: the first 8 bytes of the SHA-256
/// of `group/version/kind`, base64.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// The catalog entries of a CRD's served versions.
pub fn catalog_entries(crd: &Crd) -> CatalogEntries {
    let names = served_names(crd);
    let group = crd.spec.group.as_str();
    let storage = crd.storage_version().to_string();
    let mut out = CatalogEntries::default();
    for v in crd.spec.versions.iter().filter(|v| v.served) {
        let def = definition_name(group, &v.name, &names.kind);
        let list_def = definition_name(group, &v.name, &names.list_kind);
        let props = v
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref());
        out.definitions.insert(
            def.clone(),
            kind_definition(group, &v.name, &names.kind, props),
        );
        out.definitions.insert(
            list_def,
            list_definition(group, &v.name, &names.list_kind, &def),
        );
        out.resources.push(resource(crd, names, v, def, &storage));
    }
    out
}

fn resource(
    crd: &Crd,
    names: &Names,
    v: &Version,
    definition: String,
    storage: &str,
) -> ResourceInfo {
    let group = crd.spec.group.clone();
    let sub = v.subresources.as_ref();
    let has_status = sub.is_some_and(|s| s.status.is_some());
    let scale = sub.and_then(|s| s.scale.as_ref());
    let mut subresources = Vec::new();
    if let Some(_s) = scale {
        subresources.push(SubresourceInfo {
            name: "scale".into(),
            group: "autoscaling".into(),
            version: "v1".into(),
            kind: "Scale".into(),
            verbs: vec!["get".into(), "patch".into(), "update".into()],
        });
    }
    if has_status {
        subresources.push(SubresourceInfo {
            name: "status".into(),
            group: group.clone(),
            version: v.name.clone(),
            kind: names.kind.clone(),
            verbs: vec!["get".into(), "patch".into(), "update".into()],
        });
    }
    let conversion_webhook = crd
        .spec
        .conversion
        .as_ref()
        .is_some_and(|c| c.strategy == "Webhook");
    ResourceInfo {
        group: group.clone(),
        version: v.name.clone(),
        kind: names.kind.clone(),
        list_kind: names.list_kind.clone(),
        plural: names.plural.clone(),
        singular: names.singular.clone(),
        namespaced: crd.spec.scope == "Namespaced",
        verbs: [
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch",
        ]
        .map(String::from)
        .to_vec(),
        short_names: names.short_names.clone(),
        categories: names.categories.clone(),
        subresources,
        definition,
        name_rule: NameRule::Subdomain,
        storage_version_hash: storage_version_hash(&group, storage, &names.kind),
        strategy: Strategy {
            tracks_generation: true,
            // The custom resource strategy's AllowUnconditionalUpdate.
            requires_resource_version: true,
            status: if has_status {
                StatusPolicy::CustomSubresource
            } else {
                StatusPolicy::Plain
            },
            scale: scale.map(|s| ScalePaths {
                spec_replicas: pointer(&s.spec_replicas_path),
                status_replicas: pointer(&s.status_replicas_path),
                label_selector: s
                    .label_selector_path
                    .as_deref()
                    .map(pointer)
                    .unwrap_or_default(),
            }),
            selectable_fields: Some(selectable_labels(v)),
            ..Strategy::default()
        },
        custom: Some(Box::new(CustomResource {
            crd_name: crd.metadata.name.clone(),
            crd_uid: crd.metadata.uid.clone(),
            crd_generation: crd.metadata.generation,
            schema: v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .and_then(|p| serde_json::to_value(p).ok()),
            printer_columns: printer_columns(v),
            deprecated: v.deprecated,
            deprecation_warning: v.deprecated.then(|| deprecation_warning(crd, names, v)),
            storage_version: storage.to_string(),
            conversion_webhook,
            webhook: crd
                .spec
                .conversion
                .as_ref()
                .filter(|_| conversion_webhook)
                .and_then(|c| c.webhook.clone()),
            terminating: crd.terminating(),
        })),
    }
}

/// A version's `selectableFields` as field-selector labels (the `jsonPath`
/// without its leading dot, as kube's strategy names them).
pub fn selectable_labels(v: &Version) -> Vec<String> {
    v.selectable_fields
        .iter()
        .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
        .map(|p| p.trim_start_matches('.').to_string())
        .collect()
}

/// A CRD's `.spec.replicas` path as a JSON pointer (`/spec/replicas`).
pub fn pointer(json_path: &str) -> String {
    json_path
        .trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The columns of a version; kube adds `Age` when none lists a
/// `.metadata.creationTimestamp` column.
fn printer_columns(v: &Version) -> Vec<PrinterColumn> {
    let mut cols: Vec<PrinterColumn> = v
        .additional_printer_columns
        .iter()
        .map(|c| PrinterColumn {
            name: c.name.clone(),
            type_: c.type_.clone(),
            format: c.format.clone(),
            description: c.description.clone(),
            priority: c.priority,
            json_path: c.json_path.clone(),
        })
        .collect();
    if !cols
        .iter()
        .any(|c| c.json_path == ".metadata.creationTimestamp")
    {
        cols.push(PrinterColumn {
            name: "Age".into(),
            type_: "date".into(),
            json_path: ".metadata.creationTimestamp".into(),
            ..PrinterColumn::default()
        });
    }
    cols
}

/// kube's default deprecation warning, or the CRD's own.
fn deprecation_warning(crd: &Crd, names: &Names, v: &Version) -> String {
    if let Some(w) = &v.deprecation_warning {
        return w.clone();
    }
    format!("{}/{} {} is deprecated", crd.spec.group, v.name, names.kind)
}

/// The kind's definition: the CRD schema as catalog [`Schema`], with
/// `apiVersion`, `kind` and `metadata` filled in as kube's OpenAPI builder
/// does.
fn kind_definition(group: &str, version: &str, kind: &str, props: Option<&Props>) -> Schema {
    let mut s = props.map(to_schema).unwrap_or_else(|| Schema {
        type_: Some("object".into()),
        preserve_unknown_fields: true,
        ..Schema::default()
    });
    if s.type_.is_none() {
        s.type_ = Some("object".into());
    }
    s.properties
        .entry("apiVersion".into())
        .or_insert_with(|| Schema {
            type_: Some("string".into()),
            description: Some(API_VERSION_DOC.into()),
            ..Schema::default()
        });
    s.properties.entry("kind".into()).or_insert_with(|| Schema {
        type_: Some("string".into()),
        description: Some(KIND_DOC.into()),
        ..Schema::default()
    });
    s.properties.insert(
        "metadata".into(),
        Schema {
            description: Some(METADATA_DOC.into()),
            reference: Some(OBJECT_META.into()),
            ..Schema::default()
        },
    );
    s.gvk = vec![GroupVersionKind {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
    }];
    s
}

fn list_definition(group: &str, version: &str, list_kind: &str, item_def: &str) -> Schema {
    let mut props = BTreeMap::new();
    props.insert(
        "apiVersion".into(),
        Schema {
            type_: Some("string".into()),
            description: Some(API_VERSION_DOC.into()),
            ..Schema::default()
        },
    );
    props.insert(
        "items".into(),
        Schema {
            type_: Some("array".into()),
            description: Some(format!(
                "List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                list_kind.trim_end_matches("List").to_lowercase()
            )),
            items: Some(Box::new(Schema {
                reference: Some(item_def.into()),
                ..Schema::default()
            })),
            ..Schema::default()
        },
    );
    props.insert(
        "kind".into(),
        Schema {
            type_: Some("string".into()),
            description: Some(KIND_DOC.into()),
            ..Schema::default()
        },
    );
    props.insert(
        "metadata".into(),
        Schema {
            description: Some(LIST_METADATA_DOC.into()),
            reference: Some(LIST_META.into()),
            ..Schema::default()
        },
    );
    Schema {
        type_: Some("object".into()),
        description: Some(format!(
            "{list_kind} is a list of {}",
            list_kind.trim_end_matches("List")
        )),
        properties: props,
        required: vec!["items".into()],
        gvk: vec![GroupVersionKind {
            group: group.into(),
            version: version.into(),
            kind: list_kind.into(),
        }],
        ..Schema::default()
    }
}

/// One CRD schema node as a catalog [`Schema`] (what merge, OpenAPI and
/// explain read). An embedded resource gets `apiVersion`, `kind` and
/// `metadata` as a top-level object has them.
pub fn to_schema(p: &Props) -> Schema {
    let mut s = Schema {
        type_: (!p.type_.is_empty()).then(|| p.type_.clone()),
        format: (!p.format.is_empty()).then(|| p.format.clone()),
        description: (!p.description.is_empty()).then(|| p.description.clone()),
        properties: p
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), to_schema(v)))
            .collect(),
        required: p.required.clone(),
        additional_properties: p.additional_schema().map(|a| Box::new(to_schema(a))),
        items: p.items.as_deref().map(|i| Box::new(to_schema(i))),
        enum_values: p.enum_.clone().unwrap_or_default(),
        int_or_string: p.int_or_string,
        preserve_unknown_fields: p.preserves_unknown(),
        list_type: p.list_type.clone(),
        list_map_keys: p.list_map_keys.clone(),
        map_type: p.map_type.clone(),
        ..Schema::default()
    };
    if p.int_or_string {
        s.type_ = None;
    }
    if p.embedded_resource {
        for (name, doc) in [("apiVersion", API_VERSION_DOC), ("kind", KIND_DOC)] {
            s.properties.entry(name.into()).or_insert_with(|| Schema {
                type_: Some("string".into()),
                description: Some(doc.into()),
                ..Schema::default()
            });
        }
        s.properties
            .entry("metadata".into())
            .or_insert_with(|| Schema {
                reference: Some(OBJECT_META.into()),
                ..Schema::default()
            });
    }
    s
}
