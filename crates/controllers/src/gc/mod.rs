//! The garbage collector (kube-controller-manager's `garbagecollector`):
//! follows `metadata.ownerReferences` of every resource of the catalog that
//! can be listed, watched and deleted.
//!
//! - A dependent whose owners are all gone (no object of that name, or one
//!   with another uid) is deleted in the background (or as its own
//!   `orphan`/`foregroundDeletion` finalizer asks); references to missing
//!   owners next to a live one are removed.
//! - An owner deleted with the `orphan` finalizer has its reference removed
//!   from every dependent, then the finalizer.
//! - An owner deleted with `foregroundDeletion` has its dependents deleted
//!   (those with dependents of their own in the foreground too) and keeps
//!   the finalizer until no dependent with `blockOwnerDeletion` is left.
//! - A cluster-scoped dependent cannot have a namespaced owner: such a
//!   reference is left alone (kube reports it as `OwnerRefInvalidNamespace`);
//!   a namespaced owner is looked up in its dependent's namespace.
//!
//! Like the other controllers it holds only a `StoreApi`: one list and one
//! change stream per resource (a [`keelson_informer::Informer`]) feed an
//! in-memory [`graph::Graph`], and a
//! work queue of uids is processed against fresh reads from the store.
//! A change of the catalog's generation (a CRD) re-syncs it.

mod graph;
#[cfg(test)]
mod tests;

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use keelson_api::{
    ApiResult, ChangeEvent, DeleteOptions, EventType, GroupResource, ObjectKey, StoreApi,
    UpdateOptions,
};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::options::PropagationPolicy;
use keelson_informer::{Event, Informer};
use keelson_registry::Catalog;
use serde_json::Value;

use graph::{Graph, OwnerRef};

/// The `orphan` finalizer.
pub const ORPHAN: &str = "orphan";
/// The `foregroundDeletion` finalizer.
pub const FOREGROUND: &str = "foregroundDeletion";

/// How long the collector waits before re-syncing after a failure, and
/// how often failed items are retried.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The garbage collector.
pub struct GarbageCollector {
    store: Arc<dyn StoreApi>,
    catalog: Catalog,
    synced: tokio::sync::watch::Sender<bool>,
}

/// What processing an item found.
enum Outcome {
    Done,
    /// Try again later (a conflict, or an owner still waiting).
    Retry,
}

impl GarbageCollector {
    /// A collector over the resources of `catalog` (followed live).
    pub fn new(store: Arc<dyn StoreApi>, catalog: Catalog) -> Self {
        GarbageCollector {
            store,
            catalog,
            synced: tokio::sync::watch::channel(false).0,
        }
    }

    /// A collector with its own catalog, kept in step with the stored
    /// CustomResourceDefinitions by a follower task (for a process that
    /// has no catalog of its own: `keelson-controllers`). Must run inside a
    /// tokio runtime.
    pub fn following_crds(store: Arc<dyn StoreApi>) -> Self {
        let catalog = Catalog::builtin();
        keelson_apiextensions::CatalogFollower::spawn(store.clone(), catalog.clone());
        GarbageCollector::new(store, catalog)
    }

    /// Whether the collector has listed every resource and follows their
    /// change streams.
    pub fn synced(&self) -> tokio::sync::watch::Receiver<bool> {
        self.synced.subscribe()
    }

