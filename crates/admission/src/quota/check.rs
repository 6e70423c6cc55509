//! kube's `CheckRequest` (`k8s.io/apiserver/pkg/admission/plugin/resourcequota`):
//! does one write fit every quota that covers it, and what would each
//! quota's `status.used` be if it were admitted.

use std::collections::BTreeSet;

use keelson_api::{GroupResource, Operation};
use serde_json::Value;

use super::evaluator::Evaluator;
use super::limited::{self, LimitedResource};
use super::resources::{self, ResourceList};
use super::{QuotaDoc, ScopeSelector};

/// One write as the check sees it.
pub(crate) struct Write<'a> {
    pub op: Operation,
    pub object: &'a Value,
    pub old: Option<&'a Value>,
    /// The written resource.
    pub gr: &'a GroupResource,
    /// ResourceQuota's configured `limitedResources`.
    pub limited: &'a [LimitedResource],
}

/// Why a write does not fit (the message of kube's `403`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal(pub String);

/// How a write is refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Denied {
    /// kube's `admission.NewForbidden`: a 403.
    Forbidden(Refusal),
    /// A plain error: kube's 500 with reason `Unknown`.
    Plain(String),
}

impl From<Refusal> for Denied {
    fn from(r: Refusal) -> Denied {
        Denied::Forbidden(r)
    }
}

/// kube's `generic.Matches`: the quota limits something the evaluator
/// answers for, and the object falls in every scope of the quota.
pub(crate) fn matches(q: &QuotaDoc, ev: &Evaluator, object: &Value) -> bool {
    let hard: Vec<String> = q.hard.keys().cloned().collect();
    !ev.matching_resources(&hard).is_empty()
        && q.selectors
            .iter()
            .all(|s: &ScopeSelector| ev.matches_scope(s, object))
}

