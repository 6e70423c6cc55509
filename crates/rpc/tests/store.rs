//! StoreApi over gRPC: a real tonic server over an in-test store, called
//! through `RemoteStore`.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use keelson_api::{
    ChangeEvent, ChangeStream, CreateOptions, DeleteOptions, DeleteOutcome, EventType, ListResult,
    StoreApi, UpdateOptions,
};
use keelson_apimachinery::{
    ApiError, ApiResult, FieldError, GroupResource, ObjectKey, StatusCause, StatusDetails,
};
use keelson_rpc::{RemoteStore, StoreGrpc};
use serde_json::{json, Value};
use tonic::transport::Server;

/// What the fake store saw, to prove options crossed the wire.
#[derive(Debug, Default, Clone, PartialEq)]
struct Seen {
    create: Option<CreateOptions>,
    update: Option<UpdateOptions>,
    delete: Option<DeleteOptions>,
    list_namespace: Option<Option<String>>,
}

#[derive(Default)]
struct FakeStore {
    objects: Mutex<BTreeMap<(String, String, String, String), Value>>,
    rev: Mutex<u64>,
    seen: Mutex<Seen>,
    broken: bool,
}

fn k(key: &ObjectKey) -> (String, String, String, String) {
    (
        key.gr.group.clone(),
        key.gr.resource.clone(),
        key.namespace.clone(),
        key.name.clone(),
    )
}

impl FakeStore {
    fn bump(&self, mut obj: Value) -> Value {
        let mut rev = self.rev.lock().unwrap();
        *rev += 1;
        obj["metadata"]["resourceVersion"] = json!(rev.to_string());
        obj
    }
}

#[async_trait]
impl StoreApi for FakeStore {
    async fn create(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: CreateOptions,
    ) -> ApiResult<Value> {
        self.seen.lock().unwrap().create = Some(opts.clone());
        if self.objects.lock().unwrap().contains_key(&k(key)) {
            return Err(ApiError::already_exists(&key.gr, &key.name));
        }
        let obj = self.bump(object);
        if !opts.dry_run {
            self.objects.lock().unwrap().insert(k(key), obj.clone());
        }
        Ok(obj)
    }

    async fn get(&self, key: &ObjectKey) -> ApiResult<Value> {
        self.objects
            .lock()
            .unwrap()
            .get(&k(key))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&key.gr, &key.name))
    }

    async fn update(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: UpdateOptions,
    ) -> ApiResult<Value> {
        self.seen.lock().unwrap().update = Some(opts.clone());
        if key.name == "invalid" {
            let errs = [
                FieldError::invalid("metadata.labels", "a b", "must be a valid label"),
                FieldError::required("spec.containers", ""),
            ];
            return Err(ApiError::invalid("apps", "Deployment", "invalid", &errs));
        }
        if !opts.create_if_missing && !self.objects.lock().unwrap().contains_key(&k(key)) {
            return Err(ApiError::not_found(&key.gr, &key.name));
        }
        let obj = self.bump(object);
        self.objects.lock().unwrap().insert(k(key), obj.clone());
        Ok(obj)
    }

    async fn delete(&self, key: &ObjectKey, opts: DeleteOptions) -> ApiResult<DeleteOutcome> {
        self.seen.lock().unwrap().delete = Some(opts.clone());
        let current = self.get(key).await?;
        if opts.grace_period_seconds.unwrap_or(0) > 0 {
            let mut obj = self.bump(current);
            obj["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
            self.objects.lock().unwrap().insert(k(key), obj.clone());
            return Ok(DeleteOutcome::Marked(obj));
        }
        self.objects.lock().unwrap().remove(&k(key));
        Ok(DeleteOutcome::Deleted(current))
    }

    async fn list(&self, gr: &GroupResource, namespace: Option<&str>) -> ApiResult<ListResult> {
        self.seen.lock().unwrap().list_namespace = Some(namespace.map(str::to_string));
        let items = self
            .objects
            .lock()
            .unwrap()
            .iter()
            .filter(|((g, r, ns, _), _)| {
                *g == gr.group && *r == gr.resource && namespace.is_none_or(|n| n == ns)
            })
            .map(|(_, v)| v.clone())
            .collect();
        Ok(ListResult {
            items,
            resource_version: *self.rev.lock().unwrap(),
        })
    }

    async fn current_revision(&self) -> ApiResult<u64> {
        Ok(*self.rev.lock().unwrap())
    }

    async fn ready(&self) -> ApiResult<()> {
        if self.broken {
            return Err(ApiError::unavailable("storage is still recovering"));
        }
        Ok(())
    }
}

