//! Quota evaluators (kube's `quota.Evaluator`s from
//! `pkg/quota/v1/evaluator/core` and `k8s.io/apiserver/pkg/quota/v1/generic`):
//! for one resource, which quota names it answers for, which writes it
//! charges, what an object is charged and which scopes it falls in.

use keelson_api::{GroupResource, Operation};
use serde_json::Value;

use super::pod;
use super::resources::{Amount, ResourceList};
use super::ScopeSelector;

/// Resources quota never charges (kube's `ignoredResources`: virtual
/// resources that are not stored).
const IGNORED: [(&str, &str); 9] = [
    ("", "bindings"),
    ("", "componentstatuses"),
    ("", "events"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
];

/// Core resources counted under an unprefixed name too (kube's
/// `legacyObjectCountAliases`).
const LEGACY_COUNTS: [&str; 4] = [
    "configmaps",
    "resourcequotas",
    "replicationcontrollers",
    "secrets",
];

/// The per-storage-class quota names: `<class>.storageclass.storage.k8s.io/<resource>`.
const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// kube's `ObjectCountQuotaResourceNameFor`: `count/<resource>[.<group>]`.
pub fn count_name(gr: &GroupResource) -> String {
    if gr.group.is_empty() {
        format!("count/{}", gr.resource)
    } else {
        format!("count/{}.{}", gr.resource, gr.group)
    }
}

/// The resource a `count/<resource>[.<group>]` name counts.
pub fn counted_resource(name: &str) -> Option<GroupResource> {
    let rest = name.strip_prefix("count/")?;
    let (resource, group) = rest.split_once('.').unwrap_or((rest, ""));
    (!resource.is_empty()).then(|| GroupResource::new(group, resource))
}

/// How one resource is measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evaluator {
    Pods,
    Services,
    PersistentVolumeClaims,
    /// Objects counted (`count/<resource>.<group>`, and the legacy name).
    Count {
        gr: GroupResource,
        names: Vec<String>,
    },
}

impl Evaluator {
    /// The evaluator of `gr`; `None` for a resource quota ignores.
    pub fn for_resource(gr: &GroupResource) -> Option<Evaluator> {
        if IGNORED
            .iter()
            .any(|(g, r)| gr.group == *g && gr.resource == *r)
        {
            return None;
        }
        if gr.group.is_empty() {
            match gr.resource.as_str() {
                "pods" => return Some(Evaluator::Pods),
                "services" => return Some(Evaluator::Services),
                "persistentvolumeclaims" => return Some(Evaluator::PersistentVolumeClaims),
                _ => {}
            }
        }
        let mut names = vec![count_name(gr)];
        if gr.group.is_empty() && LEGACY_COUNTS.contains(&gr.resource.as_str()) {
            names.push(gr.resource.clone());
        }
        Some(Evaluator::Count {
            gr: gr.clone(),
            names,
        })
    }

    /// The evaluators kube registers for core resources.
    pub fn core() -> Vec<Evaluator> {
        let mut out = vec![
            Evaluator::Pods,
            Evaluator::Services,
            Evaluator::PersistentVolumeClaims,
        ];
        for r in LEGACY_COUNTS {
            out.extend(Evaluator::for_resource(&GroupResource::new("", r)));
        }
        out
    }

    /// The resource it measures.
    pub fn group_resource(&self) -> GroupResource {
        match self {
            Evaluator::Pods => GroupResource::new("", "pods"),
            Evaluator::Services => GroupResource::new("", "services"),
            Evaluator::PersistentVolumeClaims => GroupResource::new("", "persistentvolumeclaims"),
            Evaluator::Count { gr, .. } => gr.clone(),
        }
    }

    /// Whether a write of this kind can change usage (`Handles`; the
    /// caller has already skipped subresources).
    pub fn handles(&self, op: Operation) -> bool {
        match self {
            Evaluator::Services | Evaluator::PersistentVolumeClaims => {
                matches!(op, Operation::Create | Operation::Update)
            }
            Evaluator::Pods | Evaluator::Count { .. } => op == Operation::Create,
        }
    }

