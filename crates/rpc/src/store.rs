//! The store service: server adapter over a `StoreApi` and the remote client.

use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt};
use keelson_api::{
    ChangeStream, CreateOptions, DeleteOptions, DeleteOutcome, ListResult, ListStream, StoreApi,
    UpdateOptions,
};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey};
use serde_json::Value;
use tonic::{Request, Response, Status};

use crate::change_stream::{from_pb_stream, to_pb_stream, PbEventStream};
use crate::convert::{
    bad_enum, from_json_bytes, gr_from_pb, gr_to_pb, key_from_pb, key_to_pb, missing, to_json_bytes,
};
use crate::pb::common::{ReadyRequest, ReadyResponse};
use crate::pb::store as pb;
use crate::pb::store::store_client::StoreClient;
use crate::pb::store::store_server::{Store, StoreServer};
use crate::service::{grpc_server, ready_reply, ready_result, remote_client};
use crate::status::{from_grpc_status, to_grpc_status};

const SERVICE: &str = "store";

/// Target size of one streamed list chunk (well under
/// [`MAX_MESSAGE_SIZE`](crate::MAX_MESSAGE_SIZE)).
const LIST_CHUNK_BYTES: usize = 4 * 1024 * 1024;

fn status(e: ApiError) -> Status {
    to_grpc_status(&e)
}

/// gRPC server adapter: decodes requests, calls the local [`StoreApi`],
/// encodes answers.
#[derive(Clone)]
pub struct StoreGrpc {
    api: Arc<dyn StoreApi>,
    draining: crate::Draining,
}

impl StoreGrpc {
    /// Wrap a local store.
    pub fn new(api: Arc<dyn StoreApi>) -> Self {
        StoreGrpc {
            api,
            draining: crate::Draining::never(),
        }
    }

    /// End open watches when `draining` fires (see
    /// [`serve_with_drain`](crate::serve_with_drain)).
    pub fn with_draining(mut self, draining: crate::Draining) -> Self {
        self.draining = draining;
        self
    }
}

grpc_server!(StoreGrpc: StoreApi => StoreServer);

/// A list as chunks of about [`LIST_CHUNK_BYTES`], encoded as the stream
/// is read; always at least one chunk so the revision arrives for an empty
/// list. An item that fails to decode ends the stream with its status.
fn list_chunks(
    rv: u64,
    items: BoxStream<'static, ApiResult<Value>>,
) -> BoxStream<'static, Result<pb::ListChunk, Status>> {
    futures::stream::unfold(
        (items, false, false),
        move |(mut items, done, sent)| async move {
            if done {
                return None;
            }
            let mut chunk = Vec::new();
            let mut size = 0;
            loop {
                match items.next().await {
                    Some(Ok(v)) => {
                        let b = to_json_bytes(&v);
                        size += b.len();
                        chunk.push(b);
                        if size >= LIST_CHUNK_BYTES {
                            let c = pb::ListChunk {
                                items: chunk,
                                resource_version: rv,
                            };
                            return Some((Ok(c), (items, false, true)));
                        }
                    }
                    Some(Err(e)) => return Some((Err(status(e)), (items, true, true))),
                    None if chunk.is_empty() && sent => return None,
                    None => {
                        let c = pb::ListChunk {
                            items: chunk,
                            resource_version: rv,
                        };
                        return Some((Ok(c), (items, true, true)));
                    }
                }
            }
        },
    )
    .boxed()
}

#[tonic::async_trait]
impl Store for StoreGrpc {
    async fn create(
        &self,
        req: Request<pb::CreateRequest>,
    ) -> Result<Response<pb::ObjectResponse>, Status> {
        let r = req.into_inner();
        let key = key_from_pb(SERVICE, r.key).map_err(status)?;
        let object = from_json_bytes(SERVICE, "object", &r.object).map_err(status)?;
        let opts = CreateOptions {
            dry_run: r.dry_run,
            track_generation: r.track_generation,
        };
        let out = self.api.create(&key, object, opts).await.map_err(status)?;
        Ok(Response::new(pb::ObjectResponse {
            object: to_json_bytes(&out),
        }))
    }

