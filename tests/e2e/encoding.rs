//! What every representation shares: kube's JSON form of built-in objects
//! (field order, zero values Go always writes, Go maps' keys sorted),
//! custom resources as kube's unstructured maps (keys sorted at every
//! level), YAML as sigs.k8s.io/yaml writes it, and response compression.

mod support;

use std::io::Read;

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

async fn kube_json_form(c: &Cluster) {
    let http = c.client();
    let rcs = format!("{}/api/v1/namespaces/default/replicationcontrollers", c.url);
    // A minimal body, fields in an order no Go encoder would write.
    let body = json!({
        "spec": {
            "template": {
                "spec": {"containers": [{"image": "nginx", "name": "web"}]},
                "metadata": {"labels": {"app": "web"}},
            },
            "selector": {"app": "web"},
        },
        "metadata": {"name": "rc"},
        "kind": "ReplicationController",
        "apiVersion": "v1",
    });
    let r = http.post(&rcs).json(&body).send().await.expect("create");
    assert_eq!(r.status(), 201);
    let created = r.text().await.expect("body");
    let v: Value = serde_json::from_str(&created).expect("json");
    assert_eq!(
        keys(&v),
        ["kind", "apiVersion", "metadata", "spec", "status"]
    );
    assert_eq!(
        keys(&v["metadata"]),
        [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "labels",
            "managedFields"
        ]
    );
    // Go's value fields are there even when zero.
    assert_eq!(v["status"], json!({"replicas": 0}));
    let template = &v["spec"]["template"];
    assert_eq!(keys(template), ["metadata", "spec"]);
    assert!(template["metadata"]
        .as_object()
        .is_some_and(|m| m.get("creationTimestamp") == Some(&Value::Null)));
    assert_eq!(template["spec"]["containers"][0]["resources"], json!({}));
    assert_eq!(
        keys(&template["spec"]["containers"][0])[..2],
        ["name", "image"]
    );
    // A read answers the same bytes as the create did.
    let got = http
        .get(format!("{rcs}/rc"))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("body");
    assert_eq!(got, created);

    // A DaemonSet's status counters.
    let ds = json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    });
    let r = http
        .post(format!(
            "{}/apis/apps/v1/namespaces/default/daemonsets",
            c.url
        ))
        .json(&ds)
        .send()
        .await
        .expect("create");
    assert_eq!(r.status(), 201);
    let v: Value = r.json().await.expect("json");
    assert_eq!(
        v["status"],
        json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0})
    );
}

