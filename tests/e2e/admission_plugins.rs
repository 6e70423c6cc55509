//! kube-apiserver's default admission plugins through kubectl, in both
//! modes: a pod created right after its namespace gets the `default`
//! ServiceAccount, its `kube-api-access-*` token volume and mount, the
//! default tolerations and priority; an unknown `priorityClassName` is
//! refused; LimitRange defaults appear and a too-large container is
//! refused; `--dry-run=server` shows the same and stores nothing; the
//! plugin flags disable a plugin, and an unknown one stops the start with
//! kube's error.

mod support;

use serde_json::Value;
use support::{Cluster, Mode};

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn pod_yaml(name: &str, extra_spec: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n{extra_spec}  containers:\n  - name: c\n    image: nginx\n"
    )
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);

    // A namespace and at once a pod in it: the `default` account comes
    // from a controller, which admission waits for briefly.
    c.ok(&["create", "namespace", "p1"]);
    c.ok(&["run", "web", "--image=nginx", "-n", "p1"]);
    let pod = json(&c.ok(&["get", "pod", "web", "-n", "p1", "-o", "json"]));
    let spec = &pod["spec"];
    assert_eq!(spec["serviceAccountName"], "default", "{mode:?}");
    assert_eq!(spec["serviceAccount"], "default");
    let volume = &spec["volumes"][0];
    let name = volume["name"].as_str().unwrap();
    assert!(
        name.starts_with("kube-api-access-") && name.len() == 21,
        "{name}"
    );
    let sources = &volume["projected"]["sources"];
    assert_eq!(sources[0]["serviceAccountToken"]["expirationSeconds"], 3607);
    assert_eq!(sources[1]["configMap"]["name"], "kube-root-ca.crt");
    assert_eq!(volume["projected"]["defaultMode"], 420);
    let mount = &spec["containers"][0]["volumeMounts"][0];
    assert_eq!(
        (&mount["name"], &mount["mountPath"], &mount["readOnly"]),
        (
            &volume["name"],
            &Value::from("/var/run/secrets/kubernetes.io/serviceaccount"),
            &Value::from(true)
        )
    );
    assert_eq!(spec["priority"], 0);
    assert_eq!(spec["preemptionPolicy"], "PreemptLowerPriority");
    let tolerations: Vec<&str> = spec["tolerations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        tolerations,
        [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable"
        ]
    );
    assert_eq!(spec["tolerations"][0]["tolerationSeconds"], 300);

    // kube-apiserver's system classes exist, and resolve.
    let pc = json(&c.ok(&["get", "priorityclass", "system-node-critical", "-o", "json"]));
    assert_eq!(pc["value"], 2_000_001_000);
    assert!(pc["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| !u.is_empty()));
    c.ok_stdin(
        &["apply", "-n", "p1", "-f", "-"],
        &pod_yaml("critical", "  priorityClassName: system-cluster-critical\n"),
    );
    let critical = json(&c.ok(&["get", "pod", "critical", "-n", "p1", "-o", "json"]));
    assert_eq!(critical["spec"]["priority"], 2_000_000_000);

    // Priority: an unknown class.
    let err = c.fails(
        &["apply", "-n", "p1", "-f", "-"],
        Some(&pod_yaml("bad", "  priorityClassName: nope\n")),
    );
    assert!(
        err.contains(
            "Error from server (Forbidden): error when creating \"STDIN\": pods \"bad\" is forbidden: no PriorityClass with name nope was found"
        ),
        "{err}"
    );

    // A warning recorded before a refusal comes with it (kube's warning
    // recorder): the unknown field under `--validate=warn`, then the 403.
    let err = c.fails(
        &["create", "--validate=warn", "-n", "p1", "-f", "-"],
        Some(&pod_yaml(
            "warned",
            "  priorityClassName: nope\n  bogusField: 1\n",
        )),
    );
    assert!(
        err.contains("Warning: unknown field \"spec.bogusField\"")
            && err.contains(
                "pods \"warned\" is forbidden: no PriorityClass with name nope was found"
            ),
        "{mode:?}: {err}"
    );

    // LimitRanger: defaults, and a container over the maximum.
    c.ok_stdin(
        &["apply", "-n", "p1", "-f", "-"],
        "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: lr\nspec:\n  limits:\n  - type: Container\n    default:\n      cpu: 500m\n    defaultRequest:\n      cpu: 250m\n    max:\n      cpu: \"1\"\n",
    );
    c.ok_stdin(&["apply", "-n", "p1", "-f", "-"], &pod_yaml("small", ""));
    let small = json(&c.ok(&["get", "pod", "small", "-n", "p1", "-o", "json"]));
    let resources = &small["spec"]["containers"][0]["resources"];
    assert_eq!(resources["limits"]["cpu"], "500m");
    assert_eq!(resources["requests"]["cpu"], "250m");
    assert_eq!(
        small["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container c; cpu limit for container c"
    );
    let err = c.fails(
        &["run", "big", "--image=nginx", "-n", "p1", "--overrides",
          r#"{"spec":{"containers":[{"name":"big","image":"nginx","resources":{"limits":{"cpu":"2"}}}]}}"#],
        None,
    );
    assert!(
        err.contains(
            "Error from server (Forbidden): pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
        ),
        "{err}"
    );

    // Dry run: the same object, nothing stored.
    let dry = json(&c.ok_stdin(
        &[
            "create",
            "-n",
            "p1",
            "--dry-run=server",
            "-o",
            "json",
            "-f",
            "-",
        ],
        &pod_yaml("dry", ""),
    ));
    assert_eq!(dry["spec"]["serviceAccountName"], "default");
    assert!(dry["spec"]["volumes"][0]["name"]
        .as_str()
        .unwrap()
        .starts_with("kube-api-access-"));
    let out = c.kubectl(&["get", "pod", "dry", "-n", "p1"]);
    assert!(!out.status.success());
}

#[test]
fn admission_plugins_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn admission_plugins_distributed() {
    scenario(Mode::Distributed);
}

/// `--disable-admission-plugins` (as `KEELSON_DISABLE_ADMISSION_PLUGINS`,
/// which every process of the fleet reads) turns plugins off.
fn disabled(mode: Mode) {
    let c = Cluster::start_with_env(
        mode,
        &[(
            "KEELSON_DISABLE_ADMISSION_PLUGINS",
            "ServiceAccount,DefaultTolerationSeconds",
        )],
    );
    c.ok_stdin(
        &["apply", "-f", "-"],
        &pod_yaml("plain", "  serviceAccountName: nobody\n"),
    );
    let pod = json(&c.ok(&["get", "pod", "plain", "-o", "json"]));
    assert!(pod["spec"].get("volumes").is_none(), "{mode:?}: {pod}");
    assert!(pod["spec"].get("tolerations").is_none(), "{pod}");
    assert_eq!(pod["spec"]["serviceAccountName"], "nobody");
    // Priority still runs.
    assert_eq!(pod["spec"]["priority"], 0);
}

#[test]
fn disabled_plugins_embedded() {
    disabled(Mode::Embedded);
}

#[test]
fn disabled_plugins_distributed() {
    disabled(Mode::Distributed);
}

/// kube-apiserver's start errors for plugin names it does not know.
#[test]
fn unknown_plugins_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let cert_dir = dir.path().display().to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_keelson"))
        .args([
            "kube-apiserver",
            "--cert-dir",
            &cert_dir,
            "--secure-port=0",
            "--enable-admission-plugins=Nope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error: enable-admission-plugins plugin \"Nope\" is unknown"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_keelson-admission"))
        .args(["--listen", "127.0.0.1:0", "--disable-admission-plugins=Bad"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("disable-admission-plugins plugin \\\"Bad\\\" is unknown")
            || err.contains("disable-admission-plugins plugin \"Bad\" is unknown"),
        "{err}"
    );
}
