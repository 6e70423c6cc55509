//! The Job create strategy's generated selector (kube's
//! `generateSelectorIfNeeded` in `pkg/registry/batch/job/strategy.go`).
//!
//! Unless `spec.manualSelector` is true, the pod template gets the
//! `job-name` / `batch.kubernetes.io/job-name` labels (the Job's name) and
//! the `controller-uid` / `batch.kubernetes.io/controller-uid` labels (its
//! uid), each only when absent, and `spec.selector.matchLabels` gets
//! `batch.kubernetes.io/controller-uid` when absent. A label the user set
//! with another value is left for validation to reject, as kube does.

use serde_json::{Map, Value};

use super::{child, object_at};

/// The template labels that name the Job.
const NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
/// The template labels that carry the Job's uid.
const UID_LABELS: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];
/// The label the generated selector matches.
const SELECTOR_LABEL: &str = "batch.kubernetes.io/controller-uid";

/// Generate the selector and template labels of a Job being created.
pub(super) fn generate_selector(obj: &mut Value) {
    let meta = |k: &str| {
        obj.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (name, uid) = (meta("name"), meta("uid"));
    let Some(spec) = object_at(obj, &["spec"]) else {
        return;
    };
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    if let Some(labels) = child(spec, "template")
        .and_then(|t| child(t, "metadata"))
        .and_then(|m| child(m, "labels"))
    {
        add_absent(labels, &NAME_LABELS, &name);
        add_absent(labels, &UID_LABELS, &uid);
    }
    if let Some(match_labels) = child(spec, "selector").and_then(|s| child(s, "matchLabels")) {
        add_absent(match_labels, &[SELECTOR_LABEL], &uid);
    }
}

/// Set each of `keys` to `value` unless present.
fn add_absent(m: &mut Map<String, Value>, keys: &[&str], value: &str) {
    for key in keys {
        if !m.contains_key(*key) {
            m.insert((*key).to_string(), Value::String(value.to_string()));
        }
    }
}
