//! kube-apiserver's bootstrap RBAC policy (the part Keelson serves), as
//! data: `data/bootstrap-policy.json` holds the ClusterRoles (cluster-admin,
//! admin/edit/view and their `aggregate-to-*` parts, system:basic-user,
//! system:discovery, system:public-info-viewer, system:monitoring, ...) and
//! the ClusterRoleBindings kube creates for them.

use serde_json::Value;

const POLICY: &str = include_str!("../data/bootstrap-policy.json");

/// The annotation that lets the reconciler update a bootstrap object.
pub const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

fn section(name: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(POLICY)
        .ok()
        .and_then(|v| v.get(name).and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

/// The bootstrap ClusterRoles.
pub fn cluster_roles() -> Vec<Value> {
    section("clusterRoles")
}

/// The bootstrap ClusterRoleBindings.
pub fn cluster_role_bindings() -> Vec<Value> {
    section("clusterRoleBindings")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_parses() {
        let names: Vec<String> = cluster_roles()
            .iter()
            .map(|r| r["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        for want in [
            "cluster-admin",
            "admin",
            "edit",
            "view",
            "system:basic-user",
            "system:discovery",
            "system:public-info-viewer",
            "system:monitoring",
        ] {
            assert!(names.iter().any(|n| n == want), "{want}");
        }
        assert_eq!(cluster_role_bindings().len(), 6);
    }
}
