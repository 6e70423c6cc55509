//! MergeApi over gRPC: every patch type and error crosses the wire.

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use keelson_api::{FieldOwner, ManagedFieldsRequest, MergeApi, PatchRequest, PatchType};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use keelson_rpc::{MergeGrpc, RemoteMerge};
use serde_json::{json, Value};
use tonic::transport::Server;

/// Records the request and returns the original with the patch body as a
/// string under `patched`; a patch body "!" is undecodable (400).
#[derive(Default)]
struct FakeMerge {
    seen: Mutex<Vec<PatchRequest>>,
}

#[async_trait]
impl MergeApi for FakeMerge {
    async fn patch(&self, req: PatchRequest) -> ApiResult<Value> {
        self.seen.lock().unwrap().push(req.clone());
        if req.patch == b"!" {
            return Err(ApiError::bad_request(
                "error decoding patch: invalid character '!' looking for beginning of value",
            ));
        }
        let mut out = req.original;
        out["patched"] = json!(String::from_utf8_lossy(&req.patch));
        Ok(out)
    }

    async fn update_managed_fields(&self, req: ManagedFieldsRequest) -> ApiResult<Value> {
        let mut out = req.new;
        out["managedBy"] = json!(req.owner.manager);
        out["old"] = req.old;
        Ok(out)
    }
}

#[tokio::test]
async fn every_patch_type_round_trips() {
    let fake = Arc::new(FakeMerge::default());
    let server = support::start(
        Server::builder().add_service(MergeGrpc::server(fake.clone())),
        None,
    )
    .await;
    let merge = RemoteMerge::connect_lazy(&server.endpoint()).unwrap();
    let mut sent = Vec::new();
    for t in [
        PatchType::Json,
        PatchType::Merge,
        PatchType::StrategicMerge,
        PatchType::Apply,
    ] {
        let req = PatchRequest {
            patch_type: t,
            gr: GroupResource::new("", "configmaps"),
            kind: "ConfigMap".into(),
            owner: keelson_api::FieldOwner {
                manager: "test".into(),
                api_version: "v1".into(),
                subresource: String::new(),
            },
            force: false,
            original: json!({"metadata": {"name": "c"}, "data": {"a": "1"}}),
            patch: format!("patch for {}", t.media_type()).into_bytes(),
        };
        let out = merge.patch(req.clone()).await.unwrap();
        assert_eq!(out["data"]["a"], "1");
        assert_eq!(out["patched"], format!("patch for {}", t.media_type()));
        sent.push(req);
    }
    assert_eq!(*fake.seen.lock().unwrap(), sent);
    merge.ready().await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn a_patch_error_arrives_identical() {
    let server = support::start(
        Server::builder().add_service(MergeGrpc::server(Arc::new(FakeMerge::default()))),
        None,
    )
    .await;
    let merge = RemoteMerge::connect_lazy(&server.endpoint()).unwrap();
    let err = merge
        .patch(PatchRequest {
            patch_type: PatchType::Merge,
            gr: GroupResource::new("", "configmaps"),
            kind: "ConfigMap".into(),
            owner: keelson_api::FieldOwner {
                manager: "test".into(),
                api_version: "v1".into(),
                subresource: String::new(),
            },
            force: false,
            original: json!({}),
            patch: b"!".to_vec(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ApiError::bad_request(
            "error decoding patch: invalid character '!' looking for beginning of value"
        )
    );
    server.stop().await;
}

#[tokio::test]
async fn a_down_merge_service_is_a_503() {
    let merge = RemoteMerge::connect_lazy(&support::dead_endpoint().await).unwrap();
    let err = merge
        .patch(PatchRequest {
            patch_type: PatchType::Json,
            gr: GroupResource::new("", "pods"),
            kind: "Pod".into(),
            owner: FieldOwner::default(),
            force: false,
            original: json!({}),
            patch: b"[]".to_vec(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code, 503);
    assert!(
        err.message.starts_with("the merge service is unavailable"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn managed_fields_requests_round_trip_with_an_absent_old_object() {
    let fake = Arc::new(FakeMerge::default());
    let server = support::start(
        Server::builder().add_service(MergeGrpc::server(fake.clone())),
        None,
    )
    .await;
    let merge = RemoteMerge::connect_lazy(&server.endpoint()).unwrap();
    let owner = FieldOwner {
        manager: "kubectl-create".into(),
        api_version: "v1".into(),
        subresource: String::new(),
    };
    let out = merge
        .update_managed_fields(ManagedFieldsRequest {
            gr: GroupResource::new("", "configmaps"),
            kind: "ConfigMap".into(),
            owner: owner.clone(),
            old: Value::Null,
            new: json!({"metadata": {"name": "c"}}),
        })
        .await
        .unwrap();
    assert_eq!(out["managedBy"], "kubectl-create");
    assert_eq!(out["old"], Value::Null);
    let out = merge
        .update_managed_fields(ManagedFieldsRequest {
            gr: GroupResource::new("", "configmaps"),
            kind: "ConfigMap".into(),
            owner,
            old: json!({"metadata": {"name": "c"}}),
            new: json!({"metadata": {"name": "c"}, "data": {}}),
        })
        .await
        .unwrap();
    assert_eq!(out["old"], json!({"metadata": {"name": "c"}}));
}
