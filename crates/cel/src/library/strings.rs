//! String functions: the standard ones (`contains`, `startsWith`,
//! `endsWith`, `matches`), cel-go's strings extension and kube's regex
//! library (`find`, `findAll`).

use super::no_overload;
use crate::eval::{EvalError, EvalResult, Evaluator};
use crate::value::Value;
use regex::Regex;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

thread_local! {
    // rules run the same few patterns over and over: compile each once per thread
    static REGEX_CACHE: RefCell<HashMap<String, Arc<Regex>>> = RefCell::new(HashMap::new());
}

/// A compiled regex (RE2 syntax is what `regex` implements), shared so
/// its match caches are reused (a cloned `Regex` starts with cold caches).
pub fn regex(pattern: &str) -> Result<Arc<Regex>, EvalError> {
    REGEX_CACHE.with(|c| {
        if let Some(r) = c.borrow().get(pattern) {
            return Ok(r.clone());
        }
        let r = Arc::new(
            Regex::new(pattern)
                .map_err(|e| EvalError::msg(format!("error parsing regexp: {e}")))?,
        );
        let mut cache = c.borrow_mut();
        if cache.len() > 256 {
            cache.clear();
        }
        cache.insert(pattern.to_string(), r.clone());
        Ok(r)
    })
}

fn int_arg(v: Option<&Value>) -> Result<i64, EvalError> {
    match v {
        Some(Value::Int(i)) => Ok(*i),
        _ => Err(no_overload()),
    }
}

fn str_arg(v: Option<&Value>) -> Result<&str, EvalError> {
    match v {
        Some(Value::Str(s)) => Ok(s),
        _ => Err(no_overload()),
    }
}

/// `target.name(args)` on a string.
pub fn call(_ev: &mut Evaluator<'_>, name: &str, target: Value, args: Vec<Value>) -> EvalResult {
    let Value::Str(s) = &target else {
        return Err(no_overload());
    };
    let s: &str = s;
    let a0 = args.first();
    match (name, args.len()) {
        ("contains", 1) => Ok(Value::Bool(s.contains(str_arg(a0)?))),
        ("startsWith", 1) => Ok(Value::Bool(s.starts_with(str_arg(a0)?))),
        ("endsWith", 1) => Ok(Value::Bool(s.ends_with(str_arg(a0)?))),
        ("matches", 1) => {
            let r = regex(str_arg(a0)?)?;
            Ok(Value::Bool(r.is_match(s)))
        }
        ("find", 1) => {
            let r = regex(str_arg(a0)?)?;
            Ok(Value::str(r.find(s).map(|m| m.as_str()).unwrap_or("")))
        }
        ("findAll", 1 | 2) => {
            let r = regex(str_arg(a0)?)?;
            let limit = if args.len() == 2 {
                int_arg(args.get(1))?
            } else {
                -1
            };
            let it = r.find_iter(s).map(|m| Value::str(m.as_str()));
            let v: Vec<Value> = if limit < 0 {
                it.collect()
            } else {
                it.take(limit as usize).collect()
            };
            Ok(Value::list(v))
        }
        ("lowerAscii", 0) => Ok(Value::str(s.to_ascii_lowercase())),
        ("upperAscii", 0) => Ok(Value::str(s.to_ascii_uppercase())),
        ("trim", 0) => Ok(Value::str(s.trim())),
        ("reverse", 0) => Ok(Value::str(s.chars().rev().collect::<String>())),
        ("replace", 2 | 3) => {
            let from = str_arg(a0)?;
            let to = str_arg(args.get(1))?;
            let n = if args.len() == 3 {
                int_arg(args.get(2))?
            } else {
                -1
            };
            Ok(Value::str(if n < 0 {
                s.replace(from, to)
            } else {
                s.replacen(from, to, n as usize)
            }))
        }
        ("split", 1 | 2) => {
            let sep = str_arg(a0)?;
            let n = if args.len() == 2 {
                int_arg(args.get(1))?
            } else {
                -1
            };
            let parts: Vec<Value> = match n {
                0 => vec![],
                n if n < 0 => {
                    if sep.is_empty() {
                        s.chars().map(|c| Value::str(c.to_string())).collect()
                    } else {
                        s.split(sep).map(Value::str).collect()
                    }
                }
                n => s.splitn(n as usize, sep).map(Value::str).collect(),
            };
            Ok(Value::list(parts))
        }
        ("charAt", 1) => {
            let i = int_arg(a0)?;
            let chars: Vec<char> = s.chars().collect();
            if i < 0 || i as usize > chars.len() {
                return Err(EvalError::msg(format!("index out of range: {i}")));
            }
            Ok(Value::str(
                chars
                    .get(i as usize)
                    .map(|c| c.to_string())
                    .unwrap_or_default(),
            ))
        }
        ("substring", 1 | 2) => {
            let chars: Vec<char> = s.chars().collect();
            let start = int_arg(a0)?;
            let end = if args.len() == 2 {
                int_arg(args.get(1))?
            } else {
                chars.len() as i64
            };
            if start < 0 || start as usize > chars.len() {
                return Err(EvalError::msg(format!("index out of range: {start}")));
            }
            if end < 0 || end as usize > chars.len() {
                return Err(EvalError::msg(format!("index out of range: {end}")));
            }
            if start > end {
                return Err(EvalError::msg(format!(
                    "invalid substring range. start: {start}, end: {end}"
                )));
            }
            Ok(Value::str(
                chars[start as usize..end as usize]
                    .iter()
                    .collect::<String>(),
            ))
        }
        ("indexOf" | "lastIndexOf", 1 | 2) => {
            let needle: Vec<char> = str_arg(a0)?.chars().collect();
            let hay: Vec<char> = s.chars().collect();
            let last = name == "lastIndexOf";
            let from = if args.len() == 2 {
                int_arg(args.get(1))?
            } else if last {
                hay.len() as i64
            } else {
                0
            };
            if from < 0 || from as usize > hay.len() {
                return Err(EvalError::msg(format!("index out of range: {from}")));
            }
            let matches_at =
                |i: usize| hay.len() >= i + needle.len() && hay[i..i + needle.len()] == needle[..];
            let found = if last {
                (0..=from as usize).rev().find(|&i| matches_at(i))
            } else {
                (from as usize..=hay.len()).find(|&i| matches_at(i))
            };
            Ok(Value::Int(found.map(|i| i as i64).unwrap_or(-1)))
        }
        _ => Err(EvalError::msg(format!("no such overload: string.{name}"))),
    }
}
