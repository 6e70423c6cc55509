//! Pods under quota (kube's `pkg/quota/v1/evaluator/core/pods.go`): what a
//! pod is charged (`pods`, `count/pods`, cpu, memory, ephemeral storage,
//! hugepages and extended resources, from its containers, init containers
//! and overhead, or its pod-level resources), the scopes it falls in, and
//! the containers that must name a quota'd cpu or memory resource.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::resources::{self, Amount, ResourceList};
use super::ScopeSelector;

/// The compute resources a pod may be charged for by name.
pub(crate) const POD_RESOURCES: [&str; 11] = [
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// Prefixes of the hugepages resources pods are charged for.
const POD_PREFIXES: [&str; 2] = ["hugepages-", "requests.hugepages-"];

/// Quota'd resources every container must state (kube's
/// backward-compatible `validationSet`).
const MUST_SPECIFY: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// A resource name without a domain, or in `kubernetes.io/`.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// kube's `IsExtendedResourceName`: a domain-qualified name outside
/// `kubernetes.io/` that is not itself a `requests.` quota name.
fn is_extended(name: &str) -> bool {
    !is_native(name) && !name.starts_with("requests.")
}

/// Quota names a pod evaluator answers for, among `input`.
pub(crate) fn matching_resources(input: &[String]) -> Vec<String> {
    let mut out: Vec<String> = input
        .iter()
        .filter(|n| POD_RESOURCES.contains(&n.as_str()))
        .cloned()
        .collect();
    for n in input {
        if POD_PREFIXES.iter().any(|p| n.starts_with(p)) {
            out.push(n.clone());
        }
        if !is_native(n) && n.starts_with("requests.") {
            out.push(n.clone());
        }
    }
    out
}

fn resource_map(v: Option<&Value>) -> ResourceList {
    resources::parse_list(v)
}

/// kube's `podComputeUsageHelper`.
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    out.insert("pods".into(), Amount::count(1));
    for (name, quota_names) in [
        ("cpu", ["cpu", "requests.cpu"]),
        ("memory", ["memory", "requests.memory"]),
        (
            "ephemeral-storage",
            ["ephemeral-storage", "requests.ephemeral-storage"],
        ),
    ] {
        if let Some(r) = requests.get(name) {
            for q in quota_names {
                out.insert(q.into(), *r);
            }
        }
        if let Some(l) = limits.get(name) {
            out.insert(format!("limits.{name}"), *l);
        }
    }
    for (name, r) in requests {
        if name.starts_with("hugepages-") {
            out.insert(name.clone(), *r);
            out.insert(format!("requests.{name}"), *r);
        }
        if is_extended(name) {
            out.insert(format!("requests.{name}"), *r);
        }
    }
    out
}

fn containers<'a>(pod: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn container_list(c: &Value, which: &str) -> ResourceList {
    resource_map(c.pointer(&format!("/resources/{which}")))
}

fn max_each(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut out = a.clone();
    for (k, v) in b {
        out.entry(k.clone())
            .and_modify(|x| *x = x.max(*v))
            .or_insert(*v);
    }
    out
}

