//! Go's `encoding/json` syntax check (`checkValid`), for its error words:
//! kube-apiserver reads a body's type meta with `json.Unmarshal`, which
//! scans the whole input first and reports the first syntax error as
//! `unexpected end of JSON input` or `invalid character 'x' <context>`.
//!
//! Hand-written because no crate reproduces Go's messages: Go's scanner
//! state machine kept to its error texts, the one home of those texts for
//! the codec, the merge service and validation of JSON held in strings.

/// Go's `maxNestingDepth`.
const MAX_DEPTH: usize = 10_000;

/// What a composite value is waiting for (Go's `parseState`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// The scanner's step (Go's `scanner.step` functions).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    /// `\u` plus this many hex digits read so far.
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    /// Inside `true`, `false` or `null`: the bytes still expected.
    Literal(&'static [u8], &'static str),
}

struct Scanner {
    step: Step,
    end_top: bool,
    stack: Vec<Parse>,
    err: Option<String>,
}

/// `Err` holds the message Go's `json.Unmarshal` gives for the first
/// syntax error in `data`.
pub fn check_valid(data: &[u8]) -> Result<(), String> {
    let mut s = Scanner {
        step: Step::BeginValue,
        end_top: false,
        stack: Vec::new(),
        err: None,
    };
    for &c in data {
        s.feed(c);
        if let Some(e) = s.err.take() {
            return Err(e);
        }
    }
    // Go's `eof`: a space ends a pending number, then the value must be
    // complete.
    if s.end_top {
        return Ok(());
    }
    s.feed(b' ');
    if let Some(e) = s.err.take() {
        return Err(e);
    }
    if s.end_top {
        return Ok(());
    }
    Err("unexpected end of JSON input".to_string())
}

/// Parse `data` as JSON; on failure, Go's `json.Unmarshal` message for it
/// (serde_json's own when Go's scanner finds no syntax error, as for a
/// nesting deeper than serde_json reads).
pub fn parse(data: &[u8]) -> Result<serde_json::Value, String> {
    serde_json::from_slice(data).map_err(|e| match check_valid(data) {
        Err(go) => go,
        Ok(()) => e.to_string(),
    })
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

/// Go's `quoteChar`: the byte as `strconv.Quote(string(rune(c)))` between
/// single quotes.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_string(),
        b'"' => "'\"'".to_string(),
        0x07 => r"'\a'".to_string(),
        0x08 => r"'\b'".to_string(),
        0x0c => r"'\f'".to_string(),
        b'\n' => r"'\n'".to_string(),
        b'\r' => r"'\r'".to_string(),
        b'\t' => r"'\t'".to_string(),
        0x0b => r"'\v'".to_string(),
        b'\\' => r"'\\'".to_string(),
        0x00..=0x1f | 0x7f => format!(r"'\x{c:02x}'"),
        // Latin-1 code points Go's `IsPrint` refuses: C1 controls, the
        // no-break space and the soft hyphen.
        0x80..=0xa0 | 0xad => format!(r"'\u{c:04x}'"),
        _ => format!("'{}'", char::from(c)),
    }
}

impl Scanner {
    fn error(&mut self, c: u8, context: &str) {
        self.err = Some(format!("invalid character {} {context}", quote_char(c)));
    }

    fn push(&mut self, c: u8, p: Parse) {
        self.stack.push(p);
        if self.stack.len() > MAX_DEPTH {
            self.error(c, "exceeded max depth");
        }
    }

    fn pop(&mut self) {
        self.stack.pop();
        if self.stack.is_empty() {
            self.step = Step::EndTop;
            self.end_top = true;
        } else {
            self.step = Step::EndValue;
        }
    }

