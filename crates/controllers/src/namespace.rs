//! The namespace controller: when a namespace is deleted (or marked for
//! deletion), delete every namespaced object in it.
//!
//! It follows `StoreApi::watch` on namespaces. Every (re)start first lists
//! the namespaces and purges the objects of any namespace that is gone or
//! terminating — deletions missed while it was down or disconnected — then
//! watches from that list's revision, so no deletion falls between the two.
//! A purge never touches a namespace that exists again under the same name
//! (see [`purge`]). The Terminating phase arrives with the deletion issue;
//! until then a namespace is removed at once and its contents right after.

mod purge;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use keelson_api::{ApiResult, EventType, GroupResource, StoreApi};
use keelson_apimachinery::meta::meta_str;
use serde_json::Value;

pub use purge::{namespace_gone, purge};

/// How long the controller waits before re-syncing after the store failed
/// or its change stream ended.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The namespace controller.
pub struct NamespaceController {
    store: Arc<dyn StoreApi>,
    resources: Vec<GroupResource>,
    synced: tokio::sync::watch::Sender<bool>,
}

impl NamespaceController {
    /// A controller over every namespaced resource of the catalog.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        NamespaceController {
            store,
            resources: namespaced_resources(),
            synced: tokio::sync::watch::channel(false).0,
        }
    }

    /// Whether the controller has caught up with the store and is following
    /// its change stream (false while it (re)syncs or the store is down).
    pub fn synced(&self) -> tokio::sync::watch::Receiver<bool> {
        self.synced.subscribe()
    }

    /// Run until `shutdown` completes, re-syncing after every failure.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                res = self.sync_and_follow() => {
                    self.synced.send_replace(false);
                    match res {
                        Ok(()) => tracing::info!("namespace watch ended; re-syncing"),
                        Err(e) => tracing::warn!(error = %e.message, "namespace controller: re-syncing"),
                    }
                }
            }
            tokio::select! {
                () = &mut shutdown => break,
                () = tokio::time::sleep(RETRY_AFTER) => {}
            }
        }
        tracing::info!("namespace controller stopped");
    }

    /// Purge every namespace that is gone or terminating, then follow the
    /// namespaces' change stream until it ends.
    async fn sync_and_follow(&self) -> ApiResult<()> {
        let after = self.resync().await?;
        let mut changes = self.store.watch(&namespaces(), None, after).await?;
        self.synced.send_replace(true);
        while let Some(change) = changes.next().await {
            let change = change?;
            let purge_it = match change.event_type {
                EventType::Deleted => true,
                EventType::Added | EventType::Modified => terminating(&change.object),
                EventType::Bookmark | EventType::Error => false,
            };
            if purge_it {
                self.purge(meta_str(&change.object, "name")).await?;
            }
        }
        Ok(())
    }

    /// The start-up pass: purge the objects of every namespace that is gone
    /// or terminating; returns the revision the namespaces were listed at.
    async fn resync(&self) -> ApiResult<u64> {
        let listed = self.store.list(&namespaces(), None).await?;
        let live: BTreeSet<&str> = listed
            .items
            .iter()
            .filter(|ns| !terminating(ns))
            .map(|ns| meta_str(ns, "name"))
            .collect();
        let mut orphaned = BTreeSet::new();
        for gr in &self.resources {
            let mut items = self.store.list_stream(gr, None).await?.items;
            while let Some(item) = items.next().await {
                let ns = meta_str(&item?, "namespace").to_string();
                if !ns.is_empty() && !live.contains(ns.as_str()) {
                    orphaned.insert(ns);
                }
            }
        }
        for ns in &orphaned {
            self.purge(ns).await?;
        }
        Ok(listed.resource_version)
    }

    async fn purge(&self, ns: &str) -> ApiResult<()> {
        let deleted = purge(self.store.as_ref(), &self.resources, ns).await?;
        if deleted > 0 {
            tracing::info!(namespace = ns, deleted, "purged a deleted namespace");
        }
        Ok(())
    }
}

/// Every namespaced resource of the catalog, once each.
pub fn namespaced_resources() -> Vec<GroupResource> {
    let mut out: Vec<GroupResource> = Vec::new();
    // The built-in resources; resources added at runtime join once the
    // controller reads the live catalog.
    for info in keelson_registry::CatalogSnapshot::builtin().resources() {
        if info.namespaced && !out.contains(&info.gr()) {
            out.push(info.gr());
        }
    }
    out
}

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
}

/// Whether a namespace is marked for deletion.
fn terminating(ns: &Value) -> bool {
    !meta_str(ns, "deletionTimestamp").is_empty()
}
