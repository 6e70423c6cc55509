//! The store contract: the one writer of revisioned objects.

use async_trait::async_trait;
use keelson_apimachinery::{ApiResult, GroupResource, ObjectKey};
use serde_json::Value;

/// Options for [`StoreApi::create`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateOptions {
    /// Run the whole path but persist nothing.
    pub dry_run: bool,
    /// Set `metadata.generation` (1 on create, bumped on spec changes).
    pub track_generation: bool,
}

/// Options for [`StoreApi::update`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateOptions {
    pub dry_run: bool,
    pub track_generation: bool,
    /// Create the object when it does not exist (PUT-creates).
    pub create_if_missing: bool,
}

/// Options for [`StoreApi::delete`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub dry_run: bool,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_resource_version: Option<String>,
    /// Graceful deletion period; `Some(n>0)` marks the object with
    /// `deletionTimestamp` instead of removing it (pods bound to a node).
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`: which garbage-collection finalizer (`orphan`,
    /// `foregroundDeletion`) the delete leaves on the object.
    pub propagation_policy: Option<keelson_apimachinery::options::PropagationPolicy>,
    /// `orphanDependents` (deprecated; wins over `propagation_policy`).
    pub orphan_dependents: Option<bool>,
    /// Remove the stored value without decoding it (kube's unsafe deletion
    /// of a corrupt object): no preconditions, finalizers or graceful
    /// deletion; the outcome is `Deleted(null)`.
    pub ignore_store_read_error: bool,
}

/// What a delete did.
#[derive(Debug, Clone, PartialEq)]
pub enum DeleteOutcome {
    /// The object is gone; this is its last state.
    Deleted(Value),
    /// The object still exists with `deletionTimestamp` set (finalizers or
    /// graceful deletion); this is its new state.
    Marked(Value),
}

/// The type of a change-stream event: `Added`, `Modified`, `Deleted`, or
/// `Bookmark` — no change, but every change of the watched resource up to
/// the event's revision has been delivered (etcd's progress notification;
/// `object` is null). Bookmarks are sent when the stream has read past
/// other resources' writes, so a follower can tell how fresh it is. The
/// store never sends `Error` events: a failed stream ends with an error.
pub use keelson_apimachinery::watch::EventType;

/// One committed change of one object, as the store's change stream
/// delivers it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeEvent {
    /// The revision of the write.
    pub revision: u64,
    pub event_type: EventType,
    /// The object after the write; for `Deleted`, its last state with
    /// `metadata.resourceVersion` set to the delete's revision.
    pub object: Value,
    /// The object before the write (`None` for `Added`), so watchers can
    /// tell selector transitions.
    pub prev_object: Option<Value>,
}

/// A stream of changes in revision order.
pub type ChangeStream = futures::stream::BoxStream<'static, ApiResult<ChangeEvent>>;

/// A list snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct ListResult {
    /// The items, ordered by namespace then name.
    pub items: Vec<Value>,
    /// The revision the snapshot was taken at.
    pub resource_version: u64,
}

/// A list read one item at a time: the snapshot revision up front, then the
/// items (in key order) decoded as the stream is read, so a large list is
/// never held decoded all at once.
pub struct ListStream {
    pub resource_version: u64,
    pub items: futures::stream::BoxStream<'static, ApiResult<Value>>,
}

/// Revisioned object storage. Every successful write returns the stored
/// object with `metadata.resourceVersion` set to the write's revision.
#[async_trait]
pub trait StoreApi: Send + Sync + 'static {
    /// Create an object. Sets `uid` (unless the object has one: the gateway
    /// assigns it before admission), `creationTimestamp`, `resourceVersion`,
    /// `generation` (if tracked) and, with an empty name, a unique name from
    /// `metadata.generateName`. `409 AlreadyExists` if present.
    async fn create(&self, key: &ObjectKey, object: Value, opts: CreateOptions)
        -> ApiResult<Value>;

    /// Read the current object, or `404 NotFound`.
    async fn get(&self, key: &ObjectKey) -> ApiResult<Value>;

    /// Replace an object. A `metadata.resourceVersion` in `object` other
    /// than `""` and `"0"` must equal the stored one (`409 Conflict`
    /// otherwise). `uid` and
    /// `creationTimestamp` are kept from the stored object. Clearing the last
    /// finalizer of an object being deleted removes it.
    async fn update(&self, key: &ObjectKey, object: Value, opts: UpdateOptions)
        -> ApiResult<Value>;

    /// Delete an object (or mark it, see [`DeleteOutcome`]).
    async fn delete(&self, key: &ObjectKey, opts: DeleteOptions) -> ApiResult<DeleteOutcome>;

    /// List the current objects of a resource, in one namespace or all.
    async fn list(&self, gr: &GroupResource, namespace: Option<&str>) -> ApiResult<ListResult>;

    /// [`list`](Self::list) as a [`ListStream`].
    async fn list_stream(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> ApiResult<ListStream> {
        use futures::StreamExt as _;
        let list = self.list(gr, namespace).await?;
        Ok(ListStream {
            resource_version: list.resource_version,
            items: futures::stream::iter(list.items.into_iter().map(Ok)).boxed(),
        })
    }

    /// List a resource as it was at an exact retained revision. A compacted
    /// revision fails with `410 Expired`; one newer than the store's current
    /// revision with `504 Timeout` (`Too large resource version`).
    async fn list_at(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        revision: u64,
    ) -> ApiResult<ListResult> {
        let _ = (namespace, revision);
        Err(keelson_apimachinery::ApiError::method_not_supported(
            gr,
            "list at a revision",
        ))
    }

    /// The store's current global revision.
    async fn current_revision(&self) -> ApiResult<u64>;

    /// The revision history is compacted up to: reads at older revisions
    /// fail with `410 Expired`. 0 when nothing is compacted (the default).
    async fn compacted_revision(&self) -> ApiResult<u64> {
        Ok(0)
    }

    /// Every change to `gr` (in one namespace, or all) committed after
    /// `after_revision`, in revision order, first from history and then live,
    /// until the stream is dropped. A revision older than the compacted one
    /// fails with `410 Expired` (`too old resource version: X (Y)`), before
    /// the stream starts or as its last item when compaction overtakes a
    /// slow reader.
    async fn watch(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        let _ = (namespace, after_revision);
        Err(keelson_apimachinery::ApiError::method_not_supported(
            gr, "watch",
        ))
    }

    /// Readiness of the service (the gateway's `/readyz` runs one check per
    /// backing service). Local implementations are ready once constructed.
    async fn ready(&self) -> ApiResult<()> {
        Ok(())
    }
}
