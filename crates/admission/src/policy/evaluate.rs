//! A policy compiled once per generation, and its evaluation for one
//! request: kube's `validating` dispatcher and validator.

use std::sync::Arc;

use keelson_api::{AdmissionRequest, Operation, StoreApi};
use keelson_apimachinery::{
    ApiError, ApiResult, GroupResource, ObjectKey, StatusCause, StatusReason,
};
use keelson_cel::expr::{Activation, Expression, Outcome};
use serde_json::{json, Value};

use super::matching::{self, Attrs, Binding, MatchResources};

/// An expression as written and as compiled.
#[derive(Debug)]
struct Expr {
    source: String,
    compiled: Result<Expression, String>,
}

impl Expr {
    fn new(source: &str) -> Expr {
        Expr {
            source: source.to_string(),
            compiled: Expression::compile(source),
        }
    }

    /// Evaluate: the outcome, or kube's error detail.
    fn eval(&self, act: &Activation) -> Result<Outcome, String> {
        match &self.compiled {
            Err(e) => Err(format!("compilation error: {e}")),
            Ok(x) => act
                .eval(x)
                .map_err(|e| format!("expression '{}' resulted in error: {e}", self.source)),
        }
    }
}

#[derive(Debug)]
struct Validation {
    expr: Expr,
    message: String,
    message_expression: Option<Expr>,
    reason: String,
}

