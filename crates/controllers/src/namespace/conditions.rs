//! kube's namespace deletion conditions (`status_condition_utils.go`): each
//! of the five types is always present, `False` with its "ok" reason and
//! message, or `True` with what went wrong.

use std::collections::BTreeMap;

use keelson_api::GroupResource;
use keelson_apimachinery::meta::now_rfc3339;
use serde_json::{json, Map, Value};

/// What one deletion pass left behind.
#[derive(Debug, Default)]
pub(super) struct Totals {
    /// Objects left per resource.
    pub remaining: BTreeMap<GroupResource, usize>,
    /// Objects left per finalizer.
    pub finalizers: BTreeMap<String, usize>,
    /// Messages of the resources whose content could not be deleted.
    pub errors: Vec<String>,
}

/// The condition types in kube's order, with their "ok" reason and message.
const TYPES: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// The failing conditions a pass found: type → (reason, message).
fn failing(totals: &Totals) -> BTreeMap<&'static str, (String, String)> {
    let mut out = BTreeMap::new();
    if !totals.errors.is_empty() {
        let mut msgs = totals.errors.clone();
        msgs.sort();
        out.insert(
            "NamespaceDeletionContentFailure",
            (
                "ContentDeletionFailed".to_string(),
                format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    msgs.len(),
                    msgs.join(", ")
                ),
            ),
        );
    }
    if !totals.remaining.is_empty() {
        let mut parts: Vec<String> = totals
            .remaining
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(gr, n)| format!("{}.{} has {} resource instances", gr.resource, gr.group, n))
            .collect();
        parts.sort();
        out.insert(
            "NamespaceContentRemaining",
            (
                "SomeResourcesRemain".to_string(),
                format!("Some resources are remaining: {}", parts.join(", ")),
            ),
        );
    }
    if !totals.finalizers.is_empty() {
        let mut parts: Vec<String> = totals
            .finalizers
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        parts.sort();
        out.insert(
            "NamespaceFinalizersRemaining",
            (
                "SomeFinalizersRemain".to_string(),
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    parts.join(", ")
                ),
            ),
        );
    }
    out
}

/// Bring the namespace's conditions up to date (kube's
/// `updateConditions`); returns whether anything changed.
pub(super) fn update(ns: &mut Value, totals: &Totals) -> bool {
    let failing = failing(totals);
    let Some(status) = status_mut(ns) else {
        return false;
    };
    let conditions = status
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !conditions.is_array() {
        *conditions = Value::Array(Vec::new());
    }
    let Some(list) = conditions.as_array_mut() else {
        return false;
    };
    let mut changed = false;
    for (ty, ok_reason, ok_message) in TYPES {
        let (st, reason, message) = match failing.get(ty) {
            Some((r, m)) => ("True", r.clone(), m.clone()),
            None => ("False", ok_reason.to_string(), ok_message.to_string()),
        };
        let existing = list
            .iter_mut()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(ty));
        match existing {
            None => {
                list.push(json!({
                    "type": ty,
                    "status": st,
                    "lastTransitionTime": now_rfc3339(),
                    "reason": reason,
                    "message": message,
                }));
                changed = true;
            }
            Some(c) => {
                let get = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                if get("status") != st || get("reason") != reason || get("message") != message {
                    if let Some(m) = c.as_object_mut() {
                        if m.get("status").and_then(Value::as_str) != Some(st) {
                            m.insert("lastTransitionTime".into(), now_rfc3339().into());
                        }
                        m.insert("status".into(), st.into());
                        m.insert("reason".into(), reason.into());
                        m.insert("message".into(), message.into());
                    }
                    changed = true;
                }
            }
        }
    }
    changed
}

/// `status.phase: Terminating`.
pub(super) fn set_phase_terminating(ns: &mut Value) {
    if let Some(status) = status_mut(ns) {
        status.insert("phase".into(), "Terminating".into());
    }
}

fn status_mut(ns: &mut Value) -> Option<&mut Map<String, Value>> {
    let root = ns.as_object_mut()?;
    let status = root
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    if !status.is_object() {
        *status = Value::Object(Map::new());
    }
    status.as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_say_what_remains() {
        let mut ns = json!({"status": {"phase": "Terminating"}});
        let mut totals = Totals::default();
        totals
            .remaining
            .insert(GroupResource::new("", "configmaps"), 2);
        totals.finalizers.insert("example.com/hold".into(), 2);
        assert!(update(&mut ns, &totals));
        let conds = ns["status"]["conditions"].as_array().unwrap();
        assert_eq!(conds.len(), 5);
        assert_eq!(conds[3]["type"], "NamespaceContentRemaining");
        assert_eq!(conds[3]["status"], "True");
        assert_eq!(conds[3]["reason"], "SomeResourcesRemain");
        assert_eq!(
            conds[3]["message"],
            "Some resources are remaining: configmaps. has 2 resource instances"
        );
        assert_eq!(
            conds[4]["message"],
            "Some content in the namespace has finalizers remaining: example.com/hold in 2 resource instances"
        );
        assert_eq!(conds[2]["reason"], "ContentDeleted");
        // Same state again: nothing to write.
        assert!(!update(&mut ns, &totals));
        // Everything gone: the ok variants.
        assert!(update(&mut ns, &Totals::default()));
        assert_eq!(ns["status"]["conditions"][3]["status"], "False");
        assert_eq!(ns["status"]["conditions"][3]["reason"], "ContentRemoved");
    }
}
