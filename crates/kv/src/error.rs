//! The seam's error type.

/// What a [`crate::RevisionedKv`] call can fail with. A failed compare is
/// not an error: it is [`crate::TxnResponse::Failed`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    /// The revision asked for is older than the compacted revision
    /// (etcd: `mvcc: required revision has been compacted`).
    #[error("required revision {requested} has been compacted (compacted revision {compacted})")]
    Compacted {
        /// The revision asked for (for a watch: the first revision it needed).
        requested: u64,
        /// The store's compacted revision.
        compacted: u64,
    },
    /// The revision asked for is newer than the current revision
    /// (etcd: `mvcc: required revision is a future revision`).
    #[error("required revision {requested} is a future revision (current revision {current})")]
    FutureRevision {
        /// The revision asked for.
        requested: u64,
        /// The store's current revision.
        current: u64,
    },
    /// The backend (disk, network, the engine) failed.
    #[error("storage backend error: {0}")]
    Backend(String),
    /// The backend could not be reached in time (etcd down or partitioned):
    /// the request may be retried.
    #[error("storage backend unavailable: {0}")]
    Unavailable(String),
    /// Stored bytes could not be decoded.
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
}
