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
    let ev = semantic_version(emulation, &path.child("emulationVersion"), &mut errs);
    let binary = str_of(spec, "binaryVersion");
    if binary.is_empty() {
        errs.push(FieldError::required(
            path.child("binaryVersion").as_str(),
            "",
        ));
    }
    let bv = semantic_version(binary, &path.child("binaryVersion"), &mut errs);
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

/// `value` parsed as a strict semantic version, `0.0.0` when empty; an
/// unparsable one is reported at `path` and also counts as `0.0.0`.
fn semantic_version(value: &str, path: &Path, errs: &mut Vec<FieldError>) -> semver::Version {
    if value.is_empty() {
        return semver::Version::new(0, 0, 0);
    }
    semver::Version::parse(value).unwrap_or_else(|_| {
        errs.push(FieldError::invalid(
            path.as_str(),
            value,
            "must be a valid semantic version",
        ));
        semver::Version::new(0, 0, 0)
    })
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
