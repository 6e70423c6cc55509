//! The test server as its users drive it: kube-rs clients (`Api`,
//! `kube::runtime::Controller`), kubectl on its kubeconfig, RBAC for a
//! user in groups, preloaded CRDs and objects, and many servers at once.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use keelson_testserver::{TestServer, TestServerError};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::ResourceExt;

fn cm(name: &str, labels: serde_json::Value) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"origin": name},
    }))
    .expect("configmap")
}

/// kube-rs's own integration-test style, unchanged: a `#[tokio::test]`
/// with `Api::<Pod>::namespaced` on a client.
#[tokio::test]
async fn kube_rs_style_pod_test() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().await.expect("client");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let p: Pod = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": "blog" },
        "spec": {
            "containers": [{ "name": "blog", "image": "clux/blog:0.1.0" }],
        }
    }))
    .expect("pod");
    let created = pods
        .create(&PostParams::default(), &p)
        .await
        .expect("create");
    assert_eq!(created.name_any(), "blog");
    assert!(created.metadata.uid.is_some());
    let got = pods.get("blog").await.expect("get");
    assert_eq!(got.metadata.uid, created.metadata.uid);
    let names: Vec<String> = pods
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|p| p.name_any())
        .collect();
    assert_eq!(names, ["blog"]);
    // No kubelet: the pod has no finalizers, so it goes at once.
    pods.delete("blog", &DeleteParams::default().grace_period(0))
        .await
        .expect("delete");
    let err = pods.get("blog").await.expect_err("deleted");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 404),
        "{err:?}"
    );
}

/// 50 servers started at once in this one test binary, each used at once:
/// every server sees its own ConfigMap and no other server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_servers_in_parallel_each_see_only_their_own_objects() {
    let runs = (0..50).map(|i| async move {
        let server = TestServer::start().await.expect("server");
        let api: Api<ConfigMap> =
            Api::namespaced(server.client().await.expect("client"), "default");
        let name = format!("only-in-{i}");
        api.create(
            &PostParams::default(),
            &cm(&name, serde_json::json!({"t": "fifty"})),
        )
        .await
        .expect("create");
        let listed: Vec<String> = api
            .list(&ListParams::default().labels("t=fifty"))
            .await
            .expect("list")
            .items
            .iter()
            .map(|c| c.name_any())
            .collect();
        (server, name, listed)
    });
    let results = futures::future::join_all(runs).await;
    let mut ports = std::collections::BTreeSet::new();
    for (server, name, listed) in &results {
        assert_eq!(
            listed,
            std::slice::from_ref(name),
            "server {} sees only its object",
            server.url()
        );
        ports.insert(server.addr().port());
    }
    assert_eq!(ports.len(), 50, "each on a port of its own");
}

