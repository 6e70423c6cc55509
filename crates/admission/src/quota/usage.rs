//! What a quota's `status` should be (kube's `quota.CalculateUsage` and
//! the resource quota controller's `syncResourceQuota`), measured from the
//! namespace's objects in the store; the quota controller writes it.

use keelson_api::{ApiError, GroupResource, StoreApi};
use serde_json::Value;

use super::evaluator::{counted_resource, Evaluator};
use super::resources::{self, Amount, ResourceList};
use super::QuotaDoc;

/// The evaluators that measure `hard`: kube's core ones and an object
/// counter for each other `count/<resource>.<group>` it names.
fn registry(hard: &[String]) -> Vec<Evaluator> {
    let mut out = Evaluator::core();
    for name in hard {
        if out
            .iter()
            .any(|e| !e.matching_resources(std::slice::from_ref(name)).is_empty())
        {
            continue;
        }
        if let Some(ev) = counted_resource(name).and_then(|gr| Evaluator::for_resource(&gr)) {
            out.push(ev);
        }
    }
    out
}

/// The resources whose objects `quota` counts.
pub fn tracked_resources(quota: &Value) -> Vec<GroupResource> {
    let doc = QuotaDoc::from_json(quota);
    let hard: Vec<String> = doc.spec_hard.keys().cloned().collect();
    registry(&hard)
        .into_iter()
        .filter(|e| !e.matching_resources(&hard).is_empty())
        .map(|e| e.group_resource())
        .collect()
}

/// The status kube's controller would write for `quota`: `hard` as the
/// spec's, `used` measured for every hard resource an evaluator answers
/// for (kept as it was where a listing failed, and for names no evaluator
/// knows). Also the listing errors.
pub async fn desired_status(store: &dyn StoreApi, quota: &Value) -> (Value, Vec<ApiError>) {
    let doc = QuotaDoc::from_json(quota);
    let namespace = keelson_apimachinery::meta::meta_str(quota, "namespace").to_string();
    let hard_names: Vec<String> = doc.spec_hard.keys().cloned().collect();
    let evaluators = registry(&hard_names);
    let mut matched: Vec<String> = hard_names
        .iter()
        .filter(|n| {
            evaluators
                .iter()
                .any(|e| !e.matching_resources(std::slice::from_ref(*n)).is_empty())
        })
        .cloned()
        .collect();
    let mut measured = ResourceList::new();
    let mut errors = Vec::new();
    let now = chrono::Utc::now();
    for ev in &evaluators {
        let names = ev.matching_resources(&matched);
        if names.is_empty() {
            continue;
        }
        let items = match store.list(&ev.group_resource(), Some(&namespace)).await {
            Ok(l) => l.items,
            Err(e) => {
                matched.retain(|m| !names.contains(m));
                errors.push(e);
                continue;
            }
        };
        // kube's CalculateUsageStats: every tracked name starts at zero.
        let mut used: ResourceList = names.iter().map(|n| (n.clone(), Amount::ZERO)).collect();
        for item in &items {
            if doc.selectors.iter().all(|s| ev.matches_scope(s, item)) {
                used = resources::add(&used, &ev.usage(item, now));
            }
        }
        measured = resources::add(&measured, &used);
    }
    let measured = resources::mask(&measured, &matched);
    let mut used = doc.used.clone();
    used.extend(measured);
    let used = resources::mask(&used, &hard_names);
    let status = serde_json::json!({
        "hard": resources::to_json(&doc.spec_hard),
        "used": resources::to_json(&used),
    });
    (status, errors)
}
