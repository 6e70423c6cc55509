//! A policy's `paramKind` and a binding's `paramRef`: which parameter
//! objects a binding evaluates its policy with (kube's `CollectParams`),
//! read from a list + watch of each parameter resource in use.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock, Weak};

use keelson_api::{EventType, ObjectKey, StoreApi};
use keelson_apimachinery::{ApiResult, GroupResource};
use keelson_informer::{Event, Informer};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::matching::Selector;
use crate::registry::CatalogSnapshot;

/// A policy's `spec.paramKind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamKind {
    pub(crate) api_version: String,
    pub(crate) kind: String,
}

impl ParamKind {
    pub(crate) fn from_json(v: Option<&Value>) -> Option<ParamKind> {
        let v = v.filter(|v| v.is_object())?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Some(ParamKind {
            api_version: s("apiVersion"),
            kind: s("kind"),
        })
    }

    fn group_version(&self) -> (&str, &str) {
        match self.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", self.api_version.as_str()),
        }
    }
}

/// A binding's `spec.paramRef`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParamRef {
    name: String,
    namespace: String,
    selector: Option<Selector>,
    /// `parameterNotFoundAction: Deny`.
    deny_when_missing: bool,
}

impl ParamRef {
    pub(crate) fn from_json(v: Option<&Value>) -> Option<ParamRef> {
        let v = v.filter(|v| v.is_object())?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Some(ParamRef {
            name: s("name"),
            namespace: s("namespace"),
            selector: v
                .get("selector")
                .filter(|s| s.is_object())
                .map(|s| Selector::from_json(Some(s))),
            deny_when_missing: s("parameterNotFoundAction") == "Deny",
        })
    }
}

/// Where a paramKind's objects live.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    gr: GroupResource,
    namespaced: bool,
}

/// The resource behind `kind`, or kube's policy configuration error.
pub(crate) fn resolve(catalog: &CatalogSnapshot, kind: &ParamKind) -> Result<Resolved, String> {
    let (group, version) = kind.group_version();
    catalog
        .lookup_kind(group, version, &kind.kind)
        .map(|info| Resolved {
            gr: GroupResource::new(&info.group, &info.plural),
            namespaced: info.namespaced,
        })
        .ok_or_else(|| {
            format!(
                "failed to find resource referenced by paramKind: '{group}/{version}, Kind={}'",
                kind.kind
            )
        })
}

/// One followed parameter resource.
struct Followed {
    /// (namespace, name) → object.
    items: Arc<RwLock<BTreeMap<(String, String), Value>>>,
    synced: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Drop for Followed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The parameter resources in use, each followed by a list + watch once a
/// binding first reads it; until it has synced reads go to the store.
#[derive(Default)]
pub(crate) struct ParamCache {
    followed: Mutex<HashMap<GroupResource, Arc<Followed>>>,
}

fn key_of(obj: &Value) -> (String, String) {
    (
        keelson_apimachinery::meta::meta_str(obj, "namespace").to_string(),
        keelson_apimachinery::meta::meta_str(obj, "name").to_string(),
    )
}

async fn follow(mut informer: Informer, items: Weak<RwLock<BTreeMap<(String, String), Value>>>) {
    loop {
        let event = informer.next().await;
        let Some(items) = items.upgrade() else { return };
        let Ok(mut items) = items.write() else { return };
        match event {
            Event::Listed(listings) => {
                items.clear();
                for l in listings {
                    for obj in l.items {
                        items.insert(key_of(&obj), obj);
                    }
                }
            }
            Event::Changed(_, change) => match change.event_type {
                EventType::Added | EventType::Modified => {
                    items.insert(key_of(&change.object), change.object);
                }
                EventType::Deleted => {
                    items.remove(&key_of(&change.object));
                }
                _ => {}
            },
            Event::Resync => {}
        }
    }
}

impl ParamCache {
    fn followed(&self, store: &Arc<dyn StoreApi>, gr: &GroupResource) -> Option<Arc<Followed>> {
        let mut map = self.followed.lock().ok()?;
        if let Some(f) = map.get(gr) {
            return Some(f.clone());
        }
        let items = Arc::new(RwLock::new(BTreeMap::new()));
        let synced = watch::channel(false).0;
        let informer = Informer::new("admission policy params", store.clone(), vec![gr.clone()])
            .report_synced(synced.clone());
        let task = tokio::spawn(follow(informer, Arc::downgrade(&items)));
        let f = Arc::new(Followed {
            items,
            synced,
            task,
        });
        map.insert(gr.clone(), f.clone());
        Some(f)
    }

