//! URL and method → what is being asked for (kube-apiserver's
//! `RequestInfo`): the target, and for resource requests the Kubernetes
//! verb that authorization and the handlers use.

use http::Method;
use percent_encoding::percent_decode_str;

use crate::http_util::Query;

/// The Kubernetes verb of a resource request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Verb {
    /// The verb as discovery and RBAC spell it (`deletecollection`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }

    /// The verb of `method` on a collection (`collection`) or one object;
    /// `None` when the method means nothing there (`405`).
    pub fn of(method: &Method, collection: bool, watch: bool) -> Option<Verb> {
        Some(match (method.as_str(), collection) {
            ("GET", true) if watch => Verb::Watch,
            ("GET", true) => Verb::List,
            ("GET", false) => Verb::Get,
            ("POST", true) => Verb::Create,
            ("PUT", false) => Verb::Update,
            ("PATCH", false) => Verb::Patch,
            ("DELETE", false) => Verb::Delete,
            ("DELETE", true) => Verb::DeleteCollection,
            _ => return None,
        })
    }
}

/// What one request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestInfo {
    pub target: Target,
    /// The Kubernetes verb of a resource request; `None` for other paths
    /// and for methods a resource URL does not take.
    pub verb: Option<Verb>,
}

impl RequestInfo {
    /// Parse a request's method, path and query.
    pub fn new(method: &Method, path: &str, query: &Query) -> RequestInfo {
        let target = parse(path);
        let verb = match &target {
            // POST to an object's subresource creates it
            // (`serviceaccounts/x/token`, `pods/x/eviction`).
            Target::Resource(ri) if method == Method::POST && !ri.subresource.is_empty() => {
                Some(Verb::Create)
            }
            Target::Resource(ri) => Verb::of(method, ri.name.is_empty(), query.flag("watch")),
            _ => None,
        };
        RequestInfo { target, verb }
    }
}

/// A request for a resource (or one of its subresources).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceRequest {
    /// API group ("" for the core group).
    pub group: String,
    pub version: String,
    /// Namespace from the URL, empty when absent.
    pub namespace: String,
    /// Resource plural.
    pub resource: String,
    /// Object name, empty for collections.
    pub name: String,
    /// Subresource (`status`, `scale`, ...), empty when absent.
    pub subresource: String,
}

