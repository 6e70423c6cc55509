//! Audit logging (`--audit-policy-file`, `--audit-log-path`) with the
//! installed kubectl: a policy giving different levels to different
//! requests, then the exact events each request wrote — levels, stages,
//! users (impersonation included), object references, statuses, bodies,
//! authorization annotations, a watch's two stages, a failed
//! authentication and the `Audit-Id` header. Both modes. A bad policy
//! stops the server at start with kube's message.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

/// First match wins: configmap reads are not audited, configmap writes
/// are (with bodies, without the RequestReceived stage), secrets at
/// Metadata with every stage, alice's pods with request bodies, the
/// admin's pod lists at Metadata (whoever they impersonate), configmap
/// watches at Metadata, bob's requests at Metadata, `/version` at
/// Metadata, nothing else.
const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  verbs: [get, list]
  resources: [{group: "", resources: [configmaps]}]
- level: RequestResponse
  verbs: [create, update, patch, delete]
  resources: [{group: "", resources: [configmaps]}]
  omitStages: [RequestReceived]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: Request
  users: [alice]
  resources: [{group: "", resources: [pods]}]
  omitStages: [RequestReceived]
- level: Metadata
  users: [kubernetes-admin]
  verbs: [list]
  resources: [{group: "", resources: [pods]}]
  omitStages: [RequestReceived]
- level: Metadata
  verbs: [watch]
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
  users: [bob]
  omitStages: [RequestReceived]
- level: Metadata
  nonResourceURLs: [/version]
- level: None
"#;

/// Starting servers changes the process environment (the distributed
/// gateway reads its flags from it): one start at a time.
static START: Mutex<()> = Mutex::new(());

struct Audited {
    c: Cluster,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

fn start(mode: Mode) -> Audited {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).expect("policy");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "alice-token,alice,1001\nbob-token,bob,1002\n").expect("tokens");
    let log = dir.path().join("logs/audit.log");
    let _one = START.lock().unwrap_or_else(|e| e.into_inner());
    let c = match mode {
        Mode::Embedded => Cluster::start_with(
            mode,
            &[
                "--token-auth-file",
                tokens.to_str().expect("path"),
                "--audit-policy-file",
                policy.to_str().expect("path"),
                "--audit-log-path",
                log.to_str().expect("path"),
            ],
        ),
        Mode::Distributed => {
            std::env::set_var("KEELSON_TOKEN_AUTH_FILE", &tokens);
            std::env::set_var("KEELSON_AUDIT_POLICY_FILE", &policy);
            std::env::set_var("KEELSON_AUDIT_LOG_PATH", &log);
            let c = Cluster::start(mode);
            for v in [
                "KEELSON_TOKEN_AUTH_FILE",
                "KEELSON_AUDIT_POLICY_FILE",
                "KEELSON_AUDIT_LOG_PATH",
            ] {
                std::env::remove_var(v);
            }
            c
        }
    };
    Audited { c, log, _dir: dir }
}

/// A kubeconfig for `token` against `c`.
fn kubeconfig_for(c: &Cluster, user: &str, token: &str) -> PathBuf {
    let path = c.home.path().join(format!("{user}.kubeconfig"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: k\n  context: {{cluster: k, user: u, namespace: default}}\ncurrent-context: k\nusers:\n- name: u\n  user:\n    token: {token}\n",
            c.url,
            c.data_dir.join("pki/ca.crt").display()
        ),
    )
    .expect("kubeconfig");
    path
}

fn as_user(c: &Cluster, kubeconfig: &Path, args: &[&str]) -> Output {
    let cfg = format!("--kubeconfig={}", kubeconfig.display());
    let mut all = vec![cfg.as_str()];
    all.extend_from_slice(args);
    c.kubectl(&all)
}

