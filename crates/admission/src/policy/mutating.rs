//! MutatingAdmissionPolicy (`admissionregistration.k8s.io/v1beta1`): a
//! policy compiled once per generation, and its dispatch for one request,
//! as kube's `mutating` policy dispatcher runs it. Bindings are matched on
//! the object as it came in; then each invocation (binding × param) runs
//! its mutations in order on the object as the earlier ones left it: an
//! `ApplyConfiguration` merged by the schema, a `JSONPatch` applied as
//! evanphx/json-patch applies it, the result re-decoded and defaulted.
//! Errors under `failurePolicy: Fail` deny the request once every
//! invocation has run (kube's policy errors), under `Ignore` are skipped.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use keelson_api::Operation;
use keelson_apimachinery::{ApiError, ApiResult, StatusCause, StatusReason};
use keelson_cel::expr::{Activation, MutationError, Returns};
use keelson_merge::mutation::{self as patch, JsonPatchOutcome};
use serde_json::Value;

use super::compile::{Decls, PolicyCompiler};
use super::evaluate::{self, list, str_of, Common, Context, Expr, PolicyMatch};
use super::matching::{Attrs, Binding};
use super::PolicyKind;
use crate::webhook::Redecode;

/// One mutation, its expression compiled.
#[derive(Debug)]
enum Mutation {
    /// `patchType: ApplyConfiguration`: an `Object{...}` merged in.
    Apply(Expr),
    /// `patchType: JSONPatch`: a `list(JSONPatch)` applied.
    Patch(Expr),
}

/// A MutatingAdmissionPolicy's spec, its expressions compiled.
#[derive(Debug)]
pub(crate) struct MutatingCompiled {
    common: Common,
    mutations: Vec<Mutation>,
    /// `reinvocationPolicy: IfNeeded`.
    reinvoke_if_needed: bool,
}

impl std::ops::Deref for MutatingCompiled {
    type Target = Common;
    fn deref(&self) -> &Common {
        &self.common
    }
}

impl PolicyKind for MutatingCompiled {
    const WHAT: &'static str = "mutating admission policies";
    const POLICIES: &'static str = "mutatingadmissionpolicies";
    const BINDINGS: &'static str = "mutatingadmissionpolicybindings";
    const WRITES_STATUS: bool = false;

    /// kube's `compilePolicy`: variables, matchConditions, then each
    /// mutation in the environment with the patch types; a mutation whose
    /// `patchType` has no expression of its kind compiles to nothing.
    fn compile(obj: &Value) -> Self {
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let decls = Decls::untyped(spec.get("paramKind").is_some_and(Value::is_object));
        let mut compiler = PolicyCompiler::new(&decls, true);
        let common = Common::compile(obj, &spec, &mut compiler);
        let expr = |m: &Value, field: &str, returns: Returns| {
            m.get(field).filter(|v| v.is_object()).map(|f| {
                let src = str_of(f, "expression");
                Expr::new(src, compiler.compile_mutation(src, returns))
            })
        };
        let mutations = list(&spec, "mutations")
            .iter()
            .filter_map(|m| match str_of(m, "patchType") {
                "ApplyConfiguration" => {
                    expr(m, "applyConfiguration", Returns::Object).map(Mutation::Apply)
                }
                "JSONPatch" => expr(m, "jsonPatch", Returns::JsonPatches).map(Mutation::Patch),
                _ => None,
            })
            .collect();
        MutatingCompiled {
            common,
            mutations,
            reinvoke_if_needed: str_of(&spec, "reinvocationPolicy") == "IfNeeded",
        }
    }
}

/// An invocation's identity: policy, binding and param (namespace/name).
type Key = (String, String, String);

/// What a dispatch did: the `reinvocationPolicy: IfNeeded` invocations
/// (run again when a later plugin changes the object) and whether any
/// mutation changed the object.
#[derive(Debug, Default, Clone)]
pub(crate) struct Reinvoke {
    keys: BTreeSet<Key>,
    pub(crate) changed: bool,
}

impl Reinvoke {
    /// No invocation to run again.
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// One of kube's policy errors (denying under `failurePolicy: Fail`).
struct PolicyError {
    message: String,
    /// The error's reason is `Invalid` (a mutation's or a match
    /// condition's); configuration errors keep `Forbidden`.
    invalid: bool,
}

fn binding_error(policy: &Common, binding: &Binding, message: &str, invalid: bool) -> PolicyError {
    PolicyError {
        message: format!(
            "policy '{}' with binding '{}' denied request: {message}",
            policy.name, binding.name
        ),
        invalid,
    }
}

/// One (policy, binding, param) to run.
struct Invocation<'p> {
    policy: &'p MutatingCompiled,
    binding: &'p Binding,
    version: String,
    param: Value,
}

