//! Running the compiled rules over an object (apiextensions
//! `schema/cel/validation.go`): walk data and schema together, correlate
//! the old object, evaluate each rule, and word failures as kube does.

use crate::compile::{CompiledRule, CompiledSchema, Node, PathElem};
use crate::eval::{EvalError, Evaluator};
use crate::value::{from_json, Value};
use keelson_apimachinery::field::{FieldError, FieldErrorKind};
use serde_json::Value as Json;

/// kube's `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// The result of a validation: errors, and the errors of unchanged fields
/// that validation ratcheting turns into warnings.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub errors: Vec<FieldError>,
    pub warnings: Vec<String>,
}

impl CompiledSchema {
    /// Evaluates every rule against `new` (and `old` on update); errors only.
    pub fn validate(&self, new: &Json, old: Option<&Json>) -> Vec<FieldError> {
        self.validate_with_warnings(new, old).errors
    }

    /// Evaluates every rule; failures on fields unchanged since `old` (for
    /// rules not using `oldSelf`) are warnings, as kube's ratcheting does.
    pub fn validate_with_warnings(&self, new: &Json, old: Option<&Json>) -> Outcome {
        let mut run = Run {
            budget: self.opts.runtime_budget,
            per_call: self.opts.per_call_limit,
            out: Outcome::default(),
        };
        if self.root.active {
            run.node(&self.root, "", new, old, true);
        }
        run.out
    }
}

struct Run {
    budget: i64,
    per_call: u64,
    out: Outcome,
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn rendered(path: &str) -> String {
    if path.is_empty() {
        "<nil>".into()
    } else {
        path.to_string()
    }
}

fn schema_type(node: &Node) -> Json {
    Json::String(node.schema.ty.clone())
}

impl Run {
    /// Returns false once the budget is exhausted (stop everything).
    fn node(
        &mut self,
        node: &Node,
        path: &str,
        new: &Json,
        old: Option<&Json>,
        root: bool,
    ) -> bool {
        if !node.active || new.is_null() {
            return true;
        }
        if !node.rules.is_empty() && !self.rules(node, path, new, old, root) {
            return false;
        }
        match new {
            Json::Object(map) => {
                let old_map = old.and_then(Json::as_object);
                for (name, child_node) in &node.properties {
                    if let Some(v) = map.get(name) {
                        let o = old_map.and_then(|m| m.get(name));
                        if !self.node(child_node, &child(path, name), v, o, false) {
                            return false;
                        }
                    }
                }
                if let Some(add) = &node.additional {
                    if node.properties.is_empty() {
                        for (k, v) in map {
                            let o = old_map.and_then(|m| m.get(k));
                            if !self.node(
                                add,
                                &format!("{}[{k}]", rendered_key_base(path)),
                                v,
                                o,
                                false,
                            ) {
                                return false;
                            }
                        }
                    }
                }
            }
            Json::Array(items) => {
                if let Some(item_node) = &node.items {
                    let old_items = old.and_then(Json::as_array);
                    let keys = &node.schema.list_map_keys;
                    let correlate =
                        node.schema.list_type.as_deref() == Some("map") && !keys.is_empty();
                    for (i, v) in items.iter().enumerate() {
                        let o = if correlate {
                            old_items.and_then(|olds| {
                                olds.iter()
                                    .find(|ov| keys.iter().all(|k| ov.get(k) == v.get(k)))
                            })
                        } else {
                            None
                        };
                        if !self.node(
                            item_node,
                            &format!("{}[{i}]", rendered_key_base(path)),
                            v,
                            o,
                            false,
                        ) {
                            return false;
                        }
                    }
                }
            }
            _ => {}
        }
        true
    }

