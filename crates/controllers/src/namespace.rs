//! The namespace controller (kube-controller-manager's `namespace`
//! controller and its `namespacedResourcesDeleter`).
//!
//! Deleting a namespace only marks it (`deletionTimestamp`, phase
//! `Terminating`, see the store); this controller then deletes every object
//! in it (in the background, so their own finalizers are honoured and
//! waited for), keeps kube's five deletion conditions in `status.conditions`
//! (`NamespaceDeletionDiscoveryFailure`, `NamespaceDeletionGroupVersionParsingFailure`,
//! `NamespaceDeletionContentFailure`, `NamespaceContentRemaining`,
//! `NamespaceFinalizersRemaining`) and, once nothing is left, removes the
//! `kubernetes` finalizer from `spec.finalizers` — the update that deletes
//! the namespace when no other finalizer remains. A terminating namespace
//! with content left is looked at again every [`REQUEUE_AFTER`].
//!
//! It follows the namespaces with a [`keelson_informer::Informer`]. Every
//! listing (at start and after a failure) queues the terminating
//! namespaces and purges the objects of namespaces that are gone (deleted
//! while it was down); changes are watched from that list's revision. A purge never touches a namespace that exists
//! again under the same name (see [`purge`]).

mod conditions;
mod purge;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use keelson_api::{
    ApiResult, DeleteOptions, EventType, GroupResource, ObjectKey, StoreApi, UpdateOptions,
};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::options::PropagationPolicy;
use keelson_informer::{Event, Informer};
use keelson_registry::Catalog;
use serde_json::Value;

pub use purge::{namespace_gone, purge};

/// How long the controller waits before re-syncing after the store failed
/// or its change stream ended.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How often a terminating namespace whose content is not gone yet (held
/// by finalizers) is looked at again.
pub const REQUEUE_AFTER: Duration = Duration::from_millis(500);

/// The finalizer this controller owns in `spec.finalizers`.
pub const FINALIZER: &str = "kubernetes";

/// The namespace controller.
pub struct NamespaceController {
    store: Arc<dyn StoreApi>,
    catalog: Option<Catalog>,
    synced: tokio::sync::watch::Sender<bool>,
}

/// What one pass over a terminating namespace found.
#[derive(Debug, PartialEq, Eq)]
enum Pass {
    /// Finalized, gone, or not terminating.
    Done,
    /// Content or errors remain: look again later.
    Again,
}