async fn setup(store: Arc<FakeStore>) -> (support::TestServer, RemoteStore) {
    let router = Server::builder().add_service(StoreGrpc::server(store));
    let server = support::start(router, None).await;
    let remote = RemoteStore::connect_lazy(&server.endpoint()).unwrap();
    (server, remote)
}

fn cm_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new(GroupResource::new("", "configmaps"), ns, name)
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v ✓"}})
}

#[tokio::test]
async fn create_get_update_round_trip_objects_and_options() {
    let fake = Arc::new(FakeStore::default());
    let (server, store) = setup(fake.clone()).await;

    let opts = CreateOptions {
        dry_run: false,
        track_generation: true,
    };
    let created = store
        .create(&cm_key("ns", "a"), cm("a"), opts.clone())
        .await
        .unwrap();
    assert_eq!(created["metadata"]["resourceVersion"], "1");
    assert_eq!(created["data"]["k"], "v ✓");
    assert_eq!(fake.seen.lock().unwrap().create, Some(opts));

    assert_eq!(store.get(&cm_key("ns", "a")).await.unwrap(), created);

    let dry = CreateOptions {
        dry_run: true,
        track_generation: false,
    };
    store
        .create(&cm_key("ns", "dry"), cm("dry"), dry.clone())
        .await
        .unwrap();
    assert_eq!(fake.seen.lock().unwrap().create, Some(dry));
    let err = store.get(&cm_key("ns", "dry")).await.unwrap_err();
    assert_eq!(
        err,
        ApiError::not_found(&GroupResource::new("", "configmaps"), "dry")
    );

    let uopts = UpdateOptions {
        dry_run: true,
        track_generation: true,
        create_if_missing: true,
    };
    let mut changed = created.clone();
    changed["data"]["k"] = json!("w");
    let updated = store
        .update(&cm_key("ns", "b"), changed, uopts.clone())
        .await
        .unwrap();
    assert_eq!(updated["data"]["k"], "w");
    assert_eq!(fake.seen.lock().unwrap().update, Some(uopts));

    assert_eq!(store.current_revision().await.unwrap(), 3);
    server.stop().await;
}

