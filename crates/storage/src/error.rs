//! The crate's error type.

use keelson_apimachinery::ApiError;

/// Anything the storage layers can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The backend (sled, etcd, the filesystem) failed.
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
    /// An object key cannot be stored (contains `/` or NUL, or is empty).
    #[error("invalid object key: {0}")]
    InvalidKey(String),
}

impl From<StorageError> for ApiError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::InvalidKey(msg) => ApiError::bad_request(msg),
            other => ApiError::internal(other),
        }
    }
}
