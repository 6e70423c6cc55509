//! StorageClass (`pkg/apis/storage/validation`: `ValidateStorageClass*`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{immutable, obj_of, str_of};
use super::{Path, Write};

/// kube's `maxProvisionerParameterSize` and `maxProvisionerParameterLen`.
const MAX_PARAMETER_SIZE: usize = 256 * 1024;
const MAX_PARAMETER_LEN: usize = 512;

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "StorageClass" {
        return Vec::new();
    }
    let mut errs = validate_storage_class(obj);
    if let Some(old) = w.old() {
        errs.extend(validate_storage_class_update(obj, old));
    }
    errs
}

/// `ValidateStorageClass`.
fn validate_storage_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let prov = str_of(obj, "provisioner");
    if prov.is_empty() {
        errs.push(FieldError::required("provisioner", ""));
    } else {
        let lower = prov.to_lowercase();
        for m in keelson_apimachinery::names::is_qualified_name(&lower) {
            errs.push(FieldError::invalid("provisioner", lower.as_str(), &m));
        }
    }
    let params = obj_of(obj, "parameters");
    if params.is_some_and(|p| p.len() > MAX_PARAMETER_LEN) {
        errs.push(FieldError::too_long(
            "parameters",
            &format!("must have at most {MAX_PARAMETER_LEN} bytes"),
        ));
    } else {
        let mut total = 0usize;
        for (k, v) in params.into_iter().flatten() {
            if k.is_empty() {
                errs.push(FieldError::invalid(
                    "parameters",
                    "",
                    "field can not be empty.",
                ));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > MAX_PARAMETER_SIZE {
            errs.push(FieldError::too_long(
                "parameters",
                &format!("must have at most {MAX_PARAMETER_SIZE} bytes"),
            ));
        }
    }
    let reclaim = str_of(obj, "reclaimPolicy");
    if !reclaim.is_empty() && !["Delete", "Retain"].contains(&reclaim) {
        errs.push(FieldError::not_supported(
            "reclaimPolicy",
            reclaim,
            &["Delete", "Retain"],
        ));
    }
    const MODES: &[&str] = &["Immediate", "WaitForFirstConsumer"];
    match obj.get("volumeBindingMode").and_then(Value::as_str) {
        None => errs.push(FieldError::required("volumeBindingMode", "")),
        Some(m) if !MODES.contains(&m) => {
            errs.push(FieldError::not_supported("volumeBindingMode", m, MODES))
        }
        Some(_) => {}
    }
    errs
}

/// `ValidateStorageClassUpdate`: parameters, provisioner, reclaimPolicy
/// and volumeBindingMode are fixed.
fn validate_storage_class_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let params = |o: &Value| obj_of(o, "parameters").cloned().unwrap_or_default();
    if params(obj) != params(old) {
        errs.push(FieldError::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if str_of(obj, "provisioner") != str_of(old, "provisioner") {
        errs.push(FieldError::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    // A stored object from before defaulting reads as defaulted, as kube
    // decodes it.
    let reclaim = |o: &Value| match str_of(o, "reclaimPolicy") {
        "" => "Delete".to_string(),
        v => v.to_string(),
    };
    if reclaim(obj) != reclaim(old) {
        errs.push(FieldError::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    let mode = |o: &Value| {
        o.get("volumeBindingMode")
            .cloned()
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Value::String("Immediate".into()))
    };
    errs.extend(immutable(
        Some(&mode(obj)),
        Some(&mode(old)),
        &Path::new("volumeBindingMode"),
    ));
    errs
}
