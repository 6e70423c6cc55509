//! ResourceQuota admission (kube's `ResourceQuota` plugin,
//! `k8s.io/apiserver/pkg/admission/plugin/resourcequota`), the last step of
//! admission: a create or update that would take a namespace over one of
//! its quotas is refused with kube's `403`, and one that fits is charged —
//! the covering quotas' `status.used` is written before the object is
//! stored (optimistically, with the quota's `resourceVersion`, retried on
//! a conflict), so two quick creates cannot both take the last unit. A
//! dry run is checked and charges nothing.
//!
//! The quotas are followed by a list + watch ([`Quotas`]), so a namespace
//! without one costs a map lookup. A namespace whose quota create this
//! admission saw lately is read from the store, as kube's live lookup does.
//!
//! The arithmetic and the evaluators are public: the quota controller
//! (`keelson_controllers::resource_quota`) measures `status.used` with
//! them ([`desired_status`]).

mod check;
pub mod evaluator;
mod limited;
mod pod;
pub mod resources;
mod usage;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use keelson_api::{
    AdmissionRequest, ApiError, ApiResult, EventType, GroupResource, ObjectKey, Operation,
    StoreApi, UpdateOptions,
};
use keelson_apimachinery::meta::meta_str;
use keelson_informer::{Event, Informer};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use evaluator::{count_name, counted_resource, Evaluator};
pub use limited::{LimitedResource, ResourceQuotaConfig};
pub use resources::{Amount, ResourceList};
pub use usage::{desired_status, tracked_resources};

/// `resourcequotas`.
pub fn resource_quotas() -> GroupResource {
    GroupResource::new("", "resourcequotas")
}

/// How long after a quota create its namespace is read from the store
/// (kube's live-lookup TTL).
const LIVE_LOOKUP: Duration = Duration::from_secs(30);

/// How many times a charge is retried after a conflict (kube: 3).
const RETRIES: usize = 3;

/// The pause before the first retry (doubled, tripled after).
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// One requirement of a quota's scopes (`spec.scopes` entries are
/// `Exists`; `spec.scopeSelector.matchExpressions` as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSelector {
    pub scope_name: String,
    pub operator: String,
    pub values: Vec<String>,
}

impl ScopeSelector {
    /// `<scope> Exists`.
    pub fn exists(scope: &str) -> ScopeSelector {
        ScopeSelector {
            scope_name: scope.into(),
            operator: "Exists".into(),
            values: Vec::new(),
        }
    }

    /// Label-selector semantics with the scope as the one key, `value` its
    /// value when the object has one.
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        match self.operator.as_str() {
            "In" => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            "NotIn" => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    }
}

/// A quota as admission and the controller read it.
#[derive(Debug, Clone)]
pub(crate) struct QuotaDoc {
    pub object: Value,
    pub name: String,
    /// `status.hard` (what admission enforces).
    pub hard: ResourceList,
    /// `status.used`.
    pub used: ResourceList,
    /// `spec.hard`.
    pub spec_hard: ResourceList,
    pub selectors: Vec<ScopeSelector>,
}

impl QuotaDoc {
    pub(crate) fn from_json(q: &Value) -> QuotaDoc {
        let mut selectors: Vec<ScopeSelector> = q
            .pointer("/spec/scopes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(ScopeSelector::exists)
            .collect();
        let exprs = q
            .pointer("/spec/scopeSelector/matchExpressions")
            .and_then(Value::as_array);
        for e in exprs.into_iter().flatten() {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            selectors.push(ScopeSelector {
                scope_name: s("scopeName"),
                operator: s("operator"),
                values: e
                    .get("values")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            });
        }
        QuotaDoc {
            object: q.clone(),
            name: meta_str(q, "name").to_string(),
            hard: resources::parse_list(q.pointer("/status/hard")),
            used: resources::parse_list(q.pointer("/status/used")),
            spec_hard: resources::parse_list(q.pointer("/spec/hard")),
            selectors,
        }
    }
}

fn revision(q: &Value) -> u64 {
    meta_str(q, "resourceVersion").parse().unwrap_or(0)
}

#[derive(Default)]
struct State {
    /// Namespace → quota name → quota.
    quotas: HashMap<String, BTreeMap<String, Arc<Value>>>,
}

impl State {
    /// Keep `q` unless a newer version of it is held (admission's own
    /// status writes land before the watch brings them).
    fn put(&mut self, q: Value) {
        let ns = meta_str(&q, "namespace").to_string();
        let name = meta_str(&q, "name").to_string();
        let held = self.quotas.entry(ns).or_default();
        if held.get(&name).is_some_and(|h| revision(h) > revision(&q)) {
            return;
        }
        held.insert(name, Arc::new(q));
    }

