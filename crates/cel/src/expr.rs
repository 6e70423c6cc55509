//! Standalone CEL expressions over JSON variables, as admission policies
//! (ValidatingAdmissionPolicy) use them: compiled once (parsed, and
//! type-checked against an [`Env`] of declared variables as kube's
//! admission compiler does), evaluated per request with kube's per-call
//! cost limit.

use crate::check::{render_at, Checker};
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

    /// Evaluates `expr` with these bindings.
    pub fn eval(&self, expr: &Expression) -> Result<Outcome, String> {
        Ok(match self.eval_value(expr)? {
            Value::Bool(b) => Outcome::Bool(b),
            Value::Str(s) => Outcome::Str(s.to_string()),
            other => Outcome::Other(other.type_name().to_string()),
        })
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
        let (program, info) = crate::macros::parser()
            .parse_with_source_info(src)
            .map_err(|_| match Expression::compile(src) {
                Err(e) => format!("compilation failed: {e}"),
                Ok(_) => "compilation failed".to_string(),
            })?;
        let mut checker = Checker::new(env.vars());
        let est = checker.check_root(&program);
        if !checker.errors.is_empty() {
            return Err(format!(
                "compilation failed: {}",
                checker.render(&info, src)
            ));
        }
        let out = Type::of(est.ty);
        returns.accepts(&out)?;
        Ok((Expression { program }, out))
    }

    /// Type-checks `src` in `env` without a wanted result type (kube's
    /// type checker): the rendered issues, if any.
    pub fn type_check(src: &str, env: &Env) -> Option<String> {
        let (program, info) = match crate::macros::parser().parse_with_source_info(src) {
            Ok(p) => p,
            Err(_) => return Expression::compile(src).err(),
        };
        let mut checker = Checker::new(env.vars());
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
            .map_err(|errs| {
                errs.errors
                    .iter()
                    .map(|e| {
                        render_at(
                            src,
                            e.pos.0.max(1) as usize,
                            (e.pos.1 - 1).max(0) as usize,
                            &e.msg,
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
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
