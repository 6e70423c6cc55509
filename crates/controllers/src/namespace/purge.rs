//! Deleting the contents of a namespace that is gone.

use keelson_api::{ApiResult, DeleteOptions, GroupResource, ObjectKey, StoreApi};
use keelson_apimachinery::meta::meta_str;

/// Whether namespace `ns` is gone or marked for deletion.
pub async fn namespace_gone(store: &dyn StoreApi, ns: &str) -> ApiResult<bool> {
    match store
        .get(&ObjectKey::new(
            GroupResource::new("", "namespaces"),
            "",
            ns,
        ))
        .await
    {
        Ok(obj) => Ok(!meta_str(&obj, "deletionTimestamp").is_empty()),
        Err(e) if e.is_not_found() => Ok(true),
        Err(e) => Err(e),
    }
}

/// Delete every object of `resources` in namespace `ns`, unless the
/// namespace exists (again) and is not terminating; returns how many were
/// deleted.
///
/// Each resource is listed first and the namespace checked after: whatever
/// the list saw existed while the namespace was gone, so it belongs to the
/// deleted namespace even if one of the same name is created meanwhile.
/// Deletes carry the listed object's uid as a precondition, so an object
/// re-created under the same name is never the one removed.
pub async fn purge(
    store: &dyn StoreApi,
    resources: &[GroupResource],
    ns: &str,
) -> ApiResult<usize> {
    let mut deleted = 0;
    for gr in resources {
        let items = store.list(gr, Some(ns)).await?.items;
        if items.is_empty() {
            continue;
        }
        if !namespace_gone(store, ns).await? {
            return Ok(deleted);
        }
        for item in items {
            let key = ObjectKey::new(gr.clone(), ns, meta_str(&item, "name"));
            let opts = DeleteOptions {
                precondition_uid: Some(meta_str(&item, "uid").to_string())
                    .filter(|u| !u.is_empty()),
                propagation_policy: Some(
                    keelson_apimachinery::options::PropagationPolicy::Background,
                ),
                ..DeleteOptions::default()
            };
            match store.delete(&key, opts).await {
                Ok(outcome) => {
                    crate::service_alloc::release_deleted(store, gr, &outcome).await;
                    deleted += 1;
                }
                // Already gone, or replaced by a new object of that name.
                Err(e) if e.is_not_found() || e.is_conflict() => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(deleted)
}
