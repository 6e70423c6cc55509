//! Write options from the query string: `dryRun` and `fieldValidation`,
//! validated with kube's messages.

use keelson_api::FieldValidation;
use keelson_apimachinery::{ApiError, ApiResult, FieldError};
use serde_json::Value;

use crate::http_util::Query;
fn options_invalid(kind: &str, errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid("meta.k8s.io", kind, "", &errs)
}

pub(crate) fn dry_run(q: &Query, body_values: &[String], options_kind: &str) -> ApiResult<bool> {
    let mut values: Vec<String> = q.all("dryRun").iter().map(|s| s.to_string()).collect();
    values.extend(body_values.iter().cloned());
    if values.is_empty() {
        return Ok(false);
    }
    if values.iter().all(|v| v == "All") {
        return Ok(true);
    }
    Err(options_invalid(
        options_kind,
        vec![FieldError::not_supported(
            "dryRun",
            Value::from(values),
            &["All"],
        )],
    ))
}

pub(crate) fn field_validation(q: &Query, options_kind: &str) -> ApiResult<FieldValidation> {
    match q.get("fieldValidation").unwrap_or("") {
        "" | "Warn" => Ok(FieldValidation::Warn),
        "Strict" => Ok(FieldValidation::Strict),
        "Ignore" => Ok(FieldValidation::Ignore),
        other => Err(options_invalid(
            options_kind,
            vec![FieldError::not_supported(
                "fieldValidation",
                other,
                &["", "Ignore", "Strict", "Warn"],
            )],
        )),
    }
}
