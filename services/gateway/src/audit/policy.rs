//! The audit policy (`audit.k8s.io/v1` `Policy`): loading and validation
//! as kube-apiserver's `LoadPolicyFromFile` and `ValidatePolicy` do them,
//! and rule matching as its `policyRuleEvaluator` (the first rule that
//! matches decides; no match is level `None`).

use std::path::Path;

use keelson_auth::Attributes;
use serde::{Deserialize, Serialize};

use super::AuditError;

/// How much of a request is recorded, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Level {
    /// Not recorded.
    None,
    /// User, verb, resource, timestamps, response code: no bodies.
    Metadata,
    /// Metadata and the request object.
    Request,
    /// Request and the response object.
    RequestResponse,
}

impl Level {
    fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "None" => Level::None,
            "Metadata" => Level::Metadata,
            "Request" => Level::Request,
            "RequestResponse" => Level::RequestResponse,
            _ => return None,
        })
    }
}

/// The stages of a request at which an event may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Stage {
    /// As soon as the request is received (authenticated).
    RequestReceived,
    /// Once the response headers are sent, for long-running requests.
    ResponseStarted,
    /// Once the response is complete.
    ResponseComplete,
    /// When the handler panicked.
    Panic,
}

impl Stage {
    const ALL: [(&'static str, Stage); 4] = [
        ("RequestReceived", Stage::RequestReceived),
        ("ResponseStarted", Stage::ResponseStarted),
        ("ResponseComplete", Stage::ResponseComplete),
        ("Panic", Stage::Panic),
    ];

    fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.iter().find(|(n, _)| *n == s).map(|(_, st)| *st)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of stages (`omitStages`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stages(u8);

impl Stages {
    /// Whether `stage` is in the set.
    pub fn contains(self, stage: Stage) -> bool {
        self.0 & stage.bit() != 0
    }

    fn of(names: &[String]) -> Stages {
        Stages(
            names
                .iter()
                .filter_map(|n| Stage::parse(n))
                .fold(0, |acc, s| acc | s.bit()),
        )
    }
}

/// What the policy decides for one request (kube's `RequestAuditConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub level: Level,
    pub omit_stages: Stages,
    pub omit_managed_fields: bool,
}

/// The policy file as written (`audit.k8s.io/v1` `Policy`). Unknown fields
/// are ignored, as kube's lenient decoding does after a strict-decoding
/// warning.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PolicyDoc {
    api_version: Option<String>,
    kind: Option<String>,
    rules: Vec<RuleDoc>,
    omit_stages: Vec<String>,
    omit_managed_fields: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RuleDoc {
    level: String,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    #[serde(rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    omit_stages: Vec<String>,
    omit_managed_fields: Option<bool>,
}

/// A rule's `resources` entry.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct GroupResources {
    /// API group; `""` is the core group.
    pub group: String,
    /// Resources (`pods`, `pods/log`, `*`, `*/status`, `pods/*`); empty is
    /// every resource of the group.
    pub resources: Vec<String>,
    /// Object names; empty is every name.
    pub resource_names: Vec<String>,
}

/// One validated rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub level: Level,
    pub users: Vec<String>,
    pub user_groups: Vec<String>,
    pub verbs: Vec<String>,
    pub resources: Vec<GroupResources>,
    pub namespaces: Vec<String>,
    pub non_resource_urls: Vec<String>,
    /// The rule's stages joined with the policy's.
    pub omit_stages: Stages,
    pub omit_managed_fields: Option<bool>,
}

/// A loaded, validated audit policy.
#[derive(Debug, Clone)]
pub struct Policy {
    pub rules: Vec<Rule>,
    pub omit_stages: Stages,
    pub omit_managed_fields: bool,
}

const LEVELS: &str = r#""None", "Metadata", "Request", "RequestResponse""#;
const STAGES: &str = "RequestReceived,ResponseStarted,ResponseComplete,Panic";

impl Policy {
    /// Read and load a policy file (kube's `LoadPolicyFromFile`: its
    /// errors end in `: from file <path>`).
    pub fn load(path: &Path) -> Result<Policy, AuditError> {
        let text = std::fs::read(path).map_err(|e| {
            AuditError::Policy(format!(
                "failed to read file path {:?}: {}",
                path.display().to_string(),
                e
            ))
        })?;
        Policy::from_bytes(&text)
            .map_err(|e| AuditError::Policy(format!("{}: from file {}", e, path.display())))
    }

