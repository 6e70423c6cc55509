//! The CustomResourceDefinition controller: kube's naming, establishing
//! and finalizing controllers in one loop over `StoreApi`.
//!
//! For every CRD it
//! - accepts its names (`status.acceptedNames`, condition `NamesAccepted`,
//!   or `False` with kube's reason when another CRD of the group already
//!   holds a name), then in a second write marks it `Established`, and
//!   records the storage version in `status.storedVersions`;
//! - keeps the `customresourcecleanup.apiextensions.k8s.io` finalizer on
//!   it, so that deleting the CRD first deletes every object of the
//!   resource (condition `Terminating`), then drops the finalizer and the
//!   store removes the CRD. A CRD that vanished without the finalizer has
//!   its objects deleted after the fact.
//!
//! The catalog follower (`keelson_apiextensions::CatalogFollower`) serves
//! the resource once `NamesAccepted` is true and stops when the CRD goes.

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use keelson_api::{
    ApiResult, DeleteOptions, EventType, GroupResource, ObjectKey, StoreApi, UpdateOptions,
};
use keelson_apiextensions::crd::{Condition, Crd, Names};
use keelson_apiextensions::{crd_resource, CLEANUP_FINALIZER};
use keelson_apimachinery::meta::{meta_str, now_rfc3339};
use keelson_informer::{Event, Informer};
use serde_json::{json, Value};

/// How long the controller waits before re-syncing after a failure.
pub const RETRY_AFTER: Duration = Duration::from_millis(500);

/// How often a terminating CRD whose objects remain is looked at again.
const PENDING_RECHECK: Duration = Duration::from_secs(2);

/// The CRD controller.
pub struct CrdController {
    store: Arc<dyn StoreApi>,
    synced: tokio::sync::watch::Sender<bool>,
}

