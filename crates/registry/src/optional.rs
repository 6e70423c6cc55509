//! Resources kube-apiserver 1.34 registers but does not serve by default:
//! the beta group versions `--runtime-config` turns on. The catalog keeps
//! them apart from the served resources ([`crate::CatalogData::optional`]),
//! so nothing serves them until they are inserted into a live
//! [`crate::Catalog`].

use serde::{Deserialize, Serialize};

use crate::resource::ResourceInfo;

/// One resource of a group version that is off by default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OptionalResource {
    /// The resource as it is served once enabled.
    #[serde(flatten)]
    pub resource: ResourceInfo,
    /// The feature gate kube-apiserver also requires (e.g.
    /// `ClusterTrustBundle`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_gate: Option<String>,
}

impl OptionalResource {
    /// Whether this is the resource `group`/`version`/`plural`.
    pub fn is(&self, group: &str, version: &str, plural: &str) -> bool {
        let r = &self.resource;
        r.group == group && r.version == version && r.plural == plural
    }
}