#[tokio::test]
async fn every_delete_outcome_and_its_options_arrive() {
    let fake = Arc::new(FakeStore::default());
    let (server, store) = setup(fake.clone()).await;
    store
        .create(&cm_key("ns", "a"), cm("a"), CreateOptions::default())
        .await
        .unwrap();
    store
        .create(&cm_key("ns", "b"), cm("b"), CreateOptions::default())
        .await
        .unwrap();

    let marked_opts = DeleteOptions {
        dry_run: false,
        precondition_uid: Some("uid-1".into()),
        precondition_resource_version: Some("2".into()),
        grace_period_seconds: Some(30),
        ..Default::default()
    };
    match store
        .delete(&cm_key("ns", "a"), marked_opts.clone())
        .await
        .unwrap()
    {
        DeleteOutcome::Marked(obj) => {
            assert_eq!(obj["metadata"]["deletionTimestamp"], "2024-01-01T00:00:00Z")
        }
        other => panic!("expected Marked, got {other:?}"),
    }
    assert_eq!(fake.seen.lock().unwrap().delete, Some(marked_opts));

    let plain = DeleteOptions {
        dry_run: true,
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    match store
        .delete(&cm_key("ns", "b"), plain.clone())
        .await
        .unwrap()
    {
        DeleteOutcome::Deleted(obj) => assert_eq!(obj["metadata"]["name"], "b"),
        other => panic!("expected Deleted, got {other:?}"),
    }
    // None stays None (proto3 optional), not Some("") / Some(0).
    assert_eq!(fake.seen.lock().unwrap().delete, Some(plain));
    let none = DeleteOptions::default();
    let err = store
        .delete(&cm_key("ns", "b"), none.clone())
        .await
        .unwrap_err();
    assert_eq!(err.code, 404);
    assert_eq!(fake.seen.lock().unwrap().delete, Some(none));
    server.stop().await;
}

#[tokio::test]
async fn list_in_one_namespace_all_namespaces_and_empty() {
    let fake = Arc::new(FakeStore::default());
    let (server, store) = setup(fake.clone()).await;
    for (ns, name) in [("a", "x"), ("a", "y"), ("b", "z")] {
        store
            .create(&cm_key(ns, name), cm(name), CreateOptions::default())
            .await
            .unwrap();
    }
    let gr = GroupResource::new("", "configmaps");

    let all = store.list(&gr, None).await.unwrap();
    assert_eq!(all.resource_version, 3);
    let names: Vec<&str> = all
        .items
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["x", "y", "z"]);
    assert_eq!(fake.seen.lock().unwrap().list_namespace, Some(None));

    let in_a = store.list(&gr, Some("a")).await.unwrap();
    assert_eq!(in_a.items.len(), 2);
    assert_eq!(
        fake.seen.lock().unwrap().list_namespace,
        Some(Some("a".into()))
    );

    // The empty namespace is distinct from "all namespaces".
    let empty_ns = store.list(&gr, Some("")).await.unwrap();
    assert_eq!(empty_ns.items, Vec::<Value>::new());
    assert_eq!(
        fake.seen.lock().unwrap().list_namespace,
        Some(Some(String::new()))
    );

    let empty = store
        .list_stream(&GroupResource::new("apps", "deployments"), None)
        .await
        .unwrap();
    assert_eq!(empty.resource_version, 3);
    assert!(futures::StreamExt::next(&mut { empty.items })
        .await
        .is_none());
    let none = store
        .list(&GroupResource::new("apps", "deployments"), None)
        .await
        .unwrap();
    assert_eq!(
        none,
        ListResult {
            items: vec![],
            resource_version: 3
        }
    );
    server.stop().await;
}

