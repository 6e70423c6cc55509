//! Values as Go's `fmt` prints them, for the error texts kube builds with
//! `fmt.Sprintf`: `strconv.Quote` (`%q`), and `%v`, `%#v` and `%T` of an
//! unstructured JSON value (`map[string]interface{}`, `[]interface{}`,
//! `string`, `int64`, `float64`, `bool`, `nil`), which is what an object
//! decoded without its Go type holds.

use serde_json::Value;

/// Go's `strconv.Quote`: double quotes, Go escapes, non-printable runes as
/// `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `unicode.IsPrint`: not a control, format or
/// separator character other than the ASCII space.
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
        | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
}

/// `%v` of a float64: `strconv.FormatFloat(f, 'g', -1, 64)`, the shortest
/// digits, in exponent form when the exponent is below -4 or at least 6
/// (`1.5`, `123456`, `1e+08`, `1.234567e+06`, `1e-05`).
pub fn go_float_v(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_string()
        } else if f > 0.0 {
            "+Inf".to_string()
        } else {
            "-Inf".to_string()
        };
    }
    // `{:e}` gives the shortest round-trip digits: `1.2345e8`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    // Go decides with precision 6 for the shortest form.
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// `%v` of an unstructured value: `map[a:1 b:x]` (keys sorted), `[a 1]`,
/// `<nil>`, strings bare.
pub fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(go_v).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_v(v)))
                .collect();
            format!("map[{}]", items.join(" "))
        }
    }
}

/// `%#v` of an unstructured value held in an `interface{}`:
/// `map[string]interface {}{"a":1}`, `[]interface {}{"x", 1}`, `"s"`,
/// `interface {}(nil)`.
pub fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => go_quote(s),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(go_sharp_v).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", go_quote(k), go_sharp_v(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", items.join(", "))
        }
    }
}

/// `%T` of an unstructured value.
pub fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn number(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i.to_string(),
        // Beyond int64, Go's decoder holds a float64.
        (None, Some(f)) => go_float_v(f),
        (None, None) => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_as_go_prints_them() {
        assert_eq!(go_float_v(1.5), "1.5");
        assert_eq!(go_float_v(1e8), "1e+08");
        assert_eq!(go_float_v(123456.0), "123456");
        assert_eq!(go_float_v(1234567.0), "1.234567e+06");
        assert_eq!(go_float_v(1234567.5), "1.2345675e+06");
        assert_eq!(go_float_v(0.0001), "0.0001");
        assert_eq!(go_float_v(0.00001), "1e-05");
        assert_eq!(go_float_v(-2.25), "-2.25");
    }

    #[test]
    fn values_as_go_prints_them() {
        let v = json!({"b": [1, "x"], "a": {"c": true}, "d": null});
        assert_eq!(go_v(&v), "map[a:map[c:true] b:[1 x] d:<nil>]");
        assert_eq!(
            go_sharp_v(&v),
            "map[string]interface {}{\"a\":map[string]interface {}{\"c\":true}, \"b\":[]interface {}{1, \"x\"}, \"d\":interface {}(nil)}"
        );
        assert_eq!(go_sharp_v(&json!("a\"b")), "\"a\\\"b\"");
        assert_eq!(go_type(&json!(1)), "int64");
        assert_eq!(go_type(&json!(1.5)), "float64");
        assert_eq!(go_type(&json!({})), "map[string]interface {}");
    }

    #[test]
    fn quotes_as_strconv() {
        assert_eq!(go_quote("a\u{1}\u{200b}é"), "\"a\\x01\\u200bé\"");
    }
}
