//! The admission service: server adapter over an `AdmissionApi` and the
//! remote client.

use std::sync::Arc;

use keelson_api::{
    AdmissionApi, AdmissionRequest, AdmissionResponse, AdmitPhase, FieldValidation, Operation,
    UserInfo,
};
use keelson_apimachinery::ApiResult;
use tonic::{Request, Response, Status};

use crate::convert::{bad_enum, from_json_bytes, gr_from_pb, gr_to_pb, missing, to_json_bytes};
use crate::pb::admission as pb;
use crate::pb::admission::admission_client::AdmissionClient;
use crate::pb::admission::admission_server::{Admission, AdmissionServer};
use crate::pb::common::{ReadyRequest, ReadyResponse};
use crate::service::{grpc_server, ready_reply, ready_result, remote_client};
use crate::status::{from_grpc_status, to_grpc_status};

const SERVICE: &str = "admission";

fn operation_to_pb(op: Operation) -> pb::Operation {
    match op {
        Operation::Create => pb::Operation::Create,
        Operation::Update => pb::Operation::Update,
        Operation::Delete => pb::Operation::Delete,
    }
}

fn operation_from_pb(v: i32) -> ApiResult<Operation> {
    match pb::Operation::try_from(v) {
        Ok(pb::Operation::Create) => Ok(Operation::Create),
        Ok(pb::Operation::Update) => Ok(Operation::Update),
        Ok(pb::Operation::Delete) => Ok(Operation::Delete),
        _ => Err(bad_enum(SERVICE, "operation", v)),
    }
}

fn field_validation_to_pb(fv: FieldValidation) -> pb::FieldValidation {
    match fv {
        FieldValidation::Ignore => pb::FieldValidation::Ignore,
        FieldValidation::Warn => pb::FieldValidation::Warn,
        FieldValidation::Strict => pb::FieldValidation::Strict,
    }
}

/// Unspecified means Warn, kube's default for an empty `fieldValidation`.
fn field_validation_from_pb(v: i32) -> ApiResult<FieldValidation> {
    match pb::FieldValidation::try_from(v) {
        Ok(pb::FieldValidation::Ignore) => Ok(FieldValidation::Ignore),
        Ok(pb::FieldValidation::Unspecified | pb::FieldValidation::Warn) => {
            Ok(FieldValidation::Warn)
        }
        Ok(pb::FieldValidation::Strict) => Ok(FieldValidation::Strict),
        Err(_) => Err(bad_enum(SERVICE, "field validation", v)),
    }
}

fn user_to_pb(u: UserInfo) -> pb::UserInfo {
    pb::UserInfo {
        username: u.username,
        uid: u.uid,
        groups: u.groups,
        extra: u
            .extra
            .into_iter()
            .map(|(k, values)| (k, pb::ExtraValue { values }))
            .collect(),
    }
}

fn user_from_pb(u: pb::UserInfo) -> UserInfo {
    UserInfo {
        username: u.username,
        uid: u.uid,
        groups: u.groups,
        extra: u.extra.into_iter().map(|(k, v)| (k, v.values)).collect(),
    }
}

fn phase_from_pb(p: i32) -> ApiResult<AdmitPhase> {
    match pb::AdmitPhase::try_from(p) {
        Ok(pb::AdmitPhase::All) => Ok(AdmitPhase::All),
        Ok(pb::AdmitPhase::Mutating) => Ok(AdmitPhase::Mutating),
        Ok(pb::AdmitPhase::Validating) => Ok(AdmitPhase::Validating),
        Err(_) => Err(bad_enum(SERVICE, "phase", p)),
    }
}

fn phase_to_pb(p: AdmitPhase) -> pb::AdmitPhase {
    match p {
        AdmitPhase::All => pb::AdmitPhase::All,
        AdmitPhase::Mutating => pb::AdmitPhase::Mutating,
        AdmitPhase::Validating => pb::AdmitPhase::Validating,
    }
}