#[tokio::test]
async fn large_objects_and_lists_pass_the_default_4mib_limit() {
    let fake = Arc::new(FakeStore::default());
    let (server, store) = setup(fake).await;
    let blob = "x".repeat(6 * 1024 * 1024);
    let mut big = cm("big");
    big["data"]["blob"] = json!(blob);
    let created = store
        .create(&cm_key("ns", "big"), big, CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(created["data"]["blob"].as_str().unwrap().len(), blob.len());

    // Five 6 MiB objects: a 30 MiB list, more than any single message.
    for i in 0..4 {
        let mut o = cm(&format!("big{i}"));
        o["data"]["blob"] = json!(blob);
        store
            .create(
                &cm_key("ns", &format!("big{i}")),
                o,
                CreateOptions::default(),
            )
            .await
            .unwrap();
    }
    let list = store
        .list(&GroupResource::new("", "configmaps"), None)
        .await
        .unwrap();
    assert_eq!(list.items.len(), 5);
    assert_eq!(list.resource_version, 5);
    // The same list item by item, across several chunks.
    let mut streamed = store
        .list_stream(&GroupResource::new("", "configmaps"), None)
        .await
        .unwrap();
    assert_eq!(streamed.resource_version, 5);
    let mut items = Vec::new();
    while let Some(item) = futures::StreamExt::next(&mut streamed.items).await {
        items.push(item.unwrap());
    }
    assert_eq!(items, list.items);
    server.stop().await;
}

#[tokio::test]
async fn api_errors_arrive_identical() {
    let fake = Arc::new(FakeStore::default());
    let (server, store) = setup(fake).await;
    let gr = GroupResource::new("", "configmaps");

    store
        .create(&cm_key("ns", "a"), cm("a"), CreateOptions::default())
        .await
        .unwrap();
    let err = store
        .create(&cm_key("ns", "a"), cm("a"), CreateOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err, ApiError::already_exists(&gr, "a"));
    assert_eq!(err.message, "configmaps \"a\" already exists");

    let key = ObjectKey::new(GroupResource::new("apps", "deployments"), "ns", "invalid");
    let err = store
        .update(&key, json!({}), UpdateOptions::default())
        .await
        .unwrap_err();
    let errs = [
        FieldError::invalid("metadata.labels", "a b", "must be a valid label"),
        FieldError::required("spec.containers", ""),
    ];
    assert_eq!(
        err,
        ApiError::invalid("apps", "Deployment", "invalid", &errs)
    );
    assert_eq!(err.code, 422);
    assert_eq!(err.details.as_ref().unwrap().causes.len(), 2);
    assert_eq!(
        err.details.as_ref().unwrap().causes[1].field,
        "spec.containers"
    );
    server.stop().await;
}

/// Returns one fixed error from every call.
struct Failing(ApiError);

#[async_trait]
impl StoreApi for Failing {
    async fn create(&self, _: &ObjectKey, _: Value, _: CreateOptions) -> ApiResult<Value> {
        Err(self.0.clone())
    }
    async fn get(&self, _: &ObjectKey) -> ApiResult<Value> {
        Err(self.0.clone())
    }
    async fn update(&self, _: &ObjectKey, _: Value, _: UpdateOptions) -> ApiResult<Value> {
        Err(self.0.clone())
    }
    async fn delete(&self, _: &ObjectKey, _: DeleteOptions) -> ApiResult<DeleteOutcome> {
        Err(self.0.clone())
    }
    async fn list(&self, _: &GroupResource, _: Option<&str>) -> ApiResult<ListResult> {
        Err(self.0.clone())
    }
    async fn current_revision(&self) -> ApiResult<u64> {
        Err(self.0.clone())
    }
}

#[tokio::test]
async fn every_detail_of_an_error_survives_including_huge_ones() {
    let causes: Vec<StatusCause> = (0..400)
        .map(|i| StatusCause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: \"ünïcode-{i}\": must be no more than 63 characters"),
            field: format!("spec.containers[{i}].name"),
        })
        .collect();
    let err = ApiError {
        code: 410,
        reason: "Expired".into(),
        message: "too old resource version: 1 (42)".into(),
        details: Some(Box::new(StatusDetails {
            name: "n".into(),
            group: "g".into(),
            kind: "k".into(),
            uid: "u".into(),
            causes,
            retry_after_seconds: Some(3),
        })),
        continue_token: Some("tok".into()),
        warnings: vec!["kept across the wire".into()],
        audit_annotations: Some(Box::new(
            [("a.example/k".to_string(), "v".to_string())].into(),
        )),
    };
    let router = Server::builder().add_service(StoreGrpc::server(Arc::new(Failing(err.clone()))));
    let server = support::start(router, None).await;
    let store = RemoteStore::connect_lazy(&server.endpoint()).unwrap();
    let gr = GroupResource::new("", "pods");
    assert_eq!(store.get(&cm_key("", "x")).await.unwrap_err(), err);
    assert_eq!(store.list(&gr, None).await.unwrap_err(), err);
    assert_eq!(
        store
            .delete(&cm_key("", "x"), DeleteOptions::default())
            .await
            .unwrap_err(),
        err
    );
    assert_eq!(store.current_revision().await.unwrap_err(), err);
    server.stop().await;
}

#[tokio::test]
async fn a_down_store_is_a_503_naming_the_service() {
    let store = RemoteStore::connect_lazy(&support::dead_endpoint().await).unwrap();
    let err = store.get(&cm_key("ns", "a")).await.unwrap_err();
    assert_eq!(err.code, 503, "{err:?}");
    assert_eq!(err.reason, "ServiceUnavailable");
    assert!(
        err.message.starts_with("the store service is unavailable"),
        "{}",
        err.message
    );
    let err = store.ready().await.unwrap_err();
    assert_eq!(err.code, 503);
    let err = store
        .list(&GroupResource::new("", "pods"), None)
        .await
        .unwrap_err();
    assert_eq!(err.code, 503);
}

