//! A resource registered in a running server's catalog is served at once:
//! create, get, list and watch through the gateway over HTTPS, and it
//! appears in discovery and OpenAPI with new ETags. The gateway runs
//! in-process with the embedded (local) backends, sharing one catalog
//! handle with admission, as the `keelson` binary does.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use keelson_api::{AdmissionApi, MergeApi, StoreApi, WatchCacheApi};
use keelson_registry::{Catalog, ResourceInfo, Schema, Strategy};
use serde_json::{json, Value};

const WIDGET_DEF: &str = "com.example.v1.Widget";

/// `widgets.example.com/v1`: a namespaced kind with `spec.size` (integer).
fn widgets() -> (Vec<ResourceInfo>, BTreeMap<String, Schema>) {
    let object = |props: Vec<(&str, Schema)>| {
        let mut s = Schema {
            type_: Some("object".into()),
            ..Schema::default()
        };
        for (k, v) in props {
            s.properties.insert(k.into(), v);
        }
        s
    };
    let typed = |t: &str| Schema {
        type_: Some(t.into()),
        ..Schema::default()
    };
    let schema = object(vec![
        ("apiVersion", typed("string")),
        ("kind", typed("string")),
        (
            "metadata",
            Schema {
                reference: Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta".into()),
                ..Schema::default()
            },
        ),
        ("spec", object(vec![("size", typed("integer"))])),
    ]);
    let info = ResourceInfo {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        list_kind: "WidgetList".into(),
        plural: "widgets".into(),
        singular: "widget".into(),
        namespaced: true,
        verbs: [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
        .map(String::from)
        .to_vec(),
        definition: WIDGET_DEF.into(),
        strategy: Strategy {
            tracks_generation: true,
            ..Strategy::default()
        },
        ..ResourceInfo::default()
    };
    (
        vec![info],
        BTreeMap::from([(WIDGET_DEF.to_owned(), schema)]),
    )
}

struct Server {
    url: String,
    client: reqwest::Client,
    catalog: Catalog,
    _gateway: keelson_gateway::RunningGateway,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = keelson_storage::LocalStore::open(
        &dir.path().join("store"),
        keelson_storage::StoreConfig::default(),
    )
    .await
    .expect("store");
    let store: Arc<dyn StoreApi> = Arc::new(store);
    let catalog = Catalog::builtin();
    let admission: Arc<dyn AdmissionApi> = Arc::new(keelson_admission::LocalAdmission::new(
        store.clone(),
        catalog.clone(),
    ));
    let merge: Arc<dyn MergeApi> = Arc::new(keelson_merge::LocalMerge::new(catalog.clone()));
    let watch: Arc<dyn WatchCacheApi> = Arc::new(keelson_watchcache::LocalWatchCache::new(
        store.clone(),
        keelson_watchcache::WatchCacheConfig::default(),
    ));
    let backends = keelson_gateway::Backends {
        store,
        admission,
        merge,
        watch,
        catalog: catalog.clone(),
    };
    let config = keelson_gateway::GatewayConfig {
        data_dir: dir.path().to_path_buf(),
        secure_port: 0,
        ..Default::default()
    };
    let gateway = keelson_gateway::start(config, backends)
        .await
        .expect("gateway");
    let ca = std::fs::read(dir.path().join("pki/ca.crt")).expect("ca.crt");
    let token = std::fs::read_to_string(dir.path().join("admin-token")).expect("token");
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {}", token.trim()).parse().expect("header"),
    );
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("ca"))
        .default_headers(headers)
        .build()
        .expect("client");
    Server {
        url: format!("https://{}", gateway.addr),
        client,
        catalog,
        _gateway: gateway,
        _dir: dir,
    }
}

impl Server {
    async fn get(&self, path: &str, accept: Option<&str>) -> (u16, String, Value) {
        let mut rb = self.client.get(format!("{}{path}", self.url));
        if let Some(a) = accept {
            rb = rb.header(reqwest::header::ACCEPT, a);
        }
        let resp = rb.send().await.expect("send");
        let code = resp.status().as_u16();
        let etag = resp
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = resp.json().await.unwrap_or(Value::Null);
        (code, etag, body)
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let resp = self
            .client
            .post(format!("{}{path}", self.url))
            .json(body)
            .send()
            .await
            .expect("send");
        (
            resp.status().as_u16(),
            resp.json().await.unwrap_or(Value::Null),
        )
    }

