//! The watch cache (kube-apiserver's cacher): for each resource, the
//! current objects and a bounded ring of recent changes, kept in step with
//! the store's change stream, serving lists and watches
//! ([`WatchCacheApi`]).
//!
//! - A resource's cache is built on first use: one list from the store,
//!   then a follower task on the store's change stream from that revision.
//!   The store's progress events advance the cache's revision when other
//!   resources are written, so a consistent read (KEP-2340) only waits
//!   until the cache has seen the store's current revision.
//! - Each object version is encoded once per format ([`object`]: JSON up
//!   front, others memoized on first use) and shared by the current state,
//!   the history, every watcher and every list.
//! - Lists cut a page of shared objects under the lock, then stream the
//!   items. Exact revisions inside the history are rebuilt from it; older
//!   ones, and consistent reads the cache cannot catch up with in 3 s, are
//!   read from the store.
//! - The history is bounded by a count and a byte size of object JSON
//!   per resource ([`WatchCacheConfig`]).
//! - Watches replay the history after their revision, then follow a
//!   bounded broadcast channel; a watcher that overflows it is closed.
//!   A revision older than the history is served from the store's stream.
#![forbid(unsafe_code)]

mod list;
mod object;
mod resource;
mod watchers;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use keelson_api::{
    CacheEventStream, CacheList, CacheListRequest, CacheWatchRequest, StoreApi, WatchCacheApi,
};
use keelson_apimachinery::{ApiResult, GroupResource};
use tokio::sync::OnceCell;
use tokio::task::JoinHandle;

use resource::{Limits, ResourceCache};

/// Sizes of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchCacheConfig {
    /// Changes kept per resource for watches that resume from an older
    /// revision and for exact-revision lists (continue tokens).
    pub history: usize,
    /// ... and at most this many bytes of object JSON; the oldest changes
    /// go first when either bound is reached.
    pub history_bytes: usize,
    /// How far (in events) a watcher may fall behind the newest change
    /// before it is closed.
    pub watcher_buffer: usize,
}

impl Default for WatchCacheConfig {
    fn default() -> Self {
        WatchCacheConfig {
            history: 10_000,
            history_bytes: 64 * 1024 * 1024,
            watcher_buffer: 1_024,
        }
    }
}

/// What the cache holds, for metrics and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Resources with a cache.
    pub resources: usize,
    /// Current objects.
    pub objects: usize,
    /// The current objects' JSON, in bytes.
    pub json_bytes: usize,
    /// Changes in the history rings.
    pub history: usize,
}

type Slot = Arc<OnceCell<Arc<ResourceCache>>>;

/// The watch cache over a store.
pub struct LocalWatchCache {
    store: Arc<dyn StoreApi>,
    limits: Limits,
    resources: Mutex<HashMap<GroupResource, Slot>>,
    followers: Mutex<Vec<JoinHandle<()>>>,
}

impl LocalWatchCache {
    /// A cache over `store`; resource caches are built on first use.
    pub fn new(store: Arc<dyn StoreApi>, config: WatchCacheConfig) -> Self {
        LocalWatchCache {
            store,
            limits: Limits {
                history: config.history,
                history_bytes: config.history_bytes,
                watcher_buffer: config.watcher_buffer,
            },
            resources: Mutex::new(HashMap::new()),
            followers: Mutex::new(Vec::new()),
        }
    }

    /// The cache of `gr`, built (listed and followed) on first use.
    async fn resource(&self, gr: &GroupResource) -> ApiResult<Arc<ResourceCache>> {
        let slot = {
            let mut map = self.resources.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(gr.clone()).or_default().clone()
        };
        slot.get_or_try_init(|| async {
            let rc = ResourceCache::load(&self.store, gr, self.limits).await?;
            let task = tokio::spawn(rc.clone().follow(self.store.clone()));
            self.followers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(task);
            Ok(rc)
        })
        .await
        .cloned()
    }

    /// What the cache holds now.
    pub fn stats(&self) -> CacheStats {
        let caches: Vec<Arc<ResourceCache>> = self
            .resources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter_map(|s| s.get().cloned())
            .collect();
        let mut stats = CacheStats {
            resources: caches.len(),
            ..Default::default()
        };
        for rc in caches {
            let st = rc.lock();
            stats.objects += st.objects.len();
            stats.json_bytes += st.objects.values().map(|o| o.json_len()).sum::<usize>();
            stats.history += st.history.len();
        }
        stats
    }
}

impl Drop for LocalWatchCache {
    fn drop(&mut self) {
        for t in self
            .followers
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            t.abort();
        }
    }
}

#[async_trait]
impl WatchCacheApi for LocalWatchCache {
    async fn list(&self, req: CacheListRequest) -> ApiResult<CacheList> {
        let rc = self.resource(&req.gr).await?;
        list::list(&self.store, &rc, req).await
    }

    async fn watch(&self, req: CacheWatchRequest) -> ApiResult<CacheEventStream> {
        let rc = self.resource(&req.gr).await?;
        watchers::watch(&self.store, rc, req).await
    }

    async fn ready(&self) -> ApiResult<()> {
        self.store.ready().await
    }
}
