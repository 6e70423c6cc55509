//! Runs the real `keelson-merge` binary on port 0 and talks to it over gRPC.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use keelson_api::{MergeApi, PatchRequest, PatchType};
use keelson_rpc::RemoteMerge;
use serde_json::json;

/// Start the binary and read its `listening on ADDR` line.
fn start(envs: &[(&str, &str)], args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_keelson-merge"))
        .args(args)
        .envs(envs.iter().copied())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    // Keep draining so a later print never hits a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, format!("http://{addr}"))
}

fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
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
            original: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}),
            patch: br#"{"data":{"b":"2"}}"#.to_vec(),
        })
        .await
        .unwrap();
    assert_eq!(out["data"], json!({"a": "1", "b": "2"}));

    sigterm(&child);
    let status = tokio::task::spawn_blocking(move || {
        let mut child = child;
        child.wait()
    })
    .await
    .unwrap()
    .unwrap();
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
