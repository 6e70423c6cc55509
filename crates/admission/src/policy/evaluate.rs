//! A policy compiled once per generation, and its evaluation for one
//! request: kube's `validating` dispatcher and validator.

use std::sync::Arc;

use keelson_api::{AdmissionRequest, Operation, StoreApi};
use keelson_apimachinery::{
    ApiError, ApiResult, GroupResource, ObjectKey, StatusCause, StatusReason,
};
use keelson_cel::expr::{Activation, Expression, Outcome, Returns};
use keelson_cel::library::authz::{Authorize, Check};
use serde_json::{json, Value};

use super::compile::{Decls, PolicyCompiler};
use super::matching::{self, Attrs, Binding, MatchResources};
use super::params::{self, ParamCache, ParamKind};
use crate::audit::Annotations;
use crate::registry::CatalogSnapshot;

/// An expression as written and as compiled.
#[derive(Debug)]
pub(crate) struct Expr {
    pub(crate) source: String,
    /// The program, or kube's compile error detail.
    pub(crate) compiled: Result<Expression, String>,
}

impl Expr {
    pub(crate) fn new(source: &str, compiled: Result<Expression, String>) -> Expr {
        Expr {
            source: source.to_string(),
            compiled,
        }
    }

    /// Evaluate: the outcome, or kube's error detail.
    pub(crate) fn eval(&self, act: &Activation) -> Result<Outcome, String> {
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

/// What every admission policy has (validating and mutating), compiled.
#[derive(Debug)]
pub(crate) struct Common {
    pub(crate) name: String,
    /// `failurePolicy: Ignore`.
    pub(crate) ignore_errors: bool,
    pub(crate) constraints: MatchResources,
    conditions: Vec<(String, Expr)>,
    variables: Vec<(String, Expr)>,
    pub(crate) param_kind: Option<ParamKind>,
    /// Some expression names `authorizer` (it is then bound).
    pub(crate) uses_authorizer: bool,
}

/// A ValidatingAdmissionPolicy's spec, its expressions compiled.
#[derive(Debug)]
pub(crate) struct Compiled {
    common: Common,
    validations: Vec<Validation>,
    /// `auditAnnotations`: key and valueExpression.
    audit_annotations: Vec<(String, Expr)>,
}

impl std::ops::Deref for Compiled {
    type Target = Common;
    fn deref(&self) -> &Common {
        &self.common
    }
}

pub(crate) fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn list<'a>(spec: &'a Value, k: &str) -> &'a [Value] {
    spec.get(k)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

impl Common {
    /// The spec's variables (compiled first, into `compiler`), match
    /// conditions, constraints and failure policy.
    pub(crate) fn compile(obj: &Value, spec: &Value, compiler: &mut PolicyCompiler) -> Common {
        let variables = list(spec, "variables")
            .iter()
            .map(|v| {
                let (name, src) = (str_of(v, "name"), str_of(v, "expression"));
                (
                    name.to_string(),
                    Expr::new(src, compiler.add_variable(name, src)),
                )
            })
            .collect();
        let conditions = list(spec, "matchConditions")
            .iter()
            .map(|c| {
                let src = str_of(c, "expression");
                (
                    str_of(c, "name").to_string(),
                    Expr::new(src, compiler.compile(src, Returns::Bool, true)),
                )
            })
            .collect();
        let uses_authorizer = serde_json::to_string(spec)
            .map(|s| s.contains("authorizer"))
            .unwrap_or(false);
        Common {
            name: super::name_of(obj),
            ignore_errors: str_of(spec, "failurePolicy") == "Ignore",
            constraints: MatchResources::from_json(spec.get("matchConstraints")),
            conditions,
            variables,
            param_kind: ParamKind::from_json(spec.get("paramKind")),
            uses_authorizer,
        }
    }

