//! CRD conversion webhooks with the installed kubectl: a real HTTPS
//! webhook on loopback (its own CA, given to the CRD as `caBundle`)
//! converts `v1.spec.size: "3"` ↔ `v2.spec.replicas: 3`. Objects written in
//! v2 are stored in v1 and read back in either version (get, list, watch,
//! apply); a webhook that is down or answers badly gives kube's 500; a
//! `clientConfig.service` reaches the webhook through the Service's
//! Endpoints with the TLS name `<name>.<namespace>.svc`. Over HTTP (a
//! standard CBOR library decoding): CBOR lists and `cbor-seq` watches,
//! Tables (each version's printer columns) listed and watched, the
//! `/scale` subresource and `deletecollection` in the non-storage version,
//! and the same paths for a `conversion: None` CRD.

mod support;

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use ciborium::Value as Cbor;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

const GROUP: &str = "conv.example.com";
/// The Service name the webhook's certificate is also valid for.
const SERVICE: &str = "conv-webhook";

/// How the test webhook answers.
const ANSWER_OK: u8 = 0;
const ANSWER_WRONG_UID: u8 = 1;
const ANSWER_WRONG_VERSION: u8 = 2;

/// What the webhook has seen.
#[derive(Default)]
struct Seen {
    reviews: AtomicUsize,
    /// Objects per review, in order.
    batches: Mutex<Vec<usize>>,
    /// Each review's `apiVersion`.
    review_versions: Mutex<Vec<String>>,
}

/// A conversion webhook on loopback HTTPS.
struct Webhook {
    addr: SocketAddr,
    ca_pem: String,
    mode: Arc<AtomicU8>,
    seen: Arc<Seen>,
    _runtime: tokio::runtime::Runtime,
}

/// A non-loopback IPv4 address of this machine (kube refuses loopback
/// addresses in Endpoints): the source address of a route outward, else
/// the first of `hostname -I`.
fn host_ip() -> String {
    let routed = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("192.0.2.255:9").map(|_| s))
        .and_then(|s| s.local_addr())
        .map(|a| a.ip())
        .ok()
        .filter(|ip| ip.is_ipv4() && !ip.is_loopback() && !ip.is_unspecified());
    if let Some(ip) = routed {
        return ip.to_string();
    }
    let out = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .expect("hostname -I");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|a| {
            a.parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| !ip.is_loopback())
        })
        .expect("a non-loopback IPv4 address")
        .to_string()
}

impl Webhook {
    fn start() -> Webhook {
        let ca_key = rcgen::KeyPair::generate().expect("ca key");
        let mut ca = rcgen::CertificateParams::default();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "conversion-test-ca");
        ca.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key).expect("ca cert");
        let mut params = rcgen::CertificateParams::new(vec![
            "127.0.0.1".to_string(),
            format!("{SERVICE}.default.svc"),
        ])
        .expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "conversion-webhook");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &ca_cert, &ca_key).expect("cert");

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("0.0.0.0:0"))
            .expect("bind");
        // Listening on every address; URLs name the loopback one.
        let port = listener.local_addr().expect("addr").port();
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let mode = Arc::new(AtomicU8::new(ANSWER_OK));
        let seen = Arc::new(Seen::default());
        let (m, s) = (mode.clone(), seen.clone());
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, m, s) = (acceptor.clone(), m.clone(), s.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let (m, s) = (m.clone(), s.clone());
                            async move {
                                let body = req.into_body().collect().await?.to_bytes();
                                let answer = convert(&body, m.load(Ordering::SeqCst), &s);
                                Ok::<_, hyper::Error>(
                                    hyper::Response::builder()
                                        .header("content-type", "application/json")
                                        .body(Full::new(Bytes::from(answer.to_string())))
                                        .expect("response"),
                                )
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Webhook {
            addr,
            ca_pem: ca_cert.pem(),
            mode,
            seen,
            _runtime: runtime,
        }
    }

    fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    fn reviews(&self) -> usize {
        self.seen.reviews.load(Ordering::SeqCst)
    }
}

