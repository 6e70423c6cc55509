//! kube's `GuaranteedUpdate` (`storage/etcd3/store.go`): read the key, let
//! a closure decide the new state from the current one, write it with a
//! compare on the mod revision that was read, and when the compare fails
//! retry from the current kv the failed transaction returned. Every
//! read-modify-write of an object (update, delete, finalizer and graceful
//! marks) goes through here.

use keelson_apimachinery::{ApiError, ApiResult, ObjectKey};
use keelson_kv::{Compare, KeyValue, TxnOp, TxnRequest, TxnResponse};

use crate::error::kv_error;

use super::LocalStore;

/// Compare failures of one update before reporting a conflict.
const ATTEMPTS: usize = 100;

/// What an update closure decided, given the key's current value.
pub(crate) enum Decision<R, S> {
    /// Write nothing; the call answers `R`.
    Done(R),
    /// Put these bytes; `S` is the new state, finished with the revision.
    Put(Vec<u8>, S),
    /// Delete the key (only when it exists).
    Delete,
}

/// What [`LocalStore::guaranteed_update`] did.
pub(crate) enum Updated<R, S> {
    /// Nothing was written.
    Done(R),
    /// The put is durable at `revision`.
    Put {
        /// The write's revision.
        revision: u64,
        /// The state the closure wrote.
        state: S,
    },
    /// The delete is durable at `revision`; `last` is the deleted state.
    Deleted {
        /// The delete's revision.
        revision: u64,
        /// The key's value before the delete.
        last: KeyValue,
    },
}

impl LocalStore {
    /// The current value of one key.
    pub(crate) async fn read_key(&self, key: &[u8]) -> ApiResult<Option<KeyValue>> {
        let mut read = self
            .inner
            .kv
            .range(keelson_kv::RangeRequest::key(key))
            .await
            .map_err(kv_error)?;
        Ok(read.kvs.pop())
    }

    /// Apply `try_update` to the object at `key` until its write lands on
    /// the state it was computed from; `409 Conflict` after 100 lost races.
    pub(crate) async fn guaranteed_update<R, S>(
        &self,
        key: &ObjectKey,
        mut try_update: impl FnMut(Option<&KeyValue>) -> ApiResult<Decision<R, S>>,
    ) -> ApiResult<Updated<R, S>> {
        let ek = self.inner.config.key_layout.object_key(key)?;
        let mut current = self.read_key(&ek).await?;
        for _ in 0..ATTEMPTS {
            let (op, state) = match try_update(current.as_ref())? {
                Decision::Done(r) => return Ok(Updated::Done(r)),
                Decision::Put(bytes, s) => (TxnOp::Put(bytes), Some(s)),
                Decision::Delete => (TxnOp::Delete, None),
            };
            let request = TxnRequest {
                key: ek.clone(),
                compare: Compare::ModRevision(current.as_ref().map_or(0, |kv| kv.mod_revision)),
                on_success: op,
            };
            match self.inner.kv.txn(request).await.map_err(kv_error)? {
                TxnResponse::Succeeded { revision, prev_kv } => {
                    return match (state, prev_kv) {
                        (Some(state), _) => Ok(Updated::Put { revision, state }),
                        (None, Some(last)) => Ok(Updated::Deleted { revision, last }),
                        (None, None) => Err(ApiError::internal(format!(
                            "delete of {} found nothing to delete",
                            key.name
                        ))),
                    };
                }
                TxnResponse::Failed { current: now } => current = now,
            }
        }
        Err(ApiError::optimistic_lock(&key.gr, &key.name))
    }
}
