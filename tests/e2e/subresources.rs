//! The pod subresources clients call, against real kubectl, raw HTTPS and
//! kube-rs: eviction with PodDisruptionBudgets (kept by the disruption
//! controller) through `kubectl drain`, binding, ephemeral containers
//! (`kubectl debug`), resize, `componentstatuses`, and kube-apiserver's
//! answers for the kubelet family when there is no kubelet.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, EvictParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

const NS: &str = "sub";

fn pod(name: &str, node: Option<&str>, app: &str) -> String {
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    });
    if let Some(n) = node {
        p["spec"]["nodeName"] = json!(n);
    }
    p.to_string()
}

fn node(name: &str) -> String {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}).to_string()
}

fn pdb(name: &str, app: &str, min_available: i64) -> String {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": app}}},
    })
    .to_string()
}

/// Mark a pod Running and Ready, as a kubelet would.
fn make_ready(c: &Cluster, name: &str) {
    let status = json!({"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True"}]}});
    c.ok(&[
        "patch",
        "pod",
        name,
        "-n",
        NS,
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
}

/// Wait (20 s at most) until `f` holds for the PDB's status.
fn wait_pdb(c: &Cluster, name: &str, f: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = c.ok(&["get", "pdb", name, "-n", NS, "-o", "json"]);
        let v: Value = serde_json::from_str(&out).expect("pdb json");
        if f(&v["status"]) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "pdb {name} status never matched: {}",
            v["status"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

async fn post(c: &Cluster, path: &str, body: Value) -> (u16, Value) {
    let r = c
        .client()
        .post(format!("{}{}", c.url, path))
        .json(&body)
        .send()
        .await
        .expect("post");
    let code = r.status().as_u16();
    (code, r.json().await.expect("json body"))
}

async fn send(
    c: &Cluster,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value, String) {
    let mut req = c.client().request(method, format!("{}{}", c.url, path));
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/strategic-merge-patch+json")
            .body(b.to_string());
    }
    let r = req.send().await.expect("request");
    let code = r.status().as_u16();
    let text = r.text().await.expect("body");
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    )
}

fn eviction(name: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name, "namespace": NS}})
}

fn evict_path(name: &str) -> String {
    format!("/api/v1/namespaces/{NS}/pods/{name}/eviction")
}

/// `kubectl drain` blocks on an exhausted budget (printing kube's
/// message and retrying), and finishes once more pods are Ready.
fn drain_with_budget(c: &Cluster) {
    c.ok_stdin(&["apply", "-f", "-"], &node("n1"));
    c.ok_stdin(&["apply", "-f", "-"], &node("n2"));
    for p in ["web-0", "web-1"] {
        c.ok_stdin(&["apply", "-f", "-"], &pod(p, Some("n1"), "web"));
        make_ready(c, p);
    }
    c.ok_stdin(&["apply", "-f", "-"], &pdb("web", "web", 2));
    let status = wait_pdb(c, "web", |s| {
        s["currentHealthy"] == 2 && s["expectedPods"] == 2
    });
    let s = &status["status"];
    assert_eq!(s["desiredHealthy"], 2);
    assert_eq!(s["disruptionsAllowed"], 0);
    assert_eq!(s["observedGeneration"], 1);
    assert_eq!(s["conditions"][0]["type"], "DisruptionAllowed");
    assert_eq!(s["conditions"][0]["status"], "False");
    assert_eq!(s["conditions"][0]["reason"], "InsufficientPods");

    // The exact 429 a client sees.
    let (code, body) = block_on(post(c, &evict_path("web-0"), eviction("web-0")));
    assert_eq!(code, 429, "{body}");
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(
        body["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "DisruptionBudget",
            "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}])
    );

    let mut drain = Command::new("kubectl")
        .args([
            "drain",
            "n1",
            "--ignore-daemonsets",
            "--force",
            "--grace-period=0",
            "--pod-selector=app=web",
            "--timeout=120s",
        ])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kubectl drain");
    let stderr = drain.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let blocked = loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                let hit = line
                    .contains("Cannot evict pod as it would violate the pod's disruption budget.")
                    && line.contains("will retry after 5s");
                seen.push(line);
                if hit {
                    break true;
                }
            }
            Err(_) => break false,
        }
    };
    assert!(blocked, "drain never reported the budget: {seen:?}");
    // Two more Ready pods elsewhere: the budget allows two disruptions.
    for p in ["web-2", "web-3"] {
        c.ok_stdin(&["apply", "-f", "-"], &pod(p, Some("n2"), "web"));
        make_ready(c, p);
    }
    let out = drain.wait_with_output().expect("drain output");
    seen.extend(rx.try_iter());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "drain failed: {stdout}\n{seen:?}");
    assert!(stdout.contains("pod/web-0 evicted"), "{stdout}");
    assert!(stdout.contains("pod/web-1 evicted"), "{stdout}");
    assert!(stdout.contains("node/n1 drained"), "{stdout}");
    let left = c.ok(&["get", "pods", "-n", NS, "-l", "app=web", "-o", "name"]);
    assert_eq!(left.trim(), "pod/web-2\npod/web-3");
    let node = c.ok(&["get", "node", "n1", "-o", "jsonpath={.spec.unschedulable}"]);
    assert_eq!(node, "true");
    // Both evictions spent the budget; the controller recomputes it.
    wait_pdb(c, "web", |s| {
        s["currentHealthy"] == 2 && s["disruptionsAllowed"] == 0
    });
}

