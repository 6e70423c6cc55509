//! CBOR end to end, in both modes, with a standard CBOR library
//! (ciborium) on the client side: a CBOR create answered in CBOR, a get
//! decoded and compared with the JSON get, a list, a PartialObjectMetadata,
//! an `apply-patch+cbor` Server-Side Apply, a CBOR DeleteOptions, an
//! `application/cbor-seq` watch decoded event by event, and kube's errors:
//! bad CBOR (400, as a CBOR Status), a Table in CBOR (406), media types
//! without a CBOR form (415), a YAML watch (406). Then the real kubectl
//! with client-go's CBOR feature gates on: its dynamic client reads CBOR
//! objects, a CBOR 404 Status and a `cbor-seq` watch. Last, custom
//! resources in CBOR.

mod support;

use ciborium::Value as Cbor;
use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

const CBOR: &str = "application/cbor";

/// `v` as a CBOR client writes it: text strings, the self-described tag.
fn to_cbor(v: &Value) -> Vec<u8> {
    fn conv(v: &Value) -> Cbor {
        match v {
            Value::Null => Cbor::Null,
            Value::Bool(b) => Cbor::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Cbor::Integer(i.into()),
                None => Cbor::Float(n.as_f64().unwrap()),
            },
            Value::String(s) => Cbor::Text(s.clone()),
            Value::Array(a) => Cbor::Array(a.iter().map(conv).collect()),
            Value::Object(m) => Cbor::Map(
                m.iter()
                    .map(|(k, v)| (Cbor::Text(k.clone()), conv(v)))
                    .collect(),
            ),
        }
    }
    let mut out = Vec::new();
    ciborium::ser::into_writer(&Cbor::Tag(55799, Box::new(conv(v))), &mut out).unwrap();
    out
}

/// A CBOR item as JSON (kube writes strings as byte strings).
fn to_json(v: &Cbor) -> Value {
    match v {
        Cbor::Null => Value::Null,
        Cbor::Bool(b) => Value::Bool(*b),
        Cbor::Integer(i) => json!(i64::try_from(*i).unwrap()),
        Cbor::Float(f) => json!(f),
        Cbor::Bytes(b) => Value::String(String::from_utf8(b.clone()).unwrap()),
        Cbor::Text(s) => Value::String(s.clone()),
        Cbor::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        Cbor::Map(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let Value::String(k) = to_json(k) else {
                        panic!("a key that is not a string: {k:?}")
                    };
                    (k, to_json(v))
                })
                .collect(),
        ),
        Cbor::Tag(_, inner) => to_json(inner),
        other => panic!("unexpected CBOR item {other:?}"),
    }
}

/// One tagged CBOR body, as JSON.
fn from_cbor(bytes: &[u8]) -> Value {
    assert!(
        bytes.starts_with(&[0xd9, 0xd9, 0xf7]),
        "not self-described CBOR: {bytes:02x?}"
    );
    let v: Cbor = ciborium::de::from_reader(bytes).expect("CBOR");
    to_json(&v)
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "cbor"}}, "data": {"k": "v", "n": "1"}})
}

