//! Compile-time checks and the estimated cost of one expression.
//!
//! A light type checker over the parsed AST: it knows the type of `self`
//! from the schema, so it reports kube's `undefined field` and
//! `undeclared reference` errors and a rule that cannot be a bool, and it
//! estimates the worst-case cost from the schema's `maxItems`, `maxLength`
//! and `maxProperties` (or, where unbounded, from the 3 MiB request limit,
//! as kube does). Types it cannot infer are `Dyn` and never rejected.

use crate::escape::escape;
use crate::library::authz;
use crate::library::cost::{self, traversal as traversal_cost};
use crate::library::string_format;
use crate::schema::Schema;
pub use crate::types::{max_cardinality, Est, Ty};
use crate::types::{schema_size, ObjectTy};
use cel::common::ast::{EntryExpr, Expr, LiteralValue, SourceInfo};
use cel::IdedExpr;
use std::collections::HashMap;
use std::sync::Arc;

/// A compile error at a node.
#[derive(Debug)]
pub struct CheckError {
    pub expr_id: u64,
    pub msg: String,
}

/// Walks one expression.
pub struct Checker {
    vars: Vec<(String, Ty)>,
    pub errors: Vec<CheckError>,
    pub uses_old_self: bool,
    /// The type of each checked node, for the `format` validator.
    types: HashMap<u64, Ty>,
    /// Issues of AST validators, reported only when type-checking passed.
    validator_errors: Vec<CheckError>,
    /// `Object`, `Object.<path>` and `JSONPatch` can be constructed
    /// (a MutatingAdmissionPolicy's mutations).
    pub patch_types: bool,
}

const KNOWN_GLOBALS: &[&str] = &[
    "size",
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "dyn",
    "type",
    "matches",
    "timestamp",
    "duration",
    "quantity",
    "isQuantity",
    "url",
    "isURL",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "semver",
    "isSemver",
    crate::macros::MAP_INSERT,
];

const KNOWN_MEMBERS: &[&str] = &[
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "find",
    "findAll",
    "lowerAscii",
    "upperAscii",
    "trim",
    "reverse",
    "replace",
    "split",
    "charAt",
    "substring",
    "indexOf",
    "lastIndexOf",
    "join",
    "format",
    "isSorted",
    "sum",
    "min",
    "max",
    "hasValue",
    "value",
    "orValue",
    "or",
    "isInteger",
    "asInteger",
    "asApproximateFloat",
    "sign",
    "add",
    "sub",
    "compareTo",
    "isGreaterThan",
    "isLessThan",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "containsIP",
    "containsCIDR",
    "ip",
    "masked",
    "prefixLength",
    "validate",
    "major",
    "minor",
    "patch",
    "getFullYear",
    "getMonth",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getDayOfYear",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
];

impl Checker {
    /// A checker with the rule's variables.
    pub fn new(vars: Vec<(String, Ty)>) -> Self {
        Checker {
            vars,
            errors: vec![],
            uses_old_self: false,
            types: HashMap::new(),
            validator_errors: vec![],
            patch_types: false,
        }
    }

    /// Checks and costs a whole expression: type errors first, then (as
    /// cel-go runs its AST validators only on a well-typed AST) the
    /// validators' issues.
    pub fn check_root(&mut self, e: &IdedExpr) -> Est {
        let est = self.check(e);
        if self.errors.is_empty() {
            self.errors.append(&mut self.validator_errors);
        }
        est
    }

    fn err(&mut self, id: u64, msg: String) {
        self.errors.push(CheckError { expr_id: id, msg });
    }

    /// Checks and costs `e`.
    pub fn check(&mut self, e: &IdedExpr) -> Est {
        let est = self.check_node(e);
        self.types.insert(e.id, est.ty.clone());
        est
    }

