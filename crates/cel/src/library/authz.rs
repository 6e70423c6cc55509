//! kube's CEL authorizer library (`kubernetes.authz` and
//! `kubernetes.authzSelectors`): `authorizer.path(p)`,
//! `authorizer.group(g).resource(r)` with `subresource`, `namespace`,
//! `name`, `fieldSelector` and `labelSelector`, `check(verb)` and the
//! decision's `allowed()`, `reason()`, `errored()` and `error()`;
//! `authorizer.serviceAccount(ns, name)` and the request's own
//! `authorizer.requestResource`.
//!
//! The checks are answered by an [`Authorize`] the caller binds with the
//! request's user; this crate knows nothing of RBAC.

use crate::eval::{EvalError, EvalResult};
use crate::types::Ty;
use crate::value::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// kube's fixed cost of one `check` (two fit in the per-call limit).
pub const CHECK_COST: u64 = 350_000;

/// Who a check is for (kube's `user.Info`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What one `check` asks (kube's `AttributesRecord`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Check {
    pub user: User,
    pub verb: String,
    /// A resource check (else a non-resource `path` check).
    pub resource_request: bool,
    pub path: String,
    pub group: String,
    /// Always `*` for a resource check, as kube asks.
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub field_selector: String,
    pub label_selector: String,
}

/// An authorizer's answer to one check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
    /// The authorizer's error, if it failed.
    pub error: Option<String>,
}

/// The authorizer behind the `authorizer` variable.
pub trait Authorize: Send + Sync {
    /// Decide one check.
    fn authorize(&self, check: &Check) -> Decision;
}

/// The library's object types, by kube's type names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Authorizer,
    PathCheck,
    GroupCheck,
    ResourceCheck,
    Decision,
}

impl Kind {
    /// kube's CEL type name.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Authorizer => "kubernetes.authorization.Authorizer",
            Kind::PathCheck => "kubernetes.authorization.PathCheck",
            Kind::GroupCheck => "kubernetes.authorization.GroupCheck",
            Kind::ResourceCheck => "kubernetes.authorization.ResourceCheck",
            Kind::Decision => "kubernetes.authorization.Decision",
        }
    }
}

/// A value of one of the library's types.
#[derive(Clone)]
pub struct AuthzValue {
    authorizer: Arc<dyn Authorize>,
    state: State,
}

#[derive(Debug, Clone)]
enum State {
    /// `authorizer`, with the request's own resource check when bound.
    Authorizer(Box<Check>, Option<Box<Check>>),
    Path(Box<Check>),
    Group(Box<Check>),
    Resource(Box<Check>),
    Decision(Decision),
}

impl fmt::Debug for AuthzValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthzValue")
            .field("state", &self.state)
            .finish()
    }
}

impl AuthzValue {
    /// `authorizer` for `user`; `request` is the request's resource (its
    /// group, resource, subresource, namespace and name) that
    /// `authorizer.requestResource` checks.
    pub fn authorizer(
        authorizer: Arc<dyn Authorize>,
        user: User,
        request: Option<Check>,
    ) -> AuthzValue {
        let base = Check {
            user: user.clone(),
            ..Check::default()
        };
        let request = request.map(|r| {
            Box::new(Check {
                user,
                resource_request: true,
                version: "*".into(),
                ..r
            })
        });
        AuthzValue {
            authorizer,
            state: State::Authorizer(Box::new(base), request),
        }
    }

    /// The value's library type.
    pub fn kind(&self) -> Kind {
        match self.state {
            State::Authorizer(..) => Kind::Authorizer,
            State::Path(_) => Kind::PathCheck,
            State::Group(_) => Kind::GroupCheck,
            State::Resource(_) => Kind::ResourceCheck,
            State::Decision(_) => Kind::Decision,
        }
    }

    fn with(&self, state: State) -> Value {
        Value::Authz(Arc::new(AuthzValue {
            authorizer: self.authorizer.clone(),
            state,
        }))
    }

