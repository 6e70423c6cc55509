//! List options: `limit` / `continue` paging over a consistent snapshot, and
//! the `resourceVersion` × `resourceVersionMatch` semantics of
//! kube-apiserver's "Resource versions" table.

use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use keelson_api::{CacheListRequest, ListRevision};
use keelson_apimachinery::{ApiError, ApiResult, FieldError};
use keelson_codec::list::{item_format, ListEncoder};
use keelson_codec::Format;
use keelson_registry::ResourceInfo;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::filters::request_info::ResourceRequest;
use crate::http_util::{bytes_response, Body, Query};
use crate::Backends;

/// How long a list for a revision the store has not reached waits for it
/// (kube-apiserver's watch cache waits 3 s) before `504`.
const FRESHNESS_WAIT: Duration = Duration::from_secs(3);

/// Parsed list options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOptions {
    /// Which state the list reads.
    pub snapshot: ListRevision,
    /// 0 = everything.
    pub limit: usize,
    /// Continue after this key (`namespace/name`).
    pub start_after: Option<String>,
}

/// The opaque continue token.
#[derive(Debug, Serialize, Deserialize)]
struct Token {
    v: String,
    /// Snapshot revision; 0 = the current state (an "inconsistent" token).
    rv: u64,
    /// Last key returned.
    start: String,
}

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

fn encode_token(rv: u64, start: &str) -> String {
    let t = Token {
        v: TOKEN_VERSION.into(),
        rv,
        start: start.into(),
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(&t).unwrap_or_default())
}

fn decode_token(s: &str) -> ApiResult<Token> {
    let bad = |why: &str| ApiError::bad_request(format!("invalid continue token: {}", why));
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .map_err(|_| bad("illegal base64 data"))?;
    let t: Token = serde_json::from_slice(&bytes).map_err(|e| bad(&e.to_string()))?;
    if t.v != TOKEN_VERSION {
        return Err(bad("continue key is not supported by this server"));
    }
    Ok(t)
}

fn invalid(errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", &errs)
}

/// Parse and validate list options as kube-apiserver does.
pub fn parse(q: &Query) -> ApiResult<ListOptions> {
    let rv = q.get("resourceVersion").unwrap_or("");
    let rv_match = q.get("resourceVersionMatch").unwrap_or("");
    let cont = q.get("continue").unwrap_or("");
    let mut errs = Vec::new();
    if q.has("sendInitialEvents") {
        errs.push(FieldError::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    match rv_match {
        "" => {}
        "Exact" | "NotOlderThan" => {
            if rv.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if rv_match == "Exact" && rv == "0" {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            "resourceVersionMatch",
            other,
            &["Exact", "NotOlderThan", ""],
        )),
    }
    if !errs.is_empty() {
        return Err(invalid(errs));
    }
    let limit = match q.get("limit") {
        None | Some("") => 0,
        Some(s) => s
            .parse::<i64>()
            .map(|n| n.max(0) as usize)
            .map_err(|_| ApiError::bad_request(format!("invalid limit {:?}", s)))?,
    };
    let parsed_rv = match rv {
        "" | "0" => None,
        s => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {:?}", s)))?,
        ),
    };
    if !cont.is_empty() {
        if parsed_rv.is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let t = decode_token(cont)?;
        return Ok(ListOptions {
            snapshot: if t.rv == 0 {
                ListRevision::Consistent
            } else {
                ListRevision::Exact(t.rv)
            },
            limit,
            start_after: Some(t.start),
        });
    }
    let snapshot = match (parsed_rv, rv_match) {
        (None, _) if rv == "0" => ListRevision::Any,
        (None, _) => ListRevision::Consistent,
        (Some(r), "Exact") => ListRevision::Exact(r),
        (Some(r), _) => ListRevision::NotOlderThan(r),
    };
    Ok(ListOptions {
        snapshot,
        limit,
        start_after: None,
    })
}

/// Serve a list from the watch cache through the codec's [`ListEncoder`].
/// JSON is streamed: the list's head, then the items as the cache yields
/// them, in frames of about 64 KiB, so a large list is never held whole in
/// memory; YAML is written whole.
pub async fn serve(
    b: &Backends,
    info: &ResourceInfo,
    ri: &ResourceRequest,
    q: &Query,
    out: Format,
) -> ApiResult<Response<Body>> {
    let opts = parse(q)?;
    let label_selector = q.get("labelSelector").unwrap_or("").to_string();
    let field_selector = q.get("fieldSelector").unwrap_or("").to_string();
    let req = CacheListRequest {
        gr: info.gr(),
        namespace: (!ri.namespace.is_empty()).then(|| ri.namespace.clone()),
        label_selector,
        field_selector,
        revision: opts.snapshot,
        start_after: opts.start_after.clone(),
        limit: opts.limit,
        format: item_format(out),
    };
    let list = match b.watch.list(req).await {
        Err(e) if e.code == 410 && opts.start_after.is_some() => {
            return Err(expired_continue(opts.start_after.as_deref().unwrap_or("")))
        }
        other => other?,
    };
    let mut metadata = Map::new();
    metadata.insert(
        "resourceVersion".into(),
        Value::String(list.resource_version.to_string()),
    );
    if let Some(last) = &list.continue_after {
        metadata.insert(
            "continue".into(),
            Value::String(encode_token(list.resource_version, last)),
        );
    }
    if let Some(n) = list.remaining {
        metadata.insert("remainingItemCount".into(), Value::from(n));
    }
    let head = json!({
        "kind": info.list_kind,
        "apiVersion": info.api_version(),
        "metadata": metadata,
    });
    let mut enc = ListEncoder::new(out, &head)?;
    let mut items = list.items;
    if !enc.streams() {
        while let Some(item) = items.next().await {
            enc.push(&item?)?;
        }
        return Ok(bytes_response(200, out.content_type(), enc.finish()?));
    }
    Ok(stream(enc, items))
}

/// A streamed list as a body: the encoder's frames as the items arrive.
/// An item stream that fails mid-way ends the body early (the status line
/// is gone); the client sees a truncated list.
fn stream(mut enc: ListEncoder, items: BoxStream<'static, ApiResult<Bytes>>) -> Response<Body> {
    let content_type = enc.format().content_type();
    // A task feeds a small channel: the body needs a `Sync` stream, and the
    // channel's bound is the list's only buffering (two frames).
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(2);
    tokio::spawn(async move {
        let mut items = items;
        while let Some(item) = items.next().await {
            let frame = match item
                .map_err(|e| e.message)
                .and_then(|i| enc.push(&i).map_err(|e| e.to_string()))
            {
                Ok(frame) => frame,
                Err(e) => {
                    tracing::warn!(error = %e, "list stream broke; truncating the response");
                    return;
                }
            };
            if let Some(frame) = frame {
                if tx.send(frame).await.is_err() {
                    return;
                }
            }
        }
        match enc.finish() {
            Ok(last) => {
                let _ = tx.send(last).await;
            }
            Err(e) => tracing::warn!(error = %e, "cannot end a list; truncating the response"),
        }
    });
    let body = tokio_stream::wrappers::ReceiverStream::new(rx)
        .map(|b| Ok::<_, std::convert::Infallible>(Frame::data(b)));
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(body)));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    resp
}