    async fn get(
        &self,
        req: Request<pb::GetRequest>,
    ) -> Result<Response<pb::ObjectResponse>, Status> {
        let key = key_from_pb(SERVICE, req.into_inner().key).map_err(status)?;
        let out = self.api.get(&key).await.map_err(status)?;
        Ok(Response::new(pb::ObjectResponse {
            object: to_json_bytes(&out),
        }))
    }

    async fn update(
        &self,
        req: Request<pb::UpdateRequest>,
    ) -> Result<Response<pb::ObjectResponse>, Status> {
        let r = req.into_inner();
        let key = key_from_pb(SERVICE, r.key).map_err(status)?;
        let object = from_json_bytes(SERVICE, "object", &r.object).map_err(status)?;
        let opts = UpdateOptions {
            dry_run: r.dry_run,
            track_generation: r.track_generation,
            create_if_missing: r.create_if_missing,
        };
        let out = self.api.update(&key, object, opts).await.map_err(status)?;
        Ok(Response::new(pb::ObjectResponse {
            object: to_json_bytes(&out),
        }))
    }

    async fn delete(
        &self,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::DeleteResponse>, Status> {
        let r = req.into_inner();
        let key = key_from_pb(SERVICE, r.key).map_err(status)?;
        let opts = DeleteOptions {
            dry_run: r.dry_run,
            precondition_uid: r.precondition_uid,
            precondition_resource_version: r.precondition_resource_version,
            grace_period_seconds: r.grace_period_seconds,
            propagation_policy: r
                .propagation_policy
                .as_deref()
                .and_then(keelson_apimachinery::options::PropagationPolicy::parse),
            orphan_dependents: r.orphan_dependents,
            ignore_store_read_error: r.ignore_store_read_error,
        };
        let (outcome, object) = match self.api.delete(&key, opts).await.map_err(status)? {
            DeleteOutcome::Deleted(v) => (pb::DeleteOutcome::Deleted, v),
            DeleteOutcome::Marked(v) => (pb::DeleteOutcome::Marked, v),
        };
        Ok(Response::new(pb::DeleteResponse {
            outcome: outcome.into(),
            object: to_json_bytes(&object),
        }))
    }

    type ListStream = BoxStream<'static, Result<pb::ListChunk, Status>>;

    async fn list(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<Self::ListStream>, Status> {
        let r = req.into_inner();
        let gr = gr_from_pb(r.gr.ok_or_else(|| status(missing(SERVICE, "gr")))?);
        let ns = r.namespace.as_deref();
        let list = match r.revision {
            Some(rev) => self.api.list_at(&gr, ns, rev).await.map(|l| ListStream {
                resource_version: l.resource_version,
                items: futures::stream::iter(l.items.into_iter().map(Ok)).boxed(),
            }),
            None => self.api.list_stream(&gr, ns).await,
        }
        .map_err(status)?;
        Ok(Response::new(list_chunks(
            list.resource_version,
            list.items,
        )))
    }

    async fn current_revision(
        &self,
        _req: Request<pb::CurrentRevisionRequest>,
    ) -> Result<Response<pb::CurrentRevisionResponse>, Status> {
        let revision = self.api.current_revision().await.map_err(status)?;
        let compacted_revision = self.api.compacted_revision().await.map_err(status)?;
        Ok(Response::new(pb::CurrentRevisionResponse {
            revision,
            compacted_revision,
        }))
    }

    type WatchStream = PbEventStream;

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let r = req.into_inner();
        let gr = r.gr.ok_or_else(|| status(missing(SERVICE, "gr")))?;
        let changes = self
            .api
            .watch(&gr_from_pb(gr), r.namespace.as_deref(), r.after_revision)
            .await
            .map_err(status)?;
        Ok(Response::new(crate::until_draining(
            &self.draining,
            to_pb_stream(changes),
        )))
    }

    async fn ready(&self, _req: Request<ReadyRequest>) -> Result<Response<ReadyResponse>, Status> {
        ready_reply(self.api.ready().await)
    }
}

remote_client! {
    /// A [`StoreApi`] served by a remote store over gRPC. Cheap to clone.
    RemoteStore(StoreClient)
}

impl RemoteStore {
    /// One streamed `List` call, current (`revision: None`) or at a
    /// revision; items are decoded as they are read, chunk by chunk, and a
    /// broken stream is its last item.
    async fn list_request(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        revision: Option<u64>,
    ) -> ApiResult<ListStream> {
        let req = pb::ListRequest {
            gr: Some(gr_to_pb(gr)),
            namespace: namespace.map(str::to_string),
            revision,
        };
        let mut stream = self.client().list(req).await.map_err(err)?.into_inner();
        let first = stream
            .message()
            .await
            .map_err(err)?
            .ok_or_else(|| missing(SERVICE, "list chunk"))?;
        let resource_version = first.resource_version;
        let pending: std::collections::VecDeque<Vec<u8>> = first.items.into();
        let items = futures::stream::unfold(
            (pending, Some(stream)),
            |(mut pending, mut stream)| async move {
                loop {
                    if let Some(b) = pending.pop_front() {
                        let item = from_json_bytes(SERVICE, "list item", &b);
                        return Some((item, (pending, stream)));
                    }
                    let s = stream.as_mut()?;
                    match s.message().await {
                        Ok(Some(c)) => pending.extend(c.items),
                        Ok(None) => return None,
                        Err(e) => {
                            let e = crate::change_stream::stream_error(SERVICE, &e);
                            return Some((Err(e), (pending, None)));
                        }
                    }
                }
            },
        )
        .boxed();
        Ok(ListStream {
            resource_version,
            items,
        })
    }