    /// kube's match conditions: `Ok(false)` when one is false (or, under
    /// `failurePolicy: Ignore`, when one fails), else the errors as one
    /// aggregate.
    pub(crate) fn conditions_hold(&self, act: &Activation) -> Result<bool, String> {
        let mut errors = Vec::new();
        for (_, cond) in &self.conditions {
            match cond.eval(act) {
                Ok(Outcome::Bool(true)) => {}
                Ok(Outcome::Bool(false)) => return Ok(false),
                Ok(other) => errors.push(format!(
                    "compilation error: expression '{}' returned {other:?}, want bool",
                    cond.source
                )),
                Err(e) => errors.push(e),
            }
        }
        match errors.len() {
            0 => Ok(true),
            _ if self.ignore_errors => Ok(false),
            1 => Err(errors.remove(0)),
            _ => Err(format!("[{}]", errors.join(", "))),
        }
    }

    /// Binds the variables in order; one that fails stays unbound and only
    /// an expression that reads it fails (kube evaluates them lazily). The
    /// failed ones, with kube's `fails to compile: ...` / `fails to
    /// evaluate: ...`.
    pub(crate) fn bind_variables(&self, act: &mut Activation) -> FailedVariables {
        let mut failed = Vec::new();
        for (name, var) in &self.variables {
            let r = match &var.compiled {
                Err(e) => Err(format!("fails to compile: {e}")),
                Ok(x) => act
                    .bind_variable(name, x)
                    .map_err(|e| format!("fails to evaluate: {e}")),
            };
            if let Err(e) = r {
                failed.push((name.clone(), e));
            }
        }
        FailedVariables(failed)
    }
}

/// The variables that did not evaluate: (name, why).
pub(crate) struct FailedVariables(Vec<(String, String)>);

impl FailedVariables {
    /// An expression's error `e`, explained by the failed variable it read.
    pub(crate) fn explain(&self, e: String, source: &str) -> String {
        for (name, why) in &self.0 {
            if e.ends_with(&format!("no such key: {name}")) {
                return format!(
                    "expression '{source}' resulted in error: composited variable \"{name}\" {why}"
                );
            }
        }
        e
    }
}

impl Compiled {
    /// Compile a policy object as kube's `compilePolicy` does (variables
    /// first, then matchConditions, validations, auditAnnotations and
    /// messageExpressions); odd shapes count as absent fields.
    pub(crate) fn compile(obj: &Value) -> Compiled {
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let decls = Decls::untyped(spec.get("paramKind").is_some_and(Value::is_object));
        let mut compiler = PolicyCompiler::new(&decls, true);
        let common = Common::compile(obj, &spec, &mut compiler);
        let bool_expr = |src: &str| Expr::new(src, compiler.compile(src, Returns::Bool, true));
        let validations = list(&spec, "validations")
            .iter()
            .map(|v| Validation {
                expr: bool_expr(str_of(v, "expression")),
                message: str_of(v, "message").to_string(),
                message_expression: Some(str_of(v, "messageExpression"))
                    .filter(|s| !s.is_empty())
                    .map(|m| Expr::new(m, compiler.compile(m, Returns::String, false))),
                reason: str_of(v, "reason").to_string(),
            })
            .collect();
        let audit_annotations = list(&spec, "auditAnnotations")
            .iter()
            .map(|x| {
                let src = str_of(x, "valueExpression");
                (
                    str_of(x, "key").to_string(),
                    Expr::new(src, compiler.compile(src, Returns::StringOrNull, true)),
                )
            })
            .collect();
        Compiled {
            common,
            validations,
            audit_annotations,
        }
    }
}

/// One failed validation (or an error under `failurePolicy: Fail`).
struct Decision {
    message: String,
    reason: String,
    /// The validation's index (kube's `expressionIndex`).
    index: usize,
    /// An auditAnnotation's error: denied whatever the binding's actions.
    always_deny: bool,
}

/// The `request` variable as kube's `CreateAdmissionRequest` builds it:
/// `kind`/`resource` at the version the policy matched, `requestKind` /
/// `requestResource` as asked, no `uid`, `object` or `oldObject`.
pub(crate) fn request_json(req: &AdmissionRequest, name: &str, matched_version: &str) -> Value {
    let version = req.api_version.rsplit('/').next().unwrap_or("");
    let gvk = |v: &str| {
        let (group, version) = req.kind_group_version(v);
        json!({"group": group, "version": version, "kind": req.kind})
    };
    let gvr = |v: &str| json!({"group": req.gr.group, "version": v, "resource": req.gr.resource});
    let mut m = serde_json::Map::new();
    m.insert("uid".into(), "".into());
    m.insert("kind".into(), gvk(matched_version));
    m.insert("resource".into(), gvr(matched_version));
    if !req.subresource.is_empty() {
        m.insert("subResource".into(), req.subresource.clone().into());
    }
    m.insert("requestKind".into(), gvk(version));
    m.insert("requestResource".into(), gvr(version));
    if !req.subresource.is_empty() {
        m.insert("requestSubResource".into(), req.subresource.clone().into());
    }
    if !name.is_empty() {
        m.insert("name".into(), name.into());
    }
    // A Namespace is created in its own namespace (kube's create handler).
    let namespace = if req.namespace.is_empty()
        && is_namespace(&req.gr)
        && req.operation == Operation::Create
    {
        name
    } else {
        req.namespace.as_str()
    };
    if !namespace.is_empty() {
        m.insert("namespace".into(), namespace.into());
    }
    m.insert(
        "operation".into(),
        matching::operation(req.operation).into(),
    );
    m.insert(
        "userInfo".into(),
        req.user
            .as_ref()
            .and_then(|u| serde_json::to_value(u).ok())
            .unwrap_or_else(|| json!({})),
    );
    m.insert("object".into(), Value::Null);
    m.insert("oldObject".into(), Value::Null);
    m.insert("dryRun".into(), req.dry_run.into());
    m.insert("options".into(), req.options.clone().unwrap_or(Value::Null));
    Value::Object(m)
}

/// The request's resource at the versions it is served at besides the
/// request's own (the candidates of `matchPolicy: Equivalent`).
pub(crate) fn equivalent_versions(
    catalog: &CatalogSnapshot,
    req: &AdmissionRequest,
) -> Vec<String> {
    let version = req.api_version.rsplit('/').next().unwrap_or("");
    catalog
        .resources()
        .iter()
        .filter(|r| r.group == req.gr.group && r.plural == req.gr.resource && r.version != version)
        .map(|r| r.version.clone())
        .collect()
}

/// How a policy applies to this request (decided once per policy).
pub(crate) enum PolicyMatch {
    /// Not this request's policy.
    No,
    /// A configuration error (already denied or ignored).
    Failed,
    /// The policy's constraints match, at this version; the object is
    /// converted for it only once one of its bindings matches too (kube's
    /// versioned attributes are made on first use).
    Yes {
        version: String,
        param: Option<(ParamKind, params::Resolved)>,
    },
}

/// What a matched policy's expressions read at one version, made once per
/// version for every policy matched at it.
struct Matched {
    /// The object and old object converted to the version (`None`: the
    /// request's own, used as they are).
    converted: Option<(Value, Option<Value>)>,
    request: Value,
}

/// The parts of one request every binding reads.
pub(crate) struct Context<'a> {
    pub(crate) store: &'a Arc<dyn StoreApi>,
    pub(crate) catalog: &'a CatalogSnapshot,
    pub(crate) params: &'a ParamCache,
    pub(crate) req: &'a AdmissionRequest,
    pub(crate) object: &'a Value,
    pub(crate) display_name: &'a str,
    /// The authorizer, when a policy uses it.
    pub(crate) authorizer: Option<Arc<dyn Authorize>>,
}