/// Dispatch the (policy, binding) pairs on `object`; `only` (a
/// reinvocation) runs just the invocations named.
pub(crate) async fn run(
    cx: Context<'_>,
    pairs: &[(Arc<MutatingCompiled>, Arc<Binding>)],
    object: &mut Value,
    redecode: &Redecode<'_>,
    only: Option<&Reinvoke>,
) -> ApiResult<Reinvoke> {
    let req = cx.req;
    let name = if req.name.is_empty() {
        keelson_apimachinery::meta::meta_str(cx.object, "name")
    } else {
        req.name.as_str()
    };
    let attrs = Attrs::of(req, name);
    let old = req
        .old_object
        .as_ref()
        .filter(|_| req.operation == Operation::Update);
    let equivalents = evaluate::equivalent_versions(cx.catalog, req);
    let mut namespace: Option<Value> = None;
    let mut decided: HashMap<String, PolicyMatch> = HashMap::new();
    let mut errors: Vec<PolicyError> = Vec::new();

    // Which invocations apply, decided on the object as it came in.
    let mut invocations: Vec<Invocation<'_>> = Vec::new();
    for (policy, binding) in pairs {
        if !decided.contains_key(&policy.name) {
            let m = evaluate::match_policy(&cx, policy, &attrs, old, &equivalents, &mut namespace)
                .await?;
            if let (PolicyMatch::Failed, false, Some(kind)) =
                (&m, policy.ignore_errors, policy.param_kind.as_ref())
            {
                if let Err(e) = super::params::resolve(cx.catalog, kind) {
                    errors.push(PolicyError {
                        message: format!(
                            "policy {:?} denied request: failed to configure policy: {e}",
                            policy.name
                        ),
                        invalid: false,
                    });
                }
            }
            decided.insert(policy.name.clone(), m);
        }
        let Some(PolicyMatch::Yes { version, param }) = decided.get(&policy.name) else {
            continue;
        };
        let ns = namespace.as_ref().unwrap_or(&Value::Null);
        if let Some(mr) = &binding.matching {
            if mr.matched_version(&attrs, &equivalents, false).is_none()
                || !mr.object_matches(cx.object, old)
                || !mr.namespace_matches(evaluate::namespace_labels(req, cx.object, ns))
            {
                continue;
            }
        }
        let kind = param.as_ref().map(|(k, r)| (k, r));
        let params = match cx
            .params
            .collect(cx.store, kind, binding.param_ref.as_ref(), &req.namespace)
            .await?
        {
            Ok(p) => p,
            Err(e) => {
                if !policy.ignore_errors {
                    errors.push(binding_error(
                        policy,
                        binding,
                        &format!("failed to configure binding: {e}"),
                        false,
                    ));
                }
                continue;
            }
        };
        for param in params {
            invocations.push(Invocation {
                policy,
                binding,
                version: version.clone(),
                param,
            });
        }
    }

    let ns_object = evaluate::namespace_object(req, namespace.as_ref().unwrap_or(&Value::Null));
    let request_version = attrs.version;
    let mut out = Reinvoke::default();
    for inv in invocations {
        let key = key_of(&inv);
        if only.is_some_and(|o| !o.keys.contains(&key)) {
            continue;
        }
        let policy = inv.policy;
        // The object (and old object) at the version the policy matched,
        // and back at the request's.
        let same = inv.version == request_version;
        let convert = |o: &Value, version: &str| -> Result<Value, String> {
            let mut o = o.clone();
            if !same {
                keelson_registry::conversion::convert(&mut o, version)
                    .map_err(|e| format!("failed to convert object version: {e}"))?;
                set_version(&mut o, &req.gr.group, version);
            }
            Ok(o)
        };
        let (mut current, old_at) = match (
            convert(object, &inv.version),
            old.map(|o| convert(o, &inv.version)).transpose(),
        ) {
            (Ok(o), Ok(old)) => (o, old),
            (Err(e), _) | (_, Err(e)) => {
                if !policy.ignore_errors {
                    errors.push(binding_error(policy, inv.binding, &e, true));
                }
                continue;
            }
        };
        let before = current.clone();
        let request = evaluate::request_json(req, attrs.name, &inv.version);
        let bind = |object: &Value| {
            let mut act = Activation::new();
            act.bind("object", object);
            act.bind("oldObject", old_at.as_ref().unwrap_or(&Value::Null));
            act.bind("request", &request);
            act.bind("params", &inv.param);
            act.bind("namespaceObject", &ns_object);
            evaluate::bind_authorizer(&mut act, &cx, policy, attrs.name);
            act
        };
        let mut act = bind(&current);
        match policy.conditions_hold(&act) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                errors.push(binding_error(policy, inv.binding, &e, true));
                continue;
            }
        }
        let failed = policy.bind_variables(&mut act);
        for (i, mutation) in policy.mutations.iter().enumerate() {
            if i > 0 {
                // Each mutation sees the object as the earlier ones left it.
                act.bind("object", &current);
            }
            let r = apply_mutation(cx.catalog, mutation, &act, &current).map_err(|e| match e {
                Failure::Expression(m, src) => failed.explain(m, &src),
                Failure::Patch(m) => m,
            });
            match r {
                Ok(Some(next)) => {
                    // Re-decoded and defaulted at the request's version.
                    let step = convert(&next, request_version).and_then(|mut back| {
                        let strict = matches!(mutation, Mutation::Patch(_));
                        redecode.apply_with(req, &mut back, strict)?;
                        convert(&back, &inv.version)
                    });
                    match step {
                        Ok(v) => current = v,
                        Err(e) => return Err(ApiError::internal(e)),
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    if !policy.ignore_errors {
                        errors.push(binding_error(policy, inv.binding, &e, true));
                    }
                }
            }
        }
        if current != before {
            out.changed = true;
            match convert(&current, request_version) {
                Ok(v) => *object = v,
                Err(e) => return Err(ApiError::internal(e)),
            }
        }
        if policy.reinvoke_if_needed {
            out.keys.insert(key);
        }
    }
    if let Some(first) = errors.first() {
        return Err(denial(&cx, &errors, first));
    }
    Ok(out)
}

