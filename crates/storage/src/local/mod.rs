//! [`LocalStore`]: the [`StoreApi`] implementation over any
//! [`RevisionedKv`], following kube-apiserver's generic registry
//! (`registry/generic/registry/store.go`).

mod bootstrap;
mod change_stream;
mod corrupt;
mod delete;
pub mod object;
mod update;

use std::path::Path;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use keelson_api::{
    ChangeStream, CreateOptions, DeleteOptions, DeleteOutcome, ListResult, StoreApi, UpdateOptions,
};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey, StatusReason};
use keelson_kv::{
    Compare, KeyValue, KvError, RangeRequest, RangeResponse, RevisionedKv, TxnOp, TxnRequest,
    TxnResponse,
};
use keelson_kv_sled::SledKv;
use object::set_resource_version;
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::config::StoreConfig;
use crate::error::{kv_error, StorageError};

pub use bootstrap::{namespace_object, SYSTEM_NAMESPACES};
use update::{Decision, Updated};

/// Attempts for a generated name before giving up (kube: 8).
const GENERATE_NAME_ATTEMPTS: usize = 8;

/// The local store. Cheap to clone (shared state inside).
#[derive(Clone)]
pub struct LocalStore {
    inner: Arc<Inner>,
}

struct Inner {
    kv: Arc<dyn RevisionedKv>,
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

impl LocalStore {
    /// Open (or create) the store on sled in `dir`, create the system
    /// namespaces when absent and start the background compactor. Must run
    /// inside a tokio runtime.
    pub async fn open(dir: &Path, config: StoreConfig) -> Result<LocalStore, StorageError> {
        let kv = SledKv::open(dir, config.cache_capacity).await?;
        LocalStore::with_kv(Arc::new(kv), config).await
    }