/// The test's conversion: `spec.size` (a string, v1) ↔ `spec.replicas`
/// (an integer, v2); labels gain `converted-to`.
fn convert(body: &[u8], mode: u8, seen: &Seen) -> Value {
    let review: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    seen.reviews.fetch_add(1, Ordering::SeqCst);
    let request = &review["request"];
    let desired = request["desiredAPIVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    seen.batches.lock().unwrap().push(objects.len());
    seen.review_versions
        .lock()
        .unwrap()
        .push(review["apiVersion"].as_str().unwrap_or("").to_string());
    let converted: Vec<Value> = objects
        .into_iter()
        .map(|mut o| {
            let spec = o["spec"].as_object().cloned().unwrap_or_default();
            let mut out = serde_json::Map::new();
            for (k, v) in spec {
                match (k.as_str(), desired.ends_with("/v2")) {
                    ("size", true) => {
                        let n: i64 = v.as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
                        out.insert("replicas".into(), json!(n));
                    }
                    ("replicas", false) => {
                        out.insert("size".into(), json!(v.as_i64().unwrap_or(0).to_string()));
                    }
                    _ => {
                        out.insert(k, v);
                    }
                }
            }
            o["spec"] = Value::Object(out);
            o["apiVersion"] = json!(if mode == ANSWER_WRONG_VERSION {
                format!("{GROUP}/v3")
            } else {
                desired.clone()
            });
            let version = desired.rsplit('/').next().unwrap_or("").to_string();
            o["metadata"]["labels"]["converted-to"] = json!(version);
            // Only labels and annotations may change: this is dropped.
            o["metadata"]["resourceVersion"] = json!("1");
            o
        })
        .collect();
    let uid = if mode == ANSWER_WRONG_UID {
        json!("not-the-request-uid")
    } else {
        request["uid"].clone()
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {"uid": uid, "result": {"status": "Success"}, "convertedObjects": converted}
    })
}

/// A CRD of `plural` with v1 (storage, `spec.size`, printed as `Size`)
/// and v2 (`spec.replicas`, printed as `Replicas`, with a `scale`
/// subresource), converted by the webhook at `client_config`.
fn crd(plural: &str, kind: &str, client_config: Value) -> String {
    let mut crd = plain_crd(plural, kind);
    crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1", "v1beta1"],
        "clientConfig": client_config}});
    crd.to_string()
}

/// [`crd`] without a conversion (`strategy: None`).
fn plain_crd(plural: &str, kind: &str) -> Value {
    let schema = |props: Value| {
        json!({"openAPIV3Schema": {"type": "object", "properties": {
            "spec": {"type": "object", "properties": props}}}})
    };
    let column = |name: &str, type_: &str, path: &str| json!([{"name": name, "type": type_, "jsonPath": path}]);
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind,
                      "listKind": format!("{kind}List")},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": schema(json!({"size": {"type": "string"}})),
                 "additionalPrinterColumns": column("Size", "string", ".spec.size")},
                {"name": "v2", "served": true, "storage": false,
                 "schema": schema(json!({"replicas": {"type": "integer"}})),
                 "additionalPrinterColumns": column("Replicas", "integer", ".spec.replicas"),
                 "subresources": {"scale": {"specReplicasPath": ".spec.replicas",
                                            "statusReplicasPath": ".status.replicas"}}}
            ]
        }
    })
}

fn establish(c: &Cluster, crd: &str, name: &str) {
    c.ok_stdin(&["apply", "-f", "-"], crd);
    c.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/{name}"),
        "--timeout=20s",
    ]);
}

fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn object(plural_kind: &str, version: &str, name: &str, spec: Value) -> String {
    json!({"apiVersion": format!("{GROUP}/{version}"), "kind": plural_kind,
           "metadata": {"name": name, "namespace": "default"}, "spec": spec})
    .to_string()
}

