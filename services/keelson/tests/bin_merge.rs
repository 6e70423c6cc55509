//! Runs the real `keelson-merge` binary on port 0 and talks to it over gRPC.

use std::process::{Child, Command};

use keelson_api::{MergeApi, PatchRequest, PatchType};
use keelson_rpc::RemoteMerge;
use serde_json::json;

mod common;

fn start(envs: &[(&str, &str)], args: &[&str]) -> (Child, String) {
    common::start(env!("CARGO_BIN_EXE_keelson-merge"), args, envs)
}

#[tokio::test]
async fn serves_patches_on_a_port_from_the_env_and_stops_on_sigterm() {
    let (child, endpoint) = start(&[("KEELSON_LISTEN", "127.0.0.1:0")], &[]);
    assert!(!endpoint.ends_with(":0"), "{endpoint}");
    let merge = RemoteMerge::connect_lazy(&endpoint).unwrap();
    merge.ready().await.unwrap();
    let out = merge
        .patch(PatchRequest {
            patch_type: PatchType::Merge,
            gr: keelson_api::GroupResource::new("", "configmaps"),
            kind: "ConfigMap".into(),
            owner: keelson_api::FieldOwner { manager: "test".into(), api_version: "v1".into(), subresource: String::new() },
            force: false,
            original: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}),
            patch: br#"{"data":{"b":"2"}}"#.to_vec(),
        })
        .await
        .unwrap();
    assert_eq!(out["data"], json!({"a": "1", "b": "2"}));

    let status = common::stop(child).await;
    assert!(status.success(), "{status:?}");
    assert_eq!(merge.ready().await.unwrap_err().code, 503);
}

#[test]
fn a_busy_port_is_a_clear_startup_error() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_keelson-merge"))
        .args(["--listen", &addr])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("keelson-merge: cannot listen on {addr}")),
        "{stderr}"
    );
}
