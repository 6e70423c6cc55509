//! What each kind's registry strategy does to an object on create and
//! update (kube's `pkg/registry/<group>/<kind>/strategy.go`), seen with the
//! installed kubectl and raw HTTPS, in both modes.

mod support;

use serde_json::Value;
use support::{Cluster, Mode};

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
