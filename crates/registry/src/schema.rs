//! One node of an OpenAPI-style schema, as stored in `catalog.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A group/version/kind triple (`x-kubernetes-group-version-kind`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupVersionKind {
    /// API group, empty for core.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
}

/// One schema node of a definition.
///
/// Nullable upstream types are normalised to a single `type_`; references
/// hold a plain definition name. Empty collections and `false` flags are
/// left out of the serialised form to keep `catalog.json` compact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Schema {
    /// `object`, `string`, `integer`, `number`, `boolean`, `array`; `None` = any.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// OpenAPI format, e.g. `int32`, `date-time`, `byte`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Human description (what `kubectl explain` prints).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Declared properties of an object.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, Schema>,
    /// Required property names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// Value schema of a map-shaped object.
    #[serde(
        rename = "additionalProperties",
        skip_serializing_if = "Option::is_none"
    )]
    pub additional_properties: Option<Box<Schema>>,
    /// Element schema of an array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Schema>>,
    /// Referenced definition name, e.g. `io.k8s.api.core.v1.PodSpec`.
    #[serde(rename = "$ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Allowed values, if the schema is an enum.
    #[serde(rename = "enum", skip_serializing_if = "Vec::is_empty")]
    pub enum_values: Vec<serde_json::Value>,
    /// The value may be an integer or a string (`IntOrString`).
    #[serde(rename = "intOrString", skip_serializing_if = "is_false")]
    pub int_or_string: bool,
    /// Any fields are accepted: an object with no declared properties
    /// (`RawExtension`, `FieldsV1`, `Patch`, ...) or an explicit
    /// `x-kubernetes-preserve-unknown-fields`.
    #[serde(rename = "preserveUnknownFields", skip_serializing_if = "is_false")]
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    #[serde(rename = "listType", skip_serializing_if = "Option::is_none")]
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    #[serde(rename = "listMapKeys", skip_serializing_if = "Vec::is_empty")]
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-patch-merge-key`.
    #[serde(rename = "patchMergeKey", skip_serializing_if = "Option::is_none")]
    pub patch_merge_key: Option<String>,
    /// `x-kubernetes-patch-strategy`, e.g. `merge` or `merge,retainKeys`.
    #[serde(rename = "patchStrategy", skip_serializing_if = "Option::is_none")]
    pub patch_strategy: Option<String>,
    /// `x-kubernetes-map-type`: `atomic` or `granular`.
    #[serde(rename = "mapType", skip_serializing_if = "Option::is_none")]
    pub map_type: Option<String>,
    /// `x-kubernetes-group-version-kind` (top-level definitions only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gvk: Vec<GroupVersionKind>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Schema {
    /// The property `name`, if declared.
    pub fn property(&self, name: &str) -> Option<&Schema> {
        self.properties.get(name)
    }
}
