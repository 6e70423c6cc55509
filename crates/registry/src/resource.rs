//! What the catalog knows about one served resource.

use keelson_apimachinery::GroupResource;
use serde::{Deserialize, Serialize};

use crate::custom::CustomResource;
use crate::strategy::Strategy;

/// The rule kube-apiserver validates `metadata.name` with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NameRule {
    /// DNS-1123 subdomain (`NameIsDNSSubdomain`), the common case.
    #[default]
    Subdomain,
    /// DNS-1123 label (namespaces).
    Label,
    /// DNS-1035 label (services).
    Dns1035,
    /// Path segment name (`IsValidPathSegmentName`: RBAC, APIService).
    PathSegment,
}

/// A subresource such as `status`, `scale` or `log`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubresourceInfo {
    /// Subresource name, e.g. `scale`.
    pub name: String,
    /// Group of the response kind (`autoscaling` for `scale`).
    pub group: String,
    /// Version of the response kind.
    pub version: String,
    /// Response kind, e.g. `Scale`.
    pub kind: String,
    /// Discovery verbs, e.g. `[get, patch, update]`.
    pub verbs: Vec<String>,
}

/// One resource in one group version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// API group, empty for core.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// List kind, e.g. `PodList`.
    pub list_kind: String,
    /// Resource name, e.g. `pods`.
    pub plural: String,
    /// Singular name, e.g. `pod`.
    pub singular: String,
    /// Namespaced (`true`) or cluster-scoped.
    pub namespaced: bool,
    /// Discovery verbs.
    pub verbs: Vec<String>,
    /// Short names, e.g. `po`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    /// Categories, e.g. `all`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// Subresources, sorted by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subresources: Vec<SubresourceInfo>,
    /// Schema definition name of the kind.
    pub definition: String,
    /// Rule for `metadata.name`.
    pub name_rule: NameRule,
    /// Discovery `storageVersionHash` (empty for resources without storage).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub storage_version_hash: String,
    /// Per-resource behaviour (left out of `catalog.json`: the built-in
    /// strategies are filled in code).
    #[serde(default, skip_serializing_if = "Strategy::is_default")]
    pub strategy: Strategy,
    /// The CustomResourceDefinition version this resource comes from
    /// (`None` for built-in resources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<Box<CustomResource>>,
}

impl ResourceInfo {
    /// Group and resource, e.g. `apps` / `deployments`.
    pub fn gr(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }

    /// `apiVersion` of the kind: `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The subresource `name`, if served.
    pub fn subresource(&self, name: &str) -> Option<&SubresourceInfo> {
        self.subresources.iter().find(|s| s.name == name)
    }

    /// Whether the subresource `name` is served.
    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresource(name).is_some()
    }

    /// Whether the discovery verb `v` is supported.
    pub fn has_verb(&self, v: &str) -> bool {
        self.verbs.iter().any(|x| x == v)
    }

    /// Whether `metadata.generation` is tracked (built-ins: the kind has a
    /// `spec`).
    pub fn tracks_generation(&self) -> bool {
        self.strategy.tracks_generation
    }
}

/// A served API group and its versions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupInfo {
    /// Group name, empty for core.
    pub name: String,
    /// Served versions, preferred first.
    pub versions: Vec<String>,
}

impl GroupInfo {
    /// The preferred (first) version.
    pub fn preferred_version(&self) -> Option<&str> {
        self.versions.first().map(String::as_str)
    }
}