/// Wait (up to 3 s) until the store has reached `rev`; the current revision.
async fn wait_for(b: &Backends, rev: u64) -> ApiResult<u64> {
    let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
    loop {
        let current = b.store.current_revision().await?;
        if current >= rev || tokio::time::Instant::now() >= deadline {
            return Ok(current);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait (up to 3 s) for `rev`, then `504 Too large resource version` if the
/// store is still behind it (reads "not older than" a revision: get, list,
/// watch).
pub async fn require_revision(b: &Backends, rev: u64) -> ApiResult<()> {
    let current = wait_for(b, rev).await?;
    if current < rev {
        return Err(ApiError::too_large_resource_version(rev, current));
    }
    Ok(())
}

/// kube's 410 for a continue token older than the retention window, with a
/// fresh token that continues inconsistently from the current state.
fn expired_continue(start: &str) -> ApiError {
    let mut e = ApiError::new(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    e.continue_token = Some(encode_token(0, start));
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(q: &str) -> ApiResult<ListOptions> {
        parse(&Query::parse(Some(q)))
    }

    #[test]
    fn the_resource_version_table() {
        assert_eq!(opts("").unwrap().snapshot, ListRevision::Consistent);
        assert_eq!(
            opts("resourceVersion=0").unwrap().snapshot,
            ListRevision::Any
        );
        assert_eq!(
            opts("resourceVersion=5").unwrap().snapshot,
            ListRevision::NotOlderThan(5)
        );
        assert_eq!(
            opts("resourceVersion=5&resourceVersionMatch=NotOlderThan")
                .unwrap()
                .snapshot,
            ListRevision::NotOlderThan(5)
        );
        assert_eq!(
            opts("resourceVersion=5&resourceVersionMatch=Exact")
                .unwrap()
                .snapshot,
            ListRevision::Exact(5)
        );
        let msg = |q: &str| opts(q).unwrap_err().message;
        assert_eq!(msg("resourceVersionMatch=Exact"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
        assert_eq!(msg("resourceVersion=0&resourceVersionMatch=Exact"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
        assert_eq!(msg("resourceVersion=1&resourceVersionMatch=foo"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"");
        assert_eq!(msg("sendInitialEvents=true"), "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
        let tok = encode_token(9, "ns/a");
        assert_eq!(
            opts(&format!("continue={tok}&resourceVersion=3"))
                .unwrap_err()
                .message,
            "specifying resource version is not allowed when using continue"
        );
        assert!(opts(&format!(
            "continue={tok}&resourceVersionMatch=Exact&resourceVersion=3"
        ))
        .unwrap_err()
        .message
        .ends_with("resourceVersionMatch is forbidden when continue is provided"));
        let o = opts(&format!("continue={tok}&limit=2")).unwrap();
        assert_eq!(
            (o.snapshot, o.limit, o.start_after.as_deref()),
            (ListRevision::Exact(9), 2, Some("ns/a"))
        );
        assert_eq!(opts("continue=%%%").unwrap_err().code, 400);
    }
}