fn request_from_pb(r: pb::AdmitRequest) -> ApiResult<AdmissionRequest> {
    let object = match &r.object {
        Some(b) => Some(from_json_bytes(SERVICE, "object", b)?),
        None => None,
    };
    let old_object = match &r.old_object {
        Some(b) => Some(from_json_bytes(SERVICE, "old_object", b)?),
        None => None,
    };
    let options = match &r.options {
        Some(b) => Some(from_json_bytes(SERVICE, "options", b)?),
        None => None,
    };
    Ok(AdmissionRequest {
        operation: operation_from_pb(r.operation)?,
        gr: gr_from_pb(r.gr.ok_or_else(|| missing(SERVICE, "gr"))?),
        api_version: r.api_version,
        kind: r.kind,
        kind_api_version: r.kind_api_version,
        namespace: r.namespace,
        name: r.name,
        subresource: r.subresource,
        object,
        old_object,
        raw_body: r.raw_body,
        is_patch: r.is_patch,
        field_validation: field_validation_from_pb(r.field_validation)?,
        dry_run: r.dry_run,
        user: r.user.map(user_from_pb),
        options,
    })
}

fn request_to_pb(r: AdmissionRequest, phase: AdmitPhase) -> pb::AdmitRequest {
    pb::AdmitRequest {
        phase: phase_to_pb(phase).into(),
        operation: operation_to_pb(r.operation).into(),
        gr: Some(gr_to_pb(&r.gr)),
        api_version: r.api_version,
        kind: r.kind,
        kind_api_version: r.kind_api_version,
        namespace: r.namespace,
        name: r.name,
        subresource: r.subresource,
        object: r.object.as_ref().map(to_json_bytes),
        old_object: r.old_object.as_ref().map(to_json_bytes),
        raw_body: r.raw_body,
        is_patch: r.is_patch,
        field_validation: field_validation_to_pb(r.field_validation).into(),
        dry_run: r.dry_run,
        user: r.user.map(user_to_pb),
        options: r.options.as_ref().map(to_json_bytes),
    }
}

/// gRPC server adapter over a local [`AdmissionApi`].
#[derive(Clone)]
pub struct AdmissionGrpc {
    api: Arc<dyn AdmissionApi>,
}

impl AdmissionGrpc {
    /// Wrap a local admission implementation.
    pub fn new(api: Arc<dyn AdmissionApi>) -> Self {
        AdmissionGrpc { api }
    }
}

grpc_server!(AdmissionGrpc: AdmissionApi => AdmissionServer);

#[tonic::async_trait]
impl Admission for AdmissionGrpc {
    async fn admit(
        &self,
        req: Request<pb::AdmitRequest>,
    ) -> Result<Response<pb::AdmitResponse>, Status> {
        let req = req.into_inner();
        let phase = phase_from_pb(req.phase).map_err(|e| to_grpc_status(&e))?;
        let areq = request_from_pb(req).map_err(|e| to_grpc_status(&e))?;
        let out = (self.api.admit_phase(areq, phase).await).map_err(|e| to_grpc_status(&e))?;
        Ok(Response::new(pb::AdmitResponse {
            object: out.object.as_ref().map(to_json_bytes),
            unmutated: out.unmutated.as_ref().map(to_json_bytes),
            warnings: out.warnings,
            audit_annotations: out.audit_annotations.into_iter().collect(),
        }))
    }

    async fn ready(&self, _req: Request<ReadyRequest>) -> Result<Response<ReadyResponse>, Status> {
        ready_reply(self.api.ready().await)
    }
}

remote_client! {
    /// An [`AdmissionApi`] served by a remote admission service. Cheap to clone.
    RemoteAdmission(AdmissionClient)
}

#[async_trait::async_trait]
impl AdmissionApi for RemoteAdmission {
    async fn admit_phase(
        &self,
        req: AdmissionRequest,
        phase: AdmitPhase,
    ) -> ApiResult<AdmissionResponse> {
        let resp = self
            .client
            .clone()
            .admit(request_to_pb(req, phase))
            .await
            .map_err(|s| from_grpc_status(SERVICE, &s))?
            .into_inner();
        let object = match &resp.object {
            Some(b) => Some(from_json_bytes(SERVICE, "object", b)?),
            None => None,
        };
        let unmutated = match &resp.unmutated {
            Some(b) => Some(from_json_bytes(SERVICE, "unmutated", b)?),
            None => None,
        };
        Ok(AdmissionResponse {
            object,
            unmutated,
            warnings: resp.warnings,
            audit_annotations: resp.audit_annotations.into_iter().collect(),
        })
    }

    /// Calls the peer's `Ready`; a peer that cannot be reached is a `503`.
    async fn ready(&self) -> ApiResult<()> {
        ready_result(SERVICE, self.client.clone().ready(ReadyRequest {}).await)
    }
}