#[tokio::test]
async fn the_client_reconnects_after_the_store_restarts() {
    let fake = Arc::new(FakeStore::default());
    let router = Server::builder().add_service(StoreGrpc::server(fake.clone()));
    let server = support::start(router, None).await;
    let addr = server.addr;
    let store = RemoteStore::connect_lazy(&server.endpoint()).unwrap();
    assert_eq!(store.current_revision().await.unwrap(), 0);

    server.stop().await;
    assert_eq!(store.current_revision().await.unwrap_err().code, 503);

    let router = Server::builder().add_service(StoreGrpc::server(fake));
    let server = support::start(router, Some(addr)).await;
    let mut last = None;
    for _ in 0..50 {
        match store.current_revision().await {
            Ok(rev) => {
                last = Some(rev);
                break;
            }
            Err(e) => assert_eq!(e.code, 503),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(last, Some(0));
    server.stop().await;
}

#[tokio::test]
async fn ready_reflects_the_store() {
    let (server, store) = setup(Arc::new(FakeStore::default())).await;
    store.ready().await.unwrap();
    server.stop().await;

    let broken = Arc::new(FakeStore {
        broken: true,
        ..Default::default()
    });
    let (server, store) = setup(broken).await;
    assert_eq!(
        store.ready().await.unwrap_err(),
        ApiError::unavailable("storage is still recovering")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_bad_endpoint_is_an_error_not_a_panic() {
    let err = RemoteStore::connect_lazy("not a uri").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid endpoint \"not a uri\""),
        "{err}"
    );
}

/// A store whose `watch` streams whatever the test sends on a channel.
#[derive(Default)]
struct Watchable {
    /// Handed out one per `watch` call.
    feeds: Mutex<Vec<tokio::sync::mpsc::Receiver<ApiResult<ChangeEvent>>>>,
    /// The arguments of the last `watch` call.
    seen: Mutex<Option<(GroupResource, Option<String>, u64)>>,
    /// `watch` below this revision is `410 Expired`.
    compacted: u64,
}

impl Watchable {
    fn feed(&self) -> tokio::sync::mpsc::Sender<ApiResult<ChangeEvent>> {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        self.feeds.lock().unwrap().push(rx);
        tx
    }
}

fn unused<T>() -> ApiResult<T> {
    Err(ApiError::internal("not used by watch tests"))
}

#[async_trait]
impl StoreApi for Watchable {
    async fn create(&self, _: &ObjectKey, _: Value, _: CreateOptions) -> ApiResult<Value> {
        unused()
    }
    async fn get(&self, _: &ObjectKey) -> ApiResult<Value> {
        unused()
    }
    async fn update(&self, _: &ObjectKey, _: Value, _: UpdateOptions) -> ApiResult<Value> {
        unused()
    }
    async fn delete(&self, _: &ObjectKey, _: DeleteOptions) -> ApiResult<DeleteOutcome> {
        unused()
    }
    async fn list(&self, _: &GroupResource, _: Option<&str>) -> ApiResult<ListResult> {
        unused()
    }
    async fn current_revision(&self) -> ApiResult<u64> {
        unused()
    }
    async fn watch(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        *self.seen.lock().unwrap() =
            Some((gr.clone(), namespace.map(str::to_string), after_revision));
        if after_revision < self.compacted {
            return Err(too_old(after_revision, self.compacted));
        }
        let rx = self.feeds.lock().unwrap().pop().expect("a feed per watch");
        Ok(tokio_stream::wrappers::ReceiverStream::new(rx).boxed())
    }
}

fn too_old(after: u64, compacted: u64) -> ApiError {
    ApiError::new(
        410,
        "Expired",
        format!("too old resource version: {after} ({compacted})"),
    )
}

fn event(revision: u64, event_type: EventType, prev: Option<Value>) -> ChangeEvent {
    let mut object = cm("a");
    object["metadata"]["resourceVersion"] = json!(revision.to_string());
    ChangeEvent {
        revision,
        event_type,
        object,
        prev_object: prev,
    }
}

async fn next_item(s: &mut ChangeStream) -> Option<ApiResult<ChangeEvent>> {
    tokio::time::timeout(std::time::Duration::from_secs(10), s.next())
        .await
        .expect("an item within 10s")
}

#[tokio::test]
async fn watch_events_round_trip_identically() {
    let fake = Arc::new(Watchable::default());
    let tx = fake.feed();
    let (server, store) = setup_watchable(fake.clone()).await;
    let gr = GroupResource::new("apps", "deployments");
    let mut w = store.watch(&gr, Some("ns"), 5).await.unwrap();
    assert_eq!(
        *fake.seen.lock().unwrap(),
        Some((gr.clone(), Some("ns".to_string()), 5))
    );
    let added = event(6, EventType::Added, None);
    let modified = event(7, EventType::Modified, Some(added.object.clone()));
    let deleted = event(8, EventType::Deleted, Some(modified.object.clone()));
    for e in [&added, &modified, &deleted] {
        tx.send(Ok(e.clone())).await.unwrap();
    }
    for e in [added, modified, deleted] {
        assert_eq!(next_item(&mut w).await.unwrap().unwrap(), e);
    }
    drop(w);

    // "All namespaces" stays distinct from the empty namespace.
    let _tx = fake.feed();
    let w = store.watch(&gr, None, 0).await.unwrap();
    assert_eq!(*fake.seen.lock().unwrap(), Some((gr, None, 0)));
    drop(w);
    server.stop().await;
}

#[tokio::test]
async fn watch_of_a_compacted_revision_fails_before_the_stream() {
    let fake = Arc::new(Watchable {
        compacted: 10,
        ..Default::default()
    });
    let (server, store) = setup_watchable(fake).await;
    let err = store
        .watch(&GroupResource::new("", "pods"), None, 3)
        .await
        .err()
        .expect("410");
    assert_eq!(err, too_old(3, 10));
    server.stop().await;
}

#[tokio::test]
async fn an_error_mid_stream_arrives_identical_and_ends_it() {
    let fake = Arc::new(Watchable::default());
    let tx = fake.feed();
    let (server, store) = setup_watchable(fake).await;
    let mut w = store
        .watch(&GroupResource::new("", "configmaps"), None, 0)
        .await
        .unwrap();
    let first = event(1, EventType::Added, None);
    tx.send(Ok(first.clone())).await.unwrap();
    tx.send(Err(too_old(1, 5))).await.unwrap();
    // Anything after the error is not forwarded.
    let _ = tx.send(Ok(event(2, EventType::Modified, None))).await;
    assert_eq!(next_item(&mut w).await.unwrap().unwrap(), first);
    assert_eq!(next_item(&mut w).await.unwrap().unwrap_err(), too_old(1, 5));
    assert!(next_item(&mut w).await.is_none());
    server.stop().await;
}

#[tokio::test]
async fn dropping_the_client_stream_stops_the_server_side() {
    let fake = Arc::new(Watchable::default());
    let tx = fake.feed();
    let (server, store) = setup_watchable(fake).await;
    let mut w = store
        .watch(&GroupResource::new("", "configmaps"), None, 0)
        .await
        .unwrap();
    tx.send(Ok(event(1, EventType::Added, None))).await.unwrap();
    next_item(&mut w).await.unwrap().unwrap();
    assert!(!tx.is_closed());
    drop(w);
    tokio::time::timeout(std::time::Duration::from_secs(5), tx.closed())
        .await
        .expect("the server dropped the store's stream");
    server.stop().await;
}

#[tokio::test]
async fn a_broken_connection_mid_stream_is_a_503_item() {
    let fake = Arc::new(Watchable::default());
    let tx = fake.feed();
    let router = Server::builder().add_service(StoreGrpc::server(fake));
    let server = support::start(router, None).await;
    // A TCP relay we can cut, standing in for a network failure.
    let relay = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relay_addr = relay.local_addr().unwrap();
    let upstream = server.addr;
    let cut = tokio::spawn(async move {
        let (mut down, _) = relay.accept().await.unwrap();
        let mut up = tokio::net::TcpStream::connect(upstream).await.unwrap();
        let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
    });
    let store = RemoteStore::connect_lazy(&format!("http://{relay_addr}")).unwrap();
    let mut w = store
        .watch(&GroupResource::new("", "configmaps"), None, 0)
        .await
        .unwrap();
    tx.send(Ok(event(1, EventType::Added, None))).await.unwrap();
    next_item(&mut w).await.unwrap().unwrap();
    cut.abort();
    let err = next_item(&mut w).await.unwrap().unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (503, "ServiceUnavailable"));
    assert!(
        err.message.starts_with("the store service is unavailable"),
        "{}",
        err.message
    );
    assert!(next_item(&mut w).await.is_none());
    server.stop().await;
}

async fn setup_watchable(store: Arc<Watchable>) -> (support::TestServer, RemoteStore) {
    let router = Server::builder().add_service(StoreGrpc::server(store));
    let server = support::start(router, None).await;
    let remote = RemoteStore::connect_lazy(&server.endpoint()).unwrap();
    (server, remote)
}
