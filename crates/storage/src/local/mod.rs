//! [`LocalStore`]: the [`StoreApi`] implementation over [`Mvcc`] on sled,
//! following kube-apiserver's generic registry (`registry/store.go`).

mod bootstrap;
pub mod names;
pub mod object;
mod watch;

use std::path::Path;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use keelson_api::{
    ChangeStream, CreateOptions, DeleteOptions, DeleteOutcome, ListResult, StoreApi, UpdateOptions,
};
use keelson_apimachinery::meta::{meta_str, set_meta_str};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey, StatusReason};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::config::StoreConfig;
use crate::engine::Engine;
use crate::error::StorageError;
use crate::keys;
use crate::mvcc::{Expect, Mvcc, Versioned};
use crate::sled_engine::SledEngine;

pub use bootstrap::{namespace_object, SYSTEM_NAMESPACES};
use object::Graceful;

/// Attempts for a generated name before giving up (kube: 8).
const GENERATE_NAME_ATTEMPTS: usize = 8;
/// Compare-and-set retries of one update/delete before reporting a conflict.
const CAS_ATTEMPTS: usize = 100;

/// The local store. Cheap to clone (shared state inside).
#[derive(Clone)]
pub struct LocalStore {
    inner: Arc<Inner>,
}

struct Inner {
    mvcc: Mvcc,
    config: StoreConfig,
    compactor: std::sync::Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Ok(mut h) = self.compactor.lock() {
            if let Some(h) = h.take() {
                h.abort();
            }
        }
    }
}

fn is_conflict(e: &StorageError) -> bool {
    matches!(e, StorageError::Conflict { .. })
}

impl LocalStore {
    /// Open (or create) the store in `dir`, create the system namespaces
    /// when absent and start the background compactor. Must run inside a
    /// tokio runtime.
    pub async fn open(dir: &Path, config: StoreConfig) -> Result<LocalStore, StorageError> {
        let dir = dir.to_path_buf();
        let cache = config.cache_capacity;
        let mvcc = tokio::task::spawn_blocking(move || {
            let engine: Arc<dyn Engine> = Arc::new(SledEngine::open(&dir, cache)?);
            Mvcc::open(engine)
        })
        .await
        .map_err(|e| StorageError::Backend(format!("open task failed: {e}")))??;
        let store = LocalStore {
            inner: Arc::new(Inner {
                mvcc,
                config,
                compactor: std::sync::Mutex::new(None),
            }),
        };
        if store.inner.config.bootstrap_namespaces {
            bootstrap::ensure_system_namespaces(&store)
                .await
                .map_err(|e| StorageError::Backend(e.message))?;
        }
        if let Some(every) = store.inner.config.compaction_interval {
            let handle = tokio::spawn(compactor(Arc::downgrade(&store.inner), every));
            if let Ok(mut slot) = store.inner.compactor.lock() {
                *slot = Some(handle);
            }
        }
        Ok(store)
    }

    /// The MVCC layer (revisioned reads, change stream) for watch and
    /// paginated lists.
    pub fn mvcc(&self) -> &Mvcc {
        &self.inner.mvcc
    }

    /// The configuration the store was opened with.
    pub fn config(&self) -> &StoreConfig {
        &self.inner.config
    }

