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

/// An operator's custom resource as kube-rs users write it: the CRD comes
/// from `#[derive(CustomResource, KubeSchema)]` (schemars' schema, kube's
/// structural rewrite, a CEL rule, a status and a scale subresource,
/// printer columns, a short name, a selectable field).
mod derived {
    use std::collections::BTreeMap;

    use kube::{CustomResource, KubeSchema};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug)]
    #[kube(
        group = "ops.keelson.dev",
        version = "v1",
        kind = "Database",
        namespaced,
        status = "DatabaseStatus",
        shortname = "db",
        category = "keelson",
        scale(
            spec_replicas_path = ".spec.replicas",
            status_replicas_path = ".status.replicas"
        ),
        printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
        printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas"),
        printcolumn(name = "Ready", type_ = "boolean", json_path = ".status.ready"),
        selectable = ".spec.engine",
        validation = Rule::new("self.spec.replicas <= 5").message("at most 5 replicas")
    )]
    #[serde(rename_all = "camelCase")]
    pub struct DatabaseSpec {
        pub engine: Engine,
        pub replicas: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub version: Option<String>,
        #[serde(default)]
        pub storage_gib: u32,
        #[serde(default)]
        pub users: Vec<User>,
        #[serde(default)]
        pub parameters: BTreeMap<String, String>,
    }

    #[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
    pub enum Engine {
        Postgres,
        Mysql,
    }

    #[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
    pub struct User {
        pub name: String,
        #[serde(default)]
        pub admin: bool,
    }

    #[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
    pub struct DatabaseStatus {
        pub ready: bool,
        pub replicas: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub message: Option<String>,
    }
}

#[derive(Debug)]
struct ReconcileError(kube::Error);

impl std::fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for ReconcileError {}

/// The operator's reconcile: the status follows the spec, written by
/// Server-Side Apply on the status subresource.
async fn reconcile(
    db: std::sync::Arc<derived::Database>,
    api: std::sync::Arc<Api<derived::Database>>,
) -> Result<kube::runtime::controller::Action, ReconcileError> {
    use kube::ResourceExt;
    let status = derived::DatabaseStatus {
        ready: true,
        replicas: db.spec.replicas,
        message: Some(format!(
            "{:?} with {} user(s)",
            db.spec.engine,
            db.spec.users.len()
        )),
    };
    let patch = serde_json::json!({
        "apiVersion": "ops.keelson.dev/v1", "kind": "Database", "status": status,
    });
    api.patch_status(
        &db.name_any(),
        &PatchParams::apply("database-operator").force(),
        &Patch::Apply(patch),
    )
    .await
    .map_err(ReconcileError)?;
    Ok(kube::runtime::controller::Action::await_change())
}