    /// ETags of `/apis` (legacy and aggregated v2) and `/openapi/v3`.
    async fn etags(&self) -> [String; 3] {
        let agg = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
        [
            self.get("/apis", None).await.1,
            self.get("/apis", Some(agg)).await.1,
            self.get("/openapi/v3", None).await.1,
        ]
    }
}

fn widget(name: &str, size: i64) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": name}, "spec": {"size": size}})
}

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_added_at_runtime_is_served_without_restart() {
    let s = start().await;
    let before = s.etags().await;
    assert!(before.iter().all(|e| !e.is_empty()), "{before:?}");
    assert_eq!(s.get("/apis/example.com/v1", None).await.0, 404);
    assert_eq!(s.get(WIDGETS, None).await.0, 404);

    let (resources, definitions) = widgets();
    s.catalog.insert(resources, definitions).expect("insert");

    // Discovery and OpenAPI: the new group, with new ETags.
    let after = s.etags().await;
    for (b, a) in before.iter().zip(&after) {
        assert_ne!(b, a);
    }
    let (_, _, apis) = s.get("/apis", None).await;
    assert!(apis["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .any(|g| g["name"] == "example.com"
            && g["preferredVersion"]["groupVersion"] == "example.com/v1"));
    let (code, _, list) = s.get("/apis/example.com/v1", None).await;
    assert_eq!(code, 200);
    assert_eq!(list["resources"][0]["name"], "widgets");
    assert_eq!(list["resources"][0]["kind"], "Widget");
    let agg = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let (_, _, agg) = s.get("/apis", Some(agg)).await;
    let item = agg["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["metadata"]["name"] == "example.com")
        .cloned()
        .expect("example.com in aggregated discovery");
    assert_eq!(item["versions"][0]["resources"][0]["resource"], "widgets");
    let (_, _, root) = s.get("/openapi/v3", None).await;
    let url = root["paths"]["apis/example.com/v1"]["serverRelativeURL"]
        .as_str()
        .expect("openapi path")
        .to_owned();
    let (code, _, doc) = s.get(&url, None).await;
    assert_eq!(code, 200);
    assert!(doc["components"]["schemas"][WIDGET_DEF].is_object());

    // Open a watch before any widget exists.
    let watch = s
        .client
        .get(format!("{}{WIDGETS}?watch=1&timeoutSeconds=10", s.url))
        .send()
        .await
        .expect("watch");
    assert_eq!(watch.status().as_u16(), 200);

    // Create, get, list.
    let (code, created) = s.post(WIDGETS, &widget("w1", 3)).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["spec"]["size"], 3);
    let (code, _, got) = s.get(&format!("{WIDGETS}/w1"), None).await;
    assert_eq!(code, 200);
    assert_eq!(got["metadata"]["uid"], created["metadata"]["uid"]);
    let (code, _, list) = s.get(WIDGETS, None).await;
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["apiVersion"], "example.com/v1");
    assert_eq!(list["items"][0]["metadata"]["name"], "w1");
    // Admission validates against the inserted schema.
    let (code, bad) = s
        .post(
            WIDGETS,
            &json!({"apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": {"name": "w2"}, "spec": {"size": "big"}}),
        )
        .await;
    assert_eq!(code, 400, "{bad}");

    // The watch sees the creation.
    let mut watch = watch;
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !seen.contains("\"w1\"") {
        let chunk = tokio::time::timeout_at(deadline, watch.chunk())
            .await
            .expect("watch event in time")
            .expect("watch stream");
        let Some(chunk) = chunk else { break };
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let first: Value = serde_json::from_str(seen.lines().next().expect("event")).expect("json");
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Widget");
    assert_eq!(first["object"]["metadata"]["name"], "w1");

    // Removing it takes it away again.
    s.catalog
        .remove("example.com", "v1", "widgets")
        .expect("remove");
    assert_eq!(s.get(WIDGETS, None).await.0, 404);
    assert_eq!(s.etags().await, before);
}
