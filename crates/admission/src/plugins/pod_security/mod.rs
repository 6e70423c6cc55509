//! PodSecurity (`plugin/pkg/admission/security/podsecurity`, the
//! `k8s.io/pod-security-admission` library): a validating plugin that
//! evaluates pods, and the pod templates of workloads, against the Pod
//! Security Standard their namespace's `pod-security.kubernetes.io/*`
//! labels choose.
//!
//! - Pods (creates, and updates that change an image or add an ephemeral
//!   container; not the `status`, `binding`, `exec`, ... subresources):
//!   `enforce` refuses with kube's 403 `violates PodSecurity "<lv>": ...`,
//!   `warn` adds `would violate PodSecurity "<lv>": ...`.
//! - Workloads (ReplicationControllers, PodTemplates, ReplicaSets,
//!   Deployments, StatefulSets, DaemonSets, Jobs, CronJobs): `warn` only.
//! - Namespaces: labels that do not parse are kube's 422 on create (and on
//!   an update that changes them); raising the enforce level warns about
//!   the existing pods that would violate it.
//!
//! Without labels a namespace is the configured defaults (kube's
//! `privileged:latest` for every mode), which admits everything after one
//! cached namespace read. `audit` has no effect on the answer; Keelson
//! records no audit annotations.

mod api;
mod checks;
mod host;
mod privilege;
mod profiles;
mod volumes;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use keelson_api::Operation;
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use serde_json::Value;

use super::cache::{live_get, live_list};
use super::Attrs;
use crate::audit::Annotations;
use api::{Level, LevelVersion, Policy};
use checks::{evaluate, go_quote, PodView};

/// kube's `PodSecurityConfiguration` (`--admission-control-config-file`):
/// the policy of namespaces without labels and the exemptions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodSecurityConfig {
    /// `defaults`: `enforce`, `enforce-version`, `audit`, `audit-version`,
    /// `warn`, `warn-version` (each `privileged` / `latest` when absent).
    pub defaults: BTreeMap<String, String>,
    /// `exemptions.usernames`.
    pub exempt_usernames: Vec<String>,
    /// `exemptions.namespaces`.
    pub exempt_namespaces: Vec<String>,
    /// `exemptions.runtimeClasses`.
    pub exempt_runtime_classes: Vec<String>,
}

impl PodSecurityConfig {
    /// kube's `ToPolicy`: the default policy, or the messages of the
    /// values that do not parse (`Enforce.Level: must be one of ...`); an
    /// absent key is `privileged` / `latest`, as kube's defaulting makes it.
    fn default_policy(&self) -> Result<Policy, Vec<String>> {
        let mut p = Policy::default();
        let mut errs = Vec::new();
        for (mode, lv) in [
            ("enforce", &mut p.enforce),
            ("audit", &mut p.audit),
            ("warn", &mut p.warn),
        ] {
            let name = format!("{}{}", mode[..1].to_uppercase(), &mode[1..]);
            let level = self.defaults.get(mode).map_or("privileged", String::as_str);
            match Level::parse(level) {
                Ok(l) => lv.level = l,
                Err((_, msg)) => errs.push(format!("{name}.Level: {msg}")),
            }
            let version = self
                .defaults
                .get(&format!("{mode}-version"))
                .map_or("latest", String::as_str);
            match api::Version::parse(version) {
                Ok(v) => lv.version = v,
                Err((_, msg)) => errs.push(format!("{name}.Version: {msg}")),
            }
        }
        if errs.is_empty() {
            Ok(p)
        } else {
            Err(errs)
        }
    }

    /// kube's `ValidatePodSecurityConfiguration` of the exemptions: each
    /// namespace a DNS label, each runtime class a DNS subdomain, each
    /// username non-empty, none twice.
    fn exemption_errors(&self) -> Vec<keelson_apimachinery::FieldError> {
        use keelson_apimachinery::{names, FieldError, FieldErrorKind};
        let mut errs = Vec::new();
        type Check = fn(&str) -> Vec<String>;
        let lists: [(&str, &Vec<String>, Check); 3] = [
            (
                "namespaces",
                &self.exempt_namespaces,
                names::is_dns1123_label,
            ),
            (
                "runtimeClasses",
                &self.exempt_runtime_classes,
                names::is_dns1123_subdomain,
            ),
            ("usernames", &self.exempt_usernames, |_| Vec::new()),
        ];
        for (key, list, check) in lists {
            let mut seen = HashSet::new();
            for (i, v) in list.iter().enumerate() {
                let path = format!("exemptions.{key}[{i}]");
                if key == "usernames" && v.is_empty() {
                    errs.push(FieldError::required(&path, ""));
                    continue;
                }
                let bad = check(v);
                if !bad.is_empty() {
                    errs.push(FieldError::invalid(&path, v.as_str(), &bad.join(", ")));
                    continue;
                }
                if !seen.insert(v.as_str()) {
                    errs.push(FieldError {
                        kind: FieldErrorKind::Duplicate,
                        field: path,
                        value: Some(Value::from(v.as_str())),
                        detail: String::new(),
                    });
                }
            }
        }
        errs
    }

