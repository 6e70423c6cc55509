//! Name, label and annotation checks with kube-apiserver's messages
//! (`k8s.io/apimachinery/pkg/util/validation`).

use std::sync::OnceLock;

use regex::Regex;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

fn anchored(fmt: &'static str, cell: &'static OnceLock<Regex>) -> &'static Regex {
    cell.get_or_init(|| {
        // The patterns are constants, so compiling cannot fail.
        Regex::new(&format!("^{}$", fmt)).unwrap_or_else(|_| unreachable!())
    })
}

fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = format!("{} (e.g. ", msg);
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{}', ", e));
    }
    s.push_str(&format!("regex used for validation is '{}')", fmt));
    s
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {} characters", n)
}

/// Errors for a DNS-1123 subdomain (most object names).
pub fn is_dns1123_subdomain(v: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = Vec::new();
    if v.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !anchored(DNS1123_SUBDOMAIN_FMT, &RE).is_match(v) {
        errs.push(regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", DNS1123_SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// Errors for a DNS-1123 label (namespace names).
pub fn is_dns1123_label(v: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push(max_len_error(63));
    }
    static SUBDOMAIN: OnceLock<Regex> = OnceLock::new();
    if !anchored(DNS1123_LABEL_FMT, &RE).is_match(v) {
        // A valid subdomain of the right length fails only for its dots
        // (kube 1.34 says so).
        if anchored(DNS1123_SUBDOMAIN_FMT, &SUBDOMAIN).is_match(v) {
            errs.push("must not contain dots".into());
            return errs;
        }
        errs.push(regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", DNS1123_LABEL_FMT, &["my-name", "123-abc"]));
    }
    errs
}

/// Errors for a DNS-1035 label (service names).
pub fn is_dns1035_label(v: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !anchored(DNS1035_LABEL_FMT, &RE).is_match(v) {
        errs.push(regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", DNS1035_LABEL_FMT, &["my-name", "abc-123"]));
    }
    errs
}

/// Errors for a qualified name (label and annotation keys).
pub fn is_qualified_name(v: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = Vec::new();
    let parts: Vec<&str> = v.split('/').collect();
    let name = match parts.as_slice() {
        [n] => *n,
        [prefix, n] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                for m in is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {}", m));
                }
            }
            n
        }
        _ => {
            errs.push(format!("{} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", regex_error("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !anchored(QUALIFIED_NAME_FMT, &RE).is_match(name) {
        errs.push(format!("name part {}", regex_error("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])));
    }
    errs
}

/// Errors for a label value.
pub fn is_valid_label_value(v: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !anchored(LABEL_VALUE_FMT, &RE).is_match(v) {
        errs.push(regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", LABEL_VALUE_FMT, &["MyValue", "my_value", "12345"]));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomain() {
        assert!(is_dns1123_subdomain("a.b-c").is_empty());
        let e = is_dns1123_subdomain("Foo_Bar");
        assert_eq!(e, vec!["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string()]);
    }

    #[test]
    fn label() {
        assert!(is_dns1123_label("123-abc").is_empty());
        assert_eq!(is_dns1123_label("a.b"), ["must not contain dots"]);
        assert!(is_dns1123_label("A_b")[0].contains("(e.g. 'my-name',  or '123-abc', regex"));
        assert_eq!(is_dns1035_label("1abc").len(), 1);
        assert_eq!(
            is_dns1123_label(&"a".repeat(64))[0],
            "must be no more than 63 characters"
        );
    }

    #[test]
    fn qualified() {
        assert!(is_qualified_name("app.kubernetes.io/name").is_empty());
        assert!(!is_qualified_name("a/b/c").is_empty());
        assert!(!is_qualified_name("-x").is_empty());
        assert!(is_valid_label_value("").is_empty());
        assert!(!is_valid_label_value("a b").is_empty());
    }
}