/// The new `status.used` of each quota the write changes (by index in
/// `quotas`), or the refusal.
pub(crate) fn check_request(
    quotas: &[QuotaDoc],
    ev: &Evaluator,
    w: &Write<'_>,
) -> Result<Vec<(usize, ResourceList)>, Denied> {
    let now = chrono::Utc::now();
    let mut interesting = Vec::new();
    let mut restricted_all = BTreeSet::new();
    for (i, q) in quotas.iter().enumerate() {
        if !matches(q, ev, w.object) {
            continue;
        }
        let hard: Vec<String> = q.hard.keys().cloned().collect();
        let restricted = ev.matching_resources(&hard);
        if let Err(e) = ev.constraints(&restricted, w.object) {
            return Err(Refusal(format!("failed quota: {}: {e}", q.name)).into());
        }
        let mut unknown: Vec<&str> = restricted
            .iter()
            .filter(|r| q.hard.contains_key(*r) && !q.used.contains_key(*r))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            // kube names every restricted resource, sorted.
            unknown = restricted.iter().map(String::as_str).collect();
            unknown.sort_unstable();
            return Err(Refusal(format!(
                "status unknown for quota: {}, resources: {}",
                q.name,
                unknown.join(",")
            ))
            .into());
        }
        interesting.push(i);
        restricted_all.extend(restricted);
    }
    if !w.limited.is_empty() {
        let usage = ev.usage(w.object, now);
        limited::check(
            w.limited,
            w.gr,
            ev,
            w.object,
            &usage,
            quotas,
            &restricted_all,
        )?;
    }
    if interesting.is_empty() {
        return Ok(Vec::new());
    }
    let input = ev.usage(w.object, now);
    let negative = resources::negative(&input);
    if !negative.is_empty() {
        return Err(Refusal(format!(
            "quota usage is negative for resource(s): {}",
            negative.join(",")
        ))
        .into());
    }
    let mut deltas: Vec<(usize, ResourceList)> =
        interesting.iter().map(|i| (*i, input.clone())).collect();
    if w.op == Operation::Update {
        let Some(old) = w.old else {
            return Err(Refusal(
                "unable to get previous usage since prior version of object was not found".into(),
            )
            .into());
        };
        let stored = old
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .is_some_and(|rv| !rv.is_empty());
        if stored {
            let delta = resources::subtract_non_negative(&input, &ev.usage(old, now));
            for (i, d) in &mut deltas {
                if matches(&quotas[*i], ev, old) {
                    *d = delta.clone();
                }
            }
        }
    }
    let deltas: Vec<(usize, ResourceList)> = deltas
        .into_iter()
        .map(|(i, d)| (i, resources::remove_zeros(&d)))
        .filter(|(_, d)| !d.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, delta) in deltas {
        let q = &quotas[i];
        let hard: Vec<String> = q.hard.keys().cloned().collect();
        let requested = resources::mask(&delta, &hard);
        let new_used = resources::add(&q.used, &requested);
        let requested_names: Vec<&String> = requested.keys().collect();
        let masked = resources::mask(&new_used, &requested_names);
        let exceeded = resources::exceeded(&masked, &q.hard);
        if !exceeded.is_empty() {
            return Err(Refusal(format!(
                "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                q.name,
                resources::pretty_print(&resources::mask(&requested, &exceeded)),
                resources::pretty_print(&resources::mask(&q.used, &exceeded)),
                resources::pretty_print(&resources::mask(&q.hard, &exceeded)),
            ))
            .into());
        }
        if !resources::equals(&new_used, &q.used) {
            out.push((i, new_used));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quota::ScopeSelector;
    use serde_json::json;

    fn quota(name: &str, hard: Value, used: Value) -> QuotaDoc {
        QuotaDoc::from_json(&json!({
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "5"},
            "spec": {"hard": hard.clone()},
            "status": {"hard": hard, "used": used},
        }))
    }

    fn pod(cpu: &str) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}})
    }

    #[test]
    fn exceeded_names_only_what_does_not_fit() {
        let q = quota(
            "compute",
            json!({"requests.cpu": "2", "pods": "10"}),
            json!({"requests.cpu": "1", "pods": "1"}),
        );
        let p = pod("2");
        let w = Write {
            op: Operation::Create,
            object: &p,
            old: None,
            gr: &GroupResource::new("", "pods"),
            limited: &[],
        };
        assert_eq!(
            check_request(&[q], &Evaluator::Pods, &w),
            Err(Denied::Forbidden(Refusal(
                "exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=1, limited: requests.cpu=2".into()
            )))
        );
    }

    #[test]
    fn a_fitting_write_charges_the_quota() {
        let q = quota(
            "compute",
            json!({"requests.cpu": "2", "pods": "10"}),
            json!({"requests.cpu": "500m", "pods": "1"}),
        );
        let p = pod("500m");
        let w = Write {
            op: Operation::Create,
            object: &p,
            old: None,
            gr: &GroupResource::new("", "pods"),
            limited: &[],
        };
        let out = check_request(&[q], &Evaluator::Pods, &w).unwrap();
        assert_eq!(resources::pretty_print(&out[0].1), "pods=2,requests.cpu=1");
    }

    #[test]
    fn missing_usage_and_missing_requests_are_refused() {
        let q = quota("compute", json!({"limits.memory": "1Gi"}), json!({}));
        let p = pod("1");
        let w = Write {
            op: Operation::Create,
            object: &p,
            old: None,
            gr: &GroupResource::new("", "pods"),
            limited: &[],
        };
        assert_eq!(
            check_request(&[q], &Evaluator::Pods, &w),
            Err(Denied::Forbidden(Refusal(
                "failed quota: compute: must specify limits.memory for: c".into()
            )))
        );
        let q = quota(
            "objects",
            json!({"configmaps": "3", "count/configmaps": "3"}),
            json!({}),
        );
        let cm = json!({"metadata": {"name": "x"}});
        let ev = Evaluator::for_resource(&GroupResource::new("", "configmaps")).unwrap();
        let w = Write {
            op: Operation::Create,
            object: &cm,
            old: None,
            gr: &GroupResource::new("", "pods"),
            limited: &[],
        };
        assert_eq!(
            check_request(&[q], &ev, &w),
            Err(Denied::Forbidden(Refusal(
                "status unknown for quota: objects, resources: configmaps,count/configmaps".into()
            )))
        );
    }

    #[test]
    fn service_updates_charge_the_difference() {
        let q = quota(
            "svc",
            json!({"services.nodeports": "1", "services": "5"}),
            json!({"services.nodeports": "0", "services": "1"}),
        );
        let old = json!({"metadata": {"resourceVersion": "3"}, "spec": {"type": "ClusterIP", "ports": [{"port": 80}]}});
        let new = json!({"metadata": {"resourceVersion": "3"}, "spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}});
        let w = Write {
            op: Operation::Update,
            object: &new,
            old: Some(&old),
            gr: &GroupResource::new("", "pods"),
            limited: &[],
        };
        assert_eq!(
            check_request(&[q], &Evaluator::Services, &w),
            Err(Denied::Forbidden(Refusal(
                "exceeded quota: svc, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1".into()
            )))
        );
    }

    #[test]
    fn limited_resources_need_a_covering_quota() {
        let limited = [LimitedResource {
            resource: "pods".into(),
            match_contains: vec!["requests.cpu".into()],
            match_scopes: vec![ScopeSelector {
                scope_name: "PriorityClass".into(),
                operator: "In".into(),
                values: vec!["cluster-services".into()],
            }],
            ..Default::default()
        }];
        let pods = GroupResource::new("", "pods");
        let p = pod("1");
        let w = Write {
            op: Operation::Create,
            object: &p,
            old: None,
            gr: &pods,
            limited: &limited,
        };
        assert_eq!(
            check_request(&[], &Evaluator::Pods, &w),
            Err(Denied::Forbidden(Refusal(
                "insufficient quota to consume: requests.cpu".into()
            )))
        );
        let q = quota(
            "cpu",
            json!({"requests.cpu": "4"}),
            json!({"requests.cpu": "0"}),
        );
        assert_eq!(check_request(&[q], &Evaluator::Pods, &w).unwrap().len(), 1);
        let mut critical = pod("1");
        critical["spec"]["priorityClassName"] = json!("cluster-services");
        let w = Write {
            object: &critical,
            ..w
        };
        let q = quota(
            "cpu",
            json!({"requests.cpu": "4"}),
            json!({"requests.cpu": "0"}),
        );
        assert_eq!(
            check_request(&[q], &Evaluator::Pods, &w),
            Err(Denied::Plain(
                "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]"
                    .into()
            ))
        );
        // Another resource is not limited by a pods entry.
        let cm = json!({"metadata": {"name": "x"}});
        let cms = GroupResource::new("", "configmaps");
        let ev = Evaluator::for_resource(&cms).unwrap();
        let w = Write {
            object: &cm,
            gr: &cms,
            ..w
        };
        assert_eq!(check_request(&[], &ev, &w), Ok(Vec::new()));
    }
}