    /// Whether the configuration is valid: `Err` is the message of kube's
    /// `ValidateInitialization` (`PodSecurity configuration error: ...`
    /// for a default that does not parse, `PodSecurity invalid: ...` for
    /// an exemption).
    pub fn validate(&self) -> Result<(), String> {
        if let Err(errs) = self.default_policy() {
            return Err(format!(
                "PodSecurity configuration error: {}",
                super::util::aggregate(&errs)
            ));
        }
        let errs = self.exemption_errors();
        if !errs.is_empty() {
            return Err(format!(
                "PodSecurity invalid: {}",
                keelson_apimachinery::FieldError::aggregate(&errs)
            ));
        }
        Ok(())
    }
}

/// How long after PodSecurity admitted a namespace write its pods read the
/// namespace from the store rather than the cache.
const FRESH_FOR: Duration = Duration::from_secs(30);

/// kube's `defaultNamespaceMaxPodsToCheck`.
const MAX_PODS_TO_CHECK: usize = 3000;

/// The plugin's configuration and what it remembers.
pub(crate) struct State {
    config: PodSecurityConfig,
    defaults: Policy,
    /// Namespaces whose labels were written lately, with when.
    fresh: Mutex<HashMap<String, Instant>>,
}

impl State {
    pub(crate) fn new(config: &PodSecurityConfig) -> State {
        State {
            defaults: config.default_policy().unwrap_or_default(),
            config: config.clone(),
            fresh: Mutex::new(HashMap::new()),
        }
    }

    fn exempt_namespace(&self, ns: &str) -> bool {
        !ns.is_empty() && self.config.exempt_namespaces.iter().any(|n| n == ns)
    }

    fn exempt_user(&self, a: &Attrs<'_>) -> bool {
        let user = a.req.user.as_ref().map_or("", |u| u.username.as_str());
        !user.is_empty() && self.config.exempt_usernames.iter().any(|n| n == user)
    }

    fn exempt_runtime_class(&self, spec: &Value) -> bool {
        let rc = spec
            .get("runtimeClassName")
            .and_then(Value::as_str)
            .unwrap_or("");
        !rc.is_empty() && self.config.exempt_runtime_classes.iter().any(|n| n == rc)
    }

    fn mark_fresh(&self, ns: &str) {
        if let Ok(mut f) = self.fresh.lock() {
            let now = Instant::now();
            f.retain(|_, at| now.duration_since(*at) < FRESH_FOR);
            f.insert(ns.to_string(), now);
        }
    }

    fn is_fresh(&self, ns: &str) -> bool {
        self.fresh
            .lock()
            .ok()
            .and_then(|f| f.get(ns).map(|at| at.elapsed() < FRESH_FOR))
            .unwrap_or(false)
    }
}

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
}

