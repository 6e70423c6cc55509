//! One webhook of a Mutating/ValidatingWebhookConfiguration, read once per
//! configuration revision (its match conditions compiled), and whether it
//! applies to a request: kube's `rules`, `namespace` and `object`
//! predicates and its exemption of the webhook configurations themselves.

use keelson_api::Operation;
use keelson_cel::expr::Expression;
use keelson_webhook_client::ClientConfig;
use serde_json::Value;

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// A `metav1.LabelSelector`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Selector {
    labels: Vec<(String, String)>,
    /// (key, operator, values).
    exprs: Vec<(String, String, Vec<String>)>,
}

impl Selector {
    pub(crate) fn from_json(v: Option<&Value>) -> Selector {
        let Some(v) = v.filter(|v| v.is_object()) else {
            return Selector::default();
        };
        let labels = v
            .get("matchLabels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let exprs = v
            .get("matchExpressions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            str_of(e, "key").to_string(),
                            str_of(e, "operator").to_string(),
                            strings(e.get("values")),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Selector { labels, exprs }
    }

    /// Matches everything.
    pub(crate) fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.exprs.is_empty()
    }

    /// Whether `labels` (an object's `metadata.labels`) match.
    pub(crate) fn matches(&self, labels: Option<&Value>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.labels.iter().all(|(k, v)| get(k) == Some(v.as_str()))
            && self.exprs.iter().all(|(k, op, vals)| match op.as_str() {
                "In" => get(k).is_some_and(|v| vals.iter().any(|x| x == v)),
                "NotIn" => get(k).is_none_or(|v| !vals.iter().any(|x| x == v)),
                "Exists" => get(k).is_some(),
                "DoesNotExist" => get(k).is_none(),
                _ => false,
            })
    }
}

/// One `RuleWithOperations`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rule {
    operations: Vec<String>,
    groups: Vec<String>,
    versions: Vec<String>,
    resources: Vec<String>,
    scope: String,
}

/// The request as the rules see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attrs<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub operation: Operation,
    pub namespace: &'a str,
}

/// kube's operation name.
pub(crate) fn operation_name(op: Operation) -> &'static str {
    match op {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

impl Rule {
    fn from_json(v: &Value) -> Rule {
        Rule {
            operations: strings(v.get("operations")),
            groups: strings(v.get("apiGroups")),
            versions: strings(v.get("apiVersions")),
            resources: strings(v.get("resources")),
            scope: v
                .get("scope")
                .and_then(Value::as_str)
                .unwrap_or("*")
                .to_string(),
        }
    }

    /// kube's `rules.Matcher.Matches`.
    pub(crate) fn matches(&self, a: &Attrs) -> bool {
        let any = |list: &[String], v: &str| list.iter().any(|x| x == "*" || x == v);
        let is_namespace = a.resource == "namespaces";
        let scope = match self.scope.as_str() {
            "*" => true,
            // Namespaces are cluster-scoped even though they carry a name
            // in the namespace attribute.
            "Namespaced" => !is_namespace && !a.namespace.is_empty(),
            "Cluster" => is_namespace || a.namespace.is_empty(),
            _ => false,
        };
        let resource = self.resources.iter().any(|r| {
            let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
            (res == "*" || res == a.resource) && (sub == "*" || sub == a.subresource)
        });
        scope
            && self
                .operations
                .iter()
                .any(|o| o == "*" || o == operation_name(a.operation))
            && any(&self.groups, a.group)
            && any(&self.versions, a.version)
            && resource
    }
}

/// A `matchConditions` entry, compiled.
#[derive(Debug)]
pub(crate) struct Condition {
    pub source: String,
    pub compiled: Result<Expression, String>,
}

/// One webhook, as its configuration revision declares it.
#[derive(Debug)]
pub(crate) struct Hook {
    /// `webhooks[].name`.
    pub name: String,
    /// The configuration's name (kube's audit annotations name it).
    pub config_name: String,
    /// Identifies the configuration revision and webhook (clients, reinvocation).
    pub key: HookKey,
    pub client_config: ClientConfig,
    pub rules: Vec<Rule>,
    /// `failurePolicy: Ignore`.
    pub ignore_failures: bool,
    pub namespace_selector: Selector,
    pub object_selector: Selector,
    /// `sideEffects`; `None` when absent.
    pub side_effects: Option<String>,
    /// `timeoutSeconds` (default 10).
    pub timeout_seconds: u64,
    pub review_versions: Vec<String>,
    pub conditions: Vec<Condition>,
    /// `reinvocationPolicy: IfNeeded` (mutating only).
    pub reinvoke_if_needed: bool,
}

/// A webhook's identity: configuration uid and revision, and its index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct HookKey {
    pub config_uid: String,
    pub config_revision: String,
    pub index: usize,
}