    /// Run until `shutdown` completes, re-syncing after every failure.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let (generation, resources) = self.resources();
        let mut informer = Informer::new("garbage collector", self.store.clone(), resources)
            .retry_after(RETRY_AFTER)
            .resync_every(RETRY_AFTER)
            .report_synced(self.synced.clone());
        tokio::select! {
            () = shutdown => {}
            () = self.follow(&mut informer, generation) => {}
        }
        tracing::info!("garbage collector stopped");
    }

    /// The resources the collector follows.
    fn resources(&self) -> (u64, Vec<GroupResource>) {
        let snap = self.catalog.snapshot();
        let mut out: Vec<GroupResource> = Vec::new();
        for info in snap.resources() {
            let ok = ["list", "watch", "delete"].iter().all(|v| info.has_verb(v));
            if ok && !out.contains(&info.gr()) {
                out.push(info.gr());
            }
        }
        (snap.generation(), out)
    }

    /// Fold every listing and change into a graph and work the queue
    /// while the graph is current; a new catalog generation re-lists.
    async fn follow(&self, informer: &mut Informer, mut generation: u64) {
        let mut graph = Graph::default();
        let mut queue = Queue::default();
        let mut retry: Vec<String> = Vec::new();
        loop {
            tokio::select! {
                event = informer.next() => match event {
                    Event::Listed(listings) => {
                        (graph, queue) = (Graph::default(), Queue::default());
                        retry.clear();
                        for listing in &listings {
                            for obj in &listing.items {
                                graph.upsert(key_of(&listing.resource, obj), obj);
                            }
                        }
                        for uid in graph.initial_work() {
                            queue.push(uid);
                        }
                    }
                    Event::Changed(gr, change) => apply(&mut graph, &mut queue, &gr, change),
                    Event::Resync => {
                        let (now, resources) = self.resources();
                        if now != generation {
                            generation = now;
                            informer.set_resources(resources);
                            continue;
                        }
                        for uid in retry.drain(..) {
                            queue.push(uid);
                        }
                    }
                },
                // Not while re-listing: the graph may have missed changes.
                uid = async { queue.pop() }, if informer.is_watching() && !queue.is_empty() => {
                    let Some(uid) = uid else { continue };
                    match self.process(&graph, &uid).await {
                        Ok(Outcome::Done) => {}
                        Ok(Outcome::Retry) => retry.push(uid),
                        Err(e) => {
                            tracing::debug!(error = %e.message, %uid, "garbage collector: retrying");
                            retry.push(uid);
                        }
                    }
                }
            }
        }
    }

    /// Work on one object, read fresh from the store.
    async fn process(&self, graph: &Graph, uid: &str) -> ApiResult<Outcome> {
        let Some(node) = graph.node(uid) else {
            return Ok(Outcome::Done);
        };
        let latest = match self.store.get(&node.key).await {
            Ok(obj) if meta_str(&obj, "uid") == uid => obj,
            Ok(_) => return Ok(Outcome::Done),
            Err(e) if e.is_not_found() => return Ok(Outcome::Done),
            Err(e) => return Err(e),
        };
        let finalizers = finalizers(&latest);
        if !meta_str(&latest, "deletionTimestamp").is_empty() {
            // Act on a deletion only once the graph has observed it: the
            // graph then holds every dependent written before it (events of
            // one resource arrive in order), so none is missed. Until then
            // the deletion's own event queues the owner again.
            let observed = |f: &str| node.deleting && node.finalizers.iter().any(|x| x == f);
            if finalizers.iter().any(|f| f == ORPHAN) {
                if !observed(ORPHAN) {
                    return Ok(Outcome::Done);
                }
                return self.orphan_dependents(graph, uid, &node.key).await;
            }
            if finalizers.iter().any(|f| f == FOREGROUND) {
                if !observed(FOREGROUND) {
                    return Ok(Outcome::Done);
                }
                return self.delete_dependents_first(graph, uid, &node.key).await;
            }
            return Ok(Outcome::Done);
        }
        self.attempt_to_delete(graph, uid, &node.key, &latest).await
    }

    /// kube's `attemptToOrphan`: remove the owner from every dependent's
    /// references, then the `orphan` finalizer.
    async fn orphan_dependents(
        &self,
        graph: &Graph,
        owner: &str,
        key: &ObjectKey,
    ) -> ApiResult<Outcome> {
        for dep in graph.dependents_of(owner) {
            let Some(n) = graph.node(&dep) else { continue };
            let gone = [owner.to_string()];
            if let Outcome::Retry = self.remove_owner_refs(&n.key, &dep, &gone).await? {
                return Ok(Outcome::Retry);
            }
        }
        self.remove_finalizer(key, owner, ORPHAN).await
    }

    /// kube's `processDeletingDependentsItem`: the owner keeps
    /// `foregroundDeletion` until no blocking dependent is left; its
    /// dependents are deleted meanwhile.
    async fn delete_dependents_first(
        &self,
        graph: &Graph,
        owner: &str,
        key: &ObjectKey,
    ) -> ApiResult<Outcome> {
        let blocking = graph.blocking_dependents(owner);
        if blocking.is_empty() {
            return self.remove_finalizer(key, owner, FOREGROUND).await;
        }
        let mut waiting = false;
        for dep in graph.dependents_of(owner) {
            let Some(n) = graph.node(&dep) else { continue };
            if n.deleting {
                waiting = true;
                continue;
            }
            let latest = match self.store.get(&n.key).await {
                Ok(obj) if meta_str(&obj, "uid") == dep => obj,
                Ok(_) => continue,
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e),
            };
            self.attempt_to_delete(graph, &dep, &n.key, &latest).await?;
            waiting = true;
        }
        // The dependents' deletions come back as events; until then the
        // owner is looked at again now and then.
        Ok(if waiting {
            Outcome::Retry
        } else {
            Outcome::Done
        })
    }

    /// kube's `attemptToDeleteItem` for an object that is not being deleted.
    async fn attempt_to_delete(
        &self,
        graph: &Graph,
        uid: &str,
        key: &ObjectKey,
        latest: &Value,
    ) -> ApiResult<Outcome> {
        let refs = OwnerRef::of(latest);
        if refs.is_empty() {
            return Ok(Outcome::Done);
        }
        let (mut solid, mut dangling, mut waiting) = (0usize, Vec::new(), Vec::new());
        for r in &refs {
            match self.owner_state(key, r).await? {
                OwnerState::Absent => dangling.push(r.uid.clone()),
                OwnerState::DeletingDependents => waiting.push(r.uid.clone()),
                OwnerState::Present => solid += 1,
                OwnerState::Invalid => return Ok(Outcome::Done),
            }
        }
        let rv = meta_str(latest, "resourceVersion").to_string();
        if solid > 0 {
            if dangling.is_empty() && waiting.is_empty() {
                return Ok(Outcome::Done);
            }
            dangling.extend(waiting);
            return self.remove_owner_refs(key, uid, &dangling).await;
        }
        let dependents = graph.dependents_of(uid);
        let own = finalizers(latest);
        let policy = if !waiting.is_empty() && !dependents.is_empty() {
            // A dependent waiting for its own dependents may be waiting for
            // this object: make its references non-blocking so that the
            // two cannot wait for each other (kube's cycle breaker).
            if dependents
                .iter()
                .any(|d| graph.node(d).is_some_and(|n| n.deleting_dependents()))
            {
                if let Outcome::Retry = self.unblock_owner_refs(key, uid).await? {
                    return Ok(Outcome::Retry);
                }
            }
            PropagationPolicy::Foreground
        } else if own.iter().any(|f| f == ORPHAN) {
            PropagationPolicy::Orphan
        } else if own.iter().any(|f| f == FOREGROUND) {
            PropagationPolicy::Foreground
        } else {
            PropagationPolicy::Background
        };
        let opts = DeleteOptions {
            precondition_uid: Some(uid.to_string()),
            precondition_resource_version: Some(rv).filter(|r| !r.is_empty()),
            propagation_policy: Some(policy),
            ..DeleteOptions::default()
        };
        match self.store.delete(key, opts).await {
            Ok(outcome) => {
                crate::service_alloc::release_deleted(self.store.as_ref(), &key.gr, &outcome).await;
                tracing::info!(object = %describe(key), policy = policy.as_str(), "garbage collector deleted a dependent");
                Ok(Outcome::Done)
            }
            Err(e) if e.is_not_found() => Ok(Outcome::Done),
            Err(e) if e.is_conflict() => Ok(Outcome::Retry),
            Err(e) => Err(e),
        }
    }

    /// Whether the owner a reference names exists with that uid.
    async fn owner_state(&self, dependent: &ObjectKey, r: &OwnerRef) -> ApiResult<OwnerState> {
        let (group, version) = match r.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", r.api_version.as_str()),
        };
        let snap = self.catalog.snapshot();
        let Some(info) = snap.lookup_kind(group, version, &r.kind) else {
            // An unknown kind: kube keeps retrying; never delete for it.
            tracing::debug!(kind = %r.kind, api_version = %r.api_version, "garbage collector: unknown owner kind");
            return Ok(OwnerState::Present);
        };
        if info.namespaced && dependent.namespace.is_empty() {
            return Ok(OwnerState::Invalid);
        }
        let ns = if info.namespaced {
            dependent.namespace.as_str()
        } else {
            ""
        };
        let key = ObjectKey::new(info.gr(), ns, &r.name);
        match self.store.get(&key).await {
            Ok(owner) if meta_str(&owner, "uid") != r.uid => Ok(OwnerState::Absent),
            Ok(owner) => {
                let deleting = !meta_str(&owner, "deletionTimestamp").is_empty();
                if deleting && finalizers(&owner).iter().any(|f| f == FOREGROUND) {
                    Ok(OwnerState::DeletingDependents)
                } else {
                    Ok(OwnerState::Present)
                }
            }
            Err(e) if e.is_not_found() => Ok(OwnerState::Absent),
            Err(e) => Err(e),
        }
    }

    /// Remove the references to `owners` from the object at `key`.
    async fn remove_owner_refs(
        &self,
        key: &ObjectKey,
        uid: &str,
        owners: &[String],
    ) -> ApiResult<Outcome> {
        self.edit(key, uid, |obj| {
            let Some(refs) = obj
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            else {
                return false;
            };
            let before = refs.len();
            refs.retain(|r| {
                !owners
                    .iter()
                    .any(|o| r.get("uid").and_then(Value::as_str) == Some(o.as_str()))
            });
            let changed = refs.len() != before;
            if refs.is_empty() {
                if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("ownerReferences");
                }
            }
            changed
        })
        .await
    }

    /// Set `blockOwnerDeletion: false` on every reference of an object.
    async fn unblock_owner_refs(&self, key: &ObjectKey, uid: &str) -> ApiResult<Outcome> {
        self.edit(key, uid, |obj| {
            let mut changed = false;
            if let Some(refs) = obj
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            {
                for r in refs.iter_mut().filter_map(Value::as_object_mut) {
                    if r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true) {
                        r.insert("blockOwnerDeletion".into(), Value::Bool(false));
                        changed = true;
                    }
                }
            }
            changed
        })
        .await
    }

    /// Remove one finalizer from the object at `key` (which deletes it when
    /// it was the last).
    async fn remove_finalizer(&self, key: &ObjectKey, uid: &str, name: &str) -> ApiResult<Outcome> {
        let out = self
            .edit(key, uid, |obj| {
                let Some(list) = obj
                    .pointer_mut("/metadata/finalizers")
                    .and_then(Value::as_array_mut)
                else {
                    return false;
                };
                let before = list.len();
                list.retain(|f| f.as_str() != Some(name));
                let changed = list.len() != before;
                if list.is_empty() {
                    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                        m.remove("finalizers");
                    }
                }
                changed
            })
            .await?;
        if let Outcome::Done = out {
            tracing::info!(object = %describe(key), finalizer = name, "garbage collector removed its finalizer");
        }
        Ok(out)
    }

    /// Read, change and write back an object with its resourceVersion as
    /// precondition (a conflict is retried later).
    async fn edit(
        &self,
        key: &ObjectKey,
        uid: &str,
        change: impl Fn(&mut Value) -> bool,
    ) -> ApiResult<Outcome> {
        let mut obj = match self.store.get(key).await {
            Ok(obj) if meta_str(&obj, "uid") == uid => obj,
            Ok(_) => return Ok(Outcome::Done),
            Err(e) if e.is_not_found() => return Ok(Outcome::Done),
            Err(e) => return Err(e),
        };
        if !change(&mut obj) {
            return Ok(Outcome::Done);
        }
        match self.store.update(key, obj, UpdateOptions::default()).await {
            Ok(_) => Ok(Outcome::Done),
            Err(e) if e.is_not_found() => Ok(Outcome::Done),
            Err(e) if e.is_conflict() => Ok(Outcome::Retry),
            Err(e) => Err(e),
        }
    }
}