    /// The store over any key/value store: create the system namespaces
    /// when absent and start the background compactor (`cache_capacity` is
    /// not used). Must run inside a tokio runtime.
    pub async fn with_kv(
        kv: Arc<dyn RevisionedKv>,
        config: StoreConfig,
    ) -> Result<LocalStore, StorageError> {
        let store = LocalStore {
            inner: Arc::new(Inner {
                kv,
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

    /// The key/value store underneath (revisioned reads, compaction).
    pub fn kv(&self) -> &Arc<dyn RevisionedKv> {
        &self.inner.kv
    }

    /// The configuration the store was opened with.
    pub fn config(&self) -> &StoreConfig {
        &self.inner.config
    }

    /// Run a compaction now with the configured retention; returns the
    /// compacted revision.
    pub async fn compact_now(&self) -> Result<u64, StorageError> {
        Ok(compact_retention(&self.inner).await?)
    }

    /// Decode a stored value into an object, stamped with its mod revision,
    /// with the store's [`crate::ValueCodec`].
    pub fn decode(&self, kv: &KeyValue) -> ApiResult<Value> {
        self.codec().decode_kv(kv)
    }

    /// How this store encodes object values.
    pub(crate) fn codec(&self) -> crate::ValueCodec {
        self.inner.config.value_codec
    }

    async fn create_object(
        &self,
        key: &ObjectKey,
        mut obj: Value,
        opts: &CreateOptions,
    ) -> ApiResult<Value> {
        object::require_object(&obj)?;
        let codec = self.codec();
        let fixed = !key.name.is_empty();
        let base = meta_str(&obj, "generateName").to_string();
        if !fixed && base.is_empty() {
            return Err(ApiError::bad_request("name or generateName is required"));
        }
        let attempts = if fixed { 1 } else { GENERATE_NAME_ATTEMPTS };
        let mut name = key.name.clone();
        for _ in 0..attempts {
            if !fixed {
                name = keelson_apimachinery::generate_name::generate_name(&base);
            }
            let k = ObjectKey::new(key.gr.clone(), &key.namespace, &name);
            let ek = self.inner.config.key_layout.object_key(&k)?;
            object::prepare_create(&mut obj, key, &name, opts.track_generation);
            if opts.dry_run {
                if self.read_key(&ek).await?.is_some() {
                    continue;
                }
                object::remove_meta(&mut obj, "resourceVersion");
                return Ok(obj);
            }
            // Create-if-absent: a compare on mod revision 0. The version
            // is set below (or by the next attempt's encode).
            let request = TxnRequest {
                key: ek,
                compare: Compare::ModRevision(0),
                on_success: TxnOp::Put(codec.encode_in_place(&mut obj)?),
            };
            match self.inner.kv.txn(request).await.map_err(kv_error)? {
                TxnResponse::Succeeded { revision, .. } => {
                    set_resource_version(&mut obj, &revision.to_string());
                    return Ok(obj);
                }
                TxnResponse::Failed { .. } => continue,
            }
        }
        Err(ApiError::already_exists(&key.gr, &name))
    }

    /// kube's create failure for a taken name: `CheckGeneratedNameError`
    /// (an object with `generateName` gets the generate-name conflict, as
    /// kube words it even when the name was given), then `object is being
    /// deleted: ` before the message when the holder is being deleted.
    async fn already_exists(&self, key: &ObjectKey, name: &str, generate_name: &str) -> ApiError {
        let mut err = if generate_name.is_empty() {
            ApiError::already_exists(&key.gr, name)
        } else {
            ApiError::generate_name_conflict(&key.gr, name)
        };
        let holder = ObjectKey::new(key.gr.clone(), &key.namespace, name);
        if let Ok(existing) = self.get(&holder).await {
            if existing
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|t| !t.is_null())
            {
                err.message = format!("object is being deleted: {}", err.message);
            }
        }
        err
    }

    async fn update_object(
        &self,
        key: &ObjectKey,
        obj: Value,
        opts: &UpdateOptions,
    ) -> ApiResult<Value> {
        object::require_object(&obj)?;
        let codec = self.codec();
        let updated = self
            .guaranteed_update(key, |current| {
                let Some(current) = current else {
                    if !opts.create_if_missing {
                        return Err(ApiError::not_found(&key.gr, &key.name));
                    }
                    // An update-create ignores the resourceVersion in the body.
                    let mut new = obj.clone();
                    object::remove_meta(&mut new, "uid");
                    object::prepare_create(&mut new, key, &key.name, opts.track_generation);
                    if opts.dry_run {
                        object::remove_meta(&mut new, "resourceVersion");
                        return Ok(Decision::Done(new));
                    }
                    let bytes = codec.encode_in_place(&mut new)?;
                    return Ok(Decision::Put(bytes, new));
                };
                let stored = codec.decode_kv(current)?;
                // No resourceVersion, or `0` (kube's versioner reads both
                // as 0), is an unconditional update; the gateway refuses it
                // for kinds whose strategy does not allow one.
                let rv = meta_str(&obj, "resourceVersion");
                let unconditional = rv.is_empty() || object::parse_rv(rv) == Some(0);
                if !unconditional && rv != current.mod_revision.to_string() {
                    return Err(ApiError::optimistic_lock(&key.gr, &key.name));
                }
                let mut new = obj.clone();
                object::prepare_update(&mut new, &stored, key, opts.track_generation);
                if object::is_noop(&new, &stored) {
                    return Ok(Decision::Done(stored));
                }
                if object::should_delete_during_update(&new, &stored) {
                    if opts.dry_run {
                        return Ok(Decision::Done(stored));
                    }
                    return Ok(Decision::Delete);
                }
                if opts.dry_run {
                    set_resource_version(&mut new, &current.mod_revision.to_string());
                    return Ok(Decision::Done(new));
                }
                let bytes = codec.encode_in_place(&mut new)?;
                Ok(Decision::Put(bytes, new))
            })
            .await?;
        match updated {
            Updated::Done(obj) => Ok(obj),
            Updated::Put {
                revision,
                state: mut new,
            } => {
                set_resource_version(&mut new, &revision.to_string());
                Ok(new)
            }
            Updated::Deleted { revision, last } => {
                self.codec().decode(&last.key, &last.value, revision)
            }
        }
    }

    /// Every live object under a prefix, at the current revision or `at`.
    async fn range(&self, prefix: Vec<u8>, at: Option<u64>) -> Result<RangeResponse, KvError> {
        let mut request = RangeRequest::prefix(prefix);
        request.revision = at;
        self.inner.kv.range(request).await
    }
}

/// Compact to the newest revision older than the retention window (when
/// the key/value store knows write times; otherwise leave it as is).
async fn compact_retention(inner: &Inner) -> Result<u64, KvError> {
    match inner.kv.revision_older_than(inner.config.retention).await? {
        Some(target) => inner.kv.compact(target).await,
        None => inner.kv.compacted_revision().await,
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
        if let Err(e) = compact_retention(&strong).await {
            tracing::warn!(error = %e, "compaction failed");
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
        let generate_name = meta_str(&object, "generateName").to_string();
        match self.create_object(key, object, &opts).await {
            Err(e) if e.is_already_exists() => {
                let name = if key.name.is_empty() {
                    e.details.map(|d| d.name).unwrap_or_default()
                } else {
                    key.name.clone()
                };
                Err(self.already_exists(key, &name, &generate_name).await)
            }
            other => other,
        }
    }

    async fn get(&self, key: &ObjectKey) -> ApiResult<Value> {
        let ek = self.inner.config.key_layout.object_key(key)?;
        match self.read_key(&ek).await? {
            Some(kv) => self.codec().decode_kv(&kv),
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
        let prefix = self.inner.config.key_layout.prefix(gr, namespace)?;
        let codec = self.codec();
        let read = self.range(prefix, None).await.map_err(kv_error)?;
        let items = corrupt::decode_all(codec, gr, &read.kvs)?;
        Ok(ListResult {
            items,
            resource_version: read.revision,
        })
    }

    async fn list_stream(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> ApiResult<keelson_api::ListStream> {
        let prefix = self.inner.config.key_layout.prefix(gr, namespace)?;
        let codec = self.codec();
        // The snapshot's stored bytes are read at once; each object is
        // decoded only when the reader gets to it.
        let read = self.range(prefix, None).await.map_err(kv_error)?;
        Ok(keelson_api::ListStream {
            resource_version: read.revision,
            items: corrupt::decode_stream(codec, gr.clone(), read.kvs),
        })
    }

    async fn list_at(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        revision: u64,
    ) -> ApiResult<ListResult> {
        let prefix = self.inner.config.key_layout.prefix(gr, namespace)?;
        let codec = self.codec();
        let read = match self.range(prefix, Some(revision)).await {
            Ok(read) => read,
            Err(KvError::Compacted { .. }) => {
                return Err(ApiError::new(
                    410,
                    StatusReason::Expired,
                    "The resourceVersion for the provided list is too old.",
                ))
            }
            Err(KvError::FutureRevision { requested, current }) => {
                return Err(ApiError::too_large_resource_version(requested, current))
            }
            Err(e) => return Err(kv_error(e)),
        };
        let items = corrupt::decode_all(codec, gr, &read.kvs)?;
        Ok(ListResult {
            items,
            resource_version: revision,
        })
    }

    async fn current_revision(&self) -> ApiResult<u64> {
        self.inner.kv.current_revision().await.map_err(kv_error)
    }

    async fn compacted_revision(&self) -> ApiResult<u64> {
        self.inner.kv.compacted_revision().await.map_err(kv_error)
    }

    /// Ready while the key/value store answers a read (for etcd, kube's
    /// `etcd` health check).
    async fn ready(&self) -> ApiResult<()> {
        self.inner
            .kv
            .current_revision()
            .await
            .map(|_| ())
            .map_err(kv_error)
    }

    async fn watch(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        self.watch_changes(gr, namespace, after_revision).await
    }
}
