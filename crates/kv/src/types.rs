//! The values that cross the seam, named as etcd's `mvccpb`/`etcdserverpb`
//! messages are.

use futures::stream::BoxStream;

use crate::error::KvError;

/// One key's value at some revision (etcd's `mvccpb.KeyValue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: Vec<u8>,
    /// The value; empty in the `kv` of a delete event.
    pub value: Vec<u8>,
    /// The revision of the write that created the key (since it was last
    /// absent); 0 in the `kv` of a delete event.
    pub create_revision: u64,
    /// The revision of the write that produced this value.
    pub mod_revision: u64,
}

/// Which keys a range or watch covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRange {
    /// Exactly this key.
    Key(Vec<u8>),
    /// Every key starting with these bytes.
    Prefix(Vec<u8>),
    /// Keys in `[start, end)`; `end: None` is unbounded (etcd's `range_end`,
    /// used to continue a limited range after its last key).
    Between {
        /// First key (inclusive).
        start: Vec<u8>,
        /// End (exclusive); `None` for no end.
        end: Option<Vec<u8>>,
    },
}

/// A read (etcd's `RangeRequest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeRequest {
    /// The keys to read.
    pub range: KeyRange,
    /// Read the state at this revision; `None` reads at the current one.
    pub revision: Option<u64>,
    /// Return at most this many keys; 0 means no limit.
    pub limit: usize,
}

impl RangeRequest {
    /// One key at the current revision.
    pub fn key(key: impl Into<Vec<u8>>) -> Self {
        Self::new(KeyRange::Key(key.into()))
    }

    /// Every key under a prefix at the current revision.
    pub fn prefix(prefix: impl Into<Vec<u8>>) -> Self {
        Self::new(KeyRange::Prefix(prefix.into()))
    }

    /// A range read at the current revision, unlimited.
    pub fn new(range: KeyRange) -> Self {
        RangeRequest {
            range,
            revision: None,
            limit: 0,
        }
    }

    /// The same read at an exact revision.
    pub fn at(mut self, revision: u64) -> Self {
        self.revision = Some(revision);
        self
    }

    /// The same read with a limit.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
}

/// A read's answer (etcd's `RangeResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RangeResponse {
    /// The live keys in key order.
    pub kvs: Vec<KeyValue>,
    /// The revision the kvs reflect: the asked revision, or for a read at
    /// the current revision the snapshot's (etcd's header revision).
    pub revision: u64,
    /// True when `limit` cut the answer short.
    pub more: bool,
}

/// The condition of a [`TxnRequest`] (etcd's `Compare` on `MOD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// No condition.
    Always,
    /// The key's mod revision equals this; 0 means the key is absent
    /// (create-if-absent).
    ModRevision(u64),
}

/// What a successful [`TxnRequest`] does to its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnOp {
    /// Set the value.
    Put(Vec<u8>),
    /// Remove the key (an absent key writes nothing).
    Delete,
}

/// One compare on one key and the write done when it holds
/// (etcd's `TxnRequest` with one compare and one success op, requesting
/// the previous kv).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnRequest {
    /// The key compared and written.
    pub key: Vec<u8>,
    /// The condition.
    pub compare: Compare,
    /// The write done when the condition holds.
    pub on_success: TxnOp,
}

/// A transaction's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnResponse {
    /// The compare held and the write is durable.
    Succeeded {
        /// The write's revision (the current revision when nothing was
        /// written: a delete of an absent key).
        revision: u64,
        /// The key's value before the write, if it was live.
        prev_kv: Option<KeyValue>,
    },
    /// The compare failed; nothing was written.
    Failed {
        /// The key's current value (`None`: absent), so the caller can retry
        /// from it or report a conflict.
        current: Option<KeyValue>,
    },
}

/// What an [`Event`] did (etcd's `mvccpb.Event.EventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A put; a create when `kv.create_revision == kv.mod_revision`.
    Put,
    /// A delete.
    Delete,
}

/// One change seen by a watch (etcd's `mvccpb.Event`, with `prev_kv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Put or delete.
    pub kind: EventKind,
    /// The key after the change: for a delete only `key` and
    /// `mod_revision` (the delete's revision) are set.
    pub kv: KeyValue,
    /// The key's value before the change (`None` for a create).
    pub prev_kv: Option<KeyValue>,
}

/// One item of a watch stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchResponse {
    /// A change under the watched range.
    Event(Event),
    /// A progress notification: every change under the watched range up to
    /// `revision` has been delivered.
    Progress {
        /// How far the watch has read.
        revision: u64,
    },
}

/// A watch: changes in revision order, then progress notifications. It ends
/// after an error (e.g. [`KvError::Compacted`] when compaction overtakes a
/// slow reader) or when the store goes away.
pub type WatchStream = BoxStream<'static, Result<WatchResponse, KvError>>;