fn scenario(mode: Mode) {
    let hook = Webhook::start();
    let c = Cluster::start(mode);
    let url = format!("https://{}/convert", hook.addr);
    establish(
        &c,
        &crd(
            "gadgets",
            "Gadget",
            json!({"url": url, "caBundle": hook.ca_bundle()}),
        ),
        "gadgets.conv.example.com",
    );
    let v1 = "gadgets.v1.conv.example.com";
    let v2 = "gadgets.v2.conv.example.com";

    // Created in v2: stored in v1 (the webhook was asked for it).
    c.ok_stdin(
        &["create", "-f", "-"],
        &object("Gadget", "v2", "g1", json!({"replicas": 3})),
    );
    assert!(hook.reviews() >= 1, "the create called the webhook");
    // Read in the storage version: no call.
    let before = hook.reviews();
    let g = json_of(&c.ok(&["get", v1, "g1", "-o", "json"]));
    assert_eq!(
        hook.reviews(),
        before,
        "a read in the storage version needs no call"
    );
    assert_eq!(g["apiVersion"], "conv.example.com/v1");
    assert_eq!(g["spec"], json!({"size": "3"}));
    assert_eq!(g["metadata"]["labels"]["converted-to"], "v1");
    // Read in v2: converted, metadata kept but for labels.
    let g2 = json_of(&c.ok(&["get", v2, "g1", "-o", "json"]));
    assert_eq!(g2["apiVersion"], "conv.example.com/v2");
    assert_eq!(g2["spec"], json!({"replicas": 3}));
    assert_eq!(g2["metadata"]["labels"]["converted-to"], "v2");
    assert_eq!(
        g2["metadata"]["resourceVersion"], g["metadata"]["resourceVersion"],
        "the webhook cannot change the resourceVersion"
    );
    assert_eq!(g2["metadata"]["uid"], g["metadata"]["uid"]);

    // A list in v2: its items go in one review.
    c.ok_stdin(
        &["create", "-f", "-"],
        &object("Gadget", "v1", "g2", json!({"size": "7"})),
    );
    let before = hook.seen.batches.lock().unwrap().len();
    let list = json_of(&c.ok(&["get", v2, "-o", "json"]));
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["spec"], json!({"replicas": 3}));
    assert_eq!(items[1]["spec"], json!({"replicas": 7}));
    assert!(items
        .iter()
        .all(|i| i["apiVersion"] == "conv.example.com/v2"));
    assert_eq!(hook.seen.batches.lock().unwrap()[before..], [2]);
    // kubectl's table in v2 (columns read from the converted objects).
    let table = c.ok(&["get", v2]);
    assert!(table.contains("g1") && table.contains("g2"), "{table}");
    assert!(hook
        .seen
        .review_versions
        .lock()
        .unwrap()
        .iter()
        .all(|v| v == "apiextensions.k8s.io/v1"));

    // Apply in v2 (client-side: a patch of the object read in v2).
    c.ok_stdin(
        &["apply", "-f", "-"],
        &object("Gadget", "v2", "g1", json!({"replicas": 5})),
    );
    let g = json_of(&c.ok(&["get", v1, "g1", "-o", "json"]));
    assert_eq!(g["spec"], json!({"size": "5"}));
    // Server-side apply in v2, and a replace in v2.
    c.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &object("Gadget", "v2", "g2", json!({"replicas": 8})),
    );
    let g = json_of(&c.ok(&["get", v1, "g2", "-o", "json"]));
    assert_eq!(g["spec"], json!({"size": "8"}));
    let mut current = json_of(&c.ok(&["get", v2, "g2", "-o", "json"]));
    current["spec"]["replicas"] = json!(9);
    let replaced =
        json_of(&c.ok_stdin(&["replace", "-o", "json", "-f", "-"], &current.to_string()));
    assert_eq!(replaced["apiVersion"], "conv.example.com/v2");
    assert_eq!(replaced["spec"], json!({"replicas": 9}));
    let g = json_of(&c.ok(&["get", v1, "g2", "-o", "json"]));
    assert_eq!(g["spec"], json!({"size": "9"}));

    // Watch in v2: the events' objects are converted.
    let mut watch = Command::new("kubectl")
        .args(["get", v2, "--watch", "-o", "json", "--output-watch-events"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl watch");
    std::thread::sleep(Duration::from_secs(2));
    c.ok_stdin(
        &["create", "-f", "-"],
        &object("Gadget", "v1", "g3", json!({"size": "4"})),
    );
    std::thread::sleep(Duration::from_secs(2));
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("watch output");
    let text = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(|e| e.expect("event"))
        .collect();
    let g3 = events
        .iter()
        .find(|e| e["object"]["metadata"]["name"] == "g3")
        .unwrap_or_else(|| panic!("no event for g3: {text}"));
    assert_eq!(g3["type"], "ADDED");
    assert_eq!(g3["object"]["apiVersion"], "conv.example.com/v2");
    assert_eq!(g3["object"]["spec"], json!({"replicas": 4}));

    // The same objects over HTTP: CBOR, Tables, scale, deletecollection.
    block_on(http_paths(&c, &hook));

    // Bad answers: kube's 500 messages.
    hook.mode.store(ANSWER_WRONG_UID, Ordering::SeqCst);
    let err = c.fails(&["get", v2, "g1"], None);
    assert!(
        err.contains("Error from server: conversion webhook for conv.example.com/v1, Kind=Gadget failed: expected response.uid=")
            && err.contains(r#"got "not-the-request-uid""#),
        "{err}"
    );
    let err = c.fails(&["get", v2], None);
    assert!(
        err.contains("conversion webhook for conv.example.com/v1, Kind=Gadget failed: expected response.uid="),
        "{err}"
    );
    hook.mode.store(ANSWER_WRONG_VERSION, Ordering::SeqCst);
    let err = c.fails(&["get", v2, "g1"], None);
    assert!(
        err.contains("Error from server: conversion webhook for conv.example.com/v1, Kind=Gadget returned invalid object at index 0: invalid groupVersion (expected conv.example.com/v2, received conv.example.com/v3)"),
        "{err}"
    );
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&object("Gadget", "v2", "g4", json!({"replicas": 1}))),
    );
    assert!(
        err.contains("conversion webhook for conv.example.com/v2, Kind=Gadget returned invalid object at index 0: invalid groupVersion (expected conv.example.com/v1, received conv.example.com/v3)"),
        "{err}"
    );
    c.fails(&["get", v1, "g4"], None);
    hook.mode.store(ANSWER_OK, Ordering::SeqCst);

    // A webhook that is down.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let down = closed.local_addr().expect("addr");
    drop(closed);
    establish(
        &c,
        &crd(
            "downs",
            "Down",
            json!({"url": format!("https://{down}/convert"), "caBundle": hook.ca_bundle()}),
        ),
        "downs.conv.example.com",
    );
    c.ok_stdin(
        &["create", "-f", "-"],
        &object("Down", "v1", "d1", json!({"size": "2"})),
    );
    let err = c.fails(&["get", "downs.v2.conv.example.com", "d1"], None);
    assert!(
        err.contains(&format!(
            r#"Error from server: conversion webhook for conv.example.com/v1, Kind=Down failed: Post "https://{down}/convert?timeout=30s": dial tcp {down}: connect: connection refused"#
        )),
        "{err}"
    );
    let err = c.fails(&["get", "downs.v2.conv.example.com"], None);
    assert!(err.contains("connect: connection refused"), "{err}");
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&object("Down", "v2", "d2", json!({"replicas": 1}))),
    );
    assert!(
        err.contains("conversion webhook for conv.example.com/v2, Kind=Down failed: Post"),
        "{err}"
    );
    // The storage version needs no webhook.
    let d1 = json_of(&c.ok(&["get", "downs.v1.conv.example.com", "d1", "-o", "json"]));
    assert_eq!(d1["spec"], json!({"size": "2"}));

    // A Service reference: resolved through its Endpoints, verified as
    // `conv-webhook.default.svc`.
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": "default"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": hook.addr.port()}]}});
    c.ok_stdin(&["create", "-f", "-"], &service.to_string());
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": SERVICE, "namespace": "default"},
        // kube refuses loopback addresses in Endpoints: the machine's own.
        "subsets": [{"addresses": [{"ip": host_ip()}],
                     "ports": [{"name": "https", "port": hook.addr.port()}]}]});
    c.ok_stdin(&["apply", "-f", "-"], &endpoints.to_string());
    establish(
        &c,
        &crd(
            "svcgadgets",
            "SvcGadget",
            json!({"service": {"namespace": "default", "name": SERVICE, "path": "/convert", "port": 443},
                   "caBundle": hook.ca_bundle()}),
        ),
        "svcgadgets.conv.example.com",
    );
    c.ok_stdin(
        &["create", "-f", "-"],
        &object("SvcGadget", "v2", "s1", json!({"replicas": 6})),
    );
    let s1 = json_of(&c.ok(&["get", "svcgadgets.v1.conv.example.com", "s1", "-o", "json"]));
    assert_eq!(s1["spec"], json!({"size": "6"}));
    let s1 = json_of(&c.ok(&["get", "svcgadgets.v2.conv.example.com", "s1", "-o", "json"]));
    assert_eq!(s1["spec"], json!({"replicas": 6}));
    // A Service without that port: kube's resolver error.
    let missing = crd(
        "lostgadgets",
        "LostGadget",
        json!({"service": {"namespace": "default", "name": "nowhere", "path": "/convert"},
               "caBundle": hook.ca_bundle()}),
    );
    establish(&c, &missing, "lostgadgets.conv.example.com");
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&object("LostGadget", "v2", "l1", json!({"replicas": 1}))),
    );
    assert!(
        err.contains(r#"conversion webhook for conv.example.com/v2, Kind=LostGadget failed: Post "https://nowhere.default.svc:443/convert?timeout=30s": service "nowhere" not found"#),
        "{err}"
    );
}

