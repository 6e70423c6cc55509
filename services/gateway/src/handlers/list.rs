//! `list`: a collection read from the watch cache, paged with `limit` /
//! `continue` over one snapshot. The options and their `resourceVersion` ×
//! `resourceVersionMatch` table are `keelson_apimachinery::options`'; the
//! body is the codec's [`ListEncoder`].

use std::time::Duration;

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use keelson_api::{CacheListRequest, ListRevision};
use keelson_apimachinery::options::{expired_continue, ContinueToken, ListOptions};
use keelson_apimachinery::{ApiError, ApiResult};
use keelson_codec::list::{item_format, ListEncoder};
use keelson_codec::{Format, TableOptions};
use keelson_registry::ResourceInfo;
use serde_json::{json, Map, Value};

use crate::filters::request_info::ResourceRequest;
use crate::http_util::{bytes_response, Body, Query};
use crate::Backends;

/// How long a list for a revision the store has not reached waits for it
/// (kube-apiserver's watch cache waits 3 s) before `504`.
const FRESHNESS_WAIT: Duration = Duration::from_secs(3);

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
    let opts = ListOptions::from_query(q)?;
    // Objects converted to another version are read as JSON, converted
    // here, and encoded whole in any other encoding.
    let read_json =
        super::versions::converts_format(info, out) || super::custom::converts_format(info, out);
    let cache_format = if read_json {
        Format::JSON
    } else {
        item_format(out)
    };
    let start_after = opts.start_after().map(str::to_string);
    let req = CacheListRequest {
        gr: info.gr(),
        namespace: (!ri.namespace.is_empty()).then(|| ri.namespace.clone()),
        label_selector: opts.label_selector.clone(),
        field_selector: opts.field_selector.clone(),
        revision: opts.list_revision().unwrap_or(ListRevision::Consistent),
        start_after: start_after.clone(),
        limit: opts.limit,
        format: cache_format,
    };
    let list = match b.watch.list(req).await {
        Err(e) if e.is_gone_or_expired() => match &start_after {
            Some(start) => return Err(expired_continue(start)),
            None => return Err(e),
        },
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
            Value::String(ContinueToken::new(list.resource_version, last.as_str()).encode()),
        );
    }
    if let Some(n) = list.remaining {
        metadata.insert("remainingItemCount".into(), Value::from(n));
    }
    if info.custom.is_some() {
        // kube's `UnstructuredList.SetContinue` writes the key even when
        // empty.
        metadata
            .entry("continue")
            .or_insert_with(|| Value::String(String::new()));
    }
    let head = json!({
        "kind": info.list_kind,
        "apiVersion": info.api_version(),
        "metadata": metadata,
    });
    // kube reads the Table options after listing (`transformResponseObject`).
    let opts = match out.target {
        keelson_codec::Target::Table(_) => TableOptions::from_query(q.get("includeObject"))?,
        _ => TableOptions::default(),
    };
    let mut enc = ListEncoder::with_options(out, &head, &opts, keelson_codec::table::time::now())?;
    let items = super::custom::convert_list_items(b, info, cache_format, list.items).await?;
    let mut items = super::custom::list_items(info, cache_format, items);
    if super::versions::converts_format(info, out) {
        items = super::versions::list_items(info, items);
    }
    if read_json && item_format(out) != Format::JSON {
        return whole_list(head, items, out).await;
    }
    if !enc.streams() {
        // YAML, and Protobuf (whose envelope carries the list's size up
        // front, as kube's encoder sizes every item first): the items are
        // gathered (Protobuf's as the cache's shared bytes), then sent.
        while let Some(item) = items.next().await {
            enc.push_shared(item?)?;
        }
        let frames = enc.finish_frames()?;
        if frames.len() == 1 {
            let whole = frames.into_iter().next().unwrap_or_default();
            return Ok(bytes_response(200, out.content_type(), whole));
        }
        return Ok(frames_response(out.content_type(), frames));
    }
    Ok(stream(enc, items))
}

/// A list of converted JSON items in an encoding whose items the cache
/// would have encoded (Protobuf, CBOR): gathered, then encoded whole (as
/// the cache's own items are in those encodings).
async fn whole_list(
    mut head: Value,
    mut items: BoxStream<'static, ApiResult<Bytes>>,
    out: Format,
) -> ApiResult<Response<Body>> {
    let mut all = Vec::new();
    while let Some(item) = items.next().await {
        let item = item?;
        all.push(
            serde_json::from_slice::<Value>(&item)
                .map_err(|e| ApiError::internal(format!("list item: {e}")))?,
        );
    }
    if let Some(m) = head.as_object_mut() {
        m.insert("items".into(), Value::Array(all));
    }
    let bytes = keelson_codec::encode(out, &head).map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(bytes_response(200, out.content_type(), bytes))
}

/// A list already written as frames, sent as they are.
fn frames_response(content_type: &'static str, frames: Vec<Bytes>) -> Response<Body> {
    let body =
        futures::stream::iter(frames).map(|b| Ok::<_, std::convert::Infallible>(Frame::data(b)));
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(body)));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    resp
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