/// Evaluate the (policy, binding) pairs; the first denial is the error.
pub(crate) async fn run(
    cx: Context<'_>,
    pairs: &[(Arc<Compiled>, Arc<Binding>)],
    ann: &mut Annotations,
) -> ApiResult<Vec<String>> {
    let mut collector = AuditCollector::default();
    let r = run_collecting(cx, pairs, ann, &mut collector).await;
    collector.publish(ann);
    r
}

/// kube's `auditAnnotationCollector`: per policy, each key's distinct
/// values (joined with `, ` when bindings' params make several).
#[derive(Default)]
struct AuditCollector(Vec<(String, String, Vec<String>)>);

impl AuditCollector {
    fn add(&mut self, policy: &str, key: String, value: String) {
        match self.0.iter_mut().find(|(p, k, _)| p == policy && *k == key) {
            Some((_, _, values)) => {
                if !values.contains(&value) {
                    values.push(value);
                }
            }
            None => self.0.push((policy.to_string(), key, vec![value])),
        }
    }

    fn publish(self, ann: &mut Annotations) {
        for (policy, key, values) in self.0 {
            ann.add(format!("{policy}/{key}"), values.join(", "));
        }
    }
}

/// kube's `validation.policy.admission.k8s.io/validation_failure` for an
/// `Audit` binding's failed validation.
fn publish_failure(ann: &mut Annotations, binding: &Binding, policy: &str, d: &Decision) {
    let value = serde_json::json!([{
        "message": d.message,
        "policy": policy,
        "binding": binding.name,
        "expressionIndex": d.index,
        "validationActions": binding.actions,
    }]);
    ann.add(
        "validation.policy.admission.k8s.io/validation_failure",
        value.to_string(),
    );
}