const CBOR: &str = "application/cbor";
const TABLE: &str = "application/json;as=Table;g=meta.k8s.io;v=v1";

/// A CBOR item as JSON (kube writes strings as byte strings).
fn cbor_json(v: &Cbor) -> Value {
    match v {
        Cbor::Null => Value::Null,
        Cbor::Bool(b) => Value::Bool(*b),
        Cbor::Integer(i) => json!(i64::try_from(*i).expect("an i64")),
        Cbor::Float(f) => json!(f),
        Cbor::Bytes(b) => Value::String(String::from_utf8(b.clone()).expect("UTF-8")),
        Cbor::Text(s) => Value::String(s.clone()),
        Cbor::Array(a) => Value::Array(a.iter().map(cbor_json).collect()),
        Cbor::Map(m) => Value::Object(
            m.iter()
                .map(|(k, v)| match cbor_json(k) {
                    Value::String(k) => (k, cbor_json(v)),
                    other => panic!("a key that is not a string: {other}"),
                })
                .collect(),
        ),
        Cbor::Tag(_, inner) => cbor_json(inner),
        other => panic!("unexpected CBOR item {other:?}"),
    }
}

/// A Table row's name and first printer column.
fn name_and_first(row: &Value) -> Value {
    Value::Array(row["cells"].as_array().expect("cells")[..2].to_vec())
}