    /// Decode (YAML or JSON), check the group-version, validate, and refuse
    /// a policy without rules (kube's `LoadPolicyFromBytes`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Policy, String> {
        let doc: PolicyDoc = if bytes.iter().all(u8::is_ascii_whitespace) {
            PolicyDoc::default()
        } else {
            serde_yaml::from_slice(bytes).map_err(|e| format!("failed decoding: {e}"))?
        };
        let api_version = doc.api_version.as_deref().unwrap_or("");
        let kind = doc.kind.as_deref().unwrap_or("");
        if kind.is_empty() {
            return Err(format!(
                "failed decoding: Object 'Kind' is missing in '{}'",
                String::from_utf8_lossy(bytes).trim()
            ));
        }
        if api_version != "audit.k8s.io/v1" || kind != "Policy" {
            return Err(format!(
                "failed decoding: no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/audit/scheme.go:30\""
            ));
        }
        let errors = validate(&doc);
        match errors.len() {
            0 => {}
            1 => return Err(errors[0].clone()),
            _ => return Err(format!("[{}]", errors.join(", "))),
        }
        if doc.rules.is_empty() {
            return Err("loaded illegal policy with 0 rules".into());
        }
        let policy_stages = Stages::of(&doc.omit_stages);
        let rules = doc
            .rules
            .into_iter()
            .map(|r| Rule {
                level: Level::parse(&r.level).unwrap_or(Level::None),
                omit_stages: Stages(policy_stages.0 | Stages::of(&r.omit_stages).0),
                users: r.users,
                user_groups: r.user_groups,
                verbs: r.verbs,
                resources: r.resources,
                namespaces: r.namespaces,
                non_resource_urls: r.non_resource_urls,
                omit_managed_fields: r.omit_managed_fields,
            })
            .collect();
        Ok(Policy {
            rules,
            omit_stages: policy_stages,
            omit_managed_fields: doc.omit_managed_fields,
        })
    }

    /// The level, omitted stages and managed-fields choice of a request
    /// (kube's `EvaluatePolicyRule`).
    pub fn evaluate(&self, attrs: &Attributes, authenticated: bool) -> Decision {
        for rule in &self.rules {
            if rule.matches(attrs, authenticated) {
                return Decision {
                    level: rule.level,
                    omit_stages: rule.omit_stages,
                    omit_managed_fields: rule
                        .omit_managed_fields
                        .unwrap_or(self.omit_managed_fields),
                };
            }
        }
        Decision {
            level: Level::None,
            omit_stages: self.omit_stages,
            omit_managed_fields: false,
        }
    }
}

/// kube's `ValidatePolicy`: every finding, with its field path.
fn validate(doc: &PolicyDoc) -> Vec<String> {
    let mut errs = Vec::new();
    validate_stages(&doc.omit_stages, "omitStages", &mut errs);
    for (i, r) in doc.rules.iter().enumerate() {
        let p = format!("rules[{i}]");
        if r.level.is_empty() {
            errs.push(format!("{p}.level: Required value"));
        } else if Level::parse(&r.level).is_none() {
            errs.push(format!(
                "{p}.level: Unsupported value: {:?}: supported values: {LEVELS}",
                r.level
            ));
        }
        for (j, url) in r.non_resource_urls.iter().enumerate() {
            if url == "*" {
                continue;
            }
            let at = format!("{p}.nonResourceURLs[{j}]");
            if !url.starts_with('/') {
                errs.push(format!(
                    "{at}: Invalid value: {url:?}: non-resource URL rules must begin with a '/' character"
                ));
            }
            if !url.is_empty() && url[..url.len() - 1].contains('*') {
                errs.push(format!(
                    "{at}: Invalid value: {url:?}: non-resource URL wildcards '*' must be the final character of the rule"
                ));
            }
        }
        for gr in &r.resources {
            if !gr.group.is_empty() && !is_dns_subdomain(&gr.group) {
                errs.push(format!(
                    "{p}.resources.group: Invalid value: {:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    gr.group
                ));
            }
            if !gr.resource_names.is_empty() && gr.resources.is_empty() {
                errs.push(format!(
                    "{p}.resources.resourceNames: Invalid value: {}: using resourceNames requires at least one resource",
                    go_strings(&gr.resource_names)
                ));
            }
        }
        validate_stages(&r.omit_stages, &format!("{p}.omitStages"), &mut errs);
        if !r.non_resource_urls.is_empty() && (!r.resources.is_empty() || !r.namespaces.is_empty())
        {
            errs.push(format!(
                "{p}.nonResourceURLs: Invalid value: {}: rules cannot apply to both regular resources and non-resource URLs",
                go_strings(&r.non_resource_urls)
            ));
        }
    }
    errs
}

