//! A tiny in-memory `StoreApi` for admission tests (the real store is
//! another crate).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt as _;
use keelson_admission::LocalAdmission;
use keelson_api::{
    AdmissionApi, AdmissionRequest, ApiError, ApiResult, ChangeEvent, ChangeStream, CreateOptions,
    DeleteOptions, DeleteOutcome, EventType, FieldValidation, GroupResource, ListResult, ObjectKey,
    Operation, StoreApi, UpdateOptions,
};
use serde_json::{json, Value};

#[derive(Default)]
pub struct MemStore {
    objects: Mutex<HashMap<ObjectKey, Value>>,
    /// Gets served (what a cache saves).
    pub gets: AtomicUsize,
    /// With `watchable`, every write goes to these change streams.
    /// Each with the resource it watches.
    #[allow(clippy::type_complexity)]
    watchers: Mutex<
        Vec<(
            GroupResource,
            tokio::sync::mpsc::UnboundedSender<ApiResult<ChangeEvent>>,
        )>,
    >,
    watchable: bool,
}

impl MemStore {
    /// A store whose `watch` works (the default one answers 405).
    pub fn watchable() -> MemStore {
        MemStore {
            watchable: true,
            ..MemStore::default()
        }
    }

    fn publish(&self, gr: &GroupResource, event_type: EventType, object: &Value) {
        let event = ChangeEvent {
            revision: 1,
            event_type,
            object: object.clone(),
            prev_object: None,
        };
        self.watchers
            .lock()
            .unwrap()
            .retain(|(watched, w)| watched != gr || w.send(Ok(event.clone())).is_ok());
    }
}

#[async_trait]
impl StoreApi for MemStore {
    async fn create(&self, key: &ObjectKey, object: Value, _: CreateOptions) -> ApiResult<Value> {
        let mut m = self.objects.lock().unwrap();
        if m.contains_key(key) {
            return Err(ApiError::already_exists(&key.gr, &key.name));
        }
        m.insert(key.clone(), object.clone());
        drop(m);
        self.publish(&key.gr, EventType::Added, &object);
        Ok(object)
    }
    async fn get(&self, key: &ObjectKey) -> ApiResult<Value> {
        self.gets.fetch_add(1, Ordering::Relaxed);
        let m = self.objects.lock().unwrap();
        m.get(key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&key.gr, &key.name))
    }
    async fn update(&self, key: &ObjectKey, object: Value, _: UpdateOptions) -> ApiResult<Value> {
        self.objects
            .lock()
            .unwrap()
            .insert(key.clone(), object.clone());
        self.publish(&key.gr, EventType::Modified, &object);
        Ok(object)
    }
    async fn delete(&self, key: &ObjectKey, _: DeleteOptions) -> ApiResult<DeleteOutcome> {
        let removed = self.objects.lock().unwrap().remove(key);
        let removed = removed.ok_or_else(|| ApiError::not_found(&key.gr, &key.name))?;
        self.publish(&key.gr, EventType::Deleted, &removed);
        Ok(DeleteOutcome::Deleted(removed))
    }
    async fn watch(&self, gr: &GroupResource, _: Option<&str>, _: u64) -> ApiResult<ChangeStream> {
        if !self.watchable {
            return Err(ApiError::method_not_supported(gr, "watch"));
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        self.watchers.lock().unwrap().push((gr.clone(), tx));
        Ok(
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) })
                .boxed(),
        )
    }
    async fn list(&self, gr: &GroupResource, ns: Option<&str>) -> ApiResult<ListResult> {
        let m = self.objects.lock().unwrap();
        let items = m
            .iter()
            .filter(|(k, _)| k.gr == *gr && ns.is_none_or(|n| n == k.namespace))
            .map(|(_, v)| v.clone())
            .collect();
        Ok(ListResult {
            items,
            resource_version: 1,
        })
    }
    async fn current_revision(&self) -> ApiResult<u64> {
        Ok(1)
    }
}

/// Admission over a store holding namespace `default` (Active) and
/// `doomed` (Terminating).
pub async fn admission() -> LocalAdmission {
    admission_over(Arc::new(MemStore::default())).await
}

/// [`admission`] over `store` (namespaces `default` and `doomed` added).
pub async fn admission_over(store: Arc<MemStore>) -> LocalAdmission {
    admission_with(store, keelson_admission::PluginConfig::default()).await
}

/// [`admission_over`] with the admission configuration `plugins`.
pub async fn admission_with(
    store: Arc<MemStore>,
    plugins: keelson_admission::PluginConfig,
) -> LocalAdmission {
    let ns = GroupResource::new("", "namespaces");
    for (name, phase) in [("default", "Active"), ("doomed", "Terminating")] {
        let obj = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name}, "status": {"phase": phase}});
        store
            .create(
                &ObjectKey::new(ns.clone(), "", name),
                obj,
                CreateOptions::default(),
            )
            .await
            .unwrap();
    }
    // The `default` ServiceAccount kube's controller makes in `default`
    // (ServiceAccount admission refuses pods without it).
    let sa = GroupResource::new("", "serviceaccounts");
    store
        .create(
            &ObjectKey::new(sa, "default", "default"),
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": "default", "namespace": "default"}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    LocalAdmission::with_plugins(store, keelson_registry::Catalog::builtin(), plugins)
}

/// A create request for `object` of `group`/`resource` in `namespace`.
pub fn create(group: &str, resource: &str, namespace: &str, object: Value) -> AdmissionRequest {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1").to_string();
    let kind = object["kind"].as_str().unwrap_or("").to_string();
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    AdmissionRequest {
        operation: Operation::Create,
        gr: GroupResource::new(group, resource),
        api_version,
        kind,
        kind_api_version: String::new(),
        namespace: namespace.into(),
        name,
        subresource: String::new(),
        object: Some(object),
        old_object: None,
        raw_body: None,
        is_patch: false,
        field_validation: FieldValidation::Warn,
        dry_run: false,
        user: None,
        options: None,
    }
}

/// An update request from `old` to `new` of `group`/`resource` in `ns`.
pub fn update(group: &str, resource: &str, ns: &str, old: Value, new: Value) -> AdmissionRequest {
    let mut req = create(group, resource, ns, new);
    req.operation = Operation::Update;
    req.old_object = Some(old);
    req
}

/// Admit `req`, which must be accepted.
pub async fn accepted(req: AdmissionRequest) {
    if let Err(e) = admission().await.admit(req).await {
        panic!("refused: {}", e.message);
    }
}

/// A Pod named `p` with `spec`.
pub fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
}

/// The message of `req`'s refusal, which must be a 422.
pub async fn message(req: AdmissionRequest) -> String {
    match admission().await.admit(req).await {
        Ok(_) => panic!("admitted"),
        Err(e) => {
            assert_eq!(e.code, 422, "{}", e.message);
            e.message
        }
    }
}

/// The object `req` admits (its defaulted, mutated form).
pub async fn admitted(req: AdmissionRequest) -> Value {
    match admission().await.admit(req).await {
        Ok(resp) => resp.object.unwrap_or(Value::Null),
        Err(e) => panic!("refused: {}", e.message),
    }
}
