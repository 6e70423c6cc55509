//! The conversion webhook client: one `ConversionReview` per call (the
//! objects not yet in the desired version, sent together), POSTed as JSON
//! over HTTPS to `clientConfig.url` or to a Service's ready endpoint, and
//! the answer checked as kube-apiserver checks it (uid, result, object
//! count, `apiVersion`, kind, metadata: only labels and annotations may
//! change). Errors carry kube's wording.

use std::net::SocketAddr;
use std::time::Duration;

use keelson_api::StoreApi;
use keelson_apimachinery::field::FieldError;
use keelson_apimachinery::gofmt::go_type;
use keelson_apimachinery::names::{is_qualified_name, is_valid_label_value};
use keelson_apimachinery::{ApiError, StatusReason};
use keelson_registry::CustomResource;
use keelson_webhook_client::{self as webhook_client, ClientConfig, Target, TimeoutWording};
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// kube's default webhook timeout (also sent as `?timeout=30s`).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// kube's total size limit of `metadata.annotations`.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// A failed conversion, worded as kube-apiserver's converter words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// The webhook could not be called, or answered with a failure.
    #[error("conversion webhook for {gvk} failed: {reason}")]
    Failed {
        /// The converted objects' `group/version, Kind=Kind`.
        gvk: String,
        /// Why.
        reason: String,
    },
    /// The webhook answered with another number of objects.
    #[error("conversion webhook for {gvk} returned {got} objects, expected {expected}")]
    Count {
        /// The converted objects' `group/version, Kind=Kind`.
        gvk: String,
        /// Objects returned.
        got: usize,
        /// Objects sent.
        expected: usize,
    },
    /// A converted object is not acceptable.
    #[error("conversion webhook for {gvk} returned {what}: {reason}")]
    Invalid {
        /// The converted objects' `group/version, Kind=Kind`.
        gvk: String,
        /// Which object, as kube says it (`invalid object at index 0`).
        what: String,
        /// Why.
        reason: String,
    },
    /// `conversionReviewVersions` lists no version kube speaks.
    #[error("no supported conversion review versions")]
    NoReviewVersion,
}

impl From<ConversionError> for ApiError {
    /// kube answers a conversion error as an error that is not a Status:
    /// `500` without a reason, the error's text as the message.
    fn from(e: ConversionError) -> ApiError {
        ApiError::new(500, StatusReason::Unknown, e.to_string())
    }
}

/// `spec.conversion.webhook`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WebhookConversion {
    client_config: ClientConfig,
    conversion_review_versions: Vec<String>,
}

/// Clients are kept per CRD revision and resolved endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ClientKey {
    crd_uid: String,
    generation: i64,
    resolve: Option<(String, SocketAddr)>,
}

/// Calls conversion webhooks; holds one HTTPS client per CRD revision
/// (and resolved Service endpoint). Shared by a process's handlers.
#[derive(Default)]
pub struct WebhookConverter {
    clients: webhook_client::Clients<ClientKey>,
}

impl std::fmt::Debug for WebhookConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookConverter").finish_non_exhaustive()
    }
}

impl WebhookConverter {
    /// A converter with no clients yet.
    pub fn new() -> WebhookConverter {
        WebhookConverter::default()
    }

