//! The watch-cache contract: lists and watches served from a cache that
//! follows the store's change stream (kube-apiserver's watch cache).
//!
//! Objects travel as JSON bytes that the cache encoded once and shares
//! between every reader, so a list or a watch fan-out never re-encodes an
//! object per client.

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use keelson_apimachinery::{ApiResult, GroupResource};

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
    /// The items in key order, each one object as JSON without `kind` and
    /// `apiVersion` (as kube's typed lists carry them).
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
    /// Send a [`CacheEventType::Bookmark`] every this many milliseconds
    /// (0 = never).
    pub bookmark_interval_ms: u64,
}

/// What a cached watch event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheEventType {
    Added,
    Modified,
    Deleted,
    /// Every change up to `revision` has been sent; no object.
    Bookmark,
    /// The initial state has been sent, up to `revision`; no object.
    InitialEventsEnd,
}

/// One event of a cached watch, already filtered by the request's
/// selectors (an object that stops matching arrives as `Deleted`, one that
/// starts matching as `Added`).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEvent {
    pub event_type: CacheEventType,
    /// The revision of the change (or of the bookmark).
    pub revision: u64,
    /// The object as JSON with `kind` and `apiVersion`; empty for bookmarks.
    /// Shared with every other watcher that sees the same event.
    pub object: Bytes,
    /// The event as one JSON watch line, [`watch_line`] of the type and the
    /// object; empty for bookmarks. Shared like `object`, so a fan-out
    /// frames each event once, not once per watcher.
    pub line: Bytes,
}

impl CacheEvent {
    /// An event, framing its line.
    pub fn new(event_type: CacheEventType, revision: u64, object: Bytes) -> CacheEvent {
        let line = watch_line(event_type, &object);
        CacheEvent {
            event_type,
            revision,
            object,
            line,
        }
    }
}

/// The JSON watch-event type of an event (`ADDED`, ...); `None` for the
/// markers, which the gateway renders as bookmarks.
pub fn watch_event_type(t: CacheEventType) -> Option<&'static str> {
    match t {
        CacheEventType::Added => Some("ADDED"),
        CacheEventType::Modified => Some("MODIFIED"),
        CacheEventType::Deleted => Some("DELETED"),
        CacheEventType::Bookmark | CacheEventType::InitialEventsEnd => None,
    }
}

/// The object inside a line made by [`watch_line`] for `t` (a slice of it,
/// not a copy); `None` when `line` is not such a line.
pub fn object_of_line(t: CacheEventType, line: &Bytes) -> Option<Bytes> {
    let name = watch_event_type(t)?;
    let prefix_len = r#"{"type":"","object":"#.len() + name.len();
    let ok = line.len() >= prefix_len + 2
        && line.ends_with(b"}\n")
        && line[..prefix_len] == watch_line(t, b"")[..prefix_len];
    ok.then(|| line.slice(prefix_len..line.len() - 2))
}

/// `{"type":"ADDED","object":<object>}` and a newline: one event of a JSON
/// watch stream as kube-apiserver writes it. Empty for the markers.
pub fn watch_line(t: CacheEventType, object: &[u8]) -> Bytes {
    let Some(name) = watch_event_type(t) else {
        return Bytes::new();
    };
    let mut b = Vec::with_capacity(object.len() + 32);
    b.extend_from_slice(b"{\"type\":\"");
    b.extend_from_slice(name.as_bytes());
    b.extend_from_slice(b"\",\"object\":");
    b.extend_from_slice(object);
    b.extend_from_slice(b"}\n");
    Bytes::from(b)
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
