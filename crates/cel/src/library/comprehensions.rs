//! The runtime half of the two-variable comprehension macros:
//! `cel.@mapInsert`, which `transformMap` and `transformMapEntry` build
//! their result with (cel-go's `ext.TwoVarComprehensions`).

use super::no_overload;
use crate::eval::{EvalError, EvalResult};
use crate::value::{Key, Value};
use std::sync::Arc;

/// `cel.@mapInsert(m, k, v)` inserts one entry, `cel.@mapInsert(m, entries)`
/// every entry of a map; an existing key is cel-go's `insert failed` error.
pub fn map_insert(m: Value, k: Value, v: Option<Value>) -> EvalResult {
    let Value::Map(map, object) = m else {
        return Err(no_overload());
    };
    let mut out = Arc::unwrap_or_clone(map);
    let entries: Vec<(Key, Value)> = match v {
        Some(v) => {
            let key = k.to_key().ok_or_else(|| {
                EvalError::msg(format!("unsupported key type: {}", k.type_name()))
            })?;
            vec![(key, v)]
        }
        None => match k {
            Value::Map(update, _) => update.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => return Err(no_overload()),
        },
    };
    for (key, v) in entries {
        if contains_key(&out, &key) {
            let shown = match &key {
                Key::Str(s) => s.to_string(),
                Key::Int(i) => i.to_string(),
                Key::Uint(u) => u.to_string(),
                Key::Bool(b) => b.to_string(),
            };
            return Err(EvalError::msg(format!(
                "insert failed: key {shown} already exists"
            )));
        }
        out.insert(key, v);
    }
    Ok(Value::Map(Arc::new(out), object))
}

/// CEL key equality: `1`, `1u` and `1.0` are one key.
fn contains_key(m: &crate::value::MapData, k: &Key) -> bool {
    if m.contains_key(k) {
        return true;
    }
    match k {
        Key::Int(i) => u64::try_from(*i).is_ok_and(|u| m.contains_key(&Key::Uint(u))),
        Key::Uint(u) => i64::try_from(*u).is_ok_and(|i| m.contains_key(&Key::Int(i))),
        _ => false,
    }
}