async fn run_collecting(
    cx: Context<'_>,
    pairs: &[(Arc<Compiled>, Arc<Binding>)],
    ann: &mut Annotations,
    collector: &mut AuditCollector,
) -> ApiResult<Vec<String>> {
    let (store, req, object) = (cx.store, cx.req, cx.object);
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
    let equivalents = equivalent_versions(cx.catalog, req);
    // The namespace object, read once and only if a policy applies.
    let mut namespace: Option<Value> = None;
    let mut decided: std::collections::HashMap<String, PolicyMatch> = Default::default();
    // Per (version, whether conversion errors are ignored): the versioned
    // object and request, once a binding of a policy at that version matched
    // (`None`: the conversion failed under `failurePolicy: Ignore`).
    let mut versioned: std::collections::HashMap<(String, bool), Option<Matched>> =
        Default::default();
    let mut warnings = Vec::new();
    for (policy, binding) in pairs {
        if !decided.contains_key(&policy.name) {
            let m = match_policy(&cx, policy, &attrs, old, &equivalents, &mut namespace).await?;
            decided.insert(policy.name.clone(), m);
        }
        let Some(PolicyMatch::Yes { version, param }) = decided.get(&policy.name) else {
            if let Some(PolicyMatch::Failed) = decided.get(&policy.name) {
                // kube denies a policy's configuration error once, with no binding.
                if let Some(e) = policy_error(&cx, policy).await {
                    return Err(e);
                }
            }
            continue;
        };
        let ns = namespace.as_ref().unwrap_or(&Value::Null);
        if let Some(mr) = &binding.matching {
            if mr.matched_version(&attrs, &equivalents, false).is_none()
                || !mr.object_matches(object, old)
                || !mr.namespace_matches(namespace_labels(req, object, ns))
            {
                continue;
            }
        }
        let at = (version.clone(), policy.ignore_errors);
        if !versioned.contains_key(&at) {
            let v = versioned_for(&cx, policy, &attrs, old, version)?;
            versioned.insert(at.clone(), v);
        }
        let Some(Some(m)) = versioned.get(&at) else {
            continue;
        };
        let (m_object, m_old) = match &m.converted {
            Some((o, old)) => (o, old.as_ref()),
            None => (object, old),
        };
        let kind = param.as_ref().map(|(k, r)| (k, r));
        let params = match cx
            .params
            .collect(store, kind, binding.param_ref.as_ref(), &req.namespace)
            .await?
        {
            Ok(p) => p,
            Err(e) => {
                if policy.ignore_errors {
                    continue;
                }
                return Err(denied(
                    &cx,
                    policy,
                    Some(binding),
                    &format!("failed to configure binding: {e}"),
                    "",
                ));
            }
        };
        let ns_object = namespace_object(req, ns);
        for param in &params {
            let mut act = Activation::new();
            act.bind("object", m_object);
            act.bind("oldObject", m_old.unwrap_or(&Value::Null));
            act.bind("request", &m.request);
            act.bind("params", param);
            act.bind("namespaceObject", &ns_object);
            bind_authorizer(&mut act, &cx, policy, attrs.name);
            let (decisions, published) = decide(policy, &mut act);
            for (key, value) in published {
                collector.add(&policy.name, key, value);
            }
            for decision in decisions {
                let msg = decision.message.clone();
                if decision.always_deny {
                    return Err(denied(&cx, policy, Some(binding), &msg, &decision.reason));
                }
                // Every action is taken (a Deny's refusal comes after
                // the binding's Warn and Audit, as kube's dispatcher).
                let mut deny = false;
                for action in &binding.actions {
                    match action.as_str() {
                        "Deny" => deny = true,
                        "Warn" => warnings.push(format!(
                            "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {msg}",
                            policy.name, binding.name
                        )),
                        "Audit" => publish_failure(ann, binding, &policy.name, &decision),
                        _ => {}
                    }
                }
                if deny {
                    return Err(denied(&cx, policy, Some(binding), &msg, &decision.reason)
                        .with_warnings(std::mem::take(&mut warnings)));
                }
            }
        }
    }
    Ok(warnings)
}

