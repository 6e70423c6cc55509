//! kube-apiserver's storage metrics over a [`LocalStore`]:
//! `etcd_request_duration_seconds`, `etcd_requests_total` and
//! `etcd_request_errors_total` `{operation,group,resource}` for every
//! storage call, and the object counts `apiserver_storage_objects{resource}`
//! / `apiserver_resource_objects{group,resource}` of every resource the
//! store has served, counted from storage before each scrape (kube polls
//! them every `--etcd-count-metric-poll-period`; here a gauge is fresh
//! whenever it is read).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use keelson_api::{
    ChangeStream, CreateOptions, DeleteOptions, DeleteOutcome, ListResult, ListStream, StoreApi,
    UpdateOptions,
};
use keelson_apimachinery::{ApiResult, GroupResource, ObjectKey};
use keelson_kv::RangeRequest;
use keelson_metrics::Metrics;
use serde_json::Value;

use crate::LocalStore;

/// A [`LocalStore`] recording kube's storage metrics into
/// [`Metrics::global`].
#[derive(Clone)]
pub struct MeteredStore {
    inner: Arc<Metered>,
}

struct Metered {
    store: LocalStore,
    seen: Mutex<BTreeSet<GroupResource>>,
}

impl MeteredStore {
    /// Wrap `store`; its object counts are refreshed before every scrape
    /// of [`Metrics::global`] ([`Metrics::scrape`]) while it lives.
    pub fn new(store: LocalStore) -> MeteredStore {
        let m = MeteredStore {
            inner: Arc::new(Metered {
                store,
                seen: Mutex::new(BTreeSet::new()),
            }),
        };
        // Weak: the registry must not keep a closed store (and its files)
        // open.
        let weak = Arc::downgrade(&m.inner);
        Metrics::global().on_scrape(Box::new(move || {
            let weak = weak.clone();
            Box::pin(async move {
                if let Some(inner) = weak.upgrade() {
                    MeteredStore { inner }.count_objects().await;
                }
            })
        }));
        m
    }

    /// The store underneath.
    pub fn inner(&self) -> &LocalStore {
        &self.inner.store
    }

    fn saw(&self, gr: &GroupResource) {
        if let Ok(mut s) = self.inner.seen.lock() {
            if !s.contains(gr) {
                s.insert(gr.clone());
            }
        }
    }

    /// Count the stored objects of every resource seen so far (kube's
    /// `UpdateStoreStats`; -1 when the count fails).
    pub async fn count_objects(&self) {
        let seen: Vec<GroupResource> = match self.inner.seen.lock() {
            Ok(s) => s.iter().cloned().collect(),
            Err(_) => return,
        };
        for gr in seen {
            let count = match self.inner.store.config().key_layout.prefix(&gr, None) {
                Ok(prefix) => match self
                    .inner
                    .store
                    .kv()
                    .range(RangeRequest::prefix(prefix))
                    .await
                {
                    Ok(read) => read.kvs.len() as i64,
                    Err(_) => -1,
                },
                Err(_) => -1,
            };
            Metrics::global().set_object_count(&gr.group, &gr.resource, count);
        }
    }

    fn record<T>(&self, operation: &str, gr: &GroupResource, started: Instant, r: &ApiResult<T>) {
        self.saw(gr);
        // Like kube, only a failure of storage itself is an error: a
        // missing object or a failed precondition is an answer.
        let failed = matches!(r, Err(e) if e.code >= 500);
        Metrics::global().storage_request(
            operation,
            &gr.group,
            &gr.resource,
            started.elapsed(),
            failed,
        );
    }
}

#[async_trait]
impl StoreApi for MeteredStore {
    async fn create(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: CreateOptions,
    ) -> ApiResult<Value> {
        let t = Instant::now();
        let r = self.inner.store.create(key, object, opts).await;
        self.record("create", &key.gr, t, &r);
        r
    }

    async fn get(&self, key: &ObjectKey) -> ApiResult<Value> {
        let t = Instant::now();
        let r = self.inner.store.get(key).await;
        self.record("get", &key.gr, t, &r);
        r
    }

    async fn update(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: UpdateOptions,
    ) -> ApiResult<Value> {
        let t = Instant::now();
        let r = self.inner.store.update(key, object, opts).await;
        self.record("update", &key.gr, t, &r);
        r
    }

    async fn delete(&self, key: &ObjectKey, opts: DeleteOptions) -> ApiResult<DeleteOutcome> {
        let t = Instant::now();
        let r = self.inner.store.delete(key, opts).await;
        self.record("delete", &key.gr, t, &r);
        r
    }

    async fn list(&self, gr: &GroupResource, namespace: Option<&str>) -> ApiResult<ListResult> {
        let t = Instant::now();
        let r = self.inner.store.list(gr, namespace).await;
        self.record("list", gr, t, &r);
        r
    }

    async fn list_stream(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> ApiResult<ListStream> {
        let t = Instant::now();
        let r = self.inner.store.list_stream(gr, namespace).await;
        self.record("list", gr, t, &r);
        r
    }

    async fn list_at(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        revision: u64,
    ) -> ApiResult<ListResult> {
        let t = Instant::now();
        let r = self.inner.store.list_at(gr, namespace, revision).await;
        self.record("list", gr, t, &r);
        r
    }

    async fn current_revision(&self) -> ApiResult<u64> {
        self.inner.store.current_revision().await
    }

    async fn compacted_revision(&self) -> ApiResult<u64> {
        self.inner.store.compacted_revision().await
    }

    async fn watch(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        self.saw(gr);
        self.inner.store.watch(gr, namespace, after_revision).await
    }

    async fn ready(&self) -> ApiResult<()> {
        self.inner.store.ready().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> String {
        String::from_utf8(Metrics::global().encode()).unwrap()
    }

    #[tokio::test]
    async fn storage_calls_and_object_counts_are_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::open(dir.path(), crate::StoreConfig::default())
            .await
            .unwrap();
        let m = MeteredStore::new(store);
        let gr = GroupResource::new("apps", "deployments");
        for name in ["a", "b"] {
            let key = ObjectKey::new(gr.clone(), "default", name);
            let obj = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"}});
            m.create(&key, obj, CreateOptions::default()).await.unwrap();
        }
        let missing = m.get(&ObjectKey::new(gr.clone(), "default", "nope")).await;
        assert!(missing.is_err());
        m.count_objects().await;
        let t = text();
        assert!(
            t.contains(
                r#"etcd_requests_total{group="apps",operation="create",resource="deployments"} 2"#
            ),
            "{t}"
        );
        assert!(
            t.contains(
                r#"etcd_requests_total{group="apps",operation="get",resource="deployments"} 1"#
            ),
            "{t}"
        );
        assert!(
            !t.contains(r#"etcd_request_errors_total{group="apps",operation="get""#),
            "{t}"
        );
        assert!(t.contains(r#"etcd_request_duration_seconds_bucket{group="apps",operation="create",resource="deployments",le="60"} 2"#), "{t}");
        assert!(
            t.contains(r#"apiserver_resource_objects{group="apps",resource="deployments"} 2"#),
            "{t}"
        );
        assert!(
            t.contains(r#"apiserver_storage_objects{resource="deployments.apps"} 2"#),
            "{t}"
        );
    }
}
