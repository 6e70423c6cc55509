//! Downward-API selectors shared by env vars and downwardAPI volumes
//! (kube's `validateObjectFieldSelector`,
//! `validateContainerResourceFieldSelector`,
//! `validateContainerResourceDivisor`).

use keelson_apimachinery::names::is_qualified_name;
use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::super::util::str_of;
use super::super::Path;
use super::container_extra::{canonical, quantity};

/// The `fieldRef.fieldPath` values an env var may use, sorted as kube
/// lists them (`validEnvDownwardAPIFieldPathExpressions`).
pub(super) const ENV_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// The `fieldRef.fieldPath` values a downwardAPI volume item may use,
/// sorted as kube lists them (`validVolumeDownwardAPIFieldPathExpressions`).
#[allow(dead_code)] // for the downwardAPI volume rules
pub(super) const VOLUME_FIELD_PATHS: &[&str] = &[
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// The `resourceFieldRef.resource` values, sorted as kube lists them
/// (`validContainerResourceFieldPathExpressions`); `requests.hugepages-*`
/// and `limits.hugepages-*` are accepted besides.
const RESOURCES: &[&str] = &[
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// The prefixes of the hugepage resources a `resourceFieldRef` may name
/// (`validContainerResourceFieldPathPrefixesWithDownwardAPIHugePages`).
const HUGE_PAGE_PREFIXES: &[&str] = &["requests.hugepages-", "limits.hugepages-"];

/// The divisors of memory, ephemeral storage and hugepages.
const BYTE_DIVISORS: &[&str] = &[
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];

/// kube's `fieldpath.SplitMaybeSubscriptedPath`: `path['key']` as
/// `(path, key)`.
fn split_subscript(fp: &str) -> Option<(&str, &str)> {
    let (path, key) = fp.strip_suffix("']")?.split_once("['")?;
    (!path.is_empty()).then_some((path, key))
}

/// kube's `ConvertDownwardAPIFieldLabel`: the internal field path of
/// `label` in pod version `version`, or why there is none.
fn convert_field_label(version: &str, label: &str) -> Result<String, String> {
    if version != "v1" {
        return Err(format!("unsupported pod version: {version}"));
    }
    if let Some((path, _)) = split_subscript(label) {
        return match path {
            "metadata.annotations" | "metadata.labels" => Ok(label.to_string()),
            _ => Err(format!("field label does not support subscript: {label}")),
        };
    }
    match label {
        "metadata.annotations"
        | "metadata.labels"
        | "metadata.name"
        | "metadata.namespace"
        | "metadata.uid"
        | "spec.nodeName"
        | "spec.restartPolicy"
        | "spec.serviceAccountName"
        | "spec.schedulerName"
        | "status.phase"
        | "status.hostIP"
        | "status.hostIPs"
        | "status.podIP"
        | "status.podIPs" => Ok(label.to_string()),
        // old v1 clients' name of spec.nodeName
        "spec.host" => Ok("spec.nodeName".to_string()),
        _ => Err(format!("field label not supported: {label}")),
    }
}

/// kube's `validateObjectFieldSelector`: `apiVersion` and `fieldPath`
/// required, the path convertible, a subscript only on labels and
/// annotations (its key a qualified name), any other path one of
/// `expressions`.
pub(super) fn object_field_selector(
    sel: &Value,
    path: &Path,
    expressions: &[&str],
) -> Vec<FieldError> {
    let version = str_of(sel, "apiVersion");
    if version.is_empty() {
        return vec![FieldError::required(path.child("apiVersion").as_str(), "")];
    }
    let fp = str_of(sel, "fieldPath");
    let fpp = path.child("fieldPath");
    if fp.is_empty() {
        return vec![FieldError::required(fpp.as_str(), "")];
    }
    let internal = match convert_field_label(version, fp) {
        Ok(p) => p,
        Err(e) => {
            return vec![FieldError::invalid(
                fpp.as_str(),
                fp,
                &format!("error converting fieldPath: {e}"),
            )]
        }
    };
    match split_subscript(&internal) {
        Some((p, key)) => {
            let key = match p {
                "metadata.annotations" => key.to_lowercase(),
                "metadata.labels" => key.to_string(),
                _ => {
                    return vec![FieldError::invalid(
                        path.as_str(),
                        p,
                        "does not support subscript",
                    )]
                }
            };
            is_qualified_name(&key)
                .iter()
                .map(|m| FieldError::invalid(path.as_str(), key.as_str(), m))
                .collect()
        }
        None if !expressions.contains(&internal.as_str()) => {
            let mut supported = expressions.to_vec();
            supported.sort_unstable();
            vec![FieldError::not_supported(
                fpp.as_str(),
                internal.as_str(),
                &supported,
            )]
        }
        None => Vec::new(),
    }
}

/// kube's `validateContainerResourceFieldSelector`: `containerName`
/// required in a volume (`volume`), `resource` required and supported,
/// and the divisor one the resource allows.
pub(super) fn resource_field_selector(sel: &Value, path: &Path, volume: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let resource = str_of(sel, "resource");
    if volume && str_of(sel, "containerName").is_empty() {
        errs.push(FieldError::required(
            path.child("containerName").as_str(),
            "",
        ));
    } else if resource.is_empty() {
        errs.push(FieldError::required(path.child("resource").as_str(), ""));
    } else if !RESOURCES.contains(&resource)
        && !HUGE_PAGE_PREFIXES.iter().any(|p| resource.starts_with(p))
    {
        errs.push(FieldError::not_supported(
            path.child("resource").as_str(),
            resource,
            RESOURCES,
        ));
    }
    errs.extend(divisor(resource, sel.get("divisor"), path));
    errs
}

/// kube's `validateContainerResourceDivisor`: a set, non-zero divisor
/// (as `Quantity.String()` writes it) must be one `resource` allows; the
/// error's value is the resource.
fn divisor(resource: &str, div: Option<&Value>, path: &Path) -> Option<FieldError> {
    let div = div.filter(|v| !v.is_null())?;
    if quantity(div)?.nanos() == Some(0) {
        return None;
    }
    let text = canonical(div);
    let (allowed, kind): (&[&str], &str) = match resource {
        "limits.cpu" | "requests.cpu" => {
            if ["1m", "1"].contains(&text.as_str()) {
                return None;
            }
            return Some(FieldError::invalid(
                path.child("divisor").as_str(),
                resource,
                "only divisor's values 1m and 1 are supported with the cpu resource",
            ));
        }
        "limits.memory" | "requests.memory" => (BYTE_DIVISORS, "memory"),
        "limits.ephemeral-storage" | "requests.ephemeral-storage" => {
            (BYTE_DIVISORS, "local ephemeral storage")
        }
        r if HUGE_PAGE_PREFIXES.iter().any(|p| r.starts_with(p)) => (BYTE_DIVISORS, "hugepages"),
        _ => return None,
    };
    (!allowed.contains(&text.as_str())).then(|| {
        FieldError::invalid(
            path.child("divisor").as_str(),
            resource,
            &format!(
                "only divisor's values {} are supported with the {kind} resource",
                allowed.join(", ")
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_subscripts_as_kube() {
        assert_eq!(
            split_subscript("metadata.labels['app']"),
            Some(("metadata.labels", "app"))
        );
        assert_eq!(
            split_subscript("metadata.annotations['a[b]c']"),
            Some(("metadata.annotations", "a[b]c"))
        );
        assert_eq!(
            split_subscript("metadata.labels['']"),
            Some(("metadata.labels", ""))
        );
        assert_eq!(split_subscript("metadata.labels"), None);
        assert_eq!(split_subscript("['x']"), None);
    }

    #[test]
    fn converts_field_labels() {
        assert_eq!(
            convert_field_label("v1", "spec.host").as_deref(),
            Ok("spec.nodeName")
        );
        assert_eq!(
            convert_field_label("v2", "metadata.name"),
            Err("unsupported pod version: v2".to_string())
        );
        assert_eq!(
            convert_field_label("v1", "spec.nodeName['x']"),
            Err("field label does not support subscript: spec.nodeName['x']".to_string())
        );
    }
}