/// `authorizer` (and `authorizer.requestResource`, the request's own
/// resource and `name`) for a policy that uses it.
pub(crate) fn bind_authorizer(act: &mut Activation, cx: &Context<'_>, policy: &Common, name: &str) {
    let (true, Some(a)) = (policy.uses_authorizer, &cx.authorizer) else {
        return;
    };
    let req = cx.req;
    let request = Check {
        group: req.gr.group.clone(),
        resource: req.gr.resource.clone(),
        subresource: req.subresource.clone(),
        namespace: req.namespace.clone(),
        name: name.to_string(),
        ..Check::default()
    };
    act.bind_authorizer(
        a.clone(),
        super::authz::user_of(req.user.as_ref()),
        Some(request),
    );
}

/// A policy's configuration error as kube answers it (`None` under
/// `failurePolicy: Ignore`).
async fn policy_error(cx: &Context<'_>, policy: &Compiled) -> Option<ApiError> {
    if policy.ignore_errors {
        return None;
    }
    let kind = policy.param_kind.as_ref()?;
    let e = params::resolve(cx.catalog, kind).err()?;
    Some(denied(
        cx,
        policy,
        None,
        &format!("failed to configure policy: {e}"),
        "",
    ))
}

/// Whether `policy` applies to the request, at which version.
pub(crate) async fn match_policy(
    cx: &Context<'_>,
    policy: &Common,
    attrs: &Attrs<'_>,
    old: Option<&Value>,
    equivalents: &[String],
    namespace: &mut Option<Value>,
) -> ApiResult<PolicyMatch> {
    let req = cx.req;
    let Some(version) = policy.constraints.matched_version(attrs, equivalents, true) else {
        return Ok(PolicyMatch::No);
    };
    if !policy.constraints.object_matches(cx.object, old) {
        return Ok(PolicyMatch::No);
    }
    if namespace.is_none() {
        *namespace = Some(read_namespace(cx.store, req, cx.object).await?);
    }
    let ns = namespace.clone().unwrap_or(Value::Null);
    if !policy
        .constraints
        .namespace_matches(namespace_labels(req, cx.object, &ns))
    {
        return Ok(PolicyMatch::No);
    }
    let param = match &policy.param_kind {
        None => None,
        Some(k) => match params::resolve(cx.catalog, k) {
            Ok(r) => Some((k.clone(), r)),
            Err(_) => return Ok(PolicyMatch::Failed),
        },
    };
    Ok(PolicyMatch::Yes { version, param })
}

