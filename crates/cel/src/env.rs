//! The declarations an admission expression is compiled against (kube's
//! admission CEL environment): variables and their types, kube's
//! `kubernetes.AdmissionRequest` and `kubernetes.Namespace` object types,
//! the authorizer types, the composited `variables`, and the result types
//! each kind of expression must have.

use crate::library::authz::Kind;
use crate::schema::Schema;
use crate::types::{ObjectTy, Ty};
use serde_json::Value as Json;
use std::sync::Arc;

/// The static type of a variable or an expression's result.
#[derive(Debug, Clone)]
pub struct Type(Ty);

impl Type {
    pub(crate) fn of(t: Ty) -> Type {
        Type(t)
    }

    /// `dyn`: anything, checked at evaluation.
    pub fn dynamic() -> Type {
        Type(Ty::Dyn)
    }

    /// The type of data validated by a structural (OpenAPI v3) schema;
    /// `resource_root` when it is a whole object (`apiVersion`, `kind`,
    /// `metadata.name` and `metadata.generateName` always declared).
    pub fn from_schema(schema: &Json, resource_root: bool) -> Type {
        let mut s = Schema::from_json(schema);
        // kube ignores x-kubernetes-preserve-unknown-fields when typing:
        // undeclared fields are undefined
        clear_preserve_unknown(&mut s);
        Type(Ty::Schema(Arc::new(s), resource_root))
    }

    /// kube's `kubernetes.AdmissionRequest` (`BuildRequestType`).
    pub fn admission_request() -> Type {
        let s = Ty::Str;
        let gvk = object(
            "kubernetes.GroupVersionKind",
            &[("group", Ty::Str), ("version", Ty::Str), ("kind", Ty::Str)],
        );
        let gvr = object(
            "kubernetes.GroupVersionResource",
            &[
                ("group", Ty::Str),
                ("version", Ty::Str),
                ("resource", Ty::Str),
            ],
        );
        let strings = Ty::List(Box::new(Ty::Str));
        let user = object(
            "kubernetes.UserInfo",
            &[
                ("username", s.clone()),
                ("uid", s.clone()),
                ("groups", strings.clone()),
                ("extra", Ty::Map(Box::new(strings))),
            ],
        );
        Type(object(
            "kubernetes.AdmissionRequest",
            &[
                ("kind", gvk.clone()),
                ("resource", gvr.clone()),
                ("subResource", s.clone()),
                ("requestKind", gvk),
                ("requestResource", gvr),
                ("requestSubResource", s.clone()),
                ("name", s.clone()),
                ("namespace", s.clone()),
                ("operation", s),
                ("userInfo", user),
                ("dryRun", Ty::Bool),
                ("options", Ty::Dyn),
            ],
        ))
    }

    /// kube's `kubernetes.Namespace` (`BuildNamespaceType`).
    pub fn namespace() -> Type {
        let strings = Ty::List(Box::new(Ty::Str));
        let str_map = Ty::Map(Box::new(Ty::Str));
        let condition = object(
            "kubernetes.NamespaceCondition",
            &[
                ("status", Ty::Str),
                ("type", Ty::Str),
                ("lastTransitionTime", Ty::Timestamp),
                ("message", Ty::Str),
                ("reason", Ty::Str),
            ],
        );
        let metadata = object(
            "kubernetes.NamespaceMetadata",
            &[
                ("name", Ty::Str),
                ("generateName", Ty::Str),
                ("namespace", Ty::Str),
                ("labels", str_map.clone()),
                ("annotations", str_map),
                ("UID", Ty::Str),
                ("creationTimestamp", Ty::Timestamp),
                ("deletionGracePeriodSeconds", Ty::Int),
                ("deletionTimestamp", Ty::Timestamp),
                ("generation", Ty::Int),
                ("resourceVersion", Ty::Str),
                ("finalizers", strings.clone()),
            ],
        );
        Type(object(
            "kubernetes.Namespace",
            &[
                ("metadata", metadata),
                (
                    "spec",
                    object("kubernetes.NamespaceSpec", &[("finalizers", strings)]),
                ),
                (
                    "status",
                    object(
                        "kubernetes.NamespaceStatus",
                        &[
                            ("conditions", Ty::List(Box::new(condition))),
                            ("phase", Ty::Str),
                        ],
                    ),
                ),
            ],
        ))
    }

    /// `kubernetes.authorization.Authorizer`.
    pub fn authorizer() -> Type {
        Type(Ty::Authz(Kind::Authorizer))
    }

    /// `kubernetes.authorization.ResourceCheck` (`authorizer.requestResource`).
    pub fn resource_check() -> Type {
        Type(Ty::Authz(Kind::ResourceCheck))
    }

    /// cel-go's rendering of the type (`bool`, `list(string)`,
    /// `map(string, dyn)`, `kubernetes.AdmissionRequest`).
    pub fn name(&self) -> String {
        type_string(&self.0)
    }
}

