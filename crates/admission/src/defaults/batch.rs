//! `batch/v1` defaults (`k8s.io/kubernetes/pkg/apis/batch/v1/defaults.go`).
//! Job pod templates get no `restartPolicy` default.

use serde_json::Value;

use super::{object_at, or_set, or_set_str, pod};

/// Job: completions/parallelism, backoff, completion mode, suspend and pod
/// replacement.
pub(super) fn job(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        job_spec(spec);
    }
    pod::template_at(obj, &["spec", "template"], false);
}

fn job_spec(spec: &mut serde_json::Map<String, Value>) {
    let unset = |v: Option<&Value>| v.is_none_or(Value::is_null);
    if unset(spec.get("completions")) && unset(spec.get("parallelism")) {
        spec.insert("completions".into(), 1.into());
    }
    or_set(spec, "parallelism", 1);
    if unset(spec.get("backoffLimitPerIndex")) {
        or_set(spec, "backoffLimit", 6);
    } else {
        or_set(spec, "backoffLimit", i32::MAX);
    }
    or_set_str(spec, "completionMode", "NonIndexed");
    or_set(spec, "suspend", false);
    if unset(spec.get("podFailurePolicy")) {
        or_set_str(spec, "podReplacementPolicy", "TerminatingOrFailed");
    } else {
        or_set_str(spec, "podReplacementPolicy", "Failed");
    }
    or_set(spec, "manualSelector", false);
}

/// CronJob: concurrency, suspend and history limits; the job template's
/// spec is not a Job, so only its pod template is defaulted.
pub(super) fn cron_job(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        or_set_str(spec, "concurrencyPolicy", "Allow");
        or_set(spec, "suspend", false);
        or_set(spec, "successfulJobsHistoryLimit", 3);
        or_set(spec, "failedJobsHistoryLimit", 1);
    }
    pod::template_at(obj, &["spec", "jobTemplate", "spec", "template"], false);
}