    /// A whole list, collected.
    async fn collect_list(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        revision: Option<u64>,
    ) -> ApiResult<ListResult> {
        let mut list = self.list_request(gr, namespace, revision).await?;
        let mut items = Vec::new();
        while let Some(item) = list.items.next().await {
            items.push(item?);
        }
        Ok(ListResult {
            items,
            resource_version: list.resource_version,
        })
    }

    /// The store's current and compacted revisions (one call).
    async fn revisions(&self) -> ApiResult<pb::CurrentRevisionResponse> {
        Ok(self
            .client()
            .current_revision(pb::CurrentRevisionRequest {})
            .await
            .map_err(err)?
            .into_inner())
    }

    fn client(&self) -> StoreClient<crate::service::ClientChannel> {
        self.client.clone()
    }
}

fn err(s: Status) -> ApiError {
    from_grpc_status(SERVICE, &s)
}

#[async_trait::async_trait]
impl StoreApi for RemoteStore {
    async fn create(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: CreateOptions,
    ) -> ApiResult<Value> {
        let req = pb::CreateRequest {
            key: Some(key_to_pb(key)),
            object: to_json_bytes(&object),
            dry_run: opts.dry_run,
            track_generation: opts.track_generation,
        };
        let resp = self.client().create(req).await.map_err(err)?.into_inner();
        from_json_bytes(SERVICE, "object", &resp.object)
    }

    async fn get(&self, key: &ObjectKey) -> ApiResult<Value> {
        let req = pb::GetRequest {
            key: Some(key_to_pb(key)),
        };
        let resp = self.client().get(req).await.map_err(err)?.into_inner();
        from_json_bytes(SERVICE, "object", &resp.object)
    }

    async fn update(
        &self,
        key: &ObjectKey,
        object: Value,
        opts: UpdateOptions,
    ) -> ApiResult<Value> {
        let req = pb::UpdateRequest {
            key: Some(key_to_pb(key)),
            object: to_json_bytes(&object),
            dry_run: opts.dry_run,
            track_generation: opts.track_generation,
            create_if_missing: opts.create_if_missing,
        };
        let resp = self.client().update(req).await.map_err(err)?.into_inner();
        from_json_bytes(SERVICE, "object", &resp.object)
    }