fn raw_answers(c: &Cluster) {
    block_on(async {
        // Missing pod, mismatched name.
        let (code, body) = post(c, &evict_path("nope"), eviction("nope")).await;
        assert_eq!(
            (code, body["message"].as_str()),
            (404, Some("pods \"nope\" not found"))
        );
        let (code, body) = post(c, &evict_path("web-2"), eviction("other")).await;
        assert_eq!(code, 400);
        assert_eq!(
            body["message"],
            "name in URL does not match name in Eviction object"
        );

        // An unready running pod goes without spending a healthy budget
        // (IfHealthyBudget), while a ready one is refused.
        c.ok_stdin(&["apply", "-f", "-"], &pod("web-4", Some("n2"), "web"));
        let unready = json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "False"}]}});
        c.ok(&[
            "patch",
            "pod",
            "web-4",
            "-n",
            NS,
            "--subresource=status",
            "--type=merge",
            "-p",
            &unready.to_string(),
        ]);
        wait_pdb(c, "web", |s| s["expectedPods"] == 3);
        let (code, body) = post(c, &evict_path("web-2"), eviction("web-2")).await;
        assert_eq!(code, 429, "{body}");
        let (code, body) = post(c, &evict_path("web-4"), eviction("web-4")).await;
        assert_eq!(code, 201, "{body}");

        // Two budgets over one pod: kube's 500 Status.
        c.ok_stdin(&["apply", "-f", "-"], &pdb("web-too", "web", 1));
        let (code, body) = post(c, &evict_path("web-2"), eviction("web-2")).await;
        assert_eq!(code, 500, "{body}");
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                "code": 500})
        );
        c.ok(&["delete", "pdb", "web-too", "-n", NS]);

        // A pending pod disrupts nothing: evicted whatever the budget says.
        c.ok_stdin(&["apply", "-f", "-"], &pod("pending", None, "web"));
        let (code, body) = post(c, &evict_path("pending"), eviction("pending")).await;
        assert_eq!(code, 201, "{body}");
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
        );
        let gone = c.kubectl(&["get", "pod", "pending", "-n", NS]);
        assert!(!gone.status.success());

        // Binding: sets the node once; a second binding is kube's 409.
        c.ok_stdin(&["apply", "-f", "-"], &pod("unbound", None, "solo"));
        let binding = json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "unbound", "annotations": {"scheduled-by": "test"}},
            "target": {"kind": "Node", "name": "n2"}});
        let path = format!("/api/v1/namespaces/{NS}/pods/unbound/binding");
        let (code, body) = post(c, &path, binding.clone()).await;
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["status"], "Success");
        let p: Value =
            serde_json::from_str(&c.ok(&["get", "pod", "unbound", "-n", NS, "-o", "json"]))
                .expect("pod");
        assert_eq!(p["spec"]["nodeName"], "n2");
        assert_eq!(p["metadata"]["annotations"]["scheduled-by"], "test");
        let scheduled = p["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .any(|c| c["type"] == "PodScheduled" && c["status"] == "True");
        assert!(scheduled, "{}", p["status"]);
        let (code, body) = post(c, &path, binding).await;
        assert_eq!(code, 409);
        assert_eq!(
            body["message"],
            "Operation cannot be fulfilled on pods/binding \"unbound\": pod unbound is already assigned to node \"n2\""
        );
        let (code, body) = post(
            c,
            &format!("/api/v1/namespaces/{NS}/bindings"),
            json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "ghost"},
                "target": {"name": "n2"}}),
        )
        .await;
        assert_eq!(
            (code, body["message"].as_str()),
            (404, Some("pods \"ghost\" not found"))
        );

        // Logs of a pod bound to a node without an address.
        let (code, body, _) = send(
            c,
            reqwest::Method::GET,
            &format!("/api/v1/namespaces/{NS}/pods/unbound/log"),
            None,
        )
        .await;
        assert_eq!(code, 500);
        assert_eq!(
            body["message"],
            "no preferred addresses found; known addresses: []"
        );
        assert_eq!(body.get("reason"), None);
        // Logs of a pod not yet scheduled: no content (kube's 204).
        c.ok_stdin(&["apply", "-f", "-"], &pod("waiting", None, "solo"));
        let (code, _, text) = send(
            c,
            reqwest::Method::GET,
            &format!("/api/v1/namespaces/{NS}/pods/waiting/log"),
            None,
        )
        .await;
        assert_eq!((code, text.as_str()), (204, ""));
        let (code, body, _) = send(
            c,
            reqwest::Method::GET,
            &format!("/api/v1/namespaces/{NS}/pods/waiting/log?container=nope"),
            None,
        )
        .await;
        assert_eq!(code, 400);
        assert_eq!(
            body["message"],
            "container nope is not valid for pod waiting"
        );
        let (code, body, _) = send(
            c,
            reqwest::Method::POST,
            &format!("/api/v1/namespaces/{NS}/pods/waiting/portforward"),
            None,
        )
        .await;
        assert_eq!(code, 400);
        assert_eq!(body["message"], "pod waiting does not have a host assigned");
        let (code, body, _) = send(
            c,
            reqwest::Method::GET,
            &format!("/api/v1/namespaces/{NS}/services/nosvc/proxy"),
            None,
        )
        .await;
        assert_eq!(
            (code, body["message"].as_str()),
            (404, Some("services \"nosvc\" not found"))
        );
        let (code, body, _) = send(
            c,
            reqwest::Method::GET,
            "/api/v1/nodes/gone/proxy/metrics",
            None,
        )
        .await;
        assert_eq!(
            (code, body["message"].as_str()),
            (404, Some("nodes \"gone\" not found"))
        );
    });

    // One deprecation warning, one item.
    block_on(async {
        let r = c
            .client()
            .get(format!("{}/api/v1/componentstatuses", c.url))
            .send()
            .await
            .expect("componentstatuses");
        let warnings: Vec<_> = r.headers().get_all("warning").iter().collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let list: Value = r.json().await.expect("list");
        assert_eq!(list["kind"], "ComponentStatusList");
        let names: Vec<&str> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|i| i["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["scheduler", "controller-manager", "etcd-0"]);
        assert_eq!(
            list["items"][2]["conditions"],
            json!([{"type": "Healthy", "status": "True", "message": "ok"}])
        );
        // Nothing listens on the scheduler's and controller manager's
        // ports: kube-apiserver's prober reports the refused dial.
        assert_eq!(
            list["items"][1]["conditions"],
            json!([{"type": "Healthy", "status": "False",
                "message": "Get \"https://127.0.0.1:10257/healthz\": dial tcp 127.0.0.1:10257: connect: connection refused"}])
        );
    });
    // kubectl's view of the same answers.
    let err = c.fails(&["exec", "waiting", "-n", NS, "--", "ls"], None);
    assert!(
        err.contains("pod waiting does not have a host assigned"),
        "{err}"
    );
    let logs = c.ok(&["logs", "waiting", "-n", NS]);
    assert_eq!(logs, "");
    let out = c.kubectl(&["get", "componentstatuses"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("etcd-0"), "{stdout}");
    assert!(stdout.contains("scheduler "), "{stdout}");
    let one = c.ok(&["get", "componentstatus", "scheduler", "-o", "json"]);
    let one: Value = serde_json::from_str(&one).expect("json");
    assert_eq!(one["kind"], "ComponentStatus");
    assert_eq!(one["conditions"][0]["status"], "False");
    let err = c.fails(&["get", "componentstatus", "nope"], None);
    assert!(
        err.contains("Error from server (NotFound): componentstatus \"nope\" not found"),
        "{err}"
    );
    assert!(
        stderr.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"),
        "{stderr}"
    );
}

/// `kubectl debug` adds an ephemeral container through the subresource;
/// removing it is kube's 422.
fn ephemeral_containers(c: &Cluster) {
    c.ok_stdin(&["apply", "-f", "-"], &pod("dbg", Some("n2"), "dbg"));
    c.ok(&[
        "debug",
        "pod/dbg",
        "-n",
        NS,
        "--image=busybox",
        "--attach=false",
        "-c",
        "debugger",
    ]);
    let names = c.ok(&[
        "get",
        "pod",
        "dbg",
        "-n",
        NS,
        "-o",
        "jsonpath={.spec.ephemeralContainers[*].name}",
    ]);
    assert_eq!(names, "debugger");
    block_on(async {
        let path = format!("/api/v1/namespaces/{NS}/pods/dbg/ephemeralcontainers");
        let (code, body, _) = send(c, reqwest::Method::GET, &path, None).await;
        assert_eq!((code, body["kind"].as_str()), (200, Some("Pod")));
        let remove =
            json!({"spec": {"ephemeralContainers": [{"$patch": "delete", "name": "debugger"}]}});
        let (code, body, _) = send(c, reqwest::Method::PATCH, &path, Some(remove)).await;
        assert_eq!(code, 422, "{body}");
        assert_eq!(
            body["message"],
            "Pod \"dbg\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be removed\n"
        );
        // A clash with the pod's own container, and other fields dropped.
        let clash = json!({"metadata": {"labels": {"x": "y"}},
            "spec": {"ephemeralContainers": [{"name": "main", "image": "busybox"}]}});
        let (code, body, _) = send(c, reqwest::Method::PATCH, &path, Some(clash)).await;
        assert_eq!(code, 422, "{body}");
        assert_eq!(
            body["message"],
            "Pod \"dbg\" is invalid: spec.ephemeralContainers[0].name: Duplicate value: \"main\""
        );
    });
}

async fn kube_rs(c: &Cluster) {
    let kc = Kubeconfig::read_from(&c.kubeconfig).expect("kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    let client = kube::Client::try_from(cfg).expect("client");
    let pods: Api<Pod> = Api::namespaced(client, NS);
    // Ephemeral containers.
    let patch = json!({"spec": {"ephemeralContainers": [
        {"name": "rs-debug", "image": "busybox", "targetContainerName": "main"}]}});
    let p = pods
        .patch_ephemeral_containers("dbg", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .expect("patch_ephemeral_containers");
    let mut names: Vec<String> = p
        .spec
        .and_then(|s| s.ephemeral_containers)
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.name)
        .collect();
    names.sort();
    assert_eq!(names, ["debugger", "rs-debug"]);
    let p = pods.get_ephemeral_containers("dbg").await.expect("get");
    assert_eq!(p.metadata.name.as_deref(), Some("dbg"));
    // Resize: only cpu and memory change.
    let resize = json!({"spec": {"containers": [{"name": "main",
        "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}]}});
    let p = pods
        .patch_resize("dbg", &PatchParams::default(), &Patch::Strategic(resize))
        .await
        .expect("patch_resize");
    let res = p.spec.expect("spec").containers[0]
        .resources
        .clone()
        .expect("resources");
    assert_eq!(res.requests.expect("requests")["cpu"].0, "100m");
    let bad = json!({"spec": {"containers": [{"name": "main",
        "resources": {"requests": {"cpu": "100m", "ephemeral-storage": "1Gi"}, "limits": {"cpu": "200m"}}}]}});
    let err = pods
        .patch_resize("dbg", &PatchParams::default(), &Patch::Strategic(bad))
        .await
        .expect_err("resize of storage");
    assert!(
        err.to_string()
            .contains("only cpu and memory resources are mutable"),
        "{err}"
    );
    // Eviction of a Ready pod with no budget.
    let status = pods
        .evict("dbg", &EvictParams::default())
        .await
        .expect("evict");
    assert_eq!(
        status.status,
        Some(kube::core::response::StatusSummary::Success)
    );
    // Bound pods are deleted gracefully: gone, or marked.
    let left = pods.get_opt("dbg").await.expect("get after eviction");
    assert!(left.is_none_or(|p| p.metadata.deletion_timestamp.is_some()));

    csr_approval(pods.into_client()).await;
}

/// kube-rs's CertificateSigningRequest approval (`patch_approval` on the
/// `approval` subresource): the request is approved and the
/// kube-apiserver-client signer issues its certificate.
async fn csr_approval(client: kube::Client) {
    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    let dir = tempfile::tempdir().expect("tempdir");
    let (key, csr) = (dir.path().join("k.key"), dir.path().join("k.csr"));
    let out = std::process::Command::new("openssl")
        .args(["req", "-new", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&csr)
        .args(["-subj", "/CN=rs-user/O=rs"])
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    use base64::Engine as _;
    let request =
        base64::engine::general_purpose::STANDARD.encode(std::fs::read(&csr).expect("csr"));
    let csrs: Api<CertificateSigningRequest> = Api::all(client);
    let obj: CertificateSigningRequest = serde_json::from_value(json!({
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "rs-user"},
        "spec": {"request": request, "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"]}}))
    .expect("csr object");
    csrs.create(&Default::default(), &obj)
        .await
        .expect("create csr");
    let approval = json!({"status": {"conditions": [{"type": "Approved", "status": "True",
        "reason": "KubeRs", "message": "approved by the kube-rs test"}]}});
    let approved = csrs
        .patch_approval("rs-user", &PatchParams::default(), &Patch::Merge(approval))
        .await
        .expect("patch_approval");
    let conditions = approved
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert!(
        conditions
            .iter()
            .any(|c| c.type_ == "Approved" && c.status == "True"),
        "{conditions:?}"
    );
    let got = csrs.get_approval("rs-user").await.expect("get_approval");
    assert_eq!(got.metadata.name.as_deref(), Some("rs-user"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let c = csrs.get("rs-user").await.expect("get csr");
        if c.status
            .and_then(|s| s.certificate)
            .is_some_and(|b| !b.0.is_empty())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no certificate issued"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    c.ok(&["create", "namespace", NS]);
    drain_with_budget(&c);
    raw_answers(&c);
    ephemeral_containers(&c);
    block_on(kube_rs(&c));
}

#[test]
fn subresources_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn subresources_distributed() {
    scenario(Mode::Distributed);
}
