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