/// The object, old object and request as `policy` sees them at `version`
/// (converted when the request's version differs); `None` when the
/// conversion fails and the policy ignores errors.
fn versioned_for(
    cx: &Context<'_>,
    policy: &Compiled,
    attrs: &Attrs<'_>,
    old: Option<&Value>,
    version: &str,
) -> ApiResult<Option<Matched>> {
    let req = cx.req;
    let request = request_json(req, attrs.name, version);
    // A subresource's own kind (a Scale) is the same at every version of
    // the resource.
    if version == attrs.version || !req.kind_api_version.is_empty() {
        return Ok(Some(Matched {
            converted: None,
            request,
        }));
    }
    let mut object = cx.object.clone();
    let mut old = old.cloned();
    for o in std::iter::once(&mut object).chain(old.iter_mut()) {
        if let Err(e) = keelson_registry::conversion::convert(o, version) {
            if policy.ignore_errors {
                return Ok(None);
            }
            return Err(denied(
                cx,
                policy,
                None,
                &format!("failed to configure policy: failed to convert object version: {e}"),
                "",
            ));
        }
        if let Some(m) = o.as_object_mut() {
            m.insert(
                "apiVersion".into(),
                Value::from(if req.gr.group.is_empty() {
                    version.to_string()
                } else {
                    format!("{}/{version}", req.gr.group)
                }),
            );
        }
    }
    Ok(Some(Matched {
        converted: Some((object, old)),
        request,
    }))
}

/// The labels a namespace selector sees: the Namespace's own for a
/// Namespace, the request namespace's for a namespaced request, `None`
/// (always matching) for another cluster-scoped one.
pub(crate) fn namespace_labels<'v>(
    req: &AdmissionRequest,
    object: &'v Value,
    ns: &'v Value,
) -> Option<Option<&'v Value>> {
    if is_namespace(&req.gr) {
        Some(object.get("metadata").and_then(|m| m.get("labels")))
    } else if req.namespace.is_empty() {
        None
    } else {
        Some(ns.get("metadata").and_then(|m| m.get("labels")))
    }
}

fn is_namespace(gr: &GroupResource) -> bool {
    gr.group.is_empty() && gr.resource == "namespaces"
}

/// The request's namespace from the store (null when cluster-scoped or
/// missing; a Namespace request reads none).
pub(crate) async fn read_namespace(
    store: &Arc<dyn StoreApi>,
    req: &AdmissionRequest,
    _object: &Value,
) -> ApiResult<Value> {
    if req.namespace.is_empty() || is_namespace(&req.gr) {
        return Ok(Value::Null);
    }
    let key = ObjectKey::new(GroupResource::new("", "namespaces"), "", &req.namespace);
    match store.get(&key).await {
        Ok(ns) => Ok(ns),
        Err(e) if e.is_not_found() => Ok(Value::Null),
        Err(e) => Err(e),
    }
}

/// `namespaceObject` as kube's `CreateNamespaceObject` trims it: the
/// namespace's spec, status and identifying metadata; null for a
/// cluster-scoped request and for a Namespace itself.
pub(crate) fn namespace_object(req: &AdmissionRequest, ns: &Value) -> Value {
    if req.namespace.is_empty() || is_namespace(&req.gr) || !ns.is_object() {
        return Value::Null;
    }
    let mut meta = serde_json::Map::new();
    if let Some(m) = ns.get("metadata").and_then(Value::as_object) {
        for k in [
            "name",
            "generateName",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "labels",
            "annotations",
            "finalizers",
        ] {
            if let Some(v) = m.get(k) {
                meta.insert(k.into(), v.clone());
            }
        }
    }
    let mut out = serde_json::Map::new();
    out.insert("metadata".into(), Value::Object(meta));
    out.insert("spec".into(), ns.get("spec").cloned().unwrap_or(json!({})));
    out.insert(
        "status".into(),
        ns.get("status").cloned().unwrap_or(json!({})),
    );
    Value::Object(out)
}

