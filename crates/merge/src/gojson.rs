//! Go `encoding/json` wording for errors in request bodies, so clients see
//! the messages kube-apiserver prints.
//!
//! Hand-written because no crate reproduces Go's messages: serde_json's
//! error classes and positions are translated to Go's `SyntaxError` texts.

use serde_json::Value;

/// Go's `quoteChar`: `'x'`, with `'` and non-printables escaped.
fn quote_char(c: char) -> String {
    match c {
        '\'' => r"'\''".into(),
        '"' => "'\"'".into(),
        c if c.is_control() => format!("'{}'", c.escape_default()),
        c => format!("'{c}'"),
    }
}

/// The character serde_json stopped at (`line`/`column` are 1-based).
fn char_at(body: &[u8], line: usize, column: usize) -> Option<char> {
    let text = String::from_utf8_lossy(body);
    let l = text.split('\n').nth(line.checked_sub(1)?)?;
    let idx = column.checked_sub(1)?;
    l.get(idx..).and_then(|rest| rest.chars().next())
}

/// `invalid character 'o' in literal null (expecting 'u')`: the literal is
/// found from the letters before the failing character.
fn literal_error(body: &[u8], line: usize, column: usize) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let l = text.split('\n').nth(line.checked_sub(1)?)?;
    let (before, after) = l.split_at_checked(column.checked_sub(1)?)?;
    let bad = after.chars().next()?;
    let prefix: String = before
        .chars()
        .rev()
        .take_while(char::is_ascii_alphabetic)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let literal = match prefix.chars().next()? {
        'n' => "null",
        't' => "true",
        'f' => "false",
        _ => return None,
    };
    let expecting = literal.chars().nth(prefix.len())?;
    Some(format!(
        "invalid character {} in literal {literal} (expecting {})",
        quote_char(bad),
        quote_char(expecting)
    ))
}

/// Go's message for a body that is not valid JSON.
pub(crate) fn syntax_error(body: &[u8], e: &serde_json::Error) -> String {
    if e.is_eof() {
        return "unexpected end of JSON input".into();
    }
    let msg = e.to_string();
    let context = if msg.starts_with("expected value") || msg.starts_with("trailing comma") {
        if msg.starts_with("trailing comma") && char_at(body, e.line(), e.column()) == Some('}') {
            "looking for beginning of object key string"
        } else {
            "looking for beginning of value"
        }
    } else if msg.starts_with("key must be a string") {
        "looking for beginning of object key string"
    } else if msg.starts_with("expected `:`") {
        "after object key"
    } else if msg.starts_with("expected `,` or `}`") {
        "after object key:value pair"
    } else if msg.starts_with("expected `,` or `]`") {
        "after array element"
    } else if msg.starts_with("trailing characters") {
        "after top-level value"
    } else if msg.starts_with("expected ident") {
        "in literal"
    } else if msg.contains("escape") || msg.contains("control character") {
        "in string literal"
    } else if msg.contains("number") {
        "in numeric literal"
    } else {
        "looking for beginning of value"
    };
    if context == "in literal" {
        if let Some(m) = literal_error(body, e.line(), e.column()) {
            return m;
        }
    }
    match char_at(body, e.line(), e.column()) {
        Some(c) => format!("invalid character {} {context}", quote_char(c)),
        None => "unexpected end of JSON input".into(),
    }
}

/// Go's name of a JSON value's kind in `UnmarshalTypeError`.
pub(crate) use keelson_apimachinery::field::json_kind as kind;

/// Parse `body` as JSON, or Go's syntax error text.
pub(crate) fn parse(body: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(body).map_err(|e| syntax_error(body, &e))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn go_syntax_messages() {
        let cases: [(&str, &str); 9] = [
            ("", "unexpected end of JSON input"),
            ("{", "unexpected end of JSON input"),
            ("x", "invalid character 'x' looking for beginning of value"),
            (
                "{x",
                "invalid character 'x' looking for beginning of object key string",
            ),
            ("{\"a\" 1}", "invalid character '1' after object key"),
            (
                "{\"a\":1 \"b\"}",
                "invalid character '\"' after object key:value pair",
            ),
            ("[1 2]", "invalid character '2' after array element"),
            ("{} x", "invalid character 'x' after top-level value"),
            (
                "[1,]",
                "invalid character ']' looking for beginning of value",
            ),
        ];
        for (body, want) in cases {
            assert_eq!(parse(body.as_bytes()).unwrap_err(), want, "{body:?}");
        }
    }
}
