//! Declarative validation's gates through the real binaries, in both
//! modes: a ReplicationController with `spec.replicas: -1` is kube's 422
//! with `DeclarativeValidation` on (the default), off, and with
//! `DeclarativeValidationTakeover`, nothing is stored, and the embedded
//! server's `/metrics` carries kube's two counters, with no mismatch for
//! rules that agree with the handwritten ones.

mod support;

use support::{Cluster, Mode};

const RC: &str = "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec:\n  replicas: -1\n  minReadySeconds: -2\n  selector: {app: x}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      containers: [{name: c, image: nginx}]\n";

const CAUSES: [&str; 2] = [
    "* spec.replicas: Invalid value: -1: must be greater than or equal to 0\n",
    "* spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0\n",
];

fn refused(c: &Cluster) {
    let out = c.kubectl_stdin(&["create", "-f", "-"], Some(RC));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("The ReplicationController \"rc\" is invalid: \n"),
        "{err}"
    );
    for cause in CAUSES {
        assert_eq!(err.matches(cause).count(), 1, "{err}");
    }
    let out = c.kubectl_stdin(&["get", "rc", "rc"], None);
    assert!(!out.status.success(), "stored");
}

fn counters(c: &Cluster) -> (String, String) {
    let metrics = c.ok(&["get", "--raw", "/metrics"]);
    let value = |name: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in /metrics"))
            .to_string()
    };
    (
        value("apiserver_validation_declarative_validation_mismatch_total"),
        value("apiserver_validation_declarative_validation_panic_total"),
    )
}

fn each_gate(mode: Mode) {
    for gates in [
        "",
        "DeclarativeValidation=false",
        "DeclarativeValidationTakeover=true",
    ] {
        let c = Cluster::start_with_env(mode, &[("KEELSON_FEATURE_GATES", gates)]);
        refused(&c);
        if mode == Mode::Embedded {
            let (mismatch, panics) = counters(&c);
            assert_eq!(
                mismatch, "apiserver_validation_declarative_validation_mismatch_total 0",
                "{gates}"
            );
            assert_eq!(
                panics, "apiserver_validation_declarative_validation_panic_total 0",
                "{gates}"
            );
        }
    }
}

#[test]
fn declarative_gates_embedded() {
    each_gate(Mode::Embedded);
}

#[test]
fn declarative_gates_distributed() {
    each_gate(Mode::Distributed);
}