/// Every event written so far.
fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The events `pick` selects, once there are `n` of them (and no more).
fn wait_for(log: &Path, n: usize, what: &str, pick: impl Fn(&Value) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got: Vec<Value> = events(log).into_iter().filter(|e| pick(e)).collect();
        if got.len() >= n {
            // Nothing more is coming for these requests.
            std::thread::sleep(Duration::from_millis(200));
            let again: Vec<Value> = events(log).into_iter().filter(|e| pick(e)).collect();
            assert_eq!(again.len(), n, "{what}: {again:#?}");
            return again;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {} of {n} events: {got:#?}",
            got.len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn on(ev: &Value, resource: &str, name: &str) -> bool {
    ev["objectRef"]["resource"] == resource && ev["objectRef"]["name"] == name
}

/// `ev` without what differs run to run (ids, times, the client's
/// address and version), with the stable parts checked here.
fn stable(ev: &Value) -> Value {
    let mut ev = ev.clone();
    let m = ev.as_object_mut().expect("object");
    let id = m.remove("auditID").expect("auditID");
    assert_eq!(id.as_str().map(str::len), Some(36), "a UUID: {id}");
    for k in ["requestReceivedTimestamp", "stageTimestamp"] {
        let t = m.remove(k).expect(k);
        let t = t.as_str().expect("a time");
        // MicroTime: 2026-01-02T03:04:05.123456Z
        assert_eq!(t.len(), 27, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[19] == b'.', "{t}");
    }
    assert_eq!(m.remove("sourceIPs"), Some(json!(["127.0.0.1"])));
    let ua = m.remove("userAgent").expect("userAgent");
    assert!(
        ua.as_str().is_some_and(|u| u.starts_with("kubectl/")),
        "{ua}"
    );
    m.remove("requestObject");
    m.remove("responseObject");
    // A client certificate's fingerprint differs per run: its form is
    // checked here, the value by the auth suite.
    if let Some(id) = ev.pointer_mut("/user/extra/authentication.kubernetes.io~1credential-id/0") {
        let s = id.as_str().unwrap_or("");
        assert!(
            s.len() == 75
                && s.starts_with("X509SHA256=")
                && s[11..].bytes().all(|b| b.is_ascii_hexdigit()),
            "{s}"
        );
        *id = json!("X509SHA256=<fingerprint>");
    }
    ev
}

/// `annotations` with `more` added.
fn with(mut annotations: Value, more: &[(&str, &str)]) -> Value {
    for (k, v) in more {
        annotations[*k] = json!(v);
    }
    annotations
}

fn admin() -> Value {
    json!({"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": ["X509SHA256=<fingerprint>"]}})
}

fn allowed() -> Value {
    json!({"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""})
}

/// Alice's requests are allowed by RBAC, which names the binding (the
/// admin's by the `system:masters` group, which gives no reason).
fn allowed_alice() -> Value {
    json!({"authorization.k8s.io/decision": "allow",
        "authorization.k8s.io/reason": "RBAC: allowed by RoleBinding \"alice-edit/default\" of ClusterRole \"edit\" to User \"alice\""})
}

fn scenario(mode: Mode) {
    let Audited { c, log, _dir } = start(mode);
    let alice = kubeconfig_for(&c, "alice", "alice-token");
    let bob = kubeconfig_for(&c, "bob", "bob-token");
    c.ok(&[
        "create",
        "rolebinding",
        "alice-edit",
        "--clusterrole=edit",
        "--user=alice",
    ]);

    // A configmap write: RequestResponse, without RequestReceived.
    c.ok(&["create", "configmap", "audit-cm", "--from-literal=a=1"]);
    // Reads of configmaps: None.
    c.ok(&["get", "configmap", "audit-cm"]);
    c.ok(&["get", "configmaps"]);
    let cm = wait_for(&log, 1, "configmap create", |e| {
        on(e, "configmaps", "audit-cm")
    });
    let ev = &cm[0];
    assert_eq!(
        stable(ev),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "RequestResponse",
            "stage": "ResponseComplete",
            "requestURI": "/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create&fieldValidation=Strict",
            "verb": "create",
            "user": admin(),
            "objectRef": {"resource": "configmaps", "namespace": "default", "name": "audit-cm", "apiVersion": "v1"},
            "responseStatus": {"metadata": {}, "code": 201},
            "annotations": allowed(),
        })
    );
    let req = &ev["requestObject"];
    assert_eq!(
        (&req["kind"], &req["metadata"]["name"], &req["data"]),
        (&json!("ConfigMap"), &json!("audit-cm"), &json!({"a": "1"}))
    );
    let resp = &ev["responseObject"];
    assert_eq!(resp["data"], json!({"a": "1"}));
    assert!(resp["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| !u.is_empty()));
    assert!(resp["metadata"]["managedFields"].is_array(), "{resp}");

    // A secret: Metadata, both stages, no bodies; the name of a created
    // object comes from its body.
    c.ok(&[
        "create",
        "secret",
        "generic",
        "audit-s",
        "--from-literal=k=v",
    ]);
    c.ok(&["get", "secret", "audit-s"]);
    let s = wait_for(&log, 4, "secret", |e| {
        e["objectRef"]["resource"] == "secrets"
    });
    let stages: Vec<(&str, &str)> = s
        .iter()
        .map(|e| (e["verb"].as_str().unwrap(), e["stage"].as_str().unwrap()))
        .collect();
    assert_eq!(
        stages,
        [
            ("create", "RequestReceived"),
            ("create", "ResponseComplete"),
            ("get", "RequestReceived"),
            ("get", "ResponseComplete")
        ]
    );
    assert_eq!(s[0]["auditID"], s[1]["auditID"]);
    // Before the body is read, only the URL names the object.
    assert_eq!(
        s[0]["objectRef"],
        json!({"resource": "secrets", "namespace": "default", "apiVersion": "v1"})
    );
    assert_eq!(s[1]["objectRef"]["name"], "audit-s");
    assert_ne!(s[1]["auditID"], s[3]["auditID"]);
    // RequestReceived comes before authorization: no annotations, no
    // status yet.
    assert_eq!(
        stable(&s[2]),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "stage": "RequestReceived",
            "requestURI": "/api/v1/namespaces/default/secrets/audit-s",
            "verb": "get",
            "user": admin(),
            "objectRef": {"resource": "secrets", "namespace": "default", "name": "audit-s", "apiVersion": "v1"},
        })
    );
    assert_eq!(
        stable(&s[3]),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "stage": "ResponseComplete",
            "requestURI": "/api/v1/namespaces/default/secrets/audit-s",
            "verb": "get",
            "user": admin(),
            "objectRef": {"resource": "secrets", "namespace": "default", "name": "audit-s", "apiVersion": "v1"},
            "responseStatus": {"metadata": {}, "code": 200},
            "annotations": allowed(),
        })
    );
    for e in &s {
        assert!(e.get("requestObject").is_none() && e.get("responseObject").is_none());
    }

    // Alice's pod: Request level, the request body but no response body.
    let out = as_user(&c, &alice, &["run", "audit-pod", "--image=nginx"]);
    assert!(out.status.success(), "{out:?}");
    let p = wait_for(&log, 1, "alice's pod", |e| on(e, "pods", "audit-pod"));
    assert_eq!(
        stable(&p[0]),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Request",
            "stage": "ResponseComplete",
            "requestURI": "/api/v1/namespaces/default/pods?fieldManager=kubectl-run",
            "verb": "create",
            "user": {"username": "alice", "uid": "1001", "groups": ["system:authenticated"]},
            "objectRef": {"resource": "pods", "namespace": "default", "name": "audit-pod", "apiVersion": "v1"},
            "responseStatus": {"metadata": {}, "code": 201},
            // PodSecurity's: the namespace's policy is all privileged.
            "annotations": with(allowed_alice(), &[("pod-security.kubernetes.io/enforce-policy", "privileged:latest")]),
        })
    );
    assert_eq!(
        p[0]["requestObject"]["spec"]["containers"][0]["image"],
        "nginx"
    );
    assert!(p[0].get("responseObject").is_none());

    // With an `audit` level the pod violates, PodSecurity records the
    // violation (and the enforced policy) and admits the pod.
    c.ok(&[
        "label",
        "namespace",
        "default",
        "pod-security.kubernetes.io/audit=restricted",
    ]);
    let out = as_user(&c, &alice, &["run", "audit-pod-2", "--image=nginx"]);
    assert!(out.status.success(), "{out:?}");
    let p = wait_for(&log, 1, "alice's second pod", |e| {
        on(e, "pods", "audit-pod-2")
    });
    let ann = &p[0]["annotations"];
    assert_eq!(
        ann["pod-security.kubernetes.io/enforce-policy"],
        "privileged:latest"
    );
    let violations = ann["pod-security.kubernetes.io/audit-violations"]
        .as_str()
        .unwrap_or_default();
    assert!(
        violations.starts_with(
            r#"would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "audit-pod-2" must set securityContext.allowPrivilegeEscalation=false)"#
        ),
        "{ann}"
    );
    c.ok(&[
        "label",
        "namespace",
        "default",
        "pod-security.kubernetes.io/audit-",
    ]);

    // Bob may not list pods: the 403 Status in responseStatus, and the
    // forbid decision.
    let out = as_user(&c, &bob, &["get", "pods"]);
    assert!(!out.status.success());
    let forbidden = r#"pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default""#;
    let b = wait_for(&log, 1, "bob's list", |e| {
        e["user"]["username"] == "bob" && e["objectRef"]["resource"] == "pods"
    });
    assert_eq!(
        stable(&b[0]),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "stage": "ResponseComplete",
            "requestURI": "/api/v1/namespaces/default/pods?limit=500",
            "verb": "list",
            "user": {"username": "bob", "uid": "1002", "groups": ["system:authenticated"]},
            "objectRef": {"resource": "pods", "namespace": "default", "apiVersion": "v1"},
            "responseStatus": {
                "metadata": {},
                "status": "Failure",
                "message": forbidden,
                "reason": "Forbidden",
                "details": {"kind": "pods"},
                "code": 403
            },
            "annotations": {"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""},
        })
    );

    // The admin lists pods as alice: the policy saw the admin (Metadata,
    // not alice's Request), and the event names both.
    c.ok(&["get", "pods", "--as=alice"]);
    let i = wait_for(&log, 1, "impersonated list", |e| {
        e.get("impersonatedUser").is_some()
    });
    assert_eq!(
        stable(&i[0]),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "stage": "ResponseComplete",
            "requestURI": "/api/v1/namespaces/default/pods?limit=500",
            "verb": "list",
            "user": admin(),
            "impersonatedUser": {"username": "alice", "groups": ["system:authenticated"]},
            "objectRef": {"resource": "pods", "namespace": "default", "apiVersion": "v1"},
            "responseStatus": {"metadata": {}, "code": 200},
            "annotations": allowed_alice(),
        })
    );

    // A watch: ResponseStarted when it starts, ResponseComplete when the
    // client goes; a patch meanwhile is logged with its patch body.
    let mut watch = Command::new("kubectl")
        .args(["get", "configmaps", "-w", "-o", "name"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl -w");
    let is_watch = |e: &Value| e["verb"] == "watch";
    let w = wait_for(&log, 2, "watch started", is_watch);
    c.ok(&["label", "configmap", "audit-cm", "team=audit"]);
    let patch = wait_for(&log, 2, "configmap patch", |e| {
        on(e, "configmaps", "audit-cm")
    });
    let patch = &patch[1];
    assert_eq!(
        (&patch["verb"], &patch["level"], &patch["stage"]),
        (
            &json!("patch"),
            &json!("RequestResponse"),
            &json!("ResponseComplete")
        )
    );
    assert_eq!(
        patch["requestObject"],
        json!({"metadata": {"labels": {"team": "audit"}}})
    );
    assert_eq!(
        patch["responseObject"]["metadata"]["labels"]["team"],
        "audit"
    );
    let _ = watch.kill();
    let _ = watch.wait();
    let w2 = wait_for(&log, 3, "watch ended", is_watch);
    assert_eq!(w, w2[..2]);
    let stages: Vec<&str> = w2.iter().map(|e| e["stage"].as_str().unwrap()).collect();
    assert_eq!(
        stages,
        ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    );
    assert!(w2.iter().all(|e| e["auditID"] == w2[0]["auditID"]));
    let started = stable(&w2[1]);
    assert_eq!(
        started["responseStatus"],
        json!({"metadata": {}, "code": 200})
    );
    assert_eq!(started["level"], "Metadata");
    assert!(started["requestURI"].as_str().is_some_and(|u| u
        .starts_with("/api/v1/namespaces/default/configmaps?")
        && u.contains("watch=true")));
    assert_eq!(stable(&w2[2])["responseStatus"], started["responseStatus"]);

    // A failed authentication: one ResponseStarted event without a user;
    // the client's Audit-ID is the event's and comes back.
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&c.ca_pem).expect("ca"))
        .build()
        .expect("client");
    let r = block_on(
        client
            .get(format!("{}/version", c.url))
            .bearer_auth("wrong")
            .header("Audit-ID", "my-audit-id")
            .header("User-Agent", "kubectl/test")
            .send(),
    )
    .expect("request");
    assert_eq!(r.status().as_u16(), 401);
    assert_eq!(r.headers()["audit-id"], "my-audit-id");
    let u = wait_for(&log, 1, "401", |e| e["auditID"] == "my-audit-id");
    let mut u = u[0].clone();
    u["auditID"] = json!("00000000-0000-0000-0000-000000000000");
    assert_eq!(
        stable(&u),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "stage": "ResponseStarted",
            "requestURI": "/version",
            "verb": "get",
            "user": {},
            "responseStatus": {"metadata": {}, "message": "Authentication failed, attempted: bearer", "code": 401},
        })
    );
    // Every audited answer has an Audit-Id, the one logged: a new UUID, or
    // the client's own.
    let r = block_on(c.client().get(format!("{}/version", c.url)).send()).expect("request");
    let id = r.headers()["audit-id"].to_str().expect("id").to_string();
    assert_uuid(&id);
    wait_for(&log, 2, "version", |e| e["auditID"] == id.as_str());
    let r = block_on(
        c.client()
            .get(format!("{}/version", c.url))
            .header("Audit-ID", "my-id")
            .send(),
    )
    .expect("request");
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["audit-id"], "my-id");
    wait_for(&log, 2, "version my-id", |e| e["auditID"] == "my-id");
    drop(c);
}

