//! The crate's error type.

use keelson_apimachinery::ApiError;
use keelson_kv::KvError;

/// Anything the store can fail with outside a `StoreApi` call.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The key/value store failed.
    #[error(transparent)]
    Kv(#[from] KvError),
    /// Opening the store failed (e.g. creating the system namespaces).
    #[error("storage backend error: {0}")]
    Backend(String),
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

/// A key/value error as a Kubernetes Status: a 500. The cases a caller can
/// expect (compaction, future revisions) are mapped where they arise, with
/// kube's wording for that call.
pub(crate) fn kv_error(e: KvError) -> ApiError {
    StorageError::Kv(e).into()
}
