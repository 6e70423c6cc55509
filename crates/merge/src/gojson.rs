//! Go `encoding/json` wording for errors in request bodies, so clients see
//! the messages kube-apiserver prints.
//!
//! The syntax texts are [`keelson_apimachinery::go_syntax`]'s (Go's
//! scanner).

use serde_json::Value;

/// Go's name of a JSON value's kind in `UnmarshalTypeError`.
pub(crate) use keelson_apimachinery::field::json_kind as kind;

/// Parse `body` as JSON, or Go's syntax error text.
pub(crate) fn parse(body: &[u8]) -> Result<Value, String> {
    keelson_apimachinery::go_syntax::parse(body)
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
