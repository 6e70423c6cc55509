//! Response building and query parsing. Negotiation, encoders and
//! decoders are `keelson-codec`'s; this only turns their bytes into HTTP
//! responses.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
use keelson_apimachinery::ApiError;
use keelson_codec::{Format, TableOptions, Target};
use serde_json::Value;

pub use keelson_codec::media_type;

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

/// A whole JSON document as kube's encoder writes it: with a final newline
/// (clients compare bodies byte for byte). Other encodings as they are.
fn document(out: Format, bytes: Bytes) -> Bytes {
    if out.encoding != keelson_codec::Encoding::Json {
        return bytes;
    }
    let mut v = Vec::with_capacity(bytes.len() + 1);
    v.extend_from_slice(&bytes);
    v.push(b'\n');
    Bytes::from(v)
}

/// Encode a value in the negotiated format.
pub fn encode(code: u16, out: Format, v: &Value) -> Response<Body> {
    match keelson_codec::encode(out, v) {
        Ok(bytes) => bytes_response(code, out.content_type(), document(out, bytes)),
        Err(e) if out.target != Target::Object => {
            status_response(&ApiError::from(e), Format::object(out.encoding))
        }
        Err(e) if out != Format::JSON => status_response(&ApiError::from(e), Format::JSON),
        Err(e) => bytes_response(500, "text/plain", e.to_string()),
    }
}

/// Encode an object a handler answers in the negotiated format, shown as
/// its target asks (kube's `transformResponseObject`): a Table with the
/// request's `includeObject` (`400` when it is not one kube knows), a
/// PartialObjectMetadata, or `406` for a list-only target.
pub fn encode_target(code: u16, out: Format, query: &Query, v: &Value) -> Response<Body> {
    let opts = match out.target {
        Target::Table(_) => match TableOptions::from_query(query.get("includeObject")) {
            Ok(o) => o,
            Err(e) => return status_response(&e, out),
        },
        _ => TableOptions::default(),
    };
    match keelson_codec::encode_with(out, v, &opts, keelson_codec::table::time::now()) {
        Ok(bytes) => bytes_response(code, out.content_type(), document(out, bytes)),
        Err(e) => status_response(&ApiError::from(e), Format::object(out.encoding)),
    }
}

/// A `Status` error response (a Status is never shown as a Table or
/// PartialObjectMetadata).
pub fn status_response(e: &ApiError, out: Format) -> Response<Body> {
    let out = Format::object(out.encoding);
    let mut r = encode(e.code, out, &e.to_status_json());
    add_warnings(&mut r, &e.warnings);
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

/// `warnings` as the first `Warning` headers, before those already on `r`
/// (kube records an API's deprecation warning before the handler runs).
pub fn prepend_warnings(r: &mut Response<Body>, warnings: &[String]) {
    let later: Vec<HeaderValue> = r
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .cloned()
        .collect();
    // `remove` takes every value of the header.
    r.headers_mut().remove(http::header::WARNING);
    add_warnings(r, warnings);
    let first: Vec<HeaderValue> = r
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .cloned()
        .collect();
    for v in later {
        if !first.contains(&v) {
            r.headers_mut().append(http::header::WARNING, v);
        }
    }
}

pub use keelson_apimachinery::options::Query;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deprecation_warning_goes_first() {
        let mut r = Response::new(full(Bytes::new()));
        add_warnings(&mut r, &["unknown field \"spec.x\"".into(), "b".into()]);
        prepend_warnings(&mut r, &["v1 Endpoints is deprecated".into(), "b".into()]);
        let got: Vec<&str> = r
            .headers()
            .get_all(http::header::WARNING)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert_eq!(
            got,
            [
                "299 - \"v1 Endpoints is deprecated\"",
                "299 - \"b\"",
                "299 - \"unknown field \\\"spec.x\\\"\"",
            ]
        );
    }
}
