//! Path elements of a field set, structured-merge-diff's `PathElement`:
//! their total order (what FieldsV1 and conflict lists are sorted by),
//! their FieldsV1 keys (`f:`, `k:`, `v:`, `i:`) and their display in
//! conflict messages (`.spec`, `[name="c"]`, `[=v]`, `[0]`).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

/// One step of a path into an object. Cheap to clone: field sets copy
/// path elements a lot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathElement {
    /// A struct field or map key: `f:name`.
    Field(Arc<str>),
    /// An item of a map-list, by its key fields sorted by name: `k:{...}`.
    Key(Arc<[(String, Value)]>),
    /// An item of a set-list, by its value: `v:...`.
    Value(Arc<Value>),
    /// An item of a list without keys, by position: `i:N`.
    Index(i64),
}

impl PathElement {
    /// The element of field `name`.
    pub(crate) fn field(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The FieldsV1 key of this element.
    pub(crate) fn to_fields_key(&self) -> String {
        match self {
            PathElement::Field(f) => format!("f:{f}"),
            PathElement::Key(k) => {
                let mut m = Map::new();
                for (name, v) in k.iter() {
                    m.insert(name.clone(), v.clone());
                }
                format!("k:{}", Value::Object(m))
            }
            PathElement::Value(v) => format!("v:{v}"),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parse a FieldsV1 key (`.` is not an element and is handled by the
    /// caller).
    pub(crate) fn from_fields_key(s: &str) -> Result<PathElement, String> {
        let (prefix, rest) = s
            .split_once(':')
            .ok_or_else(|| format!("unknown path element prefix in {s:?}"))?;
        match prefix {
            "f" => Ok(PathElement::field(rest)),
            "k" => match serde_json::from_str::<Value>(rest) {
                Ok(Value::Object(m)) => {
                    let mut key: Vec<(String, Value)> = m.into_iter().collect();
                    key.sort_by(|a, b| a.0.cmp(&b.0));
                    Ok(PathElement::Key(key.into()))
                }
                _ => Err(format!("key path element is not a JSON object: {rest}")),
            },
            "v" => serde_json::from_str(rest)
                .map(|v| PathElement::Value(Arc::new(v)))
                .map_err(|e| format!("value path element: {e}")),
            "i" => rest
                .parse()
                .map(PathElement::Index)
                .map_err(|e| format!("index path element: {e}")),
            _ => Err(format!("unknown path element prefix {prefix:?}")),
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b.iter()) {
                    let c = an.cmp(bn).then_with(|| compare_values(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// structured-merge-diff's total order of values: numbers, strings,
/// booleans, lists, maps, null.
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (i, j) in x.iter().zip(y.iter()) {
                let c = compare_values(i, j);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|a, b| a.0.cmp(b.0));
            ys.sort_by(|a, b| a.0.cmp(b.0));
            for ((xk, xv), (yk, yv)) in xs.iter().zip(ys.iter()) {
                let c = xk.cmp(yk).then_with(|| compare_values(xv, yv));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Go's `%v` of a value in a path: strings quoted, the rest as JSON.
fn display_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(n) => write!(f, ".{n}"),
            PathElement::Key(k) => {
                let parts: Vec<String> = k
                    .iter()
                    .map(|(n, v)| format!("{n}={}", display_value(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", display_value(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path, displayed as kube prints it in conflicts (`.spec.replicas`).
pub(crate) struct PathDisplay<'a>(pub &'a [PathElement]);

impl fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_keys_round_trip_and_sort_keys() {
        let k = PathElement::from_fields_key(r#"k:{"protocol":"TCP","containerPort":80}"#).unwrap();
        assert_eq!(
            k.to_fields_key(),
            r#"k:{"containerPort":80,"protocol":"TCP"}"#
        );
        assert_eq!(k.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
        let v = PathElement::from_fields_key(r#"v:"kubernetes""#).unwrap();
        assert_eq!(v, PathElement::Value(json!("kubernetes").into()));
        assert_eq!(v.to_string(), r#"[="kubernetes"]"#);
        assert_eq!(
            PathElement::from_fields_key("i:3").unwrap(),
            PathElement::Index(3)
        );
        assert!(PathElement::from_fields_key("x:1").is_err());
        assert!(PathElement::from_fields_key("k:[1]").is_err());
    }

    #[test]
    fn order_is_fields_keys_values_indexes() {
        let mut v = [
            PathElement::Index(0),
            PathElement::Value(json!("a").into()),
            PathElement::Key(vec![("name".into(), json!("a"))].into()),
            PathElement::field("b"),
            PathElement::field("a"),
            PathElement::Value(json!(1).into()),
        ];
        v.sort();
        let keys: Vec<String> = v.iter().map(PathElement::to_fields_key).collect();
        assert_eq!(
            keys,
            ["f:a", "f:b", r#"k:{"name":"a"}"#, "v:1", r#"v:"a""#, "i:0"]
        );
    }
}