/// Discovery documents are API objects (a final newline); `/version` is
/// kube's raw JSON (indented, no newline).
async fn document_shapes(c: &Cluster) {
    let http = c.client();
    for path in ["/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1"] {
        let body = http
            .get(format!("{}{path}", c.url))
            .send()
            .await
            .expect("get")
            .text()
            .await
            .expect("body");
        assert!(
            body.ends_with("}\n") && !body.contains("\n "),
            "{path}: {body}"
        );
    }
    let r = http
        .get(format!("{}/api", c.url))
        .header(
            "Accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )
        .send()
        .await
        .expect("get");
    assert!(r.text().await.expect("body").ends_with("}\n"));
    let version = http
        .get(format!("{}/version", c.url))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("body");
    assert!(version.starts_with("{\n  \"major\": \"1\","), "{version}");
    assert!(version.ends_with("\n}"), "{version}");
}

/// GET `url` with `accept`: the status and the body.
async fn get_as(c: &Cluster, url: &str, accept: &str) -> (u16, String) {
    let r = c
        .client()
        .get(url)
        .header("Accept", accept)
        .send()
        .await
        .expect("get");
    (r.status().as_u16(), r.text().await.expect("body"))
}

const WIDGET_CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.sorted.example.com"},
 "spec":{"group":"sorted.example.com","scope":"Namespaced",
  "names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;

/// Go maps' keys sorted in JSON, custom resources sorted at every level,
/// YAML as kube writes it: exact bytes, with the server-set values read
/// first and put in.
async fn sorted_maps_and_yaml(c: &Cluster) {
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    let body = r#"{"data":{"zeta":"2","alpha":"hello world","multi":"l1\nl2\n","ts":"2026-12-01T19:56:12Z"},
        "metadata":{"annotations":{"b":"x","a":"y"},"labels":{"z":"1","a":"true"},"name":"sorted"},
        "kind":"ConfigMap","apiVersion":"v1"}"#;
    let r = http
        .post(&cms)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .expect("create");
    assert_eq!(r.status(), 201);
    let created = r.text().await.expect("body");
    let v: Value = serde_json::from_str(&created).expect("json");
    let m = &v["metadata"];
    let (uid, rv, ts) = (
        m["uid"].as_str().expect("uid"),
        m["resourceVersion"].as_str().expect("rv"),
        m["creationTimestamp"].as_str().expect("ts"),
    );
    let mf = serde_json::to_string(&m["managedFields"]).expect("managedFields");
    let want = format!(
        r#"{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"sorted","namespace":"default","uid":"{uid}","resourceVersion":"{rv}","creationTimestamp":"{ts}","labels":{{"a":"true","z":"1"}},"annotations":{{"a":"y","b":"x"}},"managedFields":{mf}}},"data":{{"alpha":"hello world","multi":"l1\nl2\n","ts":"2026-12-01T19:56:12Z","zeta":"2"}}}}"#
    ) + "\n";
    assert_eq!(created, want);
    let (code, got) = get_as(c, &format!("{cms}/sorted"), "application/json").await;
    assert_eq!((code, got), (200, want));

    // YAML: keys sorted at every level, strings that read as another type
    // double-quoted, a multi-line string as a literal block.
    let (code, yaml) = get_as(c, &format!("{cms}/sorted"), "application/yaml").await;
    assert_eq!(code, 200);
    let head = format!(
        "apiVersion: v1
data:
  alpha: hello world
  multi: |
    l1
    l2
  ts: \"2026-12-01T19:56:12Z\"
  zeta: \"2\"
kind: ConfigMap
metadata:
  annotations:
    a: \"y\"
    b: x
  creationTimestamp: \"{ts}\"
  labels:
    a: \"true\"
    z: \"1\"
  managedFields:
  - apiVersion: v1
"
    );
    let tail = format!(
        "  name: sorted\n  namespace: default\n  resourceVersion: \"{rv}\"\n  uid: {uid}\n"
    );
    assert!(yaml.starts_with(&head), "{yaml}");
    assert!(yaml.ends_with(&tail), "{yaml}");
    let fields = &yaml[head.len()..yaml.len() - tail.len()];
    assert!(
        fields.lines().all(|l| l.starts_with("    ")),
        "managedFields' entry is indented under its `- `: {yaml}"
    );
    assert!(fields.contains("    fieldsType: FieldsV1\n"), "{yaml}");
    assert!(fields.contains("    operation: Update\n"), "{yaml}");

    // A Status error in YAML.
    let (code, yaml) = get_as(c, &format!("{cms}/nope"), "application/yaml").await;
    assert_eq!(code, 404);
    assert_eq!(
        yaml,
        "apiVersion: v1
code: 404
details:
  kind: configmaps
  name: nope
kind: Status
message: configmaps \"nope\" not found
metadata: {}
reason: NotFound
status: Failure
"
    );

    // A YAML list: items not indented under their key (a built-in list's
    // items carry no type meta, as kube's typed lists).
    let (code, yaml) = get_as(c, &format!("{cms}?labelSelector=z%3D1"), "application/yaml").await;
    assert_eq!(code, 200);
    assert!(
        yaml.starts_with("apiVersion: v1\nitems:\n- data:\n    alpha: hello world\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("\nkind: ConfigMapList\nmetadata:\n  resourceVersion: \""),
        "{yaml}"
    );

    // A custom resource: an unstructured map, sorted at every level, in
    // gets, lists and watch events alike.
    let r = http
        .post(format!(
            "{}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            c.url
        ))
        .header("Content-Type", "application/json")
        .body(WIDGET_CRD)
        .send()
        .await
        .expect("create crd");
    assert_eq!(r.status(), 201);
    c.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.sorted.example.com",
        "--timeout=20s",
    ]);
    let widgets = format!(
        "{}/apis/sorted.example.com/v1/namespaces/default/widgets",
        c.url
    );
    let body = r#"{"kind":"Widget","apiVersion":"sorted.example.com/v1",
        "metadata":{"name":"w","labels":{"z":"1","a":"2"}},
        "spec":{"z":{"y":1,"b":[{"d":1,"c":2}]},"a":"x"},"data":"d"}"#;
    let mut created = None;
    for _ in 0..50 {
        let r = http
            .post(&widgets)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("create widget");
        if r.status() == 201 {
            created = Some(r.text().await.expect("body"));
            break;
        }
        // Another process may not serve the just-Established CRD yet.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let created = created.expect("the widget is created");
    let v: Value = serde_json::from_str(&created).expect("json");
    let m = &v["metadata"];
    let (uid, rv, ts) = (
        m["uid"].as_str().expect("uid"),
        m["resourceVersion"].as_str().expect("rv"),
        m["creationTimestamp"].as_str().expect("ts"),
    );
    let mf = serde_json::to_string(&m["managedFields"]).expect("managedFields");
    assert!(
        mf.starts_with(r#"[{"apiVersion":"sorted.example.com/v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{},"f:metadata":{"f:labels":{".":{},"f:a":{},"f:z":{}}},"f:spec":{".":{},"f:a":{},"f:z":{".":{},"f:b":{},"f:y":{}}}},"#)
            && mf.contains(r#""operation":"Update","time":""#),
        "{mf}"
    );
    let object = format!(
        r#"{{"apiVersion":"sorted.example.com/v1","data":"d","kind":"Widget","metadata":{{"creationTimestamp":"{ts}","generation":1,"labels":{{"a":"2","z":"1"}},"managedFields":{mf},"name":"w","namespace":"default","resourceVersion":"{rv}","uid":"{uid}"}},"spec":{{"a":"x","z":{{"b":[{{"c":2,"d":1}}],"y":1}}}}}}"#
    );
    assert_eq!(created, format!("{object}\n"));
    let (code, got) = get_as(c, &format!("{widgets}/w"), "application/json").await;
    assert_eq!((code, got), (200, format!("{object}\n")));
    let (code, list) = get_as(c, &widgets, "application/json").await;
    assert_eq!(code, 200);
    let lrv = serde_json::from_str::<Value>(&list).expect("json")["metadata"]["resourceVersion"]
        .as_str()
        .expect("list rv")
        .to_string();
    assert_eq!(
        list,
        format!(
            r#"{{"apiVersion":"sorted.example.com/v1","items":[{object}],"kind":"WidgetList","metadata":{{"continue":"","resourceVersion":"{lrv}"}}}}"#
        ) + "\n"
    );
    let (code, events) = get_as(
        c,
        &format!("{widgets}?watch=1&resourceVersion=0&timeoutSeconds=1"),
        "application/json",
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(
        events,
        format!(r#"{{"type":"ADDED","object":{object}}}"#) + "\n"
    );
    let (code, yaml) = get_as(c, &format!("{widgets}/w"), "application/yaml").await;
    assert_eq!(code, 200);
    assert!(
        yaml.starts_with("apiVersion: sorted.example.com/v1\ndata: d\nkind: Widget\nmetadata:\n"),
        "{yaml}"
    );
    assert!(
        yaml.ends_with(&format!("  resourceVersion: \"{rv}\"\n  uid: {uid}\nspec:\n  a: x\n  z:\n    b:\n    - c: 2\n      d: 1\n    \"y\": 1\n")),
        "{yaml}"
    );
}

/// Whether `raw` holds none of the characters Go's encoder escapes.
fn go_escaped(raw: &str) -> bool {
    !raw.contains(['<', '>', '&', '\u{2028}', '\u{2029}'])
}

/// Strings as Go's encoder writes them (`<`, `>`, `&`, U+2028 and U+2029
/// as `\u` escapes), in gets, lists, watch events, indented output and
/// Status errors, for a ConfigMap and a custom resource; JSON readers and
/// kubectl read the values unchanged. Runs after [`sorted_maps_and_yaml`]
/// (its Widget CRD).
async fn html_escapes(c: &Cluster) {
    const ESCAPED: &str = r#""\u003ca\u0026b\u003e""#;
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    let widgets = format!(
        "{}/apis/sorted.example.com/v1/namespaces/default/widgets",
        c.url
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "escapes", "annotations": {"a": "x\u{2028}y\u{2029}z"}},
        "data": {"k": "<a&b>"}});
    let widget = json!({"apiVersion": "sorted.example.com/v1", "kind": "Widget",
        "metadata": {"name": "escapes"}, "spec": {"k": "<a&b>", "<key>": "x\u{2028}y"}});
    for (url, body) in [(&cms, &cm), (&widgets, &widget)] {
        let r = http.post(url).json(body).send().await.expect("create");
        assert_eq!(r.status(), 201);
        let created = r.text().await.expect("body");
        assert!(
            created.contains(ESCAPED) && go_escaped(&created),
            "{created}"
        );
        let one = format!("{url}/escapes");
        let (code, got) = get_as(c, &one, "application/json").await;
        assert_eq!((code, &got), (200, &created));
        let list_url = format!("{url}?fieldSelector=metadata.name%3Descapes");
        let (code, list) = get_as(c, &list_url, "application/json").await;
        assert_eq!(code, 200);
        assert!(list.contains(ESCAPED) && go_escaped(&list), "{list}");
        let watch = format!("{list_url}&watch=1&resourceVersion=0&timeoutSeconds=1");
        let (code, events) = get_as(c, &watch, "application/json").await;
        assert_eq!(code, 200);
        assert!(events.contains(ESCAPED) && go_escaped(&events), "{events}");
        let (code, pretty) = get_as(c, &format!("{one}?pretty=true"), "application/json").await;
        assert_eq!(code, 200);
        assert!(pretty.contains(ESCAPED) && go_escaped(&pretty), "{pretty}");
        let (code, table) =
            get_as(c, &list_url, "application/json;as=Table;g=meta.k8s.io;v=v1").await;
        assert_eq!(code, 200);
        assert!(go_escaped(&table), "{table}");

        // What a JSON client reads: the values as they were sent.
        let got: Value = serde_json::from_str(&got).expect("json");
        let list: Value = serde_json::from_str(&list).expect("json");
        let event: Value =
            serde_json::from_str(events.lines().next().expect("an event")).expect("json");
        for v in [&got, &list["items"][0], &event["object"]] {
            if url == &cms {
                assert_eq!(v["data"], cm["data"]);
                assert_eq!(v["metadata"]["annotations"], cm["metadata"]["annotations"]);
            } else {
                assert_eq!(v["spec"], widget["spec"]);
            }
        }
        let pretty: Value = serde_json::from_str(&pretty).expect("json");
        assert_eq!(pretty, got);
    }
    assert_eq!(
        c.ok(&["get", "configmap", "escapes", "-o", "jsonpath={.data.k}"]),
        "<a&b>"
    );
    assert_eq!(
        c.ok(&[
            "get",
            "widgets.sorted.example.com",
            "escapes",
            "-o",
            "jsonpath={.spec.k}"
        ]),
        "<a&b>"
    );

    // A Status error quoting the request's `<bad>`.
    let bad = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "bad-key"}, "data": {"<bad>": "v"}});
    let r = http.post(&cms).json(&bad).send().await.expect("create");
    assert_eq!(r.status(), 422);
    let status = r.text().await.expect("body");
    assert!(
        status.contains(r"\u003cbad\u003e") && go_escaped(&status),
        "{status}"
    );
    let status: Value = serde_json::from_str(&status).expect("json");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("<bad>")),
        "{status}"
    );
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b)
        .read_to_end(&mut out)
        .expect("a gzip body");
    out
}

