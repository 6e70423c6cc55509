//! `?watch=true` on collections: a chunked stream of
//! `{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":...}` lines fed
//! by the watch cache (which filters by namespace and selectors and encodes
//! each object once for every watcher).
//!
//! resourceVersion semantics (kube-apiserver's): unset or `"0"` → synthetic
//! ADDED events for the current state, then changes; a revision → every
//! change after it; a compacted revision → one `ERROR` event carrying a 410
//! `Expired` Status. `sendInitialEvents=true` (with
//! `resourceVersionMatch=NotOlderThan`) ends the initial events with a
//! BOOKMARK annotated `k8s.io/initial-events-end: "true"`. Selector
//! transitions become ADDED / DELETED.
//!
//! With `as=Table` every event's object is a Table of one row, shared by
//! every watcher of the cache; only the first event of a watch carries the
//! column definitions (kube sets `noHeaders` after it), spliced into it
//! here. With `as=PartialObjectMetadata` every object is one. Bookmarks are
//! shown the same way (kube transforms them too); `ERROR` Status events
//! never are. `as=PartialObjectMetadataList` cannot show a single object:
//! kube's stream ends at the first event, and so does this one.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use keelson_api::{
    CacheEvent, CacheEventStream, CacheWatchRequest, EventType, IncludeObject, StoreApi,
    WatchCacheApi, WatchStart,
};
use keelson_apimachinery::options::ListOptions;
use keelson_apimachinery::{ApiError, ApiResult};
use keelson_codec::{encode_event, encode_event_value, encode_with, Format, TableOptions, Target};
use keelson_registry::ResourceInfo;
use serde_json::{json, Value};

use keelson_selectors::{FieldSelector, LabelSelector};

use crate::filters::request_info::ResourceRequest;
use crate::http_util::{Body, Query};
use crate::Backends;

/// Events already waiting are sent together in frames up to this size.
const BATCH_BYTES: usize = 16 * 1024;
/// How often a BOOKMARK is sent when the client allows them.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// Server-side cap when the client gives no `timeoutSeconds` (kube-apiserver's
/// `--min-request-timeout` default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// Parsed and validated watch parameters.
struct Params {
    /// Where the client asked the watch to start.
    start: WatchStart,
    bookmarks: bool,
    timeout: Duration,
}

fn parse_params(info: &ResourceInfo, q: &Query) -> ApiResult<Params> {
    let opts = ListOptions::from_query(q)?;
    // Bad selectors are 400s before the stream starts (the cache applies them).
    LabelSelector::parse(&opts.label_selector)?;
    FieldSelector::parse(&opts.field_selector, &info.group, &info.plural)?;
    Ok(Params {
        start: opts.watch_start().unwrap_or(WatchStart::Now),
        bookmarks: opts.allow_watch_bookmarks,
        timeout: opts
            .timeout_seconds
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs),
    })
}

/// Watches are streamed as JSON unless Protobuf or CBOR is negotiated
/// (YAML has no stream serializer).
const WATCH_FORMAT: Format = Format::JSON;

/// The format a watch's events are framed in for the negotiated
/// encoding: Protobuf (kube's length-delimited `WatchEvent`s), CBOR
/// (`application/cbor-seq`: tagged `WatchEvent`s back to back) or JSON.
fn stream_format(encoding: keelson_codec::Encoding) -> Format {
    match encoding {
        keelson_codec::Encoding::Protobuf | keelson_codec::Encoding::Cbor => {
            Format::object(encoding)
        }
        _ => WATCH_FORMAT,
    }
}

/// One frame of the watch stream around an object the gateway makes
/// itself (bookmarks, `ERROR` Status events).
fn frame(stream: Format, t: EventType, object: &Value) -> Bytes {
    encode_event_value(stream, t, object).unwrap_or_default()
}

/// The type meta of a watch's bookmarks and how the watch shows objects:
/// all a feed keeps of the resource (the body outlives the request's
/// catalog snapshot).
struct TypeMeta {
    kind: String,
    api_version: String,
    /// The events' format: JSON, with the Accept header's target.
    format: Format,
    /// What a Table's rows carry.
    include: IncludeObject,
    /// A Table watch that has sent nothing yet: its first event carries
    /// the column definitions.
    headers_pending: bool,
    /// A custom resource shown in another version than the cache's
    /// (`custom::converts_format`): the cache's JSON events converted
    /// (through the CRD's webhook, or `apiVersion` only) and encoded here
    /// in the watch's target and framing. Boxed, as `converted`: every
    /// open watch holds its feed, and most have neither.
    custom: Option<Box<ResourceInfo>>,
    /// A built-in resource watched at a version other than its storage
    /// version: the cache's JSON events converted and framed here.
    converted: Option<Box<ResourceInfo>>,
}