    /// Convert `objects` (custom objects of the CRD `crd` describes) to
    /// `desired` (`group/version`) through the CRD's webhook. Objects
    /// already in `desired` are not sent; the others go in one review and
    /// are replaced by their converted form, metadata restored but for
    /// labels and annotations. `store` resolves a Service reference to its
    /// ready endpoints.
    pub async fn convert(
        &self,
        store: &dyn StoreApi,
        crd: &CustomResource,
        objects: &mut [Value],
        desired: &str,
    ) -> Result<(), ConversionError> {
        let pending: Vec<usize> = (0..objects.len())
            .filter(|&i| str_at(&objects[i], "apiVersion") != desired)
            .collect();
        let Some(&first) = pending.first() else {
            return Ok(());
        };
        let gvk = format!(
            "{}, Kind={}",
            str_at(&objects[first], "apiVersion"),
            str_at(&objects[first], "kind")
        );
        let failed = |reason: String| ConversionError::Failed {
            gvk: gvk.clone(),
            reason,
        };
        let config: WebhookConversion = crd
            .webhook
            .clone()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| failed(format!("invalid webhook configuration: {e}")))?
            .unwrap_or_default();
        let review_version = config
            .conversion_review_versions
            .iter()
            .find(|v| *v == "v1" || *v == "v1beta1")
            .ok_or(ConversionError::NoReviewVersion)?
            .clone();
        let uid = uuid::Uuid::new_v4().to_string();
        let sent: Vec<Value> = pending.iter().map(|&i| objects[i].clone()).collect();
        let body = review_request(&review_version, &uid, desired, &sent);

        let (target, client) = self
            .target_and_client(store, crd, &config.client_config)
            .await
            .map_err(&failed)?;
        let answer = webhook_client::post(&client, &target, &body, TimeoutWording::ClientTimeout)
            .await
            .map_err(&failed)?;
        let converted = converted_objects(&review_version, &uid, answer).map_err(&failed)?;
        if converted.len() != sent.len() {
            return Err(ConversionError::Count {
                gvk,
                got: converted.len(),
                expected: sent.len(),
            });
        }
        let single = sent.len() == 1;
        for (n, (out, original)) in converted.into_iter().zip(&sent).enumerate() {
            let invalid = |what: String, reason: String| ConversionError::Invalid {
                gvk: gvk.clone(),
                what,
                reason,
            };
            let mut out = out;
            check_converted(desired, original, &out).map_err(|(at_index, reason)| {
                let what = match (single, at_index) {
                    (true, true) => "invalid object at index 0".to_string(),
                    (true, false) => "invalid object".to_string(),
                    // kube counts from 1 here (its index moved on).
                    (false, _) => format!("invalid converted object at index {}", n + 1),
                };
                invalid(what, reason)
            })?;
            restore_object_meta(original, &mut out).map_err(|reason| {
                let what = if single {
                    "invalid metadata".to_string()
                } else {
                    format!("invalid metadata in object at index {}", n + 1)
                };
                invalid(what, reason)
            })?;
            objects[pending[n]] = out;
        }
        Ok(())
    }

    /// Where to call and the client to call with.
    async fn target_and_client(
        &self,
        store: &dyn StoreApi,
        crd: &CustomResource,
        cc: &ClientConfig,
    ) -> Result<(Target, reqwest::Client), String> {
        let target = webhook_client::target(store, cc, TIMEOUT).await?;
        let key = ClientKey {
            crd_uid: crd.crd_uid.clone(),
            generation: crd.crd_generation,
            resolve: target.resolve.clone(),
        };
        // Clients of an older revision of this CRD are not used again.
        let client = self.clients.get_or_make(
            &key,
            |k| k.crd_uid == key.crd_uid && k.generation != key.generation,
            || {
                webhook_client::build_client(
                    cc.ca_bundle.as_deref(),
                    target.resolve.as_ref(),
                    TIMEOUT,
                )
            },
        )?;
        Ok((target, client))
    }
}

/// `obj[field]` as a string, `""` when absent.
fn str_at<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or("")
}

/// `metadata[field]` as a string.
fn meta_at<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The `ConversionReview` sent, in the first version kube speaks that the
/// CRD lists.
fn review_request(version: &str, uid: &str, desired: &str, objects: &[Value]) -> Value {
    let mut review = json!({
        "kind": "ConversionReview",
        "apiVersion": format!("apiextensions.k8s.io/{version}"),
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    });
    if version == "v1beta1" {
        // kube's v1beta1 request carries an empty response.
        review["response"] =
            json!({"uid": "", "convertedObjects": null, "result": {"metadata": {}}});
    }
    review
}

