//! YAML responses as kube-apiserver writes them: the object's JSON run
//! through sigs.k8s.io/yaml's `JSONToYAML`, i.e. go-yaml v2 unmarshalling
//! the JSON into `interface{}` and marshalling it again.
//!
//! That gives rules no general YAML crate reproduces (serde_yaml keeps
//! the map order, quotes with single quotes and follows YAML 1.2's
//! resolution), so this is a small emitter of go-yaml v2's output over a
//! `serde_json::Value`:
//!
//! - map keys in go-yaml's key order ([`key_less`]: runs of digits compare
//!   as numbers, a non-letter before a letter);
//! - block style, 2-space indentation, a sequence under a mapping key not
//!   indented (`items:\n- a: 1`), empty containers as `{}` and `[]`;
//! - a string that YAML 1.1 would read as another type (`"2"`, `"true"`,
//!   `"y"`, `"null"`, `""`, `"1e3"`, `"0x1F"`, `"1:20"`, a timestamp such
//!   as `"2026-12-01T19:56:12Z"`) double-quoted; one with a line break as a
//!   literal block (`|`, `|-`, `|+`, an indentation hint when it starts
//!   with a space); one that cannot be plain (a leading indicator, `: `,
//!   ` #`, leading or trailing spaces) single-quoted; one with characters
//!   go-yaml does not print (tabs, control characters, characters beyond
//!   the BMP) double-quoted with its escapes;
//! - long plain and quoted scalars folded at a space past column 80
//!   (libyaml's `best_width`, which go-yaml v2.4 keeps), keys never;
//! - numbers as Go's `FormatInt` / `FormatFloat(f, 'g', -1, 64)`.
//!
//! Keys longer than 128 bytes, or with a line break, are written as
//! go-yaml's complex keys (`? key` then `: value`).

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

/// libyaml's `best_width`: scalars fold at a space past this column.
const BEST_WIDTH: usize = 80;
/// libyaml's `best_indent`.
const INDENT: usize = 2;
/// The longest key libyaml writes as a simple key.
const SIMPLE_KEY_MAX: usize = 128;

/// `value` as sigs.k8s.io/yaml's `JSONToYAML` writes its JSON.
pub fn to_yaml(value: &Value) -> String {
    let mut e = Emitter {
        out: String::with_capacity(1024),
        column: 0,
        whitespace: true,
        indention: true,
        open_ended: false,
    };
    e.node(value, 0, Context::Root);
    // The document's end: a fresh line.
    e.write_indent(0);
    if e.open_ended {
        // A keep-chomped block scalar last: the document is open-ended.
        e.indicator("...", true, false, false);
        e.write_indent(0);
    }
    e.out
}

/// Where a node is written (libyaml's emitter contexts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    /// The document itself.
    Root,
    /// A mapping's value after `key:`.
    MapValue,
    /// A sequence item after `- `, or a complex key's value after `: `.
    Item,
}

