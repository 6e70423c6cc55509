//! The label selector grammar of apimachinery's `labels.Parse`: its lexer
//! (keywords, special-symbol runs, identifiers) and recursive-descent
//! parser, with its error words (`found 'b' expected: '('`,
//! `unable to parse requirement: ...`).

use keelson_apimachinery::names::{is_qualified_name, is_valid_label_value};

/// One requirement as the parser builds it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Eq,
    NotEq,
    In,
    NotIn,
    Exists,
    NotExists,
    Gt,
    Lt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Error,
    End,
    ClosedPar,
    Comma,
    Not,
    DoubleEquals,
    Equals,
    Greater,
    Ident,
    In,
    Less,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::Not,
        "==" => Tok::DoubleEquals,
        "=" => Tok::Equals,
        ">" => Tok::Greater,
        "in" => Tok::In,
        "<" => Tok::Less,
        "!=" => Tok::NotEquals,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// The lexer's tokens of `s`, ending with `End`.
fn scan(s: &str) -> Vec<(Tok, String)> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        // A NUL byte ends the input, as Go's lexer reads it.
        while pos < b.len() && is_space(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() || b[pos] == 0 {
            out.push((Tok::End, String::new()));
            return out;
        }
        if is_special(b[pos]) {
            // The longest run of special symbols that is a keyword.
            let start = pos;
            let mut last: Option<(Tok, usize)> = None;
            while pos < b.len() && is_special(b[pos]) {
                pos += 1;
                match keyword(&s[start..pos]) {
                    Some(t) => last = Some((t, pos)),
                    None if last.is_some() => {
                        pos -= 1;
                        break;
                    }
                    None => {}
                }
            }
            match last {
                Some((t, end)) => {
                    pos = end;
                    out.push((t, s[start..end].to_string()));
                }
                None => out.push((
                    Tok::Error,
                    format!("error expected: keyword found '{}'", &s[start..pos]),
                )),
            }
        } else {
            let start = pos;
            while pos < b.len() && b[pos] != 0 && !is_special(b[pos]) && !is_space(b[pos]) {
                pos += 1;
            }
            let lit = &s[start..pos];
            out.push((keyword(lit).unwrap_or(Tok::Ident), lit.to_string()));
        }
    }
}

struct Parser {
    items: Vec<(Tok, String)>,
    pos: usize,
}

/// Whether `in` and `notin` read as identifiers (value context).
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

fn in_context(t: Tok, cx: Ctx) -> Tok {
    match t {
        Tok::In | Tok::NotIn if cx == Ctx::Values => Tok::Ident,
        t => t,
    }
}

impl Parser {
    fn lookahead(&self, cx: Ctx) -> (Tok, String) {
        let (t, l) = &self.items[self.pos.min(self.items.len() - 1)];
        (in_context(*t, cx), l.clone())
    }

    fn consume(&mut self, cx: Ctx) -> (Tok, String) {
        let item = self.lookahead(cx);
        self.pos = (self.pos + 1).min(self.items.len() - 1);
        item
    }

