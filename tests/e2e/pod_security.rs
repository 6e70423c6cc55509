//! PodSecurity admission through kubectl, in both modes: `kubectl label
//! ns` with the `pod-security.kubernetes.io/*` labels, then `kubectl run`
//! refused with kube's message under `enforce`, warned under `warn` (pods
//! and Deployments), existing pods reported when the enforce level is
//! raised, label values that do not parse refused, unlabeled namespaces
//! untouched.

mod support;

use support::{Cluster, Mode};

const RESTRICTED_PLAIN: &str = concat!(
    r#"allowPrivilegeEscalation != false (container "p" must set securityContext.allowPrivilegeEscalation=false), "#,
    r#"unrestricted capabilities (container "p" must set securityContext.capabilities.drop=["ALL"]), "#,
    r#"runAsNonRoot != true (pod or container "p" must set securityContext.runAsNonRoot=true), "#,
    r#"seccompProfile (pod or container "p" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#
);

/// kubectl's stdout and stderr.
fn run(c: &Cluster, args: &[&str]) -> (bool, String, String) {
    let out = c.kubectl(args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);

    // Unlabeled: everything goes, no warning.
    c.ok(&["create", "namespace", "open"]);
    let (ok, _, err) = run(&c, &["run", "p", "--image=nginx", "-n", "open"]);
    assert!(ok && err.is_empty(), "{mode:?}: {err}");

    // Raising the enforce level reports the pods already there.
    let (ok, out, err) = run(
        &c,
        &[
            "label",
            "ns",
            "open",
            "pod-security.kubernetes.io/enforce=restricted",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "namespace/open labeled");
    assert_eq!(
        err,
        concat!(
            "Warning: existing pods in namespace \"open\" violate the new PodSecurity enforce level \"restricted:latest\"\n",
            "Warning: p: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile\n"
        ),
        "{mode:?}"
    );

    // Enforce: refused, with kube's words as kubectl prints them.
    let err = c.fails(&["run", "p2", "--image=nginx", "-n", "open"], None);
    assert_eq!(
        err.trim(),
        format!(
            r#"Error from server (Forbidden): pods "p2" is forbidden: violates PodSecurity "restricted:latest": {}"#,
            RESTRICTED_PLAIN.replace("\"p\"", "\"p2\"")
        ),
        "{mode:?}"
    );
    assert!(c
        .fails(&["get", "pod", "p2", "-n", "open"], None)
        .contains("NotFound"));

    // Warn: admitted with kube's warning, for pods and workloads.
    c.ok(&["create", "namespace", "warned"]);
    c.ok(&[
        "label",
        "ns",
        "warned",
        "pod-security.kubernetes.io/warn=restricted",
    ]);
    let (ok, out, err) = run(&c, &["run", "p", "--image=nginx", "-n", "warned"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "pod/p created");
    assert_eq!(
        err.trim(),
        format!(r#"Warning: would violate PodSecurity "restricted:latest": {RESTRICTED_PLAIN}"#),
        "{mode:?}"
    );
    let (ok, out, err) = run(
        &c,
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx",
            "-n",
            "warned",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "deployment.apps/web created");
    assert_eq!(
        err.trim(),
        format!(
            r#"Warning: would violate PodSecurity "restricted:latest": {}"#,
            RESTRICTED_PLAIN.replace("\"p\"", "\"nginx\"")
        ),
        "{mode:?}"
    );

    // Baseline pinned to a version: a privileged pod is refused, named
    // with the pinned version.
    c.ok(&["create", "namespace", "base"]);
    c.ok(&[
        "label",
        "ns",
        "base",
        "pod-security.kubernetes.io/enforce=baseline",
        "pod-security.kubernetes.io/enforce-version=v1.30",
    ]);
    let err = c.fails(
        &[
            "run",
            "priv",
            "--image=nginx",
            "-n",
            "base",
            "--overrides",
            r#"{"spec":{"containers":[{"name":"priv","image":"nginx","securityContext":{"privileged":true}}]}}"#,
        ],
        None,
    );
    assert_eq!(
        err.trim(),
        r#"Error from server (Forbidden): pods "priv" is forbidden: violates PodSecurity "baseline:v1.30": privileged (container "priv" must not set securityContext.privileged=true)"#,
        "{mode:?}"
    );

    // A label value that does not parse.
    let err = c.fails(
        &[
            "label",
            "ns",
            "base",
            "pod-security.kubernetes.io/warn=strict",
        ],
        None,
    );
    assert_eq!(
        err.trim(),
        r#"The Namespace "base" is invalid: metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "strict": must be one of privileged, baseline, restricted"#,
        "{mode:?}"
    );
}

#[test]
fn pod_security_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn pod_security_distributed() {
    scenario(Mode::Distributed);
}
