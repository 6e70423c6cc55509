//! The merge service: server adapter over a `MergeApi` and the remote client.

use std::sync::Arc;

use keelson_api::{FieldOwner, ManagedFieldsRequest, MergeApi, PatchRequest, PatchType};
use keelson_apimachinery::ApiResult;
use serde_json::Value;
use tonic::{Request, Response, Status};

use crate::convert::{bad_enum, from_json_bytes, gr_from_pb, gr_to_pb, missing, to_json_bytes};
use crate::pb::common::{ReadyRequest, ReadyResponse};
use crate::pb::merge as pb;
use crate::pb::merge::merge_client::MergeClient;
use crate::pb::merge::merge_server::{Merge, MergeServer};
use crate::service::{grpc_server, ready_reply, ready_result, remote_client};
use crate::status::{from_grpc_status, to_grpc_status};

const SERVICE: &str = "merge";

fn patch_type_to_pb(t: PatchType) -> pb::PatchType {
    match t {
        PatchType::Json => pb::PatchType::Json,
        PatchType::Merge => pb::PatchType::Merge,
        PatchType::StrategicMerge => pb::PatchType::StrategicMerge,
        PatchType::Apply => pb::PatchType::Apply,
    }
}

fn patch_type_from_pb(v: i32) -> ApiResult<PatchType> {
    match pb::PatchType::try_from(v) {
        Ok(pb::PatchType::Json) => Ok(PatchType::Json),
        Ok(pb::PatchType::Merge) => Ok(PatchType::Merge),
        Ok(pb::PatchType::StrategicMerge) => Ok(PatchType::StrategicMerge),
        Ok(pb::PatchType::Apply) => Ok(PatchType::Apply),
        _ => Err(bad_enum(SERVICE, "patch type", v)),
    }
}

fn owner_to_pb(o: FieldOwner) -> pb::FieldOwner {
    pb::FieldOwner {
        manager: o.manager,
        api_version: o.api_version,
        subresource: o.subresource,
    }
}

fn owner_from_pb(o: Option<pb::FieldOwner>) -> FieldOwner {
    let o = o.unwrap_or_default();
    FieldOwner {
        manager: o.manager,
        api_version: o.api_version,
        subresource: o.subresource,
    }
}

/// An absent object travels as empty bytes.
fn optional_to_bytes(v: &Value) -> Vec<u8> {
    if v.is_null() {
        Vec::new()
    } else {
        to_json_bytes(v)
    }
}

fn optional_from_bytes(field: &str, b: &[u8]) -> ApiResult<Value> {
    if b.is_empty() {
        Ok(Value::Null)
    } else {
        from_json_bytes(SERVICE, field, b)
    }
}

fn request_from_pb(r: pb::PatchRequest) -> ApiResult<PatchRequest> {
    Ok(PatchRequest {
        patch_type: patch_type_from_pb(r.patch_type)?,
        gr: gr_from_pb(r.gr.ok_or_else(|| missing(SERVICE, "gr"))?),
        kind: r.kind,
        owner: owner_from_pb(r.owner),
        force: r.force,
        original: optional_from_bytes("original", &r.original)?,
        patch: r.patch,
    })
}

fn managed_from_pb(r: pb::ManagedFieldsRequest) -> ApiResult<ManagedFieldsRequest> {
    Ok(ManagedFieldsRequest {
        gr: gr_from_pb(r.gr.ok_or_else(|| missing(SERVICE, "gr"))?),
        kind: r.kind,
        owner: owner_from_pb(r.owner),
        old: optional_from_bytes("old", &r.old)?,
        new: from_json_bytes(SERVICE, "new", &r.new)?,
    })
}

/// gRPC server adapter over a local [`MergeApi`].
#[derive(Clone)]
pub struct MergeGrpc {
    api: Arc<dyn MergeApi>,
}

impl MergeGrpc {
    /// Wrap a local merge implementation.
    pub fn new(api: Arc<dyn MergeApi>) -> Self {
        MergeGrpc { api }
    }
}

grpc_server!(MergeGrpc: MergeApi => MergeServer);

#[tonic::async_trait]
impl Merge for MergeGrpc {
    async fn patch(
        &self,
        req: Request<pb::PatchRequest>,
    ) -> Result<Response<pb::PatchResponse>, Status> {
        let preq = request_from_pb(req.into_inner()).map_err(|e| to_grpc_status(&e))?;
        let out = self.api.patch(preq).await.map_err(|e| to_grpc_status(&e))?;
        Ok(Response::new(pb::PatchResponse {
            object: to_json_bytes(&out),
        }))
    }

    async fn update_managed_fields(
        &self,
        req: Request<pb::ManagedFieldsRequest>,
    ) -> Result<Response<pb::PatchResponse>, Status> {
        let mreq = managed_from_pb(req.into_inner()).map_err(|e| to_grpc_status(&e))?;
        let out = self
            .api
            .update_managed_fields(mreq)
            .await
            .map_err(|e| to_grpc_status(&e))?;
        Ok(Response::new(pb::PatchResponse {
            object: to_json_bytes(&out),
        }))
    }

    async fn ready(&self, _req: Request<ReadyRequest>) -> Result<Response<ReadyResponse>, Status> {
        ready_reply(self.api.ready().await)
    }
}

remote_client! {
    /// A [`MergeApi`] served by a remote merge service. Cheap to clone.
    RemoteMerge(MergeClient)
}

#[async_trait::async_trait]
impl MergeApi for RemoteMerge {
    async fn patch(&self, req: PatchRequest) -> ApiResult<Value> {
        let preq = pb::PatchRequest {
            patch_type: patch_type_to_pb(req.patch_type).into(),
            gr: Some(gr_to_pb(&req.gr)),
            kind: req.kind,
            owner: Some(owner_to_pb(req.owner)),
            force: req.force,
            original: optional_to_bytes(&req.original),
            patch: req.patch,
        };
        let resp = self
            .client
            .clone()
            .patch(preq)
            .await
            .map_err(|s| from_grpc_status(SERVICE, &s))?
            .into_inner();
        from_json_bytes(SERVICE, "object", &resp.object)
    }

    async fn update_managed_fields(&self, req: ManagedFieldsRequest) -> ApiResult<Value> {
        let mreq = pb::ManagedFieldsRequest {
            gr: Some(gr_to_pb(&req.gr)),
            kind: req.kind,
            owner: Some(owner_to_pb(req.owner)),
            old: optional_to_bytes(&req.old),
            new: to_json_bytes(&req.new),
        };
        let resp = self
            .client
            .clone()
            .update_managed_fields(mreq)
            .await
            .map_err(|s| from_grpc_status(SERVICE, &s))?
            .into_inner();
        from_json_bytes(SERVICE, "object", &resp.object)
    }

    /// Calls the peer's `Ready`; a peer that cannot be reached is a `503`.
    async fn ready(&self) -> ApiResult<()> {
        ready_result(SERVICE, self.client.clone().ready(ReadyRequest {}).await)
    }
}