    /// `authorizer.requestResource`.
    pub fn select(&self, field: &str) -> EvalResult {
        match (&self.state, field) {
            (State::Authorizer(_, Some(r)), "requestResource") => {
                Ok(self.with(State::Resource(r.clone())))
            }
            _ => Err(EvalError::msg(format!("no such key: {field}"))),
        }
    }
}

fn nonempty(s: &str, what: &str) -> Result<(), EvalError> {
    if s.trim().is_empty() {
        Err(EvalError::msg(format!("{what} must not be empty")))
    } else {
        Ok(())
    }
}

/// A member call on a library value.
pub fn call(name: &str, target: &AuthzValue, args: Vec<Value>) -> EvalResult {
    let strs: Vec<&str> = args
        .iter()
        .filter_map(|a| match a {
            Value::Str(s) => Some(s.as_ref()),
            _ => None,
        })
        .collect();
    if strs.len() != args.len() {
        return Err(super::no_overload());
    }
    let no = super::no_overload;
    match (&target.state, name, strs.as_slice()) {
        (State::Authorizer(base, _), "path", [p]) => {
            nonempty(p, "path")?;
            let mut c = base.clone();
            c.path = p.to_string();
            Ok(target.with(State::Path(c)))
        }
        (State::Authorizer(base, _), "group", [g]) => {
            let mut c = base.clone();
            c.group = g.to_string();
            Ok(target.with(State::Group(c)))
        }
        (State::Authorizer(base, req), "serviceAccount", [ns, n]) => {
            if !keelson_apimachinery::names::is_dns1123_subdomain(n).is_empty() {
                return Err(EvalError::msg("Invalid service account name"));
            }
            if !keelson_apimachinery::names::is_dns1123_label(ns).is_empty() {
                return Err(EvalError::msg("Invalid service account namespace"));
            }
            let user = User {
                name: format!("system:serviceaccount:{ns}:{n}"),
                uid: String::new(),
                groups: vec![
                    "system:serviceaccounts".into(),
                    format!("system:serviceaccounts:{ns}"),
                ],
                extra: BTreeMap::new(),
            };
            let mut c = base.clone();
            c.user = user;
            // kube's serviceAccount authorizer has no requestResource
            let _ = req;
            Ok(target.with(State::Authorizer(c, None)))
        }
        (State::Group(c), "resource", [r]) => {
            nonempty(r, "resource")?;
            let mut c = c.clone();
            c.resource = r.to_string();
            c.resource_request = true;
            c.version = "*".into();
            Ok(target.with(State::Resource(c)))
        }
        (State::Resource(c), "subresource" | "namespace" | "name", [v])
        | (State::Resource(c), "fieldSelector" | "labelSelector", [v]) => {
            let mut c = c.clone();
            let v = v.to_string();
            match name {
                "subresource" => c.subresource = v,
                "namespace" => c.namespace = v,
                "name" => c.name = v,
                "fieldSelector" => c.field_selector = v,
                _ => c.label_selector = v,
            }
            Ok(target.with(State::Resource(c)))
        }
        (State::Path(c) | State::Resource(c), "check", [verb]) => {
            let mut c = c.clone();
            c.verb = verb.to_string();
            let d = target.authorizer.authorize(&c);
            Ok(target.with(State::Decision(d)))
        }
        (State::Decision(d), "allowed", []) => Ok(Value::Bool(d.allowed)),
        (State::Decision(d), "reason", []) => Ok(Value::str(d.reason.as_str())),
        (State::Decision(d), "errored", []) => Ok(Value::Bool(d.error.is_some())),
        (State::Decision(d), "error", []) => {
            Ok(Value::str(d.error.clone().unwrap_or_default().as_str()))
        }
        _ => Err(no()),
    }
}

/// Whether `name` is one of the library's member functions.
pub fn is_member(name: &str) -> bool {
    member_result(None, name, 0).is_some()
}

