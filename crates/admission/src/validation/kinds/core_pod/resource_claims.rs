//! Dynamic resource allocation in the pod spec: the pod's own
//! `resourceClaims` (kube's `validatePodResourceClaims`) and the
//! `resources.claims` references of containers and of the pod-level
//! `resources` (`validateResourceClaimNames`).

use std::collections::BTreeSet;

use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::{Map, Value};

use super::super::util::{dns1123_label, dns1123_subdomain, duplicate, list_of, str_of};
use super::super::Path;

/// kube's `gatherPodResourceClaimNames`: every non-empty
/// `spec.resourceClaims[].name`, valid or not, sorted (as `sets.List`
/// lists them in the `Not found` detail).
pub(crate) fn pod_claim_names(spec: &Value) -> Vec<String> {
    list_of(spec, "resourceClaims")
        .iter()
        .map(|c| str_of(c, "name"))
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// `obj[key]` when set to a string (a non-nil `*string`).
fn set_str<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// A `spec.resourceClaims` entry as kube prints the internal
/// `core.PodResourceClaim` in an error: 1.34's `json.Marshal` of a struct
/// without JSON tags (Go field names, declaration order, nil pointers as
/// `null`).
fn go_claim(c: &Value) -> Value {
    let mut m = Map::new();
    m.insert("Name".into(), Value::String(str_of(c, "name").to_string()));
    for (json, go) in [
        ("resourceClaimName", "ResourceClaimName"),
        ("resourceClaimTemplateName", "ResourceClaimTemplateName"),
    ] {
        let v = set_str(c, json).map_or(Value::Null, |s| Value::String(s.to_string()));
        m.insert(go.into(), v);
    }
    Value::Object(m)
}

/// kube's `validatePodResourceClaims` of `spec.resourceClaims` at `path`:
/// names (required, unique, DNS labels), exactly one of
/// `resourceClaimName` and `resourceClaimTemplateName`, both DNS
/// subdomains.
pub(super) fn pod_resource_claims(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in list_of(spec, "resourceClaims").iter().enumerate() {
        let ip = path.index(i);
        let np = ip.child("name");
        let name = str_of(c, "name");
        if name.is_empty() {
            errs.push(FieldError::required(np.as_str(), ""));
        } else if seen.contains(&name) {
            errs.push(duplicate(&np, name));
        } else {
            errs.extend(dns1123_label(name, &np));
            seen.push(name);
        }
        let claim = set_str(c, "resourceClaimName");
        let template = set_str(c, "resourceClaimTemplateName");
        match (claim, template) {
            (Some(_), Some(_)) => errs.push(FieldError::invalid(
                ip.as_str(),
                go_claim(c),
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
            )),
            (None, None) => errs.push(FieldError::invalid(
                ip.as_str(),
                go_claim(c),
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )),
            _ => {}
        }
        if let Some(n) = claim {
            errs.extend(dns1123_subdomain(n, &ip.child("resourceClaimName")));
        }
        if let Some(n) = template {
            errs.extend(dns1123_subdomain(n, &ip.child("resourceClaimTemplateName")));
        }
    }
    errs
}

/// kube's `validateResourceClaimNames` of a `resources.claims` list at
/// `path`: each entry names a pod claim (`Not found` listing the pod's
/// claims), at most once, or once per `request` (a DNS label); a whole
/// claim after one of its requests is a duplicate of the claim.
pub(super) fn claim_refs(claims: &[Value], pod_claims: &[String], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // The keys seen: `name` for a whole claim, `name/request` for a request.
    let mut keys: Vec<String> = Vec::new();
    for (i, c) in claims.iter().enumerate() {
        let ip = path.index(i);
        let name = str_of(c, "name");
        if name.is_empty() {
            errs.push(FieldError::required(ip.as_str(), ""));
            continue;
        }
        if keys.iter().any(|k| k == name) {
            errs.push(duplicate(&ip, name));
        } else {
            let request = str_of(c, "request");
            let mut key = name.to_string();
            if !request.is_empty() {
                errs.extend(dns1123_label(request, &ip.child("request")));
                key = format!("{name}/{request}");
            }
            if keys.contains(&key) {
                errs.push(duplicate(&ip, key.as_str()));
            } else if request.is_empty() {
                let prefix = format!("{name}/");
                for _ in keys.iter().filter(|k| k.starts_with(&prefix)) {
                    errs.push(duplicate(&ip, name));
                }
            }
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        if !pod_claims.iter().any(|n| n == name) {
            let detail = if pod_claims.is_empty() {
                "must be one of the names in pod.spec.resourceClaims which is empty".to_string()
            } else {
                format!(
                    "must be one of the names in pod.spec.resourceClaims: {}",
                    pod_claims.join(", ")
                )
            };
            errs.push(FieldError {
                kind: FieldErrorKind::NotFound,
                field: ip.as_str().to_string(),
                value: Some(Value::String(name.to_string())),
                detail,
            });
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strings(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn claim_references() {
        let p = Path::new("c");
        let pod = vec!["a".to_string(), "b".to_string()];
        let claims = [
            json!({"name": "a", "request": "x"}),
            json!({"name": "a", "request": "x"}),
            json!({"name": "a"}),
            json!({"name": "a"}),
            json!({"name": ""}),
            json!({"name": "z", "request": "Bad"}),
        ];
        let errs = strings(&claim_refs(&claims, &pod, &p));
        assert_eq!(errs[0], r#"c[1]: Duplicate value: "a/x""#);
        assert_eq!(errs[1], r#"c[2]: Duplicate value: "a""#);
        assert_eq!(errs[2], r#"c[3]: Duplicate value: "a""#);
        assert_eq!(errs[3], "c[4]: Required value");
        assert!(errs[4].starts_with(r#"c[5].request: Invalid value: "Bad": "#));
        assert_eq!(
            errs[5],
            r#"c[5]: Not found: "z": must be one of the names in pod.spec.resourceClaims: a, b"#
        );
        assert_eq!(errs.len(), 6);
        assert_eq!(
            strings(&claim_refs(&[json!({"name": "a"})], &[], &p)),
            [
                r#"c[0]: Not found: "a": must be one of the names in pod.spec.resourceClaims which is empty"#
            ]
        );
    }

    #[test]
    fn pod_claims_print_the_internal_struct() {
        let spec = json!({"resourceClaims": [{"name": "gpu"}]});
        assert_eq!(
            strings(&pod_resource_claims(
                &spec,
                &Path::new("spec.resourceClaims")
            )),
            [
                r#"spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":null,"ResourceClaimTemplateName":null}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"#
            ]
        );
    }
}
