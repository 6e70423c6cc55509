//! The disruption arithmetic of kube-controller-manager's `disruption`
//! controller, as pure functions of the PodDisruptionBudget, its pods and
//! the time: which pods a budget selects, how many must stay healthy, how
//! many are, the `disruptedPods` entries still in force, and the status
//! (with its `DisruptionAllowed` condition) the budget should have.

use chrono::{DateTime, Duration, Utc};
use keelson_apimachinery::meta::meta_str;
use serde_json::{json, Map, Value};

/// How long an eviction's `disruptedPods` entry keeps its pod out of the
/// healthy count while the pod is not deleted (kube's `DeletionTimeout`).
pub const DELETION_TIMEOUT: Duration = Duration::minutes(2);

/// The `DisruptionAllowed` condition type and its reasons.
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
/// `DisruptionAllowed=True`: enough pods are healthy.
pub const SUFFICIENT_PODS: &str = "SufficientPods";
/// `DisruptionAllowed=False`: too few healthy pods.
pub const INSUFFICIENT_PODS: &str = "InsufficientPods";
/// `DisruptionAllowed=False`: the controller could not compute the status.
pub const SYNC_FAILED: &str = "SyncFailed";

/// Whether a `metav1.LabelSelector` selects `labels`, as kube's
/// `LabelSelectorAsSelector` builds it: a missing (`null`) selector selects
/// nothing, an empty one (`{}`) everything; `None` for a selector kube
/// cannot convert (an unknown operator, values where none belong).
pub fn selector_matches(selector: Option<&Value>, labels: &Map<String, Value>) -> Option<bool> {
    let Some(sel) = selector.filter(|s| !s.is_null()) else {
        return Some(false);
    };
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        if !m.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            return Some(false);
        }
    }
    let empty = Vec::new();
    let exprs = sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for e in exprs {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let have = labels.get(key).and_then(Value::as_str);
        let ok = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" if !values.is_empty() => have.is_some_and(|h| values.contains(&h)),
            "NotIn" if !values.is_empty() => have.is_none_or(|h| !values.contains(&h)),
            "Exists" if values.is_empty() => have.is_some(),
            "DoesNotExist" if values.is_empty() => have.is_none(),
            _ => return None,
        };
        if !ok {
            return Some(false);
        }
    }
    Some(true)
}

/// Whether the selector is empty (kube's `selector.Empty()`): no
/// `matchLabels` and no `matchExpressions`.
pub fn selector_is_empty(selector: Option<&Value>) -> bool {
    let Some(sel) = selector.filter(|s| !s.is_null()) else {
        return true;
    };
    let none = |f: &str| match sel.get(f) {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    none("matchLabels") && none("matchExpressions")
}

/// The pod's labels (an empty map when it has none).
pub fn labels_of(obj: &Value) -> Map<String, Value> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// kube's `IsPodReady`: the `Ready` condition is `True`.
pub fn is_pod_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Ready")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

fn being_deleted(obj: &Value) -> bool {
    !meta_str(obj, "deletionTimestamp").is_empty()
}

/// Parse a `metav1.Time` (RFC 3339).
pub fn parse_time(v: &Value) -> Option<DateTime<Utc>> {
    v.as_str()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
}

/// A `metav1.Time` as kube writes it (RFC 3339, seconds, `Z`).
pub fn format_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// kube's `GetScaledValueFromIntOrPercent`: an integer as is, a `"N%"`
/// string as `N` percent of `total` (rounded up or down).
pub fn scaled_value(v: &Value, total: i64, round_up: bool) -> Result<i64, String> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| format!("invalid value for IntOrString: {}", n)),
        Value::String(s) => {
            let pct = s
                .strip_suffix('%')
                .and_then(|p| p.parse::<i64>().ok())
                .ok_or_else(|| {
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                        .to_string()
                })?;
            let scaled = pct * total;
            Ok(if round_up {
                (scaled + 99).div_euclid(100)
            } else {
                scaled.div_euclid(100)
            })
        }
        _ => Err("invalid value for IntOrString: invalid type: neither int nor percentage".into()),
    }
}

/// What the controller found for one selected pod's controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodController {
    /// No controller reference (an unmanaged pod).
    Unmanaged,
    /// The controller (by uid) and its desired scale.
    Scale { uid: String, replicas: i64 },
    /// A controller reference to nothing kube's finders know.
    NotFound,
}

