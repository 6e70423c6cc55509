//! Authorization (kube-apiserver's `WithAuthorization`): the request's
//! attributes — verb, resource or non-resource path — go to the
//! `--authorization-mode` authorizer (`system:masters` first, then RBAC or
//! AlwaysAllow); a denial is kube's `403` Status word for word. Dry-run
//! requests are authorized as the real request.

use http::Method;
use keelson_apimachinery::ApiResult;
use keelson_auth::{Attributes, Authorizer, UserInfo};

use super::request_info::{RequestInfo, Target};

/// The attributes kube's `RequestInfo` gives a request.
pub fn attributes(user: &UserInfo, method: &Method, path: &str, info: &RequestInfo) -> Attributes {
    let method_verb = || method.as_str().to_ascii_lowercase();
    match &info.target {
        Target::Resource(ri) => {
            // `/api/v1/namespaces/{name}` is in its own namespace.
            let namespace = if ri.group.is_empty()
                && ri.resource == "namespaces"
                && ri.namespace.is_empty()
                && !ri.name.is_empty()
            {
                ri.name.clone()
            } else {
                ri.namespace.clone()
            };
            Attributes {
                user: user.clone(),
                verb: info
                    .verb
                    .map(|v| v.as_str().to_string())
                    .unwrap_or_else(|| resource_verb(method)),
                resource_request: true,
                path: path.to_string(),
                namespace,
                api_group: ri.group.clone(),
                api_version: ri.version.clone(),
                resource: ri.resource.clone(),
                subresource: ri.subresource.clone(),
                name: ri.name.clone(),
            }
        }
        _ => Attributes {
            user: user.clone(),
            verb: method_verb(),
            resource_request: false,
            path: path.to_string(),
            ..Default::default()
        },
    }
}

/// kube's verb of a resource request whose method the URL does not take
/// (`POST` on an object is still `create`).
fn resource_verb(method: &Method) -> String {
    match method.as_str() {
        "POST" => "create".into(),
        "PUT" => "update".into(),
        "PATCH" => "patch".into(),
        "GET" | "HEAD" => "get".into(),
        "DELETE" => "delete".into(),
        other => other.to_ascii_lowercase(),
    }
}

/// Allow the request or answer kube's `403`.
pub fn authorize(authz: &Authorizer, attrs: &Attributes) -> ApiResult<()> {
    let d = authz.authorize(attrs);
    if d.allowed {
        Ok(())
    } else {
        Err(attrs.forbidden(&d.reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_util::Query;

    #[test]
    fn request_attributes() {
        let u = UserInfo::new("u", vec![]);
        let q = Query::parse(None);
        let a = |m: Method, p: &str| attributes(&u, &m, p, &RequestInfo::new(&m, p, &q));
        let x = a(Method::GET, "/api/v1/namespaces/ns/pods/p/log");
        assert_eq!(
            (
                x.verb.as_str(),
                x.namespace.as_str(),
                x.resource.as_str(),
                x.subresource.as_str(),
                x.name.as_str()
            ),
            ("get", "ns", "pods", "log", "p")
        );
        let x = a(Method::GET, "/api/v1/namespaces/ns");
        assert_eq!((x.namespace.as_str(), x.name.as_str()), ("ns", "ns"));
        let x = a(Method::GET, "/apis");
        assert!(!x.resource_request);
        assert_eq!((x.verb.as_str(), x.path.as_str()), ("get", "/apis"));
        let x = a(Method::POST, "/api/v1/namespaces/ns/pods/p");
        assert_eq!(x.verb, "create");
    }
}