impl CrdController {
    /// A controller writing through `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        CrdController {
            store,
            synced: tokio::sync::watch::channel(false).0,
        }
    }

    /// Whether the controller has listed the CRDs and follows them.
    pub fn synced(&self) -> tokio::sync::watch::Receiver<bool> {
        self.synced.subscribe()
    }

    /// Run until `shutdown` completes, listing again after every failure.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut informer =
            Informer::new("CRD controller", self.store.clone(), vec![crd_resource()])
                .retry_after(RETRY_AFTER)
                .resync_every(PENDING_RECHECK)
                .report_synced(self.synced.clone());
        let mut known = BTreeMap::new();
        let follow = async {
            loop {
                let event = informer.next().await;
                if let Err(e) = self.handle(event, &mut known).await {
                    informer.failed(&e);
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = follow => {}
        }
        tracing::info!("CRD controller stopped");
    }

    /// Reconcile every listed CRD, or the one that changed.
    async fn handle(&self, event: Event, known: &mut BTreeMap<String, Value>) -> ApiResult<()> {
        match event {
            Event::Listed(listings) => {
                *known = listings
                    .into_iter()
                    .flat_map(|l| l.items)
                    .map(|c| (meta_str(&c, "name").to_string(), c))
                    .collect();
                let names: Vec<String> = known.keys().cloned().collect();
                for name in names {
                    if let Some(obj) = known.get(&name).cloned() {
                        self.reconcile(&obj, known).await?;
                    }
                }
            }
            Event::Changed(_, change) => {
                let name = meta_str(&change.object, "name").to_string();
                match change.event_type {
                    EventType::Added | EventType::Modified => {
                        known.insert(name, change.object.clone());
                        self.reconcile(&change.object, known).await?;
                    }
                    EventType::Deleted => {
                        known.remove(&name);
                        if let Ok(crd) = Crd::from_value(&change.object) {
                            self.delete_instances(&crd).await?;
                        }
                    }
                    EventType::Bookmark | EventType::Error => {}
                }
            }
            Event::Resync => {
                // A CRD whose objects are held by their finalizers: its
                // status write changes nothing once the count is steady, so
                // no event would bring the next step (kube's finalizing
                // controller requeues it).
                let pending: Vec<Value> = known
                    .values()
                    .filter(|c| {
                        Crd::from_value(c).is_ok_and(|crd| {
                            crd.terminating()
                                && crd
                                    .metadata
                                    .finalizers
                                    .iter()
                                    .any(|f| f == CLEANUP_FINALIZER)
                        })
                    })
                    .cloned()
                    .collect();
                for crd in pending {
                    self.reconcile(&crd, known).await?;
                }
            }
        }
        Ok(())
    }

    /// One step towards what `object` asks for; each step is one write,
    /// whose event brings the next step.
    async fn reconcile(&self, object: &Value, known: &BTreeMap<String, Value>) -> ApiResult<()> {
        let Ok(crd) = Crd::from_value(object) else {
            return Ok(());
        };
        let mut next = object.clone();
        if crd.terminating() {
            if !crd
                .metadata
                .finalizers
                .iter()
                .any(|f| f == CLEANUP_FINALIZER)
            {
                return Ok(());
            }
            if !crd.condition_true("Terminating") {
                set_condition(
                    &mut next,
                    "Terminating",
                    "True",
                    "InstanceDeletionInProgress",
                    "CustomResource deletion is in progress",
                );
                return self.write(&crd, next).await;
            }
            let remaining = self.delete_instances(&crd).await?;
            if remaining > 0 {
                // Objects held by their own finalizers: the next change of
                // the CRD (or a re-sync) tries again.
                tokio::time::sleep(RETRY_AFTER).await;
                set_condition(
                    &mut next,
                    "Terminating",
                    "True",
                    "InstanceDeletionPending",
                    &format!("CustomResourceDefinition marked for deletion, {remaining} instances remain"),
                );
                return self.write(&crd, next).await;
            }
            if let Some(Value::Array(f)) = next.pointer_mut("/metadata/finalizers") {
                f.retain(|x| x.as_str() != Some(CLEANUP_FINALIZER));
            }
            return self.write(&crd, next).await;
        }
        // The finalizer first, so no deletion can skip the cleanup.
        if !crd
            .metadata
            .finalizers
            .iter()
            .any(|f| f == CLEANUP_FINALIZER)
        {
            let meta = next
                .as_object_mut()
                .and_then(|o| o.get_mut("metadata"))
                .and_then(Value::as_object_mut);
            if let Some(meta) = meta {
                match meta.get_mut("finalizers") {
                    Some(Value::Array(f)) => f.push(Value::from(CLEANUP_FINALIZER)),
                    _ => {
                        meta.insert("finalizers".into(), json!([CLEANUP_FINALIZER]));
                    }
                }
            }
            return self.write(&crd, next).await;
        }
        let storage = crd.storage_version().to_string();
        let mut changed = false;
        if !storage.is_empty() && !crd.status.stored_versions.contains(&storage) {
            let mut stored = crd.status.stored_versions.clone();
            stored.push(storage);
            if let Some(st) = status_mut(&mut next) {
                st.insert("storedVersions".into(), json!(stored));
            }
            changed = true;
        }
        match name_conflict(&crd, known) {
            Some((reason, message)) => {
                if condition(&crd, "NamesAccepted")
                    .is_none_or(|c| c.status != "False" || c.message != message)
                {
                    set_condition(&mut next, "NamesAccepted", "False", reason, &message);
                    set_condition(
                        &mut next,
                        "Established",
                        "False",
                        "NotAccepted",
                        "not all names are accepted",
                    );
                    changed = true;
                }
            }
            None => {
                if crd.status.accepted_names != crd.spec.names
                    || !crd.condition_true("NamesAccepted")
                {
                    let names = serde_json::to_value(&crd.spec.names).unwrap_or(Value::Null);
                    if let Some(st) = status_mut(&mut next) {
                        st.insert("acceptedNames".into(), names);
                    }
                    set_condition(
                        &mut next,
                        "NamesAccepted",
                        "True",
                        "NoConflicts",
                        "no conflicts found",
                    );
                    changed = true;
                } else if !crd.condition_true("Established") {
                    set_condition(
                        &mut next,
                        "Established",
                        "True",
                        "InitialNamesAccepted",
                        "the initial names have been accepted",
                    );
                    changed = true;
                }
            }
        }
        if changed {
            return self.write(&crd, next).await;
        }
        Ok(())
    }

    async fn write(&self, crd: &Crd, next: Value) -> ApiResult<()> {
        let key = ObjectKey::new(crd_resource(), "", &crd.metadata.name);
        match self
            .store
            .update(&key, next, UpdateOptions::default())
            .await
        {
            Ok(_) => Ok(()),
            // A newer version is on its way as an event.
            Err(e) if e.is_conflict() || e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Delete every object of the CRD's resource; returns how many remain
    /// (held by finalizers).
    async fn delete_instances(&self, crd: &Crd) -> ApiResult<usize> {
        let names = if crd.status.accepted_names.plural.is_empty() {
            &crd.spec.names
        } else {
            &crd.status.accepted_names
        };
        if names.plural.is_empty() {
            return Ok(0);
        }
        let gr = GroupResource::new(&crd.spec.group, &names.plural);
        let items = self.store.list(&gr, None).await?.items;
        let mut remaining = 0;
        for item in &items {
            let key = ObjectKey::new(
                gr.clone(),
                meta_str(item, "namespace"),
                meta_str(item, "name"),
            );
            let opts = DeleteOptions {
                precondition_uid: Some(meta_str(item, "uid").to_string()).filter(|u| !u.is_empty()),
                ..DeleteOptions::default()
            };
            match self.store.delete(&key, opts).await {
                Ok(keelson_api::DeleteOutcome::Deleted(_)) => {}
                Ok(keelson_api::DeleteOutcome::Marked(_)) => remaining += 1,
                Err(e) if e.is_not_found() || e.is_conflict() => {}
                Err(e) => return Err(e),
            }
        }
        if !items.is_empty() {
            tracing::info!(resource = %gr, deleted = items.len() - remaining, "deleted the objects of a deleted CustomResourceDefinition");
        }
        Ok(remaining)
    }
}

fn condition<'a>(crd: &'a Crd, type_: &str) -> Option<&'a Condition> {
    crd.status.conditions.iter().find(|c| c.type_ == type_)
}