fn clear_preserve_unknown(s: &mut Schema) {
    s.preserve_unknown = false;
    for (_, p) in &mut s.properties {
        clear_preserve_unknown(Arc::make_mut(p));
    }
    if let Some(i) = &mut s.items {
        clear_preserve_unknown(Arc::make_mut(i));
    }
    if let Some(a) = &mut s.additional_properties {
        clear_preserve_unknown(Arc::make_mut(a));
    }
}

fn object(name: &str, fields: &[(&str, Ty)]) -> Ty {
    Ty::Object(Arc::new(ObjectTy {
        name: name.to_string(),
        fields: fields
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect(),
        open: false,
    }))
}

fn type_string(t: &Ty) -> String {
    match t.resolve() {
        Ty::List(el) => format!("list({})", type_string(&el)),
        Ty::Map(v) => format!("map(string, {})", type_string(&v)),
        Ty::Schema(..) => "object".to_string(),
        Ty::Object(o) => o.name.clone(),
        Ty::Optional(inner) => format!("optional_type({})", type_string(&inner)),
        Ty::Opaque => "type".to_string(),
        other => other.name().to_string(),
    }
}

/// What an expression must evaluate to (kube's `ReturnTypes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returns {
    /// Anything (variables).
    Any,
    /// `bool` (validations, matchConditions).
    Bool,
    /// `string` (messageExpression).
    String,
    /// `string` or `null` (auditAnnotations' valueExpression).
    StringOrNull,
    /// `Object` (a MutatingAdmissionPolicy's applyConfiguration).
    Object,
    /// `list(JSONPatch)` (a MutatingAdmissionPolicy's jsonPatch).
    JsonPatches,
}

impl Returns {
    /// kube's `must evaluate to ...` error when `t` is not wanted.
    pub(crate) fn accepts(self, t: &Type) -> Result<(), String> {
        let got = t.0.resolve();
        let ok = match self {
            Returns::Any => true,
            Returns::Bool => matches!(got, Ty::Bool),
            Returns::String => matches!(got, Ty::Str),
            Returns::StringOrNull => matches!(got, Ty::Str | Ty::Null),
            Returns::Object => matches!(&got, Ty::Object(o) if o.name == "Object"),
            Returns::JsonPatches => matches!(&got, Ty::List(el)
                if matches!(el.resolve(), Ty::Object(o) if o.name == crate::eval::JSON_PATCH)),
        };
        if ok {
            return Ok(());
        }
        let want = match self {
            Returns::Bool => "must evaluate to bool",
            Returns::String => "must evaluate to string",
            Returns::Object => "must evaluate to Object",
            Returns::JsonPatches => "must evaluate to list(JSONPatch)",
            _ => "must evaluate to one of [string null_type]",
        };
        Err(format!("{want} but got {}", t.name()))
    }
}

/// Declared variables, in declaration order (a later one shadows).
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: Vec<(String, Ty)>,
    /// kube's `HasPatchTypes`: `Object{...}` and `JSONPatch{...}`.
    patch_types: bool,
    /// `variables.<name>`: the composited variables' result types.
    composited: Option<Vec<(String, Ty)>>,
    /// `ext.Bindings`: the `cel.bind` macro.
    bindings: bool,
}

impl Env {
    /// No variables.
    pub fn new() -> Env {
        Env::default()
    }

    /// Declares `name` (a dotted name such as `authorizer.requestResource`
    /// is a qualified variable) of type `t`.
    pub fn declare(&mut self, name: &str, t: Type) {
        self.vars.push((name.to_string(), t.0));
    }

    /// Declares the mutation types (kube's `HasPatchTypes`): `Object`,
    /// `Object.<field path>` and `JSONPatch` can be constructed.
    pub fn declare_patch_types(&mut self) {
        self.patch_types = true;
    }

    pub(crate) fn patch_types(&self) -> bool {
        self.patch_types
    }

    /// Adds cel-go's `ext.Bindings` library: the `cel.bind(var, init,
    /// body)` macro (kube's DRA selector environment has it).
    pub fn declare_bindings(&mut self) {
        self.bindings = true;
    }

    /// The parser for this environment's macros.
    pub(crate) fn parser(&self) -> cel::parser::Parser {
        if self.bindings {
            crate::macros::parser_with_bindings()
        } else {
            crate::macros::parser()
        }
    }

    /// Declares `variables` (kube's `kubernetes.variables` object), empty
    /// until variables are added.
    pub fn declare_variables(&mut self) {
        self.composited.get_or_insert_with(Vec::new);
    }

    /// Adds `variables.<name>` of type `t` (dyn for one that did not
    /// compile).
    pub fn add_variable(&mut self, name: &str, t: Option<Type>) {
        let t = t.map(|t| t.0).unwrap_or(Ty::Dyn);
        let list = self.composited.get_or_insert_with(Vec::new);
        list.retain(|(n, _)| n != name);
        list.push((name.to_string(), t));
    }