impl TypeMeta {
    fn of(info: &ResourceInfo, format: Format, include: IncludeObject) -> TypeMeta {
        TypeMeta {
            kind: info.kind.clone(),
            api_version: info.api_version(),
            format,
            include,
            headers_pending: matches!(format.target, Target::Table(_)),
            custom: super::custom::converts_format(info, format).then(|| Box::new(info.clone())),
            converted: super::versions::converts_format(info, format)
                .then(|| Box::new(info.clone())),
        }
    }

    /// A cache frame of a converted resource (asked for as JSON) in the
    /// watched version and the watch's framing.
    fn convert_frame(&self, t: EventType, frame: Bytes) -> Bytes {
        match &self.converted {
            Some(info) => {
                super::versions::watch_frame(info, stream_format(self.format.encoding), t, frame)
            }
            None => frame,
        }
    }

    /// An event around an object the gateway makes itself (a bookmark),
    /// shown as the watch's target.
    fn object_frame(&mut self, t: EventType, object: &Value) -> Bytes {
        let opts = TableOptions {
            include_object: self.include,
            no_headers: !self.headers_pending,
        };
        self.headers_pending = false;
        let now = keelson_codec::table::time::now();
        encode_with(self.format, object, &opts, now)
            .and_then(|o| encode_event(stream_format(self.format.encoding), t, &o))
            .unwrap_or_default()
    }

    /// A frame from the cache (shared by every watcher): the first event of
    /// a Table watch gets the column definitions.
    fn cache_frame(&mut self, frame: Bytes) -> Bytes {
        if !std::mem::take(&mut self.headers_pending) {
            return frame;
        }
        keelson_codec::table::with_headers(&frame, &self.api_version, &self.kind).unwrap_or(frame)
    }

    /// An `ERROR` event: the Status as it is (it still is the first event).
    fn error_frame(&mut self, status: &Value) -> Bytes {
        self.headers_pending = false;
        frame(
            stream_format(self.format.encoding),
            EventType::Error,
            status,
        )
    }
}

fn bookmark(t: &mut TypeMeta, rv: u64, initial_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let object = json!({"kind": t.kind, "apiVersion": t.api_version, "metadata": metadata});
    t.object_frame(EventType::Bookmark, &object)
}

/// The cache request for a watch starting at `start`.
fn cache_request(
    info: &ResourceInfo,
    ns: Option<&str>,
    q: &Query,
    p: &Params,
    start: WatchStart,
    view: &TypeMeta,
) -> CacheWatchRequest {
    CacheWatchRequest {
        gr: info.gr(),
        namespace: ns.map(str::to_string),
        label_selector: q.get("labelSelector").unwrap_or("").to_string(),
        field_selector: q.get("fieldSelector").unwrap_or("").to_string(),
        start,
        bookmark_interval_ms: if p.bookmarks {
            BOOKMARK_INTERVAL.as_millis() as u64
        } else {
            0
        },
        // A list-only target cannot show one object: such a watch ends
        // at its first event (see `serve`).
        format: match view.format.target {
            Target::PartialObjectMetadataList(_) => WATCH_FORMAT,
            _ if view.converted.is_some() || view.custom.is_some() => WATCH_FORMAT,
            _ => view.format,
        },
        include_object: view.include,
    }
}

