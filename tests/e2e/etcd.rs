//! Keelson over a real etcd (`--storage-backend=etcd3`): kubectl create,
//! get, list, watch and delete; kube's key layout seen with `etcdctl`; the
//! data survives a Keelson restart; an etcd outage answers 504 and fails
//! `/readyz` with kube's `[-]etcd failed`, and everything recovers when
//! etcd returns. Two `keelson-store` replicas over one etcd serve the same
//! data. The test starts `etcd` itself (it must be on PATH; `.ci/run`
//! installs Debian's `etcd-server`).

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use keelson_kv_etcd::testing::TestEtcd;
use support::{block_on, Cluster, Mode};

fn etcd_flags(etcd: &TestEtcd) -> Vec<String> {
    vec![
        "--storage-backend=etcd3".into(),
        format!("--etcd-servers={}", etcd.endpoint()),
        // A short interval, so the compactor runs during the test.
        "--etcd-compaction-interval=2s".into(),
    ]
}

fn start(mode: Mode, flags: &[String]) -> Cluster {
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    Cluster::start_with(mode, &args)
}

/// `etcdctl get --prefix PREFIX --keys-only` against the test etcd.
fn etcd_keys(etcd: &TestEtcd, prefix: &str) -> Vec<String> {
    let out = Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", &etcd.endpoint()])
        .args(["get", "--prefix", prefix, "--keys-only"])
        .output()
        .expect("etcdctl (Debian's etcd-client) on PATH");
    assert!(
        out.status.success(),
        "etcdctl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// GET `path` with the admin token: (status, body).
fn get(c: &Cluster, path: &str) -> (u16, String) {
    let client = c.client();
    let url = format!("{}{}", c.url, path);
    block_on(async move {
        let r = client.get(&url).send().await.expect("request");
        let code = r.status().as_u16();
        (code, r.text().await.unwrap_or_default())
    })
}

fn create_get_list_watch_delete(c: &Cluster) {
    let mut watch = Command::new("kubectl")
        .args(["get", "configmaps", "-w", "--output-watch-events"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    std::thread::sleep(Duration::from_millis(1500));
    c.ok(&["create", "configmap", "demo", "--from-literal=a=b"]);
    assert_eq!(
        c.ok(&["get", "configmap", "demo", "-o", "jsonpath={.data.a}"]),
        "b"
    );
    c.ok(&["label", "configmap", "demo", "k=v"]);
    let list = c.ok(&["get", "configmaps", "-o", "name"]);
    assert!(list.lines().any(|l| l == "configmap/demo"), "{list}");
    c.ok(&["create", "configmap", "gone", "--from-literal=x=y"]);
    c.ok(&["delete", "configmap", "gone"]);
    let err = c.fails(&["get", "configmap", "gone"], None);
    assert!(
        err.contains(r#"configmaps "gone" not found"#),
        "kube's NotFound: {err}"
    );
    std::thread::sleep(Duration::from_millis(1500));
    let _ = watch.kill();
    let mut out = String::new();
    watch
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    let _ = watch.wait();
    let rows: Vec<(&str, &str)> = out
        .lines()
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            Some((cols.next()?, cols.next()?))
        })
        .filter(|(_, name)| *name == "demo" || *name == "gone")
        .collect();
    assert_eq!(
        rows,
        [
            ("ADDED", "demo"),
            ("MODIFIED", "demo"),
            ("ADDED", "gone"),
            ("DELETED", "gone"),
        ],
        "kubectl get -w printed:\n{out}"
    );
}

#[test]
fn kubectl_over_etcd_survives_restarts_and_outages() {
    let mut etcd = TestEtcd::start();
    let flags = etcd_flags(&etcd);
    let mut c = start(Mode::Embedded, &flags);
    create_get_list_watch_delete(&c);

    // kube-apiserver's layout: /registry/<resource>/<namespace>/<name>,
    // cluster-scoped objects without the namespace segment.
    let keys = etcd_keys(&etcd, "/registry/configmaps/default/");
    assert!(
        keys.contains(&"/registry/configmaps/default/demo".to_string()),
        "{keys:?}"
    );
    assert!(!keys.iter().any(|k| k.ends_with("/gone")), "{keys:?}");
    let namespaces = etcd_keys(&etcd, "/registry/namespaces/");
    assert!(
        namespaces.contains(&"/registry/namespaces/default".to_string()),
        "{namespaces:?}"
    );

    // The kube names of the health checks.
    let (code, body) = get(&c, "/readyz?verbose");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("[+]etcd ok\n"), "{body}");
    assert_eq!(get(&c, "/livez/etcd"), (200, "ok".to_string()));
    assert_eq!(get(&c, "/readyz/etcd"), (200, "ok".to_string()));

    // A restarted Keelson (a fresh data directory: all state is in etcd)
    // serves the same objects.
    c.stop();
    let c = start(Mode::Embedded, &flags);
    assert_eq!(
        c.ok(&["get", "configmap", "demo", "-o", "jsonpath={.data.a}"]),
        "b"
    );

    // etcd goes away: requests fail fast with kube's 504, /readyz fails.
    etcd.stop();
    let started = Instant::now();
    let (code, body) = get(&c, "/api/v1/namespaces/default/configmaps/demo");
    assert_eq!(code, 504, "{body}");
    assert!(body.contains(r#""reason":"Timeout""#), "{body}");
    assert!(
        body.contains("request did not complete within requested timeout"),
        "{body}"
    );
    assert!(started.elapsed() < Duration::from_secs(15), "fails fast");
    let out = c.kubectl(&["create", "configmap", "down", "--from-literal=a=b"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Timeout"), "kubectl: {err}");
    let (code, body) = get(&c, "/readyz?verbose");
    assert_eq!(code, 500, "{body}");
    assert!(body.contains("[-]etcd failed: reason withheld\n"), "{body}");
    assert!(body.ends_with("readyz check failed\n"), "{body}");
    assert_eq!(get(&c, "/livez/etcd").0, 500);

    // etcd returns: everything recovers.
    etcd.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    while get(&c, "/readyz").0 != 200 {
        assert!(Instant::now() < deadline, "never ready again");
        std::thread::sleep(Duration::from_millis(200));
    }
    c.ok(&["create", "configmap", "after", "--from-literal=a=b"]);
    let list = c.ok(&["get", "configmaps", "-o", "name"]);
    assert!(
        list.contains("configmap/demo") && list.contains("configmap/after"),
        "{list}"
    );
    c.ok(&["delete", "configmap", "demo"]);
    let keys = etcd_keys(&etcd, "/registry/configmaps/default/");
    assert!(
        keys.contains(&"/registry/configmaps/default/after".to_string())
            && !keys.contains(&"/registry/configmaps/default/demo".to_string()),
        "{keys:?}"
    );
}

/// Two `keelson-store` processes over one etcd: what one writes, the other
/// reads, and the distributed mode works on either.
#[test]
fn two_store_replicas_share_one_etcd() {
    let etcd = TestEtcd::start();
    let flags = etcd_flags(&etcd);
    let a = start(Mode::Distributed, &flags);
    let b = start(Mode::Distributed, &flags);
    a.ok(&["create", "configmap", "shared", "--from-literal=a=b"]);
    assert_eq!(
        b.ok(&["get", "configmap", "shared", "-o", "jsonpath={.data.a}"]),
        "b"
    );
    b.ok(&["label", "configmap", "shared", "from=b"]);
    // a's watch cache follows etcd through its own store replica.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let labels = a.ok(&[
            "get",
            "configmaps",
            "-o",
            "jsonpath={.items[*].metadata.labels.from}",
        ]);
        if labels.trim() == "b" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a never saw b's write: {labels:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let keys = etcd_keys(&etcd, "/registry/configmaps/default/");
    assert!(
        keys.contains(&"/registry/configmaps/default/shared".to_string()),
        "{keys:?}"
    );
}

// ---------------------------------------------------------------------
// `--etcd-layout=kube`: kube-apiserver's values, checked against an
// independent encoder (k8s-pb's prost types) and raw etcd reads/writes.
// ---------------------------------------------------------------------

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime as rt;
use prost::Message;
use serde_json::{json, Value};

/// Plain etcd client calls (what kube-apiserver, or `etcdctl`, does).
struct RawEtcd {
    rt: tokio::runtime::Runtime,
    client: etcd_client::Client,
}

impl RawEtcd {
    fn connect(etcd: &TestEtcd) -> RawEtcd {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let client = rt
            .block_on(etcd_client::Client::connect([etcd.endpoint()], None))
            .expect("etcd client");
        RawEtcd { rt, client }
    }

    /// Put `value` at `key`; the write's revision.
    fn put(&self, key: &str, value: Vec<u8>) -> i64 {
        let mut kv = self.client.kv_client();
        let r = self
            .rt
            .block_on(kv.put(key, value, None))
            .expect("etcd put");
        r.header().expect("header").revision()
    }

    fn get(&self, key: &str) -> Option<(Vec<u8>, i64)> {
        let mut kv = self.client.kv_client();
        let r = self.rt.block_on(kv.get(key, None)).expect("etcd get");
        r.kvs()
            .first()
            .map(|kv| (kv.value().to_vec(), kv.mod_revision()))
    }
}

/// kube's storage bytes: magic, then the `runtime.Unknown` envelope.
fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let u = rt::Unknown {
        type_meta: Some(rt::TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut b = b"k8s\0".to_vec();
    b.extend(u.encode_to_vec());
    b
}

/// A stored value's envelope, asserting the magic and the type.
fn unwrap_envelope(bytes: &[u8], api_version: &str, kind: &str) -> Vec<u8> {
    assert!(
        bytes.starts_with(b"k8s\0"),
        "not kube's Protobuf: {:?}",
        String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
    );
    let u = rt::Unknown::decode(&bytes[4..]).expect("an Unknown envelope");
    let tm = u.type_meta.expect("typeMeta");
    assert_eq!(
        (tm.api_version.as_deref(), tm.kind.as_deref()),
        (Some(api_version), Some(kind))
    );
    assert_eq!(u.content_type.as_deref(), Some(""));
    u.raw.expect("raw")
}

fn get_json(c: &Cluster, path: &str) -> Value {
    let (code, body) = get(c, path);
    assert_eq!(code, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Events of a watch from `rv` until `n` arrived (or 20 s passed).
fn watch_events(c: &Cluster, path: &str, n: usize) -> Vec<Value> {
    let client = c.client();
    let url = format!("{}{}", c.url, path);
    block_on(async move {
        let mut r = client.get(&url).send().await.expect("watch");
        assert_eq!(r.status().as_u16(), 200);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let mut buf = Vec::new();
        let mut events = Vec::new();
        while events.len() < n {
            match tokio::time::timeout_at(deadline, r.chunk()).await {
                Ok(Ok(Some(bytes))) => {
                    buf.extend_from_slice(&bytes);
                    while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = buf.drain(..=pos).collect();
                        let ev: Value = serde_json::from_slice(&line).expect("event JSON");
                        if ev["object"]["metadata"]["name"] != "kube-root-ca.crt" {
                            events.push(ev);
                        }
                    }
                }
                _ => break,
            }
        }
        events
    })
}

/// `obj` with another name and uid, and no resourceVersion: a twin.
fn renamed(mut obj: Value, name: &str, uid: &str) -> Value {
    obj["metadata"]["name"] = json!(name);
    obj["metadata"]["uid"] = json!(uid);
    if let Some(m) = obj["metadata"].as_object_mut() {
        m.remove("resourceVersion");
    }
    obj
}

fn kube_layout_flags(etcd: &TestEtcd) -> Vec<String> {
    let mut flags = etcd_flags(etcd);
    flags.push("--etcd-layout=kube".into());
    flags
}

#[test]
fn kube_layout_serves_what_kube_apiserver_wrote() {
    let etcd = TestEtcd::start();
    let raw = RawEtcd::connect(&etcd);
    let c = start(Mode::Embedded, &kube_layout_flags(&etcd));
    let before = get_json(&c, "/api/v1/namespaces/default/configmaps")["metadata"]
        ["resourceVersion"]
        .as_str()
        .expect("list resourceVersion")
        .to_string();

    // A ConfigMap as kube-apiserver stores it, encoded by k8s-pb.
    let cm = core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            name: Some("pb-cm".into()),
            namespace: Some("default".into()),
            uid: Some("6f1d5c1e-7d1b-4a55-9a55-0e0f3b0c0a01".into()),
            resource_version: Some(String::new()),
            creation_timestamp: Some(meta::Time {
                seconds: Some(1_700_000_000),
                nanos: Some(0),
            }),
            labels: [("app".to_string(), "pb".to_string())].into(),
            ..Default::default()
        }),
        data: [("a".to_string(), "1".to_string())].into(),
        ..Default::default()
    };
    let rev = raw.put(
        "/registry/configmaps/default/pb-cm",
        envelope("v1", "ConfigMap", cm.encode_to_vec()),
    );
    let expected = json!({
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {
            "name": "pb-cm",
            "namespace": "default",
            "uid": "6f1d5c1e-7d1b-4a55-9a55-0e0f3b0c0a01",
            "resourceVersion": rev.to_string(),
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "labels": {"app": "pb"}
        },
        "data": {"a": "1"}
    });
    let got = get_json(&c, "/api/v1/namespaces/default/configmaps/pb-cm");
    assert_eq!(got, expected);
    // Served in kube's field order too.
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        serde_json::to_string(&expected).unwrap()
    );
    assert_eq!(
        c.ok(&["get", "configmap", "pb-cm", "-o", "jsonpath={.data.a}"]),
        "1"
    );

    // Keelson writes Protobuf: a Deployment and a Pod created as JSON
    // decode with k8s-pb from the raw etcd values, without resourceVersion.
    c.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},
            "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
            "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}"#,
    );
    c.ok(&["run", "pod1", "--image=busybox:1.36", "--labels=app=p"]);
    let (bytes, _) = raw
        .get("/registry/deployments/default/web")
        .expect("the Deployment in etcd");
    let d = apps::Deployment::decode(unwrap_envelope(&bytes, "apps/v1", "Deployment").as_slice())
        .expect("a k8s-pb Deployment");
    let dm = d.metadata.clone().expect("metadata");
    assert_eq!(dm.name.as_deref(), Some("web"));
    assert_eq!(dm.resource_version.as_deref().unwrap_or(""), "");
    let spec = d.spec.clone().expect("spec");
    assert_eq!(spec.replicas, Some(2));
    let containers = spec
        .template
        .and_then(|t| t.spec)
        .expect("pod spec")
        .containers;
    assert_eq!(containers[0].image.as_deref(), Some("nginx:1.27"));
    let (bytes, _) = raw
        .get("/registry/pods/default/pod1")
        .expect("the Pod in etcd");
    let p =
        core::Pod::decode(unwrap_envelope(&bytes, "v1", "Pod").as_slice()).expect("a k8s-pb Pod");
    let pm = p.metadata.clone().expect("metadata");
    assert_eq!(pm.labels.get("app").map(String::as_str), Some("p"));
    assert_eq!(
        p.spec.clone().expect("spec").containers[0].image.as_deref(),
        Some("busybox:1.36")
    );
    let (bytes, _) = raw
        .get("/registry/configmaps/default/kube-root-ca.crt")
        .expect("kube-root-ca.crt in etcd");
    let root = core::ConfigMap::decode(unwrap_envelope(&bytes, "v1", "ConfigMap").as_slice())
        .expect("a k8s-pb ConfigMap");
    assert!(root.data.contains_key("ca.crt"));

    // Twins written by k8s-pb (the same messages under another name) are
    // served exactly as the JSON-created originals.
    let mut d2 = d;
    let mut m = dm;
    m.name = Some("web-pb".into());
    m.uid = Some("6f1d5c1e-7d1b-4a55-9a55-0e0f3b0c0a02".into());
    d2.metadata = Some(m);
    raw.put(
        "/registry/deployments/default/web-pb",
        envelope("apps/v1", "Deployment", d2.encode_to_vec()),
    );
    let mut p2 = p;
    let mut m = pm;
    m.name = Some("pod2".into());
    m.uid = Some("6f1d5c1e-7d1b-4a55-9a55-0e0f3b0c0a03".into());
    p2.metadata = Some(m);
    raw.put(
        "/registry/pods/default/pod2",
        envelope("v1", "Pod", p2.encode_to_vec()),
    );
    for (path, name, twin_path, uid) in [
        (
            "/apis/apps/v1/namespaces/default/deployments/web",
            "web-pb",
            "/apis/apps/v1/namespaces/default/deployments/web-pb",
            "6f1d5c1e-7d1b-4a55-9a55-0e0f3b0c0a02",
        ),
        (
            "/api/v1/namespaces/default/pods/pod1",
            "pod2",
            "/api/v1/namespaces/default/pods/pod2",
            "6f1d5c1e-7d1b-4a55-9a55-0e0f3b0c0a03",
        ),
    ] {
        let original = get_json(&c, path);
        let twin = get_json(&c, twin_path);
        assert_eq!(
            serde_json::to_string(&renamed(twin, name, uid)).unwrap(),
            serde_json::to_string(&renamed(original, name, uid)).unwrap(),
            "{twin_path} is served as {path}"
        );
    }

    // Lists and the watch cache decode the same way.
    let list = get_json(&c, "/api/v1/namespaces/default/configmaps");
    let item = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["metadata"]["name"] == "pb-cm")
        .expect("pb-cm listed");
    let mut listed = expected.clone();
    if let Some(o) = listed.as_object_mut() {
        o.remove("kind");
        o.remove("apiVersion");
    }
    let mut item = item.clone();
    if let Some(o) = item.as_object_mut() {
        o.remove("kind");
        o.remove("apiVersion");
    }
    assert_eq!(item, listed);
    let events = watch_events(
        &c,
        &format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={before}"),
        1,
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"], expected);
    let names = c.ok(&["get", "pods", "-o", "name"]);
    assert!(
        names.contains("pod/pod1") && names.contains("pod/pod2"),
        "{names}"
    );

    // An update through Keelson rewrites the value as Protobuf; the
    // resourceVersion is etcd's mod revision.
    c.ok(&["label", "configmap", "pb-cm", "more=yes"]);
    let (bytes, mod_rev) = raw
        .get("/registry/configmaps/default/pb-cm")
        .expect("pb-cm in etcd");
    let cm = core::ConfigMap::decode(unwrap_envelope(&bytes, "v1", "ConfigMap").as_slice())
        .expect("a k8s-pb ConfigMap");
    let m = cm.metadata.expect("metadata");
    assert_eq!(m.labels.get("more").map(String::as_str), Some("yes"));
    assert_eq!(
        m.uid.as_deref(),
        Some("6f1d5c1e-7d1b-4a55-9a55-0e0f3b0c0a01")
    );
    assert_eq!(
        get_json(&c, "/api/v1/namespaces/default/configmaps/pb-cm")["metadata"]["resourceVersion"],
        mod_rev.to_string()
    );

    // A value nothing can decode: kube's corrupt-object storage error.
    raw.put(
        "/registry/secrets/default/bad",
        b"k8s\0\x0a\x05junk".to_vec(),
    );
    let (code, body) = get(&c, "/api/v1/namespaces/default/secrets/bad");
    assert_eq!(code, 500, "{body}");
    let status: Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!(status["kind"], "Status");
    assert!(
        status["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("StorageError: corrupt object, Code: 7, Key: "),
        "{body}"
    );
}

const WIDGET_CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced",
  "names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
    "properties":{"size":{"type":"integer"},"note":{"type":"string"}}}}}}}]}}"#;