    /// `MatchingResources`: the names among `input` it answers for.
    pub fn matching_resources(&self, input: &[String]) -> Vec<String> {
        match self {
            Evaluator::Pods => pod::matching_resources(input),
            Evaluator::Services => input
                .iter()
                .filter(|n| {
                    matches!(
                        n.as_str(),
                        "count/services"
                            | "services"
                            | "services.nodeports"
                            | "services.loadbalancers"
                    )
                })
                .cloned()
                .collect(),
            Evaluator::PersistentVolumeClaims => input
                .iter()
                .filter(|n| {
                    let base = ["persistentvolumeclaims", "requests.storage"];
                    n.as_str() == "count/persistentvolumeclaims"
                        || base.contains(&n.as_str())
                        || base
                            .iter()
                            .any(|b| n.ends_with(&format!("{STORAGE_CLASS_SUFFIX}{b}")))
                })
                .cloned()
                .collect(),
            Evaluator::Count { names, .. } => input
                .iter()
                .filter(|n| names.contains(n))
                .cloned()
                .collect(),
        }
    }

    /// Whether `object` falls in the scope `sel` (`MatchingScopes`);
    /// services and counted objects fall in none.
    pub fn matches_scope(&self, sel: &ScopeSelector, object: &Value) -> bool {
        match self {
            Evaluator::Pods => pod::matches_scope(sel, object),
            Evaluator::PersistentVolumeClaims if sel.scope_name == "VolumeAttributesClass" => {
                let classes = volume_attributes_classes(object);
                if sel.operator == "Exists" {
                    return !classes.is_empty();
                }
                if classes.is_empty() {
                    return sel.matches_value(None);
                }
                classes.iter().any(|c| sel.matches_value(Some(c)))
            }
            _ => false,
        }
    }

    /// `Constraints`: pods must state quota'd cpu and memory.
    pub fn constraints(&self, required: &[String], object: &Value) -> Result<(), String> {
        match self {
            Evaluator::Pods => pod::constraints(required, object),
            _ => Ok(()),
        }
    }

    /// `Usage`: what `object` is charged.
    pub fn usage(&self, object: &Value, now: chrono::DateTime<chrono::Utc>) -> ResourceList {
        match self {
            Evaluator::Pods => pod::usage(object, now),
            Evaluator::Services => service_usage(object),
            Evaluator::PersistentVolumeClaims => pvc_usage(object),
            Evaluator::Count { names, .. } => names
                .iter()
                .map(|n| (n.clone(), Amount::count(1)))
                .collect(),
        }
    }
}

fn service_usage(svc: &Value) -> ResourceList {
    let spec = svc.get("spec");
    let ports: Vec<&Value> = spec
        .and_then(|s| s.get("ports"))
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut out = ResourceList::new();
    out.insert("count/services".into(), Amount::count(1));
    out.insert("services".into(), Amount::count(1));
    out.insert("services.loadbalancers".into(), Amount::ZERO);
    out.insert("services.nodeports".into(), Amount::ZERO);
    let count = |n: usize| Amount::count(i64::try_from(n).unwrap_or(i64::MAX));
    match spec.and_then(|s| s.get("type")).and_then(Value::as_str) {
        Some("NodePort") => {
            out.insert("services.nodeports".into(), count(ports.len()));
        }
        Some("LoadBalancer") => {
            let allocate = spec
                .and_then(|s| s.get("allocateLoadBalancerNodePorts"))
                .and_then(Value::as_bool);
            let node_ports = if allocate == Some(false) {
                ports
                    .iter()
                    .filter(|p| p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0)
                    .count()
            } else {
                ports.len()
            };
            out.insert("services.nodeports".into(), count(node_ports));
            out.insert("services.loadbalancers".into(), Amount::count(1));
        }
        _ => {}
    }
    out
}

