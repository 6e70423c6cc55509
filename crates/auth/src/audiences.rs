//! Token audiences and the error texts of kube's authenticator chain:
//! `authenticator.Audiences.Intersect`, Go's `%q` of a string list and
//! `utilerrors.NewAggregate`'s message.

use keelson_apimachinery::gofmt::go_quote;

/// The audiences of `targets` that `have` holds, in `targets`' order
/// (kube's `Audiences.Intersect`).
pub fn intersect(have: &[String], targets: &[String]) -> Vec<String> {
    targets
        .iter()
        .filter(|t| have.contains(t))
        .cloned()
        .collect()
}

/// A string list as Go's `%q` prints it: `["a" "b"]`.
pub fn go_quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[{}]", quoted.join(" "))
}

/// The message of a (flattened) `utilerrors.NewAggregate`: each distinct
/// message once, in order; one alone as is, several as `[a, b]`.
pub fn aggregate(messages: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in messages {
        if !seen.contains(&m.as_str()) {
            seen.push(m);
        }
    }
    match seen.as_slice() {
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn go_words() {
        assert_eq!(
            intersect(&v(&["a", "b"]), &v(&["c", "b", "a"])),
            v(&["b", "a"])
        );
        assert!(intersect(&v(&["a"]), &v(&["x"])).is_empty());
        assert_eq!(go_quote_list(&v(&["api", "x\"y"])), r#"["api" "x\"y"]"#);
        assert_eq!(go_quote_list(&[]), "[]");
        assert_eq!(
            aggregate(&v(&["invalid bearer token", "invalid bearer token"])),
            "invalid bearer token"
        );
        assert_eq!(
            aggregate(&v(&[
                "invalid bearer token",
                "service account token has expired"
            ])),
            "[invalid bearer token, service account token has expired]"
        );
    }
}
