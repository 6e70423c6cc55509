//! Media types as HTTP carries them: the ranges of an Accept header and
//! the type of a Content-Type header.

/// One media range of an Accept header.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaRange {
    /// `type/subtype`, lower-cased.
    pub essence: String,
    /// Parameters other than `q`, lower-cased keys.
    pub params: Vec<(String, String)>,
    pub q: f32,
}

impl MediaRange {
    /// A parameter value.
    pub fn param(&self, k: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the range asks for indented output (`pretty=true`).
    pub fn pretty(&self) -> bool {
        matches!(self.param("pretty"), Some("true" | "1"))
    }
}

/// Parse an Accept header into media ranges (q=0 dropped), best first;
/// ranges of equal quality keep their order.
pub fn parse_accept(accept: Option<&str>) -> Vec<MediaRange> {
    let mut out = Vec::new();
    for part in accept.unwrap_or("").split(',') {
        let mut it = part.split(';');
        let essence = it.next().unwrap_or("").trim().to_ascii_lowercase();
        if essence.is_empty() {
            continue;
        }
        let mut params = Vec::new();
        let mut q = 1.0f32;
        for p in it {
            let mut kv = p.splitn(2, '=');
            let k = kv.next().unwrap_or("").trim().to_ascii_lowercase();
            let v = kv.next().unwrap_or("").trim().trim_matches('"').to_string();
            if k == "q" {
                q = v.parse().unwrap_or(1.0);
            } else if !k.is_empty() {
                params.push((k, v));
            }
        }
        if q > 0.0 {
            out.push(MediaRange { essence, params, q });
        }
    }
    out.sort_by(|a, b| b.q.partial_cmp(&a.q).unwrap_or(std::cmp::Ordering::Equal));
    out
}

/// The media type (without parameters, lower-cased) of a Content-Type
/// header; "" when there is none.
pub fn media_type(content_type: Option<&str>) -> String {
    content_type
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parameters_and_quality() {
        let r = parse_accept(Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9"));
        assert_eq!(r[0].param("as"), Some("APIGroupDiscoveryList"));
        assert_eq!(r[0].param("g"), Some("apidiscovery.k8s.io"));
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].q, 0.9);

        let r = parse_accept(Some(
            "text/plain;q=0.5, Application/YAML ;Pretty=\"true\", */*;q=0",
        ));
        assert_eq!(r.len(), 2, "q=0 is dropped");
        assert_eq!(r[0].essence, "application/yaml");
        assert!(r[0].pretty());
        assert_eq!(r[1].essence, "text/plain");
        assert!(!r[1].pretty());
        assert!(parse_accept(None).is_empty());
        assert!(parse_accept(Some(" , ")).is_empty());
        // A malformed q counts as 1; equal qualities keep their order.
        let r = parse_accept(Some("a/b;q=x,c/d"));
        assert_eq!(
            r.iter().map(|m| m.essence.as_str()).collect::<Vec<_>>(),
            ["a/b", "c/d"]
        );
    }

    #[test]
    fn content_type_essence() {
        assert_eq!(
            media_type(Some("Application/JSON; charset=utf-8")),
            "application/json"
        );
        assert_eq!(media_type(None), "");
    }
}
