//! rbac.authorization.k8s.io: role bindings and cluster role bindings
//! (roles and cluster roles use the default table, as in kube).

use serde_json::Value;

use super::columns::*;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

pub(crate) static ROLE_BINDING: Printer = Printer {
    columns: &[
        NAME,
        col("Role", "string", ROLE_BINDING_ROLE_REF),
        AGE,
        wide("Users", "string", "Users in the roleBinding"),
        wide("Groups", "string", "Groups in the roleBinding"),
        wide(
            "ServiceAccounts",
            "string",
            "ServiceAccounts in the roleBinding",
        ),
    ],
    print: print_binding,
};

pub(crate) static CLUSTER_ROLE_BINDING: Printer = Printer {
    columns: &[
        NAME,
        col("Role", "string", CLUSTER_ROLE_BINDING_ROLE_REF),
        AGE,
        wide("Users", "string", "Users in the clusterRoleBinding"),
        wide("Groups", "string", "Groups in the clusterRoleBinding"),
        wide(
            "ServiceAccounts",
            "string",
            "ServiceAccounts in the clusterRoleBinding",
        ),
    ],
    print: print_binding,
};

/// `rbac.SubjectsStrings`: users, groups and `namespace/name` service
/// accounts (other kinds are not shown).
fn subjects(o: &Value) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for s in arr_at(o, &["subjects"]) {
        let name = str_at(s, &["name"]).to_string();
        match str_at(s, &["kind"]) {
            "ServiceAccount" => sas.push(format!("{}/{name}", str_at(s, &["namespace"]))),
            "User" => users.push(name),
            "Group" => groups.push(name),
            _ => {}
        }
    }
    (users, groups, sas)
}

fn print_binding(o: &Value, now: Time) -> Row {
    let (users, groups, sas) = subjects(o);
    Row::new(vec![
        Value::from(name(o)),
        Value::from(format!(
            "{}/{}",
            str_at(o, &["roleRef", "kind"]),
            str_at(o, &["roleRef", "name"])
        )),
        age(o, now),
        Value::from(users.join(", ")),
        Value::from(groups.join(", ")),
        Value::from(sas.join(", ")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::time;
    use serde_json::json;

    // Facts from kube's printers_test.go TestPrintRoleBinding.
    #[test]
    fn bindings() {
        let rb = json!({
            "metadata": {"name": "binding1", "creationTimestamp": "2024-05-01T11:00:00Z"},
            "subjects": [
                {"kind": "User", "name": "system:kube-controller-manager"},
                {"kind": "Group", "name": "system:masters"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "kube-system"},
                {"kind": "ServiceAccount", "name": "builder", "namespace": "ci"}
            ],
            "roleRef": {"kind": "Role", "name": "extension-apiserver-authentication-reader"}
        });
        assert_eq!(
            print_binding(&rb, time::parse("2024-05-01T12:00:00Z").unwrap()).cells,
            vec![
                json!("binding1"),
                json!("Role/extension-apiserver-authentication-reader"),
                json!("60m"),
                json!("system:kube-controller-manager"),
                json!("system:masters"),
                json!("kube-system/default, ci/builder")
            ]
        );
    }
}
