//! RBAC policy rules and how they match a request (kube's
//! `rbac/v1` helpers `VerbMatches`, `ResourceMatches`, ...).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::attributes::Attributes;

/// `*`: every verb, group, resource or URL.
pub const ALL: &str = "*";

/// One `rbac.authorization.k8s.io/v1` `PolicyRule`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// The rules of a Role or ClusterRole object (`rules`; null is none;
    /// a rule that does not parse is skipped).
    pub fn list_of(role: &Value) -> Vec<PolicyRule> {
        role.get("rules")
            .and_then(Value::as_array)
            .map(|rules| {
                rules
                    .iter()
                    .filter_map(|r| serde_json::from_value(r.clone()).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether this rule allows the request (kube's `RuleAllows`).
    pub fn allows(&self, a: &Attributes) -> bool {
        if a.resource_request {
            let combined = if a.subresource.is_empty() {
                a.resource.clone()
            } else {
                format!("{}/{}", a.resource, a.subresource)
            };
            verb_matches(self, &a.verb)
                && api_group_matches(self, &a.api_group)
                && resource_matches(self, &combined, &a.subresource)
                && resource_name_matches(self, &a.name)
        } else {
            verb_matches(self, &a.verb) && non_resource_url_matches(self, &a.path)
        }
    }

    /// kube's `CompactString`: `{APIGroups:["apps"], Resources:["pods"],
    /// Verbs:["get" "list"]}` (Go's `%q` of a string slice).
    pub fn compact_string(&self) -> String {
        let q = |v: &[String]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|s| format!("{s:?}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        let mut parts = Vec::new();
        if !self.api_groups.is_empty() {
            parts.push(format!("APIGroups:{}", q(&self.api_groups)));
        }
        if !self.resources.is_empty() {
            parts.push(format!("Resources:{}", q(&self.resources)));
        }
        if !self.non_resource_urls.is_empty() {
            parts.push(format!("NonResourceURLs:{}", q(&self.non_resource_urls)));
        }
        if !self.resource_names.is_empty() {
            parts.push(format!("ResourceNames:{}", q(&self.resource_names)));
        }
        if !self.verbs.is_empty() {
            parts.push(format!("Verbs:{}", q(&self.verbs)));
        }
        format!("{{{}}}", parts.join(", "))
    }
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

fn verb_matches(r: &PolicyRule, verb: &str) -> bool {
    has(&r.verbs, ALL) || has(&r.verbs, verb)
}

fn api_group_matches(r: &PolicyRule, group: &str) -> bool {
    has(&r.api_groups, ALL) || has(&r.api_groups, group)
}

fn resource_matches(r: &PolicyRule, combined: &str, subresource: &str) -> bool {
    r.resources.iter().any(|res| {
        res == ALL
            || res == combined
            || (!subresource.is_empty() && res.strip_prefix("*/").is_some_and(|s| s == subresource))
    })
}

fn resource_name_matches(r: &PolicyRule, name: &str) -> bool {
    r.resource_names.is_empty() || has(&r.resource_names, name)
}

fn non_resource_url_matches(r: &PolicyRule, path: &str) -> bool {
    r.non_resource_urls.iter().any(|u| url_matches(u, path))
}

/// A non-resource URL pattern against a path: `*`, exact, or `prefix*`.
pub(crate) fn url_matches(pattern: &str, path: &str) -> bool {
    pattern == ALL
        || pattern == path
        || pattern
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::UserInfo;

    fn rule(json: &str) -> PolicyRule {
        serde_json::from_str(json).unwrap()
    }

    fn res(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            user: UserInfo::new("u", vec![]),
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    #[test]
    fn matching() {
        let r =
            rule(r#"{"verbs":["get","list"],"apiGroups":[""],"resources":["pods","pods/log"]}"#);
        assert!(r.allows(&res("get", "", "pods", "", "p")));
        assert!(r.allows(&res("get", "", "pods", "log", "p")));
        assert!(!r.allows(&res("get", "", "pods", "exec", "p")));
        assert!(!r.allows(&res("delete", "", "pods", "", "p")));
        assert!(!r.allows(&res("get", "apps", "pods", "", "p")));
        let star = rule(r#"{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}"#);
        assert!(star.allows(&res("escalate", "x", "y", "z", "")));
        let sub = rule(r#"{"verbs":["get"],"apiGroups":["apps"],"resources":["*/scale"]}"#);
        assert!(sub.allows(&res("get", "apps", "deployments", "scale", "d")));
        assert!(!sub.allows(&res("get", "apps", "deployments", "", "d")));
        let named = rule(
            r#"{"verbs":["get"],"apiGroups":[""],"resources":["configmaps"],"resourceNames":["a"]}"#,
        );
        assert!(named.allows(&res("get", "", "configmaps", "", "a")));
        assert!(!named.allows(&res("get", "", "configmaps", "", "b")));
        assert!(!named.allows(&res("list", "", "configmaps", "", "")));
        let urls = rule(r#"{"verbs":["get"],"nonResourceURLs":["/healthz","/apis/*"]}"#);
        let path = |p: &str| Attributes {
            verb: "get".into(),
            path: p.into(),
            ..Default::default()
        };
        assert!(urls.allows(&path("/healthz")));
        assert!(urls.allows(&path("/apis/apps")));
        assert!(!urls.allows(&path("/api")));
    }

    #[test]
    fn compact() {
        let r = rule(r#"{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]}"#);
        assert_eq!(
            r.compact_string(),
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}"#
        );
    }
}
