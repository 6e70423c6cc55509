//! The resource quota controller (kube-controller-manager's
//! `resourcequota` controller, `pkg/controller/resourcequota`): keeps each
//! ResourceQuota's `status.hard` equal to its `spec.hard` and
//! `status.used` measured from the namespace's objects, with the
//! evaluators ResourceQuota admission charges with
//! (`keelson_admission::quota`).
//!
//! A quota is measured when it appears, when its `spec.hard` changes (its
//! status writes, admission's charges included, are not a reason), and,
//! as kube's quota monitor replenishes, when an object it counts is
//! deleted or an update releases usage (a pod turning terminal or past its
//! deletion grace, a Service changing type, a claim's storage or class
//! changing); and every quota every [`RESYNC`]. Creates are not followed:
//! admission charges them before they are stored.
//!
//! Pods, Services, PersistentVolumeClaims, ConfigMaps, Secrets,
//! ReplicationControllers and ResourceQuotas are followed by one informer;
//! the other resources a quota counts (`count/<resource>.<group>`) by a
//! second, rebuilt when that set changes.

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use keelson_admission::quota::{self, resources, Evaluator};
use keelson_api::{ApiResult, ChangeEvent, EventType, GroupResource, ObjectKey, StoreApi};
use keelson_apimachinery::meta::meta_str;
use keelson_informer::{Event, Informer};
use serde_json::Value;

/// How often every quota is measured again (kube's
/// `--resource-quota-sync-period` default).
pub const RESYNC: Duration = Duration::from_secs(300);

/// How long changes are gathered before the quotas they touch are
/// measured.
const BATCH: Duration = Duration::from_millis(5);

type Key = (String, String);

/// The resource quota controller.
pub struct ResourceQuotaController {
    store: Arc<dyn StoreApi>,
    resync: Duration,
}

/// What the controller remembers between events.
#[derive(Default)]
struct State {
    /// (namespace, name) → the resources the quota counts.
    quotas: BTreeMap<Key, Vec<GroupResource>>,
    /// Quotas to measure.
    dirty: BTreeSet<Key>,
}

impl State {
    fn set_quota(&mut self, q: &Value) {
        let key = key_of(q);
        self.quotas.insert(key, quota::tracked_resources(q));
    }

    /// Mark the namespace's quotas that count `gr`.
    fn touch(&mut self, gr: &GroupResource, namespace: &str) {
        let hit: Vec<Key> = self
            .quotas
            .range((namespace.to_string(), String::new())..)
            .take_while(|((ns, _), _)| ns == namespace)
            .filter(|(_, tracked)| tracked.contains(gr))
            .map(|(k, _)| k.clone())
            .collect();
        self.dirty.extend(hit);
    }

    /// The resources counted beyond the core ones.
    fn extra_resources(&self) -> BTreeSet<GroupResource> {
        let core = core_resources();
        self.quotas
            .values()
            .flatten()
            .filter(|gr| !core.contains(gr))
            .cloned()
            .collect()
    }
}

fn key_of(q: &Value) -> Key {
    (
        meta_str(q, "namespace").to_string(),
        meta_str(q, "name").to_string(),
    )
}

fn core_resources() -> Vec<GroupResource> {
    Evaluator::core()
        .iter()
        .map(Evaluator::group_resource)
        .collect()
}

/// Whether a change of a counted object can lower what it is charged
/// (kube's replenishment update filter).
fn releases(gr: &GroupResource, change: &ChangeEvent) -> bool {
    let Some(old) = change.prev_object.as_ref() else {
        return true;
    };
    let new = &change.object;
    if !gr.group.is_empty() {
        return false;
    }
    match gr.resource.as_str() {
        "pods" => {
            let now = chrono::Utc::now();
            !quota_charged(new, now) && quota_charged(old, now)
        }
        "services" => service_type(old) != service_type(new),
        "persistentvolumeclaims" => {
            old.pointer("/status/allocatedResources/storage")
                != new.pointer("/status/allocatedResources/storage")
                || old.pointer("/spec/volumeAttributesClassName")
                    != new.pointer("/spec/volumeAttributesClassName")
                || old.pointer("/status/currentVolumeAttributesClassName")
                    != new.pointer("/status/currentVolumeAttributesClassName")
        }
        _ => false,
    }
}

fn quota_charged(pod: &Value, now: chrono::DateTime<chrono::Utc>) -> bool {
    // `pods` is charged only while the pod is; its usage says.
    Evaluator::Pods.usage(pod, now).contains_key("pods")
}

/// kube's `GetQuotaServiceType`.
fn service_type(svc: &Value) -> &str {
    svc.pointer("/spec/type")
        .and_then(Value::as_str)
        .filter(|t| matches!(*t, "NodePort" | "LoadBalancer"))
        .unwrap_or_default()
}

fn spec_hard_changed(change: &ChangeEvent) -> bool {
    let Some(old) = change.prev_object.as_ref() else {
        return true;
    };
    let hard = |q: &Value| resources::parse_list(q.pointer("/spec/hard"));
    !resources::equals(&hard(old), &hard(&change.object))
}

