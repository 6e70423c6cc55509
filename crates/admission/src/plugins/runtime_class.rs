//! RuntimeClass (`plugin/pkg/admission/runtimeclass`), on pod creates: the
//! named RuntimeClass must exist; its `overhead.podFixed` becomes the pod's
//! `spec.overhead` and its `scheduling` is merged into the pod's node
//! selector and tolerations; conflicting values are refused.

use keelson_apimachinery::ApiResult;
use serde_json::{Map, Value};

use super::cache::{live_get, runtime_classes};
use super::util::{nanos, objects, spec_mut};
use super::Attrs;

/// `prepareObjects`: the pod's RuntimeClass, if it names one.
async fn class_of(a: &Attrs<'_>, pod: &Value) -> ApiResult<Option<Value>> {
    let Some(name) = pod
        .get("spec")
        .and_then(|s| s.get("runtimeClassName"))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let gr = runtime_classes();
    let found = match a.cache.get(a.store, &gr, "", name).await? {
        Some(rc) => Some(rc),
        None => live_get(a.store, &gr, "", name).await?,
    };
    match found {
        Some(rc) => Ok(Some(rc)),
        None => Err(a.forbidden(&format!("pod rejected: RuntimeClass {name:?} not found"))),
    }
}

fn applies(a: &Attrs<'_>) -> bool {
    a.is("", "pods") && a.req.operation == keelson_api::Operation::Create
}

/// Resource lists equal as quantities (`apiequality.Semantic`).
fn same_resources(a: Option<&Value>, b: Option<&Value>) -> bool {
    let norm = |v: Option<&Value>| -> Vec<(String, Option<i128>)> {
        let mut out: Vec<(String, Option<i128>)> = v
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, q)| (k.clone(), nanos(q))).collect())
            .unwrap_or_default();
        out.sort();
        out
    };
    norm(a) == norm(b)
}

fn non_empty(v: Option<&Value>) -> bool {
    v.and_then(Value::as_object).is_some_and(|m| !m.is_empty())
}

/// The mutating phase: `setOverhead`, `setScheduling`.
pub(crate) async fn admit(a: &Attrs<'_>, pod: &mut Value) -> ApiResult<()> {
    if !applies(a) {
        return Ok(());
    }
    let Some(rc) = class_of(a, pod).await? else {
        return Ok(());
    };
    let Some(spec) = spec_mut(pod) else {
        return Ok(());
    };
    if let Some(fixed) = rc.get("overhead").and_then(|o| o.get("podFixed")) {
        if non_empty(spec.get("overhead")) && !same_resources(Some(fixed), spec.get("overhead")) {
            return Err(a.forbidden(
                "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
            ));
        }
        spec.insert("overhead".into(), fixed.clone());
    }
    let Some(scheduling) = rc.get("scheduling") else {
        return Ok(());
    };
    if let Some(selector) = scheduling.get("nodeSelector").and_then(Value::as_object) {
        let mut merged = spec
            .get("nodeSelector")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut keys: Vec<&String> = selector.keys().collect();
        keys.sort();
        for key in keys {
            let rc_value = selector.get(key).and_then(Value::as_str).unwrap_or("");
            if let Some(pod_value) = merged.get(key).and_then(Value::as_str) {
                if pod_value != rc_value {
                    return Err(a.forbidden(&format!(
                        "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {rc_value}; pod.spec.nodeSelector[{key}] = {pod_value}"
                    )));
                }
            }
            merged.insert(key.clone(), Value::from(rc_value));
        }
        if !merged.is_empty() {
            spec.insert("nodeSelector".into(), Value::Object(merged));
        }
    }
    let extra = objects(scheduling, &["tolerations"]);
    if !extra.is_empty() {
        let current: Vec<Map<String, Value>> = spec
            .get("tolerations")
            .and_then(Value::as_array)
            .map(|l| l.iter().filter_map(Value::as_object).cloned().collect())
            .unwrap_or_default();
        let extra: Vec<Map<String, Value>> = extra.into_iter().cloned().collect();
        let merged = merge_tolerations(&current, &extra);
        spec.insert(
            "tolerations".into(),
            Value::Array(merged.into_iter().map(Value::Object).collect()),
        );
    }
    Ok(())
}

/// The validating phase: `validateOverhead`.
pub(crate) async fn validate(a: &Attrs<'_>, pod: &Value) -> ApiResult<()> {
    if !applies(a) {
        return Ok(());
    }
    let rc = class_of(a, pod).await?;
    let overhead = pod.get("spec").and_then(|s| s.get("overhead"));
    match rc.as_ref().and_then(|rc| rc.get("overhead")) {
        Some(o) => {
            if !same_resources(o.get("podFixed"), overhead) {
                return Err(a.forbidden(
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                ));
            }
        }
        None => {
            if overhead.is_some_and(|v| !v.is_null()) {
                return Err(a.forbidden(
                    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
                ));
            }
        }
    }
    Ok(())
}

fn field<'a>(t: &'a Map<String, Value>, k: &str) -> &'a str {
    t.get(k).and_then(Value::as_str).unwrap_or("")
}

/// `isSuperset`: `ss` tolerates every taint `t` tolerates.
fn is_superset(ss: &Map<String, Value>, t: &Map<String, Value>) -> bool {
    if ss == t {
        return true;
    }
    let (ss_key, t_key) = (field(ss, "key"), field(t, "key"));
    if !ss_key.is_empty() && ss_key != t_key {
        return false;
    }
    let (ss_effect, t_effect) = (field(ss, "effect"), field(t, "effect"));
    if !ss_effect.is_empty() && ss_effect != t_effect {
        return false;
    }
    if ss_effect == "NoExecute" {
        let ss_secs = ss.get("tolerationSeconds").and_then(Value::as_i64);
        let t_secs = t.get("tolerationSeconds").and_then(Value::as_i64);
        match (ss_secs, t_secs) {
            (Some(a), Some(b)) if a < b => return false,
            (Some(_), None) => return false,
            _ => {}
        }
    }
    let exists = |x: &Map<String, Value>| field(x, "operator") == "Exists";
    if exists(ss) {
        return true;
    }
    // ss is Equal (or unset).
    !exists(t) && field(ss, "value") == field(t, "value") && ss_key == t_key
}

/// `tolerations.MergeTolerations`: the union, without those another one
/// already covers.
fn merge_tolerations(
    first: &[Map<String, Value>],
    second: &[Map<String, Value>],
) -> Vec<Map<String, Value>> {
    let all: Vec<&Map<String, Value>> = first.iter().chain(second).collect();
    let mut merged: Vec<Map<String, Value>> = Vec::new();
    'outer: for (i, t) in all.iter().enumerate() {
        for (j, other) in all.iter().enumerate() {
            if i == j {
                continue;
            }
            // Drop `t` if another covers it (of two equal ones, keep the first).
            if is_superset(other, t) && !(is_superset(t, other) && i < j) {
                continue 'outer;
            }
        }
        merged.push((*t).clone());
    }
    merged
}