/// A controller written with `kube::runtime::Controller` reconciles
/// against the server: each ConfigMap labelled `copy=yes` gets an
/// annotated copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kube_runtime_controller_reconciles() {
    #[derive(Debug, thiserror::Error)]
    #[error(transparent)]
    struct Error(#[from] kube::Error);

    async fn reconcile(obj: Arc<ConfigMap>, api: Arc<Api<ConfigMap>>) -> Result<Action, Error> {
        let mut copy = ConfigMap {
            data: obj.data.clone(),
            ..Default::default()
        };
        copy.metadata.name = Some(format!("{}-copy", obj.name_any()));
        copy.metadata.annotations =
            Some([("example.com/copied-from".to_string(), obj.name_any())].into());
        match api.create(&PostParams::default(), &copy).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e.into()),
        }
        Ok(Action::await_change())
    }
    fn error_policy(_: Arc<ConfigMap>, _: &Error, _: Arc<Api<ConfigMap>>) -> Action {
        Action::requeue(Duration::from_millis(100))
    }

    let server = TestServer::start().await.expect("server");
    let client = server.client().await.expect("client");
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let controller = Controller::new(api.clone(), watcher::Config::default().labels("copy=yes"))
        .run(reconcile, error_policy, Arc::new(api.clone()))
        .for_each(|_| async {});
    let controller = tokio::spawn(controller);
    for n in ["a", "b"] {
        api.create(
            &PostParams::default(),
            &cm(n, serde_json::json!({"copy": "yes"})),
        )
        .await
        .expect("create");
    }
    api.create(
        &PostParams::default(),
        &cm("ignored", serde_json::json!({})),
    )
    .await
    .expect("create");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let copies: Vec<(String, String)> = api
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .iter()
            .filter_map(|c| {
                let from = c.annotations().get("example.com/copied-from")?;
                Some((c.name_any(), from.clone()))
            })
            .collect();
        if copies.len() == 2 {
            assert_eq!(
                copies,
                [
                    ("a-copy".to_string(), "a".to_string()),
                    ("b-copy".into(), "b".into())
                ]
            );
            let copy = api.get("a-copy").await.expect("copy");
            assert_eq!(
                copy.data
                    .unwrap_or_default()
                    .get("origin")
                    .map(String::as_str),
                Some("a")
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "copies after 20 s: {copies:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    controller.abort();
}

/// A user in groups is authorized by RBAC as on kube-apiserver: forbidden
/// with kube's message until a RoleBinding names one of the groups.
#[tokio::test]
async fn a_user_in_groups_is_authorized_by_rbac() {
    let server = TestServer::start().await.expect("server");
    let alice = server
        .client_as("alice", &["devs", "qa"])
        .await
        .expect("client");
    let as_alice: Api<ConfigMap> = Api::namespaced(alice, "default");
    let err = as_alice
        .list(&ListParams::default())
        .await
        .expect_err("forbidden");
    let kube::Error::Api(status) = err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 403);
    assert_eq!(status.reason, "Forbidden");
    assert_eq!(
        status.message,
        "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let admin = server.client().await.expect("admin");
    let bindings: Api<DynamicObject> = Api::namespaced_with(
        admin,
        "default",
        &kube::core::ApiResource::erase::<k8s_openapi::api::rbac::v1::RoleBinding>(&()),
    );
    let binding: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "qa-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "qa"}],
    }))
    .expect("binding");
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("bind");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while let Err(e) = as_alice.list(&ListParams::default()).await {
        assert!(tokio::time::Instant::now() < deadline, "still: {e:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // `view` does not write.
    let err = as_alice
        .create(&PostParams::default(), &cm("x", serde_json::json!({})))
        .await
        .expect_err("view cannot create");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403),
        "{err:?}"
    );
}

const WIDGETS: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"#;

const OBJECTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: shop}
spec: {size: 3}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: test}
"#;

/// CRDs and objects preloaded from YAML are there when `start` returns.
#[tokio::test]
async fn preloaded_crds_and_objects_are_there_at_start() {
    let server = TestServer::builder()
        .crd_yaml(WIDGETS)
        .objects_yaml(OBJECTS)
        .start()
        .await
        .expect("server");
    let client = server.client().await.expect("client");
    let gvk = kube::core::GroupVersionKind::gvk("example.com", "v1", "Widget");
    let (ar, _) = kube::discovery::pinned_kind(&client, &gvk)
        .await
        .expect("served");
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "shop", &ar);
    let w = widgets.get("w1").await.expect("widget");
    assert_eq!(w.data["spec"]["size"], 3);
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let settings = cms.get("settings").await.expect("configmap in default");
    assert_eq!(settings.data.unwrap_or_default()["mode"], "test");
}

/// A document that is not an object, or a kind the server does not
/// serve, fails the start with an error naming it.
#[tokio::test]
async fn bad_preload_documents_fail_the_start() {
    let err = TestServer::builder()
        .objects_yaml(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- just\n- a list\n",
        )
        .start()
        .await
        .expect_err("a list is no object");
    assert!(
        matches!(err, TestServerError::Yaml { index: 1, .. }),
        "{err}"
    );
    let err = TestServer::builder()
        .arg("--no-such-flag")
        .start()
        .await
        .expect_err("unknown flag");
    assert!(err.to_string().contains("--no-such-flag"), "{err}");
}

/// kubectl works on the kubeconfig; dropping the server releases its port
/// and removes its directory.
#[tokio::test]
async fn kubectl_uses_the_kubeconfig_and_drop_releases_everything() {
    let server = TestServer::start().await.expect("server");
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(server.kubeconfig_path())
        .args(["get", "namespace", "kube-system", "-o", "name"])
        .output()
        .expect("kubectl");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "namespace/kube-system\n"
    );
    let (addr, dir) = (server.addr(), server.data_dir().to_path_buf());
    drop(server);
    assert!(std::net::TcpStream::connect(addr).is_err(), "port released");
    assert!(!dir.exists(), "directory removed");
}
