//! Feeding the RBAC index from the store through a [`keelson_informer::Informer`]
//! over the four RBAC resources: each listing replaces what the index
//! held, each change is applied to it; after a failure the informer lists
//! all four again.

use std::sync::Arc;

use keelson_api::{EventType, GroupResource, StoreApi};
use keelson_informer::{Event, Informer};

use super::{Rbac, GROUP, RESOURCES};

/// Keep `rbac` in step with the store until the returned tasks are aborted.
/// The index reports synced once every resource has been listed, and
/// stays so through later re-listings (it serves what it last knew).
pub fn follow(rbac: Arc<Rbac>, store: Arc<dyn StoreApi>) -> Vec<tokio::task::JoinHandle<()>> {
    let resources = RESOURCES
        .iter()
        .map(|resource| GroupResource::new(GROUP, resource))
        .collect();
    let mut informer = Informer::new("RBAC index", store, resources);
    vec![tokio::spawn(async move {
        loop {
            match informer.next().await {
                Event::Listed(listings) => {
                    for listing in &listings {
                        rbac.replace(&listing.resource.resource, &listing.items);
                    }
                    rbac.mark_synced();
                }
                Event::Changed(gr, change) => match change.event_type {
                    EventType::Added | EventType::Modified | EventType::Deleted => {
                        rbac.apply(&gr.resource, change.event_type, &change.object)
                    }
                    EventType::Bookmark | EventType::Error => {}
                },
                Event::Resync => {}
            }
        }
    })]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use keelson_api::{CreateOptions, DeleteOptions, ObjectKey};
    use serde_json::{json, Value};

    use super::*;
    use crate::attributes::Attributes;
    use crate::user::UserInfo;

    fn can_list_pods(rbac: &Rbac) -> bool {
        rbac.authorize(&Attributes {
            user: UserInfo::new("alice", vec!["system:authenticated".into()]),
            verb: "list".into(),
            resource_request: true,
            namespace: "a".into(),
            resource: "pods".into(),
            ..Default::default()
        })
        .allowed
    }

    async fn create(store: &dyn StoreApi, resource: &str, name: &str, obj: Value) {
        let key = ObjectKey::new(GroupResource::new(GROUP, resource), "a", name);
        store
            .create(&key, obj, CreateOptions::default())
            .await
            .unwrap();
    }

    /// Wait (up to 5 s) until alice's access is `want`.
    async fn until_allowed(rbac: &Rbac, want: bool) {
        for _ in 0..500 {
            if can_list_pods(rbac) == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("alice's access never became {want}");
    }

    #[tokio::test]
    async fn index_follows_listing_and_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn StoreApi> = Arc::new(
            keelson_storage::LocalStore::open(dir.path(), Default::default())
                .await
                .unwrap(),
        );
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "r", "namespace": "a"},
            "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]});
        create(store.as_ref(), "roles", "r", role).await;
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "a"},
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "alice"}]});
        create(store.as_ref(), "rolebindings", "b", binding.clone()).await;

        let rbac = Rbac::new();
        let mut synced = rbac.synced();
        assert!(!*synced.borrow());
        let tasks = follow(rbac.clone(), store.clone());
        tokio::time::timeout(Duration::from_secs(5), synced.wait_for(|s| *s))
            .await
            .expect("synced in time")
            .unwrap();
        // Synced means listed: the binding written before is known.
        assert!(can_list_pods(&rbac));

        let key = ObjectKey::new(GroupResource::new(GROUP, "rolebindings"), "a", "b");
        store.delete(&key, DeleteOptions::default()).await.unwrap();
        until_allowed(&rbac, false).await;
        create(store.as_ref(), "rolebindings", "b", binding).await;
        until_allowed(&rbac, true).await;
        tasks.iter().for_each(|t| t.abort());
    }
}
