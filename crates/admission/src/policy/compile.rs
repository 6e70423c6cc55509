//! The CEL environment of a ValidatingAdmissionPolicy's expressions, as
//! kube's admission compiler declares it (`plugin/cel/compile.go`): `object`
//! and `oldObject` (dyn unless typed by the type checker), `request`
//! (`kubernetes.AdmissionRequest`), `namespaceObject`
//! (`kubernetes.Namespace`), `params` when the policy has a `paramKind`,
//! `authorizer` and `authorizer.requestResource` except in message
//! expressions, and the composited `variables`, each typed by its
//! expression's result.

use keelson_cel::expr::{Env, Expression, Returns, Type};

/// How `object`, `oldObject` and `params` are typed.
#[derive(Debug, Clone)]
pub(crate) struct Decls {
    /// The policy has a `paramKind` (`params` is declared).
    pub(crate) has_params: bool,
    pub(crate) object: Type,
    pub(crate) params: Type,
    /// Only `authorizer` (kube's type checker declares no requestResource).
    pub(crate) authorizer_only: bool,
}

impl Decls {
    /// The declarations of evaluation: everything dyn.
    pub(crate) fn untyped(has_params: bool) -> Decls {
        Decls {
            has_params,
            object: Type::dynamic(),
            params: Type::dynamic(),
            authorizer_only: false,
        }
    }
}

/// One policy's compiler: the environments with and without the
/// authorizer, sharing the composited variables.
pub(crate) struct PolicyCompiler {
    with_authorizer: Env,
    without_authorizer: Env,
}

fn base(d: &Decls, authorizer: bool, composited: bool) -> Env {
    let mut env = Env::new();
    env.declare("object", d.object.clone());
    env.declare("oldObject", d.object.clone());
    env.declare("namespaceObject", Type::namespace());
    env.declare("request", Type::admission_request());
    if d.has_params {
        env.declare("params", d.params.clone());
    }
    if authorizer {
        env.declare("authorizer", Type::authorizer());
        if !d.authorizer_only {
            env.declare("authorizer.requestResource", Type::resource_check());
        }
    }
    if composited {
        env.declare_variables();
    }
    env
}

impl PolicyCompiler {
    /// A compiler for `decls`; `composited` declares `variables` (kube's
    /// runtime always does; its validation only when the policy has
    /// variables).
    pub(crate) fn new(decls: &Decls, composited: bool) -> PolicyCompiler {
        PolicyCompiler {
            with_authorizer: base(decls, true, composited),
            without_authorizer: base(decls, false, composited),
        }
    }

    /// Compiles variable `name` and adds it to `variables` (dyn when it
    /// does not compile).
    pub(crate) fn add_variable(&mut self, name: &str, src: &str) -> Result<Expression, String> {
        let r = Expression::compile_checked(src, &self.with_authorizer, Returns::Any);
        let ty = r.as_ref().ok().map(|(_, t)| t.clone());
        self.with_authorizer.add_variable(name, ty.clone());
        self.without_authorizer.add_variable(name, ty);
        r.map(|(e, _)| e)
    }

    /// Compiles `src` wanting `returns`: kube's error detail on failure.
    pub(crate) fn compile(
        &self,
        src: &str,
        returns: Returns,
        authorizer: bool,
    ) -> Result<Expression, String> {
        Expression::compile_checked(src, self.env(authorizer), returns).map(|(e, _)| e)
    }

    /// Compiles a MutatingAdmissionPolicy mutation wanting `returns`:
    /// the authorizer's environment with kube's patch types (`Object{}`,
    /// `JSONPatch{}`).
    pub(crate) fn compile_mutation(
        &self,
        src: &str,
        returns: Returns,
    ) -> Result<Expression, String> {
        let mut env = self.with_authorizer.clone();
        env.declare_patch_types();
        Expression::compile_checked(src, &env, returns).map(|(e, _)| e)
    }

    /// Type-checks `src` (any result type): the rendered issues.
    pub(crate) fn type_check(&self, src: &str, authorizer: bool) -> Option<String> {
        Expression::type_check(src, self.env(authorizer))
    }

    fn env(&self, authorizer: bool) -> &Env {
        if authorizer {
            &self.with_authorizer
        } else {
            &self.without_authorizer
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_expressions_have_no_authorizer() {
        let c = PolicyCompiler::new(&Decls::untyped(false), true);
        let src = "authorizer.path('/x').check('get').reason()";
        assert!(c.compile(src, Returns::String, true).is_ok());
        let e = c.compile(src, Returns::String, false).unwrap_err();
        assert!(e.starts_with(
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer'"
        ));
        let e = c.compile("params.x == 1", Returns::Bool, true).unwrap_err();
        assert!(e.contains("undeclared reference to 'params'"));
    }

    #[test]
    fn variables_see_earlier_ones_only() {
        let mut c = PolicyCompiler::new(&Decls::untyped(true), true);
        assert!(c.add_variable("a", "variables.b").is_err());
        assert!(c.add_variable("b", "params.x").is_ok());
        assert!(c
            .compile("variables.a == variables.b", Returns::Bool, true)
            .is_ok());
    }
}