/// A GET answered 200 in `accept`: its body.
async fn get(client: &reqwest::Client, url: &str, accept: &str) -> Bytes {
    let r = client
        .get(url)
        .header("accept", accept)
        .send()
        .await
        .expect("GET");
    let status = r.status().as_u16();
    let body = r.bytes().await.expect("body");
    assert_eq!(status, 200, "GET {url}: {}", String::from_utf8_lossy(&body));
    body
}

/// A create (JSON) answered 201.
async fn create(client: &reqwest::Client, collection: &str, object: &str) {
    let r = client
        .post(collection)
        .header("content-type", "application/json")
        .body(object.to_string())
        .send()
        .await
        .expect("POST");
    let status = r.status().as_u16();
    let body = r.text().await.expect("body");
    assert_eq!(status, 201, "POST {collection}: {body}");
}

/// Watch events (as JSON) of a `cbor-seq` (`cbor`) or JSON watch until
/// one is about `name`: that event.
async fn event_for(w: &mut reqwest::Response, cbor: bool, name: &str) -> Value {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(20), w.chunk())
            .await
            .unwrap_or_else(|_| panic!("no event for {name}"))
            .expect("chunk")
            .unwrap_or_else(|| panic!("the watch ended before an event for {name}"));
        buf.extend_from_slice(&chunk);
        loop {
            let (event, used) = if cbor {
                let mut cursor = std::io::Cursor::new(&buf[..]);
                let Ok(item) = ciborium::de::from_reader::<Cbor, _>(&mut cursor) else {
                    break;
                };
                (cbor_json(&item), cursor.position() as usize)
            } else {
                let Some(end) = buf.iter().position(|&b| b == b'\n') else {
                    break;
                };
                (json_of(&String::from_utf8_lossy(&buf[..end])), end + 1)
            };
            buf.drain(..used);
            let object = &event["object"];
            let about = object["metadata"]["name"] == name
                || object["rows"][0]["object"]["metadata"]["name"] == name;
            if about {
                return event;
            }
        }
    }
}