/// The resources whose pod template is evaluated (warn only).
const WORKLOADS: &[(&str, &str)] = &[
    ("", "replicationcontrollers"),
    ("", "podtemplates"),
    ("apps", "replicasets"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
];

/// Pod subresources kube does not evaluate.
const IGNORED_POD_SUBRESOURCES: &[&str] = &[
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// The validating phase: `Err` is the refusal, `Ok` the warnings.
pub(crate) async fn validate(
    a: &Attrs<'_>,
    st: &State,
    object: &Value,
    ann: &mut Annotations,
) -> ApiResult<Vec<String>> {
    if a.req.operation == Operation::Delete {
        return Ok(Vec::new());
    }
    let gr = &a.req.gr;
    if gr.group.is_empty() && gr.resource == "namespaces" {
        return validate_namespace(a, st, object).await;
    }
    if gr.group.is_empty() && gr.resource == "pods" {
        if IGNORED_POD_SUBRESOURCES.contains(&a.req.subresource.as_str()) {
            return Ok(Vec::new());
        }
        return validate_pod(a, st, object, ann).await;
    }
    let workload = WORKLOADS
        .iter()
        .any(|(g, r)| gr.group == *g && gr.resource == *r);
    if workload && a.req.subresource.is_empty() {
        return validate_workload(a, st, object, ann).await;
    }
    Ok(Vec::new())
}

/// The namespace of the request: the cache, the store when it does not
/// hold it or its labels were written lately.
async fn namespace(a: &Attrs<'_>, st: &State) -> ApiResult<Option<Value>> {
    let name = &a.req.namespace;
    if st.is_fresh(name) {
        return live_get(a.store, &namespaces(), "", name).await;
    }
    match a.cache.get(a.store, &namespaces(), "", name).await? {
        Some(ns) => Ok(Some(ns)),
        None => live_get(a.store, &namespaces(), "", name).await,
    }
}

async fn validate_namespace(a: &Attrs<'_>, st: &State, ns: &Value) -> ApiResult<Vec<String>> {
    if !a.req.subresource.is_empty() {
        return Ok(Vec::new());
    }
    let name = keelson_apimachinery::meta::meta_str(ns, "name");
    let old = a
        .req
        .old_object
        .as_ref()
        .filter(|_| a.req.operation == Operation::Update);
    if api::has_labels(ns) || old.is_some_and(api::has_labels) {
        st.mark_fresh(name);
    }
    let (new_policy, new_errs) = api::policy_to_evaluate(ns, &st.defaults);
    let invalid = |errs: &[keelson_apimachinery::FieldError]| {
        ApiError::invalid("", "Namespace", a.name, errs)
    };
    let Some(old) = old else {
        if !new_errs.is_empty() {
            return Err(invalid(&new_errs));
        }
        // kube's request namespace is empty on a namespace create: no
        // exemption applies.
        return Ok(Vec::new());
    };
    let (old_policy, old_errs) = api::policy_to_evaluate(old, &st.defaults);
    if !new_errs.is_empty() && (old_errs.is_empty() || new_errs != old_errs) {
        return Err(invalid(&new_errs));
    }
    let (new_e, old_e) = (new_policy.enforce, old_policy.enforce);
    if new_e == old_e
        || new_e.level == Level::Privileged
        || (new_e.version == old_e.version && api::no_stricter(new_e.level, old_e.level))
    {
        return Ok(Vec::new());
    }
    if st.exempt_namespace(name) {
        return Ok(exempt_namespace_warning(st, name, &new_policy, ns)
            .into_iter()
            .collect());
    }
    pods_in_namespace(a, st, name, new_e).await
}

/// `exemptNamespaceWarning`: the labels set on an exempt namespace are
/// ignored.
fn exempt_namespace_warning(st: &State, name: &str, p: &Policy, ns: &Value) -> Option<String> {
    if p.fully_privileged() || p.equivalent(&st.defaults) {
        return None;
    }
    let set = |l: &str, v: &str| api::label(ns, l).is_some() || api::label(ns, v).is_some();
    let mut parts = Vec::new();
    for (mode, lv, l, v) in [
        ("enforce", p.enforce, api::ENFORCE, api::ENFORCE_VERSION),
        ("audit", p.audit, api::AUDIT, api::AUDIT_VERSION),
        ("warn", p.warn, api::WARN, api::WARN_VERSION),
    ] {
        if lv.level != Level::Privileged && set(l, v) {
            parts.push(format!("{mode}={lv}"));
        }
    }
    Some(format!(
        "namespace {} is exempt from Pod Security, and the policy ({}) will be ignored",
        go_quote(name),
        parts.join(", ")
    ))
}

/// `EvaluatePodsInNamespace`: the existing pods a new enforce level
/// would refuse, as warnings.
async fn pods_in_namespace(
    a: &Attrs<'_>,
    st: &State,
    ns: &str,
    enforce: LevelVersion,
) -> ApiResult<Vec<String>> {
    let Ok(pods) = live_list(a.store, &GroupResource::new("", "pods"), Some(ns)).await else {
        return Ok(vec![
            "failed to list pods while checking new PodSecurity enforce level".into(),
        ]);
    };
    // One pod per controller first, then the other replicas.
    let mut first = Vec::new();
    let mut rest = Vec::new();
    let mut controllers = HashSet::new();
    for pod in &pods {
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        if st.exempt_runtime_class(spec) {
            continue;
        }
        match controller_uid(pod) {
            Some(uid) if !controllers.insert(uid.to_string()) => rest.push(pod),
            _ => first.push(pod),
        }
    }
    first.extend(rest);
    let total = first.len();
    first.truncate(MAX_PODS_TO_CHECK);
    let mut order: Vec<String> = Vec::new();
    let mut counts: HashMap<String, (String, usize)> = HashMap::new();
    for pod in &first {
        let meta = pod.get("metadata").unwrap_or(&Value::Null);
        let view = PodView::new(meta, pod.get("spec").unwrap_or(&Value::Null));
        let results = evaluate(enforce, &view);
        if results.is_empty() {
            continue;
        }
        let warning = checks::reasons(&results);
        let name = keelson_apimachinery::meta::meta_str(pod, "name").to_string();
        match counts.get_mut(&warning) {
            Some((first_name, n)) => {
                if name < *first_name {
                    *first_name = name;
                }
                *n += 1;
            }
            None => {
                order.push(warning.clone());
                counts.insert(warning, (name, 1));
            }
        }
    }
    let mut warnings = Vec::new();
    if first.len() < total {
        warnings.push(format!(
            "new PodSecurity enforce level only checked against the first {} of {total} existing pods",
            first.len()
        ));
    }
    if !order.is_empty() {
        warnings.push(format!(
            "existing pods in namespace {} violate the new PodSecurity enforce level {}",
            go_quote(ns),
            go_quote(&enforce.to_string())
        ));
    }
    let mut pod_warnings: Vec<String> = order
        .into_iter()
        .map(|w| {
            let (name, n) = counts.get(&w).cloned().unwrap_or_default();
            match n {
                1 => format!("{name}: {w}"),
                2 => format!("{name} (and 1 other pod): {w}"),
                n => format!("{name} (and {} other pods): {w}", n - 1),
            }
        })
        .collect();
    pod_warnings.sort();
    warnings.extend(pod_warnings);
    Ok(warnings)
}

/// The uid of the pod's controller owner reference.
fn controller_uid(pod: &Value) -> Option<&str> {
    pod.get("metadata")?
        .get("ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))?
        .get("uid")?
        .as_str()
}

async fn validate_pod(
    a: &Attrs<'_>,
    st: &State,
    pod: &Value,
    ann: &mut Annotations,
) -> ApiResult<Vec<String>> {
    if exempt(a, st, ann) {
        return Ok(Vec::new());
    }
    let ns = match namespace(a, st).await {
        Ok(Some(ns)) => ns,
        _ => {
            return Err(ApiError::internal(format!(
                "failed to lookup namespace {}",
                go_quote(&a.req.namespace)
            )))
        }
    };
    let (policy, errs) = api::policy_to_evaluate(&ns, &st.defaults);
    if errs.is_empty() && policy.fully_privileged() {
        ann.add(ENFORCED_POLICY, LevelVersion::PRIVILEGED.to_string());
        return Ok(Vec::new());
    }
    if a.req.operation == Operation::Update {
        if let Some(old) = &a.req.old_object {
            if !significant_update(pod, old) {
                return Ok(Vec::new());
            }
        }
    }
    let meta = pod.get("metadata").unwrap_or(&Value::Null);
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    evaluate_pod(a, st, &policy, &errs, meta, spec, true, ann)
}

/// The namespace and user exemptions, recorded as kube's `exempt`
/// annotation.
fn exempt(a: &Attrs<'_>, st: &State, ann: &mut Annotations) -> bool {
    let why = if st.exempt_namespace(&a.req.namespace) {
        "namespace"
    } else if st.exempt_user(a) {
        "user"
    } else {
        return false;
    };
    ann.add(EXEMPT, why);
    true
}

async fn validate_workload(
    a: &Attrs<'_>,
    st: &State,
    obj: &Value,
    ann: &mut Annotations,
) -> ApiResult<Vec<String>> {
    if exempt(a, st, ann) {
        return Ok(Vec::new());
    }
    // A namespace that cannot be read admits the workload.
    let ns = match namespace(a, st).await {
        Ok(Some(ns)) => ns,
        Ok(None) => {
            ann.add(
                ERROR,
                format!(
                    "failed to lookup namespace {}: namespaces {} not found",
                    go_quote(&a.req.namespace),
                    go_quote(&a.req.namespace)
                ),
            );
            return Ok(Vec::new());
        }
        Err(e) => {
            ann.add(
                ERROR,
                format!(
                    "failed to lookup namespace {}: {}",
                    go_quote(&a.req.namespace),
                    e.message
                ),
            );
            return Ok(Vec::new());
        }
    };
    let (policy, errs) = api::policy_to_evaluate(&ns, &st.defaults);
    if errs.is_empty()
        && policy.warn.level == Level::Privileged
        && policy.audit.level == Level::Privileged
    {
        return Ok(Vec::new());
    }
    let Some(template) = template(&a.req.gr.resource, obj) else {
        return Ok(Vec::new());
    };
    let meta = template.get("metadata").unwrap_or(&Value::Null);
    let spec = template.get("spec").unwrap_or(&Value::Null);
    evaluate_pod(a, st, &policy, &errs, meta, spec, false, ann)
}

/// The pod template of a workload (`None`: a ReplicationController
/// without one).
fn template<'a>(resource: &str, obj: &'a Value) -> Option<&'a Value> {
    const NONE: &Value = &Value::Null;
    let spec = obj.get("spec").unwrap_or(NONE);
    match resource {
        "podtemplates" => Some(obj.get("template").unwrap_or(NONE)),
        "replicationcontrollers" => spec.get("template").filter(|t| !t.is_null()),
        "cronjobs" => Some(
            spec.get("jobTemplate")
                .and_then(|j| j.get("spec"))
                .and_then(|s| s.get("template"))
                .unwrap_or(NONE),
        ),
        _ => Some(spec.get("template").unwrap_or(NONE)),
    }
}

/// `EvaluatePod`: the enforce refusal (pods only), else the warn warning;
/// the enforced policy, audit violations and policy errors recorded as
/// kube's audit annotations.
#[allow(clippy::too_many_arguments)]
fn evaluate_pod(
    a: &Attrs<'_>,
    st: &State,
    policy: &Policy,
    policy_errs: &[keelson_apimachinery::FieldError],
    meta: &Value,
    spec: &Value,
    enforce: bool,
    ann: &mut Annotations,
) -> ApiResult<Vec<String>> {
    if st.exempt_runtime_class(spec) {
        ann.add(EXEMPT, "runtimeClass");
        return Ok(Vec::new());
    }
    if !policy_errs.is_empty() {
        let msgs: Vec<String> = policy_errs.iter().map(|e| e.to_string()).collect();
        let aggregate = match msgs.len() {
            1 => msgs[0].clone(),
            _ => format!("[{}]", msgs.join(", ")),
        };
        ann.add(ERROR, format!("Failed to parse policy: {aggregate}"));
    }
    let view = PodView::new(meta, spec);
    let mut cached: Vec<(LevelVersion, Vec<checks::Forbidden>)> = Vec::new();
    let mut refusal = None;
    if enforce {
        ann.add(ENFORCED_POLICY, policy.enforce.to_string());
        let results = evaluate(policy.enforce, &view);
        if !results.is_empty() {
            refusal = Some(a.forbidden(&format!(
                "violates PodSecurity {}: {}",
                go_quote(&policy.enforce.to_string()),
                checks::detail(&results)
            )));
        }
        cached.push((policy.enforce, results));
    }
    let mut results_for = |lv: LevelVersion| -> Vec<checks::Forbidden> {
        if let Some((_, r)) = cached.iter().find(|(l, _)| *l == lv) {
            return r.clone();
        }
        let r = evaluate(lv, &view);
        cached.push((lv, r.clone()));
        r
    };
    let audit = results_for(policy.audit);
    if !audit.is_empty() {
        ann.add(
            AUDIT_VIOLATIONS,
            format!(
                "would violate PodSecurity {}: {}",
                go_quote(&policy.audit.to_string()),
                checks::detail(&audit)
            ),
        );
    }
    if let Some(e) = refusal {
        return Err(e);
    }
    let results = results_for(policy.warn);
    if results.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![format!(
        "would violate PodSecurity {}: {}",
        go_quote(&policy.warn.to_string()),
        checks::detail(&results)
    )])
}