/// The failed validations of one policy for one request, and the
/// auditAnnotations' values to publish (key, value).
fn decide(policy: &Compiled, act: &mut Activation) -> (Vec<Decision>, Vec<(String, String)>) {
    let error_at = |index: usize, message: String| {
        if policy.ignore_errors {
            Vec::new()
        } else {
            vec![Decision {
                message,
                reason: String::new(),
                index,
                always_deny: false,
            }]
        }
    };
    let error = |message: String| error_at(0, message);
    match policy.conditions_hold(act) {
        Ok(true) => {}
        Ok(false) => return (Vec::new(), Vec::new()),
        Err(e) => return (error(e), Vec::new()),
    }
    let failed = policy.bind_variables(act);
    let explain = |e: String, source: &str| failed.explain(e, source);
    let mut out = Vec::new();
    let mut published = Vec::new();
    for (index, v) in policy.validations.iter().enumerate() {
        match v.expr.eval(act) {
            Ok(Outcome::Bool(true)) => {}
            Ok(Outcome::Bool(false)) => {
                // messageExpression, when it gives a usable one-line
                // string; else message; else the expression.
                let from_expr = v
                    .message_expression
                    .as_ref()
                    .and_then(|m| match m.eval(act) {
                        Ok(Outcome::Str(s)) => Some(s.trim().to_string()),
                        _ => None,
                    })
                    .filter(|s| !s.is_empty() && s.len() <= MAX_MESSAGE_BYTES && !s.contains('\n'));
                let message = from_expr.unwrap_or_else(|| {
                    let m = v.message.trim();
                    if m.is_empty() {
                        format!("failed expression: {}", v.expr.source.trim())
                    } else {
                        m.to_string()
                    }
                });
                out.push(Decision {
                    message,
                    reason: if v.reason.is_empty() {
                        "Invalid".into()
                    } else {
                        v.reason.clone()
                    },
                    index,
                    always_deny: false,
                });
            }
            Ok(other) => out.extend(error_at(
                index,
                format!(
                    "compilation error: expression '{}' returned {other:?}, want bool",
                    v.expr.source
                ),
            )),
            Err(e) => out.extend(error_at(index, explain(e, &v.expr.source))),
        }
    }
    // auditAnnotations: a string value is published (cut at 10 KiB), an
    // error denies under Fail.
    let error = |message: String| {
        let mut d = error(message);
        for x in &mut d {
            x.always_deny = true;
        }
        d
    };
    for (key, ann) in &policy.audit_annotations {
        match ann.eval(act) {
            Ok(Outcome::Str(s)) => {
                let mut s = s;
                if s.len() > MAX_AUDIT_ANNOTATION_VALUE {
                    let mut cut = MAX_AUDIT_ANNOTATION_VALUE;
                    while !s.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    s.truncate(cut);
                }
                published.push((key.clone(), s));
            }
            Ok(Outcome::Other(t)) if t == "null_type" => {}
            Ok(other) => {
                let t = match other {
                    Outcome::Bool(_) => "bool".to_string(),
                    Outcome::Other(t) => t,
                    Outcome::Str(_) => "string".to_string(),
                };
                out.extend(error(format!(
                    "valueExpression '{}' resulted in unsupported return type: {t}. Return type must be either string or null.",
                    ann.source
                )))
            }
            Err(e) => out.extend(error(explain(e, &ann.source))),
        }
    }
    (out, published)
}

/// kube's `maxAuditAnnotationValueLength`.
const MAX_AUDIT_ANNOTATION_VALUE: usize = 10 * 1024;

/// kube's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// kube's denial: `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy
/// '<p>' with binding '<b>' denied request: <message>` (without a binding
/// for a policy's configuration error), its reason the validation's
/// (Invalid by default) and the code that reason's.
fn denied(
    cx: &Context<'_>,
    policy: &Compiled,
    binding: Option<&Binding>,
    message: &str,
    reason: &str,
) -> ApiError {
    let msg = match binding {
        Some(b) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {message}",
            policy.name, b.name
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {message}",
            policy.name
        ),
    };
    let mut e = ApiError::forbidden(&cx.req.gr, cx.display_name, &msg);
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
