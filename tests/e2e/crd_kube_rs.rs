//! kube-rs against custom resources, controller style: register a CRD with
//! `Api<CustomResourceDefinition>`, wait for `Established` with
//! kube-runtime's condition, then run a watcher and Server-Side Apply on
//! the custom resource through `DynamicObject`.

mod support;

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::watcher::{self, Event};
use kube::Client;
use support::{block_on, Cluster, Mode};

async fn client(c: &Cluster) -> Client {
    let kc = Kubeconfig::read_from(&c.kubeconfig).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    Client::try_from(cfg).expect("client")
}

fn crd() -> CustomResourceDefinition {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "documents.kube.rs"},
        "spec": {
            "group": "kube.rs", "scope": "Namespaced",
            "names": {"plural": "documents", "singular": "document", "kind": "Document", "listKind": "DocumentList", "shortNames": ["doc"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["title"], "properties": {
                        "title": {"type": "string"},
                        "hidden": {"type": "boolean", "default": false},
                        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
                    }},
                    "status": {"type": "object", "properties": {"views": {"type": "integer"}}}
                }}}
            }]
        }
    }))
    .expect("crd")
}

async fn scenario(c: &Cluster) {
    let client = client(c).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &crd())
        .await
        .expect("create crd");
    let established = await_condition(
        crds.clone(),
        "documents.kube.rs",
        conditions::is_crd_established(),
    );
    tokio::time::timeout(Duration::from_secs(5), established)
        .await
        .expect("established within 5s")
        .expect("await");

    let gvk = GroupVersionKind::gvk("kube.rs", "v1", "Document");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "documents");
    let docs: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);

    let mut events = watcher::watcher(docs.clone(), watcher::Config::default()).boxed();
    // The initial (empty) list.
    loop {
        match tokio::time::timeout(Duration::from_secs(20), events.next()).await {
            Ok(Some(Ok(Event::InitDone))) => break,
            Ok(Some(Ok(_))) => {}
            other => panic!("watcher: {other:?}"),
        }
    }

    let apply = |tags: serde_json::Value| {
        serde_json::json!({
            "apiVersion": "kube.rs/v1", "kind": "Document",
            "metadata": {"name": "d1"},
            "spec": {"title": "hello", "tags": tags}
        })
    };
    let pp = PatchParams::apply("kube-rs-e2e");
    let d = docs
        .patch("d1", &pp, &Patch::Apply(apply(serde_json::json!(["a"]))))
        .await
        .expect("apply creates");
    assert_eq!(d.data["spec"]["hidden"], false, "defaulted: {:?}", d.data);
    // A second manager's set element is merged, not replaced.
    docs.patch(
        "d1",
        &PatchParams::apply("other"),
        &Patch::Apply(apply(serde_json::json!(["b"]))),
    )
    .await
    .expect("second apply");
    let d = docs.get("d1").await.expect("get");
    assert_eq!(
        d.data["spec"]["tags"],
        serde_json::json!(["a", "b"]),
        "{:?}",
        d.data
    );

    let mut seen_added = false;
    while !seen_added {
        match tokio::time::timeout(Duration::from_secs(20), events.next()).await {
            Ok(Some(Ok(Event::Apply(o)))) => seen_added = o.metadata.name.as_deref() == Some("d1"),
            Ok(Some(Ok(_))) => {}
            other => panic!("watcher: {other:?}"),
        }
    }

    // The status subresource.
    let status = serde_json::json!({"status": {"views": 3}});
    docs.patch_status("d1", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    assert_eq!(
        docs.get("d1").await.expect("get").data["status"]["views"],
        3
    );

    // A schema violation is kube's 422.
    let bad = serde_json::json!({"spec": {"title": 5}});
    let err = docs
        .patch("d1", &PatchParams::default(), &Patch::Merge(&bad))
        .await
        .expect_err("invalid");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422);
            assert!(
                s.message
                    .contains("spec.title in body must be of type string"),
                "{}",
                s.message
            );
        }
        other => panic!("{other:?}"),
    }
}

fn run(mode: Mode) {
    let c = Cluster::start(mode);
    block_on(scenario(&c));
}

#[test]
fn crd_kube_rs_embedded() {
    run(Mode::Embedded);
}

#[test]
fn crd_kube_rs_distributed() {
    run(Mode::Distributed);
}
