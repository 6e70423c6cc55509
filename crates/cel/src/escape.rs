//! Property-name escaping, as kube's `cel.Escape`: a property is visible to
//! CEL only when its name matches `[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*`; `__`,
//! `.`, `-` and `/` are spelled `__underscores__`, `__dot__`, `__dash__` and
//! `__slash__`, and a CEL reserved word `w` is spelled `__w__`.

const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Whether `name` is one of CEL's reserved words.
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name)
}

/// The CEL spelling of a property name, or None when CEL cannot name it.
pub fn escape(name: &str) -> Option<String> {
    if is_reserved(name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok_first = first.is_ascii_alphabetic() || matches!(first, '_' | '.' | '-' | '/');
    if !ok_first || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = r;
            continue;
        }
        let c = rest.chars().next().unwrap_or('_');
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_like_kube() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("x-prop").as_deref(), Some("x__dash__prop"));
        assert_eq!(
            escape("redact__d").as_deref(),
            Some("redact__underscores__d")
        );
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("string").as_deref(), Some("string"));
        assert_eq!(escape("1abc"), None);
        assert_eq!(escape("a b"), None);
    }
}
