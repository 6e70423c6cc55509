//! What a request asks to do (kube's `authorizer.Attributes`) and kube's
//! wording when it may not.

use keelson_apimachinery::status::StatusDetails;
use keelson_apimachinery::{ApiError, GroupResource, StatusReason};

use crate::user::UserInfo;

/// One authorization question: may `user` do `verb` on this resource or
/// non-resource path?
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    pub user: UserInfo,
    /// `get`, `list`, ..., `impersonate`, `bind`, `escalate`, ...
    pub verb: String,
    /// A resource request (else a non-resource `path`).
    pub resource_request: bool,
    /// The non-resource path (`/version`).
    pub path: String,
    pub namespace: String,
    pub api_group: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
}

/// An authorizer's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Why (kube's `reason`; empty in the common case).
    pub reason: String,
}

impl Attributes {
    /// kube's `forbiddenMessage`: `User "u" cannot list resource "pods" in
    /// API group "" in the namespace "ns"` (at the cluster scope, or `path`
    /// for a non-resource request).
    pub fn forbidden_message(&self) -> String {
        let user = &self.user.name;
        if !self.resource_request {
            return format!("User {:?} cannot {} path {:?}", user, self.verb, self.path);
        }
        let mut resource = self.resource.clone();
        if !self.subresource.is_empty() {
            resource = format!("{}/{}", resource, self.subresource);
        }
        if !self.namespace.is_empty() {
            format!(
                "User {:?} cannot {} resource {:?} in API group {:?} in the namespace {:?}",
                user, self.verb, resource, self.api_group, self.namespace
            )
        } else {
            format!(
                "User {:?} cannot {} resource {:?} in API group {:?} at the cluster scope",
                user, self.verb, resource, self.api_group
            )
        }
    }

    /// kube's `responsewriters.Forbidden`: the `403` Status for a denied
    /// request, `reason` appended after `: ` when there is one.
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let mut msg = self.forbidden_message();
        if !reason.is_empty() {
            msg = format!("{msg}: {reason}");
        }
        forbidden_error(&self.api_group, &self.resource, &self.name, &msg)
    }
}

/// kube's `NewForbidden(gr, name, err)`: `<gr> "<name>" is forbidden:
/// <msg>`, or `forbidden: <msg>` without a resource.
pub fn forbidden_error(group: &str, resource: &str, name: &str, msg: &str) -> ApiError {
    if resource.is_empty() && group.is_empty() {
        let mut e = ApiError::new(403, StatusReason::Forbidden, format!("forbidden: {msg}"));
        e.details = Some(Box::new(StatusDetails {
            name: name.to_string(),
            ..Default::default()
        }));
        return e;
    }
    ApiError::forbidden(&GroupResource::new(group, resource), name, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(ns: &str, sub: &str) -> Attributes {
        Attributes {
            user: UserInfo::new("u", vec![]),
            verb: "list".into(),
            resource_request: true,
            namespace: ns.into(),
            resource: "pods".into(),
            subresource: sub.into(),
            ..Default::default()
        }
    }

    #[test]
    fn messages() {
        assert_eq!(
            attrs("ns", "").forbidden("").message,
            r#"pods is forbidden: User "u" cannot list resource "pods" in API group "" in the namespace "ns""#
        );
        assert_eq!(
            attrs("", "log").forbidden_message(),
            r#"User "u" cannot list resource "pods/log" in API group "" at the cluster scope"#
        );
        let mut a = attrs("", "");
        a.resource_request = false;
        a.verb = "get".into();
        a.path = "/api".into();
        a.resource.clear();
        let e = a.forbidden("");
        assert_eq!(e.message, r#"forbidden: User "u" cannot get path "/api""#);
        assert_eq!(e.code, 403);
        let mut g = attrs("x", "");
        g.api_group = "apps".into();
        g.resource = "deployments".into();
        g.name = "d".into();
        g.verb = "get".into();
        assert_eq!(
            g.forbidden("RBAC: role.rbac.authorization.k8s.io \"r\" not found").message,
            "deployments.apps \"d\" is forbidden: User \"u\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"x\": RBAC: role.rbac.authorization.k8s.io \"r\" not found"
        );
    }
}
