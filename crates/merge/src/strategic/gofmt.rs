//! Go's view of a decoded JSON value, as kube's strategic merge patch sees
//! it after `sigs.k8s.io/json` decoded the patch into `interface{}` with
//! integers preserved: its dynamic type (what `reflect.TypeOf` compares)
//! and its `fmt` renderings (`%v`, `%s`), which kube prints in its errors.

use serde_json::{Map, Value};

/// The dynamic Go type of a decoded JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GoType {
    /// `nil` (JSON `null`): no type at all.
    Nil,
    Bool,
    /// An integer that fits `int64`.
    Int64,
    /// Any other number.
    Float64,
    String,
    /// `map[string]interface {}`.
    Map,
    /// `[]interface {}`.
    Slice,
}

impl GoType {
    /// The type of `v`.
    pub(super) fn of(v: &Value) -> GoType {
        match v {
            Value::Null => GoType::Nil,
            Value::Bool(_) => GoType::Bool,
            Value::Number(n) if n.is_i64() => GoType::Int64,
            Value::Number(_) => GoType::Float64,
            Value::String(_) => GoType::String,
            Value::Object(_) => GoType::Map,
            Value::Array(_) => GoType::Slice,
        }
    }

    /// `reflect.Type.String()`, or what `%s` prints for a nil type.
    fn name(self) -> &'static str {
        match self {
            GoType::Nil => "%!s(<nil>)",
            GoType::Bool => "bool",
            GoType::Int64 => "int64",
            GoType::Float64 => "float64",
            GoType::String => "string",
            GoType::Map => "map[string]interface {}",
            GoType::Slice => "[]interface {}",
        }
    }
}

/// `%s` of `reflect.TypeOf(v)`.
pub(super) fn type_name(v: &Value) -> &'static str {
    GoType::of(v).name()
}

/// Go's `%v` of a float64: the shortest representation, in exponent form
/// when the exponent is below -4 or at least 6.
fn float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.unsigned_abs());
    }
    if exp < 0 {
        let zeros = "0".repeat(exp.unsigned_abs() as usize - 1);
        return format!("{sign}0.{zeros}{digits}");
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        let (int, frac) = digits.split_at(int_len);
        format!("{sign}{int}.{frac}")
    }
}

fn number(n: &serde_json::Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => float(n.as_f64().unwrap_or(0.0)),
    }
}

/// Go's `fmt` rendering of a map: `map[k1:v1 k2:v2]`, keys sorted.
fn map_with(m: &Map<String, Value>, item: fn(&Value) -> String) -> String {
    let mut entries: Vec<(&String, &Value)> = m.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let body: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{k}:{}", item(v)))
        .collect();
    format!("map[{}]", body.join(" "))
}

fn list_with(l: &[Value], item: fn(&Value) -> String) -> String {
    let body: Vec<String> = l.iter().map(item).collect();
    format!("[{}]", body.join(" "))
}

/// Go's `%v`.
pub(super) fn v(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => s.clone(),
        Value::Object(m) => map_with(m, v),
        Value::Array(l) => list_with(l, v),
    }
}

/// Go's `%v` of a map.
pub(super) fn v_map(m: &Map<String, Value>) -> String {
    map_with(m, v)
}

/// Go's `%v` of a list.
pub(super) fn v_list(l: &[Value]) -> String {
    list_with(l, v)
}

/// Go's `%s`: strings as they are, anything else as a bad verb
/// (`%!s(int64=5)`), containers element by element.
pub(super) fn s(value: &Value) -> String {
    match value {
        Value::Null => "%!s(<nil>)".into(),
        Value::String(s) => s.clone(),
        Value::Object(m) => map_with(m, s),
        Value::Array(l) => list_with(l, s),
        scalar => format!("%!s({}={})", type_name(scalar), v(scalar)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_go() {
        let cases = [
            (1.5, "1.5"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (123456789.0, "1.23456789e+08"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.25, "-2.25"),
            (1e21, "1e+21"),
            (12.0, "12"),
            (0.5, "0.5"),
        ];
        for (f, want) in cases {
            assert_eq!(float(f), want, "{f}");
        }
    }

    #[test]
    fn values_print_like_go() {
        let m = json!({"name": "c", "image": "x", "ports": [80, 1.5], "env": null, "b": true});
        assert_eq!(v(&m), "map[b:true env:<nil> image:x name:c ports:[80 1.5]]");
        assert_eq!(v(&json!({})), "map[]");
        assert_eq!(s(&json!("merge")), "merge");
        assert_eq!(s(&json!(5)), "%!s(int64=5)");
        assert_eq!(s(&json!(1.5)), "%!s(float64=1.5)");
        assert_eq!(s(&json!(true)), "%!s(bool=true)");
        assert_eq!(s(&json!(null)), "%!s(<nil>)");
        assert_eq!(s(&json!({"a": 1})), "map[a:%!s(int64=1)]");
        assert_eq!(type_name(&json!([])), "[]interface {}");
        assert_eq!(type_name(&json!(null)), "%!s(<nil>)");
        assert_eq!(GoType::of(&json!(18446744073709551615u64)), GoType::Float64);
    }
}
