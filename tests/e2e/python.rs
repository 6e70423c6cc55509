//! The official Python client (`kubernetes` on PyPI, installed by
//! `.ci/run`): its strategic merge, JSON patch and server-side apply
//! calls, and its deletes with `propagationPolicy`.

mod support;

use std::process::Command;

use serde_json::{json, Value};
use support::{Cluster, Mode};

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/e2e/python/patch_and_apply.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python client failed ({mode:?}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).expect("script output is JSON");
    assert_eq!(got["cm_data"], json!({"a": "1", "b": "2"}));
    assert_eq!(
        got["containers"],
        json!([["a", "nginx:1"], ["b", "busybox:2"]])
    );
    assert_eq!(got["replicas"], 3);
    assert_eq!(got["svc_managers"], json!([["python-client", "Apply"]]));
    assert_eq!(got["svc_ports"], json!([80]));
    assert_eq!(
        got["conflict"],
        json!([
            409,
            "Apply failed with 1 conflict: conflict with \"python-client\": .spec.selector"
        ])
    );
    // A foreground delete answers the object, held by the
    // `foregroundDeletion` finalizer until its dependent is gone.
    assert_eq!(
        got["foreground_answer"],
        json!(["Deployment", ["foregroundDeletion"]])
    );
    assert_eq!(got["foreground_gone"], json!([true, true]));
    // An orphaning delete removes the owner and leaves its dependent
    // without the reference.
    assert_eq!(got["orphaned"], json!([true, null]));
}

#[test]
fn python_client_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn python_client_distributed() {
    scenario(Mode::Distributed);
}