/// kube's audit annotation keys (`pod-security.kubernetes.io/` + the
/// pod-security-admission key).
const ENFORCED_POLICY: &str = "pod-security.kubernetes.io/enforce-policy";
const AUDIT_VIOLATIONS: &str = "pod-security.kubernetes.io/audit-violations";
const EXEMPT: &str = "pod-security.kubernetes.io/exempt";
const ERROR: &str = "pod-security.kubernetes.io/error";

/// `isSignificantPodUpdate`: an image changed, or a container was added
/// or removed, or an ephemeral container added or its image changed.
fn significant_update(pod: &Value, old: &Value) -> bool {
    let list = |p: &Value, key: &str| -> Vec<Value> {
        p.get("spec")
            .and_then(|s| s.get(key))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let image = |c: &Value| {
        c.get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    for key in ["containers", "initContainers"] {
        let (new, old) = (list(pod, key), list(old, key));
        if new.len() != old.len() || new.iter().zip(&old).any(|(n, o)| image(n) != image(o)) {
            return true;
        }
    }
    let old_eph = list(old, "ephemeralContainers");
    list(pod, "ephemeralContainers").iter().any(|c| {
        let name = c.get("name");
        match old_eph.iter().find(|o| o.get("name") == name) {
            None => true,
            Some(o) => image(o) != image(c),
        }
    })
}