#[test]
fn kube_layout_stores_custom_resources_as_kube_json() {
    let etcd = TestEtcd::start();
    let raw = RawEtcd::connect(&etcd);
    let c = start(Mode::Embedded, &kube_layout_flags(&etcd));
    c.ok_stdin(&["create", "-f", "-"], WIDGET_CRD);
    c.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=30s",
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = c.kubectl_stdin(
            &["create", "-f", "-"],
            Some(r#"{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w1"},"spec":{"size":2,"note":"a<b"}}"#),
        );
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // kube's JSON: Go's encoder over a map (sorted keys, HTML-safe
    // escapes, a trailing newline), no resourceVersion.
    let (bytes, _) = raw
        .get("/registry/example.com/widgets/default/w1")
        .expect("the widget in etcd");
    let text = String::from_utf8(bytes).expect("JSON text");
    assert!(
        text.starts_with(
            r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"creationTimestamp":"#
        ),
        "{text}"
    );
    assert!(text.ends_with("}}\n"), "{text:?}");
    assert!(
        text.contains(r#""spec":{"note":"a\u003cb","size":2}"#),
        "{text}"
    );
    let stored: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(stored["metadata"].get("resourceVersion"), None, "{text}");

    // A custom resource as kube-apiserver wrote it is served.
    let rev = raw.put(
        "/registry/example.com/widgets/default/w2",
        b"{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"creationTimestamp\":\"2024-01-01T00:00:00Z\",\"generation\":1,\"name\":\"w2\",\"namespace\":\"default\",\"uid\":\"0d8a4d3e-1f7b-4c1e-8a5e-2a1f0b9c0d01\"},\"spec\":{\"size\":3}}\n".to_vec(),
    );
    let w2 = get_json(&c, "/apis/example.com/v1/namespaces/default/widgets/w2");
    assert_eq!(w2["spec"]["size"], 3);
    assert_eq!(w2["metadata"]["resourceVersion"], rev.to_string());
    let names = c.ok(&["get", "widgets", "-o", "name"]);
    assert!(
        names.contains("widget.example.com/w1") && names.contains("widget.example.com/w2"),
        "{names}"
    );
}
