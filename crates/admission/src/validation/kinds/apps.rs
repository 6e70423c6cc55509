//! apps: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision (`pkg/apis/apps/validation`).

use keelson_api::Operation;
use keelson_apimachinery::FieldError;
use serde_json::{json, Map, Value};

use super::util::{
    dns1123_label, go_map, go_selector, go_struct, immutable, int_of, int_or_percent_value,
    list_of, nonnegative, not_more_than_100_percent, obj_of, positive_int_or_percent, semantic,
    str_of, validate_label_selector, Selector,
};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let old_spec = w.old().map(|o| o.get("spec").unwrap_or(&Value::Null));
    if w.is_status() {
        let status = obj.get("status").unwrap_or(&null);
        let sp = Path::new("status");
        let mut errs = match kind {
            "Deployment" => validate_deployment_status(status, &sp),
            "ReplicaSet" => validate_replica_set_status(status, &sp),
            "StatefulSet" => validate_stateful_set_status(status, &sp),
            "DaemonSet" => validate_daemon_set_status(status, &sp),
            _ => Vec::new(),
        };
        // `Validate{Deployment,StatefulSet,DaemonSet}StatusUpdate`.
        if let (Some(old), "Deployment" | "StatefulSet" | "DaemonSet") = (w.old(), kind) {
            let old_status = old.get("status").unwrap_or(&null);
            errs.extend(collision_count_decremented(status, old_status, &sp));
        }
        return errs;
    }
    if !w.subresource.is_empty() {
        return Vec::new();
    }
    let p = Path::new("spec");
    let mut errs = match kind {
        "Deployment" => validate_deployment_spec(spec, &p, w),
        "ReplicaSet" => validate_replica_set_spec(spec, &p, w),
        "StatefulSet" => {
            let mut e = validate_stateful_set_spec(spec, &p, w);
            if let Some(old) = old_spec {
                e.extend(validate_stateful_set_update(spec, old));
            }
            e
        }
        "DaemonSet" => validate_daemon_set_spec(spec, &p, w),
        "ControllerRevision" => {
            let mut e = Vec::new();
            if obj.get("data").is_none_or(Value::is_null) {
                e.push(FieldError::required("data", "data is mandatory"));
            }
            e.extend(nonnegative(
                int_of(obj, "revision").unwrap_or(0),
                &Path::new("revision"),
            ));
            if let Some(old) = w.old() {
                e.extend(immutable(
                    obj.get("data"),
                    old.get("data"),
                    &Path::new("data"),
                ));
            }
            return e;
        }
        _ => return Vec::new(),
    };
    // apps/v1: the selector may not change.
    if let (Some(old), "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet") = (old_spec, kind)
    {
        let same = |a: Option<&Value>, b: Option<&Value>| {
            semantic(a.unwrap_or(&Value::Null)) == semantic(b.unwrap_or(&Value::Null))
        };
        if kind != "StatefulSet" && !same(spec.get("selector"), old.get("selector")) {
            errs.extend(immutable(
                spec.get("selector").map(go_selector).as_ref(),
                old.get("selector"),
                &p.child("selector"),
            ));
        }
    }
    errs
}

/// An update strategy as kube prints it: `type`, then `rollingUpdate`
/// with its fields in `ru_fields` order.
fn strategy_value(s: &Value, ru_fields: &[&str]) -> Value {
    let mut v = go_struct(s, &["type", "rollingUpdate"]);
    if let Some(ru) = v.get_mut("rollingUpdate") {
        *ru = go_struct(ru, ru_fields);
    }
    v
}

fn labels_of(template: &Value) -> Option<&Map<String, Value>> {
    template.get("metadata").and_then(|m| obj_of(m, "labels"))
}

fn labels_value(template: &Value) -> Value {
    labels_of(template).map_or(Value::Null, |l| go_map(&Value::Object(l.clone())))
}

fn pod_spec(template: &Value) -> &Value {
    template.get("spec").unwrap_or(&Value::Null)
}

/// The selector checks shared by Deployment and ReplicaSet: required,
/// syntax, not empty (`what` names the kind in the message).
fn selector_errors(spec: &Value, p: &Path, what: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match spec.get("selector").filter(|s| s.is_object()) {
        None => errs.push(FieldError::required(p.child("selector").as_str(), "")),
        Some(sel) => {
            errs.extend(validate_label_selector(
                Some(sel),
                false,
                &p.child("selector"),
            ));
            if Selector::of(Some(sel)).is_ok_and(|s| s.is_empty()) {
                errs.push(FieldError::invalid(
                    p.child("selector").as_str(),
                    go_selector(sel),
                    &format!("empty selector is invalid for {what}"),
                ));
            }
        }
    }
    errs
}

