//! JSON written the way kube-apiserver's encoder writes it: Go's
//! `encoding/json` with HTML escaping on (its default, which apimachinery's
//! JSON serializer, `json.MarshalIndent` and unstructured objects all use),
//! so inside strings `<`, `>`, `&`, U+2028 and U+2029 are `\u003c`,
//! `\u003e`, `\u0026`, `\u2028` and `\u2029`. Everything else is
//! serde_json's compact output, which matches Go's for the other
//! characters (`"`, `\\`, control characters). Numbers are Go's too: a
//! float64 in its shortest form without a zero fraction (`1`, not `1.0`),
//! in exponent form below 1e-6 and from 1e21 (`1e+21`, `1e-7`), and an
//! unsigned integer beyond int64 as the float64 Go decodes it to
//! ([`go_float`]).
//!
//! Every JSON response body goes through these helpers; request bodies are
//! read with plain serde_json (the escapes are ordinary JSON).

use std::io;

use serde::Serialize;

/// serde_json's compact output with Go's HTML-safe string escapes.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoEscapes;

/// Whether `b` starts a character Go escapes: `<`, `>`, `&`, or the first
/// byte of U+2028/U+2029 (`E2 80 A8` / `E2 80 A9`).
#[inline]
fn special(b: u8) -> bool {
    matches!(b, b'<' | b'>' | b'&' | 0xE2)
}

/// Go's `encoding/json` rendering of a float64 (its `floatEncoder`):
/// `strconv.FormatFloat(f, 'f', -1, 64)`, or `'e'` when `|f|` is below
/// 1e-6 or at least 1e21, with a one-digit negative exponent unpadded.
pub fn go_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        // Rust's `Display` is the shortest round-trip decimal, as `'f', -1`.
        return format!("{f}");
    }
    // `{:e}`: shortest digits, `1.5e-7` / `1e21`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    match exp.strip_prefix('-') {
        Some(neg) => format!("{mantissa}e-{neg}"),
        None => format!("{mantissa}e+{exp:0>2}"),
    }
}

impl serde_json::ser::Formatter for GoEscapes {
    fn write_f64<W>(&mut self, writer: &mut W, value: f64) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        writer.write_all(go_float(value).as_bytes())
    }

    fn write_f32<W>(&mut self, writer: &mut W, value: f32) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        writer.write_all(go_float(f64::from(value)).as_bytes())
    }

    fn write_u64<W>(&mut self, writer: &mut W, value: u64) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        // Go decodes an integer beyond int64 into a float64.
        if value > i64::MAX as u64 {
            return writer.write_all(go_float(value as f64).as_bytes());
        }
        writer.write_all(value.to_string().as_bytes())
    }

    fn write_string_fragment<W>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        let bytes = fragment.as_bytes();
        // Fast path: one scan over the bytes; most strings hold none of the
        // five characters and are written as they are.
        let Some(first) = bytes.iter().position(|&b| special(b)) else {
            return writer.write_all(bytes);
        };
        let mut start = 0;
        let mut i = first;
        while i < bytes.len() {
            let escaped: &[u8] = match bytes[i] {
                b'<' => b"\\u003c",
                b'>' => b"\\u003e",
                b'&' => b"\\u0026",
                0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => {
                    b"\\u2028"
                }
                0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => {
                    b"\\u2029"
                }
                _ => {
                    i += 1;
                    continue;
                }
            };
            writer.write_all(&bytes[start..i])?;
            writer.write_all(escaped)?;
            i += if bytes[i] == 0xE2 { 3 } else { 1 };
            start = i;
        }
        writer.write_all(&bytes[start..])
    }
}

/// `value` as Go's `json.Marshal` writes it (compact, HTML escapes; map
/// keys in the order `value` gives them).
pub fn to_vec_go<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    to_writer_go(&mut out, value)?;
    Ok(out)
}

/// [`to_vec_go`] into a writer.
pub fn to_writer_go<W: io::Write, T: ?Sized + Serialize>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(writer, GoEscapes);
    value.serialize(&mut ser)
}

/// [`to_vec_go`] as a `String` (the output is UTF-8).
pub fn to_string_go<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let bytes = to_vec_go(value)?;
    // serde_json writes UTF-8 and the escapes are ASCII.
    Ok(String::from_utf8(bytes).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn floats_as_go_writes_them() {
        let cases = [
            ("1.0", "1"),
            ("2.50", "2.5"),
            ("1e3", "1000"),
            ("-0.0", "-0"),
            ("1.5", "1.5"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("1.5e-10", "1.5e-10"),
            ("100000000000000000000", "100000000000000000000"),
            ("1e21", "1e+21"),
            ("12345678901234567890123", "1.2345678901234568e+22"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("18446744073709551615", "18446744073709552000"),
            ("9223372036854775807", "9223372036854775807"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("0.1", "0.1"),
        ];
        for (input, want) in cases {
            let v: Value = serde_json::from_str(input).unwrap();
            assert_eq!(to_string_go(&v).unwrap(), want, "{input}");
        }
        assert_eq!(
            to_string_go(&json!({"spec": {"a": 1.0, "b": 2.5}})).unwrap(),
            r#"{"spec":{"a":1,"b":2.5}}"#
        );
    }

    #[test]
    fn escapes_what_go_escapes() {
        let v = json!({"k": "<a&b>", "<key>": "x\u{2028}y\u{2029}z"});
        assert_eq!(
            to_string_go(&v).unwrap(),
            r#"{"k":"\u003ca\u0026b\u003e","\u003ckey\u003e":"x\u2028y\u2029z"}"#
        );
    }

    #[test]
    fn leaves_everything_else_as_serde_json_writes_it() {
        let v = json!({"a": "plain", "q": "\"\\\n\t\u{1}", "u": "héllo — ☃ \u{2027}\u{202A}", "n": [1, 2.5, null, true]});
        assert_eq!(to_vec_go(&v).unwrap(), serde_json::to_vec(&v).unwrap());
    }

    #[test]
    fn escapes_next_to_serde_json_escapes_and_at_the_edges() {
        for s in [
            "<",
            "&\"&",
            "\n<\n",
            "a\u{2028}",
            "\u{2029}>",
            "\u{2028}\u{2028}",
            "€<",
        ] {
            let out = to_string_go(&Value::from(s)).unwrap();
            assert!(
                !out.contains(['<', '>', '&', '\u{2028}', '\u{2029}']),
                "{s:?} -> {out}"
            );
            let back: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(back, s, "{out}");
        }
    }

    #[test]
    fn writer_and_vec_agree() {
        let v = json!({"x": ["<>", {"y": "&"}]});
        let mut out = Vec::new();
        to_writer_go(&mut out, &v).unwrap();
        assert_eq!(out, to_vec_go(&v).unwrap());
        assert_eq!(out, br#"{"x":["\u003c\u003e",{"y":"\u0026"}]}"#);
    }
}
