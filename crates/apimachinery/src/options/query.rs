//! The query string of a request, as the options parse it.

/// A parsed query string; repeated keys keep every value, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parse `a=b&c=d` (percent- and `+`-decoded); `None` is empty.
    pub fn parse(q: Option<&str>) -> Self {
        Query(
            q.map(|q| {
                form_urlencoded::parse(q.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default(),
        )
    }

    /// First value of a key.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a key.
    pub fn all(&self, k: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Whether a key is present at all.
    pub fn has(&self, k: &str) -> bool {
        self.0.iter().any(|(key, _)| key == k)
    }

    /// A boolean parameter: `true`, `1` or `True` (the values clients send).
    pub fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1" | "True"))
    }

    /// A boolean parameter as apimachinery's parameter codec converts it:
    /// absent is `None`; `0` or any case of `false` is `false`; anything
    /// else, even empty, is `true`.
    pub fn kube_bool(&self, k: &str) -> Option<bool> {
        self.get(k)
            .map(|v| !(v == "0" || v.eq_ignore_ascii_case("false")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_repeats_and_decodes() {
        let q = Query::parse(Some("dryRun=All&dryRun=x&labelSelector=a%3Db%2Cc+in+(d)&w"));
        assert_eq!(q.get("dryRun"), Some("All"));
        assert_eq!(q.all("dryRun"), ["All", "x"]);
        assert_eq!(q.get("labelSelector"), Some("a=b,c in (d)"));
        assert!(q.has("w"));
        assert_eq!(q.get("w"), Some(""));
        assert!(!q.has("missing"));
        assert_eq!(Query::parse(None), Query::default());
    }

    #[test]
    fn booleans() {
        let q = Query::parse(Some("a=true&b=1&c=True&d=yes&e=false&f=0&g=FALSE&h="));
        assert!(q.flag("a") && q.flag("b") && q.flag("c"));
        assert!(!q.flag("d") && !q.flag("e") && !q.flag("h") && !q.flag("z"));
        assert_eq!(q.kube_bool("d"), Some(true));
        assert_eq!(q.kube_bool("h"), Some(true));
        assert_eq!(q.kube_bool("e"), Some(false));
        assert_eq!(q.kube_bool("f"), Some(false));
        assert_eq!(q.kube_bool("g"), Some(false));
        assert_eq!(q.kube_bool("z"), None);
    }
}