/// Serve one watch request; `out` is the negotiated format, whose target
/// (Table, PartialObjectMetadata) the events' objects are shown as.
pub async fn serve(
    b: &Backends,
    info: &ResourceInfo,
    ri: &ResourceRequest,
    q: &Query,
    out: Format,
) -> Result<Response<Body>, ApiError> {
    // kube negotiates a stream serializer: YAML has none.
    if keelson_codec::serializer(out.encoding).stream.is_none() {
        return Err(ApiError::not_acceptable(
            keelson_codec::negotiate::NOT_ACCEPTABLE_STREAM,
        ));
    }
    let include = match out.target {
        Target::Table(_) => TableOptions::from_query(q.get("includeObject"))?.include_object,
        _ => IncludeObject::Metadata,
    };
    let view = TypeMeta::of(
        info,
        Format {
            encoding: stream_format(out.encoding).encoding,
            ..out
        },
        include,
    );
    let list_only = matches!(out.target, Target::PartialObjectMetadataList(_));
    let p = parse_params(info, q)?;
    let ns = (!ri.namespace.is_empty()).then_some(ri.namespace.as_str());
    let start = match p.start {
        // The end marker is always asked for: after it the watch can be
        // resumed on another replica; it is only shown when requested.
        // With sendInitialEvents any resourceVersion reads a consistent
        // state, which is never older than the one asked for.
        WatchStart::InitialState { .. } => WatchStart::InitialState {
            initial_events_end: true,
        },
        other => other,
    };
    let req = cache_request(info, ns, q, &p, start, &view);
    let body: BoxStream<'static, Bytes> = match b.watch.watch(req.clone()).await {
        // kube cannot encode an object as a list: the stream ends at the
        // first event, sending nothing.
        Ok(events) if list_only => Feed::new(b, view, p, req, events)
            .into_stream()
            .take_while(|_| futures::future::ready(false))
            .boxed(),
        Ok(events) => Feed::new(b, view, p, req, events).into_stream(),
        // kube answers 200 and one ERROR event for a too-old revision.
        Err(e) if e.is_gone_or_expired() => {
            let stream = stream_format(out.encoding);
            futures::stream::iter([frame(stream, EventType::Error, &e.to_status_json())]).boxed()
        }
        Err(e) => return Err(e),
    };
    // `apiserver_registered_watchers` while the stream lives, and
    // `apiserver_watch_events_total` per frame sent.
    let watcher =
        keelson_metrics::Metrics::global().watcher(&info.group, &info.version, &info.kind);
    let frames = body.map(move |bytes| {
        watcher.sent(1);
        Ok::<_, Infallible>(Frame::data(bytes))
    });
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(frames)));
    resp.extensions_mut()
        .insert(crate::compression::Uncompressed);
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(
            keelson_codec::serializer(stream_format(out.encoding).encoding)
                .stream
                .map_or("application/json", |s| s.media_type),
        ),
    );
    Ok(resp)
}

/// One watcher's response body: cache events as lines, polled by the
/// connection only when it can send (no task or queue of its own), until
/// the timeout, an error, or the client leaves. Events that are already
/// waiting are sent together in one frame. When the watch replica goes away
/// mid-stream (503) the watch continues on another replica from the last
/// revision seen, so the client notices nothing; before the initial state
/// is complete that is not possible and the stream ends (the client
/// re-lists).
struct Feed {
    cache: Arc<dyn WatchCacheApi>,
    /// For conversion webhooks of custom resources (the store resolves
    /// the webhook's Service).
    store: Arc<dyn StoreApi>,
    info: TypeMeta,
    p: Params,
    req: CacheWatchRequest,
    events: CacheEventStream,
    show_initial_end: bool,
    last_rv: u64,
    resumable: bool,
    deadline: Pin<Box<tokio::time::Sleep>>,
    done: bool,
}

/// What one step of a feed produced.
enum Step {
    /// Bytes to send (possibly nothing, e.g. a filtered bookmark).
    Send(Option<Bytes>),
    /// The stream ends after these bytes.
    End(Option<Bytes>),
}

impl Feed {
    fn new(
        b: &Backends,
        info: TypeMeta,
        p: Params,
        req: CacheWatchRequest,
        events: CacheEventStream,
    ) -> Feed {
        // Resumable once the last revision sent is known: from the start
        // for `After`, after the first event for `Now`, after the initial
        // events' end for the initial-state starts.
        let (last_rv, resumable) = match req.start {
            WatchStart::After(r) => (r, true),
            _ => (0, false),
        };
        Feed {
            cache: b.watch.clone(),
            store: b.store.clone(),
            info,
            show_initial_end: matches!(
                p.start,
                WatchStart::InitialState {
                    initial_events_end: true
                }
            ),
            deadline: Box::pin(tokio::time::sleep(p.timeout)),
            p,
            req,
            events,
            last_rv,
            resumable,
            done: false,
        }
    }

