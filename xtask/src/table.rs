//! The hand-written resource table (`xtask/resources.yaml`).

use keelson_registry::{NameRule, SubresourceInfo};
use serde::Deserialize;

/// The whole table.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceTable {
    /// Definitions kept even if no resource references them.
    #[serde(default)]
    pub extra_definitions: Vec<String>,
    /// Groups in `/apis` order.
    pub groups: Vec<GroupSpec>,
}

/// One group.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Group name, `""` for core.
    pub name: String,
    /// Versions, preferred first.
    pub versions: Vec<VersionSpec>,
}

/// One version of a group.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VersionSpec {
    /// Version name.
    pub version: String,
    /// Whether kube-apiserver serves it without `--runtime-config`
    /// (default true; the beta versions of 1.34 are false).
    #[serde(default = "yes")]
    pub served_by_default: bool,
    /// Resources served in it.
    pub resources: Vec<ResourceSpec>,
}

/// One resource row.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceSpec {
    /// Kind.
    pub kind: String,
    /// Resource (plural) name.
    pub plural: String,
    /// Singular; defaults to the lowercase kind.
    pub singular: Option<String>,
    /// Scope.
    pub namespaced: bool,
    /// Verbs; defaults to the eight standard verbs.
    pub verbs: Option<Vec<String>>,
    /// Short names.
    #[serde(default)]
    pub short_names: Vec<String>,
    /// Categories.
    #[serde(default)]
    pub categories: Vec<String>,
    /// Subresources.
    #[serde(default)]
    pub subresources: Vec<SubresourceSpec>,
    /// Schema definition; defaults to the one carrying this GVK.
    pub definition: Option<String>,
    /// Name validation rule.
    #[serde(default)]
    pub name_rule: NameRule,
    /// Storage `group/version` when it differs from the served one.
    pub storage: Option<String>,
    /// The feature gate kube-apiserver serves it behind, if any (only in
    /// versions not served by default).
    pub feature_gate: Option<String>,
}

fn yes() -> bool {
    true
}

/// The verbs of an ordinary stored resource, in discovery order.
pub const STANDARD_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl ResourceSpec {
    /// Verbs with the default applied.
    pub fn verbs(&self) -> Vec<String> {
        match &self.verbs {
            Some(v) => v.clone(),
            None => STANDARD_VERBS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// A subresource: a bare name (`status`, `scale`) or the long form.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum SubresourceSpec {
    /// `status` or `scale` shorthand.
    Short(String),
    /// Long form.
    Long {
        /// Subresource name.
        name: String,
        /// Response kind group (default: parent's).
        group: Option<String>,
        /// Response kind version (default: parent's).
        version: Option<String>,
        /// Response kind (default: parent's).
        kind: Option<String>,
        /// Verbs (default: get, patch, update).
        verbs: Option<Vec<String>>,
    },
}

fn gpu() -> Vec<String> {
    vec!["get".into(), "patch".into(), "update".into()]
}

impl SubresourceSpec {
    /// Expand defaults against the parent resource.
    pub fn resolve(&self, group: &str, version: &str, kind: &str) -> SubresourceInfo {
        match self {
            SubresourceSpec::Short(name) if name == "scale" => SubresourceInfo {
                name: name.clone(),
                group: "autoscaling".into(),
                version: "v1".into(),
                kind: "Scale".into(),
                verbs: gpu(),
            },
            SubresourceSpec::Short(name) => SubresourceInfo {
                name: name.clone(),
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                verbs: gpu(),
            },
            SubresourceSpec::Long {
                name,
                group: g,
                version: v,
                kind: k,
                verbs,
            } => SubresourceInfo {
                name: name.clone(),
                group: g.clone().unwrap_or_else(|| group.into()),
                version: v.clone().unwrap_or_else(|| version.into()),
                kind: k.clone().unwrap_or_else(|| kind.into()),
                verbs: verbs.clone().unwrap_or_else(gpu),
            },
        }
    }
}
