//! The watch-cache contract: lists and watches served from a cache that
//! follows the store's change stream (kube-apiserver's watch cache).
//!
//! The contract is encoding-neutral: a request names the [`Format`] it
//! wants, and objects travel as bytes in that format that the cache
//! encoded once and shares between every reader of the same format, so a
//! list or a watch fan-out never re-encodes an object per client. How a
//! format is written and framed is `keelson-codec`'s business.

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use keelson_apimachinery::{ApiResult, GroupResource};
use keelson_codec::{encode_event, object_of_event, EventType, Format};

pub use keelson_codec::IncludeObject;

// Which state a list reads and where a watch starts are the options'
// resourceVersion tables' answers, defined beside them.
pub use keelson_apimachinery::options::{ListRevision, WatchStart};

/// A list request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheListRequest {
    pub gr: GroupResource,
    /// `None` lists every namespace.
    pub namespace: Option<String>,
    /// `labelSelector`, unparsed ("" = everything).
    pub label_selector: String,
    /// `fieldSelector`, unparsed ("" = everything).
    pub field_selector: String,
    pub revision: ListRevision,
    /// Only items whose `namespace/name` key sorts after this one.
    pub start_after: Option<String>,
    /// At most this many items; 0 = all.
    pub limit: usize,
    /// The format of the items.
    pub format: Format,
}

/// A list answer: the page's metadata up front, then its items streamed.
pub struct CacheList {
    /// The revision the list was read at.
    pub resource_version: u64,
    /// When more items match after this page: the key of its last item.
    pub continue_after: Option<String>,
    /// How many more items follow this page; only set when no selector is
    /// given (kube's `remainingItemCount`).
    pub remaining: Option<u64>,
    /// The items in key order, each one object in the request's format as
    /// a list item (for JSON objects: without `kind` and `apiVersion`, as
    /// kube's typed lists carry them).
    pub items: BoxStream<'static, ApiResult<Bytes>>,
}

impl std::fmt::Debug for CacheList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheList")
            .field("resource_version", &self.resource_version)
            .field("continue_after", &self.continue_after)
            .field("remaining", &self.remaining)
            .finish_non_exhaustive()
    }
}

/// A watch request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheWatchRequest {
    pub gr: GroupResource,
    pub namespace: Option<String>,
    pub label_selector: String,
    pub field_selector: String,
    pub start: WatchStart,
    /// Send a bookmark every this many milliseconds
    /// (0 = never).
    pub bookmark_interval_ms: u64,
    /// The format of the events.
    pub format: Format,
    /// For a `Table` format: what each row carries (`includeObject`). The
    /// events' tables have no column definitions (kube's `noHeaders`, as
    /// every event of a Table watch after the first): they are shared by
    /// every watcher; the first event of each watch gets them spliced in
    /// (`keelson_codec::table::with_headers`).
    pub include_object: IncludeObject,
}

/// One event of a cached watch, already filtered by the request's
/// selectors (an object that stops matching arrives as `Deleted`, one that
/// starts matching as `Added`).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEvent {
    /// `Added`, `Modified`, `Deleted`, or `Bookmark`: every change up to
    /// `revision` has been sent (no object). Never `Error`: a failed watch
    /// ends its stream with an error instead.
    pub event_type: EventType,
    /// A `Bookmark` that ends the initial state (kube's bookmark annotated
    /// `k8s.io/initial-events-end`): the initial state up to `revision` has
    /// been sent.
    pub initial_events_end: bool,
    /// The revision of the change (or of the bookmark).
    pub revision: u64,
    /// The format of `frame` and `object` (the request's).
    pub format: Format,
    /// The event as one frame of the format's watch stream, ready to send;
    /// empty for bookmarks. Shared with every other watcher of the same
    /// format, so a fan-out frames each event once, not once per watcher.
    pub frame: Bytes,
    /// The object (with `kind` and `apiVersion`) in the format, a slice of
    /// `frame`; empty for bookmarks.
    pub object: Bytes,
}

impl CacheEvent {
    /// An event around `object`, already encoded in `format`; a `Bookmark`
    /// carries no object.
    pub fn new(
        event_type: EventType,
        revision: u64,
        format: Format,
        object: &[u8],
    ) -> ApiResult<CacheEvent> {
        if !event_type.is_change() {
            return Ok(CacheEvent::bookmark(revision, format));
        }
        let frame = encode_event(format, event_type, object)?;
        CacheEvent::from_frame(event_type, revision, format, frame).ok_or_else(|| {
            keelson_apimachinery::ApiError::internal("an encoded watch event has no object")
        })
    }

    /// A bookmark: every change up to `revision` has been sent.
    pub fn bookmark(revision: u64, format: Format) -> CacheEvent {
        CacheEvent {
            event_type: EventType::Bookmark,
            initial_events_end: false,
            revision,
            format,
            frame: Bytes::new(),
            object: Bytes::new(),
        }
    }

    /// The bookmark that ends the initial state.
    pub fn initial_events_end(revision: u64, format: Format) -> CacheEvent {
        CacheEvent {
            initial_events_end: true,
            ..CacheEvent::bookmark(revision, format)
        }
    }

    /// An event from its frame (the object is found inside it, not
    /// copied); `None` when `frame` is not a `format` frame of that type.
    /// An empty frame is a bookmark.
    pub fn from_frame(
        event_type: EventType,
        revision: u64,
        format: Format,
        frame: Bytes,
    ) -> Option<CacheEvent> {
        if frame.is_empty() || !event_type.is_change() {
            return Some(CacheEvent::bookmark(revision, format));
        }
        let object = object_of_event(format, event_type, &frame)?;
        Some(CacheEvent {
            event_type,
            initial_events_end: false,
            revision,
            format,
            frame,
            object,
        })
    }
}

/// A stream of cached watch events. It ends without an error when the cache
/// closes a watcher that fell too far behind (kube-apiserver closes such a
/// watch so that the client re-watches from its last revision); an error
/// (e.g. `410 Expired`) is its last item.
pub type CacheEventStream = BoxStream<'static, ApiResult<CacheEvent>>;

/// Lists and watches served from a watch cache.
#[async_trait]
pub trait WatchCacheApi: Send + Sync + 'static {
    /// List a resource; see [`ListRevision`] for which state is read.
    async fn list(&self, req: CacheListRequest) -> ApiResult<CacheList>;

    /// Watch a resource; see [`WatchStart`].
    async fn watch(&self, req: CacheWatchRequest) -> ApiResult<CacheEventStream>;

    /// Readiness of the service.
    async fn ready(&self) -> ApiResult<()> {
        Ok(())
    }
}
