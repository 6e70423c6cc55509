//! CEL's standard functions and the Kubernetes CEL libraries (lists, sets,
//! regex, URLs, IPs and CIDRs, quantities, named formats, semver, strings
//! extensions), with cel-go's runtime costs.

pub mod authz;
pub mod comprehensions;
pub mod cost;
pub mod format;
pub mod lists;
pub mod net;
pub mod quantity;
pub mod string_format;
pub mod strings;
pub mod time;

use crate::eval::{EvalError, EvalResult, Evaluator};
use crate::value::Value;
use std::sync::Arc;

/// The error for a call no overload accepts.
pub fn no_overload() -> EvalError {
    EvalError::msg("no such overload")
}

/// A global function or operator.
pub fn call_global(ev: &mut Evaluator<'_>, name: &str, args: Vec<Value>) -> EvalResult {
    use cel::common::ast::operators as ops;
    let mut it = args.into_iter();
    let a = it.next();
    let b = it.next();
    let c = it.next();
    match (name, a, b, c) {
        (ops::LOGICAL_NOT, Some(Value::Bool(x)), None, None) => Ok(Value::Bool(!x)),
        (ops::NEGATE, Some(v), None, None) => match v {
            Value::Int(i) => i
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| EvalError::msg("integer overflow")),
            Value::Double(d) => Ok(Value::Double(-d)),
            Value::Duration(d) => Ok(Value::Duration(-d)),
            _ => Err(no_overload()),
        },
        (ops::EQUALS, Some(x), Some(y), None) => Ok(Value::Bool(x.equals(&y))),
        (ops::NOT_EQUALS, Some(x), Some(y), None) => Ok(Value::Bool(!x.equals(&y))),
        (
            ops::LESS | ops::LESS_EQUALS | ops::GREATER | ops::GREATER_EQUALS,
            Some(x),
            Some(y),
            None,
        ) => {
            if let (Value::Quantity(_), _) | (_, Value::Quantity(_)) = (&x, &y) {
                return Err(no_overload());
            }
            let ord = x.compare(&y).ok_or_else(no_overload)?;
            use std::cmp::Ordering::*;
            Ok(Value::Bool(match name {
                ops::LESS => ord == Less,
                ops::LESS_EQUALS => ord != Greater,
                ops::GREATER => ord == Greater,
                _ => ord != Less,
            }))
        }
        (ops::ADD, Some(x), Some(y), None) => add(ev, x, y),
        (ops::SUBSTRACT, Some(x), Some(y), None) => sub(x, y),
        (ops::MULTIPLY, Some(x), Some(y), None) => match (x, y) {
            (Value::Int(a), Value::Int(b)) => a
                .checked_mul(b)
                .map(Value::Int)
                .ok_or_else(|| EvalError::msg("integer overflow")),
            (Value::Uint(a), Value::Uint(b)) => a
                .checked_mul(b)
                .map(Value::Uint)
                .ok_or_else(|| EvalError::msg("unsigned integer overflow")),
            (Value::Double(a), Value::Double(b)) => Ok(Value::Double(a * b)),
            _ => Err(no_overload()),
        },
        (ops::DIVIDE, Some(x), Some(y), None) => match (x, y) {
            (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
                Err(EvalError::msg("division by zero"))
            }
            (Value::Int(a), Value::Int(b)) => a
                .checked_div(b)
                .map(Value::Int)
                .ok_or_else(|| EvalError::msg("integer overflow")),
            (Value::Uint(a), Value::Uint(b)) => Ok(Value::Uint(a / b)),
            (Value::Double(a), Value::Double(b)) => Ok(Value::Double(a / b)),
            _ => Err(no_overload()),
        },
        (ops::MODULO, Some(x), Some(y), None) => match (x, y) {
            (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
                Err(EvalError::msg("modulus by zero"))
            }
            (Value::Int(a), Value::Int(b)) => a
                .checked_rem(b)
                .map(Value::Int)
                .ok_or_else(|| EvalError::msg("integer overflow")),
            (Value::Uint(a), Value::Uint(b)) => Ok(Value::Uint(a % b)),
            _ => Err(no_overload()),
        },
        (ops::INDEX, Some(x), Some(y), None) => index(&x, &y),
        (ops::OPT_INDEX, Some(x), Some(y), None) => match index(&x, &y) {
            Ok(v) => Ok(Value::Optional(Some(Box::new(v)))),
            Err(_) => Ok(Value::Optional(None)),
        },
        (ops::IN, Some(x), Some(y), None) => match &y {
            Value::List(l, _) => Ok(Value::Bool(l.iter().any(|e| e.equals(&x)))),
            Value::Map(m, _) => Ok(Value::Bool(x.to_key().is_some_and(|k| m.contains_key(&k)))),
            _ => Err(no_overload()),
        },
        ("size", Some(x), None, None) => size(&x),
        ("int", Some(x), None, None) => to_int(x),
        ("uint", Some(x), None, None) => match x {
            Value::Uint(u) => Ok(Value::Uint(u)),
            Value::Int(i) if i >= 0 => Ok(Value::Uint(i as u64)),
            Value::Double(d) if (0.0..1.8446744073709552e19).contains(&d) => {
                Ok(Value::Uint(d as u64))
            }
            Value::Str(s) => s
                .parse::<u64>()
                .map(Value::Uint)
                .map_err(|_| EvalError::msg(format!("cannot convert '{s}' to uint"))),
            Value::Int(_) | Value::Double(_) => Err(EvalError::msg("unsigned integer overflow")),
            _ => Err(no_overload()),
        },
        ("double", Some(x), None, None) => match x {
            Value::Double(d) => Ok(Value::Double(d)),
            Value::Int(i) => Ok(Value::Double(i as f64)),
            Value::Uint(u) => Ok(Value::Double(u as f64)),
            Value::Str(s) => s
                .parse::<f64>()
                .map(Value::Double)
                .map_err(|_| EvalError::msg(format!("cannot convert '{s}' to double"))),
            _ => Err(no_overload()),
        },
        ("string", Some(x), None, None) => to_string(x),
        ("bool", Some(x), None, None) => match x {
            Value::Bool(b) => Ok(Value::Bool(b)),
            Value::Str(s) => match &*s {
                "true" | "True" | "TRUE" | "t" | "1" => Ok(Value::Bool(true)),
                "false" | "False" | "FALSE" | "f" | "0" => Ok(Value::Bool(false)),
                _ => Err(EvalError::msg(
                    "type conversion error from 'string' to 'bool'",
                )),
            },
            _ => Err(no_overload()),
        },
        ("bytes", Some(x), None, None) => match x {
            Value::Bytes(b) => Ok(Value::Bytes(b)),
            Value::Str(s) => Ok(Value::Bytes(s.as_bytes().to_vec().into())),
            _ => Err(no_overload()),
        },
        ("dyn", Some(x), None, None) => Ok(x),
        ("type", Some(x), None, None) => Ok(Value::Type(x.type_name().into())),
        ("matches", Some(x), Some(y), None) => strings::call(ev, "matches", x, vec![y]),
        ("timestamp", Some(x), None, None) => time::timestamp(x),
        ("duration", Some(x), None, None) => time::duration(x),
        ("strings.quote", Some(Value::Str(s)), None, None) => {
            Ok(Value::str(string_format::quote(&s)))
        }
        // kube's JSONPatch library: a key as a JSON Pointer segment.
        ("jsonpatch.escapeKey", Some(Value::Str(s)), None, None) => {
            Ok(Value::str(s.replace('~', "~0").replace('/', "~1")))
        }
        (crate::macros::MAP_INSERT, Some(m), Some(k), v) => comprehensions::map_insert(m, k, v),
        ("optional.of", Some(x), None, None) => Ok(Value::Optional(Some(Box::new(x)))),
        ("optional.none", None, None, None) => Ok(Value::Optional(None)),
        ("optional.ofNonZeroValue", Some(x), None, None) => Ok(Value::Optional(if is_zero(&x) {
            None
        } else {
            Some(Box::new(x))
        })),
        ("sets.contains" | "sets.equivalent" | "sets.intersects", Some(x), Some(y), None) => {
            lists::sets(ev, name, x, y)
        }
        ("quantity" | "isQuantity", Some(x), None, None) => quantity::global(name, x),
        (
            "url" | "isURL" | "ip" | "isIP" | "cidr" | "isCIDR" | "ip.isCanonical",
            Some(x),
            None,
            None,
        ) => net::global(name, x),
        ("semver" | "isSemver", Some(x), rest, None) => {
            let normalize = matches!(rest, Some(Value::Bool(true)));
            let Value::Str(s) = x else {
                return Err(no_overload());
            };
            let parsed = parse_semver(&s, normalize);
            if name == "isSemver" {
                return Ok(Value::Bool(parsed.is_some()));
            }
            parsed
                .map(|v| Value::Semver(Arc::new(v)))
                .ok_or_else(|| EvalError::msg("invalid semver"))
        }
        (n, x, None, None) if n.starts_with("format.") => format::global(n, x),
        _ => Err(EvalError::msg(format!("no such overload: {name}"))),
    }
}

