//! Admission webhooks driven by the installed kubectl: a real HTTPS
//! webhook server on loopback (its own CA, given as `caBundle`) reached by
//! `clientConfig.url`. A mutating webhook's JSON patch is applied before a
//! validating webhook sees the object, a denial is kube's message, an
//! unreachable webhook and a timeout fail the write under `Fail` and are
//! skipped under `Ignore`, `--dry-run=server` sends `dryRun: true` and
//! stores nothing, object and namespace selectors and matchConditions pick
//! the requests, `reinvocationPolicy: IfNeeded` calls a webhook again after
//! a later one changed the object, and warnings reach kubectl. Both modes.

mod support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use support::{Cluster, Mode};

/// What the webhook server saw: the reviews, by path.
#[derive(Default)]
struct Seen {
    reviews: Mutex<HashMap<String, Vec<Value>>>,
    /// Each call's `Authorization` header, by path.
    authorization: Mutex<HashMap<String, Vec<Option<String>>>>,
}

impl Seen {
    fn count(&self, path: &str) -> usize {
        self.reviews.lock().unwrap().get(path).map_or(0, Vec::len)
    }
    fn last(&self, path: &str) -> Value {
        self.reviews.lock().unwrap()[path].last().cloned().unwrap()
    }
}

struct Webhook {
    addr: SocketAddr,
    ca_pem: String,
    seen: Arc<Seen>,
    _runtime: tokio::runtime::Runtime,
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// The test's webhooks, one per path.
fn answer(path: &str, review: &Value, calls: usize) -> Value {
    let req = &review["request"];
    let uid = req["uid"].clone();
    let ok = |extra: Value| {
        let mut resp = json!({"uid": uid, "allowed": true});
        if let (Some(r), Some(e)) = (resp.as_object_mut(), extra.as_object()) {
            r.extend(e.clone());
        }
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
    };
    let deny = |message: &str| {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {
            "uid": uid, "allowed": false,
            "status": {"code": 403, "reason": "Forbidden", "message": message}
        }})
    };
    match path {
        "/mutate" => ok(json!({
            "patchType": "JSONPatch",
            "patch": b64(r#"[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]"#),
            "warnings": ["mutated by the test webhook"],
        })),
        "/validate" => {
            if req["object"]["data"].get("forbidden").is_some() {
                deny("the key forbidden is not allowed")
            } else {
                ok(json!({}))
            }
        }
        "/deny" => deny("denied by the test webhook"),
        "/wronguid" => {
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "nope", "allowed": true}})
        }
        "/reinvoke-a" => {
            let patch = format!(
                r#"[{{"op":"add","path":"/metadata/annotations","value":{{"a-calls":"{calls}"}}}}]"#
            );
            ok(json!({"patchType": "JSONPatch", "patch": b64(&patch)}))
        }
        "/reinvoke-b" => {
            if req["object"]["metadata"]["labels"].get("b").is_some() {
                ok(json!({}))
            } else {
                ok(
                    json!({"patchType": "JSONPatch", "patch": b64(r#"[{"op":"add","path":"/metadata/labels/b","value":"1"}]"#)}),
                )
            }
        }
        _ => ok(json!({})),
    }
}

impl Webhook {
    fn start() -> Webhook {
        let ca_key = rcgen::KeyPair::generate().expect("ca key");
        let mut ca = rcgen::CertificateParams::default();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "admission-test-ca");
        ca.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca.self_signed(&ca_key).expect("ca cert");
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
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
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Seen::default());
        let s = seen.clone();
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, s) = (acceptor.clone(), s.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let s = s.clone();
                            async move {
                                let path = req.uri().path().to_string();
                                let authorization = req
                                    .headers()
                                    .get("authorization")
                                    .and_then(|v| v.to_str().ok())
                                    .map(str::to_string);
                                s.authorization
                                    .lock()
                                    .unwrap()
                                    .entry(path.clone())
                                    .or_default()
                                    .push(authorization);
                                let body = req.into_body().collect().await?.to_bytes();
                                let review: Value =
                                    serde_json::from_slice(&body).unwrap_or(Value::Null);
                                let calls = {
                                    let mut m = s.reviews.lock().unwrap();
                                    let v = m.entry(path.clone()).or_default();
                                    v.push(review.clone());
                                    v.len()
                                };
                                if path == "/slow" {
                                    tokio::time::sleep(Duration::from_secs(3)).await;
                                }
                                let text = if path == "/garbage" {
                                    "this is not json".to_string()
                                } else {
                                    answer(&path, &review, calls).to_string()
                                };
                                Ok::<_, hyper::Error>(
                                    hyper::Response::builder()
                                        .header("content-type", "application/json")
                                        .body(Full::new(Bytes::from(text)))
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
            seen,
            _runtime: runtime,
        }
    }

    fn client_config(&self, path: &str) -> Value {
        json!({"url": format!("https://{}{path}", self.addr), "caBundle": b64(&self.ca_pem)})
    }
}

