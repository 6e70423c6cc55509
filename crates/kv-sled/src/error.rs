//! The MVCC layer's error type.

use keelson_kv::KvError;

/// Anything the engine and MVCC layers can fail with.
#[derive(Debug, thiserror::Error)]
pub enum MvccError {
    /// The backend (sled, the filesystem) failed.
    #[error("storage backend error: {0}")]
    Backend(String),
    /// Stored bytes could not be decoded.
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// A read asked for a revision that compaction already removed.
    #[error("required revision {requested} has been compacted (compacted revision {compacted})")]
    Compacted {
        /// The revision asked for.
        requested: u64,
        /// The store's compacted revision.
        compacted: u64,
    },
    /// A read asked for a revision the store has not reached yet.
    #[error("required revision {requested} is a future revision (current revision {current})")]
    FutureRevision {
        /// The revision asked for.
        requested: u64,
        /// The store's current revision.
        current: u64,
    },
    /// A compare-and-set write found the key at another revision.
    #[error("key changed concurrently (expected {expected:?}, found {found:?})")]
    Conflict {
        /// What the writer expected (`None`: absent).
        expected: Option<u64>,
        /// What the store holds (`None`: absent).
        found: Option<u64>,
    },
}

impl From<MvccError> for KvError {
    fn from(e: MvccError) -> Self {
        match e {
            MvccError::Backend(m) => KvError::Backend(m),
            MvccError::Corrupt(m) => KvError::Corrupt(m),
            MvccError::Compacted {
                requested,
                compacted,
            } => KvError::Compacted {
                requested,
                compacted,
            },
            MvccError::FutureRevision { requested, current } => {
                KvError::FutureRevision { requested, current }
            }
            // The seam reports a failed compare as a response, never as an
            // error; reaching here is a bug in this crate.
            conflict @ MvccError::Conflict { .. } => KvError::Backend(conflict.to_string()),
        }
    }
}