/// The converted objects of a review answer, checked as kube checks them
/// for the review version sent.
fn converted_objects(version: &str, uid: &str, answer: Value) -> Result<Vec<Value>, String> {
    let Value::Object(mut answer) = answer else {
        return Err("couldn't get version/kind; json parse error: not an object".into());
    };
    if version == "v1" {
        let (av, kind) = (
            answer
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or(""),
            answer.get("kind").and_then(Value::as_str).unwrap_or(""),
        );
        if av != "apiextensions.k8s.io/v1" || kind != "ConversionReview" {
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {av}, Kind={kind}"
            ));
        }
    }
    let response = match answer.remove("response") {
        Some(Value::Object(r)) => r,
        _ => return Err("no response provided".into()),
    };
    if version == "v1" {
        let got = response.get("uid").and_then(Value::as_str).unwrap_or("");
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    }
    let result = response.get("result");
    let status = result
        .and_then(|r| r.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if status != "Success" {
        let message = result
            .and_then(|r| r.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if !message.is_empty() {
            return Err(message.to_string());
        }
        return Err(format!(
            "response.result.status was '{status}', not 'Success'"
        ));
    }
    Ok(match response.get("convertedObjects") {
        Some(Value::Array(objects)) => objects.clone(),
        _ => Vec::new(),
    })
}

/// kube's checks of one converted object: apiVersion and kind (an
/// "at index" error: `Err((true, _))`), then name, namespace and uid.
fn check_converted(desired: &str, original: &Value, out: &Value) -> Result<(), (bool, String)> {
    if !out.is_object() {
        return Err((true, format!("Object 'Kind' is missing in '{out}'")));
    }
    let got = str_at(out, "apiVersion");
    if got != desired {
        return Err((
            true,
            format!("invalid groupVersion (expected {desired}, received {got})"),
        ));
    }
    let (want, got) = (str_at(original, "kind"), str_at(out, "kind"));
    if want != got {
        return Err((
            true,
            format!("invalid kind (expected {want}, received {got})"),
        ));
    }
    for (field, label) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (a, b) = (meta_at(original, field), meta_at(out, field));
        if a != b {
            return Err((false, format!("must have the same {label}: {a} != {b}")));
        }
    }
    Ok(())
}

/// kube's `restoreObjectMeta`: the converted object gets the original's
/// metadata, with the converted labels and annotations (validated when
/// they changed).
fn restore_object_meta(original: &Value, converted: &mut Value) -> Result<(), String> {
    let response_meta = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ))
        }
    };
    let mut meta: Map<String, Value> = match original.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in input object",
                go_type(other)
            ))
        }
        None => Map::new(),
    };
    for field in ["labels", "annotations"] {
        let response_field = match response_meta.get(field) {
            None | Some(Value::Null) => {
                meta.remove(field);
                continue;
            }
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ))
            }
        };
        let empty = Map::new();
        let original_field = match meta.get(field) {
            Some(Value::Object(m)) => m,
            None | Some(Value::Null) => &empty,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in original object",
                    go_type(other)
                ))
            }
        };
        let mut changed = original_field.len() != response_field.len();
        for (k, v) in response_field {
            if !v.is_string() {
                return Err(format!(
                    "metadata.{field}[{k}] must be a string, but is {} in converted object",
                    go_type(v)
                ));
            }
            if original_field.get(k) != Some(v) {
                changed = true;
            }
        }
        if changed {
            let errs = if field == "labels" {
                validate_labels(response_field)
            } else {
                validate_annotations(response_field)
            };
            if !errs.is_empty() {
                return Err(FieldError::aggregate(&errs));
            }
        }
        meta.insert(field.into(), Value::Object(response_field.clone()));
    }
    if let Some(m) = converted.as_object_mut() {
        m.insert("metadata".into(), Value::Object(meta));
    }
    Ok(())
}

