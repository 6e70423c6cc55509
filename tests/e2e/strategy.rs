//! What each kind's registry strategy does to an object on create and
//! update (kube's `pkg/registry/<group>/<kind>/strategy.go`), seen with the
//! installed kubectl and raw HTTPS, in both modes.

mod support;

use serde_json::Value;
use support::{block_on, Cluster, Mode};

#[test]
fn strategy_embedded() {
    run(&Cluster::start(Mode::Embedded));
}

#[test]
fn strategy_distributed() {
    run(&Cluster::start(Mode::Distributed));
}

fn run(c: &Cluster) {
    job_generated_selector(c);
    job_manual_selector(c);
    csr_records_requester(c);
    unconditional_updates(c);
}

fn get_json(c: &Cluster, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    serde_json::from_str(&c.ok(&all)).expect("kubectl get -o json")
}

/// A Job without `manualSelector` selects its own uid, and its template
/// carries the four generated labels.
fn job_generated_selector(c: &Cluster) {
    c.ok(&["create", "job", "gen-sel", "--image=busybox"]);
    let job = get_json(c, &["job", "gen-sel"]);
    let uid = job["metadata"]["uid"].as_str().expect("uid").to_string();
    assert_eq!(uid.len(), 36, "a uuid: {uid}");
    assert_eq!(job["spec"]["manualSelector"], false, "{job}");
    assert_eq!(
        job["spec"]["selector"],
        serde_json::json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
        "{job}"
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"],
        serde_json::json!({
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": "gen-sel",
            "controller-uid": uid,
            "job-name": "gen-sel",
        }),
        "{job}"
    );
    // A uid sent by the client is replaced, and the selector uses the new one.
    let body = r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"gen-",
        "uid":"11111111-2222-3333-4444-555555555555"},
        "spec":{"template":{"spec":{"restartPolicy":"Never",
        "containers":[{"name":"c","image":"busybox"}]}}}}"#;
    let out = c.ok_stdin(&["create", "-f", "-", "-o", "json"], body);
    let job: Value = serde_json::from_str(&out).expect("json");
    let uid = job["metadata"]["uid"].as_str().expect("uid");
    let name = job["metadata"]["name"].as_str().expect("name");
    assert_ne!(uid, "11111111-2222-3333-4444-555555555555");
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    let labels = &job["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["controller-uid"], uid, "{job}");
    assert_eq!(labels["batch.kubernetes.io/job-name"], name, "{job}");
    assert_eq!(
        job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );
    // The stored object is the one answered.
    let stored = get_json(c, &["job", name]);
    assert_eq!(stored["spec"]["selector"], job["spec"]["selector"]);
}

/// `manualSelector: true` keeps the user's selector and labels.
fn job_manual_selector(c: &Cluster) {
    let body = r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"manual-sel"},
        "spec":{"manualSelector":true,"selector":{"matchLabels":{"app":"m"}},
        "template":{"metadata":{"labels":{"app":"m"}},"spec":{"restartPolicy":"Never",
        "containers":[{"name":"c","image":"busybox"}]}}}}"#;
    c.ok_stdin(&["create", "-f", "-"], body);
    let job = get_json(c, &["job", "manual-sel"]);
    assert_eq!(
        job["spec"]["selector"],
        serde_json::json!({"matchLabels": {"app": "m"}})
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"],
        serde_json::json!({"app": "m"})
    );
    // Without manualSelector, the user's selector and labels are kept and
    // the generated ones added.
    let body = body
        .replace("\"manualSelector\":true,", "")
        .replace("manual-sel", "auto-sel");
    c.ok_stdin(&["create", "-f", "-"], &body);
    let job = get_json(c, &["job", "auto-sel"]);
    let uid = job["metadata"]["uid"].as_str().expect("uid");
    assert_eq!(
        job["spec"]["selector"],
        serde_json::json!({"matchLabels": {
            "app": "m", "batch.kubernetes.io/controller-uid": uid}})
    );
    assert_eq!(job["spec"]["template"]["metadata"]["labels"]["app"], "m");
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["job-name"],
        "auto-sel"
    );
}