    pub(crate) fn vars(&self) -> Vec<(String, Ty)> {
        let mut v = self.vars.clone();
        if let Some(c) = &self.composited {
            v.push((
                "variables".into(),
                Ty::Object(Arc::new(ObjectTy {
                    name: "kubernetes.variables".into(),
                    fields: c.clone(),
                    open: false,
                })),
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Expression;

    fn env() -> Env {
        let mut e = Env::new();
        e.declare("object", Type::dynamic());
        e.declare("oldObject", Type::dynamic());
        e.declare("request", Type::admission_request());
        e.declare("namespaceObject", Type::namespace());
        e.declare("authorizer", Type::authorizer());
        e.declare("authorizer.requestResource", Type::resource_check());
        e.declare_variables();
        e
    }

    fn compile(src: &str, r: Returns) -> Result<String, String> {
        Expression::compile_checked(src, &env(), r).map(|(_, t)| t.name())
    }

    #[test]
    fn undeclared_references_are_kube_compile_errors() {
        assert_eq!(
            compile("x == 1", Returns::Bool),
            Err("compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x == 1\n | ^".into())
        );
        assert_eq!(
            compile("request.foo == 'a'", Returns::Bool),
            Err("compilation failed: ERROR: <input>:1:8: undefined field 'foo'\n | request.foo == 'a'\n | .......^".into())
        );
        assert!(compile("namespaceObject.metadata.UID == ''", Returns::Bool).is_ok());
    }

    #[test]
    fn result_types_as_kube_words_them() {
        assert_eq!(
            compile("1", Returns::Bool),
            Err("must evaluate to bool but got int".into())
        );
        assert_eq!(
            compile("object.spec", Returns::Bool),
            Err("must evaluate to bool but got dyn".into())
        );
        assert_eq!(
            compile("request.userInfo.groups", Returns::String),
            Err("must evaluate to string but got list(string)".into())
        );
        assert_eq!(
            compile("true", Returns::StringOrNull),
            Err("must evaluate to one of [string null_type] but got bool".into())
        );
        assert!(compile("object.metadata.name + '!'", Returns::String).is_ok());
        assert!(compile("'!' + object.metadata.name", Returns::String).is_ok());
        assert!(compile("null", Returns::StringOrNull).is_ok());
        assert_eq!(compile("object.x", Returns::Any), Ok("dyn".into()));
    }

    #[test]
    fn authorizer_calls_type_check() {
        let ok = "authorizer.group('').resource('secrets').namespace('a').check('get').allowed()";
        assert!(compile(ok, Returns::Bool).is_ok());
        assert!(compile(
            "authorizer.requestResource.check('get').allowed()",
            Returns::Bool
        )
        .is_ok());
        assert!(compile(
            "authorizer.path('/x').check('get').reason() == ''",
            Returns::Bool
        )
        .is_ok());
        let bad = compile(
            "authorizer.resource('x').check('get').allowed()",
            Returns::Bool,
        );
        assert!(bad.is_err_and(|e| e.contains("found no matching overload for 'resource'")));
        let mut plain = Env::new();
        plain.declare("object", Type::dynamic());
        let e = Expression::compile_checked(
            "authorizer.path('/x').check('get').allowed()",
            &plain,
            Returns::Bool,
        );
        assert!(e.is_err_and(|e| e.contains("undeclared reference to 'authorizer'")));
    }

    #[test]
    fn composited_variables_are_typed_by_their_expressions() {
        let mut e = env();
        let (_, t) =
            Expression::compile_checked("object.spec.replicas > 1", &e, Returns::Any).unwrap();
        e.add_variable("big", Some(t));
        assert!(Expression::compile_checked("variables.big", &e, Returns::Bool).is_ok());
        let u = Expression::compile_checked("variables.nope", &e, Returns::Any);
        assert!(u.is_err_and(|m| m.contains("undefined field 'nope'")));
    }

    #[test]
    fn cel_bind_needs_the_bindings_library() {
        let mut e = Env::new();
        e.declare("object", Type::dynamic());
        let src = "cel.bind(x, object.a, x == 1 || x == 2)";
        let plain = Expression::compile_checked(src, &e, Returns::Bool);
        assert!(plain.is_err_and(|m| m.contains("undeclared reference to 'cel'")));
        e.declare_bindings();
        assert!(Expression::compile_checked(src, &e, Returns::Bool).is_ok());
        assert_eq!(
            Expression::compile_checked("cel.bind(x, 1, x)", &e, Returns::Any)
                .map(|(_, t)| t.name()),
            Ok("int".into())
        );
        let bad = Expression::compile_checked("cel.bind(a.b, 1, true)", &e, Returns::Bool);
        assert_eq!(
            bad.err(),
            Some("compilation failed: ERROR: <input>:1:11: cel.bind() variable names must be simple identifiers\n | cel.bind(a.b, 1, true)\n | ..........^".into())
        );
    }

    #[test]
    fn typed_objects_report_undefined_fields() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
            "metadata": {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}},
            "kind": {"type": "string"}, "apiVersion": {"type": "string"}}});
        let mut e = env();
        e.declare("object", Type::from_schema(&schema, true));
        assert_eq!(
            Expression::type_check("object.spec.foo == 1", &e),
            Some("ERROR: <input>:1:12: undefined field 'foo'\n | object.spec.foo == 1\n | ...........^".into())
        );
        assert_eq!(Expression::type_check("object.spec.replicas > 1", &e), None);
    }
}
