//! ResourceQuota through kubectl, in both modes: the quota controller
//! fills `status.used` (and `status.hard`); admission charges each create
//! at once and refuses one over the quota with kube's message as kubectl
//! prints it; a dry run is checked but not charged; deletes give usage
//! back; `kubectl get` and `kubectl describe` show the usage.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{Cluster, Mode};

fn used(c: &Cluster) -> Value {
    let q: Value =
        serde_json::from_str(&c.ok(&["get", "quota", "compute", "-n", "q", "-o", "json"]))
            .expect("quota JSON");
    q["status"]["used"].clone()
}

/// Wait (for the controller) until `status.used` is `want`.
fn used_becomes(c: &Cluster, want: Value) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got = used(c);
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "status.used {got} != {want}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn pod(name: &str, cpu: Option<&str>) -> String {
    let resources = cpu.map_or(String::new(), |cpu| {
        format!("    resources:\n      requests:\n        cpu: {cpu}\n")
    });
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: c\n    image: nginx\n{resources}"
    )
}

/// kubectl's table and describe rows, whitespace collapsed.
fn rows(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    c.ok(&["create", "namespace", "q"]);
    // The namespace's kube-root-ca.crt (a controller's) counts as one
    // ConfigMap; wait for it so the first measure sees it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !c
        .kubectl(&["get", "configmap", "kube-root-ca.crt", "-n", "q"])
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "no kube-root-ca.crt");
        std::thread::sleep(Duration::from_millis(100));
    }
    c.ok(&[
        "create",
        "quota",
        "compute",
        "-n",
        "q",
        "--hard=pods=2,configmaps=3,requests.cpu=1",
    ]);
    used_becomes(
        &c,
        json!({"configmaps": "1", "pods": "0", "requests.cpu": "0"}),
    );
    let q: Value =
        serde_json::from_str(&c.ok(&["get", "quota", "compute", "-n", "q", "-o", "json"])).unwrap();
    assert_eq!(
        q["status"]["hard"],
        json!({"configmaps": "3", "pods": "2", "requests.cpu": "1"}),
        "{mode:?}"
    );

    // Creates are charged by admission, before the controller looks.
    c.ok_stdin(&["create", "-n", "q", "-f", "-"], &pod("p1", Some("500m")));
    c.ok_stdin(&["create", "-n", "q", "-f", "-"], &pod("p2", Some("500m")));
    assert_eq!(
        used(&c),
        json!({"configmaps": "1", "pods": "2", "requests.cpu": "1"})
    );
    let err = c.fails(
        &["create", "-n", "q", "-f", "-"],
        Some(&pod("p3", Some("100m"))),
    );
    assert!(
        err.contains(
            "Error from server (Forbidden): error when creating \"STDIN\": pods \"p3\" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=100m, used: pods=2,requests.cpu=1, limited: pods=2,requests.cpu=1"
        ),
        "{mode:?}: {err}"
    );
    // A quota on requests.cpu wants every container to ask for cpu.
    let err = c.fails(&["create", "-n", "q", "-f", "-"], Some(&pod("bare", None)));
    assert!(
        err.contains(
            "Error from server (Forbidden): error when creating \"STDIN\": pods \"bare\" is forbidden: failed quota: compute: must specify requests.cpu for: c"
        ),
        "{mode:?}: {err}"
    );

    c.ok(&["create", "configmap", "c1", "-n", "q"]);
    c.ok(&["create", "configmap", "c2", "-n", "q"]);
    let err = c.fails(&["create", "configmap", "c3", "-n", "q"], None);
    assert!(
        err.contains(
            "configmaps \"c3\" is forbidden: exceeded quota: compute, requested: configmaps=1, used: configmaps=3, limited: configmaps=3"
        ),
        "{mode:?}: {err}"
    );
    // A dry run is checked too.
    let err = c.fails(
        &["create", "configmap", "c3", "-n", "q", "--dry-run=server"],
        None,
    );
    assert!(err.contains("exceeded quota: compute"), "{err}");

    // Deletes give usage back (the controller measures again).
    c.ok(&["delete", "pod", "p1", "-n", "q", "--wait=false"]);
    c.ok(&["delete", "configmap", "c1", "-n", "q"]);
    used_becomes(
        &c,
        json!({"configmaps": "2", "pods": "1", "requests.cpu": "500m"}),
    );
    // A dry run that fits is admitted and charges nothing.
    c.ok(&["create", "configmap", "c3", "-n", "q", "--dry-run=server"]);
    assert!(!c
        .kubectl(&["get", "configmap", "c3", "-n", "q"])
        .status
        .success());
    assert_eq!(
        used(&c),
        json!({"configmaps": "2", "pods": "1", "requests.cpu": "500m"})
    );

    let table = rows(&c.ok(&["get", "quota", "-n", "q"]));
    assert_eq!(table[0], "NAME REQUEST LIMIT AGE", "{table:?}");
    assert!(
        table[1].starts_with("compute configmaps: 2/3, pods: 1/2, requests.cpu: 500m/1 "),
        "{table:?}"
    );
    let describe = rows(&c.ok(&["describe", "quota", "compute", "-n", "q"]));
    for want in [
        "Resource Used Hard",
        "configmaps 2 3",
        "pods 1 2",
        "requests.cpu 500m 1",
    ] {
        assert!(describe.iter().any(|r| r == want), "{want}: {describe:?}");
    }
}

#[test]
fn resource_quota_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn resource_quota_distributed() {
    scenario(Mode::Distributed);
}
