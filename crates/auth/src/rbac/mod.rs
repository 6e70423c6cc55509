//! The RBAC authorizer (kube's `plugin/pkg/auth/authorizer/rbac`) over an
//! in-memory index of Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings, fed by the store's change stream ([`follow`]), so
//! that an authorization check never calls the store.

pub mod escalation;
mod follow;
pub mod rule;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use keelson_api::EventType;
use keelson_apimachinery::meta::meta_str;
use serde_json::Value;

pub use follow::follow;
pub use rule::PolicyRule;

use crate::attributes::{Attributes, Decision};
use crate::user::{service_account_user, UserInfo, MASTERS};

/// The RBAC API group.
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// The four RBAC resources the index follows.
pub const RESOURCES: [&str; 4] = [
    "roles",
    "clusterroles",
    "rolebindings",
    "clusterrolebindings",
];

/// A binding's subject.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Subject {
    kind: String,
    name: String,
    namespace: String,
}

/// Where a rule came from, as kube's `roleBindingDescriber` and
/// `clusterRoleBindingDescriber` print it in an allow reason.
struct Source<'a> {
    binding: &'a Binding,
    subject: &'a Subject,
    /// The RoleBinding's namespace; empty for a ClusterRoleBinding.
    namespace: &'a str,
}

impl Source<'_> {
    /// `RoleBinding "b/ns" of Role "r" to User "u"`,
    /// `ClusterRoleBinding "b" of ClusterRole "r" to Group "g"`.
    fn describe(&self) -> String {
        let b = self.binding;
        let subject = match self.subject.kind.as_str() {
            "ServiceAccount" => {
                let ns = if self.subject.namespace.is_empty() {
                    self.namespace
                } else {
                    &self.subject.namespace
                };
                format!("ServiceAccount {:?}", format!("{}/{ns}", self.subject.name))
            }
            kind => format!("{kind} {:?}", self.subject.name),
        };
        if self.namespace.is_empty() {
            format!(
                "ClusterRoleBinding {:?} of {} {:?} to {subject}",
                b.name, b.role_kind, b.role_name
            )
        } else {
            format!(
                "RoleBinding {:?} of {} {:?} to {subject}",
                format!("{}/{}", b.name, self.namespace),
                b.role_kind,
                b.role_name
            )
        }
    }
}

/// A RoleBinding or ClusterRoleBinding, as the authorizer needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Binding {
    /// `metadata.name`.
    name: String,
    /// `Role` or `ClusterRole`.
    role_kind: String,
    role_name: String,
    subjects: Vec<Subject>,
}

