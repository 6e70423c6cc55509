//! A tree-walking evaluator over the `cel` crate's parsed (macro-expanded)
//! AST, charging cel-go's runtime cost as it goes.
//!
//! Hand-written rather than `cel::Program::execute`: kube's runtime cost
//! budget and per-call limit need a cost counter inside evaluation, and the
//! crate's interpreter has no hook for one; CEL-in-Kubernetes also needs its
//! own value types (list-type set equality, quantities, IPs, ...).

use crate::library;
use crate::library::cost;
use crate::value::{Key, MapData, ObjectVal, Value};
use cel::common::ast::{EntryExpr, Expr, LiteralValue};
use cel::IdedExpr;
use std::sync::Arc;

/// Why an evaluation stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum EvalError {
    /// A CEL runtime error, worded as cel-go words it (`no such key: foo`).
    Runtime(String),
    /// The per-call cost limit was reached.
    CostLimit,
}

impl EvalError {
    /// A runtime error.
    pub fn msg(s: impl Into<String>) -> EvalError {
        EvalError::Runtime(s.into())
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Runtime(m) => f.write_str(m),
            EvalError::CostLimit => f.write_str("operation cancelled: actual cost limit exceeded"),
        }
    }
}

pub type EvalResult = Result<Value, EvalError>;

/// Cost accounting and variable scope of one evaluation.
pub struct Evaluator<'a> {
    vars: Vec<(&'a str, Value)>,
    /// Cost spent so far.
    pub cost: u64,
    limit: u64,
}

/// The cost of reading a variable or a field (cel-go's `SelectAndIdentCost`).
const SELECT_COST: u64 = 1;

