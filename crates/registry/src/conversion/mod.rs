//! Conversion between the versions of a built-in resource that kube serves
//! at several versions, storing one of them (kube's `pkg/apis/*/v*/conversion.go`
//! for the resources that need more than an `apiVersion` rewrite).
//!
//! In Kubernetes 1.34 the only built-in resource served by default at two
//! versions is `autoscaling` `horizontalpodautoscalers` (`v2`, stored, and
//! `v1`; see [`hpa`]). The beta versions `--runtime-config` enables are the
//! others: `storage.k8s.io/v1beta1` VolumeAttributesClasses and
//! `networking.k8s.io/v1beta1` IPAddresses and ServiceCIDRs have `v1`'s
//! schema, as has `resource.k8s.io/v1beta2`; `resource.k8s.io/v1beta1`
//! differs in two structs ([`dra`]). Objects are stored in the storage
//! version ([`storage_version`], `v1` for all of these); a request at
//! another version has its body converted to the storage version before
//! the store and every object read converted to the version asked for
//! ([`convert`]).
//!
//! The functions work on JSON values and know nothing of HTTP or storage.

pub mod dra;
mod hpa;

use serde_json::Value;

/// Why an object could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// No conversion between these versions of the kind.
    #[error("no conversion for {group}, Kind={kind} from {from} to {to}")]
    Unsupported {
        /// API group.
        group: String,
        /// Kind.
        kind: String,
        /// Source version.
        from: String,
        /// Target version.
        to: String,
    },
}

/// The built-in resources stored at one version and served at others:
/// (group, resource, storage version, other served versions).
const MULTI_VERSION: &[(&str, &str, &str, &[&str])] = &[
    ("autoscaling", "horizontalpodautoscalers", "v2", &["v1"]),
    (
        "storage.k8s.io",
        "volumeattributesclasses",
        "v1",
        &["v1beta1"],
    ),
    ("networking.k8s.io", "ipaddresses", "v1", &["v1beta1"]),
    ("networking.k8s.io", "servicecidrs", "v1", &["v1beta1"]),
    ("resource.k8s.io", "deviceclasses", "v1", DRA_BETAS),
    ("resource.k8s.io", "resourceclaims", "v1", DRA_BETAS),
    ("resource.k8s.io", "resourceclaimtemplates", "v1", DRA_BETAS),
    ("resource.k8s.io", "resourceslices", "v1", DRA_BETAS),
];

/// The beta versions of the `resource.k8s.io` kinds.
const DRA_BETAS: &[&str] = &["v1beta2", "v1beta1"];

/// Kinds whose other versions have the storage version's schema: their
/// conversion is the `apiVersion` (group, kind, versions).
const SAME_SCHEMA: &[(&str, &str, &[&str])] = &[
    (
        "storage.k8s.io",
        "VolumeAttributesClass",
        &["v1", "v1beta1"],
    ),
    ("networking.k8s.io", "IPAddress", &["v1", "v1beta1"]),
    ("networking.k8s.io", "ServiceCIDR", &["v1", "v1beta1"]),
    (
        "resource.k8s.io",
        "DeviceClass",
        &["v1", "v1beta2", "v1beta1"],
    ),
    ("resource.k8s.io", "ResourceClaim", &["v1", "v1beta2"]),
    (
        "resource.k8s.io",
        "ResourceClaimTemplate",
        &["v1", "v1beta2"],
    ),
    ("resource.k8s.io", "ResourceSlice", &["v1", "v1beta2"]),
];

/// The `resource.k8s.io` kinds whose `v1beta1` differs from `v1`.
const DRA_RESHAPED: &[&str] = &["ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"];

fn same_schema(group: &str, kind: &str, from: &str, to: &str) -> bool {
    SAME_SCHEMA
        .iter()
        .any(|(g, k, vs)| *g == group && *k == kind && vs.contains(&from) && vs.contains(&to))
}

/// The storage version of a built-in resource served at several versions
/// (`v2` for `autoscaling`/`horizontalpodautoscalers`), `None` for every
/// other resource (stored as written).
pub fn storage_version(group: &str, resource: &str) -> Option<&'static str> {
    MULTI_VERSION
        .iter()
        .find(|(g, r, _, _)| *g == group && *r == resource)
        .map(|(_, _, s, _)| *s)
}

/// Whether a request to `group`/`version`/`resource` is served by
/// converting from another stored version.
pub fn needs_conversion(group: &str, version: &str, resource: &str) -> bool {
    storage_version(group, resource).is_some_and(|s| s != version)
}

/// Convert `object` (with `apiVersion` and `kind`) to `group/to_version`
/// in place. An object already at that version, or of a kind without
/// conversions, is left as it is (only its `apiVersion` set when the group
/// matches and the kind has no conversion).
pub fn convert(object: &mut Value, to_version: &str) -> Result<(), ConversionError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let (group, from) = api_version.split_once('/').unwrap_or(("", &api_version));
    if from == to_version || from.is_empty() {
        return Ok(());
    }
    let unsupported = || ConversionError::Unsupported {
        group: group.to_string(),
        kind: kind.clone(),
        from: from.to_string(),
        to: to_version.to_string(),
    };
    let dra = group == "resource.k8s.io" && DRA_RESHAPED.contains(&kind.as_str());
    match (group, kind.as_str(), from, to_version) {
        ("autoscaling", "HorizontalPodAutoscaler", "v1", "v2") => hpa::v1_to_v2(object),
        ("autoscaling", "HorizontalPodAutoscaler", "v2", "v1") => hpa::v2_to_v1(object),
        (g, k, f, t) if same_schema(g, k, f, t) => {}
        (_, k, "v1beta1", "v1" | "v1beta2") if dra => dra::v1beta1_to_v1(k, object),
        (_, k, "v1" | "v1beta2", "v1beta1") if dra => dra::v1_to_v1beta1(k, object),
        _ => return Err(unsupported()),
    }
    if let Some(m) = object.as_object_mut() {
        m.insert(
            "apiVersion".into(),
            Value::from(format!("{group}/{to_version}")),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests;
