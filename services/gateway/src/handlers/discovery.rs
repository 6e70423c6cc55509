//! Discovery and OpenAPI: `/version`, `/api`, `/apis` (legacy and
//! aggregated), `/apis/{group}[/{version}]`, `/openapi/v2` and
//! `/openapi/v3[/...]`, served from documents serialised once, with ETags
//! and `304 Not Modified`.

use http::{HeaderValue, Response};
use keelson_apimachinery::ApiError;
use keelson_discovery::{Doc, Documents};

use super::not_acceptable::{raw_json, restful_accepts, restful_refusal};
use crate::filters::request_info::Target;
use crate::filters::State;
use crate::http_util::{bytes_response, status_response, Body, Query};
use keelson_codec::{parse_accept, Encoding, Format};

/// Serve a discovery or OpenAPI target from the documents of the
/// catalog's current generation.
pub(crate) fn serve(
    state: &State,
    target: Target,
    query: &Query,
    accept: Option<&str>,
    inm: Option<&str>,
) -> Response<Body> {
    let catalog = state.backends.catalog.snapshot();
    let docs = state.discovery.documents(&catalog);
    match target {
        Target::Version if !restful_accepts(accept, VERSION_PRODUCES) => {
            restful_refusal(accept, VERSION_PRODUCES)
        }
        Target::Version => doc_response(&docs.version, "application/json", inm, false),
        Target::CoreGroup if !restful_accepts(accept, API_PRODUCES) => {
            restful_refusal(accept, API_PRODUCES)
        }
        Target::CoreGroup => discovery(&docs, true, accept, inm),
        Target::Groups => discovery(&docs, false, accept, inm),
        Target::Group(g) => match keelson_discovery::api_group(&catalog, &g) {
            Some(v) => negotiated(&v, accept),
            None => super::not_found::for_group(&catalog, &g),
        },
        Target::GroupVersion { group, version } => {
            match keelson_discovery::api_resource_list(&catalog, &group, &version) {
                Some(v) => negotiated(&v, accept),
                None => super::not_found::for_group(&catalog, &group),
            }
        }
        Target::OpenApiV2 => openapi_v2(&docs, accept, inm),
        Target::OpenApiRoot => doc_response(docs.openapi_root(), "application/json", inm, false),
        Target::OpenApiDoc(path) => match docs.openapi_doc(&path) {
            Some(_) if !openapi_v3_json(accept) => openapi_refusal(),
            Some(d) => {
                let immutable = query.get("hash") == Some(d.hash.as_str());
                doc_response(&d.doc, "application/json", inm, immutable)
            }
            None => not_found(),
        },
        _ => not_found(),
    }
}

/// What kube's `/version` route produces.
const VERSION_PRODUCES: &[&str] = &["application/json"];
/// What kube's `/api` route produces (the serializer's media types, CBOR
/// off).
const API_PRODUCES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// kube-openapi's v3 document handler: the first Accept range matching
/// JSON (`*/*`, `application/*`) serves it; the protobuf ranges are
/// skipped here (Keelson has no v3 protobuf); an empty Accept is `*/*`.
fn openapi_v3_json(accept: Option<&str>) -> bool {
    parse_accept(accept.or(Some("*/*"))).iter().any(|r| {
        matches!(
            r.essence.as_str(),
            "application/json" | "application/*" | "*/*"
        )
    })
}

/// kube-openapi's `406` (no body, no Content-Type), varying by Accept.
fn openapi_refusal() -> Response<Body> {
    let mut r = bytes_response(406, "text/plain", bytes::Bytes::new());
    let h = r.headers_mut();
    h.remove(http::header::CONTENT_TYPE);
    h.insert(http::header::VARY, HeaderValue::from_static("Accept"));
    r
}

fn not_found() -> Response<Body> {
    status_response(&ApiError::path_not_found(), Format::JSON)
}

fn json_value(v: &serde_json::Value) -> Response<Body> {
    crate::http_util::encode(200, Format::JSON, v)
}

/// Serve a cached document with ETag/304 handling.
fn doc_response(
    doc: &Doc,
    content_type: &str,
    if_none_match: Option<&str>,
    immutable: bool,
) -> Response<Body> {
    let matches = if_none_match
        .map(|h| {
            h.split(',')
                .any(|t| t.trim() == doc.etag || t.trim() == "*")
        })
        .unwrap_or(false);
    let mut r = if matches {
        let mut r = bytes_response(304, content_type, bytes::Bytes::new());
        r.headers_mut().remove(http::header::CONTENT_TYPE);
        r
    } else {
        bytes_response(200, content_type, doc.bytes.clone())
    };
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&doc.etag) {
        h.insert(http::header::ETAG, v);
    }
    h.insert(http::header::VARY, HeaderValue::from_static("Accept"));
    h.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static(if immutable {
            "public, immutable, max-age=31536000"
        } else {
            "public"
        }),
    );
    r
}

