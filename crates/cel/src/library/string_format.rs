//! `<string>.format(<list>)` and `strings.quote(<string>)` of cel-go's
//! strings extension at the version kube 1.34 uses (`ext.Strings` v2, so
//! the original formatter, not the v4 one): the clauses `%s %d %f %e %b
//! %x %X %o` with `%.Nf`/`%.Ne` precision, each type's `%s` rendering
//! (lists and maps as CEL literals, doubles in lists as `%.6f`), the
//! `en_US` number formatting of `%f` (thousands separators) and `%e`
//! (`1.5 × 10⁰⁰`), and cel-go's error texts. Also the Go renderings of
//! doubles (`%g`-like `string()`) and timestamps (RFC 3339 with
//! nanoseconds) that `string()` and `%s` share.

use crate::value::{Key, Value};
use chrono::{DateTime, FixedOffset, Timelike};

/// A formatting clause of a format string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clause {
    /// `%s`
    Str,
    /// `%d`
    Decimal,
    /// `%f`, with its precision if given
    Fixed(Option<usize>),
    /// `%e`, with its precision if given (cel-go uses it as a width)
    Scientific(Option<usize>),
    /// `%b`
    Binary,
    /// `%x` (false) or `%X` (true)
    Hex(bool),
    /// `%o`
    Octal,
}

/// Why a format string could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{msg}")]
pub struct FormatError {
    /// cel-go's message.
    pub msg: String,
    /// For a clause that does not fit its argument: which argument.
    pub arg: Option<usize>,
}

impl FormatError {
    fn plain(msg: impl Into<String>) -> FormatError {
        FormatError {
            msg: msg.into(),
            arg: None,
        }
    }
}

/// What a clause rejects its argument with: cel-go's wording of the
/// clause, completed with the argument's type name (`was given <type>`).
pub fn clause_error(c: Clause, type_name: &str) -> String {
    let what = match c {
        Clause::Str => "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps",
        Clause::Decimal => "decimal clause can only be used on integers",
        Clause::Fixed(_) => "fixed-point clause can only be used on doubles",
        Clause::Scientific(_) => "scientific clause can only be used on doubles",
        Clause::Binary => "only integers and bools can be formatted as binary",
        Clause::Hex(_) => "only integers, byte buffers, and strings can be formatted as hex",
        Clause::Octal => "octal clause can only be used on integers",
    };
    format!("{what}, was given {type_name}")
}

/// Walks `fmt` as cel-go's `parseFormatString` does, asking `render` for
/// each clause's text given the argument index. `runtime` selects the
/// order of the two argument checks (the runtime looks the argument up
/// before checking for a trailing `%`; the compile-time validator after).
pub fn walk(
    fmt: &str,
    n_args: usize,
    runtime: bool,
    mut render: impl FnMut(usize, Clause) -> Result<String, FormatError>,
) -> Result<String, FormatError> {
    let b = fmt.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut arg = 0;
    let out_of_range = |a: usize| FormatError::plain(format!("index {a} out of range"));
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            out.push(b'%');
            i += 2;
            continue;
        }
        if runtime && arg >= n_args {
            return Err(out_of_range(arg));
        }
        if i + 1 >= b.len() {
            return Err(FormatError::plain("unexpected end of string"));
        }
        if arg >= n_args {
            return Err(out_of_range(arg));
        }
        let (read, clause) = parse_clause(&b[i + 1..])
            .map_err(|e| FormatError::plain(format!("could not parse formatting clause: {e}")))?;
        let text = render(arg, clause).map_err(|e| FormatError {
            msg: format!("error during formatting: {}", e.msg),
            arg: e.arg,
        })?;
        out.extend_from_slice(text.as_bytes());
        i += 1 + read;
        arg += 1;
    }
    // only whole UTF-8 sequences were copied byte by byte, so this is valid
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Parses one clause after its `%`: how many bytes it takes, and what it is.
fn parse_clause(b: &[u8]) -> Result<(usize, Clause), String> {
    let mut i = 0;
    let mut precision = None;
    if b.first() == Some(&b'.') {
        i = 1;
        let start = i;
        loop {
            match b.get(i) {
                None => {
                    return Err(
                        "error while parsing precision: could not find end of precision specifier"
                            .into(),
                    )
                }
                Some(c) if c.is_ascii_digit() => i += 1,
                Some(_) => break,
            }
        }
        let digits = std::str::from_utf8(&b[start..i]).unwrap_or("");
        precision = Some(digits.parse::<usize>().map_err(|e| {
            let why = match e.kind() {
                std::num::IntErrorKind::Empty => "invalid syntax",
                _ => "value out of range",
            };
            format!("error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"{digits}\": {why}")
        })?);
    }
    let Some(&verb) = b.get(i) else {
        return Err("unexpected end of string".into());
    };
    let clause = match verb {
        b's' => Clause::Str,
        b'd' => Clause::Decimal,
        b'f' => Clause::Fixed(precision),
        b'e' => Clause::Scientific(precision),
        b'b' => Clause::Binary,
        b'x' => Clause::Hex(false),
        b'X' => Clause::Hex(true),
        b'o' => Clause::Octal,
        // cel-go reads one byte as the verb and prints it as a rune
        other => {
            return Err(format!(
                "unrecognized formatting clause \"{}\"",
                other as char
            ))
        }
    };
    Ok((i + 1, clause))
}

