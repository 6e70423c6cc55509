//! kube's webhook dispatchers: which webhooks a request calls
//! (`ShouldCallHook`: rules, selectors, match conditions), the mutating
//! chain in order with reinvocation, and the validating webhooks in
//! parallel.

use crate::audit::Annotations;
use std::collections::HashSet;
use std::sync::Arc;

use keelson_api::{AdmissionRequest, Operation, StoreApi};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey};
use keelson_cel::expr::{Activation, Outcome};
use serde_json::Value;

use super::call::{self, CallError};
use super::hook::{Attrs, Hook, HookKey};
use super::review::{self, Invocation};
use super::Callers;
use super::Redecode;

/// The request's name as webhooks see it (the object's on a create).
fn request_name<'a>(req: &'a AdmissionRequest, object: Option<&'a Value>) -> &'a str {
    if !req.name.is_empty() {
        return &req.name;
    }
    object
        .and_then(|o| o.get("metadata"))
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The namespace's labels for the namespace selector, read at most once.
struct NamespaceLabels<'a> {
    store: &'a Arc<dyn StoreApi>,
    read: Option<Option<Value>>,
}

impl NamespaceLabels<'_> {
    /// kube's `GetNamespaceLabels`: a Namespace written is its own; else
    /// the namespace object (a missing one is its `404`).
    async fn get(
        &mut self,
        req: &AdmissionRequest,
        object: Option<&Value>,
    ) -> ApiResult<Option<Value>> {
        if let Some(l) = &self.read {
            return Ok(l.clone());
        }
        let labels_of = |o: &Value| o.get("metadata").and_then(|m| m.get("labels")).cloned();
        let is_namespace = req.gr.group.is_empty() && req.gr.resource == "namespaces";
        let labels =
            if is_namespace && req.subresource.is_empty() && req.operation != Operation::Delete {
                object.and_then(labels_of)
            } else {
                let name = if is_namespace {
                    req.name.as_str()
                } else {
                    req.namespace.as_str()
                };
                let key = ObjectKey::new(GroupResource::new("", "namespaces"), "", name);
                labels_of(&self.store.get(&key).await?)
            };
        self.read = Some(labels.clone());
        Ok(labels)
    }
}