/// One webhook of a configuration, for ConfigMaps labelled `step: <step>`.
fn hook(name: &str, client_config: Value, step: &str, extra: Value) -> Value {
    let mut h = json!({
        "name": name,
        "clientConfig": client_config,
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "objectSelector": {"matchLabels": {"step": step}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    if let (Some(m), Some(e)) = (h.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    h
}

fn configuration(kind: &str, name: &str, hooks: Vec<Value>) -> String {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": hooks,
    })
    .to_string()
}

fn configmap(ns: &str, name: &str, step: &str, data: Value) -> String {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"step": step}},
        "data": data,
    })
    .to_string()
}

/// Wait until a server-side dry run of `probe` satisfies `active` (the
/// configuration has reached admission).
fn wait_active(c: &Cluster, probe: &str, active: impl Fn(&std::process::Output) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = c.kubectl_stdin(&["create", "--dry-run=server", "-f", "-"], Some(probe));
        if active(&out) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook configuration never took effect"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scenario(mode: Mode) {
    let hook_server = Webhook::start();
    let seen = hook_server.seen.clone();
    let c = Cluster::start(mode);

    // Mutating then validating: the patch is applied, the validating
    // webhook sees it, the warning reaches kubectl.
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "MutatingWebhookConfiguration",
            "a-mutate",
            vec![hook(
                "mutate.test.keelson.dev",
                hook_server.client_config("/mutate"),
                "mutate",
                json!({}),
            )],
        ),
    );
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "v-validate",
            vec![hook(
                "validate.test.keelson.dev",
                hook_server.client_config("/validate"),
                "mutate",
                json!({}),
            )],
        ),
    );
    let probe = configmap("default", "probe", "mutate", json!({"a": "1"}));
    wait_active(&c, &probe, |_| {
        seen.count("/mutate") > 0 && seen.count("/validate") > 0
    });
    let dry = seen.last("/validate");
    assert_eq!(dry["request"]["dryRun"], true, "{dry}");
    assert!(
        !c.kubectl(&["get", "cm", "probe"]).status.success(),
        "a dry run stores nothing"
    );

    let out = c.kubectl_stdin(
        &["create", "-f", "-"],
        Some(&configmap("default", "cm1", "mutate", json!({"a": "1"}))),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Warning: mutated by the test webhook"),
        "{}",
        stderr(&out)
    );
    let cm: Value = serde_json::from_str(&c.ok(&["get", "cm", "cm1", "-o", "json"])).unwrap();
    assert_eq!(cm["metadata"]["labels"]["mutated"], "yes");
    let review = seen.last("/validate");
    let request = &review["request"];
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(
        request["object"]["metadata"]["labels"]["mutated"], "yes",
        "validated after the patch"
    );
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(request["namespace"], "default");
    assert_eq!(request["name"], "cm1");
    assert_eq!(request["dryRun"], false);
    assert_eq!(request["options"]["kind"], "CreateOptions");
    assert!(
        request["userInfo"]["username"]
            .as_str()
            .is_some_and(|u| !u.is_empty()),
        "{request}"
    );
    assert!(request["userInfo"]["groups"]
        .as_array()
        .is_some_and(|g| g.iter().any(|x| x == "system:authenticated")));

    // kube records the writer's fields before mutating admission: the
    // label the webhook added is not kubectl's.
    let cm: Value =
        serde_json::from_str(&c.ok(&["get", "cm", "cm1", "-o", "json", "--show-managed-fields"]))
            .unwrap();
    let entries = cm["metadata"]["managedFields"].as_array().expect("managed");
    let kubectl = entries
        .iter()
        .find(|e| e["manager"] == "kubectl-create")
        .unwrap_or_else(|| panic!("no kubectl-create entry: {cm}"));
    let labels = &kubectl["fieldsV1"]["f:metadata"]["f:labels"];
    assert!(labels.get("f:step").is_some(), "{kubectl}");
    assert!(labels.get("f:mutated").is_none(), "{kubectl}");
    // So another applier may set it without a conflict (before, kubectl
    // owned it and this was a 409); the webhook sets it back.
    let mut applied: Value =
        serde_json::from_str(&configmap("default", "cm1", "mutate", json!({"a": "1"}))).unwrap();
    applied["metadata"]["labels"]["mutated"] = json!("no");
    c.ok_stdin(
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        &applied.to_string(),
    );
    let cm: Value = serde_json::from_str(&c.ok(&["get", "cm", "cm1", "-o", "json"])).unwrap();
    assert_eq!(cm["metadata"]["labels"]["mutated"], "yes", "{cm}");

    // A denial: kube's message as kubectl prints it; nothing stored.
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&configmap(
            "default",
            "cm2",
            "mutate",
            json!({"forbidden": "1"}),
        )),
    );
    assert!(
        err.contains(r#"Error from server (Forbidden): error when creating "STDIN": admission webhook "validate.test.keelson.dev" denied the request: the key forbidden is not allowed"#),
        "{err}"
    );
    assert!(
        !c.kubectl(&["get", "cm", "cm2"]).status.success(),
        "a denied create stores nothing"
    );

    // An update goes through the webhooks too (with the old object).
    c.ok(&["label", "cm", "cm1", "extra=1"]);
    let review = seen.last("/validate");
    assert_eq!(review["request"]["operation"], "UPDATE");
    assert_eq!(review["request"]["oldObject"]["metadata"]["name"], "cm1");
    assert_eq!(review["request"]["options"]["kind"], "UpdateOptions");

    // An unreachable webhook: Fail refuses with kube's wording, Ignore skips.
    let down = json!({"url": "https://127.0.0.1:1/down", "caBundle": b64(&hook_server.ca_pem)});
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "v-down",
            vec![hook(
                "down.test.keelson.dev",
                down.clone(),
                "down",
                json!({}),
            )],
        ),
    );
    let probe = configmap("default", "down-probe", "down", json!({}));
    wait_active(&c, &probe, |o| !o.status.success());
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&configmap("default", "down1", "down", json!({}))),
    );
    assert!(
        err.contains(r#"Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook "down.test.keelson.dev": failed to call webhook: Post "https://127.0.0.1:1/down?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused"#),
        "{err}"
    );
    c.ok(&[
        "patch",
        "validatingwebhookconfiguration",
        "v-down",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]"#,
    ]);
    wait_active(&c, &probe, |o| o.status.success());
    c.ok_stdin(
        &["create", "-f", "-"],
        &configmap("default", "down1", "down", json!({})),
    );

    // A timeout, a wrong uid and garbage under Fail.
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "v-bad",
            vec![
                hook(
                    "slow.test.keelson.dev",
                    hook_server.client_config("/slow"),
                    "slow",
                    json!({"timeoutSeconds": 1}),
                ),
                hook(
                    "uid.test.keelson.dev",
                    hook_server.client_config("/wronguid"),
                    "uid",
                    json!({}),
                ),
                hook(
                    "garbage.test.keelson.dev",
                    hook_server.client_config("/garbage"),
                    "garbage",
                    json!({}),
                ),
            ],
        ),
    );
    wait_active(&c, &configmap("default", "p", "uid", json!({})), |o| {
        !o.status.success()
    });
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&configmap("default", "slow1", "slow", json!({}))),
    );
    assert!(
        err.contains(&format!(
            r#"Internal error occurred: failed calling webhook "slow.test.keelson.dev": failed to call webhook: Post "https://{}/slow?timeout=1s": context deadline exceeded"#,
            hook_server.addr
        )),
        "{err}"
    );
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&configmap("default", "uid1", "uid", json!({}))),
    );
    assert!(
        err.contains(r#"Internal error occurred: failed calling webhook "uid.test.keelson.dev": received invalid webhook response: expected response.uid="#),
        "{err}"
    );
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&configmap("default", "g1", "garbage", json!({}))),
    );
    assert!(
        err.contains(r#"Internal error occurred: failed calling webhook "garbage.test.keelson.dev": failed to call webhook: couldn't get version/kind; json parse error: "#),
        "{err}"
    );

    // namespaceSelector: the namespace's labels decide.
    c.ok(&["create", "namespace", "wh-off"]);
    c.ok(&["create", "namespace", "wh-on"]);
    c.ok(&["label", "namespace", "wh-on", "webhooks=on"]);
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "v-ns",
            vec![hook(
                "ns.test.keelson.dev",
                hook_server.client_config("/deny"),
                "ns",
                json!({"namespaceSelector": {"matchLabels": {"webhooks": "on"}}}),
            )],
        ),
    );
    wait_active(&c, &configmap("wh-on", "p", "ns", json!({})), |o| {
        !o.status.success()
    });
    c.ok_stdin(
        &["create", "-f", "-"],
        &configmap("wh-off", "n1", "ns", json!({})),
    );
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&configmap("wh-on", "n1", "ns", json!({}))),
    );
    assert!(err.contains(r#"admission webhook "ns.test.keelson.dev" denied the request: denied by the test webhook"#), "{err}");

    // matchConditions: only names starting with deny- are sent.
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "v-cond",
            vec![hook(
                "cond.test.keelson.dev",
                hook_server.client_config("/deny"),
                "cond",
                json!({"matchConditions": [{"name": "deny-prefix", "expression": "object.metadata.name.startsWith('deny-')"}]}),
            )],
        ),
    );
    wait_active(
        &c,
        &configmap("default", "deny-probe", "cond", json!({})),
        |o| !o.status.success(),
    );
    c.ok_stdin(
        &["create", "-f", "-"],
        &configmap("default", "ok-1", "cond", json!({})),
    );
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&configmap("default", "deny-1", "cond", json!({}))),
    );
    assert!(
        err.contains(r#"admission webhook "cond.test.keelson.dev" denied the request"#),
        "{err}"
    );

    // Reinvocation: b changes the object after a, so a (IfNeeded) runs again.
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "MutatingWebhookConfiguration",
            "r-a",
            vec![hook(
                "a.test.keelson.dev",
                hook_server.client_config("/reinvoke-a"),
                "reinvoke",
                json!({"reinvocationPolicy": "IfNeeded"}),
            )],
        ),
    );
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "MutatingWebhookConfiguration",
            "r-b",
            vec![hook(
                "b.test.keelson.dev",
                hook_server.client_config("/reinvoke-b"),
                "reinvoke",
                json!({}),
            )],
        ),
    );
    wait_active(
        &c,
        &configmap("default", "rp", "reinvoke", json!({})),
        |_| seen.count("/reinvoke-a") > 0 && seen.count("/reinvoke-b") > 0,
    );
    let before = seen.count("/reinvoke-a");
    c.ok_stdin(
        &["create", "-f", "-"],
        &configmap("default", "r1", "reinvoke", json!({})),
    );
    assert_eq!(
        seen.count("/reinvoke-a") - before,
        2,
        "a is called again after b's change"
    );
    let cm: Value = serde_json::from_str(&c.ok(&["get", "cm", "r1", "-o", "json"])).unwrap();
    assert_eq!(cm["metadata"]["labels"]["b"], "1");
    assert_eq!(
        cm["metadata"]["annotations"]["a-calls"],
        (before + 2).to_string()
    );
}

