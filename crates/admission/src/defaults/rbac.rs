//! `rbac.authorization.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/rbac/v1/defaults.go`): a binding's
//! `roleRef.apiGroup` and its `User`/`Group` subjects' `apiGroup` are the
//! RBAC group. Roles and ClusterRoles have no defaults.

use serde_json::{Map, Value};

use super::{child, each, or_set_str};

/// The RBAC API group.
const GROUP: &str = "rbac.authorization.k8s.io";

/// RoleBinding and ClusterRoleBinding: `roleRef.apiGroup` and each
/// subject's `apiGroup`.
pub(super) fn binding(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    // `roleRef` is a struct in Go: it is defaulted even when absent.
    if let Some(role_ref) = child(m, "roleRef") {
        or_set_str(role_ref, "apiGroup", GROUP);
    }
    for s in each(m, "subjects") {
        subject(s);
    }
}

/// `SetDefaults_Subject`: `User` and `Group` subjects without an
/// `apiGroup` get the RBAC group; `ServiceAccount` (and other kinds) stay
/// without one.
fn subject(s: &mut Map<String, Value>) {
    if matches!(
        s.get("kind").and_then(Value::as_str),
        Some("User" | "Group")
    ) {
        or_set_str(s, "apiGroup", GROUP);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn subjects_by_kind() {
        let mut b = json!({"roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "bob"}, {"kind": "Group", "name": "g", "apiGroup": ""},
                         {"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]});
        binding(&mut b);
        assert_eq!(b["roleRef"]["apiGroup"], GROUP);
        assert_eq!(b["subjects"][0]["apiGroup"], GROUP);
        assert_eq!(b["subjects"][1]["apiGroup"], GROUP);
        assert!(b["subjects"][2].get("apiGroup").is_none());
    }
}