async fn compression(c: &Cluster) {
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    for i in 0..40 {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("big-{i}")}, "data": {"k": "x".repeat(5000)}});
        let r = http.post(&cms).json(&body).send().await.expect("create");
        assert_eq!(r.status(), 201);
    }
    // Over 128 KiB with `Accept-Encoding: gzip`: compressed.
    let r = http
        .get(&cms)
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .expect("list");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-encoding"], "gzip");
    assert_eq!(r.headers()["vary"], "Accept-Encoding");
    let body = gunzip(&r.bytes().await.expect("body"));
    let list: Value = serde_json::from_slice(&body).expect("json");
    // 40 and the root CA publisher's `kube-root-ca.crt`.
    let items = list["items"].as_array().cloned().unwrap_or_default();
    let ours = items
        .iter()
        .filter(|i| i["metadata"]["name"] != "kube-root-ca.crt")
        .count();
    assert_eq!(ours, 40);
    // The same list without the header, and a small answer with it: plain.
    let r = http.get(&cms).send().await.expect("list");
    assert!(r.headers().get("content-encoding").is_none());
    let plain = r.bytes().await.expect("body");
    assert_eq!(
        serde_json::from_slice::<Value>(&plain).expect("json")["items"],
        list["items"]
    );
    let r = http
        .get(format!("{cms}/big-1"))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .expect("get");
    assert!(r.headers().get("content-encoding").is_none());
    // A watch is never compressed, however much it sends.
    let r = http
        .get(format!("{cms}?watch=true&timeoutSeconds=1"))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .expect("watch");
    assert!(r.headers().get("content-encoding").is_none());
    let body = r.bytes().await.expect("body");
    assert!(body.len() > 128 * 1024);
    let first: Value = serde_json::from_slice(body.split(|b| *b == b'\n').next().expect("a line"))
        .expect("a JSON event");
    assert_eq!(first["type"], "ADDED");
}