/// `fmt.format(args)` at run time.
pub fn format(fmt: &str, args: &[Value]) -> Result<String, String> {
    walk(fmt, args.len(), true, |i, c| {
        let v = args
            .get(i)
            .ok_or_else(|| FormatError::plain(format!("index {i} out of range")))?;
        render(c, v).map_err(FormatError::plain)
    })
    .map_err(|e| e.msg)
}

/// One clause applied to one argument.
fn render(c: Clause, v: &Value) -> Result<String, String> {
    let bad = || clause_error(c, v.type_name());
    match c {
        Clause::Str => format_string(v),
        Clause::Decimal => match v {
            Value::Int(i) => Ok(i.to_string()),
            Value::Uint(u) => Ok(u.to_string()),
            _ => Err(bad()),
        },
        Clause::Fixed(p) => {
            let d = float_arg(v).ok_or_else(bad)?;
            Ok(fixed(d, p.map(cap_precision).unwrap_or(6)))
        }
        Clause::Scientific(p) => {
            let d = float_arg(v).ok_or_else(bad)?;
            // cel-go builds `%<p>e`: the precision becomes a width (`%0e` is a flag)
            let width = p.unwrap_or(6);
            Ok(pad_left(
                scientific(d),
                if width > 1_000_000 { 0 } else { width },
            ))
        }
        Clause::Binary => match v {
            Value::Int(i) => Ok(signed(*i, |m| format!("{m:b}"))),
            Value::Uint(u) => Ok(format!("{u:b}")),
            Value::Bool(b) => Ok(if *b { "1" } else { "0" }.into()),
            _ => Err(bad()),
        },
        Clause::Octal => match v {
            Value::Int(i) => Ok(signed(*i, |m| format!("{m:o}"))),
            Value::Uint(u) => Ok(format!("{u:o}")),
            _ => Err(bad()),
        },
        Clause::Hex(upper) => {
            let s = match v {
                Value::Int(i) => signed(*i, |m| format!("{m:x}")),
                Value::Uint(u) => format!("{u:x}"),
                Value::Str(s) => hex(s.as_bytes()),
                Value::Bytes(b) => hex(b),
                _ => return Err(bad()),
            };
            Ok(if upper { s.to_ascii_uppercase() } else { s })
        }
    }
}

/// Go's `%.Nf` ignores a precision it cannot parse as a number (over 10⁶).
fn cap_precision(p: usize) -> usize {
    if p > 1_000_000 {
        6
    } else {
        p
    }
}