/// kube's `getExpectedPodCount`: `(expectedPods, desiredHealthy, the names
/// of unmanaged pods)`. `controllers` says, per pod, what its controller
/// is; it is consulted only when the budget needs a scale.
pub fn expected_and_desired(
    pdb: &Value,
    pods: &[&Value],
    controllers: &dyn Fn(&Value) -> PodController,
) -> Result<(i64, i64, Vec<String>), String> {
    let spec = pdb.get("spec").cloned().unwrap_or(Value::Null);
    let expected_scale = || -> Result<(i64, Vec<String>), String> {
        let mut scales: Vec<(String, i64)> = Vec::new();
        let mut unmanaged = Vec::new();
        for pod in pods {
            match controllers(pod) {
                PodController::Unmanaged => unmanaged.push(meta_str(pod, "name").to_string()),
                PodController::Scale { uid, replicas } => {
                    if !scales.iter().any(|(u, _)| *u == uid) {
                        scales.push((uid, replicas));
                    }
                }
                PodController::NotFound => {
                    return Err(format!(
                        "found no controllers for pod {:?}",
                        meta_str(pod, "name")
                    ))
                }
            }
        }
        Ok((scales.iter().map(|(_, n)| n).sum(), unmanaged))
    };
    match (
        spec.get("maxUnavailable").filter(|v| !v.is_null()),
        spec.get("minAvailable").filter(|v| !v.is_null()),
    ) {
        (Some(max), _) => {
            let (expected, unmanaged) = expected_scale()?;
            let max = scaled_value(max, expected, true)?;
            Ok((expected, (expected - max).max(0), unmanaged))
        }
        (None, Some(min @ Value::String(_))) => {
            let (expected, unmanaged) = expected_scale()?;
            Ok((expected, scaled_value(min, expected, true)?, unmanaged))
        }
        (None, Some(min)) => Ok((pods.len() as i64, scaled_value(min, 0, true)?, Vec::new())),
        (None, None) => Ok((0, 0, Vec::new())),
    }
}

/// kube's `buildDisruptedPodMap`: the budget's `disruptedPods` entries of
/// selected pods not being deleted whose [`DELETION_TIMEOUT`] has not run
/// out, and the earliest time one runs out (when to look again).
pub fn live_disrupted_pods(
    pdb: &Value,
    pods: &[&Value],
    now: DateTime<Utc>,
) -> (Map<String, Value>, Option<DateTime<Utc>>) {
    let mut kept = Map::new();
    let mut recheck: Option<DateTime<Utc>> = None;
    let Some(disrupted) = pdb
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
    else {
        return (kept, recheck);
    };
    for pod in pods.iter().filter(|p| !being_deleted(p)) {
        let name = meta_str(pod, "name");
        let Some(at) = disrupted.get(name) else {
            continue;
        };
        let Some(when) = parse_time(at) else { continue };
        let expires = when + DELETION_TIMEOUT;
        if expires >= now {
            recheck = Some(recheck.map_or(expires, |r| r.min(expires)));
            kept.insert(name.to_string(), at.clone());
        }
    }
    (kept, recheck)
}

/// kube's `countHealthyPods`: ready pods not being deleted and not about
/// to be (a live `disruptedPods` entry).
pub fn count_healthy(pods: &[&Value], disrupted: &Map<String, Value>, now: DateTime<Utc>) -> i64 {
    pods.iter()
        .filter(|p| !being_deleted(p))
        .filter(|p| {
            disrupted
                .get(meta_str(p, "name"))
                .and_then(parse_time)
                .is_none_or(|t| t + DELETION_TIMEOUT <= now)
        })
        .filter(|p| is_pod_ready(p))
        .count() as i64
}

