//! NamespaceLifecycle (`k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle`):
//! no new content in missing or terminating namespaces, and the system
//! namespaces cannot be deleted.
//!
//! Like kube's plugin, a create reads the namespace from a local cache
//! ([`Namespaces`]: a list + watch of namespaces) and asks the store only
//! when the cache cannot answer for sure: while it is not in sync, for a
//! namespace it does not hold (perhaps just created), for one it holds as
//! terminating (perhaps gone since: `404` then, not `403`), and for one
//! whose delete this admission saw in the last 30 s (kube's
//! `forceLiveLookupCache`). So an Active namespace costs no store read, and
//! a create that follows a namespace delete through the same admission
//! still sees it terminating.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use keelson_api::{EventType, StoreApi};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey, StatusCause};
use serde_json::Value;
use tokio::task::JoinHandle;

/// Namespaces that may never be deleted.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
}

/// Access reviews never learn about the namespace's state.
fn is_access_review(gr: &GroupResource) -> bool {
    gr.group == "authorization.k8s.io" && gr.resource == "localsubjectaccessreviews"
}

/// kube's `forceLiveLookupTTL`: how long after a namespace delete its
/// creates read the store.
const FORCE_LIVE_LOOKUP: Duration = Duration::from_secs(30);

/// How long the follower waits before listing again after a failure.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The namespaces' phases as a list + watch last saw them (kube's
/// namespace lister), and the namespaces deleted lately.
pub(crate) struct Namespaces {
    state: Arc<Mutex<CacheState>>,
    follower: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Default)]
struct CacheState {
    /// The map is a listing plus every change since (false between a
    /// failure and the next listing).
    synced: bool,
    /// Namespace name → terminating.
    terminating: HashMap<String, bool>,
    /// Namespaces whose delete was admitted, with when.
    deleted: HashMap<String, Instant>,
}

/// What the cache says about one namespace.
#[derive(Debug, PartialEq, Eq)]
enum Cached {
    /// Known Active and not deleted lately: no store read needed.
    Active,
    /// Anything else: read the store.
    Ask,
}

impl Namespaces {
    /// An empty cache; the follower starts with the first create.
    pub(crate) fn new() -> Namespaces {
        Namespaces {
            state: Arc::new(Mutex::new(CacheState::default())),
            follower: Mutex::new(None),
        }
    }

    /// Start following the store's namespaces (once; needs a runtime).
    fn ensure_following(&self, store: &Arc<dyn StoreApi>) {
        let Ok(mut follower) = self.follower.lock() else {
            return;
        };
        if follower.is_none() {
            let state = Arc::downgrade(&self.state);
            *follower = Some(tokio::spawn(follow(store.clone(), state)));
        }
    }

    fn lookup(&self, namespace: &str) -> Cached {
        let Ok(mut st) = self.state.lock() else {
            return Cached::Ask;
        };
        if let Some(at) = st.deleted.get(namespace) {
            if at.elapsed() < FORCE_LIVE_LOOKUP {
                return Cached::Ask;
            }
            st.deleted.remove(namespace);
        }
        match (st.synced, st.terminating.get(namespace)) {
            (true, Some(false)) => Cached::Active,
            _ => Cached::Ask,
        }
    }

    /// A delete of `namespace` was admitted: its creates read the store
    /// for a while, whatever the cache says.
    pub(crate) fn deleting(&self, namespace: &str) {
        if let Ok(mut st) = self.state.lock() {
            let now = Instant::now();
            st.deleted
                .retain(|_, at| now.duration_since(*at) < FORCE_LIVE_LOOKUP);
            st.deleted.insert(namespace.to_string(), now);
        }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        if let Ok(mut h) = self.follower.lock() {
            if let Some(h) = h.take() {
                h.abort();
            }
        }
    }
}