/// A ValidatingAdmissionPolicy's spec, its expressions compiled.
#[derive(Debug)]
pub(crate) struct Compiled {
    name: String,
    /// `failurePolicy: Ignore`.
    ignore_errors: bool,
    constraints: MatchResources,
    conditions: Vec<(String, Expr)>,
    variables: Vec<(String, Expr)>,
    validations: Vec<Validation>,
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn named_exprs(v: Option<&Value>) -> Vec<(String, Expr)> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        str_of(c, "name").to_string(),
                        Expr::new(str_of(c, "expression")),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

impl Compiled {
    /// Compile a policy object (odd shapes count as absent fields).
    pub(crate) fn compile(obj: &Value) -> Compiled {
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let validations = spec
            .get("validations")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| Validation {
                        expr: Expr::new(str_of(v, "expression")),
                        message: str_of(v, "message").to_string(),
                        message_expression: Some(str_of(v, "messageExpression"))
                            .filter(|s| !s.is_empty())
                            .map(Expr::new),
                        reason: str_of(v, "reason").to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Compiled {
            name: super::name_of(obj),
            ignore_errors: str_of(&spec, "failurePolicy") == "Ignore",
            constraints: MatchResources::from_json(spec.get("matchConstraints")),
            conditions: named_exprs(spec.get("matchConditions")),
            variables: named_exprs(spec.get("variables")),
            validations,
        }
    }
}

/// One failed validation (or an error under `failurePolicy: Fail`).
struct Decision {
    message: String,
    reason: String,
}

/// The `request` variable (kube's `AdmissionRequest`; no `userInfo`).
fn request_json(req: &AdmissionRequest, name: &str) -> Value {
    let version = req.api_version.rsplit('/').next().unwrap_or("");
    let kind = json!({"group": req.gr.group, "version": version, "kind": req.kind});
    let resource = json!({"group": req.gr.group, "version": version, "resource": req.gr.resource});
    json!({
        "kind": kind,
        "resource": resource,
        "subResource": req.subresource,
        "requestKind": kind,
        "requestResource": resource,
        "requestSubResource": req.subresource,
        "name": name,
        "namespace": req.namespace,
        "operation": matching::operation(req.operation),
        "userInfo": {},
        "dryRun": req.dry_run,
    })
}

/// Evaluate the (policy, binding) pairs; the first denial is the error.
pub(crate) async fn run(
    store: &Arc<dyn StoreApi>,
    req: &AdmissionRequest,
    object: &Value,
    display_name: &str,
    pairs: &[(Arc<Compiled>, Arc<Binding>)],
) -> ApiResult<Vec<String>> {
    let name = if req.name.is_empty() {
        keelson_apimachinery::meta::meta_str(object, "name")
    } else {
        req.name.as_str()
    };
    let attrs = Attrs::of(req, name);
    let old = req
        .old_object
        .as_ref()
        .filter(|_| req.operation == Operation::Update);
    // The namespace object, read once and only if a policy applies.
    let mut namespace: Option<Value> = None;
    let mut warnings = Vec::new();
    for (policy, binding) in pairs {
        if !policy.constraints.matches(&attrs, object, old, true) {
            continue;
        }
        if let Some(m) = &binding.matching {
            if !m.matches(&attrs, object, old, false) {
                continue;
            }
        }
        if namespace.is_none() {
            namespace = Some(namespace_object(store, req, object).await?);
        }
        let ns = namespace.clone().unwrap_or(Value::Null);
        let ns_labels = if req.namespace.is_empty() && !is_namespace(&req.gr) {
            None
        } else {
            Some(ns.get("metadata").and_then(|m| m.get("labels")))
        };
        if !policy.constraints.namespace_matches(ns_labels)
            || binding
                .matching
                .as_ref()
                .is_some_and(|m| !m.namespace_matches(ns_labels))
        {
            continue;
        }
        let mut act = Activation::new();
        act.bind("object", object);
        act.bind("oldObject", old.unwrap_or(&Value::Null));
        act.bind("request", &request_json(req, name));
        act.bind("params", &Value::Null);
        act.bind("namespaceObject", &ns);
        for decision in decide(policy, &mut act) {
            let msg = decision.message;
            let mut unique = binding.actions.clone();
            unique.dedup();
            for action in &unique {
                match action.as_str() {
                    "Deny" => {
                        return Err(denied(req, display_name, policy, binding, &msg, &decision.reason))
                    }
                    "Warn" => warnings.push(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {msg}",
                        policy.name, binding.name
                    )),
                    _ => {}
                }
            }
        }
    }
    Ok(warnings)
}

fn is_namespace(gr: &GroupResource) -> bool {
    gr.group.is_empty() && gr.resource == "namespaces"
}

/// `namespaceObject`: the request's namespace (null when cluster-scoped; a
/// Namespace is its own).
async fn namespace_object(
    store: &Arc<dyn StoreApi>,
    req: &AdmissionRequest,
    object: &Value,
) -> ApiResult<Value> {
    if is_namespace(&req.gr) {
        return Ok(object.clone());
    }
    if req.namespace.is_empty() {
        return Ok(Value::Null);
    }
    let key = ObjectKey::new(GroupResource::new("", "namespaces"), "", &req.namespace);
    match store.get(&key).await {
        Ok(ns) => Ok(ns),
        Err(e) if e.is_not_found() => Ok(Value::Null),
        Err(e) => Err(e),
    }
}

/// The failed validations of one policy for one request.
fn decide(policy: &Compiled, act: &mut Activation) -> Vec<Decision> {
    let error = |message: String| {
        if policy.ignore_errors {
            Vec::new()
        } else {
            vec![Decision {
                message,
                reason: String::new(),
            }]
        }
    };
    for (_, cond) in &policy.conditions {
        match cond.eval(act) {
            Ok(Outcome::Bool(true)) => {}
            Ok(Outcome::Bool(false)) => return Vec::new(),
            Ok(other) => {
                return error(format!(
                    "compilation error: expression '{}' returned {other:?}, want bool",
                    cond.source
                ))
            }
            Err(e) => return error(e),
        }
    }
    // Variables are evaluated in order; one that fails stays unbound and
    // only an expression that reads it fails (kube evaluates them lazily).
    let mut failed: Vec<(String, String)> = Vec::new();
    for (name, var) in &policy.variables {
        let r = match &var.compiled {
            Err(e) => Err(format!("compilation error: {e}")),
            Ok(x) => act.bind_variable(name, x),
        };
        if let Err(e) = r {
            failed.push((name.clone(), e));
        }
    }
    let explain = |e: String, source: &str| -> String {
        for (name, why) in &failed {
            if e.ends_with(&format!("no such key: {name}")) {
                return format!(
                    "expression '{source}' resulted in error: composited variable \"{name}\" fails to evaluate: {why}"
                );
            }
        }
        e
    };
    let mut out = Vec::new();
    for v in &policy.validations {
        match v.expr.eval(act) {
            Ok(Outcome::Bool(true)) => {}
            Ok(Outcome::Bool(false)) => {
                let from_expr = v
                    .message_expression
                    .as_ref()
                    .and_then(|m| match m.eval(act) {
                        Ok(Outcome::Str(s)) if !s.trim().is_empty() && !s.contains('\n') => Some(s),
                        _ => None,
                    });
                let message = from_expr.unwrap_or_else(|| {
                    if v.message.is_empty() {
                        format!("failed expression: {}", v.expr.source)
                    } else {
                        v.message.clone()
                    }
                });
                out.push(Decision {
                    message,
                    reason: if v.reason.is_empty() {
                        "Invalid".into()
                    } else {
                        v.reason.clone()
                    },
                });
            }
            Ok(other) => out.extend(error(format!(
                "compilation error: expression '{}' returned {other:?}, want bool",
                v.expr.source
            ))),
            Err(e) => out.extend(error(explain(e, &v.expr.source))),
        }
    }
    out
}

/// kube's denial: `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy
/// '<p>' with binding '<b>' denied request: <message>`, its reason the
/// validation's (Invalid by default) and the code that reason's.
fn denied(
    req: &AdmissionRequest,
    name: &str,
    policy: &Compiled,
    binding: &Binding,
    message: &str,
    reason: &str,
) -> ApiError {
    let msg = format!(
        "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {message}",
        policy.name, binding.name
    );
    let mut e = ApiError::forbidden(&req.gr, name, &msg);
    let (reason, code) = match reason {
        "Forbidden" => (StatusReason::Forbidden, 403),
        "Unauthorized" => (StatusReason::Unauthorized, 401),
        "RequestEntityTooLarge" => (StatusReason::RequestEntityTooLarge, 413),
        _ => (StatusReason::Invalid, 422),
    };
    e.reason = reason;
    e.code = code;
    if let Some(d) = e.details.as_mut() {
        d.causes.push(StatusCause {
            reason: String::new(),
            message: msg,
            field: String::new(),
        });
    }
    e
}
