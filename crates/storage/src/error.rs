//! The crate's error type.

use keelson_apimachinery::{ApiError, StatusReason};
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
            StorageError::Kv(KvError::Unavailable(msg)) => storage_timeout(&msg),
            other => ApiError::internal(other),
        }
    }
}

/// Storage that does not answer (etcd down): kube-apiserver's answer when
/// a request's deadline passes while it waits on etcd (`finishRequest`'s
/// `504 Timeout`), given here as soon as the etcd client gives up.
pub fn storage_timeout(cause: &str) -> ApiError {
    tracing::warn!(cause, "storage unavailable");
    let mut e = ApiError::new(
        504,
        StatusReason::Timeout,
        "Timeout: request did not complete within requested timeout - context deadline exceeded",
    );
    e.details = Some(Box::default());
    e
}

/// A key/value error as a Kubernetes Status: a 500 (a 504 when the store
/// cannot be reached). The cases a caller can
/// expect (compaction, future revisions) are mapped where they arise, with
/// kube's wording for that call.
pub(crate) fn kv_error(e: KvError) -> ApiError {
    StorageError::Kv(e).into()
}