/// JSON numbers in a custom resource as kube writes them: Go decodes an
/// integral literal to int64 and anything else to float64, and writes a
/// float64 without a zero fraction (`1.0` → `1`, `1e3` → `1000`, `-0.0` →
/// `-0`, `1e21` → `1e+21`), in every answer and in what is stored.
async fn zero_fraction_floats(c: &Cluster) {
    let http = c.client();
    let widgets = format!(
        "{}/apis/sorted.example.com/v1/namespaces/default/widgets",
        c.url
    );
    let body = r#"{"apiVersion":"sorted.example.com/v1","kind":"Widget","metadata":{"name":"floats"},
        "spec":{"a":1.0,"b":2.50,"c":1e3,"d":-0.0,"e":1.5,"f":1e21,"g":0.0000001,"h":100000000000000000000,"i":18446744073709551615}}"#;
    const SPEC: &str = r#""spec":{"a":1,"b":2.5,"c":1000,"d":-0,"e":1.5,"f":1e+21,"g":1e-7,"h":100000000000000000000,"i":18446744073709552000}"#;
    let r = http
        .post(&widgets)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .expect("create");
    assert_eq!(r.status(), 201);
    let created = r.text().await.expect("body");
    assert!(created.contains(SPEC), "{created}");
    let (code, got) = get_as(c, &format!("{widgets}/floats"), "application/json").await;
    assert_eq!((code, &got), (200, &created));
    let list_url = format!("{widgets}?fieldSelector=metadata.name%3Dfloats");
    let (code, list) = get_as(c, &list_url, "application/json").await;
    assert_eq!(code, 200);
    assert!(list.contains(SPEC), "{list}");
    let watch = format!("{list_url}&watch=1&resourceVersion=0&timeoutSeconds=1");
    let (code, events) = get_as(c, &watch, "application/json").await;
    assert_eq!(code, 200);
    assert!(events.contains(SPEC), "{events}");
    let r = http
        .patch(format!("{widgets}/floats"))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"spec":{"j":3.0}}"#)
        .send()
        .await
        .expect("patch");
    assert_eq!(r.status(), 200);
    let patched = r.text().await.expect("body");
    assert!(
        patched.contains(r#""i":18446744073709552000,"j":3}"#),
        "{patched}"
    );
}

#[test]
fn encoding_embedded() {
    let c = Cluster::start(Mode::Embedded);
    block_on(kube_json_form(&c));
    block_on(compression(&c));
    block_on(document_shapes(&c));
    block_on(sorted_maps_and_yaml(&c));
    block_on(html_escapes(&c));
    block_on(zero_fraction_floats(&c));
}

#[test]
fn encoding_distributed() {
    let c = Cluster::start(Mode::Distributed);
    block_on(kube_json_form(&c));
    block_on(compression(&c));
    block_on(sorted_maps_and_yaml(&c));
    block_on(html_escapes(&c));
    block_on(zero_fraction_floats(&c));
}
