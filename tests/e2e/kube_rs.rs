//! kube-rs (the `kube` crate, a real Kubernetes client) against Keelson:
//! CRUD through `Api`, and kube-runtime's watcher with streaming lists
//! (`sendInitialEvents`), which waits for the initial-events-end bookmark.

mod support;

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher::{self, Event};
use kube::Client;
use support::{block_on, Cluster, Mode};

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"k": name},
    }))
    .expect("configmap")
}

async fn client(c: &Cluster) -> Client {
    let kc = Kubeconfig::read_from(&c.kubeconfig).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    Client::try_from(cfg).expect("client")
}

/// The next watcher event that is not a plain `Init`, within 20 s.
async fn next<S>(s: &mut S) -> Event<ConfigMap>
where
    S: futures::Stream<Item = Result<Event<ConfigMap>, watcher::Error>> + Unpin,
{
    tokio::time::timeout(Duration::from_secs(20), s.next())
        .await
        .expect("watcher event in time")
        .expect("stream open")
        .expect("watcher error")
}

fn name(cm: &ConfigMap) -> String {
    cm.metadata.name.clone().unwrap_or_default()
}

async fn scenario(c: &Cluster, streaming: bool) {
    let client = client(c).await;
    let ns = if streaming {
        "kube-rs-streaming"
    } else {
        "kube-rs-list"
    };
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).expect("ns"),
        )
        .await
        .expect("create namespace");
    let api: Api<ConfigMap> = Api::namespaced(client, ns);
    // The root CA publisher gives the namespace `kube-root-ca.crt` within
    // a second: wait for it, so that the watch below starts after it.
    for _ in 0..100 {
        if api
            .get_opt("kube-root-ca.crt")
            .await
            .ok()
            .flatten()
            .is_some()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for n in ["a", "b"] {
        api.create(&PostParams::default(), &cm(n))
            .await
            .expect("create");
    }
    let got = api.get("a").await.expect("get");
    assert_eq!(
        got.data
            .as_ref()
            .and_then(|d| d.get("k"))
            .map(String::as_str),
        Some("a")
    );
    assert!(got.metadata.resource_version.is_some());

    let cfg = if streaming {
        watcher::Config::default().streaming_lists()
    } else {
        watcher::Config::default()
    };
    let mut events = watcher::watcher(api.clone(), cfg).boxed();
    assert!(matches!(next(&mut events).await, Event::Init));
    let mut initial = Vec::new();
    loop {
        match next(&mut events).await {
            Event::InitApply(o) => initial.push(name(&o)),
            Event::InitDone => break,
            other => panic!("unexpected event during the initial list: {other:?}"),
        }
    }
    initial.sort();
    // The root CA publisher's ConfigMap is in every namespace.
    initial.retain(|n| n != "kube-root-ca.crt");
    assert_eq!(initial, ["a", "b"]);

    api.create(&PostParams::default(), &cm("c"))
        .await
        .expect("create c");
    match next(&mut events).await {
        Event::Apply(o) => assert_eq!(name(&o), "c"),
        other => panic!("expected Apply(c), got {other:?}"),
    }
    api.delete("a", &DeleteParams::default())
        .await
        .expect("delete a");
    match next(&mut events).await {
        Event::Delete(o) => assert_eq!(name(&o), "a"),
        other => panic!("expected Delete(a), got {other:?}"),
    }
}

fn run(mode: Mode) {
    let c = Cluster::start(mode);
    block_on(async {
        scenario(&c, true).await;
        scenario(&c, false).await;
    });
}

#[test]
fn kube_rs_embedded() {
    run(Mode::Embedded);
}

#[test]
fn kube_rs_distributed() {
    run(Mode::Distributed);
}