/// Why a mutation failed: its expression (message, source) or its result.
enum Failure {
    Expression(String, String),
    Patch(String),
}

/// The object after one mutation (`None`: unchanged, a failed JSON Patch
/// `test`).
fn apply_mutation(
    catalog: &crate::registry::CatalogSnapshot,
    mutation: &Mutation,
    act: &Activation,
    current: &Value,
) -> Result<Option<Value>, Failure> {
    let (expr, is_apply) = match mutation {
        Mutation::Apply(e) => (e, true),
        Mutation::Patch(e) => (e, false),
    };
    let program = expr
        .compiled
        .as_ref()
        .map_err(|e| Failure::Patch(e.clone()))?;
    let eval_err = |e: MutationError| match e {
        MutationError::Eval(m) => Failure::Expression(
            format!("expression '{}' resulted in error: {m}", expr.source),
            expr.source.clone(),
        ),
        MutationError::Result(m) => Failure::Patch(m),
    };
    if is_apply {
        let mut config = act.eval_apply_configuration(program).map_err(eval_err)?;
        let api_version = current
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = current.get("kind").and_then(Value::as_str).unwrap_or("");
        if let Some(m) = config.as_object_mut() {
            m.insert("apiVersion".into(), api_version.into());
            m.insert("kind".into(), kind.into());
        }
        patch::apply_configuration(catalog, api_version, kind, current, &config)
            .map(Some)
            .map_err(|e| Failure::Patch(format!("error applying patch: {e}")))
    } else {
        let ops = act.eval_json_patch(program).map_err(eval_err)?;
        match patch::apply_json_patch(current, &ops) {
            Ok(JsonPatchOutcome::Applied(v)) => Ok(Some(v)),
            Ok(JsonPatchOutcome::TestFailed) => Ok(None),
            Err(e) => Err(Failure::Patch(format!("JSON Patch: {e}"))),
        }
    }
}

fn key_of(inv: &Invocation<'_>) -> Key {
    let param = match inv.param.get("metadata") {
        Some(m) => format!(
            "{}/{}",
            m.get("namespace").and_then(Value::as_str).unwrap_or(""),
            m.get("name").and_then(Value::as_str).unwrap_or("")
        ),
        None => String::new(),
    };
    (inv.policy.name.clone(), inv.binding.name.clone(), param)
}

fn set_version(o: &mut Value, group: &str, version: &str) {
    if let Some(m) = o.as_object_mut() {
        m.insert(
            "apiVersion".into(),
            Value::from(if group.is_empty() {
                version.to_string()
            } else {
                format!("{group}/{version}")
            }),
        );
    }
}

/// kube's answer to policy errors: `403` (`Invalid` when the first is a
/// mutation's), the first error's message, every error a cause.
fn denial(cx: &Context<'_>, errors: &[PolicyError], first: &PolicyError) -> ApiError {
    let mut e = ApiError::forbidden(
        &cx.req.gr,
        cx.display_name,
        "admission request denied by policy",
    );
    e.message = first.message.clone();
    if first.invalid {
        e.reason = StatusReason::Invalid;
    }
    if let Some(d) = e.details.as_mut() {
        for err in errors {
            d.causes.push(StatusCause {
                reason: String::new(),
                message: err.message.clone(),
                field: String::new(),
            });
        }
    }
    e
}
