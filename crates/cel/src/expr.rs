//! Standalone CEL expressions over JSON variables, as admission policies
//! (ValidatingAdmissionPolicy) use them: compiled once (parsed, and
//! type-checked against an [`Env`] of declared variables as kube's
//! admission compiler does), evaluated per request with kube's per-call
//! cost limit.

use crate::check::{render_parse_errors, Checker};
use crate::eval::{EvalError, Evaluator};
use crate::library::authz::{Authorize, AuthzValue, Check, User};
use crate::value::{from_json, Key, MapData, Value};
use cel::IdedExpr;
use serde_json::Value as Json;
use std::sync::Arc;

pub use crate::env::{Env, Returns, Type};

/// A parsed expression.
#[derive(Debug, Clone)]
pub struct Expression {
    program: IdedExpr,
}

/// What an expression evaluated to, as far as a policy cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// Any other value, by CEL type name.
    Other(String),
}

/// Why a mutation expression gave no mutation.
#[derive(Debug, Clone, PartialEq)]
pub enum MutationError {
    /// Its evaluation failed (kube wraps it: `expression '...' resulted
    /// in error: ...`).
    Eval(String),
    /// Its result is not a mutation (kube's words, as they are).
    Result(String),
}

/// Variables bound for one evaluation (JSON values and earlier results).
#[derive(Debug, Clone, Default)]
pub struct Activation {
    vars: Vec<(String, Value)>,
    composited: MapData,
}

impl Activation {
    /// An empty activation.
    pub fn new() -> Activation {
        Activation::default()
    }

    /// Binds `name` to the JSON value `v` (untyped: no schema).
    pub fn bind(&mut self, name: &str, v: &Json) {
        self.vars
            .push((name.to_string(), from_json(v, None, false)));
    }

    /// Binds `authorizer` (and `authorizer.requestResource` when
    /// `request` is given) to `authz` deciding for `user`.
    pub fn bind_authorizer(
        &mut self,
        authz: Arc<dyn Authorize>,
        user: User,
        request: Option<Check>,
    ) {
        let v = Value::Authz(Arc::new(AuthzValue::authorizer(authz, user, request)));
        self.vars.push(("authorizer".to_string(), v));
    }

    /// Evaluates `expr` and binds its result as `variables.<name>`; an
    /// evaluation error is returned and the variable stays unbound.
    pub fn bind_variable(&mut self, name: &str, expr: &Expression) -> Result<(), String> {
        let v = self.eval_value(expr)?;
        self.composited.insert(Key::Str(name.into()), v);
        Ok(())
    }

    fn eval_value(&self, expr: &Expression) -> Result<Value, String> {
        let mut vars: Vec<(&str, Value)> = self
            .vars
            .iter()
            .map(|(n, v)| (n.as_str(), v.clone()))
            .collect();
        vars.push((
            "variables",
            Value::Map(Arc::new(self.composited.clone()), false),
        ));
        let mut ev = Evaluator::new(vars, crate::PER_CALL_LIMIT);
        ev.eval(&expr.program).map_err(|e| match e {
            EvalError::Runtime(m) => m,
            EvalError::CostLimit => e.to_string(),
        })
    }

    /// Evaluates a MutatingAdmissionPolicy's `applyConfiguration`
    /// expression: the `Object{...}` it builds as JSON, or kube's error
    /// (the evaluation's, or `type mismatch: unexpected type name ...`).
    pub fn eval_apply_configuration(&self, expr: &Expression) -> Result<Json, MutationError> {
        let v = self.eval_value(expr).map_err(MutationError::Eval)?;
        let shape = MutationError::Result;
        let Value::Object(o) = &v else {
            return Err(shape(format!(
                "unsupported return type from ApplyConfiguration expression: {}",
                v.type_name()
            )));
        };
        let mut errs = Vec::new();
        check_type_names(&v, &mut vec![o.type_name.to_string()], &mut errs);
        if !errs.is_empty() {
            return Err(shape(format!("type mismatch: {}", errs.join("\n"))));
        }
        v.to_json()
            .map_err(|e| shape(format!("invalid return type: {e}")))
    }

