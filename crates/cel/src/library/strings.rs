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
                n if sep.is_empty() => {
                    // Go's SplitN with "" explodes into at most n pieces, the last the rest
                    let chars: Vec<char> = s.chars().collect();
                    let n = (n as usize).min(chars.len());
                    let mut out: Vec<Value> = chars[..n.saturating_sub(1)]
                        .iter()
                        .map(|c| Value::str(c.to_string()))
                        .collect();
                    if n > 0 {
                        out.push(Value::str(chars[n - 1..].iter().collect::<String>()));
                    }
                    out
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
        ("indexOf", 1 | 2) => {
            let offset = if args.len() == 2 {
                int_arg(args.get(1))?
            } else {
                0
            };
            index_of(s, str_arg(a0)?, offset).map(Value::Int)
        }
        ("lastIndexOf", 1 | 2) => {
            let needle = str_arg(a0)?;
            if args.len() == 2 {
                return last_index_of(s, needle, int_arg(args.get(1))?).map(Value::Int);
            }
            let n = s.chars().count() as i64;
            if needle.is_empty() {
                return Ok(Value::Int(n));
            }
            if s.len() < needle.len() {
                return Ok(Value::Int(-1));
            }
            last_index_of(s, needle, n - 1).map(Value::Int)
        }
        ("format", 1) => match a0 {
            Some(Value::List(l, _)) => super::string_format::format(s, l)
                .map(Value::str)
                .map_err(EvalError::msg),
            _ => Err(no_overload()),
        },
        _ => Err(EvalError::msg(format!("no such overload: string.{name}"))),
    }
}

/// cel-go's `indexOfOffset`: code-point offsets; an empty needle answers
/// the offset, an offset past the end -1, a negative one an error.
fn index_of(s: &str, needle: &str, offset: i64) -> Result<i64, EvalError> {
    if needle.is_empty() {
        return Ok(offset);
    }
    if offset < 0 {
        return Err(EvalError::msg(format!("index out of range: {offset}")));
    }
    let hay: Vec<char> = s.chars().collect();
    let sub: Vec<char> = needle.chars().collect();
    let off = offset as usize;
    if off >= hay.len() || sub.len() > hay.len() {
        return Ok(-1);
    }
    Ok((off..=hay.len() - sub.len())
        .find(|&i| hay[i..i + sub.len()] == sub[..])
        .map(|i| i as i64)
        .unwrap_or(-1))
}

/// cel-go's `lastIndexOfOffset`: the last match starting at or before `offset`.
fn last_index_of(s: &str, needle: &str, offset: i64) -> Result<i64, EvalError> {
    if needle.is_empty() {
        return Ok(offset);
    }
    if offset < 0 {
        return Err(EvalError::msg(format!("index out of range: {offset}")));
    }
    let hay: Vec<char> = s.chars().collect();
    let sub: Vec<char> = needle.chars().collect();
    let mut off = offset as usize;
    if off >= hay.len() || sub.len() > hay.len() {
        return Ok(-1);
    }
    off = off.min(hay.len() - sub.len());
    Ok((0..=off)
        .rev()
        .find(|&i| hay[i..i + sub.len()] == sub[..])
        .map(|i| i as i64)
        .unwrap_or(-1))
}
