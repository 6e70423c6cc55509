//! Group/resource and object keys.

use serde::{Deserialize, Serialize};

/// A group and a resource plural, e.g. `deployments.apps`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
pub struct GroupResource {
    /// API group; empty for the core group.
    pub group: String,
    /// Resource plural, e.g. `pods`.
    pub resource: String,
}

impl GroupResource {
    /// Build from group and resource.
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl std::fmt::Display for GroupResource {
    /// `res` or `res.group`, as Go's `GroupResource.String()`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}", self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// Where one object lives: resource, namespace (empty for cluster scope), name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct ObjectKey {
    pub gr: GroupResource,
    /// Empty for cluster-scoped resources.
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    /// Build a key.
    pub fn new(gr: GroupResource, namespace: &str, name: &str) -> Self {
        ObjectKey {
            gr,
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}