    fn rules(
        &mut self,
        node: &Node,
        path: &str,
        new: &Json,
        old: Option<&Json>,
        root: bool,
    ) -> bool {
        let ty = schema_type(node);
        if self.budget <= 0 {
            self.out.errors.push(FieldError::invalid(&rendered(path), ty, "validation failed due to running out of cost budget, no further validation rules will be run"));
            return false;
        }
        let self_val = from_json(new, Some(&node.schema), root);
        let old_val = old.map(|o| from_json(o, Some(&node.schema), root));
        let unchanged = old.is_some_and(|o| o == new);
        for rule in &node.rules {
            let optional = rule.rule.optional_old_self == Some(true);
            if rule.uses_old_self && old_val.is_none() && !optional {
                continue;
            }
            let old_binding = if optional {
                Value::Optional(old_val.clone().map(Box::new))
            } else {
                old_val.clone().unwrap_or(Value::Null)
            };
            let rule_text = rule_error_string(rule);
            let mut ev = Evaluator::new(
                vec![("self", self_val.clone()), ("oldSelf", old_binding.clone())],
                self.per_call,
            );
            let result = ev.eval(&rule.program);
            let cost = ev.cost as i64;
            if cost > self.budget && !matches!(result, Err(EvalError::CostLimit)) {
                self.out.errors.push(FieldError::invalid(&rendered(path), ty, "validation failed due to running out of cost budget, no further validation rules will be run"));
                return false;
            }
            self.budget -= cost;
            let detail_on_error = match result {
                Ok(Value::Bool(true)) => continue,
                Ok(Value::Bool(false)) => None,
                Ok(_) => Some("no such overload evaluating rule".to_string()),
                Err(EvalError::CostLimit) => {
                    self.out.errors.push(FieldError::invalid(&rendered(path), ty, &format!("'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {rule_text}")));
                    return false;
                }
                Err(EvalError::Runtime(m)) if m.starts_with("no such overload") => Some(format!("'{m}': call arguments did not match a supported operator, function or macro signature for rule: {rule_text}")),
                Err(EvalError::Runtime(m)) => Some(format!("{m} evaluating rule: {rule_text}")),
            };
            if let Some(detail) = detail_on_error {
                self.out
                    .errors
                    .push(FieldError::invalid(&rendered(path), ty.clone(), &detail));
                continue;
            }
            // the rule is false: word the error
            let mut fpath = path.to_string();
            for el in &rule.field_path {
                fpath = match el {
                    PathElem::Child(c) => child(&fpath, c),
                    PathElem::Key(k) => format!("{}[{k}]", rendered_key_base(&fpath)),
                };
            }
            let mut detail = None;
            if let Some(mexpr) = &rule.message_expression {
                let mut mev = Evaluator::new(
                    vec![("self", self_val.clone()), ("oldSelf", old_binding.clone())],
                    self.per_call,
                );
                let r = mev.eval(mexpr);
                let mcost = mev.cost as i64;
                if mcost > self.budget || matches!(r, Err(EvalError::CostLimit)) {
                    self.out.errors.push(FieldError::invalid(&rendered(&fpath), ty, "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"));
                    return false;
                }
                self.budget -= mcost;
                if let Ok(Value::Str(s)) = r {
                    // an empty, multi-line or over-long message falls back to the rule's message
                    let t = s.trim();
                    if !t.is_empty() && !t.contains('\n') && t.len() <= MAX_MESSAGE_EXPRESSION_BYTES
                    {
                        detail = Some(t.to_string());
                    }
                }
            }
            let detail = detail.unwrap_or_else(|| message_or_default(rule));
            // kube 1.34 renders the schema type, not the value (values arrive in 1.35)
            let err = error_for_reason(
                &rendered(&fpath),
                Some(ty.clone()),
                &detail,
                rule.rule.reason.as_deref(),
            );
            if !rule.uses_old_self && unchanged {
                self.out.warnings.push(err.to_string());
            } else {
                self.out.errors.push(err);
            }
        }
        true
    }
}

/// The base for `[i]`/`[key]` children: the root renders as nothing.
fn rendered_key_base(path: &str) -> &str {
    path
}

fn rule_error_string(rule: &CompiledRule) -> String {
    if !rule.rule.message.is_empty() {
        rule.rule.message.trim().to_string()
    } else {
        rule.rule.rule.trim().to_string()
    }
}

fn message_or_default(rule: &CompiledRule) -> String {
    if rule.rule.message.is_empty() {
        format!("failed rule: {}", rule_error_string(rule))
    } else {
        rule.rule.message.trim().to_string()
    }
}

/// kube's `fieldErrorForReason`.
fn error_for_reason(
    path: &str,
    value: Option<Json>,
    detail: &str,
    reason: Option<&str>,
) -> FieldError {
    let (kind, value, detail) = match reason {
        Some("FieldValueForbidden") => (FieldErrorKind::Forbidden, None, detail.to_string()),
        Some("FieldValueRequired") => (FieldErrorKind::Required, None, detail.to_string()),
        Some("FieldValueDuplicate") => (FieldErrorKind::Duplicate, value, String::new()),
        _ => (FieldErrorKind::Invalid, value, detail.to_string()),
    };
    FieldError {
        kind,
        field: path.to_string(),
        value,
        detail,
    }
}
