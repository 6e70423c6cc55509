//! The loop shared by the controllers that keep one object in every
//! namespace (the `default` ServiceAccount, the `kube-root-ca.crt`
//! ConfigMap): list the namespaces and ensure the object in each, then
//! follow the namespaces' and the objects' change streams (one
//! [`Informer`]) — a new namespace gets its object at once, a deleted
//! object comes back.

use std::future::Future;
use std::sync::Arc;

use keelson_api::{ApiResult, CreateOptions, EventType, GroupResource, ObjectKey, StoreApi};
use keelson_apimachinery::meta::meta_str;
use keelson_informer::{Event, Informer};
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

/// Run `c` until `shutdown`, listing again after failures.
pub(crate) async fn run<C: PerNamespace>(
    c: C,
    store: Arc<dyn StoreApi>,
    shutdown: impl Future<Output = ()>,
) {
    let mut informer = Informer::new(c.name(), store.clone(), vec![namespaces(), c.resource()])
        .retry_after(crate::namespace::RETRY_AFTER);
    let follow = async {
        loop {
            let event = informer.next().await;
            if let Err(e) = handle(&c, store.as_ref(), event).await {
                informer.failed(&e);
            }
        }
    };
    tokio::select! {
        () = shutdown => {}
        () = follow => {}
    }
}

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
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
    let namespace = ObjectKey::new(namespaces(), "", ns);
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

/// Ensure the object in every live namespace listed, in a namespace that
/// appears, and again where it was deleted.
async fn handle<C: PerNamespace>(c: &C, store: &dyn StoreApi, event: Event) -> ApiResult<()> {
    match event {
        Event::Listed(listings) => {
            let listed = listings.iter().filter(|l| l.resource == namespaces());
            for ns in listed.flat_map(|l| &l.items).filter(|n| live(n)) {
                ensure(c, store, meta_str(ns, "name")).await?;
            }
        }
        Event::Changed(gr, change) => match change.event_type {
            EventType::Added | EventType::Modified
                if gr == namespaces() && live(&change.object) =>
            {
                ensure(c, store, meta_str(&change.object, "name")).await?
            }
            EventType::Deleted
                if gr == c.resource() && meta_str(&change.object, "name") == c.object_name() =>
            {
                let ns = meta_str(&change.object, "namespace").to_string();
                let ns_obj = store.get(&ObjectKey::new(namespaces(), "", &ns)).await;
                if ns_obj.as_ref().is_ok_and(live) {
                    ensure(c, store, &ns).await?;
                }
            }
            _ => {}
        },
        Event::Resync => {}
    }
    Ok(())
}