/// Whether the quota's status is not what it should be at a glance
/// (`status.hard` differs from the spec, or is missing, or `used` is).
fn status_stale(q: &Value) -> bool {
    let status = q.get("status");
    let missing = |k: &str| status.and_then(|s| s.get(k)).is_none_or(Value::is_null);
    missing("hard")
        || missing("used")
        || !resources::equals(
            &resources::parse_list(q.pointer("/spec/hard")),
            &resources::parse_list(q.pointer("/status/hard")),
        )
}

impl ResourceQuotaController {
    /// A controller over `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        ResourceQuotaController {
            store,
            resync: RESYNC,
        }
    }

    /// Measure every quota this often (default [`RESYNC`]).
    pub fn resync_every(mut self, period: Duration) -> Self {
        self.resync = period;
        self
    }

    /// Run until `shutdown` completes, listing again after failures.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut resources = vec![quota::resource_quotas()];
        resources.extend(core_resources());
        let mut core = Informer::new("resource quota controller", self.store.clone(), resources)
            .retry_after(crate::namespace::RETRY_AFTER)
            .resync_every(self.resync);
        let mut extra: Option<(BTreeSet<GroupResource>, Informer)> = None;
        let mut state = State::default();
        let work = async {
            loop {
                let next_extra = async {
                    match extra.as_mut() {
                        Some((_, i)) => i.next().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    event = core.next() => self.handle(&mut state, event, true),
                    event = next_extra => self.handle(&mut state, event, false),
                    () = tokio::time::sleep(BATCH), if !state.dirty.is_empty() => {
                        if let Err(e) = self.measure_dirty(&mut state).await {
                            tracing::debug!(error = %e.message, "resource quota controller: will retry");
                        }
                    }
                }
                let wanted = state.extra_resources();
                if extra
                    .as_ref()
                    .map_or(!wanted.is_empty(), |(had, _)| *had != wanted)
                {
                    extra = (!wanted.is_empty()).then(|| {
                        let informer = Informer::new(
                            "resource quota controller (object counts)",
                            self.store.clone(),
                            wanted.iter().cloned().collect(),
                        )
                        .retry_after(crate::namespace::RETRY_AFTER);
                        (wanted, informer)
                    });
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = work => {}
        }
    }

    fn handle(&self, state: &mut State, event: Event, core: bool) {
        match event {
            Event::Listed(listings) => {
                for l in listings {
                    if l.resource == quota::resource_quotas() {
                        state.quotas.clear();
                        for q in &l.items {
                            state.set_quota(q);
                        }
                        let all: Vec<Key> = state.quotas.keys().cloned().collect();
                        state.dirty.extend(all);
                    } else if !core {
                        // A fresh listing of counted objects: re-measure
                        // the quotas that count them (a delete may have
                        // been missed).
                        let hit: Vec<Key> = state
                            .quotas
                            .iter()
                            .filter(|(_, t)| t.contains(&l.resource))
                            .map(|(k, _)| k.clone())
                            .collect();
                        state.dirty.extend(hit);
                    }
                }
            }
            Event::Changed(gr, change) if gr == quota::resource_quotas() => match change.event_type
            {
                EventType::Added | EventType::Modified => {
                    state.set_quota(&change.object);
                    if spec_hard_changed(&change) || status_stale(&change.object) {
                        state.dirty.insert(key_of(&change.object));
                    }
                }
                EventType::Deleted => {
                    let key = key_of(&change.object);
                    state.quotas.remove(&key);
                    state.dirty.remove(&key);
                }
                _ => {}
            },
            Event::Changed(gr, change) => {
                let ns = meta_str(&change.object, "namespace").to_string();
                match change.event_type {
                    EventType::Deleted => state.touch(&gr, &ns),
                    EventType::Modified if releases(&gr, &change) => state.touch(&gr, &ns),
                    _ => {}
                }
            }
            Event::Resync => {
                let all: Vec<Key> = state.quotas.keys().cloned().collect();
                state.dirty.extend(all);
            }
        }
    }

    /// Measure the dirty quotas; one that fails stays dirty.
    async fn measure_dirty(&self, state: &mut State) -> ApiResult<()> {
        let dirty = std::mem::take(&mut state.dirty);
        let mut first_err = None;
        for key in dirty {
            if let Err(e) = self.sync(&key).await {
                if first_err.is_none() {
                    first_err = Some(e);
                }
                if state.quotas.contains_key(&key) {
                    state.dirty.insert(key);
                }
            }
        }
        if first_err.is_some() {
            // Do not spin on a failing store.
            tokio::time::sleep(crate::namespace::RETRY_AFTER).await;
        }
        first_err.map_or(Ok(()), Err)
    }

    /// kube's `syncResourceQuota`: write the measured status when it
    /// differs, with the quota's `resourceVersion` as precondition.
    async fn sync(&self, (ns, name): &Key) -> ApiResult<()> {
        let key = ObjectKey::new(quota::resource_quotas(), ns, name);
        let current = match self.store.get(&key).await {
            Ok(q) => q,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e),
        };
        let (status, errors) = quota::desired_status(&*self.store, &current).await;
        let same = |k: &str| {
            current.pointer(&format!("/status/{k}")).is_some()
                && resources::equals(
                    &resources::parse_list(current.pointer(&format!("/status/{k}"))),
                    &resources::parse_list(status.get(k)),
                )
        };
        if !(same("hard") && same("used")) {
            let mut updated = current.clone();
            updated["status"] = status;
            self.store
                .update(&key, updated, keelson_api::UpdateOptions::default())
                .await?;
        }
        match errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