    async fn delete(&self, key: &ObjectKey, opts: DeleteOptions) -> ApiResult<DeleteOutcome> {
        let req = pb::DeleteRequest {
            key: Some(key_to_pb(key)),
            dry_run: opts.dry_run,
            precondition_uid: opts.precondition_uid,
            precondition_resource_version: opts.precondition_resource_version,
            grace_period_seconds: opts.grace_period_seconds,
            propagation_policy: opts.propagation_policy.map(|p| p.as_str().to_string()),
            orphan_dependents: opts.orphan_dependents,
            ignore_store_read_error: opts.ignore_store_read_error,
        };
        let resp = self.client().delete(req).await.map_err(err)?.into_inner();
        let object = from_json_bytes(SERVICE, "object", &resp.object)?;
        match pb::DeleteOutcome::try_from(resp.outcome) {
            Ok(pb::DeleteOutcome::Deleted) => Ok(DeleteOutcome::Deleted(object)),
            Ok(pb::DeleteOutcome::Marked) => Ok(DeleteOutcome::Marked(object)),
            _ => Err(bad_enum(SERVICE, "delete outcome", resp.outcome)),
        }
    }

    async fn list(&self, gr: &GroupResource, namespace: Option<&str>) -> ApiResult<ListResult> {
        self.collect_list(gr, namespace, None).await
    }

    async fn list_at(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        revision: u64,
    ) -> ApiResult<ListResult> {
        self.collect_list(gr, namespace, Some(revision)).await
    }

    /// Items are decoded as they are read, chunk by chunk.
    async fn list_stream(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> ApiResult<ListStream> {
        self.list_request(gr, namespace, None).await
    }

    async fn current_revision(&self) -> ApiResult<u64> {
        Ok(self.revisions().await?.revision)
    }

    async fn compacted_revision(&self) -> ApiResult<u64> {
        Ok(self.revisions().await?.compacted_revision)
    }

    /// Errors before the stream starts (e.g. `410`) are returned here; a
    /// failure mid-stream is the stream's last item (`503` when the
    /// connection broke).
    async fn watch(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        let req = pb::WatchRequest {
            gr: Some(gr_to_pb(gr)),
            namespace: namespace.map(str::to_string),
            after_revision,
        };
        let stream = self.client().watch(req).await.map_err(err)?.into_inner();
        Ok(from_pb_stream(SERVICE, stream))
    }

    /// Calls the peer's `Ready`; a peer that cannot be reached is a `503`.
    async fn ready(&self) -> ApiResult<()> {
        ready_result(SERVICE, self.client().ready(ReadyRequest {}).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_list_is_one_chunk_with_the_revision() {
        let chunks = chunks_of(7, vec![]);
        assert_eq!(chunks.len(), 1);
        let c = chunks[0].as_ref().unwrap();
        assert!(c.items.is_empty());
        assert_eq!(c.resource_version, 7);
    }

    fn chunks_of(rv: u64, items: Vec<ApiResult<Value>>) -> Vec<Result<pb::ListChunk, Status>> {
        futures::executor::block_on(
            list_chunks(rv, futures::stream::iter(items).boxed()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn big_lists_split_in_order() {
        let blob = "x".repeat(1024 * 1024);
        let items: Vec<Value> = (0..10).map(|i| json!({"i": i, "b": blob})).collect();
        let chunks = chunks_of(3, items.iter().cloned().map(Ok).collect());
        assert!(chunks.len() >= 3, "{} chunks", chunks.len());
        assert!(chunks
            .iter()
            .all(|c| c.as_ref().unwrap().resource_version == 3));
        let back: Vec<Value> = chunks
            .iter()
            .flat_map(|c| c.as_ref().unwrap().items.clone())
            .map(|b| serde_json::from_slice(&b).unwrap())
            .collect();
        assert_eq!(back, items);
    }

    #[test]
    fn a_failing_item_ends_the_chunks_with_its_status() {
        let chunks = chunks_of(
            3,
            vec![Ok(json!({"a": 1})), Err(ApiError::internal("bad bytes"))],
        );
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].is_err());
    }
}
