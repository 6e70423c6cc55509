//! The objects the plugins read (kube's listers): ServiceAccounts,
//! PriorityClasses, LimitRanges, StorageClasses, IngressClasses and
//! RuntimeClasses, followed by one list + watch that starts with the first
//! write admitted. While it is not in sync (starting, or re-listing after a
//! failure) every read goes to the store instead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};

use keelson_api::{EventType, StoreApi};
use keelson_apimachinery::{ApiResult, GroupResource, ObjectKey};
use keelson_informer::{Event, Informer};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// `(namespace, name)` → object, per resource.
type Objects = HashMap<GroupResource, HashMap<(String, String), Value>>;

/// The resources the plugins look up.
pub(crate) fn followed() -> Vec<GroupResource> {
    vec![
        service_accounts(),
        priority_classes(),
        limit_ranges(),
        storage_classes(),
        ingress_classes(),
        runtime_classes(),
        // PodSecurity's namespace labels.
        GroupResource::new("", "namespaces"),
    ]
}

pub(crate) fn service_accounts() -> GroupResource {
    GroupResource::new("", "serviceaccounts")
}
pub(crate) fn priority_classes() -> GroupResource {
    GroupResource::new("scheduling.k8s.io", "priorityclasses")
}
pub(crate) fn limit_ranges() -> GroupResource {
    GroupResource::new("", "limitranges")
}
pub(crate) fn storage_classes() -> GroupResource {
    GroupResource::new("storage.k8s.io", "storageclasses")
}
pub(crate) fn ingress_classes() -> GroupResource {
    GroupResource::new("networking.k8s.io", "ingressclasses")
}
pub(crate) fn runtime_classes() -> GroupResource {
    GroupResource::new("node.k8s.io", "runtimeclasses")
}

/// The plugins' informer cache.
pub(crate) struct Cache {
    state: Arc<RwLock<Objects>>,
    synced: watch::Sender<bool>,
    follower: Mutex<Option<JoinHandle<()>>>,
}

fn key_of(obj: &Value) -> (String, String) {
    (
        keelson_apimachinery::meta::meta_str(obj, "namespace").to_string(),
        keelson_apimachinery::meta::meta_str(obj, "name").to_string(),
    )
}

impl Cache {
    /// Empty; following starts with the first read.
    pub(crate) fn new() -> Cache {
        Cache {
            state: Arc::new(RwLock::new(Objects::new())),
            synced: watch::channel(false).0,
            follower: Mutex::new(None),
        }
    }

    fn ensure_following(&self, store: &Arc<dyn StoreApi>) {
        let Ok(mut follower) = self.follower.lock() else {
            return;
        };
        if follower.is_none() {
            let informer = Informer::new("admission plugins", store.clone(), followed())
                .report_synced(self.synced.clone());
            *follower = Some(tokio::spawn(follow(informer, Arc::downgrade(&self.state))));
        }
    }

    /// The cached objects, when in sync.
    fn synced_state(
        &self,
        store: &Arc<dyn StoreApi>,
    ) -> Option<std::sync::RwLockReadGuard<'_, Objects>> {
        self.ensure_following(store);
        if !*self.synced.borrow() {
            return None;
        }
        self.state.read().ok()
    }

    /// One object from the cache (the store while not in sync); `None`
    /// when it does not exist.
    pub(crate) async fn get(
        &self,
        store: &Arc<dyn StoreApi>,
        gr: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> ApiResult<Option<Value>> {
        let cached = self.synced_state(store).map(|st| {
            let key = (namespace.to_string(), name.to_string());
            st.get(gr).and_then(|m| m.get(&key)).cloned()
        });
        match cached {
            Some(found) => Ok(found),
            None => live_get(store, gr, namespace, name).await,
        }
    }

    /// The objects of `gr` in `namespace` (every namespace: `None`), from
    /// the cache (the store while not in sync), in name order.
    pub(crate) async fn list(
        &self,
        store: &Arc<dyn StoreApi>,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Value>> {
        let cached: Option<Vec<Value>> = self.synced_state(store).map(|st| {
            st.get(gr)
                .map(|m| {
                    m.iter()
                        .filter(|((ns, _), _)| namespace.is_none_or(|n| n == ns))
                        .map(|(_, v)| v.clone())
                        .collect()
                })
                .unwrap_or_default()
        });
        let mut items = match cached {
            Some(items) => items,
            None => live_list(store, gr, namespace).await?,
        };
        items.sort_by_key(key_of);
        Ok(items)
    }
}

/// A read of the store itself (kube's live lookup).
pub(crate) async fn live_get(
    store: &Arc<dyn StoreApi>,
    gr: &GroupResource,
    namespace: &str,
    name: &str,
) -> ApiResult<Option<Value>> {
    match store
        .get(&ObjectKey::new(gr.clone(), namespace, name))
        .await
    {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// A list from the store itself.
pub(crate) async fn live_list(
    store: &Arc<dyn StoreApi>,
    gr: &GroupResource,
    namespace: Option<&str>,
) -> ApiResult<Vec<Value>> {
    let mut items = store.list(gr, namespace).await?.items;
    items.sort_by_key(key_of);
    Ok(items)
}

impl Drop for Cache {
    fn drop(&mut self) {
        if let Ok(mut h) = self.follower.lock() {
            if let Some(h) = h.take() {
                h.abort();
            }
        }
    }
}

async fn follow(mut informer: Informer, state: Weak<RwLock<Objects>>) {
    loop {
        let event = informer.next().await;
        let Some(st) = state.upgrade() else { return };
        let Ok(mut st) = st.write() else { return };
        match event {
            Event::Listed(listings) => {
                st.clear();
                for l in listings {
                    let m = st.entry(l.resource.clone()).or_default();
                    for item in l.items {
                        m.insert(key_of(&item), item);
                    }
                }
            }
            Event::Changed(gr, change) => {
                let m = st.entry(gr).or_default();
                match change.event_type {
                    EventType::Added | EventType::Modified => {
                        m.insert(key_of(&change.object), change.object);
                    }
                    EventType::Deleted => {
                        m.remove(&key_of(&change.object));
                    }
                    _ => {}
                }
            }
            Event::Resync => {}
        }
    }
}