    /// Run a compaction now with the configured retention; returns the
    /// compacted revision.
    pub async fn compact_now(&self) -> Result<u64, StorageError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || inner.mvcc.compact_retention(inner.config.retention))
            .await
            .map_err(|e| StorageError::Backend(format!("compaction task failed: {e}")))?
    }

    /// Decode a stored version into an object.
    pub fn decode(v: &Versioned) -> ApiResult<Value> {
        object::decode(v)
    }

    async fn create_object(
        &self,
        key: &ObjectKey,
        mut obj: Value,
        opts: &CreateOptions,
    ) -> ApiResult<Value> {
        object::require_object(&obj)?;
        let fixed = !key.name.is_empty();
        let base = meta_str(&obj, "generateName").to_string();
        if !fixed && base.is_empty() {
            return Err(ApiError::bad_request("name or generateName is required"));
        }
        let attempts = if fixed { 1 } else { GENERATE_NAME_ATTEMPTS };
        let mut name = key.name.clone();
        for _ in 0..attempts {
            if !fixed {
                name = names::generate_name(&base);
            }
            let k = ObjectKey::new(key.gr.clone(), &key.namespace, &name);
            let ek = keys::object_key(&k)?;
            object::prepare_create(&mut obj, key, &name, opts.track_generation);
            if opts.dry_run {
                if self.inner.mvcc.latest_live(&ek)?.is_some() {
                    continue;
                }
                object::remove_meta(&mut obj, "resourceVersion");
                return Ok(obj);
            }
            match self
                .inner
                .mvcc
                .put(&ek, &object::encode(&obj)?, Expect::Absent)
                .await
            {
                Ok(rev) => {
                    set_meta_str(&mut obj, "resourceVersion", &rev.to_string());
                    return Ok(obj);
                }
                Err(e) if is_conflict(&e) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ApiError::already_exists(&key.gr, &name))
    }

    async fn update_object(
        &self,
        key: &ObjectKey,
        obj: Value,
        opts: &UpdateOptions,
    ) -> ApiResult<Value> {
        object::require_object(&obj)?;
        let ek = keys::object_key(key)?;
        for _ in 0..CAS_ATTEMPTS {
            let Some(current) = self.inner.mvcc.latest_live(&ek)? else {
                if !opts.create_if_missing {
                    return Err(ApiError::not_found(&key.gr, &key.name));
                }
                let copts = CreateOptions {
                    dry_run: opts.dry_run,
                    track_generation: opts.track_generation,
                };
                // An update-create ignores the resourceVersion in the body.
                match self.create_object(key, obj.clone(), &copts).await {
                    Err(e) if e.is_already_exists() => continue,
                    other => return other,
                }
            };
            let stored = object::decode(&current)?;
            let rv = meta_str(&obj, "resourceVersion");
            if !rv.is_empty() && rv != current.revision.to_string() {
                return Err(ApiError::optimistic_lock(&key.gr, &key.name));
            }
            let mut new = obj.clone();
            object::prepare_update(&mut new, &stored, key, opts.track_generation);
            if object::is_noop(&new, &stored) {
                return Ok(stored);
            }
            if object::should_delete_during_update(&new, &stored) {
                if opts.dry_run {
                    return Ok(stored);
                }
                match self
                    .inner
                    .mvcc
                    .delete(&ek, Expect::Revision(current.revision))
                    .await
                {
                    Ok(last) => return object::decode(&last),
                    Err(e) if is_conflict(&e) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            if opts.dry_run {
                set_meta_str(&mut new, "resourceVersion", &current.revision.to_string());
                return Ok(new);
            }
            let bytes = object::encode(&new)?;
            match self
                .inner
                .mvcc
                .put(&ek, &bytes, Expect::Revision(current.revision))
                .await
            {
                Ok(rev) => {
                    set_meta_str(&mut new, "resourceVersion", &rev.to_string());
                    return Ok(new);
                }
                Err(e) if is_conflict(&e) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ApiError::optimistic_lock(&key.gr, &key.name))
    }

    async fn delete_object(
        &self,
        key: &ObjectKey,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        let ek = keys::object_key(key)?;
        for _ in 0..CAS_ATTEMPTS {
            let Some(current) = self.inner.mvcc.latest_live(&ek)? else {
                return Err(ApiError::not_found(&key.gr, &key.name));
            };
            let stored = object::decode(&current)?;
            object::check_preconditions(
                key,
                &stored,
                opts.precondition_uid.as_deref(),
                opts.precondition_resource_version.as_deref(),
            )?;
            let now = chrono::Utc::now();
            let mut marked = stored.clone();
            let graceful = object::before_delete(&mut marked, opts.grace_period_seconds, now);
            let keep = match graceful {
                Graceful::Pending => return Ok(DeleteOutcome::Marked(stored)),
                _ if object::has_finalizers(&marked) => {
                    if graceful == Graceful::No {
                        object::mark_as_deleting(&mut marked, now);
                    }
                    true
                }
                Graceful::Yes(n) => n > 0,
                Graceful::No => false,
            };
            if keep {
                if opts.dry_run || object::is_noop(&marked, &stored) {
                    return Ok(DeleteOutcome::Marked(if opts.dry_run {
                        marked
                    } else {
                        stored
                    }));
                }
                let bytes = object::encode(&marked)?;
                match self
                    .inner
                    .mvcc
                    .put(&ek, &bytes, Expect::Revision(current.revision))
                    .await
                {
                    Ok(rev) => {
                        set_meta_str(&mut marked, "resourceVersion", &rev.to_string());
                        return Ok(DeleteOutcome::Marked(marked));
                    }
                    Err(e) if is_conflict(&e) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            if opts.dry_run {
                return Ok(DeleteOutcome::Deleted(stored));
            }
            match self
                .inner
                .mvcc
                .delete(&ek, Expect::Revision(current.revision))
                .await
            {
                Ok(last) => return Ok(DeleteOutcome::Deleted(object::decode(&last)?)),
                Err(e) if is_conflict(&e) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ApiError::optimistic_lock(&key.gr, &key.name))
    }
}

/// Compact every `every` until the store is dropped.
async fn compactor(inner: Weak<Inner>, every: std::time::Duration) {
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let result = tokio::task::spawn_blocking(move || {
            strong.mvcc.compact_retention(strong.config.retention)
        })
        .await;
        match result {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "compaction failed"),
            Err(e) => tracing::warn!(error = %e, "compaction task failed"),
        }
    }
}

#[async_trait]
impl StoreApi for LocalStore {
    async fn create(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: CreateOptions,
    ) -> ApiResult<Value> {
        if object::parse_rv(meta_str(&object, "resourceVersion")).is_some_and(|rv| rv != 0) {
            return Err(ApiError::new(500, "", object::RV_SET_ON_CREATE));
        }
        match self.create_object(key, object, &opts).await {
            Err(e) if e.is_already_exists() && !key.name.is_empty() => {
                Err(ApiError::already_exists(&key.gr, &key.name))
            }
            other => other,
        }
    }

    async fn get(&self, key: &ObjectKey) -> ApiResult<Value> {
        let ek = keys::object_key(key)?;
        match self.inner.mvcc.get(&ek)? {
            Some(v) => object::decode(&v),
            None => Err(ApiError::not_found(&key.gr, &key.name)),
        }
    }

    async fn update(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: UpdateOptions,
    ) -> ApiResult<Value> {
        self.update_object(key, object, &opts).await
    }

    async fn delete(&self, key: &ObjectKey, opts: DeleteOptions) -> ApiResult<DeleteOutcome> {
        self.delete_object(key, &opts).await
    }

    async fn list(&self, gr: &GroupResource, namespace: Option<&str>) -> ApiResult<ListResult> {
        let prefix = keys::prefix(gr, namespace)?;
        let (versions, rev) = self.inner.mvcc.list(&prefix)?;
        let items = versions
            .iter()
            .map(object::decode)
            .collect::<ApiResult<Vec<_>>>()?;
        Ok(ListResult {
            items,
            resource_version: rev,
        })
    }

    async fn list_stream(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> ApiResult<keelson_api::ListStream> {
        use futures::StreamExt as _;
        let prefix = keys::prefix(gr, namespace)?;
        // The snapshot's stored bytes are read at once; each object is
        // decoded only when the reader gets to it.
        let (versions, rev) = self.inner.mvcc.list(&prefix)?;
        Ok(keelson_api::ListStream {
            resource_version: rev,
            items: futures::stream::iter(versions.into_iter().map(|v| object::decode(&v))).boxed(),
        })
    }

    async fn list_at(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        revision: u64,
    ) -> ApiResult<ListResult> {
        let prefix = keys::prefix(gr, namespace)?;
        let versions = match self.inner.mvcc.list_at(&prefix, revision) {
            Ok(v) => v,
            Err(StorageError::Compacted { .. }) => {
                return Err(ApiError::new(
                    410,
                    StatusReason::Expired,
                    "The resourceVersion for the provided list is too old.",
                ))
            }
            Err(StorageError::FutureRevision { requested, current }) => {
                return Err(ApiError::too_large_resource_version(requested, current))
            }
            Err(e) => return Err(e.into()),
        };
        let items = versions
            .iter()
            .map(object::decode)
            .collect::<ApiResult<Vec<_>>>()?;
        Ok(ListResult {
            items,
            resource_version: revision,
        })
    }

    async fn current_revision(&self) -> ApiResult<u64> {
        Ok(self.inner.mvcc.current_revision())
    }

    async fn compacted_revision(&self) -> ApiResult<u64> {
        Ok(self.inner.mvcc.compacted_revision())
    }

    async fn watch(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        self.watch_changes(gr, namespace, after_revision)
    }
}