/// libyaml's emitter state, as far as block output needs it.
struct Emitter {
    out: String,
    /// Characters written on the current line.
    column: usize,
    /// The last character written is whitespace (or the line start).
    whitespace: bool,
    /// The line so far is indentation (and item indicators).
    indention: bool,
    /// The last scalar was keep-chomped (`|+`).
    open_ended: bool,
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// libyaml's `yaml_emitter_write_indent`.
    fn write_indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    /// libyaml's `yaml_emitter_write_indicator`.
    fn indicator(
        &mut self,
        ind: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in ind.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    /// A node whose container is at `indent` (the root's is 0).
    fn node(&mut self, v: &Value, indent: usize, cx: Context) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                let at = if cx == Context::Root {
                    0
                } else {
                    indent + INDENT
                };
                self.mapping(m, at);
            }
            Value::Array(a) if !a.is_empty() => {
                // A sequence that is a mapping's value is not indented.
                let at = match cx {
                    Context::Root | Context::MapValue => indent,
                    Context::Item => indent + INDENT,
                };
                self.sequence(a, at);
            }
            Value::Object(_) => {
                self.indicator("{", true, true, false);
                self.indicator("}", false, false, false);
            }
            Value::Array(_) => {
                self.indicator("[", true, true, false);
                self.indicator("]", false, false, false);
            }
            Value::Null => self.plain("null", indent + INDENT, true),
            Value::Bool(b) => self.plain(if *b { "true" } else { "false" }, indent + INDENT, true),
            Value::Number(n) => self.plain(&number(n), indent + INDENT, true),
            Value::String(s) => self.string(s, indent + INDENT, false),
        }
    }

    /// A block mapping at `indent`, keys in go-yaml's order.
    fn mapping(&mut self, m: &Map<String, Value>, indent: usize) {
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by(|a, b| key_order(a, b));
        for k in keys {
            self.write_indent(indent);
            if k.len() > SIMPLE_KEY_MAX || k.contains(is_break) {
                // Not a simple key: `? key` then `: value`.
                self.indicator("?", true, false, true);
                self.string(k, indent + INDENT, false);
                self.write_indent(indent);
                self.indicator(":", true, false, true);
                self.node(&m[k], indent, Context::Item);
            } else {
                self.string(k, indent + INDENT, true);
                self.indicator(":", false, false, false);
                self.node(&m[k], indent, Context::MapValue);
            }
        }
    }

    /// A block sequence with its `- ` at `indent`.
    fn sequence(&mut self, a: &[Value], indent: usize) {
        for v in a {
            self.write_indent(indent);
            self.indicator("-", true, false, true);
            self.node(v, indent, Context::Item);
        }
    }

    /// A string scalar whose continuation lines are at `indent` (a key
    /// when `key`: never folded, never a block).
    fn string(&mut self, s: &str, indent: usize, key: bool) {
        let a = analyze(s);
        let mut style = if s.contains('\n') {
            Style::Literal
        } else if resolves_as_other(s) {
            Style::Double
        } else {
            Style::Plain
        };
        if key && a.line_breaks {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain || (s.is_empty() && key)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_quoted {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block || key) {
            style = Style::Double;
        }
        let breaks = !key;
        match style {
            Style::Plain => self.plain(s, indent, breaks),
            Style::Single => self.single(s, indent, breaks),
            Style::Double => self.double(s, indent, breaks),
            Style::Literal => self.literal(s, indent),
        }
    }

    /// libyaml's `yaml_emitter_write_plain_scalar`.
    fn plain(&mut self, s: &str, indent: usize, breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks && !spaces && self.column > BEST_WIDTH && !next_space {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    /// libyaml's `yaml_emitter_write_single_quoted_scalar` (the strings
    /// that get here have no line breaks).
    fn single(&mut self, s: &str, indent: usize, breaks: bool) {
        self.indicator("'", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                    && !next_space
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
            }
        }
        self.indicator("'", false, false, false);
    }

    /// libyaml's `yaml_emitter_write_double_quoted_scalar`.
    fn double(&mut self, s: &str, indent: usize, breaks: bool) {
        self.indicator("\"", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{07}' => self.put('a'),
                    '\u{08}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{0B}' => self.put('v'),
                    '\u{0C}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1B}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{A0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let v = c as u32;
                        let (ind, width) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(ind);
                        for h in format!("{v:0width$X}").chars() {
                            self.put(h);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i + 1 < chars.len() {
                    self.write_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.indicator("\"", false, false, false);
    }

    /// libyaml's `yaml_emitter_write_literal_scalar` with its block scalar
    /// hints: an indentation indicator when the text starts with a space or
    /// a break, `-` without a final break, `+` with more than one.
    fn literal(&mut self, s: &str, indent: usize) {
        self.indicator("|", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
            self.indicator(&INDENT.to_string(), false, false, false);
        }
        let n = chars.len();
        let mut keep = false;
        if n == 0 || !is_break(chars[n - 1]) {
            self.indicator("-", false, false, false);
        } else if n == 1 || is_break(chars[n - 2]) {
            self.indicator("+", false, false, false);
            keep = true;
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for &c in &chars {
            if is_break(c) {
                self.put_break();
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
        self.open_ended = keep;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// What libyaml's `yaml_emitter_analyze_scalar` finds in a scalar.
struct Analysis {
    line_breaks: bool,
    block_plain: bool,
    single_quoted: bool,
    block: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: Option<&char>) -> bool {
    matches!(c, Some(' ') | Some('\t'))
}

/// libyaml's `is_printable` (go-yaml sets the emitter to unicode): tab
/// and characters beyond the BMP are not.
fn printable(c: char) -> bool {
    let v = c as u32;
    v == 0x0A
        || (0x20..=0x7E).contains(&v)
        || (0xA0..=0xD7FF).contains(&v)
        || ((0xE000..=0xFFFD).contains(&v) && v != 0xFEFF)
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            line_breaks: false,
            block_plain: true,
            single_quoted: true,
            block: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut special = false;
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut line_breaks = false;
    let mut preceded_by_whitespace = true;
    let last = chars.len() - 1;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_whitespace = i == last || is_blank(chars.get(i + 1));
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !printable(c) {
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i == last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i == last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t') || is_break(c);
    }
    let mut a = Analysis {
        line_breaks,
        block_plain: true,
        single_quoted: true,
        block: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain = false;
    }
    if trailing_space {
        a.block = false;
    }
    if break_space {
        a.block_plain = false;
        a.single_quoted = false;
    }
    if space_break || special {
        a.block_plain = false;
        a.single_quoted = false;
        a.block = false;
    }
    if line_breaks || block_indicators {
        a.block_plain = false;
    }
    a
}

/// Whether go-yaml v2's `resolve` reads the plain scalar `s` as anything
/// but a string (so its encoder double-quotes it), or it is a base-60
/// float.
pub fn resolves_as_other(s: &str) -> bool {
    let Some(first) = s.bytes().next() else {
        // `""` resolves to null.
        return true;
    };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
            in_resolve_map(s)
        }
        b'.' => in_resolve_map(s) || go_parse_float(s),
        b'+' | b'-' | b'0'..=b'9' => {
            if in_resolve_map(s) || is_base60_float(s) || is_timestamp(s) {
                return true;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            go_parse_int(&plain) || (yaml_style_float(&plain) && finite_float(&plain))
        }
        _ => false,
    }
}

/// go-yaml v2's `resolveMap`: booleans, nulls, infinities and NaNs.
fn in_resolve_map(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "true"
            | "True"
            | "TRUE"
            | "on"
            | "On"
            | "ON"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "false"
            | "False"
            | "FALSE"
            | "off"
            | "Off"
            | "OFF"
            | "~"
            | "null"
            | "Null"
            | "NULL"
            | ".nan"
            | ".NaN"
            | ".NAN"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
    )
}

/// Go's `strconv.ParseFloat` of a string starting with `.` (decimal forms
/// only: nothing else starts with a dot).
fn go_parse_float(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && finite_float(s)
}

fn finite_float(s: &str) -> bool {
    s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Go's `strconv.ParseInt(s, 0, 64)`, else `ParseUint(s, 0, 64)`: a sign
/// (ParseInt only), then `0x`/`0o`/`0b` or a leading `0` (octal) or
/// decimal digits, in range.
fn go_parse_int(s: &str) -> bool {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return false;
    }
    match u128::from_str_radix(digits, radix) {
        Ok(v) if neg => v <= 1u128 << 63,
        Ok(v) => v <= u64::MAX as u128,
        Err(_) => false,
    }
}

/// go-yaml's `yamlStyleFloat`:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// go-yaml v2's `isBase60Float`:
/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        // `[0-5]?[0-9]`: one digit, or two with the first 0-5.
        match (b.get(i), b.get(i + 1)) {
            (Some(b'0'..=b'5'), Some(d2)) if d2.is_ascii_digit() => i += 2,
            (Some(d), _) if d.is_ascii_digit() => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2's `parseTimestamp`: four digits and `-`, then one of Go's
/// layouts `2006-1-2T15:4:5.999999999Z07:00` (also with a lower-case
/// `t`), `2006-1-2 15:4:5.999999999` or `2006-1-2`, as `time.Parse`
/// accepts them.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let year: u32 = s[..4].parse().unwrap_or(0);
    let mut i = 5;
    let Some(month) = num12(b, &mut i) else {
        return false;
    };
    if !(1..=12).contains(&month) || b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = num12(b, &mut i) else {
        return false;
    };
    if day < 1 || day > days_in(month, year) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zoned = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    let Some(h) = num12(b, &mut i) else {
        return false;
    };
    if h > 23 || b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(m) = num12(b, &mut i) else {
        return false;
    };
    if m > 59 || b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(sec) = num12(b, &mut i) else {
        return false;
    };
    if sec > 59 {
        return false;
    }
    // Fractional seconds: a `.` or `,` and digits (optional).
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if !zoned {
        return i == b.len();
    }
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            let z = &b[i + 1..];
            z.len() == 5
                && z[0].is_ascii_digit()
                && z[1].is_ascii_digit()
                && z[2] == b':'
                && z[3].is_ascii_digit()
                && z[4].is_ascii_digit()
                && (z[0] - b'0') * 10 + (z[1] - b'0') < 24
                && (z[3] - b'0') * 10 + (z[4] - b'0') < 60
        }
        _ => false,
    }
}

/// Go's `getnum(value, false)`: one digit, or two.
fn num12(b: &[u8], i: &mut usize) -> Option<u32> {
    let d1 = *b.get(*i).filter(|c| c.is_ascii_digit())?;
    *i += 1;
    match b.get(*i) {
        Some(d2) if d2.is_ascii_digit() => {
            *i += 1;
            Some(u32::from(d1 - b'0') * 10 + u32::from(d2 - b'0'))
        }
        _ => Some(u32::from(d1 - b'0')),
    }
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A number as go-yaml writes the value it read from JSON: integers as
/// `FormatInt`/`FormatUint`, floats as `FormatFloat(f, 'g', -1, 64)`.
fn number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    go_format_g(n.as_f64().unwrap_or(0.0))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
pub fn go_format_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, as Go's
    // shortest formatting does.
    let e = format!("{:e}", f.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let neg = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (d0, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{neg}{d0}{frac}e{sign}{:02}", exp.abs());
    }
    let nd = digits.len() as i32;
    let dp = exp + 1; // digits before the decimal point
    let s = if dp <= 0 {
        format!("0.{}{}", "0".repeat((-dp) as usize), digits)
    } else if dp >= nd {
        format!("{}{}", digits, "0".repeat((dp - nd) as usize))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    };
    format!("{neg}{s}")
}

/// go-yaml v2's key order (`keyList.Less` for string keys): characters
/// compared one by one; two letters by code point; a letter after a
/// non-letter; otherwise the runs of digits there compare as numbers
/// (the shorter run first when equal), then the characters.
pub fn key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .wrapping_mul(10)
                .wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .wrapping_mul(10)
                .wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

fn key_order(a: &str, b: &str) -> Ordering {
    if key_less(a, b) {
        Ordering::Less
    } else if key_less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests;
