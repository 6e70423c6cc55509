//! Pretty-printed JSON (apiserver's `negotiation.isPrettyPrint`): a
//! `pretty` query parameter (parsed as Go's `strconv.ParseBool`, an
//! unparsable value meaning no), `pretty=1`/`pretty=true` on the Accept
//! media type, or, without either, a User-Agent starting with `curl`,
//! `Wget` or `Mozilla/5.0` asks for JSON bodies indented by two spaces as
//! `json.MarshalIndent` writes them (with no final newline).

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Response};
use http_body_util::BodyExt;

use crate::http_util::{full, Body, Query};

/// Whether the request asks for pretty output.
pub fn requested(query: &Query, headers: &HeaderMap) -> bool {
    if let Some(v) = query.get("pretty").filter(|v| !v.is_empty()) {
        return matches!(v, "1" | "t" | "T" | "TRUE" | "true" | "True");
    }
    let accept = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    if keelson_codec::media::parse_accept(accept)
        .iter()
        .any(|r| r.pretty())
    {
        return true;
    }
    let agent = headers
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    ["curl", "Wget", "Mozilla/5.0"]
        .iter()
        .any(|p| agent.starts_with(p))
}

/// Indent `resp`'s body when it is a whole JSON document.
pub async fn apply(resp: Response<Body>) -> Response<Body> {
    let is_json = resp
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    if !is_json || resp.headers().contains_key(http::header::CONTENT_ENCODING) {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(never) => match never {},
    };
    parts.headers.remove(http::header::CONTENT_LENGTH);
    Response::from_parts(parts, full(indent(&bytes)))
}

/// Go's `json.Indent` with no prefix and a two-space indent, dropping the
/// surrounding whitespace; strings (and their escapes) are copied as they
/// are.
pub fn indent(src: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(src.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // An opening bracket not yet followed by a value.
    let mut open = false;
    let newline = |out: &mut BytesMut, depth: usize| {
        out.extend_from_slice(b"\n");
        for _ in 0..depth {
            out.extend_from_slice(b"  ");
        }
    };
    for &b in src {
        if in_string {
            out.extend_from_slice(&[b]);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        if open && b != b']' && b != b'}' {
            open = false;
            depth += 1;
            newline(&mut out, depth);
        }
        match b {
            b'"' => {
                in_string = true;
                out.extend_from_slice(b"\"");
            }
            b'{' | b'[' => {
                out.extend_from_slice(&[b]);
                open = true;
            }
            b'}' | b']' => {
                if open {
                    open = false;
                } else {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                }
                out.extend_from_slice(&[b]);
            }
            b',' => {
                out.extend_from_slice(b",");
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.extend_from_slice(&[b]),
        }
    }
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_as_go_does() {
        let src = br#"{"kind":"Status","a":[],"b":{},"c":[1,{"d":"x,\"y:"}],"e":null}
"#;
        let want = "{\n  \"kind\": \"Status\",\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"x,\\\"y:\"\n    }\n  ],\n  \"e\": null\n}";
        assert_eq!(std::str::from_utf8(&indent(src)).unwrap(), want);
    }
}