/// `%f` and `%e` take doubles, and the strings `NaN`, `Infinity`, `-Infinity`.
fn float_arg(v: &Value) -> Option<f64> {
    match v {
        Value::Double(d) => Some(*d),
        Value::Str(s) => match &**s {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Go's formatting of a negative integer in a base: a sign and the magnitude.
fn signed(i: i64, f: impl Fn(u64) -> String) -> String {
    if i < 0 {
        format!("-{}", f(i.unsigned_abs()))
    } else {
        f(i as u64)
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn pad_left(s: String, width: usize) -> String {
    let n = s.chars().count();
    if n >= width {
        s
    } else {
        format!("{}{s}", " ".repeat(width - n))
    }
}

/// `%f` as `golang.org/x/text/message` prints it for `en_US`: grouped
/// thousands, `∞` and `NaN`.
fn fixed(d: f64, precision: usize) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    let sign = if d.is_sign_negative() { "-" } else { "" };
    if d.is_infinite() {
        return format!("{sign}∞");
    }
    let s = format!("{:.*}", precision, d.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s.as_str(), None),
    };
    let mut grouped = String::with_capacity(s.len() + int.len() / 3 + 1);
    for (n, c) in int.chars().enumerate() {
        if n > 0 && (int.len() - n) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// `%e` as `golang.org/x/text/message` prints it for `en_US`: six
/// fraction digits, `×`, and a superscript exponent of two digits or more.
fn scientific(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    let sign = if d.is_sign_negative() { "-" } else { "" };
    if d.is_infinite() {
        return format!("{sign}∞");
    }
    let s = format!("{:.6e}", d.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    const SUPER: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut digits: String = exp
        .unsigned_abs()
        .to_string()
        .bytes()
        .map(|b| SUPER[(b - b'0') as usize])
        .collect();
    if digits.chars().count() < 2 {
        digits.insert(0, '⁰');
    }
    let minus = if exp < 0 { "⁻" } else { "" };
    format!("{sign}{mantissa}\u{202f}×\u{202f}10{minus}{digits}")
}

/// `%s` of a value (cel-go's `FormatString`).
pub fn format_string(v: &Value) -> Result<String, String> {
    Ok(match v {
        Value::List(..) => format_list(v)?,
        Value::Map(..) => format_map(v)?,
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => go_double(*d),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.to_string(),
        Value::Timestamp(t) => rfc3339_nano(t),
        Value::Bytes(b) => bytes_to_string(b)?,
        Value::Duration(d) => super::time::format_duration(*d),
        Value::Type(t) => t.to_string(),
        Value::Null => "null".into(),
        other => return Err(clause_error(Clause::Str, other.type_name())),
    })
}

fn bytes_to_string(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|_| {
        "could not convert argument \"invalid UTF-8 in bytes, cannot convert to string\" to string"
            .to_string()
    })
}

/// An element of a list or map under `%s`: a CEL literal.
fn element(v: &Value) -> Result<String, String> {
    Ok(match v {
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Str(s) => go_quote(s),
        Value::Bytes(b) => format!("b{}", go_quote(&bytes_to_string(b)?)),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Type(t) => t.to_string(),
        Value::Timestamp(t) => format!("timestamp({})", go_quote(&rfc3339_nano(t))),
        Value::Duration(d) => format!("duration({})", go_quote(&super::time::format_duration(*d))),
        Value::List(..) => format_list(v)?,
        Value::Map(..) => format_map(v)?,
        Value::Double(d) => {
            let s = go_fixed6(*d);
            if d.is_finite() {
                s
            } else {
                go_quote(&s)
            }
        }
        other => return Err(format!("no formatting function for {}", other.type_name())),
    })
}

/// Go's plain `%.6f` (no grouping; `+Inf`, `-Inf`, `NaN`).
fn go_fixed6(d: f64) -> String {
    if d.is_nan() {
        "NaN".into()
    } else if d.is_infinite() {
        if d > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{d:.6}")
    }
}

fn format_list(v: &Value) -> Result<String, String> {
    let Value::List(l, _) = v else {
        return Err(clause_error(Clause::Str, v.type_name()));
    };
    let parts = l.iter().map(element).collect::<Result<Vec<_>, _>>()?;
    Ok(format!("[{}]", parts.join(", ")))
}

fn format_map(v: &Value) -> Result<String, String> {
    let Value::Map(m, _) = v else {
        return Err(clause_error(Clause::Str, v.type_name()));
    };
    let mut entries = Vec::with_capacity(m.len());
    for (k, val) in m.iter() {
        let key = match k {
            Key::Str(s) => go_quote(s),
            Key::Bool(b) => b.to_string(),
            Key::Int(i) => i.to_string(),
            Key::Uint(u) => u.to_string(),
        };
        entries.push((key, element(val)?));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let parts: Vec<String> = entries.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    Ok(format!("{{{}}}", parts.join(", ")))
}

pub use keelson_apimachinery::gofmt::go_quote;

/// `strings.quote(s)`: double quotes, and CEL's escapes for `\a \b \f \n
/// \r \t \v \\ "`; every other character as it is.
pub fn quote(s: &str) -> String {
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
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A double as cel-go's `string()` prints it: Go's shortest `%g`
/// (`1e+06`, `2e-09`, `2.71`, `+Inf`).
pub fn go_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // shortest round-trip digits, in scientific form: "1.2345e-7"
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if d < 0.0 { "-" } else { "" };
    // Go's shortest %g switches to %e below 1e-4 and from 1e6 up
    if !(-4..6).contains(&exp) {
        let frac = &digits[1..];
        let e_sign = if exp < 0 { '-' } else { '+' };
        let frac = if frac.is_empty() {
            String::new()
        } else {
            format!(".{frac}")
        };
        return format!(
            "{sign}{}{frac}e{e_sign}{:02}",
            &digits[..1],
            exp.unsigned_abs()
        );
    }
    // plain decimal with exactly the shortest digits
    let dp = exp + 1; // digits before the point
    let body = if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(dp as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    };
    format!("{sign}{body}")
}

/// A timestamp as Go's `time.RFC3339Nano` prints it: fraction digits
/// without trailing zeros, `Z` for UTC.
pub fn rfc3339_nano(t: &DateTime<FixedOffset>) -> String {
    let mut s = t.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = t.nanosecond() % 1_000_000_000;
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    let off = t.offset().local_minus_utc();
    if off == 0 {
        s.push('Z');
    } else {
        let sign = if off < 0 { '-' } else { '+' };
        let a = off.unsigned_abs();
        s.push_str(&format!("{sign}{:02}:{:02}", a / 3600, (a % 3600) / 60));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn f(fmt: &str, args: Vec<Value>) -> Result<String, String> {
        format(fmt, &args)
    }

    #[test]
    fn clauses_render_as_cel_go() {
        let s = |x: &str| Value::str(x);
        assert_eq!(
            f("%d %s, %%", vec![Value::Int(-3), s("x")]),
            Ok("-3 x, %".into())
        );
        assert_eq!(f("%.3f", vec![Value::Double(1.2345)]), Ok("1.234".into()));
        assert_eq!(f("%f", vec![Value::Double(2.5)]), Ok("2.500000".into()));
        assert_eq!(
            f("%.2f", vec![Value::Double(-1234567.891)]),
            Ok("-1,234,567.89".into())
        );
        assert_eq!(f("%f", vec![s("-Infinity")]), Ok("-∞".into()));
        assert_eq!(f("%f", vec![s("NaN")]), Ok("NaN".into()));
        assert_eq!(
            f("%e", vec![Value::Double(2.5)]),
            Ok("2.500000\u{202f}×\u{202f}10⁰⁰".into())
        );
        assert_eq!(
            f("%.6e", vec![Value::Double(1052.032911275)]),
            Ok("1.052033\u{202f}×\u{202f}10⁰³".into())
        );
        assert_eq!(
            f("%e", vec![Value::Double(0.00025)]),
            Ok("2.500000\u{202f}×\u{202f}10⁻⁰⁴".into())
        );
        // cel-go turns %e's precision into a width
        assert_eq!(f("%e", vec![s("NaN")]), Ok("   NaN".into()));
        assert_eq!(
            f("%b %b", vec![Value::Int(-5), Value::Bool(true)]),
            Ok("-101 1".into())
        );
        assert_eq!(f("%o", vec![Value::Uint(65535)]), Ok("177777".into()));
        assert_eq!(
            f("%x %X", vec![Value::Int(-30), Value::Int(30)]),
            Ok("-1e 1E".into())
        );
        assert_eq!(
            f("%x", vec![s("Hello world!")]),
            Ok("48656c6c6f20776f726c6421".into())
        );
        assert_eq!(
            f("%X", vec![Value::Bytes(Arc::from(&b"\0byte"[..]))]),
            Ok("0062797465".into())
        );
    }

    #[test]
    fn string_clause_renders_each_type() {
        let ts = chrono::DateTime::parse_from_rfc3339("2023-02-03T23:31:20+00:00").unwrap();
        let list = Value::list(vec![
            Value::str("abc"),
            Value::Double(3.25),
            Value::Null,
            Value::list(vec![Value::Int(9), Value::Int(8)]),
            Value::Timestamp(ts),
            Value::Double(f64::INFINITY),
            Value::Bytes(Arc::from(&b"xyz"[..])),
        ]);
        assert_eq!(
            f("%s", vec![list]),
            Ok(r#"["abc", 3.250000, null, [9, 8], timestamp("2023-02-03T23:31:20Z"), "+Inf", b"xyz"]"#.into())
        );
        let mut m = crate::value::MapData::new();
        m.insert(
            Key::Str("key2".into()),
            Value::Duration(chrono::Duration::hours(2)),
        );
        m.insert(Key::Str("key1".into()), Value::Bool(true));
        assert_eq!(
            f("%s", vec![Value::Map(Arc::new(m), false)]),
            Ok(r#"{"key1":true, "key2":duration("7200s")}"#.into())
        );
        assert_eq!(
            f("%s", vec![Value::Double(0.000000002)]),
            Ok("2e-09".into())
        );
        assert_eq!(f("%s", vec![Value::Double(2.71)]), Ok("2.71".into()));
        assert_eq!(f("%s", vec![Value::Double(1e6)]), Ok("1e+06".into()));
        assert_eq!(f("%s", vec![Value::Double(123456.0)]), Ok("123456".into()));
        assert_eq!(
            f("%s", vec![Value::Double(f64::NEG_INFINITY)]),
            Ok("-Inf".into())
        );
        assert_eq!(
            f(
                "%s",
                vec![Value::Duration(chrono::Duration::nanoseconds(2))]
            ),
            Ok("0.000000002s".into())
        );
        assert_eq!(f("null: %s", vec![Value::Null]), Ok("null: null".into()));
        assert_eq!(
            f("%s", vec![Value::Type("string".into())]),
            Ok("string".into())
        );
        assert_eq!(
            f(
                "%s",
                vec![Value::Timestamp(ts + chrono::Duration::milliseconds(500))]
            ),
            Ok("2023-02-03T23:31:20.5Z".into())
        );
    }

    #[test]
    fn errors_are_worded_as_cel_go() {
        let s = |x: &str| Value::str(x);
        assert_eq!(
            f("%d %d %d", vec![Value::Int(0), Value::Int(1)]),
            Err("index 2 out of range".into())
        );
        assert_eq!(f("filler %", vec![]), Err("index 0 out of range".into()));
        assert_eq!(
            f("filler %", vec![Value::Int(1)]),
            Err("unexpected end of string".into())
        );
        assert_eq!(
            f("%a", vec![Value::Int(1)]),
            Err("could not parse formatting clause: unrecognized formatting clause \"a\"".into())
        );
        assert_eq!(
            f("%.34", vec![Value::Double(5.0)]),
            Err("could not parse formatting clause: error while parsing precision: could not find end of precision specifier".into())
        );
        assert_eq!(
            f("string is %b", vec![s("abc")]),
            Err("error during formatting: only integers and bools can be formatted as binary, was given string".into())
        );
        assert_eq!(
            f("%d", vec![Value::Duration(chrono::Duration::seconds(1))]),
            Err("error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration".into())
        );
        assert_eq!(
            f("%s", vec![Value::Optional(None)]),
            Err("error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type".into())
        );
        assert_eq!(
            f("%s", vec![Value::list(vec![Value::Optional(None)])]),
            Err("error during formatting: no formatting function for optional_type".into())
        );
        // unused arguments are only a compile-time error
        assert_eq!(f("%s", vec![s("a"), s("b")]), Ok("a".into()));
    }

    #[test]
    fn quote_escapes_only_cel_escapes() {
        assert_eq!(quote("first\nsecond"), "\"first\\nsecond\"");
        assert_eq!(quote("bell\u{7}"), "\"bell\\a\"");
        assert_eq!(quote("mid \" quote \\"), "\"mid \\\" quote \\\\\"");
        assert_eq!(quote("завтра😀"), "\"завтра😀\"");
        assert_eq!(quote(""), "\"\"");
    }
}
