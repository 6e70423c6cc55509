//! Kubernetes list library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`), `join`, and the sets library.

use super::no_overload;
use crate::eval::{EvalError, EvalResult, Evaluator};
use crate::value::Value;
use std::cmp::Ordering;

/// `target.name(args)` on a list.
pub fn call(ev: &mut Evaluator<'_>, name: &str, target: Value, args: Vec<Value>) -> EvalResult {
    let Value::List(l, _) = &target else {
        return Err(no_overload());
    };
    match (name, args.first()) {
        ("isSorted", None) => {
            Ok(Value::Bool(l.windows(2).all(|w| {
                w[0].compare(&w[1]).is_some_and(|o| o != Ordering::Greater)
            })))
        }
        ("sum", None) => {
            let mut acc = match l.first() {
                Some(Value::Double(_)) => Value::Double(0.0),
                Some(Value::Uint(_)) => Value::Uint(0),
                Some(Value::Duration(_)) => Value::Duration(chrono::Duration::zero()),
                _ => Value::Int(0),
            };
            for v in l.iter() {
                acc = super::call_global(ev, "_+_", vec![acc, v.clone()])?;
            }
            Ok(acc)
        }
        ("min" | "max", None) => {
            let mut best: Option<&Value> = None;
            for v in l.iter() {
                best = match best {
                    None => Some(v),
                    Some(b) => {
                        let o = v.compare(b).ok_or_else(no_overload)?;
                        let better = if name == "min" {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        };
                        Some(if better { v } else { b })
                    }
                };
            }
            best.cloned()
                .ok_or_else(|| EvalError::msg(format!("{name} called on empty list")))
        }
        ("indexOf", Some(x)) => Ok(Value::Int(
            l.iter()
                .position(|v| v.equals(x))
                .map(|i| i as i64)
                .unwrap_or(-1),
        )),
        ("lastIndexOf", Some(x)) => Ok(Value::Int(
            l.iter()
                .rposition(|v| v.equals(x))
                .map(|i| i as i64)
                .unwrap_or(-1),
        )),
        ("join", sep) => {
            let sep = match sep {
                None => "",
                Some(Value::Str(s)) => s,
                _ => return Err(no_overload()),
            };
            let mut out = String::new();
            for (i, v) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                match v {
                    Value::Str(s) => out.push_str(s),
                    other => {
                        return Err(EvalError::msg(format!(
                            "join: invalid input: {}",
                            super::string_format::format_string(other).unwrap_or_default()
                        )))
                    }
                }
            }
            // kube's cost of join is twice a traversal of its result
            ev.charge((out.chars().count() as u64 * 2).div_ceil(10))?;
            Ok(Value::str(out))
        }
        _ => Err(EvalError::msg(format!("no such overload: list.{name}"))),
    }
}

/// `sets.contains`, `sets.equivalent`, `sets.intersects`.
pub fn sets(_ev: &mut Evaluator<'_>, name: &str, a: Value, b: Value) -> EvalResult {
    let (Value::List(a, _), Value::List(b, _)) = (&a, &b) else {
        return Err(no_overload());
    };
    let contains = |x: &[Value], y: &[Value]| y.iter().all(|e| x.iter().any(|f| f.equals(e)));
    Ok(Value::Bool(match name {
        "sets.contains" => contains(a, b),
        "sets.equivalent" => contains(a, b) && contains(b, a),
        _ => a.iter().any(|e| b.iter().any(|f| f.equals(e))),
    }))
}
