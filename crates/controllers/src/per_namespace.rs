//! The loop shared by the controllers that keep one object in every
//! namespace (the `default` ServiceAccount, the `kube-root-ca.crt`
//! ConfigMap): list the namespaces and ensure the object in each, then
//! follow the namespaces' and the objects' change streams — a new
//! namespace gets its object at once, a deleted object comes back.

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt as _;
use keelson_api::{ApiResult, CreateOptions, EventType, GroupResource, ObjectKey, StoreApi};
use keelson_apimachinery::meta::meta_str;
use serde_json::Value;

/// What one per-namespace controller keeps.
pub(crate) trait PerNamespace: Send + Sync + 'static {
    /// For logs.
    fn name(&self) -> &'static str;
    /// The kept object's resource and name.
    fn resource(&self) -> GroupResource;
    fn object_name(&self) -> &'static str;
    /// The object to create in `namespace` (`None`: not now).
    fn desired(
        &self,
        store: &dyn StoreApi,
        namespace: &str,
    ) -> impl Future<Output = ApiResult<Option<Value>>> + Send;
}

/// Run `c` until `shutdown`, re-syncing after failures.
pub(crate) async fn run<C: PerNamespace>(
    c: C,
    store: Arc<dyn StoreApi>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            res = sync_and_follow(&c, store.as_ref()) => {
                if let Err(e) = res {
                    tracing::warn!(controller = c.name(), error = %e.message, "re-syncing");
                }
            }
        }
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep(crate::namespace::RETRY_AFTER) => {}
        }
    }
}

async fn ensure<C: PerNamespace>(c: &C, store: &dyn StoreApi, ns: &str) -> ApiResult<()> {
    let key = ObjectKey::new(c.resource(), ns, c.object_name());
    match store.get(&key).await {
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    let Some(obj) = c.desired(store, ns).await? else {
        return Ok(());
    };
    // The store does not run admission's NamespaceLifecycle: never write
    // into a namespace that is gone or terminating.
    let namespace = ObjectKey::new(GroupResource::new("", "namespaces"), "", ns);
    match store.get(&namespace).await {
        Ok(n) if live(&n) => {}
        Ok(_) => return Ok(()),
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e),
    }
    match store.create(&key, obj, CreateOptions::default()).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(e),
    }
}

fn live(ns: &Value) -> bool {
    meta_str(ns, "deletionTimestamp").is_empty()
}

async fn sync_and_follow<C: PerNamespace>(c: &C, store: &dyn StoreApi) -> ApiResult<()> {
    let namespaces = GroupResource::new("", "namespaces");
    let listed = store.list(&namespaces, None).await?;
    for ns in listed.items.iter().filter(|n| live(n)) {
        ensure(c, store, meta_str(ns, "name")).await?;
    }
    let objects_rev = store.current_revision().await?;
    let ns_changes = store
        .watch(&namespaces, None, listed.resource_version)
        .await?
        .map(|e| (true, e));
    let obj_changes = store
        .watch(&c.resource(), None, objects_rev)
        .await?
        .map(|e| (false, e));
    let mut changes = futures::stream::select(ns_changes, obj_changes);
    while let Some((is_ns, change)) = changes.next().await {
        let change = change?;
        match (is_ns, change.event_type) {
            (true, EventType::Added | EventType::Modified) if live(&change.object) => {
                ensure(c, store, meta_str(&change.object, "name")).await?
            }
            (false, EventType::Deleted) if meta_str(&change.object, "name") == c.object_name() => {
                let ns = meta_str(&change.object, "namespace").to_string();
                let ns_obj = store
                    .get(&ObjectKey::new(namespaces.clone(), "", &ns))
                    .await;
                if ns_obj.as_ref().is_ok_and(live) {
                    ensure(c, store, &ns).await?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
