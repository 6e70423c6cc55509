//! ValidatingAdmissionPolicy with the installed kubectl: a bound policy
//! refuses a Deployment with too many replicas with kube's message, on
//! create and on update, and a `Warn` binding admits with a warning.

mod support;

use std::time::{Duration, Instant};

use support::{Cluster, Mode};

const POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "replicas must be no greater than 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-binding
spec:
  policyName: max-replicas
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: warn-replicas
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 2"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: warn-replicas-binding
spec:
  policyName: warn-replicas
  validationActions: [Warn]
"#;

const DENIED: &str = "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be no greater than 5";

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    c.ok_stdin(&["apply", "-f", "-"], POLICY);

    // Policies take effect once admission has seen them (as in kube).
    let big = [
        "create",
        "deployment",
        "big",
        "--image=nginx",
        "--replicas=10",
    ];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let probe = c.kubectl(&[&big[..], &["--dry-run=server"]].concat());
        if !probe.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "the policy never took effect");
        std::thread::sleep(Duration::from_millis(200));
    }
    let err = c.fails(&big, None);
    assert_eq!(
        err.trim(),
        format!(
            "error: failed to create deployment: deployments.apps \"big\" is forbidden: {DENIED}"
        )
    );
    assert!(c.kubectl(&["get", "deployment", "big"]).status.code() != Some(0));

    // Within the limit: admitted, with the Warn binding's warning.
    let out = c.kubectl(&[
        "create",
        "deployment",
        "small",
        "--image=nginx",
        "--replicas=3",
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'warn-replicas' with binding 'warn-replicas-binding': failed expression: object.spec.replicas <= 2"),
        "{stderr}"
    );

    // An update over the limit is refused too.
    let err = c.fails(
        &[
            "patch",
            "deployment",
            "small",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":8}}"#,
        ],
        None,
    );
    assert_eq!(
        err.trim(),
        // kubectl words a 422 with causes itself: the cause has no field.
        format!("The deployments \"small\" is invalid: : {DENIED}")
    );

    // Without the binding the policy does nothing.
    c.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "max-replicas-binding",
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !c.kubectl(&big).status.success() {
        assert!(
            Instant::now() < deadline,
            "the deleted binding is still enforced"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn admission_policy_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn admission_policy_distributed() {
    scenario(Mode::Distributed);
}