fn status_mut(obj: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    let st = obj
        .as_object_mut()?
        .entry("status")
        .or_insert_with(|| json!({}));
    if !st.is_object() {
        *st = json!({});
    }
    st.as_object_mut()
}

/// Set (or replace) a condition; the transition time moves only when the
/// status changes.
fn set_condition(obj: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    let Some(st) = status_mut(obj) else { return };
    let conds = st.entry("conditions").or_insert_with(|| json!([]));
    if !conds.is_array() {
        *conds = json!([]);
    }
    let Value::Array(list) = conds else { return };
    let now = now_rfc3339();
    if let Some(c) = list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
    {
        let moved = c.get("status").and_then(Value::as_str) != Some(status);
        let time = if moved {
            Value::from(now)
        } else {
            c.get("lastTransitionTime")
                .cloned()
                .unwrap_or(Value::from(now))
        };
        *c = json!({"type": type_, "status": status, "lastTransitionTime": time, "reason": reason, "message": message});
    } else {
        list.push(json!({"type": type_, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}));
    }
}

/// kube's naming controller: a name another CRD of the group has accepted
/// is a conflict.
fn name_conflict(crd: &Crd, known: &BTreeMap<String, Value>) -> Option<(&'static str, String)> {
    let mine = &crd.spec.names;
    for (name, other) in known {
        if *name == crd.metadata.name {
            continue;
        }
        let Ok(o) = Crd::from_value(other) else {
            continue;
        };
        if o.spec.group != crd.spec.group {
            continue;
        }
        let theirs: &Names = &o.status.accepted_names;
        if !mine.plural.is_empty() && mine.plural == theirs.plural {
            return Some((
                "PluralConflict",
                format!("{:?} is already in use", mine.plural),
            ));
        }
        if !mine.singular.is_empty()
            && (mine.singular == theirs.singular || mine.singular == theirs.plural)
        {
            return Some((
                "SingularConflict",
                format!("{:?} is already in use", mine.singular),
            ));
        }
        for s in &mine.short_names {
            if theirs.short_names.contains(s) || *s == theirs.plural || *s == theirs.singular {
                return Some(("ShortNamesConflict", format!("{:?} is already in use", s)));
            }
        }
        if !mine.kind.is_empty() && (mine.kind == theirs.kind || mine.kind == theirs.list_kind) {
            return Some(("KindConflict", format!("{:?} is already in use", mine.kind)));
        }
        if !mine.list_kind.is_empty()
            && (mine.list_kind == theirs.list_kind || mine.list_kind == theirs.kind)
        {
            return Some((
                "ListKindConflict",
                format!("{:?} is already in use", mine.list_kind),
            ));
        }
    }
    None
}