    fn feed(&mut self, c: u8) {
        match self.step {
            Step::BeginValueOrEmpty => {
                if is_space(c) {
                } else if c == b']' {
                    self.end_value(c)
                } else {
                    self.begin_value(c)
                }
            }
            Step::BeginValue => self.begin_value(c),
            Step::BeginStringOrEmpty => {
                if is_space(c) {
                } else if c == b'}' {
                    if let Some(top) = self.stack.last_mut() {
                        *top = Parse::ObjectValue;
                    }
                    self.end_value(c)
                } else {
                    self.begin_string(c)
                }
            }
            Step::BeginString => self.begin_string(c),
            Step::EndValue => self.end_value(c),
            Step::EndTop => self.end_top_byte(c),
            Step::InString => match c {
                b'"' => self.step = Step::EndValue,
                b'\\' => self.step = Step::InStringEsc,
                0x00..=0x1f => self.error(c, "in string literal"),
                _ => {}
            },
            Step::InStringEsc => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {
                    self.step = Step::InString
                }
                b'u' => self.step = Step::InStringEscU(0),
                _ => self.error(c, "in string escape code"),
            },
            Step::InStringEscU(n) => {
                if is_hex(c) {
                    self.step = if n == 3 {
                        Step::InString
                    } else {
                        Step::InStringEscU(n + 1)
                    };
                } else {
                    self.error(c, "in \\u hexadecimal character escape")
                }
            }
            Step::Neg => match c {
                b'0' => self.step = Step::Zero,
                b'1'..=b'9' => self.step = Step::One,
                _ => self.error(c, "in numeric literal"),
            },
            Step::One => {
                if c.is_ascii_digit() {
                } else {
                    self.zero(c)
                }
            }
            Step::Zero => self.zero(c),
            Step::Dot => {
                if c.is_ascii_digit() {
                    self.step = Step::Dot0
                } else {
                    self.error(c, "after decimal point in numeric literal")
                }
            }
            Step::Dot0 => {
                if c.is_ascii_digit() {
                } else if c == b'e' || c == b'E' {
                    self.step = Step::E
                } else {
                    self.end_value(c)
                }
            }
            Step::E => {
                if c == b'+' || c == b'-' {
                    self.step = Step::ESign
                } else {
                    self.e_sign(c)
                }
            }
            Step::ESign => self.e_sign(c),
            Step::E0 => {
                if !c.is_ascii_digit() {
                    self.end_value(c)
                }
            }
            Step::Literal(rest, word) => {
                if let Some((&want, more)) = rest.split_first() {
                    if c == want {
                        self.step = if more.is_empty() {
                            Step::EndValue
                        } else {
                            Step::Literal(more, word)
                        };
                    } else {
                        self.error(
                            c,
                            &format!("in literal {word} (expecting {})", quote_char(want)),
                        )
                    }
                }
            }
        }
    }

    fn begin_value(&mut self, c: u8) {
        if is_space(c) {
            return;
        }
        match c {
            b'{' => {
                self.step = Step::BeginStringOrEmpty;
                self.push(c, Parse::ObjectKey)
            }
            b'[' => {
                self.step = Step::BeginValueOrEmpty;
                self.push(c, Parse::ArrayValue)
            }
            b'"' => self.step = Step::InString,
            b'-' => self.step = Step::Neg,
            b'0' => self.step = Step::Zero,
            b'1'..=b'9' => self.step = Step::One,
            b't' => self.step = Step::Literal(b"rue", "true"),
            b'f' => self.step = Step::Literal(b"alse", "false"),
            b'n' => self.step = Step::Literal(b"ull", "null"),
            _ => self.error(c, "looking for beginning of value"),
        }
    }

    fn begin_string(&mut self, c: u8) {
        if is_space(c) {
        } else if c == b'"' {
            self.step = Step::InString
        } else {
            self.error(c, "looking for beginning of object key string")
        }
    }

    fn zero(&mut self, c: u8) {
        match c {
            b'.' => self.step = Step::Dot,
            b'e' | b'E' => self.step = Step::E,
            _ => self.end_value(c),
        }
    }

    fn e_sign(&mut self, c: u8) {
        if c.is_ascii_digit() {
            self.step = Step::E0
        } else {
            self.error(c, "in exponent of numeric literal")
        }
    }

    fn end_top_byte(&mut self, c: u8) {
        if !is_space(c) {
            self.error(c, "after top-level value")
        }
    }

    fn end_value(&mut self, c: u8) {
        let Some(&top) = self.stack.last() else {
            self.step = Step::EndTop;
            self.end_top = true;
            return self.end_top_byte(c);
        };
        if is_space(c) {
            self.step = Step::EndValue;
            return;
        }
        match top {
            Parse::ObjectKey => {
                if c == b':' {
                    if let Some(t) = self.stack.last_mut() {
                        *t = Parse::ObjectValue;
                    }
                    self.step = Step::BeginValue
                } else {
                    self.error(c, "after object key")
                }
            }
            Parse::ObjectValue => match c {
                b',' => {
                    if let Some(t) = self.stack.last_mut() {
                        *t = Parse::ObjectKey;
                    }
                    self.step = Step::BeginString
                }
                b'}' => self.pop(),
                _ => self.error(c, "after object key:value pair"),
            },
            Parse::ArrayValue => match c {
                b',' => self.step = Step::BeginValue,
                b']' => self.pop(),
                _ => self.error(c, "after array element"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_valid;

    fn err(s: &str) -> String {
        check_valid(s.as_bytes()).unwrap_err()
    }

    #[test]
    fn valid_documents() {
        for ok in [
            "{}",
            " [ ] ",
            r#"{"a":[1,-0.5e+3,true,false,null,"\u00e9\n"]}"#,
            "0",
            "12",
            "1.5E9\n",
            "\"x\"",
        ] {
            assert_eq!(check_valid(ok.as_bytes()), Ok(()), "{ok}");
        }
    }

    #[test]
    fn go_words() {
        assert_eq!(err(""), "unexpected end of JSON input");
        assert_eq!(err("   "), "unexpected end of JSON input");
        assert_eq!(
            err(r#"{"apiVersion":"v1","kind":"ConfigMap""#),
            "unexpected end of JSON input"
        );
        assert_eq!(err("-"), "invalid character ' ' in numeric literal");
        assert_eq!(err(r#"{"a":"#), "unexpected end of JSON input");
        assert_eq!(
            err("x"),
            "invalid character 'x' looking for beginning of value"
        );
        assert_eq!(err("{} x"), "invalid character 'x' after top-level value");
        assert_eq!(err("{}{"), "invalid character '{' after top-level value");
        assert_eq!(err(r#"{"a" 1}"#), "invalid character '1' after object key");
        assert_eq!(
            err(r#"{"a":1 "b":2}"#),
            "invalid character '\"' after object key:value pair"
        );
        assert_eq!(err("[1 2]"), "invalid character '2' after array element");
        assert_eq!(
            err("{'a':1}"),
            r"invalid character '\'' looking for beginning of object key string"
        );
        assert_eq!(
            err("{\"a\n\"}"),
            r"invalid character '\n' in string literal"
        );
        assert_eq!(
            err(r#""\x""#),
            "invalid character 'x' in string escape code"
        );
        assert_eq!(
            err(r#""\u12g4""#),
            r"invalid character 'g' in \u hexadecimal character escape"
        );
        assert_eq!(err("-a"), "invalid character 'a' in numeric literal");
        assert_eq!(err("01"), "invalid character '1' after top-level value");
        assert_eq!(
            err("1.x"),
            "invalid character 'x' after decimal point in numeric literal"
        );
        assert_eq!(
            err("1e+x"),
            "invalid character 'x' in exponent of numeric literal"
        );
        assert_eq!(
            err("tru "),
            "invalid character ' ' in literal true (expecting 'e')"
        );
        assert_eq!(
            err("nil"),
            "invalid character 'i' in literal null (expecting 'u')"
        );
        assert_eq!(
            err("[}"),
            "invalid character '}' looking for beginning of value"
        );
        assert_eq!(
            err("\u{1}"),
            r"invalid character '\x01' looking for beginning of value"
        );
        assert_eq!(
            err("é"),
            "invalid character 'Ã' looking for beginning of value"
        );
        assert_eq!(
            err(&"[".repeat(10_001)),
            "invalid character '[' exceeded max depth"
        );
    }
}
