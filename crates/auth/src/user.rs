//! Who a request comes from (kube's `user.Info`) and the well-known names.

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// The user every unauthenticated request is.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group of unauthenticated requests.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The superuser group: allowed everything, by every authorizer mode.
pub const MASTERS: &str = "system:masters";
/// The group of every ServiceAccount.
pub const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// Prefix of a ServiceAccount's user name.
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
/// The user extra naming the credential a request authenticated with
/// (`X509SHA256=...` for client certificates, `JTI=...` for ServiceAccount
/// tokens).
pub const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";

/// An authenticated (or anonymous) user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with a name and groups.
    pub fn new(name: impl Into<String>, groups: Vec<String>) -> Self {
        UserInfo {
            name: name.into(),
            groups,
            ..Default::default()
        }
    }

    /// `system:anonymous` in `system:unauthenticated`.
    pub fn anonymous() -> Self {
        UserInfo::new(ANONYMOUS, vec![UNAUTHENTICATED.into()])
    }

    /// The ServiceAccount `ns/name` with its groups.
    pub fn service_account(namespace: &str, name: &str, uid: &str) -> Self {
        UserInfo {
            name: service_account_user(namespace, name),
            uid: uid.to_string(),
            groups: vec![
                SERVICE_ACCOUNTS.into(),
                format!("{SERVICE_ACCOUNTS}:{namespace}"),
            ],
            extra: BTreeMap::new(),
        }
    }

    /// Add `system:authenticated` (kube's `AuthenticatedGroupAdder`) unless
    /// the user is anonymous or already has it.
    pub fn with_authenticated(mut self) -> Self {
        if self.name != ANONYMOUS
            && !self
                .groups
                .iter()
                .any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED)
        {
            self.groups.push(AUTHENTICATED.into());
        }
        self
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// `authentication.k8s.io/v1` `UserInfo` as JSON (empty fields left out).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("username".into(), json!(self.name));
        if !self.uid.is_empty() {
            m.insert("uid".into(), json!(self.uid));
        }
        if !self.groups.is_empty() {
            m.insert("groups".into(), json!(self.groups));
        }
        if !self.extra.is_empty() {
            m.insert("extra".into(), json!(self.extra));
        }
        Value::Object(m)
    }
}

/// `system:serviceaccount:<ns>:<name>`.
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}")
}

/// The namespace and name of a ServiceAccount user name.
pub fn split_service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let (ns, name) = rest.split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authenticated_group_added_once() {
        let u = UserInfo::new("a", vec![]).with_authenticated();
        assert_eq!(u.groups, vec![AUTHENTICATED]);
        assert_eq!(u.clone().with_authenticated().groups, vec![AUTHENTICATED]);
        assert_eq!(
            UserInfo::anonymous().with_authenticated().groups,
            vec![UNAUTHENTICATED]
        );
    }

    #[test]
    fn service_account_names() {
        let u = UserInfo::service_account("ns", "sa", "u1");
        assert_eq!(u.name, "system:serviceaccount:ns:sa");
        assert_eq!(
            u.groups,
            vec!["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        assert_eq!(split_service_account(&u.name), Some(("ns", "sa")));
        assert_eq!(split_service_account("system:serviceaccount:ns"), None);
    }
}