    fn remove(&mut self, q: &Value) {
        let ns = meta_str(q, "namespace");
        if let Some(held) = self.quotas.get_mut(ns) {
            held.remove(meta_str(q, "name"));
            if held.is_empty() {
                self.quotas.remove(ns);
            }
        }
    }
}

/// The quotas as a list + watch last saw them, and the charging of writes.
pub(crate) struct Quotas {
    state: Arc<RwLock<State>>,
    synced: watch::Sender<bool>,
    follower: Mutex<Option<JoinHandle<()>>>,
    /// Namespaces whose quota create was admitted lately, with when.
    created: Mutex<HashMap<String, Instant>>,
    /// One charge at a time per namespace (kube's per-namespace work queue).
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// The plugin's configuration (`limitedResources`).
    config: ResourceQuotaConfig,
}

impl Quotas {
    /// Empty; the follower starts with the first write.
    pub(crate) fn new(config: ResourceQuotaConfig) -> Quotas {
        Quotas {
            state: Arc::new(RwLock::new(State::default())),
            synced: watch::channel(false).0,
            follower: Mutex::new(None),
            created: Mutex::new(HashMap::new()),
            locks: Mutex::new(HashMap::new()),
            config,
        }
    }

    fn ensure_following(&self, store: &Arc<dyn StoreApi>) {
        let Ok(mut follower) = self.follower.lock() else {
            return;
        };
        if follower.is_none() {
            let informer = Informer::new(
                "resource quota admission",
                store.clone(),
                vec![resource_quotas()],
            )
            .report_synced(self.synced.clone());
            let state = Arc::downgrade(&self.state);
            *follower = Some(tokio::spawn(follow(informer, state)));
        }
    }

    /// Whether `namespace` had a quota created through here lately.
    fn created_lately(&self, namespace: &str) -> bool {
        let Ok(mut c) = self.created.lock() else {
            return true;
        };
        match c.get(namespace) {
            Some(at) if at.elapsed() < LIVE_LOOKUP => true,
            Some(_) => {
                c.remove(namespace);
                false
            }
            None => false,
        }
    }

    /// The namespace's quotas: from the cache when it can answer.
    async fn quotas(&self, store: &Arc<dyn StoreApi>, namespace: &str) -> ApiResult<Vec<Value>> {
        if *self.synced.borrow() && !self.created_lately(namespace) {
            let Ok(st) = self.state.read() else {
                return Ok(Vec::new());
            };
            return Ok(st
                .quotas
                .get(namespace)
                .map(|m| m.values().map(|q| (**q).clone()).collect())
                .unwrap_or_default());
        }
        Ok(store.list(&resource_quotas(), Some(namespace)).await?.items)
    }

    /// Whether the namespace may have quotas (no store read when the cache
    /// is synced and says no).
    fn may_have_quotas(&self, namespace: &str) -> bool {
        if !*self.synced.borrow() || self.created_lately(namespace) {
            return true;
        }
        self.state
            .read()
            .map_or(true, |st| st.quotas.contains_key(namespace))
    }

    fn namespace_lock(&self, namespace: &str) -> Arc<tokio::sync::Mutex<()>> {
        let Ok(mut locks) = self.locks.lock() else {
            return Arc::new(tokio::sync::Mutex::new(()));
        };
        locks.entry(namespace.to_string()).or_default().clone()
    }