/// The protobuf media type client-go's `OpenAPISchema()` asks for.
const OPENAPI_V2_PROTO: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// Its other spelling, and the Content-Type kube-openapi answers either
/// with: `@` is not a token character, and client-go's `mime.ParseMediaType`
/// rejects a response typed with it.
const OPENAPI_V2_PROTO_DOT: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `/openapi/v2` as kube-openapi's handler negotiates it: the first Accept
/// range (by q) that matches JSON or one of the two protobuf spellings,
/// `*/*` and `application/*` meaning JSON; an empty Accept is `*/*`. No
/// match: 406 with an empty body. `ETag` is the quoted hash of the served
/// bytes; a matching `If-None-Match` gets 304. No `Cache-Control`.
fn openapi_v2(d: &Documents, accept: Option<&str>, inm: Option<&str>) -> Response<Body> {
    let v2 = d.openapi_v2();
    let ranges = parse_accept(accept.or(Some("*/*")));
    let chosen = ranges.iter().find_map(|r| match r.essence.as_str() {
        "application/json" | "application/*" | "*/*" => Some((&v2.json, "application/json")),
        OPENAPI_V2_PROTO | OPENAPI_V2_PROTO_DOT => Some((&v2.proto, OPENAPI_V2_PROTO_DOT)),
        _ => None,
    });
    let mut r = match chosen {
        Some((doc, ct)) => doc_response(doc, ct, inm, false),
        None => bytes_response(406, "text/plain", bytes::Bytes::new()),
    };
    let h = r.headers_mut();
    h.remove(http::header::CACHE_CONTROL);
    if chosen.is_none() {
        h.remove(http::header::CONTENT_TYPE);
        h.insert(http::header::VARY, HeaderValue::from_static("Accept"));
    }
    r
}

/// `/api` and `/apis`: aggregated discovery when asked for (v2),
/// legacy documents for plain JSON, 406 otherwise.
fn discovery(d: &Documents, core: bool, accept: Option<&str>, inm: Option<&str>) -> Response<Body> {
    let ranges = parse_accept(accept);
    if ranges.is_empty() {
        return doc_response(
            if core { &d.api_legacy } else { &d.apis_legacy },
            "application/json",
            inm,
            false,
        );
    }
    for r in &ranges {
        let is_json = r.essence == "application/json";
        if is_json
            && r.param("as") == Some("APIGroupDiscoveryList")
            && r.param("g") == Some("apidiscovery.k8s.io")
        {
            // kube 1.34 serves only v2 (`AggregatedDiscoveryRemoveBetaType`
            // is on): a v2beta1 range matches nothing.
            let (doc, v) = match r.param("v") {
                Some("v2") => (if core { &d.api_v2 } else { &d.apis_v2 }, "v2"),
                _ => continue,
            };
            let ct = format!(
                "application/json;g=apidiscovery.k8s.io;v={};as=APIGroupDiscoveryList",
                v
            );
            return doc_response(doc, &ct, inm, false);
        }
        let legacy = if core { &d.api_legacy } else { &d.apis_legacy };
        match legacy_encoding(r) {
            Some(Encoding::Json) => return doc_response(legacy, "application/json", inm, false),
            Some(encoding) => match serde_json::from_slice::<serde_json::Value>(&legacy.bytes) {
                Ok(v) => return encode_doc(&v, encoding),
                Err(e) => return bytes_response(500, "text/plain", e.to_string()),
            },
            None => {}
        }
    }
    not_negotiated()
}

/// kube's discovery handler could not negotiate: `WriteRawJSON`.
fn not_negotiated() -> Response<Body> {
    raw_json(&ApiError::not_acceptable(
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    ))
}

/// The encoding a range asks for among what kube's discovery documents
/// are written in (`WriteObjectNegotiated` with the default endpoint
/// restrictions: a range naming a target with `as`, `g` or `v` is
/// skipped; `*/*` and `application/*` are JSON).
fn legacy_encoding(r: &keelson_codec::MediaRange) -> Option<Encoding> {
    if r.param("as").is_some() || r.param("g").is_some() || r.param("v").is_some() {
        return None;
    }
    match r.essence.as_str() {
        "application/json" | "application/*" | "*/*" => Some(Encoding::Json),
        "application/yaml" => Some(Encoding::Yaml),
        "application/vnd.kubernetes.protobuf" => Some(Encoding::Protobuf),
        _ => None,
    }
}

/// A discovery document (`APIVersions`, `APIGroupList`, `APIGroup`,
/// `APIResourceList`) in the encoding negotiated from `accept`.
fn negotiated(v: &serde_json::Value, accept: Option<&str>) -> Response<Body> {
    let ranges = parse_accept(accept);
    if ranges.is_empty() {
        return json_value(v);
    }
    match ranges.iter().find_map(legacy_encoding) {
        Some(encoding) => encode_doc(v, encoding),
        None => not_negotiated(),
    }
}

/// `v` in `encoding`. The meta.k8s.io discovery kinds are unversioned:
/// `APIVersions` is written with no `apiVersion` (kube encodes it for the
/// empty group version), which its Protobuf envelope keeps.
fn encode_doc(v: &serde_json::Value, encoding: Encoding) -> Response<Body> {
    if encoding != Encoding::Protobuf {
        return crate::http_util::encode(200, Format::object(encoding), v);
    }
    let s = |k: &str| v.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
    let (api_version, kind) = (s("apiVersion"), s("kind"));
    let message_version = if api_version.is_empty() {
        "v1"
    } else {
        api_version
    };
    match keelson_codec::protobuf::encode_message(message_version, kind, v) {
        Ok(raw) => bytes_response(
            200,
            Encoding::Protobuf.media_type(),
            bytes::Bytes::from(keelson_codec::protobuf::envelope(api_version, kind, &raw)),
        ),
        Err(e) => bytes_response(500, "text/plain", e.to_string()),
    }
}
