//! `pods/binding` and `bindings` (POST a `v1` Binding): kube-apiserver's
//! `BindingREST`, the scheduler's write. It sets `spec.nodeName` of a pod
//! not yet bound, merges the Binding's annotations into the pod's, and
//! sets the `PodScheduled` condition — one compare-and-swap on the pod,
//! honouring the Binding's `uid`/`resourceVersion` as preconditions.
//! Failures are kube's: `409 Conflict` on `pods/binding` (already
//! assigned, being deleted, scheduling gates), `404` for a missing pod, a
//! plain `500` for an invalid target. The answer is a `201` Success Status.

use bytes::Bytes;
use keelson_api::{AdmitPhase, UpdateOptions as StoreUpdateOptions};
use keelson_apimachinery::meta::{meta_str, now_rfc3339};
use keelson_apimachinery::options::CreateOptions;
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource};
use serde_json::{json, Value};

use super::eviction::status_object;
use super::{Ctx, Reply};

/// How often a binding is retried when a concurrent write moved the pod
/// (kube's `GuaranteedUpdate` retries without bound).
const RETRIES: usize = 10;

/// kube's `UpdatePodCondition`: add the condition or replace the one of
/// its type; `lastTransitionTime` is now unless the status is unchanged.
pub(crate) fn update_pod_condition(pod: &mut Value, mut cond: Value) {
    if !pod.get("status").is_some_and(Value::is_object) {
        pod["status"] = json!({});
    }
    if !pod["status"].get("conditions").is_some_and(Value::is_array) {
        pod["status"]["conditions"] = json!([]);
    }
    cond["lastTransitionTime"] = json!(now_rfc3339());
    let Some(conds) = pod["status"]["conditions"].as_array_mut() else {
        return;
    };
    let ty = cond.get("type").cloned();
    match conds.iter_mut().find(|c| c.get("type") == ty.as_ref()) {
        Some(old) => {
            if old.get("status") == cond.get("status") {
                cond["lastTransitionTime"] = old
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(Value::Null);
            }
            *old = cond;
        }
        None => conds.push(cond),
    }
}

fn decode_binding(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Value> {
    super::object::decode_typed_body(cx, body, "Binding", &["v1"])
}

/// kube's `ValidatePodBinding`.
fn validate(b: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let target = |f: &str| {
        b.pointer(&format!("/target/{}", f))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let kind = target("kind");
    if !kind.is_empty() && kind != "Node" {
        errs.push(FieldError::not_supported(
            "target.kind",
            kind.as_str(),
            &["Node", "<empty>"],
        ));
    }
    if target("name").is_empty() {
        errs.push(FieldError::required("target.name", ""));
    }
    errs
}

/// kube's `ValidatePodBinding`, answered as kube's plain aggregate `500`.
fn check(binding: &Value) -> ApiResult<()> {
    let errs = validate(binding);
    if errs.is_empty() {
        return Ok(());
    }
    Err(ApiError::new(500, "", FieldError::aggregate(&errs)))
}

/// `POST .../pods/{name}/binding`, or `POST .../bindings` (the name from
/// the body).
pub(crate) async fn create(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let opts = CreateOptions::from_query(cx.query)?;
    let binding = decode_binding(cx, body)?;
    // kube's create handler runs mutating admission on the Binding
    // (webhooks and policies matching `pods/binding` or `bindings`), then
    // the registry checks the name and validates it, then validating
    // admission; the pod is bound as admitted.
    let kind = super::write::SubresourceKind {
        api_version: "v1",
        kind: "Binding",
    };
    let wopts = super::write::WriteOpts {
        fv: opts.field_validation,
        dry: opts.dry_run,
    };
    let admit = |binding: Value, phase: AdmitPhase| {
        super::write::admit_subresource_phase(
            cx,
            kind,
            keelson_api::Operation::Create,
            binding,
            None,
            wopts,
            phase,
        )
    };
    let (binding, mut warnings) = admit(binding, AdmitPhase::Mutating).await?;
    let name = if cx.ri.subresource.is_empty() {
        meta_str(&binding, "name").to_string()
    } else {
        cx.ri.name.clone()
    };
    let before_validation = |e: ApiError| e.with_warnings(warnings.clone());
    if meta_str(&binding, "name") != name {
        return Err(before_validation(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        )));
    }
    check(&binding).map_err(before_validation)?;
    let (binding, more) = admit(binding, AdmitPhase::Validating)
        .await
        .map_err(before_validation)?;
    warnings.extend(more);
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let pods = GroupResource::new("", "pods");
    let conflict =
        |msg: String| ApiError::conflict(&GroupResource::new("", "pods/binding"), &name, &msg);
    let key = keelson_api::ObjectKey::new(pods.clone(), &cx.ri.namespace, &name);
    for attempt in 1..=RETRIES {
        let mut pod = cx.b.store.get(&key).await?;
        let (uid, rv) = (
            meta_str(&binding, "uid"),
            meta_str(&binding, "resourceVersion"),
        );
        if !uid.is_empty() && uid != meta_str(&pod, "uid") {
            return Err(ApiError::conflict(
                &pods,
                &name,
                &format!(
                    "Precondition failed: UID in precondition: {}, UID in object meta: {}",
                    uid,
                    meta_str(&pod, "uid")
                ),
            ));
        }
        if !rv.is_empty() && rv != meta_str(&pod, "resourceVersion") {
            return Err(ApiError::conflict(&pods, &name, &format!(
                "Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object meta: {}",
                rv,
                meta_str(&pod, "resourceVersion")
            )));
        }
        if !meta_str(&pod, "deletionTimestamp").is_empty() {
            return Err(conflict(format!(
                "pod {} is being deleted, cannot be assigned to a host",
                name
            )));
        }
        let bound = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !bound.is_empty() {
            return Err(conflict(format!(
                "pod {} is already assigned to node {:?}",
                name, bound
            )));
        }
        if pod
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty())
        {
            return Err(conflict(format!(
                "pod {} has non-empty .spec.schedulingGates",
                name
            )));
        }
        pod["spec"]["nodeName"] = json!(node);
        if let Some(extra) = binding
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .filter(|a| !a.is_empty())
        {
            if !pod["metadata"]
                .get("annotations")
                .is_some_and(Value::is_object)
            {
                pod["metadata"]["annotations"] = json!({});
            }
            for (k, v) in extra {
                pod["metadata"]["annotations"][k] = v.clone();
            }
        }
        update_pod_condition(
            &mut pod,
            json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null}),
        );
        let stored =
            cx.b.store
                .update(
                    &key,
                    pod,
                    StoreUpdateOptions {
                        dry_run: opts.dry_run,
                        ..Default::default()
                    },
                )
                .await;
        match stored {
            Ok(_) => {
                return Ok(Reply {
                    warnings,
                    ..status_object(201, None)
                })
            }
            Err(e) if e.is_conflict() && attempt < RETRIES => {
                // The store reads durable revisions only.
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
        }
    }
    Err(ApiError::internal("too many conflicts binding the pod"))
}