    fn into_stream(self) -> BoxStream<'static, Bytes> {
        futures::stream::unfold(self, |mut feed| async move {
            let bytes = feed.next_frame().await?;
            Some((bytes, feed))
        })
        .boxed()
    }

    /// The next frame: one event, plus any that are already waiting.
    async fn next_frame(&mut self) -> Option<Bytes> {
        loop {
            if self.done {
                return None;
            }
            let step = tokio::select! {
                _ = &mut self.deadline => {
                    let last = (self.p.bookmarks && self.last_rv > 0)
                        .then(|| bookmark(&mut self.info, self.last_rv, false));
                    Step::End(last)
                }
                next = self.events.next() => self.step(next).await,
            };
            let first = match step {
                Step::Send(None) => continue,
                Step::Send(Some(b)) => b,
                Step::End(b) => {
                    self.done = true;
                    return b;
                }
            };
            // Batch what is already waiting, up to a bounded frame (the
            // first line is sent as it is when nothing else waits). The
            // lines are gathered first and copied once into a frame of the
            // exact size: growing a buffer line by line reallocated it for
            // every watcher (8 % of a gateway's CPU in a 1,000-watcher
            // fan-out).
            let mut lines: Vec<Bytes> = Vec::new();
            let mut len = first.len();
            while len < BATCH_BYTES {
                let Some(next) = self.events.next().now_or_never() else {
                    break;
                };
                match self.step(next).await {
                    Step::Send(Some(b)) => {
                        len += b.len();
                        lines.push(b);
                    }
                    Step::Send(None) => {}
                    Step::End(b) => {
                        if let Some(b) = b {
                            len += b.len();
                            lines.push(b);
                        }
                        self.done = true;
                        break;
                    }
                }
            }
            if lines.is_empty() {
                return Some(first);
            }
            let mut frame = BytesMut::with_capacity(len);
            frame.extend_from_slice(&first);
            for line in &lines {
                frame.extend_from_slice(line);
            }
            return Some(frame.freeze());
        }
    }

    /// Turn one item of the cache stream into bytes to send.
    async fn step(&mut self, next: Option<ApiResult<CacheEvent>>) -> Step {
        match next {
            // The cache closed this watcher (it fell behind): the client
            // re-watches from its last revision.
            None => Step::End(None),
            // The replica went away. Ended without an ERROR event (as a
            // server going down ends its watches) when there is no revision
            // to resume from.
            Some(Err(e)) if e.is_unavailable() && !self.resumable => {
                tracing::info!(error = %e.message, "watch replica gone before the watch had a revision; ending it");
                Step::End(None)
            }
            Some(Err(e)) if e.is_unavailable() => {
                self.req.start = WatchStart::After(self.last_rv);
                match self.cache.watch(self.req.clone()).await {
                    Ok(s) => {
                        self.events = s;
                        Step::Send(None)
                    }
                    Err(e) => {
                        tracing::warn!(error = %e.message, "cannot resume a watch on another replica");
                        Step::End(None)
                    }
                }
            }
            Some(Err(e)) => Step::End(Some(self.info.error_frame(&e.to_status_json()))),
            Some(Ok(ev)) => {
                if self.req.start == WatchStart::Now {
                    self.resumable = true;
                }
                let custom = self
                    .info
                    .custom
                    .as_ref()
                    .filter(|_| ev.event_type.is_change());
                let out = if let Some(info) = custom {
                    // A custom object in another version: converted and
                    // encoded for this watcher (a webhook that fails ends
                    // the watch with its Status). Boxed: the webhook call's
                    // future would otherwise sit in every feed's state, idle
                    // or not, converted or not.
                    let converted =
                        Box::pin(super::custom::event_object(&self.store, info, &ev.frame));
                    match converted.await {
                        Ok(object) => Some(self.info.object_frame(ev.event_type, &object)),
                        Err(e) => {
                            return Step::End(Some(self.info.error_frame(&e.to_status_json())))
                        }
                    }
                } else if ev.event_type.is_change() {
                    // The cache's frame, shared with every other watcher.
                    let frame = self.info.convert_frame(ev.event_type, ev.frame);
                    Some(self.info.cache_frame(frame))
                } else if ev.initial_events_end {
                    self.resumable = true;
                    self.show_initial_end
                        .then(|| bookmark(&mut self.info, ev.revision, true))
                } else {
                    self.p
                        .bookmarks
                        .then(|| bookmark(&mut self.info, ev.revision, false))
                };
                if self.resumable {
                    self.last_rv = self.last_rv.max(ev.revision);
                }
                Step::Send(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(q: &str) -> ApiResult<Params> {
        let info = keelson_registry::CatalogSnapshot::builtin()
            .lookup("", "v1", "pods")
            .expect("pods");
        parse_params(info, &Query::parse(Some(q)))
    }

    #[test]
    fn table_watches_send_column_definitions_once() {
        use keelson_codec::MetaVersion;
        let info = keelson_registry::CatalogSnapshot::builtin()
            .lookup("", "v1", "pods")
            .expect("pods");
        let format = Format {
            encoding: keelson_codec::Encoding::Json,
            target: Target::Table(MetaVersion::V1),
        };
        let pod = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "resourceVersion": "3"}});
        let shared = |t| {
            let opts = TableOptions {
                include_object: IncludeObject::Metadata,
                no_headers: true,
            };
            let now = keelson_codec::table::time::now();
            encode_event(format, t, &encode_with(format, &pod, &opts, now).unwrap()).unwrap()
        };
        let event = |b: &Bytes| -> Value { serde_json::from_slice(b).unwrap() };
        let mut view = TypeMeta::of(info, format, IncludeObject::Metadata);
        let first = event(&view.cache_frame(shared(EventType::Added)));
        assert_eq!(first["object"]["columnDefinitions"][0]["name"], "Name");
        let second = view.cache_frame(shared(EventType::Modified));
        assert_eq!(
            second,
            shared(EventType::Modified),
            "shared bytes as they are"
        );
        assert_eq!(event(&second)["object"]["columnDefinitions"], Value::Null);
        // A bookmark first: it is the Table with the definitions.
        let mut view = TypeMeta::of(info, format, IncludeObject::None);
        let b = event(&bookmark(&mut view, 7, false));
        assert_eq!(b["type"], "BOOKMARK");
        assert_eq!(b["object"]["kind"], "Table");
        assert_eq!(b["object"]["metadata"]["resourceVersion"], "7");
        assert!(b["object"]["columnDefinitions"].is_array());
        assert_eq!(b["object"]["rows"][0]["object"], Value::Null);
        let after = event(&view.cache_frame(shared(EventType::Added)));
        assert_eq!(after["object"]["columnDefinitions"], Value::Null);
        // Metadata watches: bookmarks are PartialObjectMetadata; errors
        // stay Statuses.
        let pom = Format {
            encoding: keelson_codec::Encoding::Json,
            target: Target::PartialObjectMetadata(MetaVersion::V1),
        };
        let mut view = TypeMeta::of(info, pom, IncludeObject::Metadata);
        let b = event(&bookmark(&mut view, 9, true));
        assert_eq!(
            b["object"],
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": {"resourceVersion": "9", "creationTimestamp": null,
                                "annotations": {"k8s.io/initial-events-end": "true"}}})
        );
        let e =
            event(&view.error_frame(&json!({"kind": "Status", "apiVersion": "v1", "code": 410})));
        assert_eq!(e["object"]["kind"], "Status");
    }

    // The resourceVersion table itself is tested cell by cell in
    // `keelson_apimachinery::options::resource_version`.
    #[test]
    fn watch_parameters() {
        let p = params("watch=1&allowWatchBookmarks=true&timeoutSeconds=5").unwrap();
        assert_eq!(
            p.start,
            WatchStart::InitialState {
                initial_events_end: false
            }
        );
        assert!(p.bookmarks);
        assert_eq!(p.timeout, Duration::from_secs(5));
        let p = params("watch=1&resourceVersion=12").unwrap();
        assert_eq!((p.start, p.bookmarks), (WatchStart::After(12), false));
        assert_eq!(p.timeout, DEFAULT_TIMEOUT);
        let e = params("watch=1&labelSelector=a%20in%20(b").err().unwrap();
        assert_eq!(e.code, 400);
        let e = params("watch=1&sendInitialEvents=true").err().unwrap();
        assert_eq!(e.code, 422);
        assert_eq!(e.message, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
    }
}