/// kube's `ValidateLabels` at `metadata.labels`.
fn validate_labels(labels: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels {
        for msg in is_qualified_name(k) {
            errs.push(FieldError::invalid("metadata.labels", k.as_str(), &msg));
        }
        let value = v.as_str().unwrap_or("");
        for msg in is_valid_label_value(value) {
            errs.push(FieldError::invalid("metadata.labels", value, &msg));
        }
    }
    errs
}

/// kube's `ValidateAnnotations`, at the path kube's converter gives it
/// (`metadata.annotation`).
fn validate_annotations(annotations: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut size = 0usize;
    for (k, v) in annotations {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid("metadata.annotation", k.as_str(), &msg));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            "metadata.annotation",
            &format!("may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(av: &str, labels: Value) -> Value {
        json!({"apiVersion": av, "kind": "Foo",
               "metadata": {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5",
                            "labels": labels},
               "spec": {"size": "3"}})
    }

    #[test]
    fn review_versions_and_answers() {
        let r = review_request("v1", "id", "g/v2", &[obj("g/v1", json!({}))]);
        assert_eq!(r["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(r["request"]["desiredAPIVersion"], "g/v2");
        assert!(r.get("response").is_none());
        let ok = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                        "response": {"uid": "id", "result": {"status": "Success"}, "convertedObjects": [{}]}});
        assert_eq!(converted_objects("v1", "id", ok.clone()).unwrap().len(), 1);
        assert_eq!(
            converted_objects("v1", "other", ok).unwrap_err(),
            "expected response.uid=\"other\", got \"id\""
        );
        let failed = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                            "response": {"uid": "id", "result": {"status": "Failure"}}});
        assert_eq!(
            converted_objects("v1", "id", failed).unwrap_err(),
            "response.result.status was 'Failure', not 'Success'"
        );
        // v1beta1 checks neither the type nor the uid.
        let beta = json!({"response": {"uid": "x", "result": {"status": "Success"}, "convertedObjects": []}});
        assert!(converted_objects("v1beta1", "id", beta).is_ok());
    }

    #[test]
    fn converted_objects_keep_metadata_but_labels_and_annotations() {
        let original = obj("g/v1", json!({"a": "1"}));
        let mut out = obj("g/v2", json!({"a": "2", "b": "3"}));
        out["metadata"]["resourceVersion"] = json!("999");
        assert!(check_converted("g/v2", &original, &out).is_ok());
        restore_object_meta(&original, &mut out).unwrap();
        assert_eq!(out["metadata"]["resourceVersion"], "5");
        assert_eq!(out["metadata"]["labels"], json!({"a": "2", "b": "3"}));

        let mut renamed = obj("g/v2", json!({}));
        renamed["metadata"]["name"] = json!("b");
        assert_eq!(
            check_converted("g/v2", &original, &renamed).unwrap_err(),
            (false, "must have the same name: a != b".to_string())
        );
        assert_eq!(
            check_converted("g/v2", &original, &obj("g/v3", json!({}))).unwrap_err(),
            (
                true,
                "invalid groupVersion (expected g/v2, received g/v3)".to_string()
            )
        );
        let mut bad = obj("g/v2", json!({"a": 1}));
        assert_eq!(
            restore_object_meta(&original, &mut bad).unwrap_err(),
            "metadata.labels[a] must be a string, but is int64 in converted object"
        );
        let mut bad = obj("g/v2", json!({"-x": "1"}));
        assert!(restore_object_meta(&original, &mut bad)
            .unwrap_err()
            .starts_with("metadata.labels: Invalid value: \"-x\""));
    }

    #[test]
    fn errors_are_kubes_500() {
        let e: ApiError = ConversionError::Failed {
            gvk: "g/v1, Kind=Foo".into(),
            reason: "x".into(),
        }
        .into();
        assert_eq!(e.code, 500);
        assert_eq!(e.message, "conversion webhook for g/v1, Kind=Foo failed: x");
        assert_eq!(
            webhook_client::with_timeout("https://h:1/c", TIMEOUT),
            "https://h:1/c?timeout=30s"
        );
    }
}