impl NamespaceController {
    /// A controller over every namespaced resource of the built-in catalog.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        NamespaceController {
            store,
            catalog: None,
            synced: tokio::sync::watch::channel(false).0,
        }
    }

    /// A controller over every namespaced resource of `catalog` (custom
    /// resources included), read at each pass.
    pub fn with_catalog(store: Arc<dyn StoreApi>, catalog: Catalog) -> Self {
        NamespaceController {
            catalog: Some(catalog),
            ..NamespaceController::new(store)
        }
    }

    /// A controller with its own catalog, kept in step with the stored
    /// CustomResourceDefinitions by a follower task (for a process that
    /// has no catalog of its own: `keelson-controllers`). Must run inside a
    /// tokio runtime.
    pub fn following_crds(store: Arc<dyn StoreApi>) -> Self {
        let catalog = Catalog::builtin();
        keelson_apiextensions::CatalogFollower::spawn(store.clone(), catalog.clone());
        NamespaceController::with_catalog(store, catalog)
    }

    /// Whether the controller has caught up with the store and is following
    /// its change stream (false while it (re)syncs or the store is down).
    pub fn synced(&self) -> tokio::sync::watch::Receiver<bool> {
        self.synced.subscribe()
    }

    /// Run until `shutdown` completes, re-syncing after every failure.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut informer = Informer::new(
            "namespace controller",
            self.store.clone(),
            vec![namespaces()],
        )
        .retry_after(RETRY_AFTER)
        .resync_every(REQUEUE_AFTER)
        .report_synced(self.synced.clone());
        // The terminating namespaces whose content is not gone yet.
        let mut pending = BTreeSet::new();
        let follow = async {
            loop {
                let event = informer.next().await;
                if let Err(e) = self.handle(event, &mut pending).await {
                    informer.failed(&e);
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = follow => {}
        }
        tracing::info!("namespace controller stopped");
    }

    fn resources(&self) -> Vec<GroupResource> {
        match &self.catalog {
            Some(c) => resources_of(c.snapshot().resources()),
            None => namespaced_resources(),
        }
    }

    async fn handle(&self, event: Event, pending: &mut BTreeSet<String>) -> ApiResult<()> {
        match event {
            Event::Listed(listings) => {
                let listed: Vec<Value> = listings.into_iter().flat_map(|l| l.items).collect();
                *pending = self.resync(&listed).await?;
            }
            Event::Changed(_, change) => {
                let name = meta_str(&change.object, "name").to_string();
                match change.event_type {
                    EventType::Deleted => {
                        pending.remove(&name);
                        self.purge(&name).await?;
                    }
                    EventType::Added | EventType::Modified if terminating(&change.object) => {
                        if self.sync_namespace(&name).await? == Pass::Again {
                            pending.insert(name);
                        } else {
                            pending.remove(&name);
                        }
                    }
                    _ => {}
                }
            }
            Event::Resync => {
                let names: Vec<String> = pending.iter().cloned().collect();
                for name in names {
                    if self.sync_namespace(&name).await? == Pass::Done {
                        pending.remove(&name);
                    }
                }
            }
        }
        Ok(())
    }

    /// The pass after each listing of the namespaces: purge the objects of
    /// every namespace that is gone; returns the terminating namespaces.
    async fn resync(&self, listed: &[Value]) -> ApiResult<BTreeSet<String>> {
        let existing: BTreeSet<&str> = listed.iter().map(|ns| meta_str(ns, "name")).collect();
        let pending: BTreeSet<String> = listed
            .iter()
            .filter(|ns| terminating(ns))
            .map(|ns| meta_str(ns, "name").to_string())
            .collect();
        let mut orphaned = BTreeSet::new();
        for gr in &self.resources() {
            let mut items = self.store.list_stream(gr, None).await?.items;
            while let Some(item) = items.next().await {
                let ns = meta_str(&item?, "namespace").to_string();
                if !ns.is_empty() && !existing.contains(ns.as_str()) {
                    orphaned.insert(ns);
                }
            }
        }
        for ns in &orphaned {
            self.purge(ns).await?;
        }
        Ok(pending)
    }

    async fn purge(&self, ns: &str) -> ApiResult<()> {
        let deleted = purge(self.store.as_ref(), &self.resources(), ns).await?;
        if deleted > 0 {
            tracing::info!(namespace = ns, deleted, "purged a deleted namespace");
        }
        Ok(())
    }

    /// kube's `namespacedResourcesDeleter.Delete` for one namespace.
    async fn sync_namespace(&self, name: &str) -> ApiResult<Pass> {
        let key = ObjectKey::new(namespaces(), "", name);
        let mut ns = match self.store.get(&key).await {
            Ok(ns) => ns,
            Err(e) if e.is_not_found() => return Ok(Pass::Done),
            Err(e) => return Err(e),
        };
        if !terminating(&ns) {
            return Ok(Pass::Done);
        }
        let uid = meta_str(&ns, "uid").to_string();
        if !spec_finalizers(&ns).iter().any(|f| f == FINALIZER) {
            // Finalized: once no finalizer is left, the namespace goes.
            if spec_finalizers(&ns).is_empty() {
                let opts = DeleteOptions {
                    precondition_uid: Some(uid),
                    ..DeleteOptions::default()
                };
                match self.store.delete(&key, opts).await {
                    Ok(_) => {}
                    Err(e) if e.is_not_found() || e.is_conflict() => {}
                    Err(e) => return Err(e),
                }
            }
            return Ok(Pass::Done);
        }
        if ns.pointer("/status/phase").and_then(Value::as_str) != Some("Terminating") {
            conditions::set_phase_terminating(&mut ns);
            ns = self
                .store
                .update(&key, ns, UpdateOptions::default())
                .await?;
        }
        let totals = self.delete_all_content(name).await;
        let mut updated = ns.clone();
        if conditions::update(&mut updated, &totals) {
            match self
                .store
                .update(&key, updated, UpdateOptions::default())
                .await
            {
                Ok(new) => ns = new,
                Err(e) if e.is_conflict() => return Ok(Pass::Again),
                Err(e) if e.is_not_found() => return Ok(Pass::Done),
                Err(e) => {
                    tracing::warn!(namespace = name, error = %e.message, "couldn't update the namespace's status conditions");
                }
            }
        }
        if !totals.errors.is_empty() || !totals.remaining.is_empty() {
            return Ok(Pass::Again);
        }
        // Everything is gone: remove our finalizer (what `PUT .../finalize`
        // does), which deletes the namespace when it was the last one.
        let mut finalized = ns;
        if let Some(list) = finalized
            .pointer_mut("/spec/finalizers")
            .and_then(Value::as_array_mut)
        {
            list.retain(|f| f.as_str() != Some(FINALIZER));
        }
        match self
            .store
            .update(&key, finalized, UpdateOptions::default())
            .await
        {
            Ok(_) => {
                tracing::info!(namespace = name, "namespace finalized");
                Ok(Pass::Done)
            }
            Err(e) if e.is_not_found() => Ok(Pass::Done),
            Err(e) if e.is_conflict() => Ok(Pass::Again),
            Err(e) => Err(e),
        }
    }

    /// Delete every object in namespace `ns` (in the background, as kube's
    /// deleter does) and count what is left.
    async fn delete_all_content(&self, ns: &str) -> conditions::Totals {
        let mut totals = conditions::Totals::default();
        for gr in self.resources() {
            if let Err(e) = self.delete_content(&gr, ns, &mut totals).await {
                totals.errors.push(e.message);
            }
        }
        totals
    }

    async fn delete_content(
        &self,
        gr: &GroupResource,
        ns: &str,
        totals: &mut conditions::Totals,
    ) -> ApiResult<()> {
        let items = self.store.list(gr, Some(ns)).await?.items;
        if items.is_empty() {
            return Ok(());
        }
        for item in &items {
            if terminating(item) {
                continue;
            }
            let key = ObjectKey::new(gr.clone(), ns, meta_str(item, "name"));
            let opts = DeleteOptions {
                precondition_uid: Some(meta_str(item, "uid").to_string()).filter(|u| !u.is_empty()),
                propagation_policy: Some(PropagationPolicy::Background),
                ..DeleteOptions::default()
            };
            match self.store.delete(&key, opts).await {
                Ok(outcome) => {
                    crate::service_alloc::release_deleted(self.store.as_ref(), gr, &outcome).await;
                }
                Err(e) if e.is_not_found() || e.is_conflict() => {}
                Err(e) => return Err(e),
            }
        }
        let left = self.store.list(gr, Some(ns)).await?.items;
        if left.is_empty() {
            return Ok(());
        }
        let mut by_finalizer: BTreeMap<String, usize> = BTreeMap::new();
        for item in &left {
            if let Some(list) = item
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
            {
                for f in list.iter().filter_map(Value::as_str) {
                    *by_finalizer.entry(f.to_string()).or_default() += 1;
                }
            }
        }
        totals.remaining.insert(gr.clone(), left.len());
        if by_finalizer.is_empty() {
            // kube's deleter: content without finalizers should be gone.
            return Err(keelson_apimachinery::ApiError::internal(format!(
                "unexpected items still remain in namespace: {ns} for gvr: {}",
                gvr_string(gr, &self.version_of(gr))
            )));
        }
        for (f, n) in by_finalizer {
            *totals.finalizers.entry(f).or_default() += n;
        }
        Ok(())
    }

    fn version_of(&self, gr: &GroupResource) -> String {
        let snap = match &self.catalog {
            Some(c) => c.snapshot(),
            None => keelson_registry::CatalogSnapshot::builtin().clone(),
        };
        snap.resources()
            .iter()
            .find(|i| i.gr() == *gr)
            .map(|i| i.version.clone())
            .unwrap_or_default()
    }
}

/// Go's `%v` of a `schema.GroupVersionResource`.
fn gvr_string(gr: &GroupResource, version: &str) -> String {
    format!("{}/{}, Resource={}", gr.group, version, gr.resource)
}

/// Every namespaced resource of the built-in catalog, once each.
pub fn namespaced_resources() -> Vec<GroupResource> {
    resources_of(keelson_registry::CatalogSnapshot::builtin().resources())
}

/// The namespaced resources that can be deleted, once each.
fn resources_of(infos: &[keelson_registry::ResourceInfo]) -> Vec<GroupResource> {
    let mut out: Vec<GroupResource> = Vec::new();
    for info in infos {
        if info.namespaced && info.has_verb("delete") && !out.contains(&info.gr()) {
            out.push(info.gr());
        }
    }
    out
}

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
}

/// Whether an object is marked for deletion.
fn terminating(obj: &Value) -> bool {
    !meta_str(obj, "deletionTimestamp").is_empty()
}

fn spec_finalizers(ns: &Value) -> Vec<String> {
    ns.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