impl<'a> Evaluator<'a> {
    /// An evaluator with the given top-level variables and per-call limit.
    pub fn new(vars: Vec<(&'a str, Value)>, limit: u64) -> Self {
        Evaluator {
            vars,
            cost: 0,
            limit,
        }
    }

    /// Adds `n` to the cost, failing past the limit.
    pub fn charge(&mut self, n: u64) -> Result<(), EvalError> {
        self.cost = self.cost.saturating_add(n);
        if self.cost > self.limit {
            return Err(EvalError::CostLimit);
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<&Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Evaluates an expression.
    pub fn eval(&mut self, e: &'a IdedExpr) -> EvalResult {
        match &e.expr {
            Expr::Literal(l) => Ok(literal(l)),
            Expr::Ident(name) => {
                self.charge(SELECT_COST)?;
                if let Some(v) = self.lookup(name) {
                    return Ok(v.clone());
                }
                match name.as_str() {
                    "int" | "uint" | "double" | "string" | "bool" | "bytes" | "list" | "map"
                    | "null_type" | "type" => Ok(Value::Type(name.as_str().into())),
                    _ => Err(EvalError::msg(format!("no such attribute: {name}"))),
                }
            }
            Expr::Select(sel) => {
                self.charge(SELECT_COST)?;
                let operand = self.eval(&sel.operand)?;
                if sel.test {
                    return match &operand {
                        Value::Map(m, _) => Ok(Value::Bool(
                            m.contains_key(&Key::Str(sel.field.as_str().into())),
                        )),
                        Value::Object(o) => {
                            Ok(Value::Bool(o.fields.contains_key(sel.field.as_str())))
                        }
                        _ => Err(EvalError::msg(format!(
                            "invalid type for field selection: {}",
                            operand.type_name()
                        ))),
                    };
                }
                select(&operand, &sel.field)
            }
            Expr::List(list) => {
                self.charge(10)?;
                let mut out = Vec::with_capacity(list.elements.len());
                for (i, el) in list.elements.iter().enumerate() {
                    let v = self.eval(el)?;
                    if list.optional_indices.contains(&i) {
                        match v {
                            Value::Optional(Some(inner)) => out.push(*inner),
                            Value::Optional(None) => {}
                            other => out.push(other),
                        }
                    } else {
                        out.push(v);
                    }
                }
                Ok(Value::list(out))
            }
            Expr::Map(map) => {
                self.charge(30)?;
                let mut out = MapData::new();
                for entry in &map.entries {
                    let EntryExpr::MapEntry(me) = &entry.expr else {
                        return Err(EvalError::msg("unsupported map entry"));
                    };
                    let k = self.eval(&me.key)?;
                    let mut v = self.eval(&me.value)?;
                    if me.optional {
                        match v {
                            Value::Optional(Some(inner)) => v = *inner,
                            Value::Optional(None) => continue,
                            _ => {}
                        }
                    }
                    let key = k.to_key().ok_or_else(|| {
                        EvalError::msg(format!("unsupported key type: {}", k.type_name()))
                    })?;
                    if out.insert(key, v).is_some() {
                        return Err(EvalError::msg("Failed with repeated key"));
                    }
                }
                Ok(Value::Map(Arc::new(out), false))
            }
            Expr::Struct(st) => {
                self.charge(40)?;
                let mut fields = std::collections::BTreeMap::new();
                for entry in &st.entries {
                    let EntryExpr::StructField(f) = &entry.expr else {
                        return Err(EvalError::msg("unsupported struct entry"));
                    };
                    let mut v = self.eval(&f.value)?;
                    if f.optional {
                        match v {
                            Value::Optional(Some(inner)) => v = *inner,
                            Value::Optional(None) => continue,
                            _ => {}
                        }
                    }
                    fields.insert(Arc::from(f.field.as_str()), v);
                }
                if st.type_name == JSON_PATCH {
                    check_json_patch(&fields)?;
                }
                Ok(Value::Object(Arc::new(ObjectVal {
                    type_name: st.type_name.as_str().into(),
                    fields,
                })))
            }
            Expr::Comprehension(c) => {
                let range = self.eval(&c.iter_range)?;
                let items: Vec<(Value, Option<Value>)> = match &range {
                    Value::List(l, _) => {
                        if c.iter_var2.is_some() {
                            l.iter()
                                .enumerate()
                                .map(|(i, v)| (Value::Int(i as i64), Some(v.clone())))
                                .collect()
                        } else {
                            l.iter().map(|v| (v.clone(), None)).collect()
                        }
                    }
                    Value::Map(m, _) => m
                        .iter()
                        .map(|(k, v)| (k.to_value(), c.iter_var2.as_ref().map(|_| v.clone())))
                        .collect(),
                    other => {
                        return Err(EvalError::msg(format!(
                            "cannot iterate over {}",
                            other.type_name()
                        )))
                    }
                };
                let init = self.eval(&c.accu_init)?;
                let base = self.vars.len();
                self.vars.push((c.accu_var.as_str(), init));
                let result = (|| {
                    for (item, second) in items {
                        self.vars.truncate(base + 1);
                        self.vars.push((c.iter_var.as_str(), item));
                        if let (Some(name), Some(v)) = (&c.iter_var2, second) {
                            self.vars.push((name.as_str(), v));
                        }
                        let cond = self.eval(&c.loop_cond)?;
                        if matches!(cond, Value::Bool(false)) {
                            break;
                        }
                        let step = self.eval(&c.loop_step)?;
                        self.vars[base].1 = step;
                    }
                    self.vars.truncate(base + 1);
                    self.eval(&c.result)
                })();
                self.vars.truncate(base);
                result
            }
            Expr::Call(call) => self.call(e, call),
            Expr::Unspecified => Err(EvalError::msg("unspecified expression")),
        }
    }

    fn call(&mut self, _e: &'a IdedExpr, call: &'a cel::common::ast::CallExpr) -> EvalResult {
        use cel::common::ast::operators as ops;
        let name = call.func_name.as_str();
        match name {
            ops::LOGICAL_AND | ops::LOGICAL_OR => {
                let want = name == ops::LOGICAL_OR;
                let mut err = None;
                for a in &call.args {
                    match self.eval(a) {
                        Ok(Value::Bool(b)) if b == want => return Ok(Value::Bool(want)),
                        Ok(Value::Bool(_)) => {}
                        Ok(_) => err = err.or(Some(EvalError::msg("no such overload"))),
                        Err(EvalError::CostLimit) => return Err(EvalError::CostLimit),
                        Err(e) => err = err.or(Some(e)),
                    }
                }
                return match err {
                    Some(e) => Err(e),
                    None => Ok(Value::Bool(!want)),
                };
            }
            ops::CONDITIONAL => {
                let c = self.eval(arg(call, 0)?)?;
                return match c {
                    Value::Bool(true) => self.eval(arg(call, 1)?),
                    Value::Bool(false) => self.eval(arg(call, 2)?),
                    _ => Err(EvalError::msg("no such overload")),
                };
            }
            ops::NOT_STRICTLY_FALSE => {
                self.charge(1)?;
                return match self.eval(arg(call, 0)?) {
                    Ok(Value::Bool(b)) => Ok(Value::Bool(b)),
                    Err(EvalError::CostLimit) => Err(EvalError::CostLimit),
                    _ => Ok(Value::Bool(true)),
                };
            }
            ops::OPT_SELECT => {
                self.charge(SELECT_COST)?;
                let operand = self.eval(arg(call, 0)?)?;
                let Expr::Literal(LiteralValue::String(field)) = &arg(call, 1)?.expr else {
                    return Err(EvalError::msg("invalid optional selection"));
                };
                return opt_select(&operand, field.inner());
            }
            _ => {}
        }
        let target = match &call.target {
            Some(t) => {
                // `sets.contains(...)`, `format.dns1123Label()`, `optional.of(...)`:
                // a namespaced global function, not a member call
                if let Expr::Ident(ns) = &t.expr {
                    if matches!(
                        ns.as_str(),
                        "sets" | "format" | "optional" | "strings" | "math" | "jsonpatch"
                    ) && self.lookup(ns).is_none()
                    {
                        let qualified = format!("{ns}.{name}");
                        let args = self.eval_args(&call.args)?;
                        self.charge_call(&qualified, None, &args)?;
                        return library::call_global(self, &qualified, args);
                    }
                }
                Some(self.eval(t)?)
            }
            None => None,
        };
        let args = self.eval_args(&call.args)?;
        self.charge_call(name, target.as_ref(), &args)?;
        match target {
            Some(t) => library::call_member(self, name, t, args),
            None => library::call_global(self, name, args),
        }
    }

    fn charge_call(
        &mut self,
        name: &str,
        target: Option<&Value>,
        args: &[Value],
    ) -> Result<(), EvalError> {
        // no call takes more than a receiver and three arguments: stay on the stack
        let mut sizes = [1u64; 4];
        let mut kinds = [cost::Kind::Other; 4];
        let mut n = 0;
        for v in target.into_iter().chain(args.iter()).take(4) {
            sizes[n] = v.cost_size();
            kinds[n] = match v {
                Value::Str(_) | Value::Bytes(_) => cost::Kind::Text,
                Value::List(..) => cost::Kind::List,
                _ => cost::Kind::Other,
            };
            n += 1;
        }
        self.charge(cost::call(name, &sizes[..n], &kinds[..n]))
    }

    fn eval_args(&mut self, args: &'a [IdedExpr]) -> Result<Vec<Value>, EvalError> {
        args.iter().map(|a| self.eval(a)).collect()
    }
}

/// Argument `i` of an operator call (the parser guarantees the arity).
fn arg(call: &cel::common::ast::CallExpr, i: usize) -> Result<&IdedExpr, EvalError> {
    call.args
        .get(i)
        .ok_or_else(|| EvalError::msg("no such overload"))
}

fn literal(l: &LiteralValue) -> Value {
    match l {
        LiteralValue::Boolean(b) => Value::Bool(*b.inner()),
        LiteralValue::Bytes(b) => Value::Bytes(b.inner().to_vec().into()),
        LiteralValue::Double(d) => Value::Double(*d.inner()),
        LiteralValue::Int(i) => Value::Int(*i.inner()),
        LiteralValue::Null => Value::Null,
        LiteralValue::String(s) => Value::str(s.inner()),
        LiteralValue::UInt(u) => Value::Uint(*u.inner()),
    }
}

/// `operand.field`.
pub fn select(operand: &Value, field: &str) -> EvalResult {
    match operand {
        Value::Map(m, _) => m
            .get(&Key::Str(field.into()))
            .cloned()
            .ok_or_else(|| EvalError::msg(format!("no such key: {field}"))),
        Value::Optional(_) => opt_select(operand, field),
        Value::Authz(a) => a.select(field),
        Value::Object(o) => match o.fields.get(field) {
            Some(v) => Ok(v.clone()),
            // JSONPatch's string fields read as empty when unset.
            None if &*o.type_name == JSON_PATCH && field != "value" => Ok(Value::str("")),
            None => Err(EvalError::msg(format!("no such key: {field}"))),
        },
        other => Err(EvalError::msg(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

/// `operand.?field`.
fn opt_select(operand: &Value, field: &str) -> EvalResult {
    match operand {
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => opt_select(inner, field),
        Value::Map(m, _) => Ok(Value::Optional(
            m.get(&Key::Str(field.into())).cloned().map(Box::new),
        )),
        Value::Object(o) => Ok(Value::Optional(o.fields.get(field).cloned().map(Box::new))),
        other => Err(EvalError::msg(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

/// The type name of a JSON Patch operation (kube's `JSONPatchType`).
pub(crate) const JSON_PATCH: &str = "JSONPatch";

/// kube's `JSONPatchType.Val`: `op`, `path` and `from` are strings, no
/// other field than those and `value`.
fn check_json_patch(fields: &std::collections::BTreeMap<Arc<str>, Value>) -> Result<(), EvalError> {
    for (name, v) in fields {
        match &**name {
            "op" | "path" | "from" => {
                if !matches!(v, Value::Str(_)) {
                    return Err(EvalError::msg(format!(
                        "unexpected type {} for JSONPatchType '{name}' field",
                        go_type(v)
                    )));
                }
            }
            "value" => {}
            other => {
                return Err(EvalError::msg(format!(
                    "unexpected JSONPatchType field: {other}"
                )))
            }
        }
    }
    Ok(())
}

/// Go's `%T` of a CEL value's native form.
fn go_type(v: &Value) -> &str {
    match v {
        Value::Int(_) => "int64",
        Value::Uint(_) => "uint64",
        Value::Double(_) => "float64",
        Value::Bool(_) => "bool",
        Value::Null => "structpb.NullValue",
        Value::List(..) => "[]ref.Val",
        Value::Map(..) => "map[ref.Val]ref.Val",
        other => other.type_name(),
    }
}