/// kube's `GetPersistentVolumeClaimClass`: `spec.storageClassName`, else
/// the beta annotation.
fn pvc_class(pvc: &Value) -> String {
    if let Some(c) = pvc
        .pointer("/spec/storageClassName")
        .and_then(Value::as_str)
    {
        return c.to_string();
    }
    pvc.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn volume_attributes_classes(pvc: &Value) -> Vec<String> {
    let mut out: Vec<String> = [
        "/spec/volumeAttributesClassName",
        "/status/currentVolumeAttributesClassName",
        "/status/modifyVolumeStatus/targetVolumeAttributesClassName",
    ]
    .iter()
    .filter_map(|p| pvc.pointer(p).and_then(Value::as_str))
    .filter(|s| !s.is_empty())
    .map(str::to_string)
    .collect();
    out.sort();
    out.dedup();
    out
}

fn pvc_usage(pvc: &Value) -> ResourceList {
    let mut out = ResourceList::new();
    out.insert("persistentvolumeclaims".into(), Amount::count(1));
    out.insert("count/persistentvolumeclaims".into(), Amount::count(1));
    let class = pvc_class(pvc);
    if !class.is_empty() {
        out.insert(
            format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"),
            Amount::count(1),
        );
    }
    let requested = pvc
        .pointer("/spec/resources/requests/storage")
        .and_then(Amount::from_json)
        .map(Amount::round_up);
    let allocated = pvc
        .pointer("/status/allocatedResources/storage")
        .and_then(Amount::from_json);
    let storage = match (requested, allocated) {
        (Some(r), Some(a)) if a.nanos() > r.nanos() => Some(a.round_up()),
        (r, _) => r,
    };
    if let Some(s) = storage {
        out.insert("requests.storage".into(), s);
        if !class.is_empty() {
            out.insert(format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"), s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::resources::pretty_print;
    use super::*;
    use serde_json::json;

    #[test]
    fn count_names() {
        let deploy = GroupResource::new("apps", "deployments");
        assert_eq!(count_name(&deploy), "count/deployments.apps");
        assert_eq!(counted_resource("count/deployments.apps"), Some(deploy));
        assert_eq!(
            counted_resource("count/widgets.example.com"),
            Some(GroupResource::new("example.com", "widgets"))
        );
        assert_eq!(counted_resource("pods"), None);
        let cm = Evaluator::for_resource(&GroupResource::new("", "configmaps")).unwrap();
        let names = vec![
            "configmaps".to_string(),
            "count/configmaps".into(),
            "pods".into(),
        ];
        assert_eq!(cm.matching_resources(&names), names[..2].to_vec());
        assert!(cm.handles(Operation::Create) && !cm.handles(Operation::Update));
        assert_eq!(
            Evaluator::for_resource(&GroupResource::new("", "events")),
            None
        );
    }

    #[test]
    fn services_count_node_ports_and_load_balancers() {
        let lb = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}});
        assert_eq!(
            pretty_print(&Evaluator::Services.usage(&lb, chrono::Utc::now())),
            "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"
        );
    }

    #[test]
    fn claims_charge_storage_per_class() {
        let pvc = json!({"spec": {"storageClassName": "gold",
            "resources": {"requests": {"storage": "1.5Gi"}}}});
        assert_eq!(
            pretty_print(&Evaluator::PersistentVolumeClaims.usage(&pvc, chrono::Utc::now())),
            "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/requests.storage=1536Mi,persistentvolumeclaims=1,requests.storage=1536Mi"
        );
        let names = vec![
            "gold.storageclass.storage.k8s.io/requests.storage".to_string(),
            "requests.cpu".into(),
        ];
        assert_eq!(
            Evaluator::PersistentVolumeClaims.matching_resources(&names),
            names[..1].to_vec()
        );
    }
}