    fn check_node(&mut self, e: &IdedExpr) -> Est {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Est::sized(Ty::Bool, 0, 1),
                LiteralValue::Int(_) => Est::sized(Ty::Int, 0, 1),
                LiteralValue::UInt(_) => Est::sized(Ty::Uint, 0, 1),
                LiteralValue::Double(_) => Est::sized(Ty::Double, 0, 1),
                LiteralValue::Null => Est::sized(Ty::Null, 0, 1),
                LiteralValue::String(s) => Est::sized(Ty::Str, 0, s.inner().len() as u64),
                LiteralValue::Bytes(b) => Est::sized(Ty::Bytes, 0, b.inner().len() as u64),
            },
            Expr::Ident(name) => {
                if name == "oldSelf" {
                    self.uses_old_self = true;
                }
                if let Some((_, t)) = self.vars.iter().rev().find(|(n, _)| n == name) {
                    return Est::new(t.clone(), 1);
                }
                if matches!(
                    name.as_str(),
                    "int"
                        | "uint"
                        | "double"
                        | "string"
                        | "bool"
                        | "bytes"
                        | "list"
                        | "map"
                        | "null_type"
                        | "type"
                ) {
                    return Est::sized(Ty::Opaque, 1, 1);
                }
                self.err(
                    e.id,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                Est::sized(Ty::Dyn, 1, 1)
            }
            Expr::Select(sel) => {
                // a qualified variable (`authorizer.requestResource`)
                if let Expr::Ident(base) = &sel.operand.expr {
                    let qualified = format!("{base}.{}", sel.field);
                    if let Some((_, t)) = self.vars.iter().rev().find(|(n, _)| *n == qualified) {
                        let t = t.clone();
                        self.types.insert(sel.operand.id, Ty::Dyn);
                        return if sel.test {
                            Est::sized(Ty::Bool, 2, 1)
                        } else {
                            Est::new(t, 1)
                        };
                    }
                }
                let op = self.check(&sel.operand);
                let ty = self.field_type(e.id, &op.ty, &sel.field);
                if sel.test {
                    Est::sized(Ty::Bool, op.cost + 1, 1)
                } else {
                    Est::new(ty, op.cost + 1)
                }
            }
            Expr::List(l) => {
                let mut cost = 10;
                let mut elem = None;
                for el in &l.elements {
                    let est = self.check(el);
                    cost += est.cost;
                    elem.get_or_insert(est.ty);
                }
                Est::sized(
                    Ty::List(Box::new(elem.unwrap_or(Ty::Dyn))),
                    cost,
                    l.elements.len() as u64,
                )
            }
            Expr::Map(m) => {
                let mut cost = 30;
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        cost += self.check(&me.key).cost + self.check(&me.value).cost;
                    }
                }
                Est::sized(Ty::Map(Box::new(Ty::Dyn)), cost, m.entries.len() as u64)
            }
            Expr::Struct(st) => self.check_struct(e, st),
            Expr::Comprehension(c) => {
                let range = self.check(&c.iter_range);
                // one variable: the element or key; two: (index, element) or (key, value)
                let (first, second) = match range.ty.resolve() {
                    Ty::List(el) if c.iter_var2.is_some() => (Ty::Int, *el),
                    Ty::List(el) => (*el, Ty::Dyn),
                    Ty::Map(v) => (Ty::Str, *v),
                    Ty::Schema(..) => (Ty::Str, Ty::Dyn),
                    _ => (Ty::Dyn, Ty::Dyn),
                };
                let init = self.check(&c.accu_init);
                self.vars.push((c.accu_var.clone(), init.ty.clone()));
                self.vars.push((c.iter_var.clone(), first));
                if let Some(v2) = &c.iter_var2 {
                    self.vars.push((v2.clone(), second));
                }
                let cond = self.check(&c.loop_cond);
                let step = self.check(&c.loop_step);
                if c.iter_var2.is_some() {
                    self.vars.pop();
                }
                self.vars.pop();
                let result = self.check(&c.result);
                self.vars.pop();
                let per_iter = cond.cost.saturating_add(step.cost);
                let cost = range
                    .cost
                    .saturating_add(init.cost)
                    .saturating_add(range.size.saturating_mul(per_iter))
                    .saturating_add(result.cost);
                let ty = match result.ty.resolve() {
                    Ty::Bool => Ty::Bool,
                    Ty::List(_) => Ty::List(Box::new(step_elem(&step.ty))),
                    other => other,
                };
                Est::sized(ty, cost, range.size)
            }
            Expr::Call(call) => self.check_call(e, call),
            Expr::Unspecified => Est::sized(Ty::Dyn, 0, 1),
        }
    }

    /// `Type{field: value, ...}`: kube's mutation types only (`Object` and
    /// `Object.<field path>` take any field, `JSONPatch` its four).
    fn check_struct(&mut self, e: &IdedExpr, st: &cel::common::ast::StructExpr) -> Est {
        let name = st.type_name.as_str();
        let ty = if !self.patch_types {
            None
        } else if name == crate::eval::JSON_PATCH {
            Some(json_patch_type())
        } else if name == "Object" || name.starts_with("Object.") {
            Some(Ty::Object(Arc::new(ObjectTy {
                name: name.to_string(),
                fields: Vec::new(),
                open: true,
            })))
        } else {
            None
        };
        if ty.is_none() {
            self.err(
                e.id,
                format!("undeclared reference to '{name}' (in container '')"),
            );
        }
        let mut cost = 40u64;
        for entry in &st.entries {
            let EntryExpr::StructField(f) = &entry.expr else {
                continue;
            };
            let v = self.check(&f.value);
            cost = cost.saturating_add(v.cost);
            let Some(Ty::Object(o)) = &ty else { continue };
            if o.open {
                continue;
            }
            match o.fields.iter().find(|(n, _)| *n == f.field) {
                None => self.err(entry.id, format!("undefined field '{}'", f.field)),
                Some((_, want)) => {
                    let got = v.ty.resolve();
                    let want_r = want.resolve();
                    let fits = matches!(got, Ty::Dyn)
                        || matches!(want_r, Ty::Dyn)
                        || got.name() == want_r.name();
                    if !fits && !f.optional {
                        self.err(
                            entry.id,
                            format!(
                                "expected type of field '{}' is '{}' but provided type is '{}'",
                                f.field,
                                crate::env::Type::of(want.clone()).name(),
                                crate::env::Type::of(got).name()
                            ),
                        );
                    }
                }
            }
        }
        Est::sized(ty.unwrap_or(Ty::Dyn), cost, st.entries.len() as u64)
    }

    fn field_type(&mut self, id: u64, ty: &Ty, field: &str) -> Ty {
        match ty.resolve() {
            Ty::Schema(s, root) => {
                // kube's WithTypeAndObjectMeta: a resource root declares
                // apiVersion, kind and metadata.{name,generateName} unless
                // its schema already does (a built-in kind's full ObjectMeta)
                let resource = (root || s.embedded_resource) && !declares_type_and_meta(&s);
                if resource && (field == "apiVersion" || field == "kind") {
                    return Ty::Str;
                }
                if resource && field == "metadata" {
                    let meta = Schema {
                        ty: "object".into(),
                        properties: ["name", "generateName"]
                            .iter()
                            .map(|n| {
                                (
                                    n.to_string(),
                                    Arc::new(Schema {
                                        ty: "string".into(),
                                        ..Default::default()
                                    }),
                                )
                            })
                            .collect(),
                        ..Default::default()
                    };
                    return Ty::Schema(Arc::new(meta), false);
                }
                for (name, p) in &s.properties {
                    if escape(name).as_deref() == Some(field) {
                        return Ty::Schema(p.clone(), false);
                    }
                }
                if s.preserve_unknown && !resource {
                    return Ty::Dyn;
                }
                self.err(id, format!("undefined field '{field}'"));
                Ty::Dyn
            }
            Ty::Map(v) => *v,
            Ty::Object(o) => match o.fields.iter().find(|(n, _)| n == field) {
                Some((_, t)) => t.clone(),
                None if o.open => Ty::Dyn,
                None => {
                    self.err(id, format!("undefined field '{field}'"));
                    Ty::Dyn
                }
            },
            Ty::Authz(_) => {
                self.err(id, format!("undefined field '{field}'"));
                Ty::Dyn
            }
            Ty::Optional(inner) => Ty::Optional(Box::new(self.field_type(id, &inner, field))),
            Ty::Dyn => Ty::Dyn,
            other => {
                self.err(
                    id,
                    format!("type '{}' does not support field selection", other.name()),
                );
                Ty::Dyn
            }
        }
    }

    fn check_call(&mut self, e: &IdedExpr, call: &cel::common::ast::CallExpr) -> Est {
        use cel::common::ast::operators as ops;
        let name = call.func_name.as_str();
        // namespaced globals: sets.contains, format.named, optional.of, ...
        let namespaced = match call.target.as_deref() {
            Some(IdedExpr {
                expr: Expr::Ident(ns),
                ..
            }) if matches!(
                ns.as_str(),
                "sets" | "format" | "optional" | "ip" | "strings" | "math" | "jsonpatch"
            ) && !self.vars.iter().any(|(n, _)| n == ns) =>
            {
                Some(ns.clone())
            }
            _ => None,
        };
        let target = match (&call.target, &namespaced) {
            (Some(t), None) => Some(self.check(t)),
            _ => None,
        };
        let args: Vec<Est> = call.args.iter().map(|a| self.check(a)).collect();
        let operands: u64 = target
            .as_ref()
            .map(|t| t.cost)
            .unwrap_or(0)
            .saturating_add(args.iter().fold(0u64, |a, x| a.saturating_add(x.cost)));
        let sizes: Vec<u64> = target.iter().chain(args.iter()).map(|a| a.size).collect();
        let kinds: Vec<cost::Kind> = target
            .iter()
            .chain(args.iter())
            .map(|a| match a.ty.resolve() {
                Ty::Str | Ty::Bytes => cost::Kind::Text,
                Ty::List(_) => cost::Kind::List,
                _ => cost::Kind::Other,
            })
            .collect();
        let full_name = match &namespaced {
            Some(ns) => format!("{ns}.{name}"),
            None => name.to_string(),
        };
        let base = operands.saturating_add(cost::call(&full_name, &sizes, &kinds));
        let arg_size = |i: usize| args.get(i).map(|a| a.size).unwrap_or(1);
        let recv_size = target.as_ref().map(|t| t.size).unwrap_or(1);
        let ty_of = |i: usize| args.get(i).map(|a| a.ty.resolve()).unwrap_or(Ty::Dyn);

        if let Some(ns) = namespaced {
            let full = format!("{ns}.{name}");
            return match full.as_str() {
                "sets.contains" | "sets.equivalent" | "sets.intersects" => {
                    Est::sized(Ty::Bool, base, 1)
                }
                "optional.of" | "optional.ofNonZeroValue" => {
                    Est::sized(Ty::Optional(Box::new(ty_of(0))), base, arg_size(0))
                }
                "optional.none" => Est::sized(Ty::Optional(Box::new(Ty::Dyn)), base, 1),
                "ip.isCanonical" => Est::sized(Ty::Bool, base, 1),
                "strings.quote" => {
                    if !matches!(ty_of(0), Ty::Str | Ty::Dyn) || args.len() != 1 {
                        self.no_overload(e.id, &full, None, &args);
                    }
                    let size = arg_size(0).saturating_mul(2).saturating_add(2);
                    Est::sized(Ty::Str, base, size)
                }
                "jsonpatch.escapeKey" if self.patch_types => {
                    if !matches!(ty_of(0), Ty::Str | Ty::Dyn) || args.len() != 1 {
                        self.no_overload(e.id, &full, None, &args);
                    }
                    let size = arg_size(0).saturating_mul(2);
                    Est::sized(Ty::Str, base, size)
                }
                f if f.starts_with("format.") => Est::sized(Ty::Opaque, base, 1),
                _ => {
                    // cel-go: no such namespaced function, so `ns` is checked as
                    // a variable and `name` as a member function
                    if let Some(t) = call.target.as_deref() {
                        self.err(
                            t.id,
                            format!("undeclared reference to '{ns}' (in container '')"),
                        );
                    }
                    self.err(
                        e.id,
                        format!("undeclared reference to '{name}' (in container '')"),
                    );
                    Est::sized(Ty::Dyn, base, 1)
                }
            };
        }

        match name {
            // && and || cost their operands only
            ops::LOGICAL_AND | ops::LOGICAL_OR => Est::sized(Ty::Bool, operands, 1),
            ops::LOGICAL_NOT | ops::NOT_STRICTLY_FALSE => Est::sized(Ty::Bool, base, 1),
            ops::CONDITIONAL => {
                let cost = operands - args.iter().skip(1).map(|a| a.cost).min().unwrap_or(0);
                let a1 = args.get(1).cloned().unwrap_or(Est::sized(Ty::Dyn, 0, 1));
                let size = a1.size.max(arg_size(2));
                let ty = match a1.ty.resolve() {
                    Ty::Dyn | Ty::Null => args.get(2).map(|a| a.ty.clone()).unwrap_or(Ty::Dyn),
                    _ => a1.ty,
                };
                Est::sized(ty, cost, size)
            }
            ops::EQUALS | ops::NOT_EQUALS => {
                self.check_operands(e.id, name, &ty_of(0), &ty_of(1));
                Est::sized(Ty::Bool, base, 1)
            }
            ops::LESS | ops::LESS_EQUALS | ops::GREATER | ops::GREATER_EQUALS => {
                self.check_operands(e.id, name, &ty_of(0), &ty_of(1));
                Est::sized(Ty::Bool, base, 1)
            }
            ops::IN => Est::sized(Ty::Bool, base, 1),
            ops::ADD => {
                self.check_operands(e.id, name, &ty_of(0), &ty_of(1));
                let size = arg_size(0).saturating_add(arg_size(1));
                // cel-go picks the one overload a dyn operand leaves
                let ty = match (ty_of(0), ty_of(1)) {
                    (Ty::Duration, Ty::Timestamp) => Ty::Timestamp,
                    (
                        Ty::Dyn,
                        t @ (Ty::Str | Ty::Bytes | Ty::List(_) | Ty::Int | Ty::Uint | Ty::Double),
                    ) => t,
                    (t, _) => t,
                };
                Est::sized(ty, base, size)
            }
            ops::SUBSTRACT | ops::MULTIPLY | ops::DIVIDE | ops::MODULO | ops::NEGATE => {
                if args.len() == 2 {
                    self.check_operands(e.id, name, &ty_of(0), &ty_of(1));
                }
                let ty = match (ty_of(0), ty_of(1)) {
                    (Ty::Timestamp, Ty::Timestamp) => Ty::Duration,
                    (t, _) => t,
                };
                Est::sized(ty, base, 1)
            }
            ops::INDEX | ops::OPT_INDEX => {
                let elem = match args.first().map(|a| a.ty.resolve()) {
                    Some(Ty::List(el)) | Some(Ty::Map(el)) => *el,
                    _ => Ty::Dyn,
                };
                let elem = if name == ops::OPT_INDEX {
                    Ty::Optional(Box::new(elem))
                } else {
                    elem
                };
                Est::new(elem, base)
            }
            ops::OPT_SELECT => {
                let field = match call.args.get(1).map(|a| &a.expr) {
                    Some(Expr::Literal(LiteralValue::String(s))) => s.inner().to_string(),
                    _ => String::new(),
                };
                let inner = match args.first().map(|a| a.ty.clone()) {
                    Some(Ty::Optional(t)) => *t,
                    Some(t) => t,
                    None => Ty::Dyn,
                };
                let ft = self.field_type(e.id, &inner, &field);
                let size = schema_size(&ft);
                Est::sized(Ty::Optional(Box::new(ft)), base, size)
            }
            _ if authz_member(target.as_ref(), name) => {
                let recv = match target.as_ref().map(|t| t.ty.resolve()) {
                    Some(Ty::Authz(k)) => Some(k),
                    _ => None,
                };
                let strings = args
                    .iter()
                    .all(|a| matches!(a.ty.resolve(), Ty::Str | Ty::Dyn));
                match authz::member_result(recv, name, args.len()).filter(|_| strings) {
                    Some(ty) => Est::sized(ty, base, 1),
                    None => {
                        let recv_ty = target.as_ref().map(|t| t.ty.clone());
                        self.no_overload(e.id, name, recv_ty.as_ref(), &args);
                        Est::sized(Ty::Dyn, base, 1)
                    }
                }
            }
            _ => {
                let known = if target.is_some() {
                    KNOWN_MEMBERS.contains(&name)
                } else {
                    KNOWN_GLOBALS.contains(&name)
                };
                if !known {
                    self.err(
                        e.id,
                        format!("undeclared reference to '{name}' (in container '')"),
                    );
                    return Est::sized(Ty::Dyn, base, 1);
                }
                if let Some(t) = &target {
                    self.check_string_member(e.id, name, &t.ty, &args);
                    if name == "reverse" && matches!(t.ty.resolve(), Ty::Str) {
                        // `reverse` on strings is ext.Strings v3; kube 1.34 has v2
                        self.no_overload(e.id, name, Some(&t.ty), &args);
                    }
                    if name == "format" {
                        self.check_format(e, call, &args);
                    }
                }
                let mut est = self.function(name, target.as_ref(), &args, base, recv_size);
                est.cost = base;
                if name == "join" {
                    // kube: a traversal of the largest result, which is also its size
                    let elem = match target.as_ref().map(|t| t.ty.resolve()) {
                        Some(Ty::List(el)) => schema_size(&el),
                        _ => 1,
                    };
                    let seps = recv_size.saturating_sub(1).saturating_mul(arg_size(0));
                    let size = if args.is_empty() {
                        recv_size.saturating_mul(elem)
                    } else {
                        recv_size.saturating_mul(elem).saturating_add(seps)
                    };
                    est.cost = operands.saturating_add(traversal_cost(size));
                    est.size = size;
                }
                est
            }
        }
    }

    /// cel-go's `found no matching overload` for a call.
    fn no_overload(&mut self, id: u64, name: &str, recv: Option<&Ty>, args: &[Est]) {
        let arg_names: Vec<&str> = args.iter().map(|a| a.ty.name()).collect();
        let recv = recv.map(|r| format!("{}.", r.name())).unwrap_or_default();
        self.err(
            id,
            format!(
                "found no matching overload for '{name}' applied to '{recv}({})'",
                arg_names.join(", ")
            ),
        );
    }

    /// `format`'s argument must be a list; with a literal format string and
    /// a list literal, cel-go's validator checks each clause against its
    /// argument's type and the argument count.
    fn check_format(&mut self, e: &IdedExpr, call: &cel::common::ast::CallExpr, args: &[Est]) {
        let known = |t: &Ty| !matches!(t, Ty::Dyn | Ty::Opaque);
        if let Some(a) = args.first() {
            let t = a.ty.resolve();
            if known(&t) && !matches!(t, Ty::List(_)) {
                let recv = call
                    .target
                    .as_deref()
                    .and_then(|t| self.types.get(&t.id))
                    .cloned();
                self.no_overload(e.id, "format", recv.as_ref(), args);
                return;
            }
        }
        let (
            Some(IdedExpr {
                expr: Expr::Literal(LiteralValue::String(fmt)),
                ..
            }),
            [IdedExpr {
                expr: Expr::List(list),
                ..
            }],
        ) = (call.target.as_deref(), call.args.as_slice())
        else {
            return;
        };
        let elems = &list.elements;
        let mut requested = 0;
        let mut bad_id = None;
        let result = string_format::walk(fmt.inner(), elems.len(), false, |i, clause| {
            requested += 1;
            match elems.get(i).and_then(|el| self.bad_format_arg(el, clause)) {
                Some((id, ty)) => {
                    bad_id = Some(id);
                    Err(string_format::FormatError {
                        msg: string_format::clause_error(clause, &ty),
                        arg: Some(i),
                    })
                }
                None => Ok(String::new()),
            }
        });
        let issue = match result {
            Err(err) => Some((bad_id.unwrap_or(e.id), err.msg)),
            Ok(_) if elems.len() > requested => Some((
                e.id,
                format!(
                    "too many arguments supplied to string.format (expected {requested}, got {})",
                    elems.len()
                ),
            )),
            Ok(_) => None,
        };
        if let Some((expr_id, msg)) = issue {
            self.validator_errors.push(CheckError { expr_id, msg });
        }
    }

    /// The node (and its type name) that `clause` cannot format, if any;
    /// `%s` looks into list and map literals.
    fn bad_format_arg(
        &self,
        el: &IdedExpr,
        clause: string_format::Clause,
    ) -> Option<(u64, String)> {
        use string_format::Clause as C;
        let ty = self.types.get(&el.id).map(Ty::resolve).unwrap_or(Ty::Dyn);
        let ok = matches!(
            (&ty, clause),
            (Ty::Dyn | Ty::Opaque, _)
                | (
                    Ty::Int | Ty::Uint,
                    C::Decimal | C::Binary | C::Hex(_) | C::Octal | C::Str
                )
                | (Ty::Double, C::Fixed(_) | C::Scientific(_) | C::Str)
                | (Ty::Str, C::Fixed(_) | C::Scientific(_) | C::Hex(_) | C::Str)
                | (Ty::Bool, C::Binary | C::Str)
                | (Ty::Bytes, C::Hex(_) | C::Str)
                | (
                    Ty::Null
                        | Ty::Timestamp
                        | Ty::Duration
                        | Ty::List(_)
                        | Ty::Map(_)
                        | Ty::Schema(..),
                    C::Str,
                )
        );
        if !ok {
            return Some((el.id, ty.name().to_string()));
        }
        if clause != C::Str {
            return None;
        }
        match &el.expr {
            Expr::List(l) => l
                .elements
                .iter()
                .find_map(|x| self.bad_format_arg(x, clause)),
            Expr::Map(m) => m.entries.iter().find_map(|entry| match &entry.expr {
                EntryExpr::MapEntry(me) => self
                    .bad_format_arg(&me.key, clause)
                    .or_else(|| self.bad_format_arg(&me.value, clause)),
                _ => None,
            }),
            _ => None,
        }
    }

    fn check_operands(&mut self, id: u64, op: &str, a: &Ty, b: &Ty) {
        use cel::common::ast::operators as ops;
        let simple = |t: &Ty| {
            matches!(
                t,
                Ty::Bool | Ty::Int | Ty::Uint | Ty::Double | Ty::Str | Ty::Bytes
            )
        };
        let numeric = |t: &Ty| matches!(t, Ty::Int | Ty::Uint | Ty::Double);
        // kube enables cross-type numeric comparisons (`<`, `>=`, ...), not equality
        let ordering = matches!(
            op,
            ops::LESS | ops::LESS_EQUALS | ops::GREATER | ops::GREATER_EQUALS
        );
        if ordering && numeric(a) && numeric(b) {
            return;
        }
        if simple(a) && simple(b) && std::mem::discriminant(a) != std::mem::discriminant(b) {
            self.err(
                id,
                format!(
                    "found no matching overload for '{op}' applied to '({}, {})'",
                    a.name(),
                    b.name()
                ),
            );
        }
    }

    /// String-only member functions: a known non-string receiver or a
    /// known non-string pattern argument has no overload.
    fn check_string_member(&mut self, id: u64, name: &str, recv: &Ty, args: &[Est]) {
        const STRING_ONLY: &[&str] = &[
            "contains",
            "startsWith",
            "endsWith",
            "matches",
            "find",
            "findAll",
            "lowerAscii",
            "upperAscii",
            "trim",
            "replace",
            "split",
            "charAt",
            "substring",
            "format",
        ];
        const STRING_FIRST_ARG: &[&str] = &[
            "contains",
            "startsWith",
            "endsWith",
            "matches",
            "find",
            "findAll",
            "replace",
            "split",
        ];
        if !STRING_ONLY.contains(&name) {
            return;
        }
        let known = |t: &Ty| !matches!(t, Ty::Dyn | Ty::Opaque | Ty::Optional(_));
        let r = recv.resolve();
        let first = args.first().map(|a| a.ty.resolve());
        let bad_recv = known(&r) && !matches!(r, Ty::Str);
        let bad_arg = matches!(r, Ty::Str)
            && STRING_FIRST_ARG.contains(&name)
            && first
                .as_ref()
                .is_some_and(|f| known(f) && !matches!(f, Ty::Str));
        if bad_recv || bad_arg {
            let arg_names: Vec<&str> = args.iter().map(|a| a.ty.name()).collect();
            self.err(
                id,
                format!(
                    "found no matching overload for '{name}' applied to '{}.({})'",
                    recv.name(),
                    arg_names.join(", ")
                ),
            );
        }
    }

    /// The result type and size of a library function (its cost is
    /// replaced by the caller with `library::cost::call`).
    fn function(
        &mut self,
        name: &str,
        target: Option<&Est>,
        args: &[Est],
        base: u64,
        recv: u64,
    ) -> Est {
        let trav = traversal_cost(recv);
        let recv_ty = target.map(|t| t.ty.resolve()).unwrap_or(Ty::Dyn);
        match name {
            "size" => Est::sized(Ty::Int, base, 1),
            "contains" | "startsWith" | "endsWith" => Est::sized(
                Ty::Bool,
                base + trav + traversal_cost(args.first().map(|a| a.size).unwrap_or(1)),
                1,
            ),
            // regex cost grows with the text and the pattern
            "matches" => {
                let text = if target.is_some() {
                    recv
                } else {
                    args.first().map(|a| a.size).unwrap_or(1)
                };
                Est::sized(Ty::Bool, base + 2 * traversal_cost(text), 1)
            }
            "find" => Est::sized(Ty::Str, base + 2 * trav, recv),
            "findAll" | "split" => Est::sized(Ty::List(Box::new(Ty::Str)), base + 2 * trav, recv),
            "lowerAscii" | "upperAscii" | "trim" | "reverse" | "substring" | "charAt" => {
                Est::sized(Ty::Str, base + trav, recv)
            }
            "replace" => Est::sized(Ty::Str, base + 2 * trav, recv.saturating_mul(2)),
            "indexOf" | "lastIndexOf" => Est::sized(Ty::Int, base + trav.max(recv), 1),
            "join" => Est::sized(Ty::Str, base, recv),
            // the result of format has no bound (cel-go: unknown size)
            "format" => Est::sized(Ty::Str, base, u64::MAX),
            m if m == crate::macros::MAP_INSERT => {
                let ty = match args {
                    [m, _, v] => match m.ty.resolve() {
                        Ty::Map(_) => Ty::Map(Box::new(v.ty.clone())),
                        other => other,
                    },
                    [m, ..] => m.ty.clone(),
                    [] => Ty::Dyn,
                };
                Est::sized(ty, base, 1)
            }
            "isSorted" => Est::sized(Ty::Bool, base + recv, 1),
            "sum" | "min" | "max" => {
                let el = match recv_ty {
                    Ty::List(el) => el.resolve(),
                    _ => Ty::Dyn,
                };
                Est::sized(el, base + recv, 1)
            }
            "int" => Est::sized(Ty::Int, base, 1),
            "uint" => Est::sized(Ty::Uint, base, 1),
            "double" => Est::sized(Ty::Double, base, 1),
            "string" => Est::sized(
                Ty::Str,
                base,
                args.first().map(|a| a.size).unwrap_or(1).max(20),
            ),
            "bool" => Est::sized(Ty::Bool, base, 1),
            "bytes" => Est::sized(Ty::Bytes, base, args.first().map(|a| a.size).unwrap_or(1)),
            "timestamp" => Est::sized(Ty::Timestamp, base, 1),
            "duration" => Est::sized(Ty::Duration, base, 1),
            "dyn" => args
                .first()
                .cloned()
                .map(|a| Est {
                    ty: Ty::Dyn,
                    cost: base,
                    size: a.size,
                })
                .unwrap_or(Est::sized(Ty::Dyn, base, 1)),
            "hasValue"
            | "isQuantity"
            | "isURL"
            | "isIP"
            | "isCIDR"
            | "isSemver"
            | "isInteger"
            | "isGreaterThan"
            | "isLessThan"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast"
            | "containsIP"
            | "containsCIDR" => Est::sized(Ty::Bool, base + trav, 1),
            "value" | "orValue" => {
                let inner = match target.map(|t| t.ty.clone()) {
                    Some(Ty::Optional(t)) => *t,
                    _ => Ty::Dyn,
                };
                let size = target.map(|t| t.size).unwrap_or(1);
                Est::sized(inner, base, size)
            }
            "asInteger" | "sign" | "compareTo" | "family" | "prefixLength" | "major" | "minor"
            | "patch" | "getFullYear" | "getMonth" | "getDayOfMonth" | "getDate"
            | "getDayOfWeek" | "getDayOfYear" | "getHours" | "getMinutes" | "getSeconds"
            | "getMilliseconds" => Est::sized(Ty::Int, base, 1),
            "asApproximateFloat" => Est::sized(Ty::Double, base, 1),
            "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath" => {
                Est::sized(Ty::Str, base + trav, recv)
            }
            "type" => Est::sized(Ty::Opaque, base, 1),
            _ => Est::sized(Ty::Dyn, base + trav, recv),
        }
    }

    /// The `ERROR: <input>:l:c: msg` rendering of the errors, as cel-go's issues.
    pub fn render(&self, info: &SourceInfo, source: &str) -> String {
        self.errors
            .iter()
            .map(|e| {
                let offset = info
                    .offset_for(e.expr_id)
                    .map(|(s, _)| s as usize)
                    .unwrap_or(0);
                render_error(source, offset, &e.msg)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Whether a schema declares `kind`, `apiVersion` and `metadata` with
/// `name` and `generateName` (kube then keeps it as it is).
fn declares_type_and_meta(s: &Schema) -> bool {
    let is = |s: Option<&Arc<Schema>>, t: &str| s.is_some_and(|s| s.ty == t);
    let meta = s.property("metadata");
    is(s.property("kind"), "string")
        && is(s.property("apiVersion"), "string")
        && is(meta, "object")
        && meta.is_some_and(|m| {
            is(m.property("name"), "string") && is(m.property("generateName"), "string")
        })
}

/// A member call the authorizer library answers: any call on one of its
/// types, or one of its function names on a dyn receiver.
fn authz_member(target: Option<&Est>, name: &str) -> bool {
    match target.map(|t| t.ty.resolve()) {
        Some(Ty::Authz(_)) => true,
        Some(Ty::Dyn) => authz::is_member(name) && !KNOWN_MEMBERS.contains(&name),
        _ => false,
    }
}

fn step_elem(step: &Ty) -> Ty {
    match step.resolve() {
        Ty::List(el) => el.resolve(),
        _ => Ty::Dyn,
    }
}

/// cel-go's error rendering at a character offset of the source.
fn render_error(source: &str, offset: usize, msg: &str) -> String {
    // offsets count characters; walk chars so no byte slicing can split one
    let (mut line, mut col) = (1, 0);
    for c in source.chars().take(offset) {
        if c == '\n' {
            line += 1;
            col = 0;
        } else {
            col += 1;
        }
    }
    render_at(source, line, col, msg)
}

/// Syntax errors rendered as cel-go renders them (the parser reports a
/// 1-based line and column).
pub(crate) fn render_parse_errors(src: &str, errs: &cel::parser::ParseErrors) -> String {
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
}

/// cel-go's error rendering: position, message, the line and a caret
/// (`line` 1-based, `col` a 0-based character column).
pub fn render_at(source: &str, line: usize, col: usize, msg: &str) -> String {
    let text = source.lines().nth(line.saturating_sub(1)).unwrap_or("");
    format!(
        "ERROR: <input>:{line}:{}: {msg}\n | {text}\n | {}^",
        col + 1,
        ".".repeat(col)
    )
}

/// kube's `JSONPatch` type: `op`, `from` and `path` strings and a dyn
/// `value`.
pub(crate) fn json_patch_type() -> Ty {
    Ty::Object(Arc::new(ObjectTy {
        name: crate::eval::JSON_PATCH.to_string(),
        fields: vec![
            ("op".into(), Ty::Str),
            ("from".into(), Ty::Str),
            ("path".into(), Ty::Str),
            ("value".into(), Ty::Dyn),
        ],
        open: false,
    }))
}