    /// Evaluates a MutatingAdmissionPolicy's `jsonPatch` expression: the
    /// operations as RFC 6902 JSON (`op`, `path`, `from` when set, `value`
    /// when set), or kube's error.
    pub fn eval_json_patch(&self, expr: &Expression) -> Result<Vec<Json>, MutationError> {
        let v = self.eval_value(expr).map_err(MutationError::Eval)?;
        let shape = MutationError::Result;
        let Value::List(items, _) = &v else {
            return Err(shape(
                "type mismatch: JSONPatchType.expression should evaluate to array".into(),
            ));
        };
        let mut ops = Vec::with_capacity(items.len());
        for item in items.iter() {
            let Value::Object(op) = item else {
                return Err(shape(format!(
                    "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of {}",
                    item.type_name()
                )));
            };
            if &*op.type_name != crate::eval::JSON_PATCH {
                return Err(shape(format!(
                    "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: unable to convert to {}",
                    op.type_name
                )));
            }
            let text = |k: &str| match op.fields.get(k) {
                Some(Value::Str(s)) => s.to_string(),
                _ => String::new(),
            };
            let mut out = serde_json::Map::new();
            out.insert("op".into(), Json::String(text("op")));
            out.insert("path".into(), Json::String(text("path")));
            let from = text("from");
            if !from.is_empty() {
                out.insert("from".into(), Json::String(from));
            }
            if let Some(value) = op.fields.get("value") {
                if let Value::Object(o) = value {
                    let mut errs = Vec::new();
                    check_type_names(value, &mut vec![o.type_name.to_string()], &mut errs);
                    if !errs.is_empty() {
                        return Err(shape(format!("type mismatch: {}", errs.join("\n"))));
                    }
                }
                let json = value.to_json().map_err(|e| {
                    shape(format!("JSONPath valueExpression evaluated to a type that could not marshal to JSON: {e}"))
                })?;
                out.insert("value".into(), json);
            }
            ops.push(Json::Object(out));
        }
        Ok(ops)
    }

    /// Evaluates `expr` with these bindings.
    pub fn eval(&self, expr: &Expression) -> Result<Outcome, String> {
        Ok(match self.eval_value(expr)? {
            Value::Bool(b) => Outcome::Bool(b),
            Value::Str(s) => Outcome::Str(s.to_string()),
            other => Outcome::Other(other.type_name().to_string()),
        })
    }
}

/// kube's `CheckTypeNamesMatchFieldPathNames`: an object under field
/// `f` of an `Object.x` must be an `Object.x.f` (lists and maps in between
/// are unnamed).
fn check_type_names(v: &Value, path: &mut Vec<String>, errs: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            let want = path.join(".");
            if *o.type_name != *want {
                errs.push(format!(
                    "unexpected type name {:?}, expected {want:?}, which matches field name path from root Object type",
                    o.type_name
                ));
            }
            for (k, f) in &o.fields {
                path.push(k.to_string());
                check_type_names(f, path, errs);
                path.pop();
            }
        }
        Value::List(items, _) => {
            for i in items.iter() {
                check_type_names(i, path, errs);
            }
        }
        Value::Map(m, _) => {
            for i in m.values() {
                check_type_names(i, path, errs);
            }
        }
        _ => {}
    }
}

impl Expression {
    /// Parses and type-checks `src` in `env`, wanting a result of
    /// `returns`: the expression and its type, or kube's compile error
    /// (`compilation failed: ERROR: <input>:1:1: ...`, `must evaluate to
    /// bool but got int`).
    pub fn compile_checked(
        src: &str,
        env: &Env,
        returns: Returns,
    ) -> Result<(Expression, Type), String> {
        Expression::compile_costed(src, env, returns).map(|(e, t, _)| (e, t))
    }

    /// [`Expression::compile_checked`], also answering the expression's
    /// estimated worst-case cost (cel-go's `EstimateCost` maximum, over the
    /// sizes the declared types bound).
    pub fn compile_costed(
        src: &str,
        env: &Env,
        returns: Returns,
    ) -> Result<(Expression, Type, u64), String> {
        let (program, info) = env
            .parser()
            .parse_with_source_info(src)
            .map_err(|errs| format!("compilation failed: {}", render_parse_errors(src, &errs)))?;
        let mut checker = Checker::new(env.vars());
        checker.patch_types = env.patch_types();
        let est = checker.check_root(&program);
        if !checker.errors.is_empty() {
            return Err(format!(
                "compilation failed: {}",
                checker.render(&info, src)
            ));
        }
        let out = Type::of(est.ty);
        returns.accepts(&out)?;
        Ok((Expression { program }, out, est.cost))
    }

    /// Type-checks `src` in `env` without a wanted result type (kube's
    /// type checker): the rendered issues, if any.
    pub fn type_check(src: &str, env: &Env) -> Option<String> {
        let (program, info) = match env.parser().parse_with_source_info(src) {
            Ok(p) => p,
            Err(errs) => return Some(render_parse_errors(src, &errs)),
        };
        let mut checker = Checker::new(env.vars());
        checker.patch_types = env.patch_types();
        checker.check_root(&program);
        if checker.errors.is_empty() {
            None
        } else {
            Some(checker.render(&info, src))
        }
    }