fn validate_stages(stages: &[String], path: &str, errs: &mut Vec<String>) {
    for (i, s) in stages.iter().enumerate() {
        if Stage::parse(s).is_none() {
            errs.push(format!(
                "{path}[{i}]: Invalid value: {s:?}: allowed stages are {STAGES}"
            ));
        }
    }
}

/// A string slice as Go's `%v` prints it: `[a b]`.
fn go_strings(v: &[String]) -> String {
    format!("[]string{{{}}}", {
        let quoted: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
        quoted.join(", ")
    })
}

/// An RFC 1123 subdomain: lowercase alphanumerics, `-` and `.`, at most
/// 253 characters, each label starting and ending alphanumeric.
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

impl Rule {
    /// kube's `ruleMatches`.
    fn matches(&self, a: &Attributes, authenticated: bool) -> bool {
        if !self.users.is_empty() && (!authenticated || !self.users.contains(&a.user.name)) {
            return false;
        }
        if !self.user_groups.is_empty()
            && (!authenticated || !a.user.groups.iter().any(|g| self.user_groups.contains(g)))
        {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.contains(&a.verb) {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(a);
        }
        if !self.non_resource_urls.is_empty() {
            return !a.resource_request
                && self
                    .non_resource_urls
                    .iter()
                    .any(|spec| path_matches(&a.path, spec));
        }
        true
    }

    /// kube's `ruleMatchesResource`: namespaces (`""` for cluster-scoped
    /// requests), then `group` and `resources` with `*`, `*/sub` and
    /// `res/*` wildcards and `resourceNames`.
    fn matches_resource(&self, a: &Attributes) -> bool {
        if !a.resource_request {
            return false;
        }
        if !self.namespaces.is_empty() && !self.namespaces.contains(&a.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if a.subresource.is_empty() {
            a.resource.clone()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        for gr in &self.resources {
            if gr.group != a.api_group {
                continue;
            }
            if gr.resources.is_empty() {
                return true;
            }
            if !gr.resource_names.is_empty() && !gr.resource_names.contains(&a.name) {
                continue;
            }
            for res in &gr.resources {
                if *res == combined || res == "*" {
                    return true;
                }
                if !a.subresource.is_empty() && res.strip_prefix("*/") == Some(&a.subresource) {
                    return true;
                }
                if res.strip_suffix("/*") == Some(&a.resource) {
                    return true;
                }
            }
        }
        false
    }
}

/// kube's `pathMatches`: `*`, an exact path, or a prefix ending in `*`.
fn path_matches(path: &str, spec: &str) -> bool {
    spec == "*"
        || spec == path
        || spec
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_auth::UserInfo;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get]
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  resources: [{group: "", resources: ["pods/log", "*/status"]}]
- level: Request
  users: [alice]
  namespaces: [dev]
  resources: [{group: "", resources: [pods]}]
- level: Request
  userGroups: [ops]
  resources: [{group: apps, resources: ["deployments/*"], resourceNames: [web]}]
- level: Metadata
  nonResourceURLs: ["/healthz*", /version]
  omitStages: [ResponseComplete]
  omitManagedFields: true
- level: None
  resources: [{group: ""}]
"#;

    fn attrs(user: &str, groups: &[&str], verb: &str, path: &str) -> Attributes {
        let m = http::Method::GET;
        let q = crate::http_util::Query::parse(None);
        let info = crate::filters::request_info::RequestInfo::new(&m, path, &q);
        let u = UserInfo::new(user, groups.iter().map(|g| g.to_string()).collect());
        let mut a = crate::filters::authorization::attributes(&u, &m, path, &info);
        a.verb = verb.into();
        a
    }

    fn level(p: &Policy, user: &str, groups: &[&str], verb: &str, path: &str) -> Level {
        p.evaluate(&attrs(user, groups, verb, path), true).level
    }

    #[test]
    fn first_matching_rule_wins() {
        let p = Policy::from_bytes(POLICY.as_bytes()).unwrap();
        let cm = "/api/v1/namespaces/default/configmaps/x";
        assert_eq!(level(&p, "bob", &[], "get", cm), Level::None);
        // No rule for configmap writes but the catch-all None.
        assert_eq!(level(&p, "bob", &[], "update", cm), Level::None);
        let s = "/api/v1/namespaces/default/secrets/s";
        assert_eq!(level(&p, "bob", &[], "get", s), Level::Metadata);
        let log = "/api/v1/namespaces/dev/pods/p/log";
        assert_eq!(level(&p, "bob", &[], "get", log), Level::RequestResponse);
        let st = "/api/v1/namespaces/dev/pods/p/status";
        assert_eq!(level(&p, "bob", &[], "get", st), Level::RequestResponse);
        let pods = "/api/v1/namespaces/dev/pods";
        assert_eq!(level(&p, "alice", &[], "create", pods), Level::Request);
        assert_eq!(level(&p, "bob", &[], "create", pods), Level::None);
        let other_ns = "/api/v1/namespaces/prod/pods";
        assert_eq!(level(&p, "alice", &[], "create", other_ns), Level::None);
        // `deployments/*` covers the resource and its subresources, for
        // the named object only.
        let web = "/apis/apps/v1/namespaces/d/deployments/web";
        assert_eq!(level(&p, "x", &["ops"], "get", web), Level::Request);
        let scale = "/apis/apps/v1/namespaces/d/deployments/web/scale";
        assert_eq!(level(&p, "x", &["ops"], "get", scale), Level::Request);
        let api = "/apis/apps/v1/namespaces/d/deployments/api";
        assert_eq!(level(&p, "x", &["ops"], "get", api), Level::None);
        assert_eq!(level(&p, "x", &["devs"], "get", web), Level::None);
        assert_eq!(level(&p, "x", &[], "get", "/healthz/etcd"), Level::Metadata);
        assert_eq!(level(&p, "x", &[], "get", "/version"), Level::Metadata);
        assert_eq!(level(&p, "x", &[], "get", "/versions"), Level::None);
    }

    #[test]
    fn stages_and_managed_fields() {
        let p = Policy::from_bytes(POLICY.as_bytes()).unwrap();
        let d = p.evaluate(&attrs("x", &[], "get", "/version"), true);
        assert!(d.omit_stages.contains(Stage::RequestReceived));
        assert!(d.omit_stages.contains(Stage::ResponseComplete));
        assert!(!d.omit_stages.contains(Stage::ResponseStarted));
        assert!(d.omit_managed_fields);
        let d = p.evaluate(
            &attrs("x", &[], "get", "/api/v1/namespaces/a/secrets"),
            true,
        );
        assert!(d.omit_stages.contains(Stage::RequestReceived));
        assert!(!d.omit_stages.contains(Stage::ResponseComplete));
        assert!(!d.omit_managed_fields);
    }

    #[test]
    fn users_never_match_an_unauthenticated_request() {
        let p = Policy::from_bytes(
            b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  users: [\"\"]\n- level: Request\n",
        )
        .unwrap();
        let a = attrs("", &[], "get", "/version");
        assert_eq!(p.evaluate(&a, false).level, Level::Request);
        assert_eq!(p.evaluate(&a, true).level, Level::Metadata);
    }

    #[test]
    fn json_policies_load() {
        let p = Policy::from_bytes(
            br#"{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata"}]}"#,
        )
        .unwrap();
        assert_eq!(p.rules.len(), 1);
    }

    #[test]
    fn bad_policies_name_the_fields() {
        let err = |s: &str| Policy::from_bytes(s.as_bytes()).unwrap_err();
        let head = "apiVersion: audit.k8s.io/v1\nkind: Policy\n";
        assert_eq!(err(head), "loaded illegal policy with 0 rules");
        assert_eq!(
            err(&format!("{head}rules:\n- level: Loud\n")),
            r#"rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse""#
        );
        assert_eq!(
            err(&format!("{head}rules:\n- verbs: [get]\n")),
            "rules[0].level: Required value"
        );
        assert_eq!(
            err(&format!(
                "{head}omitStages: [Done]\nrules:\n- level: None\n  nonResourceURLs: [healthz]\n"
            )),
            r#"[omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character]"#
        );
        assert_eq!(
            err(&format!(
                "{head}rules:\n- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n"
            )),
            r#"rules[0].nonResourceURLs: Invalid value: []string{"/a"}: rules cannot apply to both regular resources and non-resource URLs"#
        );
        assert!(
            err("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: []\n")
                .contains(r#"no kind "Policy" is registered for version "audit.k8s.io/v1beta1""#)
        );
        assert!(err("rules: 3\n").starts_with("failed decoding: "));
        assert!(err("").contains("Object 'Kind' is missing"));
    }

    #[test]
    fn non_resource_paths() {
        assert!(path_matches("/apis/x", "*"));
        assert!(path_matches("/apis/x", "/apis*"));
        assert!(path_matches("/apis", "/apis"));
        assert!(!path_matches("/api", "/apis*"));
    }
}