async fn http(c: &Cluster) {
    let client = c.client();
    let r = client
        .post(format!("{}/api/v1/namespaces", c.url))
        .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cb"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let cms = format!("{}/api/v1/namespaces/cb/configmaps", c.url);

    // A CBOR create, answered in CBOR.
    let r = client
        .post(&cms)
        .header("content-type", CBOR)
        .header("accept", CBOR)
        .body(to_cbor(&cm("a")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    assert_eq!(r.headers()["content-type"], CBOR);
    let created = from_cbor(&r.bytes().await.unwrap());
    assert_eq!(created["kind"], "ConfigMap");
    assert_eq!(created["metadata"]["name"], "a");
    assert!(created["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| !u.is_empty()));
    assert_eq!(created["data"], json!({"k": "v", "n": "1"}));

    // GET in CBOR is the JSON GET.
    let r = client
        .get(format!("{cms}/a"))
        .header("accept", CBOR)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let got = from_cbor(&r.bytes().await.unwrap());
    let json_get: Value = client
        .get(format!("{cms}/a"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got, json_get);
    assert_eq!(got, created);

    // PartialObjectMetadata in CBOR.
    let r = client
        .get(format!("{cms}/a"))
        .header(
            "accept",
            "application/cbor;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let pom = from_cbor(&r.bytes().await.unwrap());
    assert_eq!(
        (pom["kind"].as_str(), pom["apiVersion"].as_str()),
        (Some("PartialObjectMetadata"), Some("meta.k8s.io/v1"))
    );
    assert_eq!(pom["metadata"], json_get["metadata"]);
    assert!(pom.get("data").is_none());

    // A list in CBOR.
    let r = client
        .post(&cms)
        .header("content-type", CBOR)
        .body(to_cbor(&cm("b")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    assert_eq!(
        r.headers()["content-type"],
        "application/json",
        "no Accept: JSON"
    );
    let r = client
        .get(format!("{cms}?labelSelector=app%3Dcbor"))
        .header("accept", CBOR)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], CBOR);
    let list = from_cbor(&r.bytes().await.unwrap());
    assert_eq!(
        (list["kind"].as_str(), list["apiVersion"].as_str()),
        (Some("ConfigMapList"), Some("v1"))
    );
    let json_list: Value = client
        .get(format!("{cms}?labelSelector=app%3Dcbor"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["items"], json_list["items"]);
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let list_rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    // Paged: the continue token in CBOR.
    let r = client
        .get(format!("{cms}?limit=1"))
        .header("accept", CBOR)
        .send()
        .await
        .unwrap();
    let page = from_cbor(&r.bytes().await.unwrap());
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert!(page["metadata"]["continue"]
        .as_str()
        .is_some_and(|c| !c.is_empty()));

    // Server-Side Apply with an apply-patch+cbor body.
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"x": "1"}});
    let r = client
        .patch(format!("{cms}/applied?fieldManager=cbor-test"))
        .header("content-type", "application/apply-patch+cbor")
        .header("accept", CBOR)
        .body(to_cbor(&applied))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201, "an apply creates");
    let a = from_cbor(&r.bytes().await.unwrap());
    assert_eq!(a["data"], json!({"x": "1"}));
    let mf = &a["metadata"]["managedFields"][0];
    assert_eq!(
        (mf["manager"].as_str(), mf["operation"].as_str()),
        (Some("cbor-test"), Some("Apply"))
    );
    assert_eq!(mf["fieldsV1"]["f:data"], json!({"f:x": {}}));
    let mut again = applied.clone();
    again["data"] = json!({"x": "2", "y": "3"});
    let r = client
        .patch(format!("{cms}/applied?fieldManager=cbor-test"))
        .header("content-type", "application/apply-patch+cbor")
        .body(to_cbor(&again))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let a: Value = r.json().await.unwrap();
    assert_eq!(a["data"], json!({"x": "2", "y": "3"}));
    // An apply-patch+cbor body that is not CBOR: kube's wording (YAML!).
    let r = client
        .patch(format!("{cms}/applied?fieldManager=cbor-test"))
        .header("content-type", "application/apply-patch+cbor")
        .body(vec![0x82, 0x01])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let s: Value = r.json().await.unwrap();
    assert_eq!(s["message"], "error decoding YAML: unexpected EOF");
    // No fieldManager: apply's 422.
    let r = client
        .patch(format!("{cms}/applied"))
        .header("content-type", "application/apply-patch+cbor")
        .body(to_cbor(&again))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 422);

    // A CBOR DeleteOptions (dry run keeps the object).
    let r = client
        .delete(format!("{cms}/b"))
        .header("content-type", CBOR)
        .body(to_cbor(
            &json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = client.get(format!("{cms}/b")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200, "a dry-run delete keeps it");

    // Bad CBOR: 400 with kube's wording, as a CBOR Status.
    let r = client
        .post(&cms)
        .header("content-type", CBOR)
        .header("accept", CBOR)
        .body(vec![0xa1, 0x41])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert_eq!(r.headers()["content-type"], CBOR);
    let s = from_cbor(&r.bytes().await.unwrap());
    assert_eq!(
        (s["kind"].as_str(), s["code"].as_i64(), s["reason"].as_str()),
        (Some("Status"), Some(400), Some("BadRequest"))
    );
    assert_eq!(s["message"], "the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: unexpected EOF (a141)");
    // A duplicate key inside the object.
    let mut dup =
        to_cbor(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}));
    // One more pair for the top map (ciborium writes a3 for three): data {a, a}.
    assert_eq!(dup[3], 0xa3);
    dup[3] = 0xa4;
    dup.extend([
        0x64, b'd', b'a', b't', b'a', 0xa2, 0x61, b'a', 0x61, b'1', 0x61, b'a', 0x61, b'2',
    ]);
    let r = client
        .post(&cms)
        .header("content-type", CBOR)
        .body(dup)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let s: Value = r.json().await.unwrap();
    assert_eq!(s["message"], "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: cbor: found duplicate map key \"a\" at map element index 1");
    // Invalid UTF-8 in a text string.
    let mut bad = to_cbor(&cm("u"));
    let at = bad.windows(2).position(|w| w == [0x61, b'v']).unwrap();
    bad[at + 1] = 0xff;
    let r = client
        .post(&cms)
        .header("content-type", CBOR)
        .body(bad)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let s: Value = r.json().await.unwrap();
    assert!(
        s["message"].as_str().unwrap().starts_with("the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: cbor: invalid UTF-8 string (d9d9f7"),
        "{s}"
    );

    // A Table has no CBOR form: 406 with kube's list.
    let r = client
        .get(&cms)
        .header("accept", "application/cbor;as=Table;g=meta.k8s.io;v=v1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 406);
    let s: Value = r.json().await.unwrap();
    assert_eq!(s["reason"], "NotAcceptable");
    assert_eq!(s["message"], "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor");
    // A body media type without a decoder, a patch type without a CBOR form.
    let r = client
        .post(&cms)
        .header("content-type", "application/cbor-seq")
        .body(to_cbor(&cm("z")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 415);
    let s: Value = r.json().await.unwrap();
    assert_eq!(s["message"], "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor");
    for ct in ["application/merge-patch+cbor", CBOR] {
        let r = client
            .patch(format!("{cms}/a"))
            .header("content-type", ct)
            .body(to_cbor(&json!({"data": {"k": "w"}})))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 415, "{ct}");
        let s: Value = r.json().await.unwrap();
        assert_eq!(
            (s["reason"].as_str(), s["message"].as_str()),
            (
                Some("UnsupportedMediaType"),
                Some("415: Unsupported Media Type")
            ),
            "{ct}"
        );
    }

    // A watch needs a stream serializer: YAML has none.
    let r = client
        .get(format!("{cms}?watch=true"))
        .header("accept", "application/yaml")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 406);
    let s: Value = serde_yaml::from_slice(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(s["message"], "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq");

    // A cbor-seq watch, decoded event by event.
    let mut w = client
        .get(format!(
            "{cms}?watch=true&resourceVersion={list_rv}&timeoutSeconds=20"
        ))
        .header("accept", CBOR)
        .send()
        .await
        .unwrap();
    assert_eq!(w.status().as_u16(), 200);
    assert_eq!(w.headers()["content-type"], "application/cbor-seq");
    let r = client
        .post(&cms)
        .header("content-type", CBOR)
        .body(to_cbor(&cm("watched")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let r = client
        .delete(format!("{cms}/watched"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let mut buf: Vec<u8> = Vec::new();
    let mut events: Vec<(String, String)> = Vec::new();
    while !events.iter().any(|(t, n)| n == "watched" && t == "DELETED") {
        let chunk = w.chunk().await.unwrap().expect("the watch ended early");
        buf.extend_from_slice(&chunk);
        // Items delimit themselves: read whole ones off the front.
        loop {
            let mut cursor = std::io::Cursor::new(&buf[..]);
            let Ok(item) = ciborium::de::from_reader::<Cbor, _>(&mut cursor) else {
                break;
            };
            let used = cursor.position() as usize;
            assert!(buf.starts_with(&[0xd9, 0xd9, 0xf7]), "each event is tagged");
            let ev = to_json(&item);
            let Cbor::Tag(55799, inner) = &item else {
                panic!("untagged event")
            };
            let Cbor::Map(fields) = &**inner else {
                panic!("an event is a map")
            };
            assert!(
                matches!(&fields[1].1, Cbor::Tag(55799, _)),
                "the object is tagged too"
            );
            buf.drain(..used);
            let name = ev["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_string();
            assert_eq!(ev["object"]["kind"], "ConfigMap");
            events.push((ev["type"].as_str().unwrap().to_string(), name));
        }
    }
    let watched: Vec<&str> = events
        .iter()
        .filter(|(_, n)| n == "watched")
        .map(|(t, _)| t.as_str())
        .collect();
    assert_eq!(watched, ["ADDED", "DELETED"], "{events:?}");
}

/// kubectl with client-go's CBOR feature gates on: it sends and reads CBOR.
fn kubectl(c: &Cluster) {
    let env = [
        ("KUBE_FEATURE_ClientsAllowCBOR", "true"),
        ("KUBE_FEATURE_ClientsPreferCBOR", "true"),
    ];
    let run = |args: &[&str], stdin: Option<&str>| {
        let out = c.kubectl_env(args, stdin, &env);
        let log = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "kubectl {args:?} failed:\n{log}");
        (String::from_utf8_lossy(&out.stdout).to_string(), log)
    };
    run(
        &[
            "create",
            "configmap",
            "kc",
            "--from-literal=a=b",
            "-n",
            "cb",
        ],
        None,
    );
    // kubectl's dynamic client (wait, delete) asks for CBOR first: a get
    // and a cbor-seq watch.
    let (_, log) = run(
        &[
            "wait",
            "--for=jsonpath={.data.a}=b",
            "configmap/kc",
            "-n",
            "cb",
            "--timeout=20s",
            "-v=8",
        ],
        None,
    );
    assert!(
        log.contains("Accept: application/json;q=0.9,application/cbor;q=1"),
        "{log}"
    );
    assert!(log.contains("Content-Type: application/cbor"), "{log}");
    // A condition met later: the wait watches, in CBOR (cbor-seq).
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            c.kubectl_env(
                &[
                    "wait",
                    "--for=jsonpath={.data.a}=c",
                    "configmap/kc",
                    "-n",
                    "cb",
                    "--timeout=30s",
                    "-v=8",
                ],
                None,
                &env,
            )
        });
        std::thread::sleep(std::time::Duration::from_secs(2));
        run(
            &[
                "patch",
                "configmap",
                "kc",
                "-n",
                "cb",
                "-p",
                r#"{"data":{"a":"c"}}"#,
            ],
            None,
        );
        let out = waiter.join().unwrap();
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{log}");
        assert!(log.contains("watch=true"), "{log}");
        assert!(log.contains("Content-Type: application/cbor-seq"), "{log}");
    });
    let (_, log) = run(&["delete", "configmap", "kc", "-n", "cb", "-v=8"], None);
    // The wait for the deletion: a 404 Status in CBOR, understood.
    assert!(log.contains("Content-Type: application/cbor"), "{log}");
    let out = c.kubectl_env(&["get", "configmap", "kc", "-n", "cb"], None, &env);
    assert!(!out.status.success());
}

const GADGETS: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.cbor.example.com
spec:
  group: cbor.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
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
              count: {type: integer}
              ratio: {type: number}
              big: {type: integer}
              "on": {type: boolean}
              none: {type: string, nullable: true}
              tags: {type: array, items: {type: string}}
"#;

/// Custom resources in CBOR: a create, a get equal to the JSON get (an
/// integer stays an integer, a float a float), a list, an apply.
async fn custom(c: &Cluster) {
    let client = c.client();
    let gadgets = format!("{}/apis/cbor.example.com/v1/namespaces/cb/gadgets", c.url);
    let g = json!({"apiVersion": "cbor.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
        "spec": {"count": 3, "ratio": 0.25, "big": -7000000000i64, "on": true, "none": null, "tags": ["a", "b"]}});
    let r = client
        .post(&gadgets)
        .header("content-type", CBOR)
        .header("accept", CBOR)
        .body(to_cbor(&g))
        .send()
        .await
        .unwrap();
    let code = r.status().as_u16();
    let body = r.bytes().await.unwrap();
    assert_eq!(code, 201, "{:?}", String::from_utf8_lossy(&body));
    let created = from_cbor(&body);
    assert_eq!(created["spec"], g["spec"]);
    let r = client
        .get(format!("{gadgets}/g"))
        .header("accept", CBOR)
        .send()
        .await
        .unwrap();
    let body = r.bytes().await.unwrap();
    let v: Cbor = ciborium::de::from_reader(&body[..]).unwrap();
    let json_get: Value = client
        .get(format!("{gadgets}/g"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(to_json(&v), json_get);
    // Integers and floats keep their CBOR types.
    let text = format!("{v:?}");
    assert!(
        text.contains("Float(0.25)") && text.contains("Integer(Integer(3))"),
        "{text}"
    );
    let r = client
        .get(&gadgets)
        .header("accept", CBOR)
        .send()
        .await
        .unwrap();
    let list = from_cbor(&r.bytes().await.unwrap());
    assert_eq!(list["kind"], "GadgetList");
    assert_eq!(list["items"][0]["spec"]["count"], 3);
    let r = client
        .patch(format!("{gadgets}/g2?fieldManager=cbor-test"))
        .header("content-type", "application/apply-patch+cbor")
        .body(to_cbor(&json!({"apiVersion": "cbor.example.com/v1", "kind": "Gadget", "metadata": {"name": "g2"}, "spec": {"count": 1}})))
        .send()
        .await
        .unwrap();
    let code = r.status().as_u16();
    assert_eq!(code, 201, "{}", r.text().await.unwrap());
    // A custom resource has no strategic merge patch; kube lists the rest.
    let r = client
        .patch(format!("{gadgets}/g"))
        .header("content-type", "application/strategic-merge-patch+json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 415);
    let s: Value = r.json().await.unwrap();
    assert_eq!(s["message"], "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor");
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    block_on(http(&c));
    kubectl(&c);
    c.ok_stdin(&["apply", "-f", "-"], GADGETS);
    c.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gadgets.cbor.example.com",
        "--timeout=20s",
    ]);
    block_on(custom(&c));
}

#[test]
fn cbor_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn cbor_distributed() {
    scenario(Mode::Distributed);
}