/// The non-JSON, non-object paths of the v2 objects `g1` (5), `g2` (9)
/// and `g3` (4) stored in v1: each shows v2, converted by the webhook.
async fn http_paths(c: &Cluster, hook: &Webhook) {
    let client = c.client();
    let v1 = format!("{}/apis/{GROUP}/v1/namespaces/default/gadgets", c.url);
    let v2 = format!("{}/apis/{GROUP}/v2/namespaces/default/gadgets", c.url);

    // A CBOR list in v2: one review, the items in v2.
    let before = hook.seen.batches.lock().unwrap().len();
    let body = get(&client, &v2, CBOR).await;
    let list = cbor_json(&ciborium::de::from_reader(&body[..]).expect("CBOR list"));
    assert_eq!(list["kind"], "GadgetList");
    assert_eq!(list["apiVersion"], "conv.example.com/v2");
    let items = list["items"].as_array().expect("items");
    let specs: Vec<(&Value, &Value)> = items
        .iter()
        .map(|i| (&i["metadata"]["name"], &i["spec"]))
        .collect();
    assert_eq!(
        specs,
        [
            (&json!("g1"), &json!({"replicas": 5})),
            (&json!("g2"), &json!({"replicas": 9})),
            (&json!("g3"), &json!({"replicas": 4}))
        ]
    );
    assert!(items
        .iter()
        .all(|i| i["apiVersion"] == "conv.example.com/v2"
            && i["kind"] == "Gadget"
            && i["metadata"]["labels"]["converted-to"] == "v2"));
    assert_eq!(hook.seen.batches.lock().unwrap()[before..], [3]);
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion")
        .to_string();

    // A Table list in v2: v2's column, read from the converted objects.
    let table = json_of(&String::from_utf8_lossy(&get(&client, &v2, TABLE).await));
    let names: Vec<&Value> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names[..2], [&json!("Name"), &json!("Replicas")]);
    assert_eq!(name_and_first(&table["rows"][0]), json!(["g1", 5]));
    assert_eq!(name_and_first(&table["rows"][2]), json!(["g3", 4]));
    // And in v1, v1's.
    let table = json_of(&String::from_utf8_lossy(&get(&client, &v1, TABLE).await));
    assert_eq!(table["columnDefinitions"][1]["name"], "Size");
    assert_eq!(name_and_first(&table["rows"][0]), json!(["g1", "5"]));

    // A cbor-seq watch and a Table watch in v2 see a v1 create in v2.
    let watch = format!("{v2}?watch=true&resourceVersion={rv}&timeoutSeconds=30");
    let mut cbor_watch = client
        .get(&watch)
        .header("accept", CBOR)
        .send()
        .await
        .expect("watch");
    assert_eq!(cbor_watch.status().as_u16(), 200);
    assert_eq!(cbor_watch.headers()["content-type"], "application/cbor-seq");
    let mut table_watch = client
        .get(&watch)
        .header("accept", TABLE)
        .send()
        .await
        .expect("watch");
    assert_eq!(table_watch.status().as_u16(), 200);
    create(
        &client,
        &v1,
        &object("Gadget", "v1", "g5", json!({"size": "6"})),
    )
    .await;
    let ev = event_for(&mut cbor_watch, true, "g5").await;
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["apiVersion"], "conv.example.com/v2");
    assert_eq!(ev["object"]["kind"], "Gadget");
    assert_eq!(ev["object"]["spec"], json!({"replicas": 6}));
    assert_eq!(ev["object"]["metadata"]["labels"]["converted-to"], "v2");
    let ev = event_for(&mut table_watch, false, "g5").await;
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["kind"], "Table");
    assert_eq!(ev["object"]["columnDefinitions"][1]["name"], "Replicas");
    assert_eq!(name_and_first(&ev["object"]["rows"][0]), json!(["g5", 6]));
    drop((cbor_watch, table_watch));

    // `/scale` in v2 (the scale paths are v2's): read, replaced and
    // patched through the webhook, stored in v1.
    let scale = format!("{v2}/g1/scale");
    let s = json_of(&String::from_utf8_lossy(
        &get(&client, &scale, "application/json").await,
    ));
    assert_eq!(s["kind"], "Scale");
    assert_eq!(s["spec"]["replicas"], 5);
    let mut desired = s.clone();
    desired["spec"]["replicas"] = json!(11);
    let r = client.put(&scale).json(&desired).send().await.expect("PUT");
    assert_eq!(r.status().as_u16(), 200);
    let s: Value = r.json().await.expect("Scale");
    assert_eq!(s["spec"]["replicas"], 11);
    let g1 = json_of(&String::from_utf8_lossy(
        &get(&client, &format!("{v1}/g1"), "application/json").await,
    ));
    assert_eq!(g1["spec"], json!({"size": "11"}));
    let r = client
        .patch(&scale)
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"spec":{"replicas":12}}"#)
        .send()
        .await
        .expect("PATCH");
    assert_eq!(r.status().as_u16(), 200);
    let s: Value = r.json().await.expect("Scale");
    assert_eq!(s["spec"]["replicas"], 12);
    let g1 = json_of(&String::from_utf8_lossy(
        &get(&client, &format!("{v1}/g1"), "application/json").await,
    ));
    assert_eq!(g1["spec"], json!({"size": "12"}));

    // deletecollection in v2: the deleted objects in v2.
    for (name, size) in [("dc1", "1"), ("dc2", "2")] {
        let mut o = json_of(&object("Gadget", "v1", name, json!({"size": size})));
        o["metadata"]["labels"] = json!({"batch": "dc"});
        create(&client, &v1, &o.to_string()).await;
    }
    let r = client
        .delete(format!("{v2}?labelSelector=batch%3Ddc"))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(r.status().as_u16(), 200);
    let deleted: Value = r.json().await.expect("list");
    assert_eq!(deleted["kind"], "GadgetList");
    assert_eq!(deleted["apiVersion"], "conv.example.com/v2");
    let items = deleted["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{deleted}");
    assert_eq!(items[0]["spec"], json!({"replicas": 1}));
    assert_eq!(items[1]["spec"], json!({"replicas": 2}));
    assert!(items
        .iter()
        .all(|i| i["apiVersion"] == "conv.example.com/v2"));

    plain_paths(c, &client).await;
}

