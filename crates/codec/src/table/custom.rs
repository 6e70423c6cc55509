//! Tables of custom resources: the `Name` column and a CRD version's
//! `additionalPrinterColumns`, each cell read with kube's JSONPath (the
//! apiextensions `tableconvertor`).
//!
//! The catalog carries the columns (`ResourceInfo.custom`); the process's
//! catalog follower registers them here by `apiVersion` and kind with
//! [`set_columns`], since the encoders only see objects. The JSONPath
//! subset is hand-written: kube's template dialect (`{.a.b}`, `[0]`, `[*]`,
//! `['x.y']`, `[?(@.k=="v")]`) is not what the RFC 9535 crates parse.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::{json, Value};

use super::columns::OBJECT_META_NAME;
use super::time::{self, Time};
use super::{util, Row};

/// One `additionalPrinterColumns` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomColumn {
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
    /// kube JSONPath, e.g. `.spec.replicas`.
    pub json_path: String,
}

/// The printer of one custom kind.
#[derive(Debug)]
pub(crate) struct CustomPrinter {
    columns: Vec<CustomColumn>,
    paths: Vec<Option<Vec<Step>>>,
}

type Registry = RwLock<HashMap<(String, String), Arc<CustomPrinter>>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// Register (`Some`) or forget (`None`) the columns of `kind` in
/// `api_version` (`group/version`).
pub fn set_columns(api_version: &str, kind: &str, columns: Option<Vec<CustomColumn>>) {
    let mut r = registry().write().unwrap_or_else(|e| e.into_inner());
    let key = (api_version.to_string(), kind.to_string());
    match columns {
        Some(columns) => {
            let paths = columns.iter().map(|c| parse(&c.json_path)).collect();
            r.insert(key, Arc::new(CustomPrinter { columns, paths }));
        }
        None => {
            r.remove(&key);
        }
    }
}

/// The registered printer of `kind` in `api_version`.
pub(crate) fn lookup(api_version: &str, kind: &str) -> Option<Arc<CustomPrinter>> {
    let r = registry().read().unwrap_or_else(|e| e.into_inner());
    r.get(&(api_version.to_string(), kind.to_string())).cloned()
}

impl CustomPrinter {
    /// The column definitions: `Name`, then the CRD's columns.
    pub(crate) fn columns_json(&self) -> Value {
        let mut out = vec![json!({
            "name": "Name", "type": "string", "format": "name",
            "description": OBJECT_META_NAME, "priority": 0,
        })];
        for c in &self.columns {
            out.push(json!({
                "name": c.name, "type": c.type_, "format": c.format,
                "description": c.description, "priority": c.priority,
            }));
        }
        Value::Array(out)
    }

    /// One object's cells.
    pub(crate) fn print(&self, o: &Value, now: Time) -> Row {
        let mut cells = vec![Value::from(util::name(o))];
        for (c, path) in self.columns.iter().zip(&self.paths) {
            let found = path.as_ref().map(|p| eval(p, o)).unwrap_or_default();
            cells.push(cell(c, &found, now));
        }
        Row::new(cells)
    }
}

fn cell(c: &CustomColumn, found: &[&Value], now: Time) -> Value {
    let Some(first) = found.first() else {
        return Value::Null;
    };
    match c.type_.as_str() {
        "string" => Value::from(
            found
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "integer" => match first {
            Value::Number(n) if n.is_i64() || n.is_u64() => (*first).clone(),
            Value::Number(n) => n
                .as_f64()
                .filter(|f| f.fract() == 0.0)
                .map(|f| Value::from(f as i64))
                .unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "number" => match first {
            Value::Number(_) => (*first).clone(),
            _ => Value::Null,
        },
        "boolean" => match first {
            Value::Bool(_) => (*first).clone(),
            _ => Value::Null,
        },
        "date" => match first {
            Value::String(s) => match time::parse(s) {
                Some(t) => {
                    let nanos = (now - t).num_nanoseconds().map_or(i128::MAX, i128::from);
                    Value::from(time::human_duration(nanos))
                }
                None => Value::from("<unknown>"),
            },
            _ => Value::Null,
        },
        _ => (*first).clone(),
    }
}

/// One JSONPath step.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    All,
    /// `[?(@.a.b=="v")]` (or `!=`).
    Filter(Vec<String>, Value, bool),
}

/// Parse kube's JSONPath template of one expression; `None` if it is not
/// one this printer understands (the column prints empty).
fn parse(path: &str) -> Option<Vec<Step>> {
    let p = path.trim();
    let p = p
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or(p);
    let p = p.strip_prefix('$').unwrap_or(p);
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    let mut steps = Vec::new();
    while i < chars.len() {
        match chars[i] {
            '.' => {
                i += 1;
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if name == "*" {
                    steps.push(Step::All);
                } else if !name.is_empty() {
                    steps.push(Step::Field(name));
                }
            }
            '[' => {
                let end = find_close(&chars, i)?;
                let inner: String = chars[i + 1..end].iter().collect();
                steps.push(bracket(inner.trim())?);
                i = end + 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                steps.push(Step::Field(chars[start..i].iter().collect()));
            }
        }
    }
    Some(steps)
}

fn find_close(chars: &[char], open: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (j, &c) in chars.iter().enumerate().skip(open + 1) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ']' => return Some(j),
            None => {}
        }
    }
    None
}