/// kube's `ValidatePodTemplateSpecForReplicaSet`.
fn pod_template_for_replica_set(
    template: &Value,
    selector: &Selector<'_>,
    p: &Path,
    w: Write<'_>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !selector.is_empty() && !selector.matches(labels_of(template)) {
        errs.push(FieldError::invalid(
            p.child("metadata").child("labels").as_str(),
            labels_value(template),
            "`selector` does not match template `labels`",
        ));
    }
    errs.extend(super::core_pod::validate_pod_template_spec(template, p, w));
    errs.extend(restart_always(template, p));
    if pod_spec(template)
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(FieldError::forbidden(
            p.child("spec").child("activeDeadlineSeconds").as_str(),
            "activeDeadlineSeconds in ReplicaSet is not Supported",
        ));
    }
    errs
}

fn restart_always(template: &Value, p: &Path) -> Vec<FieldError> {
    let rp = str_of(pod_spec(template), "restartPolicy");
    if rp != "Always" {
        vec![FieldError::not_supported(
            p.child("spec").child("restartPolicy").as_str(),
            rp,
            &["Always"],
        )]
    } else {
        Vec::new()
    }
}

/// kube's `ValidateDeploymentSpec`.
fn validate_deployment_spec(spec: &Value, p: &Path, w: Write<'_>) -> Vec<FieldError> {
    let mut errs = nonnegative(int_of(spec, "replicas").unwrap_or(0), &p.child("replicas"));
    errs.extend(selector_errors(spec, p, "deployment"));
    let template = spec.get("template").unwrap_or(&Value::Null);
    match Selector::of(spec.get("selector")) {
        Err(()) => errs.push(FieldError::invalid(
            p.child("selector").as_str(),
            spec.get("selector").map_or(Value::Null, go_selector),
            "invalid label selector",
        )),
        Ok(sel) => errs.extend(pod_template_for_replica_set(
            template,
            &sel,
            &p.child("template"),
            w,
        )),
    }
    errs.extend(validate_deployment_strategy(
        spec.get("strategy").unwrap_or(&Value::Null),
        &p.child("strategy"),
    ));
    let min_ready = int_of(spec, "minReadySeconds").unwrap_or(0);
    errs.extend(nonnegative(min_ready, &p.child("minReadySeconds")));
    if let Some(n) = int_of(spec, "revisionHistoryLimit") {
        errs.extend(nonnegative(n, &p.child("revisionHistoryLimit")));
    }
    if let Some(n) = int_of(spec, "progressDeadlineSeconds") {
        let path = p.child("progressDeadlineSeconds");
        errs.extend(nonnegative(n, &path));
        if n <= min_ready {
            errs.push(FieldError::invalid(
                path.as_str(),
                n,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

/// kube's `ValidateDeploymentStrategy`.
fn validate_deployment_strategy(strategy: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match str_of(strategy, "type") {
        "Recreate" => {
            if ru.is_some() {
                errs.push(FieldError::forbidden(
                    p.child("rollingUpdate").as_str(),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match ru {
            None => errs.push(FieldError::required(
                p.child("rollingUpdate").as_str(),
                "this should be defaulted and never be nil",
            )),
            Some(ru) => {
                let rp = p.child("rollingUpdate");
                let (mu, ms) = (ru.get("maxUnavailable"), ru.get("maxSurge"));
                errs.extend(positive_int_or_percent(mu, &rp.child("maxUnavailable")));
                errs.extend(positive_int_or_percent(ms, &rp.child("maxSurge")));
                if int_or_percent_value(mu) == 0 && int_or_percent_value(ms) == 0 {
                    errs.push(FieldError::invalid(
                        rp.child("maxUnavailable").as_str(),
                        mu.cloned().unwrap_or(Value::from(0)),
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
                errs.extend(not_more_than_100_percent(mu, &rp.child("maxUnavailable")));
            }
        },
        _ => errs.push(FieldError::not_supported(
            p.as_str(),
            strategy_value(strategy, &["maxUnavailable", "maxSurge"]),
            &["Recreate", "RollingUpdate"],
        )),
    }
    errs
}

/// kube's `ValidateReplicaSetSpec`.
fn validate_replica_set_spec(spec: &Value, p: &Path, w: Write<'_>) -> Vec<FieldError> {
    let mut errs = nonnegative(int_of(spec, "replicas").unwrap_or(0), &p.child("replicas"));
    errs.extend(nonnegative(
        int_of(spec, "minReadySeconds").unwrap_or(0),
        &p.child("minReadySeconds"),
    ));
    errs.extend(selector_errors(spec, p, "deployment"));
    match Selector::of(spec.get("selector")) {
        Err(()) => errs.push(FieldError::invalid(
            p.child("selector").as_str(),
            spec.get("selector").map_or(Value::Null, go_selector),
            "invalid label selector",
        )),
        Ok(sel) => errs.extend(pod_template_for_replica_set(
            spec.get("template").unwrap_or(&Value::Null),
            &sel,
            &p.child("template"),
            w,
        )),
    }
    errs
}

/// kube's `ValidateStatefulSetSpec`.
fn validate_stateful_set_spec(spec: &Value, p: &Path, w: Write<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match str_of(spec, "podManagementPolicy") {
        "" => errs.push(FieldError::required(
            p.child("podManagementPolicy").as_str(),
            "",
        )),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(
            p.child("podManagementPolicy").as_str(),
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let us = spec.get("updateStrategy").unwrap_or(&Value::Null);
    let usp = p.child("updateStrategy");
    let ru = us.get("rollingUpdate").filter(|v| !v.is_null());
    match str_of(us, "type") {
        "" => errs.push(FieldError::required(usp.as_str(), "")),
        "OnDelete" => {
            if let Some(ru) = ru {
                errs.push(FieldError::invalid(
                    usp.child("rollingUpdate").as_str(),
                    go_struct(ru, &["partition", "maxUnavailable"]),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(ru) = ru {
                let rp = usp.child("rollingUpdate");
                errs.extend(nonnegative(
                    int_of(ru, "partition").unwrap_or(0),
                    &rp.child("partition"),
                ));
                if let Some(mu) = ru.get("maxUnavailable").filter(|v| !v.is_null()) {
                    let mp = rp.child("maxUnavailable");
                    errs.extend(positive_int_or_percent(Some(mu), &mp));
                    if int_or_percent_value(Some(mu)) == 0 {
                        errs.push(FieldError::invalid(mp.as_str(), mu.clone(), "cannot be 0"));
                    }
                    errs.extend(not_more_than_100_percent(Some(mu), &mp));
                }
            }
        }
        _ => errs.push(FieldError::invalid(
            usp.as_str(),
            strategy_value(us, &["partition", "maxUnavailable"]),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    if let Some(policy) = spec
        .get("persistentVolumeClaimRetentionPolicy")
        .filter(|v| v.is_object())
    {
        let pp = p.child("persistentVolumeClaimRetentionPolicy");
        for f in ["whenDeleted", "whenScaled"] {
            let v = str_of(policy, f);
            if v != "Retain" && v != "Delete" {
                errs.push(FieldError::not_supported(
                    pp.child(f).as_str(),
                    v,
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    // Create only (kube's `StatefulSetValidationOptions`): an update allows
    // a stored invalid serviceName and does not revalidate the claim
    // templates; both are immutable.
    let create = w.old().is_none();
    if create {
        errs.extend(validate_volume_claim_templates(
            spec,
            &p.child("volumeClaimTemplates"),
            w,
        ));
    }
    errs.extend(nonnegative(
        int_of(spec, "replicas").unwrap_or(0),
        &p.child("replicas"),
    ));
    errs.extend(nonnegative(
        int_of(spec, "minReadySeconds").unwrap_or(0),
        &p.child("minReadySeconds"),
    ));
    if let Some(ord) = spec.get("ordinals").filter(|v| v.is_object()) {
        errs.extend(nonnegative(
            int_of(ord, "start").unwrap_or(0),
            &p.child("ordinals.start"),
        ));
    }
    let service_name = str_of(spec, "serviceName");
    if create && !service_name.is_empty() {
        errs.extend(dns1123_label(service_name, &p.child("serviceName")));
    }
    errs.extend(selector_errors(spec, p, "statefulset"));
    let template = spec.get("template").unwrap_or(&Value::Null);
    let tp = p.child("template");
    match Selector::of(spec.get("selector")) {
        Err(()) => errs.push(FieldError::invalid(
            p.child("selector").as_str(),
            spec.get("selector").map_or(Value::Null, go_selector),
            "",
        )),
        Ok(sel) => {
            if !sel.is_empty() && !sel.matches(labels_of(template)) {
                errs.push(FieldError::invalid(
                    tp.child("metadata").child("labels").as_str(),
                    labels_value(template),
                    "`selector` does not match template `labels`",
                ));
            }
            errs.extend(super::core_pod::validate_pod_template_spec(
                &super::core_pod::with_claim_volumes(template, spec),
                &tp,
                w,
            ));
        }
    }
    errs.extend(restart_always(template, &tp));
    if pod_spec(template)
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(FieldError::forbidden(
            tp.child("spec").child("activeDeadlineSeconds").as_str(),
            "activeDeadlineSeconds in StatefulSet is not Supported",
        ));
    }
    errs
}

/// kube's `ValidateVolumeClaimTemplates`: each claim template's spec as a
/// PersistentVolumeClaim's (`ValidatePersistentVolumeClaimSpec`), at
/// `spec.volumeClaimTemplates[i].spec`.
fn validate_volume_claim_templates(spec: &Value, p: &Path, w: Write<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let claim_write = Write {
        op: Operation::Create,
        subresource: "",
        old: None,
        allow_privileged: w.allow_privileged,
    };
    for (i, tpl) in list_of(spec, "volumeClaimTemplates").iter().enumerate() {
        // A missing spec is Go's zero PersistentVolumeClaimSpec.
        let claim_spec = tpl
            .get("spec")
            .filter(|s| s.is_object())
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let claim = json!({"spec": claim_spec});
        let at = p.index(i).child("spec");
        for mut e in super::core_other::validate("PersistentVolumeClaim", claim_write, &claim) {
            // The claim's errors are rooted at its `spec`.
            if let Some(rest) = e.field.strip_prefix("spec") {
                e.field = format!("{}{rest}", at.as_str());
                errs.push(e);
            }
        }
    }
    errs
}

/// kube's `IsDecremented` check of `status.collisionCount` in the
/// Deployment, StatefulSet and DaemonSet status updates: a removed count
/// reads as 0.
fn collision_count_decremented(status: &Value, old: &Value, p: &Path) -> Option<FieldError> {
    let count = |s: &Value| s.get("collisionCount").and_then(Value::as_i64);
    let old_count = count(old)?;
    let new_count = count(status);
    if new_count.is_some_and(|n| n >= old_count) {
        return None;
    }
    Some(FieldError::invalid(
        p.child("collisionCount").as_str(),
        new_count.unwrap_or(0),
        "cannot be decremented",
    ))
}

/// kube's `ValidateStatefulSetUpdate`: only some spec fields may change.
fn validate_stateful_set_update(spec: &Value, old: &Value) -> Vec<FieldError> {
    const MUTABLE: [&str; 6] = [
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    ];
    let strip = |v: &Value| -> Value {
        let mut m = v.as_object().cloned().unwrap_or_default();
        m.retain(|k, _| !MUTABLE.contains(&k.as_str()));
        semantic(&Value::Object(m))
    };
    if strip(spec) != strip(old) {
        return vec![FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        )];
    }
    Vec::new()
}

/// kube's `ValidateDaemonSetSpec` (with `ValidateDaemonSetUpdateStrategy`).
fn validate_daemon_set_spec(spec: &Value, p: &Path, w: Write<'_>) -> Vec<FieldError> {
    let sel_v = spec.get("selector").filter(|s| s.is_object());
    let mut errs = validate_label_selector(sel_v, false, &p.child("selector"));
    let template = spec.get("template").unwrap_or(&Value::Null);
    let tp = p.child("template");
    if let Ok(sel) = Selector::of(sel_v) {
        if !sel.matches(labels_of(template)) {
            errs.push(FieldError::invalid(
                tp.child("metadata").child("labels").as_str(),
                labels_value(template),
                "`selector` does not match template `labels`",
            ));
        }
        if sel_v.is_some() && sel.is_empty() {
            errs.push(FieldError::invalid(
                p.child("selector").as_str(),
                sel_v.map_or(Value::Null, go_selector),
                "empty selector is invalid for daemonset",
            ));
        }
    }
    errs.extend(super::core_pod::validate_pod_template_spec(
        template, &tp, w,
    ));
    errs.extend(restart_always(template, &tp));
    if pod_spec(template)
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(FieldError::forbidden(
            tp.child("spec").child("activeDeadlineSeconds").as_str(),
            "activeDeadlineSeconds in DaemonSet is not Supported",
        ));
    }
    errs.extend(nonnegative(
        int_of(spec, "minReadySeconds").unwrap_or(0),
        &p.child("minReadySeconds"),
    ));
    let us = spec.get("updateStrategy").unwrap_or(&Value::Null);
    let usp = p.child("updateStrategy");
    match str_of(us, "type") {
        "OnDelete" => {}
        "RollingUpdate" => match us.get("rollingUpdate").filter(|v| !v.is_null()) {
            None => errs.push(FieldError::required(
                usp.child("rollingUpdate").as_str(),
                "",
            )),
            Some(ru) => {
                let rp = usp.child("rollingUpdate");
                let (mu, ms) = (ru.get("maxUnavailable"), ru.get("maxSurge"));
                errs.extend(positive_int_or_percent(mu, &rp.child("maxUnavailable")));
                errs.extend(positive_int_or_percent(ms, &rp.child("maxSurge")));
                errs.extend(not_more_than_100_percent(mu, &rp.child("maxUnavailable")));
                errs.extend(not_more_than_100_percent(ms, &rp.child("maxSurge")));
                let has_u = int_or_percent_value(mu) != 0;
                let has_s = int_or_percent_value(ms) != 0;
                if has_u && has_s {
                    errs.push(FieldError::invalid(
                        rp.child("maxSurge").as_str(),
                        ms.cloned().unwrap_or(Value::Null),
                        "may not be set when maxUnavailable is non-zero",
                    ));
                } else if !has_u && !has_s {
                    errs.push(FieldError::required(
                        rp.child("maxUnavailable").as_str(),
                        "cannot be 0 when maxSurge is 0",
                    ));
                }
            }
        },
        _ => errs.push(FieldError::not_supported(
            usp.as_str(),
            strategy_value(us, &["maxUnavailable", "maxSurge"]),
            &["RollingUpdate", "OnDelete"],
        )),
    }
    if let Some(n) = int_of(spec, "revisionHistoryLimit") {
        errs.extend(nonnegative(n, &p.child("revisionHistoryLimit")));
    }
    errs
}

/// Nonnegative checks of `status.<f>` for each present field.
fn nonneg_fields(status: &Value, p: &Path, fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for f in fields {
        if let Some(n) = int_of(status, f) {
            errs.extend(nonnegative(n, &p.child(f)));
        }
    }
    errs
}

/// `<f> > <than>` as kube's `cannot be greater than` errors.
fn not_greater(status: &Value, p: &Path, f: &str, than: &str, msg: &str) -> Option<FieldError> {
    let v = int_of(status, f).unwrap_or(0);
    (v > int_of(status, than).unwrap_or(0))
        .then(|| FieldError::invalid(p.child(f).as_str(), v, msg))
}

/// The shared shape of the workloads' status rules: `counts` nonnegative,
/// each of `within_replicas` at most `replicas`, then
/// `availableReplicas` at most `readyReplicas` (worded `ready_msg`).
fn replica_counts_status(
    s: &Value,
    p: &Path,
    counts: &[&str],
    within_replicas: &[&str],
    ready_msg: &str,
) -> Vec<FieldError> {
    let mut errs = nonneg_fields(s, p, counts);
    for f in within_replicas {
        errs.extend(not_greater(
            s,
            p,
            f,
            "replicas",
            "cannot be greater than status.replicas",
        ));
    }
    errs.extend(not_greater(
        s,
        p,
        "availableReplicas",
        "readyReplicas",
        ready_msg,
    ));
    errs
}

/// kube's `ValidateDeploymentStatus`.
fn validate_deployment_status(s: &Value, p: &Path) -> Vec<FieldError> {
    replica_counts_status(
        s,
        p,
        &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "terminatingReplicas",
            "collisionCount",
        ],
        &["updatedReplicas", "readyReplicas", "availableReplicas"],
        "cannot be greater than readyReplicas",
    )
}

/// kube's `ValidateReplicaSetStatus`.
fn validate_replica_set_status(s: &Value, p: &Path) -> Vec<FieldError> {
    replica_counts_status(
        s,
        p,
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "terminatingReplicas",
            "observedGeneration",
        ],
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        "cannot be greater than readyReplicas",
    )
}

/// kube's `ValidateStatefulSetStatus`.
fn validate_stateful_set_status(s: &Value, p: &Path) -> Vec<FieldError> {
    replica_counts_status(
        s,
        p,
        &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "observedGeneration",
            "collisionCount",
        ],
        &[
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        "cannot be greater than status.readyReplicas",
    )
}

/// kube's `ValidateDaemonSetStatus`: every count nonnegative.
fn validate_daemon_set_status(s: &Value, p: &Path) -> Vec<FieldError> {
    nonneg_fields(
        s,
        p,
        &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        ],
    )
}
