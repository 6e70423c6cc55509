//! `JSONSchemaProps` (apiextensions.k8s.io/v1): the schema of one CRD
//! version, as written. Only the fields Kubernetes allows in structural
//! schemas are typed; the rest is kept for the structural checks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One node of a CRD's `openAPIV3Schema`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Props {
    #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, Props>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Props>>,
    /// `true`, `false` or a schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<PropsOrBool>,
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enum_: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub nullable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exclusive_maximum: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exclusive_minimum: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unique_items: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub all_of: Vec<Props>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<Props>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<Props>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<Props>>,
    #[serde(rename = "$ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_properties: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definitions: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_items: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    #[serde(
        rename = "x-kubernetes-preserve-unknown-fields",
        skip_serializing_if = "Option::is_none"
    )]
    pub preserve_unknown_fields: Option<bool>,
    #[serde(
        rename = "x-kubernetes-embedded-resource",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub embedded_resource: bool,
    #[serde(
        rename = "x-kubernetes-int-or-string",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub int_or_string: bool,
    #[serde(
        rename = "x-kubernetes-list-type",
        skip_serializing_if = "Option::is_none"
    )]
    pub list_type: Option<String>,
    #[serde(
        rename = "x-kubernetes-list-map-keys",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub list_map_keys: Vec<String>,
    #[serde(
        rename = "x-kubernetes-map-type",
        skip_serializing_if = "Option::is_none"
    )]
    pub map_type: Option<String>,
    /// CEL rules, kept as written (`crates/cel` compiles them).
    #[serde(
        rename = "x-kubernetes-validations",
        skip_serializing_if = "Option::is_none"
    )]
    pub validations: Option<Value>,
}

/// `JSONSchemaPropsOrBool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PropsOrBool {
    Bool(bool),
    Schema(Box<Props>),
}

impl Props {
    /// The schema of a map's values, when `additionalProperties` is one.
    pub fn additional_schema(&self) -> Option<&Props> {
        match &self.additional_properties {
            Some(PropsOrBool::Schema(p)) => Some(p),
            _ => None,
        }
    }

    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub fn preserves_unknown(&self) -> bool {
        self.preserve_unknown_fields == Some(true)
    }
}