/// List and watch namespaces into `state` until it is dropped, listing
/// again after each failure.
async fn follow(store: Arc<dyn StoreApi>, state: Weak<Mutex<CacheState>>) {
    loop {
        if let Err(e) = follow_once(&*store, &state).await {
            tracing::debug!(error = %e.message, "namespace lifecycle cache: re-listing");
        }
        let Some(st) = state.upgrade() else { return };
        if let Ok(mut st) = st.lock() {
            st.synced = false;
        }
        drop(st);
        tokio::time::sleep(RETRY_AFTER).await;
    }
}

async fn follow_once(store: &dyn StoreApi, state: &Weak<Mutex<CacheState>>) -> ApiResult<()> {
    let listed = store.list(&namespaces(), None).await?;
    let mut changes = store
        .watch(&namespaces(), None, listed.resource_version)
        .await?;
    {
        let Some(st) = state.upgrade() else {
            return Ok(());
        };
        let mut st = st.lock().map_err(|_| ApiError::internal("poisoned"))?;
        st.terminating = listed
            .items
            .iter()
            .map(|ns| (meta_name(ns), is_terminating(ns)))
            .collect();
        st.synced = true;
    }
    while let Some(change) = changes.next().await {
        let change = change?;
        let Some(st) = state.upgrade() else {
            return Ok(());
        };
        let mut st = st.lock().map_err(|_| ApiError::internal("poisoned"))?;
        let name = meta_name(&change.object);
        match change.event_type {
            EventType::Added | EventType::Modified => {
                let terminating = is_terminating(&change.object);
                st.terminating.insert(name, terminating);
            }
            EventType::Deleted => {
                st.terminating.remove(&name);
            }
            _ => {}
        }
    }
    Err(ApiError::internal("the namespaces' change stream ended"))
}

fn meta_name(obj: &Value) -> String {
    keelson_apimachinery::meta::meta_str(obj, "name").to_string()
}

/// Admit a create of `gr` named `name` (object name or generateName) in
/// `namespace`: `404` if the namespace does not exist, `403` if it is being
/// terminated.
pub(crate) async fn check_create(
    store: &Arc<dyn StoreApi>,
    cache: &Namespaces,
    gr: &GroupResource,
    namespace: &str,
    name: &str,
) -> ApiResult<()> {
    if namespace.is_empty() || *gr == namespaces() || is_access_review(gr) {
        return Ok(());
    }
    cache.ensure_following(store);
    if cache.lookup(namespace) == Cached::Active {
        return Ok(());
    }
    let key = ObjectKey::new(namespaces(), "", namespace);
    let ns = match store.get(&key).await {
        Ok(ns) => ns,
        Err(e) if e.is_not_found() => return Err(ApiError::not_found(&namespaces(), namespace)),
        Err(e) => return Err(e),
    };
    if is_terminating(&ns) {
        return Err(terminating(gr, namespace, name));
    }
    Ok(())
}

fn is_terminating(ns: &Value) -> bool {
    let deleting = ns
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|v| !v.is_null());
    let phase = ns.get("status").and_then(|s| s.get("phase"));
    deleting || phase.and_then(Value::as_str) == Some("Terminating")
}

fn terminating(gr: &GroupResource, namespace: &str, name: &str) -> ApiError {
    let mut e = ApiError::forbidden(
        gr,
        name,
        &format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        ),
    );
    if let Some(d) = e.details.as_mut() {
        d.causes.push(StatusCause {
            reason: "NamespaceTerminating".into(),
            message: format!("namespace {namespace} is being terminated"),
            field: "metadata.namespace".into(),
        });
    }
    e
}

/// Admit a delete: the system namespaces are immortal.
pub(crate) fn check_delete(gr: &GroupResource, name: &str) -> ApiResult<()> {
    if *gr == namespaces() && IMMORTAL_NAMESPACES.contains(&name) {
        return Err(ApiError::forbidden(
            gr,
            name,
            "this namespace may not be deleted",
        ));
    }
    Ok(())
}
