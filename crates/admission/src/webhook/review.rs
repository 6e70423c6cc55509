//! The `AdmissionReview` sent to a webhook and the checks of its answer
//! (kube's `webhook/request` package).

use base64::Engine as _;
use keelson_api::{AdmissionRequest, Operation};
use serde_json::{json, Map, Value};

use super::hook::operation_name;

/// What one call is about: the request as the webhook is asked about it.
pub(crate) struct Invocation<'a> {
    pub req: &'a AdmissionRequest,
    /// `request.name` (the object's name; empty for a generateName create).
    pub name: &'a str,
    pub object: Option<&'a Value>,
}

/// The review version kube speaks that the webhook accepts first.
pub(crate) fn review_version(accepted: &[String]) -> Option<&'static str> {
    accepted.iter().find_map(|v| match v.as_str() {
        "v1" => Some("v1"),
        "v1beta1" => Some("v1beta1"),
        _ => None,
    })
}

fn version_of(api_version: &str) -> &str {
    api_version.rsplit('/').next().unwrap_or(api_version)
}

/// The `request` of an `AdmissionReview` (also the CEL `request`).
pub(crate) fn request_json(inv: &Invocation, uid: &str) -> Value {
    let req = inv.req;
    let version = version_of(&req.api_version);
    let (kind_group, kind_version) = req.kind_group_version(version);
    let kind = json!({"group": kind_group, "version": kind_version, "kind": req.kind});
    let resource = json!({"group": req.gr.group, "version": version, "resource": req.gr.resource});
    let mut m = Map::new();
    m.insert("uid".into(), uid.into());
    m.insert("kind".into(), kind.clone());
    m.insert("resource".into(), resource.clone());
    if !req.subresource.is_empty() {
        m.insert("subResource".into(), req.subresource.clone().into());
    }
    m.insert("requestKind".into(), kind);
    m.insert("requestResource".into(), resource);
    if !req.subresource.is_empty() {
        m.insert("requestSubResource".into(), req.subresource.clone().into());
    }
    if !inv.name.is_empty() {
        m.insert("name".into(), inv.name.into());
    }
    if !req.namespace.is_empty() {
        m.insert("namespace".into(), req.namespace.clone().into());
    }
    m.insert("operation".into(), operation_name(req.operation).into());
    m.insert(
        "userInfo".into(),
        req.user
            .as_ref()
            .and_then(|u| serde_json::to_value(u).ok())
            .unwrap_or_else(|| json!({})),
    );
    m.insert("object".into(), inv.object.cloned().unwrap_or(Value::Null));
    let old = req
        .old_object
        .as_ref()
        .filter(|_| req.operation != Operation::Create);
    m.insert("oldObject".into(), old.cloned().unwrap_or(Value::Null));
    m.insert("dryRun".into(), req.dry_run.into());
    m.insert("options".into(), req.options.clone().unwrap_or(Value::Null));
    Value::Object(m)
}

/// The whole review of version `version`.
pub(crate) fn review(version: &str, request: Value) -> Value {
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": request,
    })
}

/// A verified answer.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Answer {
    pub allowed: bool,
    /// The decoded JSON patch (mutating only).
    pub patch: Option<Vec<u8>>,
    /// `JSONPatch`, or what the webhook said.
    pub patch_type: String,
    /// `response.status`.
    pub status: Option<Value>,
    pub warnings: Vec<String>,
    /// `response.auditAnnotations`.
    pub audit_annotations: Vec<(String, String)>,
}

/// Decode the body into an `AdmissionReview` (kube's REST client decode):
/// the JSON, or its decoding error.
pub(crate) fn decode(body: &[u8]) -> Result<Value, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))?;
    let text = String::from_utf8_lossy(body);
    let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    if !v.is_object() {
        return Err(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            keelson_apimachinery::field::json_kind(&v)
        ));
    }
    if field("kind").is_empty() {
        return Err(format!("Object 'Kind' is missing in '{}'", text.trim_end()));
    }
    if field("apiVersion").is_empty() {
        return Err(format!(
            "Object 'apiVersion' is missing in '{}'",
            text.trim_end()
        ));
    }
    if field("kind") != "AdmissionReview"
        || !matches!(
            field("apiVersion").as_str(),
            "admission.k8s.io/v1" | "admission.k8s.io/v1beta1"
        )
    {
        let (group, version) = field("apiVersion")
            .split_once('/')
            .map(|(g, v)| (g.to_string(), v.to_string()))
            .unwrap_or_else(|| (String::new(), field("apiVersion")));
        let gv = if group.is_empty() {
            version
        } else {
            format!("{group}/{version}")
        };
        return Err(format!(
            "no kind {:?} is registered for version {gv:?}",
            field("kind")
        ));
    }
    Ok(v)
}