fn generation(pdb: &Value) -> i64 {
    pdb.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn int(v: &Value, field: &str) -> i64 {
    v.get(field).and_then(Value::as_i64).unwrap_or(0)
}

/// kube's `SetStatusCondition`: add or update the condition of its type;
/// `lastTransitionTime` moves only when the status changes.
pub fn set_condition(conditions: &mut Vec<Value>, mut cond: Value, now: DateTime<Utc>) {
    let ty = cond.get("type").cloned();
    let status = cond.get("status").cloned();
    if let Some(existing) = conditions.iter_mut().find(|c| c.get("type") == ty.as_ref()) {
        if existing.get("status") != status.as_ref() {
            existing["status"] = status.unwrap_or(Value::Null);
            existing["lastTransitionTime"] = json!(format_time(now));
        }
        for f in ["reason", "message", "observedGeneration"] {
            existing[f] = cond.get(f).cloned().unwrap_or(Value::Null);
        }
        return;
    }
    cond["lastTransitionTime"] = json!(format_time(now));
    conditions.push(cond);
}

/// kube's `UpdateDisruptionAllowedCondition` on a status object.
pub fn update_disruption_allowed_condition(status: &mut Value, now: DateTime<Utc>) {
    let allowed = int(status, "disruptionsAllowed") > 0;
    let observed = int(status, "observedGeneration");
    let (st, reason) = if allowed {
        ("True", SUFFICIENT_PODS)
    } else {
        ("False", INSUFFICIENT_PODS)
    };
    let mut conds = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    set_condition(
        &mut conds,
        json!({"type": DISRUPTION_ALLOWED, "status": st, "observedGeneration": observed,
            "reason": reason, "message": ""}),
        now,
    );
    status["conditions"] = Value::Array(conds);
}

/// kube's `ConditionsAreUpToDate`.
fn conditions_up_to_date(pdb: &Value) -> bool {
    let status = pdb.get("status").cloned().unwrap_or(Value::Null);
    let Some(cond) = status
        .get("conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(DISRUPTION_ALLOWED))
        })
    else {
        return false;
    };
    if int(&status, "observedGeneration") != generation(pdb) {
        return false;
    }
    let want = if int(&status, "disruptionsAllowed") > 0 {
        ("True", SUFFICIENT_PODS)
    } else {
        ("False", INSUFFICIENT_PODS)
    };
    cond.get("status").and_then(Value::as_str) == Some(want.0)
        && cond.get("reason").and_then(Value::as_str) == Some(want.1)
}

/// The counts one sync computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    pub current_healthy: i64,
    pub desired_healthy: i64,
    pub expected_pods: i64,
}

/// kube's `updatePdbStatus`: the budget's new status, or `None` when it
/// already says all of it.
pub fn new_status(
    pdb: &Value,
    counts: &Counts,
    disrupted: Map<String, Value>,
    now: DateTime<Utc>,
) -> Option<Value> {
    let mut allowed = counts.current_healthy - counts.desired_healthy;
    if counts.expected_pods <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let old = pdb.get("status").cloned().unwrap_or(Value::Null);
    let old_disrupted = old
        .get("disruptedPods")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if int(&old, "currentHealthy") == counts.current_healthy
        && int(&old, "desiredHealthy") == counts.desired_healthy
        && int(&old, "expectedPods") == counts.expected_pods
        && int(&old, "disruptionsAllowed") == allowed
        && old_disrupted == disrupted
        && int(&old, "observedGeneration") == generation(pdb)
        && conditions_up_to_date(pdb)
    {
        return None;
    }
    let mut status = json!({
        "observedGeneration": generation(pdb),
        "disruptionsAllowed": allowed,
        "currentHealthy": counts.current_healthy,
        "desiredHealthy": counts.desired_healthy,
        "expectedPods": counts.expected_pods,
    });
    if !disrupted.is_empty() {
        status["disruptedPods"] = Value::Object(disrupted);
    }
    if let Some(c) = old.get("conditions").filter(|c| c.is_array()) {
        status["conditions"] = c.clone();
    }
    update_disruption_allowed_condition(&mut status, now);
    Some(status)
}

/// kube's `failSafe`: no disruptions allowed, `DisruptionAllowed=False`
/// with reason `SyncFailed` and the error as message.
pub fn fail_safe_status(pdb: &Value, message: &str, now: DateTime<Utc>) -> Value {
    let mut status = pdb
        .get("status")
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    status["disruptionsAllowed"] = json!(0);
    let observed = int(&status, "observedGeneration");
    let mut conds = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    set_condition(
        &mut conds,
        json!({"type": DISRUPTION_ALLOWED, "status": "False", "observedGeneration": observed,
            "reason": SYNC_FAILED, "message": message}),
        now,
    );
    status["conditions"] = Value::Array(conds);
    status
}

/// The controller reference of an object (`ownerReferences` entry with
/// `controller: true`).
pub fn controller_ref(obj: &Value) -> Option<&Value> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
}