    /// Check `object` (the admitted object of `req`) against the
    /// namespace's quotas and charge it: kube's `ResourceQuota` plugin.
    pub(crate) async fn admit(
        &self,
        store: &Arc<dyn StoreApi>,
        req: &AdmissionRequest,
        object: &Value,
        display_name: &str,
    ) -> ApiResult<()> {
        // Subresources, cluster-scoped writes and namespace creates are
        // not quota'd.
        if !req.subresource.is_empty()
            || req.namespace.is_empty()
            || (req.gr.group.is_empty() && req.gr.resource == "namespaces")
        {
            return Ok(());
        }
        self.ensure_following(store);
        if req.gr == resource_quotas() && req.operation == Operation::Create && !req.dry_run {
            if let Ok(mut c) = self.created.lock() {
                let now = Instant::now();
                c.retain(|_, at| now.duration_since(*at) < LIVE_LOOKUP);
                c.insert(req.namespace.clone(), now);
            }
        }
        // With `limitedResources`, no quota may itself be a refusal.
        let limited = &self.config.limited_resources;
        if limited.is_empty() && !self.may_have_quotas(&req.namespace) {
            return Ok(());
        }
        let Some(ev) = Evaluator::for_resource(&req.gr) else {
            return Ok(());
        };
        if !ev.handles(req.operation) {
            return Ok(());
        }
        let lock = self.namespace_lock(&req.namespace);
        let _held = lock.lock().await;
        let mut quotas = self.quotas(store, &req.namespace).await?;
        if quotas.is_empty() && limited.is_empty() {
            return Ok(());
        }
        let mut object = object.clone();
        if meta_str(&object, "namespace").is_empty() {
            keelson_apimachinery::meta::set_meta_str(&mut object, "namespace", &req.namespace);
        }
        let write = check::Write {
            op: req.operation,
            object: &object,
            old: req.old_object.as_ref(),
            gr: &req.gr,
            limited,
        };
        let name = if display_name.is_empty() {
            "Unknown"
        } else {
            display_name
        };
        let forbidden = |d: check::Denied| match d {
            check::Denied::Forbidden(r) => ApiError::forbidden(&req.gr, name, &r.0),
            check::Denied::Plain(msg) => {
                ApiError::new(500, keelson_apimachinery::StatusReason::Unknown, msg)
            }
        };
        for attempt in 0..=RETRIES {
            let docs: Vec<QuotaDoc> = quotas.iter().map(QuotaDoc::from_json).collect();
            let changes = check::check_request(&docs, &ev, &write).map_err(forbidden)?;
            if req.dry_run || changes.is_empty() {
                return Ok(());
            }
            let mut failed = Vec::new();
            let mut last_err = None;
            for (i, used) in changes {
                match self.charge(store, &docs[i].object, &used).await {
                    Ok(()) => {}
                    Err(e) => {
                        failed.push(docs[i].name.clone());
                        last_err = Some(e);
                    }
                }
            }
            let Some(err) = last_err else {
                return Ok(());
            };
            if attempt == RETRIES {
                return Err(err);
            }
            // Read the quotas that changed under us afresh (after a pause:
            // the winning write may not be readable yet); those that were
            // charged are not charged again.
            tokio::time::sleep(RETRY_PAUSE * (attempt as u32 + 1)).await;
            quotas = store
                .list(&resource_quotas(), Some(&req.namespace))
                .await?
                .items
                .into_iter()
                .filter(|q| failed.iter().any(|f| f == meta_str(q, "name")))
                .collect();
            if quotas.is_empty() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Write `used` as the quota's `status.used`, with its
    /// `resourceVersion` as precondition.
    async fn charge(
        &self,
        store: &Arc<dyn StoreApi>,
        quota: &Value,
        used: &ResourceList,
    ) -> ApiResult<()> {
        let mut updated = quota.clone();
        if !updated.get("status").is_some_and(Value::is_object) {
            updated["status"] = serde_json::json!({});
        }
        updated["status"]["used"] = resources::to_json(used);
        let key = ObjectKey::new(
            resource_quotas(),
            meta_str(quota, "namespace"),
            meta_str(quota, "name"),
        );
        let stored = store
            .update(&key, updated, UpdateOptions::default())
            .await?;
        if let Ok(mut st) = self.state.write() {
            st.put(stored);
        }
        Ok(())
    }
}

impl Drop for Quotas {
    fn drop(&mut self) {
        if let Ok(mut h) = self.follower.lock() {
            if let Some(h) = h.take() {
                h.abort();
            }
        }
    }
}

async fn follow(mut informer: Informer, state: Weak<RwLock<State>>) {
    loop {
        let event = informer.next().await;
        let Some(st) = state.upgrade() else { return };
        let Ok(mut st) = st.write() else { return };
        match event {
            Event::Listed(listings) => {
                *st = State::default();
                for q in listings.into_iter().flat_map(|l| l.items) {
                    st.put(q);
                }
            }
            Event::Changed(_, change) => match change.event_type {
                EventType::Added | EventType::Modified => st.put(change.object),
                EventType::Deleted => st.remove(&change.object),
                _ => {}
            },
            Event::Resync => {}
        }
    }
}