/// A `conversion: None` CRD read in its non-storage version: CBOR lists
/// and watches show that `apiVersion`, Tables that version's columns.
async fn plain_paths(c: &Cluster, client: &reqwest::Client) {
    let crd = plain_crd("plains", "Plain");
    establish(c, &crd.to_string(), "plains.conv.example.com");
    let v1 = format!("{}/apis/{GROUP}/v1/namespaces/default/plains", c.url);
    let v2 = format!("{}/apis/{GROUP}/v2/namespaces/default/plains", c.url);
    create(
        client,
        &v1,
        &object("Plain", "v1", "p1", json!({"size": "3"})),
    )
    .await;
    let body = get(client, &v2, CBOR).await;
    let list = cbor_json(&ciborium::de::from_reader(&body[..]).expect("CBOR list"));
    assert_eq!(list["apiVersion"], "conv.example.com/v2");
    assert_eq!(list["items"][0]["apiVersion"], "conv.example.com/v2");
    assert_eq!(list["items"][0]["metadata"]["name"], "p1");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion")
        .to_string();
    let table = json_of(&String::from_utf8_lossy(&get(client, &v2, TABLE).await));
    assert_eq!(table["columnDefinitions"][1]["name"], "Replicas");
    let watch = format!("{v2}?watch=true&resourceVersion={rv}&timeoutSeconds=30");
    let mut cbor_watch = client
        .get(&watch)
        .header("accept", CBOR)
        .send()
        .await
        .expect("watch");
    let mut table_watch = client
        .get(&watch)
        .header("accept", TABLE)
        .send()
        .await
        .expect("watch");
    create(
        client,
        &v1,
        &object("Plain", "v1", "p2", json!({"size": "4"})),
    )
    .await;
    let ev = event_for(&mut cbor_watch, true, "p2").await;
    assert_eq!(ev["object"]["apiVersion"], "conv.example.com/v2");
    assert_eq!(ev["object"]["kind"], "Plain");
    let ev = event_for(&mut table_watch, false, "p2").await;
    assert_eq!(ev["object"]["columnDefinitions"][1]["name"], "Replicas");
    assert_eq!(
        name_and_first(&ev["object"]["rows"][0]),
        json!(["p2", null])
    );
}

#[test]
fn conversion_webhook_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn conversion_webhook_distributed() {
    scenario(Mode::Distributed);
}