#[test]
fn admission_webhooks_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn admission_webhooks_distributed() {
    scenario(Mode::Distributed);
}

/// `--admission-control-config-file` giving ValidatingAdmissionWebhook a
/// `kubeConfigFile`: its user for the webhook's `host:port` is the token
/// each call carries (kube's `defaultAuthenticationInfoResolver`); the
/// mutating plugin, not configured, calls anonymously.
#[test]
fn webhook_credentials_from_kubeconfig() {
    let hook_server = Webhook::start();
    let seen = hook_server.seen.clone();
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("webhook-kubeconfig.yaml");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nusers:\n- name: \"{}\"\n  user:\n    token: hook-secret\n- name: \"*\"\n  user:\n    token: wrong\n",
            hook_server.addr
        ),
    )
    .expect("kubeconfig");
    let admission = dir.path().join("admission.yaml");
    std::fs::write(
        &admission,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ValidatingAdmissionWebhook\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: {}\n",
            kubeconfig.display()
        ),
    )
    .expect("admission config");
    let c = Cluster::start_with(
        Mode::Embedded,
        &[
            "--admission-control-config-file",
            admission.to_str().expect("path"),
        ],
    );
    c.ok_stdin(
        &["create", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "v-auth",
            vec![hook(
                "validate.test.keelson.dev",
                hook_server.client_config("/validate"),
                "auth",
                json!({}),
            )],
        ),
    );
    let probe = configmap("default", "probe", "auth", json!({"a": "1"}));
    wait_active(&c, &probe, |_| seen.count("/validate") > 0);
    let calls = seen.authorization.lock().unwrap()["/validate"].clone();
    assert!(
        calls
            .iter()
            .all(|a| a.as_deref() == Some("Bearer hook-secret")),
        "{calls:?}"
    );
}