    /// The object `namespace`/`name`, if it exists.
    async fn get(
        &self,
        store: &Arc<dyn StoreApi>,
        gr: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> ApiResult<Option<Value>> {
        if let Some(f) = self.followed(store, gr) {
            if *f.synced.borrow() {
                if let Some(v) = f
                    .items
                    .read()
                    .ok()
                    .and_then(|m| m.get(&(namespace.to_string(), name.to_string())).cloned())
                {
                    return Ok(Some(v));
                }
            }
        }
        // Not synced yet, or created after the cache last heard: the store.
        match store
            .get(&ObjectKey::new(gr.clone(), namespace, name))
            .await
        {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The objects (in `namespace`, or all when `None`) that `selector` matches.
    async fn select(
        &self,
        store: &Arc<dyn StoreApi>,
        gr: &GroupResource,
        namespace: Option<&str>,
        selector: &Selector,
    ) -> ApiResult<Vec<Value>> {
        let labels = |o: &Value| o.get("metadata").and_then(|m| m.get("labels")).cloned();
        let in_ns = |o: &Value| {
            namespace.is_none_or(|ns| keelson_apimachinery::meta::meta_str(o, "namespace") == ns)
        };
        if let Some(f) = self.followed(store, gr) {
            if *f.synced.borrow() {
                if let Ok(m) = f.items.read() {
                    return Ok(m
                        .values()
                        .filter(|o| in_ns(o) && selector.matches(labels(o).as_ref()))
                        .cloned()
                        .collect());
                }
            }
        }
        Ok(store
            .list(gr, namespace)
            .await?
            .items
            .into_iter()
            .filter(|o| in_ns(o) && selector.matches(labels(o).as_ref()))
            .collect())
    }

    /// kube's `CollectParams`: the params to evaluate a binding with
    /// (`[null]` without a paramKind or paramRef), or the binding's
    /// configuration error.
    pub(crate) async fn collect(
        &self,
        store: &Arc<dyn StoreApi>,
        kind: Option<(&ParamKind, &Resolved)>,
        param_ref: Option<&ParamRef>,
        request_namespace: &str,
    ) -> ApiResult<Result<Vec<Value>, String>> {
        let (Some((kind, resolved)), Some(r)) = (kind, param_ref) else {
            return Ok(Ok(vec![Value::Null]));
        };
        let namespace = if resolved.namespaced {
            if !r.namespace.is_empty() {
                Some(r.namespace.as_str())
            } else if !request_namespace.is_empty() {
                Some(request_namespace)
            } else {
                return Ok(Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into()));
            }
        } else {
            None
        };
        if !r.namespace.is_empty() && !resolved.namespaced {
            return Ok(Err(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
            ));
        }
        let mut params = if !r.name.is_empty() {
            if r.selector.is_some() {
                return Ok(Err(
                    "paramRef.name and paramRef.selector are mutually exclusive".into(),
                ));
            }
            self.get(store, &resolved.gr, namespace.unwrap_or(""), &r.name)
                .await?
                .into_iter()
                .collect::<Vec<_>>()
        } else if let Some(sel) = &r.selector {
            self.select(store, &resolved.gr, namespace, sel).await?
        } else {
            return Ok(Err("one of name or selector must be provided".into()));
        };
        if params.is_empty() && r.deny_when_missing {
            return Ok(Err(
                "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
            ));
        }
        // Params always show their kind (kube's wrappedParam).
        for p in &mut params {
            if let Some(m) = p.as_object_mut() {
                m.entry("apiVersion")
                    .or_insert_with(|| kind.api_version.clone().into());
                m.entry("kind").or_insert_with(|| kind.kind.clone().into());
            }
        }
        Ok(Ok(params))
    }
}