/// The result type of `name` called on a receiver of kind `recv` (any
/// receiver when `None`) with `argc` string arguments; `None` when no
/// overload fits.
pub fn member_result(recv: Option<Kind>, name: &str, argc: usize) -> Option<Ty> {
    use Kind::*;
    let (want, args, out) = match name {
        "path" => (Authorizer, 1, Ty::Authz(PathCheck)),
        "group" => (Authorizer, 1, Ty::Authz(GroupCheck)),
        "serviceAccount" => (Authorizer, 2, Ty::Authz(Authorizer)),
        "resource" => (GroupCheck, 1, Ty::Authz(ResourceCheck)),
        "subresource" | "namespace" | "name" | "fieldSelector" | "labelSelector" => {
            (ResourceCheck, 1, Ty::Authz(ResourceCheck))
        }
        "check" => {
            return match recv {
                None => Some(Ty::Authz(Decision)),
                Some(PathCheck | ResourceCheck) if argc == 1 => Some(Ty::Authz(Decision)),
                Some(_) => None,
            }
        }
        "allowed" | "errored" => (Decision, 0, Ty::Bool),
        "reason" | "error" => (Decision, 0, Ty::Str),
        _ => return None,
    };
    match recv {
        None => Some(out),
        Some(k) if k == want && argc == args => Some(out),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<Check>>);

    impl Authorize for Recorder {
        fn authorize(&self, c: &Check) -> Decision {
            if let Ok(mut v) = self.0.lock() {
                v.push(c.clone());
            }
            Decision {
                allowed: c.resource == "secrets" && c.verb == "get",
                reason: "because".into(),
                error: None,
            }
        }
    }

    fn s(v: &str) -> Value {
        Value::str(v)
    }

    fn authz(v: &Value) -> &AuthzValue {
        match v {
            Value::Authz(a) => a,
            other => panic!("not an authz value: {other:?}"),
        }
    }

    #[test]
    fn builds_the_check_kube_asks() {
        let rec = Arc::new(Recorder::default());
        let user = User {
            name: "alice".into(),
            ..User::default()
        };
        let a = AuthzValue::authorizer(rec.clone(), user, None);
        let g = call("group", &a, vec![s("")]).unwrap();
        let r = call("resource", authz(&g), vec![s("secrets")]).unwrap();
        let r = call("namespace", authz(&r), vec![s("ns1")]).unwrap();
        let d = call("check", authz(&r), vec![s("get")]).unwrap();
        assert!(matches!(
            call("allowed", authz(&d), vec![]),
            Ok(Value::Bool(true))
        ));
        let seen = rec.0.lock().unwrap();
        assert_eq!(seen[0].user.name, "alice");
        assert_eq!(seen[0].version, "*");
        assert!(seen[0].resource_request);
        assert_eq!(seen[0].namespace, "ns1");
    }

    #[test]
    fn rejects_bad_arguments_as_kube() {
        let a = AuthzValue::authorizer(Arc::new(Recorder::default()), User::default(), None);
        let e = call("path", &a, vec![s(" ")]).unwrap_err();
        assert_eq!(e.to_string(), "path must not be empty");
        let e = call("serviceAccount", &a, vec![s("ns"), s("Bad_Name")]).unwrap_err();
        assert_eq!(e.to_string(), "Invalid service account name");
        assert!(call("allowed", &a, vec![]).is_err());
        assert!(a.select("requestResource").is_err());
    }

    #[test]
    fn service_account_checks_as_that_account() {
        let rec = Arc::new(Recorder::default());
        let a = AuthzValue::authorizer(rec.clone(), User::default(), None);
        let sa = call("serviceAccount", &a, vec![s("ns"), s("builder")]).unwrap();
        let p = call("path", authz(&sa), vec![s("/healthz")]).unwrap();
        call("check", authz(&p), vec![s("get")]).unwrap();
        let seen = rec.0.lock().unwrap();
        assert_eq!(seen[0].user.name, "system:serviceaccount:ns:builder");
        assert_eq!(
            seen[0].user.groups,
            vec!["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        assert!(!seen[0].resource_request);
    }
}
