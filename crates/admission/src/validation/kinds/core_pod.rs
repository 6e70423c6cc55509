//! Pod, PodTemplate, ReplicationController and the pod spec (`pkg/apis/core/validation`: `ValidatePod*`, `ValidatePodSpec`, `ValidatePodTemplateSpec`, containers, volumes, probes, ...).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::Write;

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let _ = (kind, w, obj);
    Vec::new()
}

/// kube's `ValidatePodTemplateSpec` at `path` (`spec.template`): the
/// template's metadata labels and annotations and its pod spec. Called by
/// the workloads (apps, batch, ReplicationController, PodTemplate).
pub(crate) fn validate_pod_template_spec(
    template: &Value,
    path: &super::Path,
    w: Write<'_>,
) -> Vec<FieldError> {
    let _ = (template, path, w);
    Vec::new()
}
