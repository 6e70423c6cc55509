//! Lease and LeaseCandidate (`pkg/apis/coordination/validation`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{immutable, int_of, str_of};
use super::{Path, Write};

/// The one strategy kube defines (`validLeaseStrategies`).
const LEASE_STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let path = Path::new("spec");
    match kind {
        "Lease" => validate_lease_spec(spec, &path),
        "LeaseCandidate" => {
            let mut errs = validate_lease_candidate_spec(spec, &path);
            if let Some(old) = w.old() {
                // `ValidateLeaseCandidateSpecUpdate`.
                errs.extend(immutable(
                    spec.get("leaseName"),
                    old.get("spec").and_then(|s| s.get("leaseName")),
                    &path.child("leaseName"),
                ));
            }
            errs
        }
        _ => Vec::new(),
    }
}

/// `ValidateLeaseCandidateSpec`: versions are Go's strict semver (no
/// leading `v`), compared by precedence (build metadata ignored).
fn validate_lease_candidate_spec(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(spec, "leaseName").is_empty() {
        errs.push(FieldError::required(path.child("leaseName").as_str(), ""));
    }
    let zero = semver::Version::new(0, 0, 0);
    let emulation = str_of(spec, "emulationVersion");
    let mut ev = zero.clone();
    if !emulation.is_empty() {
        match semver::Version::parse(emulation) {
            Ok(v) => ev = v,
            Err(_) => errs.push(FieldError::invalid(
                path.child("emulationVersion").as_str(),
                emulation,
                "must be a valid semantic version",
            )),
        }
    }
    let binary = str_of(spec, "binaryVersion");
    let mut bv = zero.clone();
    if binary.is_empty() {
        errs.push(FieldError::required(
            path.child("binaryVersion").as_str(),
            "",
        ));
    } else {
        match semver::Version::parse(binary) {
            Ok(v) => bv = v,
            Err(_) => errs.push(FieldError::invalid(
                path.child("binaryVersion").as_str(),
                binary,
                "must be a valid semantic version",
            )),
        }
    }
    if !binary.is_empty()
        && !emulation.is_empty()
        && bv.cmp_precedence(&ev) == std::cmp::Ordering::Less
    {
        errs.push(FieldError::invalid(
            path.child("binaryVersion").as_str(),
            binary,
            "must be greater than or equal to `emulationVersion`",
        ));
    }
    let strategy = str_of(spec, "strategy");
    if strategy.is_empty() {
        errs.push(FieldError::required(path.child("strategy").as_str(), ""));
    } else {
        if strategy == LEASE_STRATEGIES[0] && ev.cmp_precedence(&zero) == std::cmp::Ordering::Equal
        {
            errs.push(FieldError::required(
                path.child("emulationVersion").as_str(),
                "must be specified when `strategy` is 'OldestEmulationVersion'",
            ));
        }
        errs.extend(validate_coordinated_lease_strategy(
            strategy,
            &path.child("strategy"),
        ));
    }
    errs
}

/// `ValidateCoordinatedLeaseStrategy`: a name without `/` must be one
/// kube defines, any other a qualified name. kube reports both at
/// `<path>.strategy` (a second `strategy` child of the field's path).
fn validate_coordinated_lease_strategy(strategy: &str, path: &Path) -> Vec<FieldError> {
    let at = path.child("strategy");
    if !strategy.contains('/') {
        if LEASE_STRATEGIES.contains(&strategy) {
            return Vec::new();
        }
        return vec![FieldError::not_supported(
            at.as_str(),
            strategy,
            LEASE_STRATEGIES,
        )];
    }
    keelson_apimachinery::names::is_qualified_name(strategy)
        .into_iter()
        .map(|m| FieldError::invalid(at.as_str(), strategy, &m))
        .collect()
}

/// `ValidateLeaseSpec`.
fn validate_lease_spec(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(d) = int_of(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
        errs.push(FieldError::invalid(
            path.child("leaseDurationSeconds").as_str(),
            d,
            "must be greater than 0",
        ));
    }
    if let Some(t) = int_of(spec, "leaseTransitions").filter(|t| *t < 0) {
        errs.push(FieldError::invalid(
            path.child("leaseTransitions").as_str(),
            t,
            "must be greater than or equal to 0",
        ));
    }
    let strategy = spec.get("strategy").and_then(Value::as_str);
    if let Some(s) = strategy {
        errs.extend(validate_coordinated_lease_strategy(
            s,
            &path.child("strategy"),
        ));
    }
    let preferred = spec
        .get("preferredHolder")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !preferred.is_empty() && strategy.unwrap_or("").is_empty() {
        errs.push(FieldError::forbidden(
            path.child("preferredHolder").as_str(),
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}
