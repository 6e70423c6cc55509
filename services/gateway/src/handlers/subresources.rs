//! Routing of the core resources with handlers of their own, ahead of the
//! generic verbs: `pods/eviction` ([`super::eviction`]), `pods/binding` and
//! `bindings` ([`super::binding`]), the kubelet family
//! ([`super::kubelet`]) and `componentstatuses`. `pods/ephemeralcontainers`
//! and `pods/resize` take the generic get/update/patch path (their merge
//! is in [`super::status::merge_subresource`]).

use http::{HeaderMap, Response};
use keelson_apimachinery::ApiError;
use keelson_registry::ResourceInfo;

use super::kubelet;
use super::{Ctx, Reply};
use crate::filters::limits::RequestBody;
use crate::filters::request_info::{ResourceRequest, Verb};
use crate::http_util::{add_warnings, bytes_response, encode_target, status_response, Body, Query};
use crate::Backends;
use keelson_codec::list::{item_format, ListEncoder};
use keelson_codec::Format;

/// Serve the request when it is one of ours; `None` lets the generic
/// handlers have it.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn serve(
    b: &Backends,
    info: &ResourceInfo,
    verb: Option<Verb>,
    ri: &ResourceRequest,
    query: &Query,
    headers: &HeaderMap,
    body: &mut RequestBody,
    out: Format,
) -> Option<Response<Body>> {
    if !info.group.is_empty() || info.custom.is_some() {
        return None;
    }
    let cx = Ctx {
        b,
        ri,
        info,
        query,
        headers,
    };
    let sub = ri.subresource.as_str();
    let res = info.plural.as_str();
    let reply = |r: Result<Reply, ApiError>| match r {
        Ok(r) => {
            let mut resp = encode_target(r.code, out, query, &r.object);
            add_warnings(&mut resp, &r.warnings);
            resp
        }
        Err(e) => status_response(&e, out),
    };
    if res == "componentstatuses" && matches!(verb, Some(Verb::Get | Verb::List)) {
        let list = verb == Some(Verb::List);
        let resp = match kubelet::component_statuses(&cx, list).await {
            Ok(r) if list => list_response(out, query, &r.object),
            other => reply(other),
        };
        return Some(resp);
    }
    // Other verbs on `bindings` get the generic path's answers (kube's
    // `watch is not supported on resources of kind "bindings"`, ...).
    let ours = (res == "bindings" && sub.is_empty() && verb == Some(Verb::Create))
        || (res == "pods" && matches!(sub, "eviction" | "binding"))
        || kubelet::handles(res, sub);
    if !ours || (!sub.is_empty() && !info.has_subresource(sub)) {
        return None;
    }
    let allowed = match (res, sub) {
        ("bindings", _) | (_, "eviction" | "binding") => verb == Some(Verb::Create),
        (_, "log") => verb == Some(Verb::Get),
        (_, "exec" | "attach" | "portforward") => matches!(verb, Some(Verb::Get | Verb::Create)),
        _ => verb.is_some(),
    };
    if !allowed {
        return Some(status_response(&ApiError::method_not_allowed(), out));
    }
    Some(match sub {
        "eviction" | "binding" | "" => {
            let bytes = match body.read().await {
                Ok(b) => b,
                Err(e) => return Some(status_response(&e, out)),
            };
            if sub == "eviction" {
                reply(super::eviction::create(&cx, &bytes).await)
            } else {
                reply(super::binding::create(&cx, &bytes).await)
            }
        }
        _ => match kubelet::serve(&cx).await {
            Ok(()) => {
                let mut r = bytes_response(204, "", Vec::<u8>::new());
                r.headers_mut().remove(http::header::CONTENT_TYPE);
                r
            }
            Err(e) => status_response(&e, out),
        },
    })
}

/// A list value written through the codec's [`ListEncoder`] (a Table of
/// its rows, items without type meta, ...), as the list handler does.
fn list_response(out: Format, query: &Query, list: &serde_json::Value) -> Response<Body> {
    let encoded = (|| -> Result<Vec<u8>, ApiError> {
        let opts = match out.target {
            keelson_codec::Target::Table(_) => {
                keelson_codec::TableOptions::from_query(query.get("includeObject"))?
            }
            _ => keelson_codec::TableOptions::default(),
        };
        let mut head = list.clone();
        if let Some(m) = head.as_object_mut() {
            m.remove("items");
        }
        let mut enc =
            ListEncoder::with_options(out, &head, &opts, keelson_codec::table::time::now())?;
        let mut body = Vec::new();
        let items = list.get("items").and_then(serde_json::Value::as_array);
        for item in items.into_iter().flatten() {
            let bytes = keelson_codec::encode(item_format(out), item)?;
            if let Some(frame) = enc.push_shared(bytes)? {
                body.extend_from_slice(&frame);
            }
        }
        for frame in enc.finish_frames()? {
            body.extend_from_slice(&frame);
        }
        Ok(body)
    })();
    match encoded {
        Ok(body) => bytes_response(200, out.content_type(), body),
        Err(e) => status_response(&e, out),
    }
}