/// A member function `target.name(args)`.
pub fn call_member(
    ev: &mut Evaluator<'_>,
    name: &str,
    target: Value,
    args: Vec<Value>,
) -> EvalResult {
    match (&target, name) {
        (_, "size") if args.is_empty() => size(&target),
        (Value::Str(_), _) => strings::call(ev, name, target, args),
        (Value::List(..), _) => lists::call(ev, name, target, args),
        (Value::Optional(o), _) => {
            let mut args = args.into_iter();
            match (name, args.next()) {
                ("hasValue", None) => Ok(Value::Bool(o.is_some())),
                ("value", None) => o
                    .as_deref()
                    .cloned()
                    .ok_or_else(|| EvalError::msg("optional.none() dereference")),
                ("orValue", Some(d)) => Ok(o.as_deref().cloned().unwrap_or(d)),
                ("or", Some(d)) => Ok(if o.is_some() { target.clone() } else { d }),
                _ => Err(no_overload()),
            }
        }
        (Value::Quantity(_), _) => quantity::call(name, target, args),
        (Value::Authz(a), _) => authz::call(name, a, args),
        (Value::Url(_) | Value::Ip(_) | Value::Cidr(_), _) => net::call(name, target, args),
        (Value::Format(_), "validate") => format::validate(ev, &target, args),
        (Value::Timestamp(_) | Value::Duration(_), _) => time::call(name, target, args),
        (Value::Semver(v), _) => {
            let other = match args.first() {
                Some(Value::Semver(o)) => Some(o.clone()),
                _ => None,
            };
            match (name, other) {
                ("major", None) => Ok(Value::Int(v.major as i64)),
                ("minor", None) => Ok(Value::Int(v.minor as i64)),
                ("patch", None) => Ok(Value::Int(v.patch as i64)),
                ("isGreaterThan", Some(o)) => Ok(Value::Bool(**v > *o)),
                ("isLessThan", Some(o)) => Ok(Value::Bool(**v < *o)),
                ("compareTo", Some(o)) => Ok(Value::Int(v.cmp(&o) as i64)),
                _ => Err(no_overload()),
            }
        }
        _ => Err(EvalError::msg(format!("no such overload: {name}"))),
    }
}