async fn operator(c: &Cluster) {
    use derived::{Database, DatabaseSpec, Engine, User};
    use kube::runtime::controller::{Action, Controller};
    use kube::CustomResourceExt;
    use std::sync::Arc;

    let client = client(c).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    // Operators install their CRD with Server-Side Apply.
    let crd = Database::crd();
    let name = crd.metadata.name.clone().expect("crd name");
    crds.patch(
        &name,
        &PatchParams::apply("database-operator").force(),
        &Patch::Apply(&crd),
    )
    .await
    .expect("apply the derived CRD");
    tokio::time::timeout(
        Duration::from_secs(5),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established within 5s")
    .expect("await");

    let dbs: Api<Database> = Api::namespaced(client.clone(), "default");
    let shared = Arc::new(dbs.clone());
    let controller = tokio::spawn(
        Controller::new(dbs.clone(), watcher::Config::default())
            .run(
                reconcile,
                |_, _: &ReconcileError, _| Action::requeue(Duration::from_millis(200)),
                shared,
            )
            .for_each(|_| futures::future::ready(())),
    );

    let spec = DatabaseSpec {
        engine: Engine::Postgres,
        replicas: 1,
        version: None,
        storage_gib: 10,
        users: vec![User {
            name: "app".into(),
            admin: false,
        }],
        parameters: [("max_connections".to_string(), "100".to_string())].into(),
    };
    dbs.create(
        &PostParams::default(),
        &Database::new("orders", spec.clone()),
    )
    .await
    .expect("create");
    let mut mysql = spec.clone();
    mysql.engine = Engine::Mysql;
    dbs.create(&PostParams::default(), &Database::new("users", mysql))
        .await
        .expect("create mysql");

    let ready = |want: i32| {
        move |o: Option<&Database>| {
            o.and_then(|d| d.status.as_ref())
                .is_some_and(|s| s.ready && s.replicas == want)
        }
    };
    tokio::time::timeout(
        Duration::from_secs(10),
        await_condition(dbs.clone(), "orders", ready(1)),
    )
    .await
    .expect("the operator sets the status")
    .expect("await");
    let got = dbs.get("orders").await.expect("get");
    assert_eq!(got.spec.engine, Engine::Postgres);
    assert_eq!(got.spec.parameters["max_connections"], "100");
    assert_eq!(
        got.status.as_ref().and_then(|s| s.message.as_deref()),
        Some("Postgres with 1 user(s)")
    );
    // Spec and status have separate owners.
    let managers: Vec<(String, Option<String>)> = got
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.manager.unwrap_or_default(), m.subresource))
        .collect();
    assert!(
        managers.contains(&("database-operator".to_string(), Some("status".to_string()))),
        "{managers:?}"
    );

    // The scale subresource, as an autoscaler uses it; the operator follows.
    dbs.patch_scale(
        "orders",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": 3}})),
    )
    .await
    .expect("scale");
    tokio::time::timeout(
        Duration::from_secs(10),
        await_condition(dbs.clone(), "orders", ready(3)),
    )
    .await
    .expect("the operator follows the scale")
    .expect("await");
    let scale = dbs.get_scale("orders").await.expect("get scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    assert_eq!(scale.status.map(|s| s.replicas), Some(3));

    // The derived CEL rule is the server's 422.
    let mut big = spec.clone();
    big.replicas = 7;
    match dbs
        .create(&PostParams::default(), &Database::new("huge", big))
        .await
    {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 422, "{s:?}");
            assert!(s.message.contains("at most 5 replicas"), "{}", s.message);
        }
        other => panic!("expected 422: {other:?}"),
    }
    // A value outside the derived enum is refused too.
    let bad = serde_json::json!({
        "apiVersion": "ops.keelson.dev/v1", "kind": "Database",
        "metadata": {"name": "odd"}, "spec": {"engine": "Oracle", "replicas": 1}
    });
    let raw: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::erase::<Database>(&()),
    );
    match raw
        .create(
            &PostParams::default(),
            &serde_json::from_value(bad).expect("object"),
        )
        .await
    {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 422, "{s:?}");
            assert!(
                s.message.contains(
                    r#"spec.engine: Unsupported value: "Oracle": supported values: "Postgres", "Mysql""#
                ),
                "{}",
                s.message
            );
        }
        other => panic!("expected 422: {other:?}"),
    }

    // kubectl: the short name, the printer columns, the selectable field.
    let table = c.ok(&["get", "db", "-n", "default"]);
    let header = table.lines().next().unwrap_or_default();
    for col in ["NAME", "ENGINE", "REPLICAS", "READY", "AGE"] {
        assert!(header.contains(col), "{table}");
    }
    assert!(
        table.lines().any(|l| l.starts_with("orders")
            && l.contains("Postgres")
            && l.contains(" 3 ")
            && l.contains("true")),
        "{table}"
    );
    let mysql_only = c.ok(&[
        "get",
        "databases",
        "-n",
        "default",
        "--field-selector",
        "spec.engine=Mysql",
        "-o",
        "name",
    ]);
    assert_eq!(
        mysql_only.trim(),
        "database.ops.keelson.dev/users",
        "{mysql_only}"
    );
    let by_category = c.ok(&["get", "keelson", "-n", "default", "-o", "name"]);
    assert!(
        by_category.contains("database.ops.keelson.dev/orders"),
        "{by_category}"
    );

    controller.abort();
}

#[test]
fn derived_crd_operator_embedded() {
    let c = Cluster::start(Mode::Embedded);
    block_on(operator(&c));
}

#[test]
fn derived_crd_operator_distributed() {
    let c = Cluster::start(Mode::Distributed);
    block_on(operator(&c));
}
