//! Which requests a policy and a binding apply to: `matchConstraints` /
//! `matchResources` (resource rules, exclusions, namespace and object
//! selectors), as kube's `matching` package decides.

use keelson_api::{AdmissionRequest, Operation};
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

/// A `metav1.LabelSelector`; `None` fields match everything.
#[derive(Debug, Clone, Default)]
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
                        let s =
                            |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                        (s("key"), s("operator"), strings(e.get("values")))
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

/// One `NamedRuleWithOperations`.
#[derive(Debug, Clone, Default)]
struct Rule {
    groups: Vec<String>,
    versions: Vec<String>,
    resources: Vec<String>,
    operations: Vec<String>,
    names: Vec<String>,
    scope: String,
}

impl Rule {
    fn from_json(v: &Value) -> Rule {
        Rule {
            groups: strings(v.get("apiGroups")),
            versions: strings(v.get("apiVersions")),
            resources: strings(v.get("resources")),
            operations: strings(v.get("operations")),
            names: strings(v.get("resourceNames")),
            scope: v
                .get("scope")
                .and_then(Value::as_str)
                .unwrap_or("*")
                .to_string(),
        }
    }

    fn matches(&self, a: &Attrs) -> bool {
        let any = |list: &[String], v: &str| list.iter().any(|x| x == "*" || x == v);
        let scope_ok = match self.scope.as_str() {
            "Cluster" => a.namespace.is_empty(),
            "Namespaced" => !a.namespace.is_empty(),
            _ => true,
        };
        let resource_ok = self.resources.iter().any(|r| {
            let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
            (res == "*" || res == a.resource) && (sub == "*" || sub == a.subresource)
        });
        any(&self.operations, a.operation)
            && any(&self.groups, a.group)
            && any(&self.versions, a.version)
            && resource_ok
            && scope_ok
            && (self.names.is_empty() || self.names.iter().any(|n| n == a.name))
    }
}

/// A request as the rules see it.
#[derive(Clone, Copy)]
pub(crate) struct Attrs<'a> {
    pub(crate) group: &'a str,
    pub(crate) version: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) subresource: &'a str,
    pub(crate) operation: &'a str,
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
}

impl<'a> Attrs<'a> {
    pub(crate) fn of(req: &'a AdmissionRequest, name: &'a str) -> Attrs<'a> {
        Attrs {
            group: &req.gr.group,
            version: req.api_version.rsplit('/').next().unwrap_or(""),
            resource: &req.gr.resource,
            subresource: &req.subresource,
            operation: operation(req.operation),
            namespace: &req.namespace,
            name,
        }
    }
}

/// kube's operation name.
pub(crate) fn operation(op: Operation) -> &'static str {
    match op {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

/// `matchConstraints` or a binding's `matchResources`.
#[derive(Debug, Clone, Default)]
pub(crate) struct MatchResources {
    rules: Vec<Rule>,
    excluded: Vec<Rule>,
    pub(crate) namespace_selector: Selector,
    object_selector: Selector,
    /// `matchPolicy: Exact` (the default is Equivalent).
    exact: bool,
}

impl MatchResources {
    pub(crate) fn from_json(v: Option<&Value>) -> MatchResources {
        let rules = |k: &str| {
            v.and_then(|v| v.get(k))
                .and_then(Value::as_array)
                .map(|a| a.iter().map(Rule::from_json).collect())
                .unwrap_or_default()
        };
        MatchResources {
            rules: rules("resourceRules"),
            excluded: rules("excludeResourceRules"),
            namespace_selector: Selector::from_json(v.and_then(|v| v.get("namespaceSelector"))),
            object_selector: Selector::from_json(v.and_then(|v| v.get("objectSelector"))),
            exact: v.and_then(|v| v.get("matchPolicy")).and_then(Value::as_str) == Some("Exact"),
        }
    }

    /// The version of the request's resource the rules match: the
    /// request's own, else (under `matchPolicy: Equivalent`) the first of
    /// `equivalents` (the resource's other served versions) a rule names;
    /// `None` when excluded or not matched. With `require_rules` false (a
    /// binding), no resource rules match all.
    pub(crate) fn matched_version(
        &self,
        a: &Attrs,
        equivalents: &[String],
        require_rules: bool,
    ) -> Option<String> {
        let versions: Vec<&str> = std::iter::once(a.version)
            .chain(
                equivalents
                    .iter()
                    .filter(|_| !self.exact)
                    .map(String::as_str),
            )
            .collect();
        let hit = |rules: &[Rule]| {
            versions.iter().copied().find(|&version| {
                let at = Attrs { version, ..*a };
                rules.iter().any(|r| r.matches(&at))
            })
        };
        if hit(&self.excluded).is_some() {
            return None;
        }
        if !require_rules && self.rules.is_empty() {
            return Some(a.version.to_string());
        }
        hit(&self.rules).map(str::to_string)
    }

    /// The object selector against the new or the old object.
    pub(crate) fn object_matches(&self, object: &Value, old: Option<&Value>) -> bool {
        let labels = |o: &Value| o.get("metadata").and_then(|m| m.get("labels")).cloned();
        self.object_selector.is_empty()
            || self.object_selector.matches(labels(object).as_ref())
            || old.is_some_and(|o| self.object_selector.matches(labels(o).as_ref()))
    }

    /// The namespace selector against the namespace's labels (`None` for a
    /// cluster-scoped request other than a Namespace: always matches).
    pub(crate) fn namespace_matches(&self, ns_labels: Option<Option<&Value>>) -> bool {
        match ns_labels {
            None => true,
            Some(l) => self.namespace_selector.matches(l),
        }
    }
}

/// A ValidatingAdmissionPolicyBinding's spec.
#[derive(Debug, Clone, Default)]
pub(crate) struct Binding {
    pub(crate) name: String,
    pub(crate) policy_name: String,
    pub(crate) actions: Vec<String>,
    pub(crate) matching: Option<MatchResources>,
    pub(crate) param_ref: Option<super::params::ParamRef>,
}

impl Binding {
    pub(crate) fn from_json(obj: &Value) -> Binding {
        let spec = obj.get("spec");
        Binding {
            name: super::name_of(obj),
            policy_name: spec
                .and_then(|s| s.get("policyName"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            actions: strings(spec.and_then(|s| s.get("validationActions"))),
            matching: spec
                .and_then(|s| s.get("matchResources"))
                .filter(|m| m.is_object())
                .map(|m| MatchResources::from_json(Some(m))),
            param_ref: super::params::ParamRef::from_json(spec.and_then(|s| s.get("paramRef"))),
        }
    }
}
