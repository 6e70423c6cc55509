//! Runs the real `keelson-admission` binary on port 0, started before its
//! store, and checks it reaches the store once the store comes up.

use std::time::Duration;

use keelson_api::{AdmissionApi, AdmissionRequest, FieldValidation, GroupResource, Operation};
use keelson_rpc::RemoteAdmission;
use serde_json::json;
use tokio::net::TcpListener;

mod common;

fn start(envs: &[(&str, &str)]) -> (std::process::Child, String) {
    common::start(env!("CARGO_BIN_EXE_keelson-admission"), &[], envs)
}

fn create_configmap(namespace: &str) -> AdmissionRequest {
    AdmissionRequest {
        operation: Operation::Create,
        gr: GroupResource::new("", "configmaps"),
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        kind_api_version: String::new(),
        namespace: namespace.into(),
        name: "c".into(),
        subresource: String::new(),
        object: Some(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": namespace}, "data": {"a": "1"}}),
        ),
        old_object: None,
        raw_body: None,
        is_patch: false,
        field_validation: FieldValidation::Strict,
        dry_run: false,
        user: None,
        options: None,
    }
}

#[tokio::test]
async fn starts_before_its_store_and_uses_it_once_up() {
    let reserved = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let store_addr = reserved.local_addr().unwrap();
    drop(reserved);
    let store_endpoint = format!("http://{store_addr}");
    let (child, endpoint) = start(&[
        ("KEELSON_LISTEN", "127.0.0.1:0"),
        ("KEELSON_STORE_ENDPOINT", &store_endpoint),
    ]);
    let admission = RemoteAdmission::connect_lazy(&endpoint).unwrap();
    admission.ready().await.unwrap();

    let err = admission
        .admit(create_configmap("default"))
        .await
        .unwrap_err();
    assert_eq!(err.code, 503, "{err:?}");
    assert!(
        err.message.starts_with("the store service is unavailable"),
        "{}",
        err.message
    );

    // Bring the store up in-process on the address admission was given.
    let dir = tempfile::tempdir().unwrap();
    let config = keelson_store_service::Config {
        data_dir: dir.path().to_path_buf(),
        listen: store_addr,
        ..Default::default()
    };
    let store = keelson_store_service::open(&config).await.unwrap();
    let listener = TcpListener::bind(store_addr).await.unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let store_task = tokio::spawn(keelson_store_service::serve(store, listener, async {
        let _ = stop_rx.await;
    }));

    let mut admitted = None;
    for _ in 0..50 {
        match admission.admit(create_configmap("default")).await {
            Ok(resp) => {
                admitted = resp.object;
                break;
            }
            Err(e) => assert_eq!(e.code, 503, "{e:?}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let admitted = admitted.expect("admission never reached the store");
    assert_eq!(admitted["data"]["a"], "1");

    let err = admission.admit(create_configmap("nope")).await.unwrap_err();
    assert_eq!(err.code, 404);
    assert_eq!(err.message, "namespaces \"nope\" not found");

    let status = common::stop(child).await;
    assert!(status.success());
    let _ = stop_tx.send(());
    store_task.await.unwrap().unwrap();
}
