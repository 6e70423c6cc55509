//! kube's `validateTopologySpreadConstraints` (1.34, with
//! `MatchLabelKeysInPodTopologySpread` and
//! `MatchLabelKeysInPodTopologySpreadSelectorMerge` on, as by default) and
//! the `matchLabelKeys` rules it shares with pod affinity terms
//! (`validateMatchLabelKeysAndMismatchLabelKeys`).

use keelson_apimachinery::names::is_qualified_name;
use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::super::util::{
    duplicate, int_of, invalid_all, list_of, obj_of, str_of, validate_label_selector,
};
use super::super::Path;

/// The keys kube's pod strategy appends to `selector` on Pod create
/// (`applyLabelKeysToLabelSelector`): each of `keys`, in order, that the
/// pod carries as a label. `labels` is `None` when nothing is merged (pod
/// templates, updates).
pub(super) fn merged_keys<'a>(
    keys: &[&'a str],
    labels: Option<&Map<String, Value>>,
) -> Vec<&'a str> {
    let Some(labels) = labels else {
        return Vec::new();
    };
    keys.iter()
        .copied()
        .filter(|k| labels.contains_key(*k))
        .collect()
}

/// The "exists in both" half of kube's
/// `validateMatchLabelKeysAndMismatchLabelKeys`: a `matchExpressions` key
/// (the selector's own, then the `merged` ones the pod strategy appended)
/// that is also in `matching` and was already seen in `matchLabels` or an
/// earlier expression is reported at `path` indexed by the key's last
/// position in `matching` (kube's `fldPath.Index(i)`, not
/// `matchLabelKeys[i]`).
pub(super) fn exists_in_both(
    path: &Path,
    matching: &[&str],
    selector: &Value,
    merged: &[&str],
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = obj_of(selector, "matchLabels")
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    let exprs = list_of(selector, "matchExpressions")
        .iter()
        .map(|e| str_of(e, "key"))
        .chain(merged.iter().copied());
    for key in exprs {
        if let Some(i) = matching.iter().rposition(|k| *k == key) {
            if seen.contains(&key) {
                errs.push(FieldError::invalid(
                    path.index(i).as_str(),
                    key,
                    "exists in both matchLabelKeys and labelSelector",
                ));
            }
        }
        seen.push(key);
    }
    errs
}

/// kube's `validateLabelKeys` of `keys` (the `matchLabelKeys` or
/// `mismatchLabelKeys` at `path`): forbidden without a selector, else each
/// a qualified name.
pub(super) fn label_keys(path: &Path, keys: &[&str], selector: Option<&Value>) -> Vec<FieldError> {
    if keys.is_empty() {
        return Vec::new();
    }
    if selector.is_none() {
        return vec![FieldError::forbidden(
            path.as_str(),
            "must not be specified when labelSelector is not set",
        )];
    }
    keys.iter()
        .enumerate()
        .flat_map(|(i, k)| invalid_all(is_qualified_name(k), &path.index(i), k))
        .collect()
}

/// `c[key]` as a list of strings.
pub(super) fn strings<'a>(c: &'a Value, key: &str) -> Vec<&'a str> {
    list_of(c, key)
        .iter()
        .map(|v| v.as_str().unwrap_or(""))
        .collect()
}

/// kube's `validateTopologySpreadConstraints` of `cs` at `path`; `labels`:
/// the pod's labels when the pod strategy merges `matchLabelKeys` into
/// the selectors first (Pod create).
pub(super) fn topology_spread(
    cs: &[Value],
    path: &Path,
    labels: Option<&Map<String, Value>>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let ip = path.index(i);
        let skew = int_of(c, "maxSkew").unwrap_or(0);
        if skew <= 0 {
            errs.push(FieldError::invalid(
                ip.child("maxSkew").as_str(),
                skew,
                "must be greater than zero",
            ));
        }
        let key = str_of(c, "topologyKey");
        if key.is_empty() {
            errs.push(FieldError::required(
                ip.child("topologyKey").as_str(),
                "can not be empty",
            ));
        }
        let when = str_of(c, "whenUnsatisfiable");
        if when != "DoNotSchedule" && when != "ScheduleAnyway" {
            errs.push(FieldError::not_supported(
                ip.child("whenUnsatisfiable").as_str(),
                when,
                &["DoNotSchedule", "ScheduleAnyway"],
            ));
        }
        let repeated = cs[i + 1..]
            .iter()
            .any(|o| str_of(o, "topologyKey") == key && str_of(o, "whenUnsatisfiable") == when);
        if repeated {
            errs.push(duplicate(
                &ip.child("{topologyKey, whenUnsatisfiable}"),
                format!("{{{key}, {when}}}"),
            ));
        }
        if let Some(min) = c.get("minDomains").filter(|v| !v.is_null()) {
            let mp = ip.child("minDomains");
            let n = min.as_i64().unwrap_or(0);
            if n <= 0 {
                errs.push(FieldError::invalid(
                    mp.as_str(),
                    n,
                    "must be greater than zero",
                ));
            }
            if when != "DoNotSchedule" {
                errs.push(FieldError::invalid(
                    mp.as_str(),
                    n,
                    &format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"
                    ),
                ));
            }
        }
        for policy in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            if let Some(p) = c.get(policy).and_then(Value::as_str) {
                if p != "Honor" && p != "Ignore" {
                    errs.push(FieldError::not_supported(
                        ip.child(policy).as_str(),
                        p,
                        &["Honor", "Ignore"],
                    ));
                }
            }
        }
        let selector = c.get("labelSelector").filter(|v| v.is_object());
        let keys = strings(c, "matchLabelKeys");
        errs.extend(label_keys(&ip.child("matchLabelKeys"), &keys, selector));
        if let Some(sel) = selector {
            let merged = if keys.is_empty() {
                Vec::new()
            } else {
                merged_keys(&keys, labels)
            };
            errs.extend(exists_in_both(&ip, &keys, sel, &merged));
        }
        errs.extend(validate_label_selector(
            c.get("labelSelector"),
            false,
            &ip.child("labelSelector"),
        ));
    }
    errs
}