/// A PEM certificate request from openssl, base64 for `spec.request`.
fn csr_request(c: &Cluster, cn: &str) -> String {
    let dir = c.home.path();
    let out = std::process::Command::new("openssl")
        .args(["req", "-new", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes"])
        .arg("-keyout")
        .arg(dir.join(format!("{cn}.key")))
        .arg("-out")
        .arg(dir.join(format!("{cn}.csr")))
        .args(["-subj", &format!("/CN={cn}")])
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    use base64::Engine as _;
    let pem = std::fs::read(dir.join(format!("{cn}.csr"))).expect("csr");
    base64::engine::general_purpose::STANDARD.encode(pem)
}

/// The CertificateSigningRequest manifest `name`, claiming to come from
/// `mallory` and to be approved already.
fn csr_manifest(name: &str, request: &str) -> String {
    format!(
        r#"{{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest",
        "metadata":{{"name":"{name}"}},
        "spec":{{"request":"{request}","signerName":"kubernetes.io/kube-apiserver-client",
        "usages":["client auth"],"username":"mallory","uid":"42","groups":["system:masters"],
        "extra":{{"k":["v"]}}}},
        "status":{{"conditions":[{{"type":"Approved","status":"True","reason":"Mine"}}]}}}}"#
    )
}

/// The user kubectl authenticates as (`kubectl auth whoami`), with `args`.
fn whoami(c: &Cluster, args: &[&str]) -> Value {
    let mut all = vec!["auth", "whoami", "-o", "json"];
    all.extend_from_slice(args);
    let review: Value = serde_json::from_str(&c.ok(&all)).expect("whoami json");
    review["status"]["userInfo"].clone()
}