    fn parse(&mut self) -> Result<Vec<(String, Op, Vec<String>)>, String> {
        let mut reqs = Vec::new();
        loop {
            let (t, lit) = self.lookahead(Ctx::Values);
            match t {
                Tok::Ident | Tok::Not => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Tok::End => return Ok(reqs),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Tok::Ident && t2 != Tok::Not {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<(String, Op, Vec<String>), String> {
        let (key, op) = self.key_and_inferred_operator()?;
        if let Some(op) = op {
            return new_requirement(key, op, Vec::new());
        }
        let op = self.operator()?;
        let values = match op {
            Op::In | Op::NotIn => self.values()?,
            _ => self.exact_value()?,
        };
        new_requirement(key, op, values)
    }

    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let (mut t, mut lit) = self.consume(Ctx::Values);
        let mut op = None;
        if t == Tok::Not {
            op = Some(Op::NotExists);
            (t, lit) = self.consume(Ctx::Values);
        }
        if t != Tok::Ident {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if let Some(e) = key_error("<nil>", &lit) {
            return Err(e);
        }
        let (next, _) = self.lookahead(Ctx::Values);
        if (next == Tok::End || next == Tok::Comma) && op.is_none() {
            op = Some(Op::Exists);
        }
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Op, String> {
        let (t, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match t {
            Tok::In => Op::In,
            Tok::Equals | Tok::DoubleEquals => Op::Eq,
            Tok::Greater => Op::Gt,
            Tok::Less => Op::Lt,
            Tok::NotIn => Op::NotIn,
            Tok::NotEquals => Op::NotEq,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ))
            }
        })
    }

    fn values(&mut self) -> Result<Vec<String>, String> {
        let (t, lit) = self.consume(Ctx::Values);
        if t != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.lookahead(Ctx::Values);
        match t {
            Tok::Ident | Tok::Comma => {
                let s = self.identifiers()?;
                let (t, _) = self.consume(Ctx::Values);
                if t != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Tok::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// A comma-separated list of possibly empty identifiers, as a sorted set.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut s = std::collections::BTreeSet::new();
        loop {
            let (t, lit) = self.consume(Ctx::Values);
            match t {
                Tok::Ident => {
                    s.insert(lit);
                    let (t2, l2) = self.lookahead(Ctx::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(s.into_iter().collect()),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if s.is_empty() {
                        s.insert(String::new());
                    }
                    let (t2, _) = self.lookahead(Ctx::Values);
                    if t2 == Tok::ClosedPar {
                        s.insert(String::new());
                        return Ok(s.into_iter().collect());
                    }
                    if t2 == Tok::Comma {
                        s.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        let (t, _) = self.lookahead(Ctx::Values);
        if t == Tok::End || t == Tok::Comma {
            return Ok(vec![String::new()]);
        }
        let (t, lit) = self.consume(Ctx::Values);
        if t == Tok::Ident {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// `validateLabelKey` at `path`.
fn key_error(path: &str, key: &str) -> Option<String> {
    let errs = is_qualified_name(key);
    (!errs.is_empty()).then(|| format!("{path}: Invalid value: {key:?}: {}", errs.join("; ")))
}

/// Go's `strconv.ParseInt(v, 10, 64)` succeeds.
fn is_go_int(v: &str) -> bool {
    let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && v.parse::<i64>().is_ok()
}

/// kube's `NewRequirement` checks (with no path, so the key is `key` and
/// values `values[i][key]`), one error or Go's `[a, b]` aggregate.
fn new_requirement(
    key: String,
    op: Op,
    values: Vec<String>,
) -> Result<(String, Op, Vec<String>), String> {
    let mut errs = Vec::new();
    if let Some(e) = key_error("key", &key) {
        errs.push(e);
    }
    let list = || {
        let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
        format!("[]string{{{}}}", quoted.join(", "))
    };
    match op {
        Op::In | Op::NotIn if values.is_empty() => errs.push(format!(
            "values: Invalid value: {}: for 'in', 'notin' operators, values set can't be empty",
            list()
        )),
        Op::Gt | Op::Lt => {
            if values.len() != 1 {
                errs.push(format!("values: Invalid value: {}: for 'Gt', 'Lt' operators, exactly one value is required", list()));
            }
            for (i, v) in values.iter().enumerate() {
                if !is_go_int(v) {
                    errs.push(format!("values[{i}]: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value must be an integer"));
                }
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let bad = is_valid_label_value(v);
        if !bad.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {v:?}: {}",
                bad.join("; ")
            ));
        }
    }
    match errs.len() {
        0 => Ok((key, op, values)),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

/// Parse a label selector string into its requirements, sorted by key (as
/// kube sorts them), or kube's error text.
pub(crate) fn parse(s: &str) -> Result<Vec<(String, Op, Vec<String>)>, String> {
    let mut p = Parser {
        items: scan(s),
        pos: 0,
    };
    let mut reqs = p.parse()?;
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(reqs)
}

#[cfg(test)]
mod tests {
    use super::{parse, Op};

    fn err(s: &str) -> String {
        parse(s).unwrap_err()
    }

    #[test]
    fn accepted_selectors() {
        let r = parse("x in (foo,,baz),y,z notin (),!w, a=b, c==d,e!=f,g>1,h<2,i=,j==").unwrap();
        let keys: Vec<&str> = r.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            keys,
            ["a", "c", "e", "g", "h", "i", "j", "w", "x", "y", "z"]
        );
        let x = r.iter().find(|r| r.0 == "x").unwrap();
        assert_eq!(
            (&x.1, x.2.clone()),
            (&Op::In, vec!["".into(), "baz".into(), "foo".into()])
        );
        let z = r.iter().find(|r| r.0 == "z").unwrap();
        assert_eq!((&z.1, z.2.clone()), (&Op::NotIn, vec!["".into()]));
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(parse("  ").unwrap(), vec![]);
        // `in` is a value in value context.
        assert_eq!(parse("a in (in)").unwrap()[0].2, vec!["in".to_string()]);
    }

    #[test]
    fn kube_error_words() {
        assert_eq!(
            err("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert_eq!(
            err("a in (b"),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            err("a in (b c)"),
            "unable to parse requirement: found 'c', expected: ',' or ')'"
        );
        assert_eq!(
            err("a in (=)"),
            "unable to parse requirement: found '=', expected: ',', ')' or identifier"
        );
        assert_eq!(
            err("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            err("a notin"),
            "unable to parse requirement: found '' expected: '('"
        );
        assert_eq!(err("a,"), "found '', expected: identifier after ','");
        assert_eq!(err("a,,b"), "found ',', expected: identifier after ','");
        assert_eq!(
            err(",a"),
            "found ',', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(err("a=b=c"), "found '=', expected: ',' or 'end of string'");
        assert_eq!(err("a=b c"), "found 'c', expected: ',' or 'end of string'");
        assert_eq!(
            err("!"),
            "unable to parse requirement: found '', expected: identifier"
        );
        assert_eq!(
            err("a =!"),
            "unable to parse requirement: found '!', expected: identifier"
        );
        assert_eq!(
            err("-a"),
            "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            err("a=-b"),
            "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        assert_eq!(
            err("a>b"),
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            err("a!!b"),
            "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"
        );
    }
}