fn unquote(s: &str) -> Option<&str> {
    let s = s.trim();
    s.strip_prefix('\'')
        .and_then(|x| x.strip_suffix('\''))
        .or_else(|| s.strip_prefix('"').and_then(|x| x.strip_suffix('"')))
}

fn bracket(inner: &str) -> Option<Step> {
    if inner == "*" {
        return Some(Step::All);
    }
    if let Some(name) = unquote(inner) {
        return Some(Step::Field(name.to_string()));
    }
    if let Ok(n) = inner.parse::<i64>() {
        return Some(Step::Index(n));
    }
    let f = inner.strip_prefix("?(")?.strip_suffix(')')?.trim();
    let (lhs, rhs, negate) = if let Some((l, r)) = f.split_once("!=") {
        (l, r, true)
    } else {
        let (l, r) = f.split_once("==")?;
        (l, r, false)
    };
    let lhs = lhs.trim().strip_prefix('@')?;
    let fields = lhs
        .split('.')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let rhs = rhs.trim();
    let value = match unquote(rhs) {
        Some(s) => Value::from(s),
        None => serde_json::from_str(rhs).ok()?,
    };
    Some(Step::Filter(fields, value, negate))
}

fn eval<'a>(steps: &[Step], root: &'a Value) -> Vec<&'a Value> {
    let mut cur = vec![root];
    for step in steps {
        let mut next = Vec::new();
        for v in cur {
            match step {
                Step::Field(name) => {
                    if let Some(x) = v.get(name) {
                        next.push(x);
                    }
                }
                Step::Index(n) => {
                    if let Value::Array(a) = v {
                        let idx = if *n < 0 { a.len() as i64 + n } else { *n };
                        if let Some(x) = usize::try_from(idx).ok().and_then(|i| a.get(i)) {
                            next.push(x);
                        }
                    }
                }
                Step::All => match v {
                    Value::Array(a) => next.extend(a.iter()),
                    Value::Object(m) => next.extend(m.values()),
                    _ => {}
                },
                Step::Filter(fields, want, negate) => {
                    if let Value::Array(a) = v {
                        for item in a {
                            let mut got = Some(item);
                            for f in fields {
                                got = got.and_then(|g| g.get(f));
                            }
                            let matches = got == Some(want);
                            if matches != *negate {
                                next.push(item);
                            }
                        }
                    }
                }
            }
        }
        cur = next;
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpath_subset() {
        let o = json!({"spec": {"replicas": 3, "a.b": "x"},
                       "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Other", "status": "False"}]}});
        let get = |p: &str| {
            eval(&parse(p).unwrap(), &o)
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(get(".spec.replicas"), vec![json!(3)]);
        assert_eq!(get("{.spec['a.b']}"), vec![json!("x")]);
        assert_eq!(
            get(".status.conditions[?(@.type==\"Ready\")].status"),
            vec![json!("True")]
        );
        assert_eq!(get(".status.conditions[*].type").len(), 2);
        assert_eq!(get(".status.conditions[1].type"), vec![json!("Other")]);
        assert!(get(".spec.missing").is_empty());
    }

    #[test]
    fn cells_by_type() {
        set_columns(
            "example.com/v1",
            "Widget",
            Some(vec![
                CustomColumn {
                    name: "Replicas".into(),
                    type_: "integer".into(),
                    json_path: ".spec.replicas".into(),
                    ..Default::default()
                },
                CustomColumn {
                    name: "Age".into(),
                    type_: "date".into(),
                    json_path: ".metadata.creationTimestamp".into(),
                    ..Default::default()
                },
            ]),
        );
        let p = lookup("example.com/v1", "Widget").unwrap();
        let now = time::parse("2024-05-01T12:00:00Z").unwrap();
        let row = p.print(
            &json!({"metadata": {"name": "w", "creationTimestamp": "2024-05-01T11:59:00Z"}, "spec": {"replicas": 2}}),
            now,
        );
        assert_eq!(row.cells, vec![json!("w"), json!(2), json!("60s")]);
        assert_eq!(p.columns_json().as_array().unwrap().len(), 3);
        set_columns("example.com/v1", "Widget", None);
        assert!(lookup("example.com/v1", "Widget").is_none());
    }
}