/// kube's `ShouldCallHook` (with `matchPolicy: Equivalent` matching only
/// the version the request was made in: see docs/compatibility.md).
async fn should_call(
    hook: &Hook,
    req: &AdmissionRequest,
    name: &str,
    object: Option<&Value>,
    ns: &mut NamespaceLabels<'_>,
) -> ApiResult<bool> {
    let attrs = Attrs {
        group: &req.gr.group,
        version: req.api_version.rsplit('/').next().unwrap_or(""),
        resource: &req.gr.resource,
        subresource: &req.subresource,
        operation: req.operation,
        namespace: &req.namespace,
    };
    if !hook.rules_match(&attrs) {
        return Ok(false);
    }
    let old = req
        .old_object
        .as_ref()
        .filter(|_| req.operation != Operation::Create);
    if !hook.object_matches(object, old) {
        return Ok(false);
    }
    let is_namespace = req.gr.group.is_empty() && req.gr.resource == "namespaces";
    if !hook.namespace_selector.is_empty() && (!req.namespace.is_empty() || is_namespace) {
        let labels = ns.get(req, object).await?;
        if !hook.namespace_selector.matches(labels.as_ref()) {
            return Ok(false);
        }
    }
    if hook.conditions.is_empty() {
        return Ok(true);
    }
    let inv = Invocation { req, name, object };
    let request = review::request_json(&inv, "");
    let mut act = Activation::new();
    act.bind("object", object.unwrap_or(&Value::Null));
    act.bind("oldObject", old.unwrap_or(&Value::Null));
    act.bind("request", &request);
    let mut errors = Vec::new();
    for c in &hook.conditions {
        let outcome = match &c.compiled {
            Err(e) => Err(format!("compilation error: {e}")),
            Ok(x) => act
                .eval(x)
                .map_err(|e| format!("expression '{}' resulted in error: {e}", c.source)),
        };
        match outcome {
            Ok(Outcome::Bool(true)) => {}
            // Any false condition skips the webhook, errors or not.
            Ok(Outcome::Bool(false)) => return Ok(false),
            Ok(other) => errors.push(format!(
                "expression '{}' resulted in error: no such overload: got {other:?}, want bool",
                c.source
            )),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        return Ok(true);
    }
    if hook.ignore_failures {
        return Ok(false);
    }
    let joined = if errors.len() == 1 {
        errors.remove(0)
    } else {
        format!("[{}]", errors.join(", "))
    };
    Err(ApiError::forbidden(&req.gr, name, &joined))
}

/// A failed call under the webhook's `failurePolicy`: `None` to go on.
fn on_failure(hook: &Hook, err: CallError) -> Option<ApiError> {
    match err {
        CallError::Calling(reason) if hook.ignore_failures => {
            tracing::warn!(webhook = %hook.name, %reason, "failed calling webhook, failing open");
            None
        }
        CallError::Calling(reason) => Some(ApiError::internal(format!(
            "failed calling webhook {:?}: {reason}",
            hook.name
        ))),
        CallError::Refused(e) => Some(e),
    }
}

/// Apply a mutating webhook's answer to `object`; whether it changed.
fn apply_patch(
    hook: &Hook,
    req: &AdmissionRequest,
    answer: &review::Answer,
    object: &mut Option<Value>,
    redecode: Option<&Redecode<'_>>,
) -> Result<bool, CallError> {
    let Some(bytes) = answer.patch.as_deref() else {
        return Ok(false);
    };
    let patch: json_patch::Patch = serde_json::from_slice(bytes).map_err(|e| {
        CallError::Calling(format!(
            "received undecodable patch in webhook response: {e}"
        ))
    })?;
    if patch.0.is_empty() {
        return Ok(false);
    }
    let Some(current) = object.as_mut() else {
        return Err(CallError::Refused(ApiError::internal(format!(
            "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
            hook.name
        ))));
    };
    if answer.patch_type != "JSONPatch" {
        return Err(CallError::Calling(format!(
            "unsupported patch type {:?}",
            answer.patch_type
        )));
    }
    let mut patched = current.clone();
    json_patch::patch(&mut patched, &patch)
        .map_err(|e| CallError::Refused(ApiError::internal(e)))?;
    if let Some(r) = redecode {
        r.apply(req, &mut patched)
            .map_err(|e| CallError::Refused(ApiError::internal(e)))?;
    }
    let changed = patched != *current;
    *current = patched;
    Ok(changed)
}

/// kube's mutating dispatcher with its reinvocation context: a webhook
/// with `reinvocationPolicy: IfNeeded` is called once more when a webhook
/// after it changed the object.
pub(super) async fn mutate(
    store: &Arc<dyn StoreApi>,
    callers: &Callers,
    hooks: &[Arc<Hook>],
    req: &AdmissionRequest,
    object: &mut Option<Value>,
    redecode: Option<&Redecode<'_>>,
    ann: &mut Annotations,
) -> ApiResult<Vec<String>> {
    let mut warnings = Vec::new();
    let mut previously_invoked: HashSet<HookKey> = HashSet::new();
    let mut reinvoke: HashSet<HookKey> = HashSet::new();
    let mut reinvocation_requested = false;
    for round in 0..2 {
        if round == 1 && !reinvocation_requested {
            break;
        }
        for (index, hook) in hooks.iter().enumerate() {
            if round == 1 && !reinvoke.contains(&hook.key) {
                continue;
            }
            let name = request_name(req, object.as_ref()).to_string();
            let mut ns = NamespaceLabels { store, read: None };
            if !should_call(hook, req, &name, object.as_ref(), &mut ns).await? {
                continue;
            }
            let inv = Invocation {
                req,
                name: &name,
                object: object.as_ref(),
            };
            let result = call::call(
                &**store,
                &callers.clients,
                callers.auth.mutating.as_deref(),
                hook,
                &inv,
                true,
            )
            .await;
            let result = result.and_then(|answer| {
                warnings.extend(answer.warnings.iter().cloned());
                publish(ann, hook, &answer);
                if !answer.allowed {
                    return Err(CallError::Refused(call::denied(
                        &hook.name,
                        answer.status.as_ref(),
                    )));
                }
                apply_patch(hook, req, &answer, object, redecode)
            });
            if let Ok(mutated) = result {
                // kube's `mutation.webhook.admission.k8s.io` annotation.
                ann.add(
                    format!("mutation.webhook.admission.k8s.io/round_{round}_index_{index}"),
                    serde_json::json!({
                        "configuration": hook.config_name,
                        "webhook": hook.name,
                        "mutated": mutated,
                    })
                    .to_string(),
                );
            }
            if let Ok(true) = result {
                // Earlier reinvocable webhooks see the change once more.
                reinvoke.extend(previously_invoked.drain());
                if round == 0 {
                    reinvocation_requested = true;
                }
            }
            if hook.reinvoke_if_needed {
                previously_invoked.insert(hook.key.clone());
            }
            if let Err(e) = result {
                if let Some(e) = on_failure(hook, e) {
                    return Err(e);
                }
            }
        }
    }
    Ok(warnings)
}

/// kube's validating dispatcher: every webhook that applies, called
/// together; the first refusal (in webhook order) is the answer.
pub(super) async fn validate(
    store: &Arc<dyn StoreApi>,
    callers: &Callers,
    hooks: &[Arc<Hook>],
    req: &AdmissionRequest,
    object: Option<&Value>,
    ann: &mut Annotations,
) -> ApiResult<Vec<String>> {
    let name = request_name(req, object).to_string();
    let mut ns = NamespaceLabels { store, read: None };
    let mut relevant = Vec::new();
    for hook in hooks {
        if should_call(hook, req, &name, object, &mut ns).await? {
            relevant.push(hook.clone());
        }
    }
    let inv = Invocation {
        req,
        name: &name,
        object,
    };
    let calls = relevant.iter().map(|hook| {
        let inv = &inv;
        async move {
            let result = call::call(
                &**store,
                &callers.clients,
                callers.auth.validating.as_deref(),
                hook,
                inv,
                false,
            )
            .await;
            match result {
                Ok(answer) if answer.allowed => (answer.warnings, answer.audit_annotations, None),
                Ok(answer) => (
                    answer.warnings,
                    answer.audit_annotations,
                    Some(CallError::Refused(call::denied(
                        &hook.name,
                        answer.status.as_ref(),
                    ))),
                ),
                Err(e) => (Vec::new(), Vec::new(), Some(e)),
            }
        }
    });
    let results = futures::future::join_all(calls).await;
    let mut warnings = Vec::new();
    let mut first = None;
    for (hook, (w, audit, err)) in relevant.iter().zip(results) {
        warnings.extend(w);
        for (k, v) in audit {
            ann.add(format!("{}/{k}", hook.name), v);
        }
        if let Some(e) = err.and_then(|e| on_failure(hook, e)) {
            first.get_or_insert(e);
        }
    }
    match first {
        Some(e) => Err(e),
        None => Ok(warnings),
    }
}

/// A webhook's `auditAnnotations`, as `<webhook name>/<key>`.
fn publish(ann: &mut Annotations, hook: &Hook, answer: &super::review::Answer) {
    for (k, v) in &answer.audit_annotations {
        ann.add(format!("{}/{k}", hook.name), v.clone());
    }
}