/// What an owner reference points at.
enum OwnerState {
    /// The owner exists with the referenced uid.
    Present,
    /// It exists and is being deleted with `foregroundDeletion`.
    DeletingDependents,
    /// No such owner (or one with another uid).
    Absent,
    /// A cluster-scoped dependent naming a namespaced owner.
    Invalid,
}

/// A de-duplicating FIFO of uids.
#[derive(Default)]
struct Queue {
    items: VecDeque<String>,
    queued: HashSet<String>,
}

impl Queue {
    fn push(&mut self, uid: String) {
        if self.queued.insert(uid.clone()) {
            self.items.push_back(uid);
        }
    }

    fn pop(&mut self) -> Option<String> {
        let uid = self.items.pop_front()?;
        self.queued.remove(&uid);
        Some(uid)
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Fold one change into the graph and queue what it may affect.
fn apply(graph: &mut Graph, queue: &mut Queue, gr: &GroupResource, change: ChangeEvent) {
    let touched = match change.event_type {
        EventType::Added | EventType::Modified => {
            graph.upsert(key_of(gr, &change.object), &change.object)
        }
        EventType::Deleted => graph.remove(meta_str(&change.object, "uid")),
        EventType::Bookmark | EventType::Error => Vec::new(),
    };
    for uid in touched {
        queue.push(uid);
    }
}

fn key_of(gr: &GroupResource, obj: &Value) -> ObjectKey {
    ObjectKey::new(
        gr.clone(),
        meta_str(obj, "namespace"),
        meta_str(obj, "name"),
    )
}

fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn describe(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        format!("{}/{}", key.gr, key.name)
    } else {
        format!("{}/{}/{}", key.gr, key.namespace, key.name)
    }
}