/// kube's `VerifyAdmissionResponse` for the review `version` sent with
/// `uid`; the error is the reason (`received invalid webhook response: `
/// is added by the caller).
pub(crate) fn verify(
    version: &str,
    uid: &str,
    mutating: bool,
    review: &Value,
) -> Result<Answer, String> {
    let Some(resp) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let raw_patch = resp
        .get("patch")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    let patch = raw_patch
        .map(|p| base64::engine::general_purpose::STANDARD.decode(p))
        .transpose()
        .map_err(|e| format!("illegal base64 data: {e}"))?
        .filter(|p| !p.is_empty());
    let patch_type = resp.get("patchType").filter(|t| !t.is_null());
    let mut answer = Answer {
        allowed: resp
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: resp.get("status").filter(|s| s.is_object()).cloned(),
        warnings: resp
            .get("warnings")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        audit_annotations: resp
            .get("auditAnnotations")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
        ..Answer::default()
    };
    if version == "v1" {
        let got = s(resp, "uid");
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
        let (av, kind) = (s(review, "apiVersion"), s(review, "kind"));
        if av != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            return Err(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {av}, Kind={kind}"
            ));
        }
        if mutating {
            if patch.is_some() && patch_type.is_none() {
                return Err("webhook returned response.patch but not response.patchType".into());
            }
            if patch.is_none() && patch_type.is_some() {
                return Err("webhook returned response.patchType but not response.patch".into());
            }
            if let Some(t) = patch_type {
                let t = t.as_str().unwrap_or("");
                if t.is_empty() {
                    return Err(format!(
                        "webhook returned invalid response.patchType of {t:?}"
                    ));
                }
                answer.patch_type = t.to_string();
            }
            answer.patch = patch;
        } else {
            if patch.is_some() {
                return Err("validating webhook may not return response.patch".into());
            }
            if patch_type.is_some() {
                return Err("validating webhook may not return response.patchType".into());
            }
        }
    } else if mutating && patch.is_some() {
        // v1beta1 never checked the patch type: JSONPatch is the only one.
        answer.patch = patch;
        answer.patch_type = "JSONPatch".into();
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(resp: Value) -> Value {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
    }

    #[test]
    fn v1_answers_are_checked_as_kube_checks_them() {
        let ok = verify(
            "v1",
            "u1",
            true,
            &answer(json!({"uid": "u1", "allowed": true})),
        )
        .unwrap();
        assert!(ok.allowed && ok.patch.is_none());
        assert_eq!(
            verify(
                "v1",
                "u1",
                true,
                &answer(json!({"uid": "u2", "allowed": true}))
            )
            .unwrap_err(),
            r#"expected response.uid="u1", got "u2""#
        );
        assert_eq!(
            verify(
                "v1",
                "u1",
                true,
                &json!({"apiVersion": "x/v1", "kind": "AdmissionReview"})
            )
            .unwrap_err(),
            "webhook response was absent"
        );
        let v1beta1 = json!({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": {"uid": "u1", "allowed": true}});
        assert_eq!(
            verify("v1", "u1", false, &v1beta1).unwrap_err(),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"
        );
        // v1beta1 checks neither uid nor kind.
        let loose = json!({"response": {"uid": "other", "allowed": true, "patch": "W10="}});
        let a = verify("v1beta1", "u1", true, &loose).unwrap();
        assert_eq!(a.patch_type, "JSONPatch");
        assert_eq!(a.patch.as_deref(), Some(&b"[]"[..]));
        let patch = base64::engine::general_purpose::STANDARD
            .encode(br#"[{"op":"add","path":"/a","value":1}]"#);
        assert_eq!(
            verify(
                "v1",
                "u1",
                true,
                &answer(json!({"uid": "u1", "allowed": true, "patch": patch}))
            )
            .unwrap_err(),
            "webhook returned response.patch but not response.patchType"
        );
        assert_eq!(
            verify(
                "v1",
                "u1",
                true,
                &answer(json!({"uid": "u1", "allowed": true, "patchType": "JSONPatch"}))
            )
            .unwrap_err(),
            "webhook returned response.patchType but not response.patch"
        );
        assert_eq!(
            verify(
                "v1",
                "u1",
                false,
                &answer(json!({"uid": "u1", "allowed": true, "patch": patch}))
            )
            .unwrap_err(),
            "validating webhook may not return response.patch"
        );
        let denied = verify(
            "v1",
            "u1",
            false,
            &answer(json!({"uid": "u1", "allowed": false, "status": {"code": 403, "message": "no"}, "warnings": ["w1"]})),
        )
        .unwrap();
        assert!(!denied.allowed);
        assert_eq!(denied.status.unwrap()["message"], "no");
        assert_eq!(denied.warnings, vec!["w1".to_string()]);
    }

    #[test]
    fn bodies_that_are_not_reviews() {
        assert!(decode(b"garbage")
            .unwrap_err()
            .starts_with("couldn't get version/kind; json parse error: "));
        assert_eq!(
            decode(b"{}").unwrap_err(),
            "Object 'Kind' is missing in '{}'"
        );
        assert_eq!(
            decode(br#"{"kind":"Pod","apiVersion":"v1"}"#).unwrap_err(),
            r#"no kind "Pod" is registered for version "v1""#
        );
        assert!(
            decode(br#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}"#).is_ok()
        );
    }

    #[test]
    fn review_versions_in_the_webhooks_order() {
        assert_eq!(
            review_version(&["v2".into(), "v1beta1".into(), "v1".into()]),
            Some("v1beta1")
        );
        assert_eq!(review_version(&["v2".into()]), None);
    }
}