impl Hook {
    /// The webhooks of one configuration object.
    pub(crate) fn all_of(config: &Value) -> Vec<Hook> {
        let meta = |k: &str| {
            config
                .get("metadata")
                .map(|m| str_of(m, k).to_string())
                .unwrap_or_default()
        };
        let (uid, rv) = (meta("uid"), meta("resourceVersion"));
        let Some(hooks) = config.get("webhooks").and_then(Value::as_array) else {
            return Vec::new();
        };
        hooks
            .iter()
            .enumerate()
            .map(|(index, h)| Hook {
                name: str_of(h, "name").to_string(),
                config_name: meta("name"),
                key: HookKey {
                    config_uid: uid.clone(),
                    config_revision: rv.clone(),
                    index,
                },
                client_config: h
                    .get("clientConfig")
                    .cloned()
                    .and_then(|c| serde_json::from_value(c).ok())
                    .unwrap_or_default(),
                rules: h
                    .get("rules")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(Rule::from_json).collect())
                    .unwrap_or_default(),
                ignore_failures: str_of(h, "failurePolicy") == "Ignore",
                namespace_selector: Selector::from_json(h.get("namespaceSelector")),
                object_selector: Selector::from_json(h.get("objectSelector")),
                side_effects: h
                    .get("sideEffects")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                timeout_seconds: h
                    .get("timeoutSeconds")
                    .and_then(Value::as_u64)
                    .filter(|t| *t > 0)
                    .unwrap_or(10),
                review_versions: strings(h.get("admissionReviewVersions")),
                conditions: h
                    .get("matchConditions")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|c| {
                                let source = str_of(c, "expression").to_string();
                                Condition {
                                    compiled: Expression::compile(&source),
                                    source,
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                reinvoke_if_needed: str_of(h, "reinvocationPolicy") == "IfNeeded",
            })
            .collect()
    }

    /// Whether a rule matches the request as sent.
    pub(crate) fn rules_match(&self, a: &Attrs) -> bool {
        self.rules.iter().any(|r| r.matches(a))
    }

    /// kube's object selector: the new or the old object's labels.
    pub(crate) fn object_matches(&self, object: Option<&Value>, old: Option<&Value>) -> bool {
        let labels = |o: &Value| o.get("metadata").and_then(|m| m.get("labels")).cloned();
        self.object_selector.is_empty()
            || object.is_some_and(|o| self.object_selector.matches(labels(o).as_ref()))
            || old.is_some_and(|o| self.object_selector.matches(labels(o).as_ref()))
    }

    /// `sideEffects` allows a dry-run request.
    pub(crate) fn dry_run_safe(&self) -> bool {
        matches!(self.side_effects.as_deref(), Some("None" | "NoneOnDryRun"))
    }
}

/// kube's `IsExemptAdmissionConfigurationResource`: webhooks and
/// admission policies never see writes of webhook configurations,
/// admission policies or their bindings.
pub(crate) fn exempt(group: &str, kind: &str) -> bool {
    group == "admissionregistration.k8s.io"
        && matches!(
            kind,
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attrs<'a>(resource: &'a str, sub: &'a str, ns: &'a str, op: Operation) -> Attrs<'a> {
        Attrs {
            group: "apps",
            version: "v1",
            resource,
            subresource: sub,
            operation: op,
            namespace: ns,
        }
    }

    fn rule(v: Value) -> Rule {
        Rule::from_json(&v)
    }

    #[test]
    fn rules_match_operations_groups_versions_resources_and_scope() {
        let r = rule(
            json!({"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}),
        );
        assert!(r.matches(&attrs("deployments", "", "default", Operation::Create)));
        assert!(!r.matches(&attrs("deployments", "", "default", Operation::Update)));
        assert!(!r.matches(&attrs("deployments", "scale", "default", Operation::Create)));
        assert!(!r.matches(&attrs("replicasets", "", "default", Operation::Create)));
        let all = rule(
            json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}),
        );
        assert!(all.matches(&attrs("deployments", "scale", "", Operation::Delete)));
        let star = rule(
            json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}),
        );
        assert!(!star.matches(&attrs("deployments", "status", "x", Operation::Update)));
        let sub = rule(
            json!({"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments/status"]}),
        );
        assert!(sub.matches(&attrs("deployments", "status", "x", Operation::Update)));
        assert!(!sub.matches(&attrs("deployments", "", "x", Operation::Update)));
        let namespaced = rule(
            json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Namespaced"}),
        );
        assert!(namespaced.matches(&attrs("deployments", "", "x", Operation::Create)));
        assert!(!namespaced.matches(&attrs("nodes", "", "", Operation::Create)));
        assert!(!namespaced.matches(&attrs("namespaces", "", "x", Operation::Update)));
        let cluster = rule(
            json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"}),
        );
        assert!(cluster.matches(&attrs("namespaces", "", "x", Operation::Update)));
        assert!(!cluster.matches(&attrs("deployments", "", "x", Operation::Create)));
    }

    #[test]
    fn selectors_and_object_selector_on_old_or_new() {
        let cfg = json!({
            "metadata": {"name": "c", "uid": "u", "resourceVersion": "3"},
            "webhooks": [{
                "name": "a.example.com",
                "objectSelector": {"matchLabels": {"team": "a"}},
                "namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://127.0.0.1:1/x"}
            }]
        });
        let hooks = Hook::all_of(&cfg);
        let h = &hooks[0];
        assert_eq!(h.timeout_seconds, 10);
        assert!(!h.ignore_failures && h.dry_run_safe());
        assert_eq!(
            h.client_config.url.as_deref(),
            Some("https://127.0.0.1:1/x")
        );
        let with = json!({"metadata": {"labels": {"team": "a"}}});
        let without = json!({"metadata": {}});
        assert!(h.object_matches(Some(&with), None));
        assert!(h.object_matches(Some(&without), Some(&with)));
        assert!(!h.object_matches(Some(&without), None));
        assert!(h.namespace_selector.matches(Some(&json!({"env": "dev"}))));
        assert!(h.namespace_selector.matches(None));
        assert!(!h.namespace_selector.matches(Some(&json!({"env": "prod"}))));
        assert!(exempt(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration"
        ));
        assert!(exempt(
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicy"
        ));
        assert!(!exempt("admissionregistration.k8s.io", "Deployment"));
    }
}
