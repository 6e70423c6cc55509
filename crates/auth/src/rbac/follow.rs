//! Feeding the RBAC index from the store: list each resource, then follow
//! its change stream from the list's revision; after a failure, list again.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use keelson_api::{EventType, GroupResource, StoreApi};

use super::{Rbac, GROUP, RESOURCES};

/// How long a follower waits after the store failed.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Keep `rbac` in step with the store until the returned tasks are aborted.
/// The index reports synced once every resource has been listed.
pub fn follow(rbac: Arc<Rbac>, store: Arc<dyn StoreApi>) -> Vec<tokio::task::JoinHandle<()>> {
    let listed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    RESOURCES
        .iter()
        .map(|resource| {
            let (rbac, store, listed) = (rbac.clone(), store.clone(), listed.clone());
            tokio::spawn(async move {
                let mut first = true;
                loop {
                    match follow_one(&rbac, store.as_ref(), resource, &mut first, &listed).await {
                        Ok(()) => tracing::debug!(resource, "RBAC watch ended; re-listing"),
                        Err(e) => {
                            tracing::warn!(resource, error = %e.message, "RBAC index: re-listing")
                        }
                    }
                    tokio::time::sleep(RETRY_AFTER).await;
                }
            })
        })
        .collect()
}

async fn follow_one(
    rbac: &Rbac,
    store: &dyn StoreApi,
    resource: &str,
    first: &mut bool,
    listed: &std::sync::atomic::AtomicUsize,
) -> keelson_api::ApiResult<()> {
    let gr = GroupResource::new(GROUP, resource);
    let list = store.list(&gr, None).await?;
    rbac.replace(resource, &list.items);
    if std::mem::take(first)
        && listed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == RESOURCES.len()
    {
        rbac.mark_synced();
    }
    let mut changes = store.watch(&gr, None, list.resource_version).await?;
    while let Some(change) = changes.next().await {
        let change = change?;
        match change.event_type {
            EventType::Added | EventType::Modified | EventType::Deleted => {
                rbac.apply(resource, change.event_type, &change.object)
            }
            EventType::Bookmark | EventType::Error => {}
        }
    }
    Ok(())
}