/// `id` is a random (version 4) UUID in its lowercase hyphenated form, as
/// kube's `uuid.New().String()`.
fn assert_uuid(id: &str) {
    let b = id.as_bytes();
    let hex = |c: &u8| c.is_ascii_digit() || (b'a'..=b'f').contains(c);
    let ok = b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => hex(c),
        })
        && b[14] == b'4'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b');
    assert!(ok, "not a random UUID: {id:?}");
}

/// Without auditing every answer still carries `Audit-Id` (kube's
/// `WithAuditInit` is in every handler chain): a new UUID per request, or
/// the client's `Audit-ID` as sent — on successes, errors, `401`, `403`,
/// health checks, `/version`, discovery and watches alike.
#[test]
fn audit_id_without_auditing() {
    let c = Cluster::start(Mode::Embedded);
    let admin = c.client();
    let anonymous = c.anonymous_client();
    let requests = [
        (&admin, "/api/v1/namespaces/default", 200),
        (&admin, "/api/v1/namespaces/default/configmaps/nope", 404),
        (&admin, "/apis", 200),
        (
            &admin,
            "/api/v1/namespaces/default/configmaps?watch=true",
            200,
        ),
        (&anonymous, "/api/v1/namespaces", 403),
        (&anonymous, "/healthz", 200),
        (&anonymous, "/livez", 200),
        (&anonymous, "/readyz", 200),
        (&anonymous, "/version", 200),
    ];
    block_on(async {
        let mut seen = std::collections::HashSet::new();
        for (client, path, code) in requests {
            let get = || client.get(format!("{}{path}", c.url));
            let r = get().send().await.expect("request");
            assert_eq!(r.status().as_u16(), code, "{path}");
            let id = r.headers()["audit-id"].to_str().expect("id").to_string();
            assert_uuid(&id);
            assert!(seen.insert(id), "a new ID each request: {path}");
            let r = get().header("Audit-ID", "my-id").send().await;
            let r = r.expect("request");
            assert_eq!(r.status().as_u16(), code, "{path}");
            let ids: Vec<_> = r.headers().get_all("audit-id").iter().collect();
            assert_eq!(ids, ["my-id"], "{path}");
        }
        // A failed authentication too.
        let bad = || {
            anonymous
                .get(format!("{}/version", c.url))
                .bearer_auth("wrong")
        };
        let r = bad().send().await.expect("request");
        assert_eq!(r.status().as_u16(), 401);
        assert_uuid(r.headers()["audit-id"].to_str().expect("id"));
        let r = bad()
            .header("Audit-ID", "my-id")
            .send()
            .await
            .expect("request");
        assert_eq!(r.status().as_u16(), 401);
        assert_eq!(r.headers()["audit-id"], "my-id");
    });
}

#[test]
fn audit_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn audit_distributed() {
    scenario(Mode::Distributed);
}

/// A bad policy file: the server does not start and says why, in kube's
/// words.
#[test]
fn a_bad_policy_stops_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n",
    )
    .expect("policy");
    let out = Command::new(env!("CARGO_BIN_EXE_keelson"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--secure-port", "0", "--audit-policy-file"])
        .arg(&policy)
        .args(["--audit-log-path", "-"])
        .stdin(Stdio::null())
        .output()
        .expect("keelson");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        r#"rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse": from file {}"#,
        policy.display()
    );
    assert!(err.contains(&want), "{err}");

    let out = Command::new(env!("CARGO_BIN_EXE_keelson-gateway"))
        .args(["--audit-log-maxsize=-1", "--audit-log-path=x.log"])
        .arg(format!("--audit-policy-file={}", policy.display()))
        .arg("--data-dir")
        .arg(dir.path().join("gw"))
        .stdin(Stdio::null())
        .output()
        .expect("keelson-gateway");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--audit-log-maxsize -1 can't be a negative number"),
        "{err}"
    );
}