/// The requester's identity on a spec, as a UserInfo-shaped object.
fn requester(spec: &Value) -> Value {
    let mut m = serde_json::Map::new();
    for k in ["username", "uid", "groups", "extra"] {
        if let Some(v) = spec.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    Value::Object(m)
}

/// A CertificateSigningRequest records who created it (impersonation
/// included), whatever the body says, and starts with an empty status; an
/// update keeps the stored spec and status.
fn csr_records_requester(c: &Cluster) {
    let request = csr_request(c, "csr-admin");
    c.ok_stdin(&["create", "-f", "-"], &csr_manifest("csr-admin", &request));
    let csr = get_json(c, &["csr", "csr-admin"]);
    let admin = whoami(c, &[]);
    assert_eq!(requester(&csr["spec"]), admin, "{csr}");
    assert_ne!(csr["spec"]["username"], "mallory", "{csr}");
    assert_eq!(csr["status"], serde_json::json!({}), "{csr}");

    // An impersonated user (allowed to create requests by RBAC).
    c.ok(&[
        "create",
        "clusterrole",
        "csr-creator",
        "--verb=create,get",
        "--resource=certificatesigningrequests",
    ]);
    c.ok(&[
        "create",
        "clusterrolebinding",
        "csr-creators",
        "--clusterrole=csr-creator",
        "--group=devs",
    ]);
    let request = csr_request(c, "csr-jane");
    c.ok_stdin(
        &["create", "-f", "-", "--as=jane", "--as-group=devs"],
        &csr_manifest("csr-jane", &request),
    );
    let csr = get_json(c, &["csr", "csr-jane"]);
    assert_eq!(csr["spec"]["username"], "jane", "{csr}");
    assert_eq!(
        csr["spec"]["groups"],
        serde_json::json!(["devs", "system:authenticated"]),
        "{csr}"
    );
    assert!(csr["spec"].get("uid").is_none(), "{csr}");
    assert!(csr["spec"].get("extra").is_none(), "{csr}");
    assert_eq!(
        requester(&csr["spec"]),
        whoami(c, &["--as=jane", "--as-group=devs"])
    );

    // An update of the main resource changes neither spec nor status.
    let mut changed = csr.clone();
    changed["spec"]["username"] = "mallory".into();
    changed["spec"]["usages"] = serde_json::json!(["digital signature", "client auth"]);
    changed["status"] = serde_json::json!({"conditions": [
        {"type": "Approved", "status": "True", "reason": "Mine"}]});
    c.ok_stdin(&["replace", "-f", "-"], &changed.to_string());
    let after = get_json(c, &["csr", "csr-jane"]);
    assert_eq!(after["spec"], csr["spec"], "{after}");
    assert_eq!(after["status"], serde_json::json!({}), "{after}");
}

const GADGETS: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced",
"names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
"versions":[{"name":"v1","served":true,"storage":true,
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;

/// PUT `body` to `path`; the status code and the answer.
fn put(c: &Cluster, path: &str, body: &Value) -> (u16, Value) {
    block_on(async {
        let r = c
            .client()
            .put(format!("{}{path}", c.url))
            .json(body)
            .send()
            .await
            .expect("PUT");
        let code = r.status().as_u16();
        (code, r.json().await.expect("json answer"))
    })
}

/// The object at `path` with `metadata.resourceVersion` set to `rv`
/// (removed when `None`) and `data`/`spec` changed to `n`.
fn without_rv(c: &Cluster, path: &str, rv: Option<&str>, n: u64) -> Value {
    let mut obj: Value = block_on(async {
        let r = c
            .client()
            .get(format!("{}{path}", c.url))
            .send()
            .await
            .expect("GET");
        r.json().await.expect("json")
    });
    let meta = obj["metadata"].as_object_mut().expect("metadata");
    meta.remove("managedFields");
    match rv {
        Some(rv) => {
            meta.insert("resourceVersion".into(), rv.into());
        }
        None => {
            meta.remove("resourceVersion");
        }
    }
    if obj.get("data").is_some() || obj["kind"] == "ConfigMap" {
        obj["data"] = serde_json::json!({"n": n.to_string()});
    } else {
        obj["spec"]["n"] = n.into();
    }
    obj
}

/// An update without `metadata.resourceVersion`, or with `"0"`, is
/// unconditional for the kinds whose strategy allows it (a ConfigMap) and
/// kube's `422` for those that do not (custom resources, CRDs).
fn unconditional_updates(c: &Cluster) {
    c.ok(&["create", "configmap", "uncond", "--from-literal=n=0"]);
    let path = "/api/v1/namespaces/default/configmaps/uncond";
    for (n, rv) in [(1, Some("0")), (2, None)] {
        let (code, answer) = put(c, path, &without_rv(c, path, rv, n));
        assert_eq!(code, 200, "rv {rv:?}: {answer}");
        assert_eq!(answer["data"]["n"], n.to_string(), "{answer}");
    }
    // A stale one is still a conflict.
    let (code, answer) = put(c, path, &without_rv(c, path, Some("1"), 3));
    assert_eq!(code, 409, "{answer}");

    c.ok_stdin(&["apply", "-f", "-"], GADGETS);
    c.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gadgets.example.com",
        "--timeout=10s",
    ]);
    let gadget = r#"{"apiVersion":"example.com/v1","kind":"Gadget",
        "metadata":{"name":"g1","namespace":"default"},"spec":{"n":0}}"#;
    let mut created = false;
    for _ in 0..50 {
        if c.kubectl_stdin(&["create", "-f", "-"], Some(gadget))
            .status
            .success()
        {
            created = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(created, "the Gadget was never created");
    let path = "/apis/example.com/v1/namespaces/default/gadgets/g1";
    for rv in [None, Some("0")] {
        let (code, answer) = put(c, path, &without_rv(c, path, rv, 1));
        assert_eq!(code, 422, "rv {rv:?}: {answer}");
        assert_eq!(
            answer,
            serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "gadgets.example.com \"g1\" is invalid: metadata.resourceVersion: \
                    Invalid value: 0x0: must be specified for an update",
                "reason": "Invalid",
                "details": {"name": "g1", "group": "example.com", "kind": "gadgets",
                    "causes": [{"reason": "FieldValueInvalid",
                        "message": "Invalid value: 0x0: must be specified for an update",
                        "field": "metadata.resourceVersion"}]},
                "code": 422
            })
        );
    }
    let rv = get_json(c, &["gadget", "g1"])["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let (code, answer) = put(c, path, &without_rv(c, path, Some(&rv), 2));
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["spec"]["n"], 2);
    // `kubectl replace` of a manifest without one still works: kubectl
    // fills in the server's resourceVersion first.
    let out = c.ok_stdin(&["replace", "-f", "-"], gadget);
    assert!(out.contains("replaced"), "{out}");
    // The CRD itself too.
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com";
    let mut crd = without_rv(c, path, None, 0);
    crd["spec"].as_object_mut().expect("spec").remove("n");
    let (code, answer) = put(c, path, &crd);
    assert_eq!(code, 422, "{answer}");
    assert_eq!(
        answer["message"],
        "customresourcedefinitions.apiextensions.k8s.io \"gadgets.example.com\" is invalid: \
         metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
}
