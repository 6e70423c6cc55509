//! The parts of a `CustomResourceDefinition` (apiextensions.k8s.io/v1)
//! Keelson reads, decoded from the stored JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::props::Props;
use crate::Error;

/// The `customresourcecleanup` finalizer: the CRD stays until its objects
/// are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// A CustomResourceDefinition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Crd {
    pub metadata: Meta,
    pub spec: Spec,
    pub status: Status,
}

/// The metadata fields read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Meta {
    pub name: String,
    pub uid: String,
    pub resource_version: String,
    pub generation: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    pub finalizers: Vec<String>,
}

/// `spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Spec {
    pub group: String,
    pub names: Names,
    pub scope: String,
    pub versions: Vec<Version>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversion: Option<Conversion>,
    pub preserve_unknown_fields: bool,
}

/// `spec.names` / `status.acceptedNames`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Names {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub plural: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub singular: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub list_kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

/// `spec.conversion`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Conversion {
    pub strategy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Value>,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Version {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub deprecated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Validation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresources: Option<Subresources>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additional_printer_columns: Vec<Column>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub selectable_fields: Vec<Value>,
}

/// `schema`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Validation {
    #[serde(rename = "openAPIV3Schema", skip_serializing_if = "Option::is_none")]
    pub open_api_v3_schema: Option<Props>,
}

/// `subresources`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Subresources {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<Scale>,
}

/// `subresources.scale`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Scale {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
}

/// `additionalPrinterColumns[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
    pub json_path: String,
}

/// `status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Status {
    pub conditions: Vec<Condition>,
    pub accepted_names: Names,
    pub stored_versions: Vec<String>,
}

/// One `status.conditions[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    pub reason: String,
    pub message: String,
}

impl Crd {
    /// Decode a stored CRD.
    pub fn from_value(v: &Value) -> Result<Crd, Error> {
        Crd::deserialize(v).map_err(Error::Decode)
    }

    /// Whether the condition `type_` is `True`.
    pub fn condition_true(&self, type_: &str) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.type_ == type_ && c.status == "True")
    }

    /// The storage version's name (empty if none is marked).
    pub fn storage_version(&self) -> &str {
        self.spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map_or("", |v| v.name.as_str())
    }

    /// Whether the CRD is being deleted.
    pub fn terminating(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }
}