/// What a URL path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/version`.
    Version,
    /// `/api`.
    CoreGroup,
    /// `/apis`.
    Groups,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`.
    GroupVersion { group: String, version: String },
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiRoot,
    /// `/openapi/v3/{api/v1 | apis/g/v}`.
    OpenApiDoc(String),
    /// `/livez`, `/readyz`, `/healthz`, optionally with one check name.
    Health {
        endpoint: String,
        check: Option<String>,
    },
    /// `/metrics` (Prometheus).
    Metrics,
    /// A resource URL.
    Resource(ResourceRequest),
    /// Anything else.
    Unknown,
}

/// Namespace subresources that keep `namespaces/{name}/{sub}` on the
/// namespaces resource.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// Parse a request path.
pub fn parse(path: &str) -> Target {
    let trimmed = path.trim_matches('/');
    let parts: Vec<String> = if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').map(decode).collect()
    };
    let p: Vec<&str> = parts.iter().map(String::as_str).collect();
    match p.as_slice() {
        ["version"] => Target::Version,
        ["api"] => Target::CoreGroup,
        ["apis"] => Target::Groups,
        ["apis", g] => Target::Group(g.to_string()),
        ["api", v] => Target::GroupVersion {
            group: String::new(),
            version: v.to_string(),
        },
        ["apis", g, v] => Target::GroupVersion {
            group: g.to_string(),
            version: v.to_string(),
        },
        ["openapi", "v2"] => Target::OpenApiV2,
        ["openapi", "v3"] => Target::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => Target::OpenApiDoc(rest.join("/")),
        [ep @ ("livez" | "readyz" | "healthz")] => Target::Health {
            endpoint: ep.to_string(),
            check: None,
        },
        [ep @ ("livez" | "readyz" | "healthz"), check] => Target::Health {
            endpoint: ep.to_string(),
            check: Some(check.to_string()),
        },
        ["metrics"] => Target::Metrics,
        ["api", v, rest @ ..] => resource("", v, rest),
        ["apis", g, v, rest @ ..] => resource(g, v, rest),
        _ => Target::Unknown,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Target {
    let mut r = ResourceRequest {
        group: group.into(),
        version: version.into(),
        ..Default::default()
    };
    let mut rest = rest;
    if rest.len() >= 2 && rest[0] == "namespaces" {
        r.namespace = rest[1].to_string();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        } else {
            // `namespaces/{name}[/status|finalize]`: the namespace object itself.
            r.namespace = String::new();
        }
    }
    match rest {
        [res] => r.resource = res.to_string(),
        [res, name] => {
            r.resource = res.to_string();
            r.name = name.to_string();
        }
        [res, name, sub] => {
            r.resource = res.to_string();
            r.name = name.to_string();
            r.subresource = sub.to_string();
        }
        // `.../proxy/{path}`: the rest is the proxied path.
        [res, name, sub, ..] if *sub == "proxy" => {
            r.resource = res.to_string();
            r.name = name.to_string();
            r.subresource = sub.to_string();
        }
        _ => return Target::Unknown,
    }
    if r.resource.is_empty() || (rest.len() > 1 && r.name.is_empty()) {
        return Target::Unknown;
    }
    Target::Resource(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str) -> ResourceRequest {
        match parse(path) {
            Target::Resource(r) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn verbs() {
        let info = |m: Method, path: &str, q: &str| {
            RequestInfo::new(&m, path, &Query::parse(Some(q))).verb
        };
        let pods = "/api/v1/namespaces/d/pods";
        assert_eq!(info(Method::GET, pods, ""), Some(Verb::List));
        assert_eq!(info(Method::GET, pods, "watch=1"), Some(Verb::Watch));
        assert_eq!(info(Method::GET, pods, "watch=false"), Some(Verb::List));
        assert_eq!(info(Method::POST, pods, ""), Some(Verb::Create));
        assert_eq!(info(Method::DELETE, pods, ""), Some(Verb::DeleteCollection));
        assert_eq!(info(Method::PUT, pods, ""), None);
        let pod = "/api/v1/namespaces/d/pods/p";
        assert_eq!(info(Method::GET, pod, "watch=1"), Some(Verb::Get));
        assert_eq!(info(Method::PUT, pod, ""), Some(Verb::Update));
        assert_eq!(info(Method::PATCH, pod, ""), Some(Verb::Patch));
        assert_eq!(info(Method::DELETE, pod, ""), Some(Verb::Delete));
        assert_eq!(info(Method::POST, pod, ""), None);
        assert_eq!(info(Method::GET, "/version", ""), None);
        assert_eq!(Verb::DeleteCollection.as_str(), "deletecollection");
    }

    #[test]
    fn resource_paths() {
        let r = res("/api/v1/namespaces/default/pods/p/status");
        assert_eq!(
            (
                r.namespace.as_str(),
                r.resource.as_str(),
                r.name.as_str(),
                r.subresource.as_str()
            ),
            ("default", "pods", "p", "status")
        );
        let r = res("/apis/apps/v1/deployments");
        assert_eq!(
            (r.group.as_str(), r.namespace.as_str(), r.resource.as_str()),
            ("apps", "", "deployments")
        );
        let r = res("/api/v1/namespaces/kube-system");
        assert_eq!(
            (r.resource.as_str(), r.name.as_str(), r.namespace.as_str()),
            ("namespaces", "kube-system", "")
        );
        let r = res("/api/v1/namespaces/x/status");
        assert_eq!(
            (r.resource.as_str(), r.name.as_str(), r.subresource.as_str()),
            ("namespaces", "x", "status")
        );
        let r = res("/api/v1/namespaces");
        assert_eq!((r.resource.as_str(), r.name.as_str()), ("namespaces", ""));
        assert_eq!(parse("/api/v1/namespaces/a/pods/b/c/d"), Target::Unknown);
        assert_eq!(
            parse("/openapi/v3/apis/apps/v1"),
            Target::OpenApiDoc("apis/apps/v1".into())
        );
        assert_eq!(parse("/openapi/v2"), Target::OpenApiV2);
        assert_eq!(
            parse("/livez/ping"),
            Target::Health {
                endpoint: "livez".into(),
                check: Some("ping".into())
            }
        );
    }
}
