//! What the catalog carries for a resource defined by a
//! CustomResourceDefinition: the parts of one CRD version that the generic
//! handlers, admission and the Table printer need beyond [`crate::ResourceInfo`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One served version of a CustomResourceDefinition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CustomResource {
    /// `metadata.name` of the CRD (`<plural>.<group>`).
    pub crd_name: String,
    /// `metadata.uid` of the CRD.
    pub crd_uid: String,
    /// `metadata.generation` of the CRD this entry was built from
    /// (compiled schemas are cached by uid, generation and version).
    pub crd_generation: i64,
    /// The version's `schema.openAPIV3Schema` as written in the CRD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// `additionalPrinterColumns` of the version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub printer_columns: Vec<PrinterColumn>,
    /// The version is `deprecated`.
    pub deprecated: bool,
    /// The `Warning` a request to a deprecated version gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    /// The storage version's name.
    pub storage_version: String,
    /// `spec.conversion.strategy` is `Webhook`.
    pub conversion_webhook: bool,
    /// `spec.conversion.webhook` as written (`clientConfig`,
    /// `conversionReviewVersions`) when the strategy is `Webhook`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Value>,
    /// The CRD is being deleted: creates are refused.
    pub terminating: bool,
}

/// One `additionalPrinterColumns` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PrinterColumn {
    /// Column header.
    pub name: String,
    /// OpenAPI type: `integer`, `number`, `string`, `boolean`, `date`.
    #[serde(rename = "type")]
    pub type_: String,
    /// OpenAPI format, e.g. `name`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub format: String,
    /// Human description.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// 0 for the default view, more for `-o wide`.
    pub priority: i32,
    /// kube JSONPath into the object, e.g. `.spec.replicas`.
    pub json_path: String,
}