impl Binding {
    fn of(obj: &Value) -> Binding {
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let role_ref = obj.get("roleRef").cloned().unwrap_or(Value::Null);
        Binding {
            name: meta_str(obj, "name").to_string(),
            role_kind: s(&role_ref, "kind"),
            role_name: s(&role_ref, "name"),
            subjects: obj
                .get("subjects")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|x| Subject {
                            kind: s(x, "kind"),
                            name: s(x, "name"),
                            namespace: s(x, "namespace"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// kube's `appliesTo`: the binding's first subject that is the user.
    fn applies_to(&self, user: &UserInfo, binding_namespace: &str) -> Option<&Subject> {
        self.subjects.iter().find(|s| match s.kind.as_str() {
            "User" => s.name == user.name,
            "Group" => user.in_group(&s.name),
            "ServiceAccount" => {
                // A RoleBinding's ServiceAccount subject defaults to the
                // binding's namespace (as kube's API defaulting does).
                let ns = if s.namespace.is_empty() {
                    binding_namespace
                } else {
                    &s.namespace
                };
                !ns.is_empty() && service_account_user(ns, &s.name) == user.name
            }
            _ => false,
        })
    }
}

#[derive(Debug, Default)]
struct Index {
    roles: HashMap<(String, String), Arc<Vec<PolicyRule>>>,
    cluster_roles: HashMap<String, Arc<Vec<PolicyRule>>>,
    role_bindings: HashMap<String, HashMap<String, Binding>>,
    cluster_role_bindings: HashMap<String, Binding>,
}

impl Index {
    fn apply(&mut self, resource: &str, deleted: bool, obj: &Value) {
        let ns = meta_str(obj, "namespace").to_string();
        let name = meta_str(obj, "name").to_string();
        match resource {
            "roles" if deleted => {
                self.roles.remove(&(ns, name));
            }
            "roles" => {
                self.roles
                    .insert((ns, name), Arc::new(PolicyRule::list_of(obj)));
            }
            "clusterroles" if deleted => {
                self.cluster_roles.remove(&name);
            }
            "clusterroles" => {
                self.cluster_roles
                    .insert(name, Arc::new(PolicyRule::list_of(obj)));
            }
            "rolebindings" if deleted => {
                if let Some(m) = self.role_bindings.get_mut(&ns) {
                    m.remove(&name);
                }
            }
            "rolebindings" => {
                self.role_bindings
                    .entry(ns)
                    .or_default()
                    .insert(name, Binding::of(obj));
            }
            "clusterrolebindings" if deleted => {
                self.cluster_role_bindings.remove(&name);
            }
            "clusterrolebindings" => {
                self.cluster_role_bindings.insert(name, Binding::of(obj));
            }
            _ => {}
        }
    }

    fn clear(&mut self, resource: &str) {
        match resource {
            "roles" => self.roles.clear(),
            "clusterroles" => self.cluster_roles.clear(),
            "rolebindings" => self.role_bindings.clear(),
            "clusterrolebindings" => self.cluster_role_bindings.clear(),
            _ => {}
        }
    }

    /// The rules a binding grants, or kube's not-found error.
    fn binding_rules(
        &self,
        b: &Binding,
        binding_namespace: &str,
    ) -> Result<Arc<Vec<PolicyRule>>, String> {
        match b.role_kind.as_str() {
            "ClusterRole" => self
                .cluster_roles
                .get(&b.role_name)
                .cloned()
                .ok_or_else(|| format!("clusterrole.{GROUP} {:?} not found", b.role_name)),
            "Role" => self
                .roles
                .get(&(binding_namespace.to_string(), b.role_name.clone()))
                .cloned()
                .ok_or_else(|| format!("role.{GROUP} {:?} not found", b.role_name)),
            other => Err(format!("unsupported role reference kind: {other:?}")),
        }
    }

    /// kube's `VisitRulesFor`: every rule that applies to `user` in
    /// `namespace` (cluster-wide first), until `visit` returns false.
    fn visit(
        &self,
        user: &UserInfo,
        namespace: &str,
        visit: &mut dyn FnMut(&Source<'_>, Result<&PolicyRule, String>) -> bool,
    ) {
        for b in self.cluster_role_bindings.values() {
            let Some(subject) = b.applies_to(user, "") else {
                continue;
            };
            let source = Source {
                binding: b,
                subject,
                namespace: "",
            };
            match self.binding_rules(b, "") {
                Ok(rules) => {
                    for r in rules.iter() {
                        if !visit(&source, Ok(r)) {
                            return;
                        }
                    }
                }
                Err(e) => {
                    if !visit(&source, Err(e)) {
                        return;
                    }
                }
            }
        }
        if namespace.is_empty() {
            return;
        }
        let Some(bindings) = self.role_bindings.get(namespace) else {
            return;
        };
        for b in bindings.values() {
            let Some(subject) = b.applies_to(user, namespace) else {
                continue;
            };
            let source = Source {
                binding: b,
                subject,
                namespace,
            };
            match self.binding_rules(b, namespace) {
                Ok(rules) => {
                    for r in rules.iter() {
                        if !visit(&source, Ok(r)) {
                            return;
                        }
                    }
                }
                Err(e) => {
                    if !visit(&source, Err(e)) {
                        return;
                    }
                }
            }
        }
    }
}

/// The RBAC authorizer and rule resolver. Cheap to share (`Arc`).
#[derive(Debug, Default)]
pub struct Rbac {
    index: RwLock<Index>,
    synced: tokio::sync::watch::Sender<bool>,
}

impl Rbac {
    /// An empty index (nothing is allowed until it is fed).
    pub fn new() -> Arc<Self> {
        Arc::new(Rbac {
            index: RwLock::new(Index::default()),
            synced: tokio::sync::watch::channel(false).0,
        })
    }

    /// Apply one change of an RBAC object (`resource` is its plural).
    pub fn apply(&self, resource: &str, event: EventType, obj: &Value) {
        let deleted = matches!(event, EventType::Deleted);
        if let Ok(mut ix) = self.index.write() {
            ix.apply(resource, deleted, obj);
        }
    }

    /// Replace every object of `resource` (after a list).
    pub fn replace(&self, resource: &str, items: &[Value]) {
        if let Ok(mut ix) = self.index.write() {
            ix.clear(resource);
            for obj in items {
                ix.apply(resource, false, obj);
            }
        }
    }

    /// Whether the index has listed all four resources at least once.
    pub fn synced(&self) -> tokio::sync::watch::Receiver<bool> {
        self.synced.subscribe()
    }

    pub(crate) fn mark_synced(&self) {
        self.synced.send_replace(true);
    }

    /// Whether RBAC allows the request: an allow's reason names the
    /// binding that allowed it (`RBAC: allowed by ...`), a denial's lists
    /// the bindings whose roles are missing (`RBAC: ...`).
    pub fn authorize(&self, a: &Attributes) -> Decision {
        let mut errors = Vec::new();
        let mut allowed = None;
        if let Ok(ix) = self.index.read() {
            ix.visit(&a.user, &a.namespace, &mut |source, r| match r {
                Ok(rule) if rule.allows(a) => {
                    allowed = Some(format!("RBAC: allowed by {}", source.describe()));
                    false
                }
                Ok(_) => true,
                Err(e) => {
                    errors.push(e);
                    true
                }
            });
        }
        if let Some(reason) = allowed {
            return Decision {
                allowed: true,
                reason,
            };
        }
        let reason = match errors.len() {
            0 => String::new(),
            1 => format!("RBAC: {}", errors[0]),
            _ => format!("RBAC: [{}]", errors.join(", ")),
        };
        Decision {
            allowed: false,
            reason,
        }
    }

    /// Every rule that applies to `user` in `namespace` (kube's
    /// `RulesFor`), and the errors met resolving them.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let (mut rules, mut errors) = (Vec::new(), Vec::new());
        if let Ok(ix) = self.index.read() {
            ix.visit(user, namespace, &mut |_, r| {
                match r {
                    Ok(rule) => rules.push(rule.clone()),
                    Err(e) => errors.push(e),
                }
                true
            });
        }
        (rules, errors)
    }

    /// The rules of the role a `roleRef` names (`Role` in `namespace`, or
    /// `ClusterRole`), or kube's not-found message.
    pub fn role_rules(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<PolicyRule>, String> {
        let ix = self
            .index
            .read()
            .map_err(|_| "the RBAC index is unavailable".to_string())?;
        let b = Binding {
            name: String::new(),
            role_kind: kind.to_string(),
            role_name: name.to_string(),
            subjects: Vec::new(),
        };
        ix.binding_rules(&b, namespace).map(|r| r.as_ref().clone())
    }
}

/// `--authorization-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// RBAC (and the `system:masters` superuser group).
    #[default]
    Rbac,
    /// Everything is allowed.
    AlwaysAllow,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "RBAC" => Ok(Mode::Rbac),
            "AlwaysAllow" => Ok(Mode::AlwaysAllow),
            other => Err(format!(
                "authorization mode {other:?} is not supported (supported: RBAC, AlwaysAllow)"
            )),
        }
    }
}

/// The authorizer chain kube-apiserver builds for `--authorization-mode`:
/// the `system:masters` group first, then the mode.
#[derive(Debug, Clone)]
pub struct Authorizer {
    pub mode: Mode,
    pub rbac: Arc<Rbac>,
}

impl Authorizer {
    /// Decide one request.
    pub fn authorize(&self, a: &Attributes) -> Decision {
        if self.mode == Mode::AlwaysAllow || a.user.in_group(MASTERS) {
            return Decision {
                allowed: true,
                reason: String::new(),
            };
        }
        self.rbac.authorize(a)
    }

    /// The rules that apply to `user` in `namespace` (for
    /// SelfSubjectRulesReview and escalation checks).
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        if self.mode == Mode::AlwaysAllow {
            return (
                vec![
                    PolicyRule {
                        verbs: vec!["*".into()],
                        api_groups: vec!["*".into()],
                        resources: vec!["*".into()],
                        ..Default::default()
                    },
                    PolicyRule {
                        verbs: vec!["*".into()],
                        non_resource_urls: vec!["*".into()],
                        ..Default::default()
                    },
                ],
                Vec::new(),
            );
        }
        self.rbac.rules_for(user, namespace)
    }
}

#[cfg(test)]
mod tests;