    /// Parses `src`; a syntax error is rendered as cel-go renders it.
    pub fn compile(src: &str) -> Result<Expression, String> {
        crate::macros::parser()
            .parse_with_source_info(src)
            .map(|(program, _)| Expression { program })
            .map_err(|errs| render_parse_errors(src, &errs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_over_json_and_variables() {
        let mut act = Activation::new();
        act.bind("object", &serde_json::json!({"spec": {"replicas": 10}}));
        let e = Expression::compile("object.spec.replicas").unwrap();
        act.bind_variable("r", &e).unwrap();
        let check = Expression::compile("variables.r <= 5").unwrap();
        assert_eq!(act.eval(&check), Ok(Outcome::Bool(false)));
        assert!(Expression::compile("object.spec.(").is_err());
        let bad = Expression::compile("object.nope").unwrap();
        assert_eq!(act.eval(&bad), Err("no such key: nope".into()));
    }

    fn patch_env() -> Env {
        let mut env = Env::new();
        env.declare("object", Type::dynamic());
        env.declare_patch_types();
        env
    }

    #[test]
    fn apply_configurations_build_objects() {
        let env = patch_env();
        let src = r#"Object{spec: Object.spec{replicas: 3, template: Object.spec.template{metadata: Object.spec.template.metadata{labels: {"a": "b"}}}}}"#;
        let (e, t) = Expression::compile_checked(src, &env, Returns::Object).unwrap();
        assert_eq!(t.name(), "Object");
        let mut act = Activation::new();
        act.bind("object", &serde_json::json!({}));
        assert_eq!(
            act.eval_apply_configuration(&e).unwrap(),
            serde_json::json!({"spec": {"replicas": 3, "template": {"metadata": {"labels": {"a": "b"}}}}})
        );
        // A nested type must be named by its field path.
        let (e, _) = Expression::compile_checked(
            "Object{spec: Object.specx{replicas: 1}}",
            &env,
            Returns::Object,
        )
        .unwrap();
        assert_eq!(
            act.eval_apply_configuration(&e).unwrap_err(),
            MutationError::Result(r#"type mismatch: unexpected type name "Object.specx", expected "Object.spec", which matches field name path from root Object type"#.into())
        );
        // Without the mutation types, and with the wrong result.
        let mut plain = Env::new();
        plain.declare("object", Type::dynamic());
        let err = Expression::compile_checked("Object{}", &plain, Returns::Any).unwrap_err();
        assert!(err.contains("undeclared reference to 'Object'"), "{err}");
        assert_eq!(
            Expression::compile_checked("object.spec", &env, Returns::Object).unwrap_err(),
            "must evaluate to Object but got dyn"
        );
    }

    #[test]
    fn json_patches_are_checked_and_evaluated() {
        let env = patch_env();
        let src = r#"[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b~c"), value: "x"}, JSONPatch{op: "remove", path: "/spec/x"}]"#;
        let (e, t) = Expression::compile_checked(src, &env, Returns::JsonPatches).unwrap();
        assert_eq!(t.name(), "list(JSONPatch)");
        let act = Activation::new();
        assert_eq!(
            act.eval_json_patch(&e).unwrap(),
            vec![
                serde_json::json!({"op": "add", "path": "/metadata/labels/a~1b~0c", "value": "x"}),
                serde_json::json!({"op": "remove", "path": "/spec/x"}),
            ]
        );
        let err = Expression::compile_checked(
            r#"[JSONPatch{op: 1, path: "/a"}]"#,
            &env,
            Returns::JsonPatches,
        )
        .unwrap_err();
        assert!(
            err.contains("expected type of field 'op' is 'string' but provided type is 'int'"),
            "{err}"
        );
        let err =
            Expression::compile_checked(r#"[JSONPatch{nope: "x"}]"#, &env, Returns::JsonPatches)
                .unwrap_err();
        assert!(err.contains("undefined field 'nope'"), "{err}");
        assert_eq!(
            Expression::compile_checked("[1]", &env, Returns::JsonPatches).unwrap_err(),
            "must evaluate to list(JSONPatch) but got list(int)"
        );
        // A mapped list of patches and an Object value.
        let (e, _) = Expression::compile_checked(
            r#"object.items.map(i, JSONPatch{op: "add", path: "/x/-", value: Object.x{n: i}})"#,
            &env,
            Returns::Any,
        )
        .unwrap();
        let mut act = Activation::new();
        act.bind("object", &serde_json::json!({"items": [1]}));
        assert_eq!(
            act.eval_json_patch(&e).unwrap(),
            vec![serde_json::json!({"op": "add", "path": "/x/-", "value": {"n": 1}})]
        );
    }

    struct OnlySecrets;

    impl Authorize for OnlySecrets {
        fn authorize(&self, c: &Check) -> crate::library::authz::Decision {
            crate::library::authz::Decision {
                allowed: c.resource == "secrets" && c.user.name == "alice",
                reason: String::new(),
                error: None,
            }
        }
    }

    #[test]
    fn authorizer_checks_cost_kube_s_fixed_price() {
        let mut act = Activation::new();
        let user = User {
            name: "alice".into(),
            ..User::default()
        };
        let request = Check {
            resource: "secrets".into(),
            namespace: "ns".into(),
            ..Check::default()
        };
        act.bind_authorizer(Arc::new(OnlySecrets), user, Some(request));
        let e = Expression::compile("authorizer.requestResource.check('get').allowed()").unwrap();
        assert_eq!(act.eval(&e), Ok(Outcome::Bool(true)));
        let e = Expression::compile("authorizer.group('').resource('pods').check('get').allowed()")
            .unwrap();
        assert_eq!(act.eval(&e), Ok(Outcome::Bool(false)));
        // two checks fit in the per-call limit, three do not
        let three = "authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()";
        let e = Expression::compile(three).unwrap();
        assert_eq!(
            act.eval(&e),
            Err("operation cancelled: actual cost limit exceeded".into())
        );
    }
}
