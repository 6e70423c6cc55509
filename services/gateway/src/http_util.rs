//! Response building, query parsing and content negotiation.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
use keelson_apimachinery::ApiError;
use serde_json::Value;

/// The response body type of every handler.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A whole-body response.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

/// Build a response with a content type.
pub fn bytes_response(code: u16, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(http::header::CONTENT_TYPE, v);
    }
    r
}

/// Output encodings we serve for API objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Json,
    Yaml,
}

/// Encode a value in the chosen output.
pub fn encode(code: u16, out: Output, v: &Value) -> Response<Body> {
    match out {
        Output::Json => {
            let bytes = serde_json::to_vec(v).unwrap_or_default();
            bytes_response(code, "application/json", bytes)
        }
        Output::Yaml => match serde_yaml::to_string(v) {
            Ok(s) => bytes_response(code, "application/yaml", s),
            Err(e) => status_response(&ApiError::internal(e), Output::Json),
        },
    }
}

/// A `Status` error response.
pub fn status_response(e: &ApiError, out: Output) -> Response<Body> {
    let mut r = encode(e.code, out, &e.to_status_json());
    if let Some(secs) = e.details.as_ref().and_then(|d| d.retry_after_seconds) {
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            r.headers_mut().insert(http::header::RETRY_AFTER, v);
        }
    }
    r
}

/// Add `Warning: 299 - "<text>"` headers, de-duplicated.
pub fn add_warnings(r: &mut Response<Body>, warnings: &[String]) {
    let mut seen: Vec<&String> = Vec::new();
    for w in warnings {
        if seen.contains(&w) {
            continue;
        }
        seen.push(w);
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{}\"", escaped)) {
            r.headers_mut().append(http::header::WARNING, v);
        }
    }
}

/// Parsed query string (repeated keys keep every value).
#[derive(Debug, Clone, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parse `a=b&c=d`.
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
    /// A boolean parameter (`true`, `1`).
    pub fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1" | "True"))
    }
}

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
}

/// Parse an Accept header into media ranges (q=0 dropped), best first.
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

/// Choose the output encoding for an API object response.
///
/// `as=Table` and `as=PartialObjectMetadata` requests are answered with the
/// plain object (kubectl falls back to it) until their issue lands.
pub fn negotiate_output(accept: Option<&str>) -> Result<Output, ApiError> {
    let ranges = parse_accept(accept);
    if ranges.is_empty() {
        return Ok(Output::Json);
    }
    for r in &ranges {
        match r.essence.as_str() {
            "application/json" | "*/*" | "application/*" => return Ok(Output::Json),
            "application/yaml" => return Ok(Output::Yaml),
            _ => {}
        }
    }
    Err(ApiError::not_acceptable(
        "only the following media types are accepted: application/json, application/yaml",
    ))
}

/// Request body formats we decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Json,
    Yaml,
    /// Kubernetes Protobuf (`application/vnd.kubernetes.protobuf`).
    Protobuf,
}

/// The media type (without parameters) of a Content-Type header.
pub fn media_type(content_type: Option<&str>) -> String {
    content_type
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Choose the decoder for a POST/PUT body; a missing Content-Type is JSON.
pub fn negotiate_input(content_type: Option<&str>) -> Result<Input, ApiError> {
    match media_type(content_type).as_str() {
        "" | "application/json" => Ok(Input::Json),
        "application/yaml" => Ok(Input::Yaml),
        "application/vnd.kubernetes.protobuf" => Ok(Input::Protobuf),
        _ => Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_parsing() {
        let r = parse_accept(Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9"));
        assert_eq!(r[0].param("as"), Some("APIGroupDiscoveryList"));
        assert_eq!(r.len(), 2);
        assert_eq!(
            negotiate_output(Some(
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            ))
            .unwrap(),
            Output::Json
        );
        assert_eq!(negotiate_output(Some("text/plain")).unwrap_err().code, 406);
        assert_eq!(negotiate_input(None).unwrap(), Input::Json);
        assert_eq!(
            negotiate_input(Some("application/cbor")).unwrap_err().code,
            415
        );
    }
}
