//! The storage seam: a revisioned key/value store in etcd's terms.
//!
//! It knows nothing of objects, JSON, Kubernetes rules (uid, generation,
//! preconditions, finalizers) or any engine (sled, etcd): keys and values
//! are bytes, and the only meaning it gives them is their revisions. The
//! generic registry store (`keelson-storage`) runs over it; `keelson-kv-sled`
//! implements it with our own MVCC on sled, and an etcd client can implement
//! it directly, since every call is one etcd request.
//!
//! [`conformance`] (feature `conformance`) is the test suite every
//! implementation must pass.
#![forbid(unsafe_code)]

mod error;
mod types;

#[cfg(feature = "conformance")]
pub mod conformance;

use std::time::Duration;

use async_trait::async_trait;

pub use error::KvError;
pub use types::{
    Compare, Event, EventKind, KeyRange, KeyValue, RangeRequest, RangeResponse, TxnOp, TxnRequest,
    TxnResponse, WatchResponse, WatchStream,
};

/// A multi-version key/value store with one global revision, in etcd's
/// words (`etcdserverpb.KV`, `Watch`):
///
/// - The store's **revision** is a counter incremented by every write
///   (put or delete) and never reused; the first write is revision 1.
///   A key's **mod revision** is the revision of its last write, its
///   **create revision** that of the put that created it.
/// - **Range** reads a key or a key range at the current revision or at any
///   revision between the compacted and the current one, exactly as it was.
/// - **Txn** compares one key's mod revision (0: absent) and, when it holds,
///   puts or deletes that key atomically, returning the previous kv; when it
///   fails, the current kv. A write is acknowledged only once durable.
/// - **Watch** streams every change under a prefix from a start revision, in
///   revision order, each with the key's previous kv, and sends progress
///   notifications when it has read up to a revision without a change of
///   its own.
/// - **Compact** forgets the history below a revision: reads and watches
///   there fail with [`KvError::Compacted`]; reads at or above stay exact.
///
/// Used as `Arc<dyn RevisionedKv>`.
#[async_trait]
pub trait RevisionedKv: Send + Sync + 'static {
    /// Read the live keys of a range (`Range`). A revision above the current
    /// one is [`KvError::FutureRevision`], one below the compacted revision
    /// [`KvError::Compacted`].
    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, KvError>;

    /// Compare one key's mod revision and write it when the compare holds
    /// (`Txn`). Returns once the write is durable.
    async fn txn(&self, request: TxnRequest) -> Result<TxnResponse, KvError>;

    /// Watch every key under `prefix` from `start_revision` (inclusive) on
    /// (`Watch` with `prev_kv` and progress notifications). A start revision
    /// below the compacted revision fails the call with
    /// [`KvError::Compacted`] (a backend may also refuse the compacted
    /// revision itself). Only durable changes are delivered.
    async fn watch(&self, prefix: Vec<u8>, start_revision: u64) -> Result<WatchStream, KvError>;

    /// Compact the history up to `revision` (capped at the current revision,
    /// never moving backwards); returns the compacted revision.
    async fn compact(&self, revision: u64) -> Result<u64, KvError>;

    /// The newest revision written more than `age` ago, for a retention
    /// window's compaction target: `Some(0)` when every write is younger,
    /// `None` when the backend records no write times (etcd; its caller
    /// then remembers revisions itself, as kube's compactor does).
    async fn revision_older_than(&self, age: Duration) -> Result<Option<u64>, KvError> {
        let _ = age;
        Ok(None)
    }

    /// The current revision: the last durable write's.
    async fn current_revision(&self) -> Result<u64, KvError>;

    /// The compacted revision: reads below it fail.
    async fn compacted_revision(&self) -> Result<u64, KvError>;
}
