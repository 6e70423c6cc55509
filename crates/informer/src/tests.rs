use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use keelson_api::{
    ChangeStream, CreateOptions, DeleteOptions, DeleteOutcome, ListResult, ObjectKey, StatusReason,
    UpdateOptions,
};
use serde_json::json;

use super::*;

/// A local store whose change streams can be broken with a `410 Expired`
/// on demand, and which counts its lists.
struct Flaky {
    inner: keelson_storage::LocalStore,
    breaks: watch::Sender<u32>,
    lists: AtomicUsize,
}

impl Flaky {
    fn break_watches(&self) {
        self.breaks.send_modify(|n| *n += 1);
    }
}

#[async_trait]
impl StoreApi for Flaky {
    async fn create(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: CreateOptions,
    ) -> ApiResult<Value> {
        self.inner.create(key, object, opts).await
    }
    async fn get(&self, key: &ObjectKey) -> ApiResult<Value> {
        self.inner.get(key).await
    }
    async fn update(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: UpdateOptions,
    ) -> ApiResult<Value> {
        self.inner.update(key, object, opts).await
    }
    async fn delete(&self, key: &ObjectKey, opts: DeleteOptions) -> ApiResult<DeleteOutcome> {
        self.inner.delete(key, opts).await
    }
    async fn list(&self, gr: &GroupResource, namespace: Option<&str>) -> ApiResult<ListResult> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list(gr, namespace).await
    }
    async fn current_revision(&self) -> ApiResult<u64> {
        self.inner.current_revision().await
    }
    async fn watch(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        let changes = self.inner.watch(gr, namespace, after_revision).await?;
        let mut breaks = self.breaks.subscribe();
        let broken = stream::once(async move {
            let _ = breaks.changed().await;
            Err(ApiError::new(
                410,
                StatusReason::Expired,
                "too old resource version",
            ))
        });
        Ok(stream::select(changes, broken).boxed())
    }
}

async fn store() -> (tempfile::TempDir, Arc<Flaky>) {
    let dir = tempfile::tempdir().unwrap();
    let inner = keelson_storage::LocalStore::open(dir.path(), Default::default())
        .await
        .unwrap();
    let store = Flaky {
        inner,
        breaks: watch::channel(0).0,
        lists: AtomicUsize::new(0),
    };
    (dir, Arc::new(store))
}

fn configmaps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

async fn create(store: &dyn StoreApi, name: &str) {
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}});
    let key = ObjectKey::new(configmaps(), "default", name);
    store
        .create(&key, obj, CreateOptions::default())
        .await
        .unwrap();
}

fn names(event: &Event) -> Vec<String> {
    match event {
        Event::Listed(listings) => listings
            .iter()
            .flat_map(|l| &l.items)
            .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect(),
        other => panic!("expected a listing, got {other:?}"),
    }
}

async fn next(informer: &mut Informer) -> Event {
    tokio::time::timeout(Duration::from_secs(10), informer.next())
        .await
        .expect("no event")
}

fn informer(store: &Arc<Flaky>) -> Informer {
    Informer::new("test", store.clone(), vec![configmaps()]).retry_after(Duration::from_millis(10))
}

#[tokio::test]
async fn lists_then_hands_out_changes_and_reports_synced_once_the_listing_was_handled() {
    let (_dir, store) = store().await;
    create(store.as_ref(), "a").await;
    let mut informer = informer(&store);
    let synced = informer.synced();
    let listed = next(&mut informer).await;
    assert_eq!(names(&listed), ["a"]);
    assert!(!*synced.borrow(), "synced before the listing was handled");
    create(store.as_ref(), "b").await;
    match next(&mut informer).await {
        Event::Changed(gr, c) => {
            assert_eq!(gr, configmaps());
            assert_eq!(c.event_type, EventType::Added);
            assert_eq!(c.object["metadata"]["name"], "b");
        }
        other => panic!("expected a change, got {other:?}"),
    }
    assert!(*synced.borrow());
}

#[tokio::test]
async fn a_failed_watch_is_listed_again_with_what_changed_meanwhile() {
    let (_dir, store) = store().await;
    create(store.as_ref(), "a").await;
    let mut informer = informer(&store);
    let synced = informer.synced();
    assert_eq!(names(&next(&mut informer).await), ["a"]);
    store.break_watches();
    create(store.as_ref(), "b").await;
    // The change to "b" may come before the failure, or in the new listing.
    let relisted = loop {
        match next(&mut informer).await {
            Event::Changed(_, c) => assert_eq!(c.object["metadata"]["name"], "b"),
            listed => break listed,
        }
    };
    assert!(!*synced.borrow(), "synced while re-listing");
    assert_eq!(names(&relisted), ["a", "b"]);
    assert_eq!(store.lists.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_callers_failure_drops_the_watch_and_lists_again() {
    let (_dir, store) = store().await;
    let mut informer = informer(&store);
    assert_eq!(names(&next(&mut informer).await), Vec::<String>::new());
    informer.failed(&ApiError::unavailable("store down"));
    assert!(!informer.is_watching());
    create(store.as_ref(), "a").await;
    assert_eq!(names(&next(&mut informer).await), ["a"]);
    assert!(informer.is_watching());
    assert_eq!(store.lists.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn set_resources_lists_the_new_ones() {
    let (_dir, store) = store().await;
    let mut informer = informer(&store);
    next(&mut informer).await;
    let secrets = GroupResource::new("", "secrets");
    informer.set_resources(vec![configmaps(), secrets.clone()]);
    match next(&mut informer).await {
        Event::Listed(listings) => {
            let listed: Vec<GroupResource> = listings.into_iter().map(|l| l.resource).collect();
            assert_eq!(listed, [configmaps(), secrets]);
        }
        other => panic!("expected a listing, got {other:?}"),
    }
}

#[tokio::test]
async fn resync_ticks_while_nothing_changes() {
    let (_dir, store) = store().await;
    let mut informer = informer(&store).resync_every(Duration::from_millis(20));
    next(&mut informer).await;
    assert_eq!(next(&mut informer).await, Event::Resync);
}

#[tokio::test]
async fn a_cancelled_next_loses_no_change() {
    let (_dir, store) = store().await;
    let mut informer = informer(&store);
    next(&mut informer).await;
    let waited = tokio::time::timeout(Duration::from_millis(20), informer.next()).await;
    assert!(waited.is_err(), "an event came from nowhere: {waited:?}");
    create(store.as_ref(), "a").await;
    match next(&mut informer).await {
        Event::Changed(_, c) => assert_eq!(c.object["metadata"]["name"], "a"),
        other => panic!("expected a change, got {other:?}"),
    }
}