fn parse_semver(s: &str, normalize: bool) -> Option<semver::Version> {
    if !normalize {
        return semver::Version::parse(s).ok();
    }
    let t = s.strip_prefix('v').unwrap_or(s);
    let (core, rest) = match t.find(['-', '+']) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let mut parts: Vec<String> = core
        .split('.')
        .map(|p| p.trim_start_matches('0').to_string())
        .map(|p| if p.is_empty() { "0".into() } else { p })
        .collect();
    while parts.len() < 3 {
        parts.push("0".into());
    }
    semver::Version::parse(&format!("{}{}", parts.join("."), rest)).ok()
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::Str(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l, _) => l.is_empty(),
        Value::Map(m, _) => m.is_empty(),
        _ => false,
    }
}

fn size(v: &Value) -> EvalResult {
    match v {
        Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
        Value::Bytes(b) => Ok(Value::Int(b.len() as i64)),
        Value::List(l, _) => Ok(Value::Int(l.len() as i64)),
        Value::Map(m, _) => Ok(Value::Int(m.len() as i64)),
        _ => Err(no_overload()),
    }
}

fn to_int(x: Value) -> EvalResult {
    match x {
        Value::Int(i) => Ok(Value::Int(i)),
        Value::Uint(u) => i64::try_from(u)
            .map(Value::Int)
            .map_err(|_| EvalError::msg("integer overflow")),
        Value::Double(d) => {
            if d.is_finite() && d > -9.223372036854776e18 && d < 9.223372036854776e18 {
                Ok(Value::Int(d.trunc() as i64))
            } else {
                Err(EvalError::msg("integer overflow"))
            }
        }
        Value::Str(s) => s
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| EvalError::msg(format!("cannot convert '{s}' to int"))),
        Value::Timestamp(t) => Ok(Value::Int(t.timestamp())),
        _ => Err(no_overload()),
    }
}

