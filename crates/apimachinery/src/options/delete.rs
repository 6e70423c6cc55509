//! `DeleteOptions`, from the JSON body and the query string together.
//!
//! The body wins for `gracePeriodSeconds`, `propagationPolicy` and
//! `orphanDependents`; `dryRun` values of both are combined; preconditions
//! come from the body only. Fields of the wrong JSON type are ignored.

use serde_json::{Map, Value};

use crate::field::FieldError;
use crate::options::query::Query;
use crate::options::write::dry_run;
use crate::options::{body_summary, invalid_options};
use crate::status::{ApiError, ApiResult};

/// `propagationPolicy`: how dependents are garbage-collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// Dependents first, then the owner.
    Foreground,
    /// The owner now, dependents in the background.
    Background,
    /// Dependents are orphaned.
    Orphan,
}

impl PropagationPolicy {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            PropagationPolicy::Foreground => "Foreground",
            PropagationPolicy::Background => "Background",
            PropagationPolicy::Orphan => "Orphan",
        }
    }

    /// Parse the wire value.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Foreground" => Some(PropagationPolicy::Foreground),
            "Background" => Some(PropagationPolicy::Background),
            "Orphan" => Some(PropagationPolicy::Orphan),
            _ => None,
        }
    }
}

/// `preconditions`: the delete fails with `409` unless they hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Preconditions {
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
}

/// Parsed and validated `DeleteOptions`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `preconditions`.
    pub preconditions: Preconditions,
    /// `propagationPolicy`.
    pub propagation_policy: Option<PropagationPolicy>,
    /// `orphanDependents` (deprecated in favour of `propagationPolicy`).
    pub orphan_dependents: Option<bool>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `ignoreStoreReadErrorWithClusterBreakingPotential`: delete an object
    /// whose stored value cannot be read (KEP-3926). Honoured only with the
    /// `AllowUnsafeMalformedObjectDeletion` gate; see
    /// [`DeleteOptions::validate_unsafe_delete`].
    pub ignore_store_read_error: bool,
}

impl DeleteOptions {
    /// Parse the body (empty or whitespace means none; otherwise a JSON
    /// object, `400` if not) and the query, then validate as kube's
    /// `ValidateDeleteOptions` (`422 DeleteOptions.meta.k8s.io "" is invalid`).
    pub fn from_request(q: &Query, body: &[u8]) -> ApiResult<DeleteOptions> {
        let body = decode_body(body)?;
        let str_at = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let mut dry_run_values: Vec<String> =
            q.all("dryRun").into_iter().map(str::to_string).collect();
        if let Some(a) = body.get("dryRun").and_then(Value::as_array) {
            dry_run_values.extend(a.iter().filter_map(|x| x.as_str().map(str::to_string)));
        }
        let grace_period_seconds = body
            .get("gracePeriodSeconds")
            .and_then(Value::as_i64)
            .or_else(|| q.get("gracePeriodSeconds").and_then(|s| s.parse().ok()));
        let preconditions = body.get("preconditions");
        let preconditions = Preconditions {
            uid: str_at(preconditions.and_then(|p| p.get("uid"))),
            resource_version: str_at(preconditions.and_then(|p| p.get("resourceVersion"))),
        };
        let policy = str_at(body.get("propagationPolicy"))
            .or_else(|| q.get("propagationPolicy").map(str::to_string));
        let orphan_dependents = body
            .get("orphanDependents")
            .and_then(Value::as_bool)
            .or_else(|| q.kube_bool("orphanDependents"));

        let ignore_store_read_error = body
            .get("ignoreStoreReadErrorWithClusterBreakingPotential")
            .and_then(Value::as_bool)
            .or_else(|| q.kube_bool("ignoreStoreReadErrorWithClusterBreakingPotential"))
            .unwrap_or(false);

        let mut errs = Vec::new();
        if let (Some(p), Some(_)) = (&policy, orphan_dependents) {
            errs.push(FieldError::invalid(
                "propagationPolicy",
                p.as_str(),
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        let propagation_policy = policy.as_deref().and_then(PropagationPolicy::parse);
        if let (Some(p), None) = (&policy, propagation_policy) {
            errs.push(FieldError::not_supported(
                "propagationPolicy",
                p.as_str(),
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
        let dry_run = dry_run(dry_run_values, &mut errs);
        if !errs.is_empty() {
            return Err(invalid_options("DeleteOptions", &errs));
        }
        Ok(DeleteOptions {
            grace_period_seconds,
            preconditions,
            propagation_policy,
            orphan_dependents,
            dry_run,
            ignore_store_read_error,
        })
    }

    /// kube's `ValidateIgnoreStoreReadError`, for a server with the
    /// `AllowUnsafeMalformedObjectDeletion` gate on (with it off the option
    /// is dropped before validation): the option goes alone, without
    /// `dryRun`, `propagationPolicy`, `orphanDependents`,
    /// `gracePeriodSeconds` or `preconditions`.
    pub fn validate_unsafe_delete(&self) -> ApiResult<()> {
        if !self.ignore_store_read_error {
            return Ok(());
        }
        const FIELD: &str = "ignoreStoreReadErrorWithClusterBreakingPotential";
        let conflicts = [
            (self.dry_run, ".dryRun"),
            (self.propagation_policy.is_some(), ".propagationPolicy"),
            (self.orphan_dependents.is_some(), ".orphanDependents"),
            (self.grace_period_seconds.is_some(), ".gracePeriodSeconds"),
            (
                self.preconditions.uid.is_some() || self.preconditions.resource_version.is_some(),
                ".preconditions",
            ),
        ];
        let errs: Vec<FieldError> = conflicts
            .iter()
            .filter(|(set, _)| *set)
            .map(|(_, other)| {
                FieldError::invalid(FIELD, true, &format!("cannot be set together with {other}"))
            })
            .collect();
        if errs.is_empty() {
            Ok(())
        } else {
            Err(invalid_options("DeleteOptions", &errs))
        }
    }
}

fn decode_body(body: &[u8]) -> ApiResult<Map<String, Value>> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type DeleteOptions): couldn't get version/kind; json parse error: {} ({})",
            e,
            body_summary(body)
        ))
    })?;
    match v {
        Value::Object(m) => Ok(m),
        _ => Err(ApiError::bad_request(
            "the object provided is unrecognized (must be of type DeleteOptions): body is not a JSON object",
        )),
    }
}

#[cfg(test)]
mod tests;