/// kube's `PodRequests` / `PodLimits`: the containers' sum, or the largest
/// init-container step (restartable init containers, sidecars, run beside
/// what follows), plus the overhead; pod-level resources win for the
/// resources they set.
fn pod_totals(pod: &Value, which: &str) -> ResourceList {
    let mut total = ResourceList::new();
    for c in containers(pod, "containers") {
        total = resources::add(&total, &container_list(c, which));
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for c in containers(pod, "initContainers") {
        let own = container_list(c, which);
        let step = if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            total = resources::add(&total, &own);
            sidecars = resources::add(&sidecars, &own);
            sidecars.clone()
        } else {
            resources::add(&own, &sidecars)
        };
        init_max = max_each(&init_max, &step);
    }
    let mut total = max_each(&total, &init_max);
    let pod_level = resource_map(pod.pointer(&format!("/spec/resources/{which}")));
    for name in ["cpu", "memory"] {
        if let Some(v) = pod_level.get(name) {
            total.insert(name.into(), *v);
        }
    }
    // The overhead counts toward limits only where a limit is set.
    let overhead = resource_map(pod.pointer("/spec/overhead"));
    for (k, v) in overhead {
        if which == "requests" || total.contains_key(&k) {
            let sum = total.get(&k).map_or(v, |t| *t + v);
            total.insert(k, sum);
        }
    }
    total
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// kube's `QuotaV1Pod`: not terminal, and not past its deletion grace.
pub(crate) fn charged(pod: &Value, now: chrono::DateTime<chrono::Utc>) -> bool {
    if matches!(phase(pod), "Failed" | "Succeeded") {
        return false;
    }
    let meta = pod.get("metadata");
    let deleted = meta
        .and_then(|m| m.get("deletionTimestamp"))
        .and_then(Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
    let grace = meta
        .and_then(|m| m.get("deletionGracePeriodSeconds"))
        .and_then(Value::as_i64);
    if let (Some(at), Some(grace)) = (deleted, grace) {
        if now > at.with_timezone(&chrono::Utc) + chrono::Duration::seconds(grace) {
            return false;
        }
    }
    true
}

/// kube's `PodUsageFunc`: `count/pods` always; the compute resources while
/// the pod is charged.
pub(crate) fn usage(pod: &Value, now: chrono::DateTime<chrono::Utc>) -> ResourceList {
    let mut out = ResourceList::new();
    out.insert("count/pods".into(), Amount::count(1));
    if !charged(pod, now) {
        return out;
    }
    let requests = pod_totals(pod, "requests");
    let limits = pod_totals(pod, "limits");
    resources::add(&out, &compute_usage(&requests, &limits))
}

/// kube's `Constraints`: each container (and init container) must state
/// every quota'd cpu/memory resource in `required`:
/// `must specify limits.cpu for: a,b; requests.memory for: a`.
pub(crate) fn constraints(required: &[String], pod: &Value) -> Result<(), String> {
    let required: BTreeSet<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|r| MUST_SPECIFY.contains(r))
        .collect();
    let mut missing: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for c in containers(pod, "containers").chain(containers(pod, "initContainers")) {
        let usage = compute_usage(&container_list(c, "requests"), &container_list(c, "limits"));
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        for r in &required {
            if !usage.contains_key(*r) {
                missing.entry(r).or_default().insert(name.to_string());
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, names)| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            format!("{r} for: {}", names.join(","))
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

fn positive(list: &ResourceList, name: &str) -> bool {
    list.get(name).is_some_and(|a| a.nanos() > 0)
}

/// kube's `GetPodQOS` is BestEffort: `status.qosClass` when set, else no
/// container (nor the pod level) asks for cpu or memory.
fn best_effort(pod: &Value) -> bool {
    if let Some(q) = pod.pointer("/status/qosClass").and_then(Value::as_str) {
        if !q.is_empty() {
            return q == "BestEffort";
        }
    }
    let asks = |c: &Value, base: &str| {
        ["requests", "limits"].iter().any(|w| {
            let list = resource_map(c.pointer(&format!("{base}/{w}")));
            positive(&list, "cpu") || positive(&list, "memory")
        })
    };
    let any_container = containers(pod, "containers")
        .chain(containers(pod, "initContainers"))
        .any(|c| asks(c, "/resources"));
    !(any_container || asks(pod, "/spec/resources"))
}

fn terminating(pod: &Value) -> bool {
    pod.pointer("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0)
}

fn cross_namespace_affinity(pod: &Value) -> bool {
    let cross = |term: &Value| {
        term.get("namespaces")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
            || term.get("namespaceSelector").is_some_and(|s| !s.is_null())
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let a = pod.pointer(&format!("/spec/affinity/{kind}"));
        let required = a
            .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(cross);
        let preferred = a
            .and_then(|a| a.get("preferredDuringSchedulingIgnoredDuringExecution"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|w| w.get("podAffinityTerm"))
            .any(cross);
        required || preferred
    })
}

/// kube's `podMatchesScopeFunc`.
pub(crate) fn matches_scope(sel: &ScopeSelector, pod: &Value) -> bool {
    match sel.scope_name.as_str() {
        "Terminating" => terminating(pod),
        "NotTerminating" => !terminating(pod),
        "BestEffort" => best_effort(pod),
        "NotBestEffort" => !best_effort(pod),
        "PriorityClass" => {
            let class = pod
                .pointer("/spec/priorityClassName")
                .and_then(Value::as_str)
                .unwrap_or("");
            sel.matches_value((!class.is_empty()).then_some(class))
        }
        "CrossNamespacePodAffinity" => cross_namespace_affinity(pod),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> chrono::DateTime<chrono::Utc> {
        chrono::Utc::now()
    }

    #[test]
    fn usage_sums_containers_and_takes_the_largest_init_step() {
        let pod = json!({"spec": {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "500m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "250m", "nvidia.com/gpu": "1"}}}
        ],
        "initContainers": [
            {"name": "i", "resources": {"requests": {"cpu": "2"}}}
        ]}});
        let u = usage(&pod, now());
        assert_eq!(
            resources::pretty_print(&u),
            "count/pods=1,cpu=2,limits.cpu=500m,memory=64Mi,pods=1,requests.cpu=2,requests.memory=64Mi,requests.nvidia.com/gpu=1"
        );
    }

    #[test]
    fn terminal_pods_count_only_as_objects() {
        let pod = json!({"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Succeeded"}});
        assert_eq!(resources::pretty_print(&usage(&pod, now())), "count/pods=1");
    }

    #[test]
    fn constraints_name_the_containers_missing_a_resource() {
        let pod = json!({"spec": {
        "containers": [
            {"name": "web", "resources": {"requests": {"cpu": "1"}}},
            {"name": "app"}
        ]}});
        let required = vec![
            "limits.cpu".to_string(),
            "requests.cpu".into(),
            "pods".into(),
        ];
        assert_eq!(
            constraints(&required, &pod).unwrap_err(),
            "must specify limits.cpu for: app,web; requests.cpu for: app"
        );
        assert!(constraints(&["pods".to_string()], &pod).is_ok());
    }

    #[test]
    fn scopes() {
        let be = json!({"spec": {"containers": [{"name": "a"}]}});
        let sel = |name: &str| ScopeSelector::exists(name);
        assert!(matches_scope(&sel("BestEffort"), &be));
        assert!(!matches_scope(&sel("NotBestEffort"), &be));
        assert!(matches_scope(&sel("NotTerminating"), &be));
        let t = json!({"spec": {"activeDeadlineSeconds": 30, "priorityClassName": "high",
            "containers": [{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}]}});
        assert!(matches_scope(&sel("Terminating"), &t));
        assert!(matches_scope(&sel("NotBestEffort"), &t));
        let high = ScopeSelector {
            scope_name: "PriorityClass".into(),
            operator: "In".into(),
            values: vec!["high".into()],
        };
        assert!(matches_scope(&high, &t));
        assert!(!matches_scope(&high, &be));
    }
}