fn to_string(x: Value) -> EvalResult {
    Ok(Value::str(match x {
        Value::Str(s) => return Ok(Value::Str(s)),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => format_double(d),
        Value::Bool(b) => b.to_string(),
        Value::Bytes(b) => String::from_utf8(b.to_vec())
            .map_err(|_| EvalError::msg("invalid UTF-8 in bytes, cannot convert to string"))?,
        Value::Timestamp(t) => string_format::rfc3339_nano(&t),
        Value::Duration(d) => time::format_duration(d),
        Value::Ip(ip) => ip.to_string(),
        Value::Cidr(c) => c.to_string(),
        Value::Url(u) => u.to_string(),
        Value::Quantity(q) => q.to_string(),
        Value::Semver(v) => v.to_string(),
        Value::Type(t) => t.to_string(),
        _ => return Err(no_overload()),
    }))
}

/// A double as cel-go's `string()` prints it (Go's `%g`).
pub fn format_double(d: f64) -> String {
    string_format::go_double(d)
}

fn add(_ev: &mut Evaluator<'_>, x: Value, y: Value) -> EvalResult {
    match (x, y) {
        (Value::Int(a), Value::Int(b)) => a
            .checked_add(b)
            .map(Value::Int)
            .ok_or_else(|| EvalError::msg("integer overflow")),
        (Value::Uint(a), Value::Uint(b)) => a
            .checked_add(b)
            .map(Value::Uint)
            .ok_or_else(|| EvalError::msg("unsigned integer overflow")),
        (Value::Double(a), Value::Double(b)) => Ok(Value::Double(a + b)),
        (Value::Str(a), Value::Str(b)) => Ok(Value::str(format!("{a}{b}"))),
        (Value::Bytes(a), Value::Bytes(b)) => {
            let mut v = a.to_vec();
            v.extend_from_slice(&b);
            Ok(Value::Bytes(v.into()))
        }
        (Value::List(a, _), Value::List(b, _)) => {
            let mut v = Vec::with_capacity(a.len() + b.len());
            v.extend(a.iter().cloned());
            v.extend(b.iter().cloned());
            Ok(Value::list(v))
        }
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => t
            .checked_add_signed(d)
            .map(Value::Timestamp)
            .ok_or_else(|| EvalError::msg("timestamp overflow")),
        (Value::Duration(a), Value::Duration(b)) => a
            .checked_add(&b)
            .map(Value::Duration)
            .ok_or_else(|| EvalError::msg("duration overflow")),
        _ => Err(no_overload()),
    }
}

fn sub(x: Value, y: Value) -> EvalResult {
    match (x, y) {
        (Value::Int(a), Value::Int(b)) => a
            .checked_sub(b)
            .map(Value::Int)
            .ok_or_else(|| EvalError::msg("integer overflow")),
        (Value::Uint(a), Value::Uint(b)) => a
            .checked_sub(b)
            .map(Value::Uint)
            .ok_or_else(|| EvalError::msg("unsigned integer overflow")),
        (Value::Double(a), Value::Double(b)) => Ok(Value::Double(a - b)),
        (Value::Timestamp(a), Value::Timestamp(b)) => Ok(Value::Duration(a - b)),
        (Value::Timestamp(t), Value::Duration(d)) => t
            .checked_sub_signed(d)
            .map(Value::Timestamp)
            .ok_or_else(|| EvalError::msg("timestamp overflow")),
        (Value::Duration(a), Value::Duration(b)) => a
            .checked_sub(&b)
            .map(Value::Duration)
            .ok_or_else(|| EvalError::msg("duration overflow")),
        _ => Err(no_overload()),
    }
}

fn index(x: &Value, y: &Value) -> EvalResult {
    match (x, y) {
        (Value::List(l, _), Value::Int(_) | Value::Uint(_) | Value::Double(_)) => {
            let i = match y {
                Value::Int(i) => *i,
                Value::Uint(u) => *u as i64,
                Value::Double(d) if d.fract() == 0.0 => *d as i64,
                _ => return Err(EvalError::msg("unsupported index value")),
            };
            if i < 0 || i as usize >= l.len() {
                return Err(EvalError::msg(format!(
                    "index '{i}' out of range in list size '{}'",
                    l.len()
                )));
            }
            Ok(l[i as usize].clone())
        }
        (Value::Map(m, _), k) => {
            let key = k.to_key().ok_or_else(no_overload)?;
            m.get(&key).cloned().ok_or_else(|| {
                EvalError::msg(format!(
                    "no such key: {}",
                    match k {
                        Value::Str(s) => s.to_string(),
                        other => to_string(other.clone())
                            .ok()
                            .and_then(|v| match v {
                                Value::Str(s) => Some(s.to_string()),
                                _ => None,
                            })
                            .unwrap_or_default(),
                    }
                ))
            })
        }
        _ => Err(no_overload()),
    }
}
