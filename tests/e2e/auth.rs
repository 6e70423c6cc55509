//! Authentication and RBAC with the installed kubectl, as three users: the
//! admin by client certificate (the written kubeconfig), token-file users
//! (`--token-auth-file`) and a ServiceAccount token from `kubectl create
//! token` or from a `kubernetes.io/service-account-token` Secret; the review APIs, impersonation, escalation prevention,
//! ClusterRole aggregation and the objects a cluster has from its first
//! second. Both modes.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use support::{block_on, Cluster, Mode};

/// The token file every server of this suite reads (through
/// `KEELSON_TOKEN_AUTH_FILE`, which the embedded server and the gateway
/// both take).
fn token_file() -> &'static PathBuf {
    static FILE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &FILE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join("tokens.csv");
            std::fs::write(
                &path,
                "alice-token,alice,1001\nbob-token,bob,1002,\"devs,ops\"\n",
            )
            .expect("token file");
            std::env::set_var("KEELSON_TOKEN_AUTH_FILE", &path);
            (dir, path)
        })
        .1
}

fn start(mode: Mode, args: &[&str]) -> Cluster {
    token_file();
    match mode {
        Mode::Embedded => Cluster::start_with(mode, args),
        Mode::Distributed => Cluster::start(mode),
    }
}

/// A kubeconfig for `token` against `c`, written in the cluster's home.
fn kubeconfig_for(c: &Cluster, user: &str, token: &str) -> PathBuf {
    let path = c.home.path().join(format!("{user}.kubeconfig"));
    let ca = c.data_dir.join("pki/ca.crt");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: k\n  context: {{cluster: k, user: u, namespace: default}}\ncurrent-context: k\nusers:\n- name: u\n  user:\n    token: {token}\n",
            c.url,
            ca.display()
        ),
    )
    .expect("kubeconfig");
    path
}

/// kubectl as the user of `kubeconfig`.
fn as_user(c: &Cluster, kubeconfig: &Path, args: &[&str]) -> Output {
    let cfg = format!("--kubeconfig={}", kubeconfig.display());
    let mut all = vec![cfg.as_str()];
    all.extend_from_slice(args);
    c.kubectl(&all)
}

fn text(o: &Output) -> (bool, String, String) {
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).trim().to_string(),
    )
}

fn ok(c: &Cluster, kc: &Path, args: &[&str]) -> String {
    let (success, out, err) = text(&as_user(c, kc, args));
    assert!(success, "kubectl {args:?} failed: {err}");
    out
}

fn denied(c: &Cluster, kc: &Path, args: &[&str]) -> String {
    let (success, out, err) = text(&as_user(c, kc, args));
    assert!(!success, "kubectl {args:?} unexpectedly succeeded: {out}");
    err
}

/// Retry `f` until it holds, for at most `within`.
fn eventually(within: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn scenario(mode: Mode) {
    let c = start(mode, &[]);

    // The admin, by the kubeconfig's client certificate (kubeadm's admin).
    let who = c.ok(&["auth", "whoami"]);
    assert!(who.contains("kubernetes-admin"), "{who}");
    assert!(
        who.contains("[system:masters system:authenticated]"),
        "{who}"
    );
    // kube's credential id: the SHA-256 of the client certificate's DER.
    let cert_b64 = c.ok(&[
        "config",
        "view",
        "--raw",
        "--minify",
        "-o",
        "jsonpath={.users[0].user.client-certificate-data}",
    ]);
    let pem = String::from_utf8(
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, cert_b64.trim())
            .expect("base64"),
    )
    .expect("PEM");
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, body).expect("DER");
    let fingerprint: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&der)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    assert!(
        who.contains(&format!(
            "Extra: authentication.kubernetes.io/credential-id   [X509SHA256={fingerprint}]"
        )),
        "{who}"
    );
    // The admin token is a second admin user.
    let who = c.ok(&["--context", "keelson-token", "auth", "whoami"]);
    assert!(who.contains("keelson-admin"), "{who}");

    // What a cluster has from its first second.
    eventually(Duration::from_secs(5), "kubernetes service", || {
        c.kubectl(&["get", "svc", "kubernetes"]).status.success()
    });
    let eps = c.ok(&[
        "get",
        "endpoints",
        "kubernetes",
        "-o",
        "jsonpath={.subsets[0].ports[0].port}",
    ]);
    assert_eq!(eps, c.url.rsplit(':').next().unwrap_or(""));
    c.ok(&["get", "endpointslice", "kubernetes"]);
    c.ok(&["create", "namespace", "team"]);
    let created = Instant::now();
    eventually(Duration::from_secs(1), "default ServiceAccount", || {
        c.kubectl(&["-n", "team", "get", "sa", "default"])
            .status
            .success()
    });
    eventually(Duration::from_secs(1), "kube-root-ca.crt", || {
        c.kubectl(&["-n", "team", "get", "cm", "kube-root-ca.crt"])
            .status
            .success()
    });
    assert!(created.elapsed() < Duration::from_secs(2));
    let ca = c.ok(&[
        "-n",
        "team",
        "get",
        "cm",
        "kube-root-ca.crt",
        "-o",
        "jsonpath={.data.ca\\.crt}",
    ]);
    assert_eq!(ca.trim(), String::from_utf8_lossy(&c.ca_pem).trim());

    // A token-file user.
    let alice = kubeconfig_for(&c, "alice", "alice-token");
    let who = ok(&c, &alice, &["auth", "whoami"]);
    assert!(who.contains("alice") && who.contains("1001"), "{who}");
    assert!(who.contains("[system:authenticated]"), "{who}");

    // A Role and RoleBinding grant get,list pods in one namespace.
    c.ok(&[
        "-n",
        "team",
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
    ]);
    c.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "alice-pods",
        "--role=pod-reader",
        "--user=alice",
    ]);
    eventually(Duration::from_secs(5), "the binding", || {
        as_user(&c, &alice, &["-n", "team", "get", "pods"])
            .status
            .success()
    });
    let err = denied(&c, &alice, &["-n", "default", "get", "pods"]);
    assert_eq!(
        err,
        r#"Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default""#
    );
    let err = denied(&c, &alice, &["get", "namespaces"]);
    assert_eq!(
        err,
        r#"Error from server (Forbidden): namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope"#
    );
    let err = denied(&c, &alice, &["-n", "team", "delete", "pod", "p"]);
    assert_eq!(
        err,
        r#"Error from server (Forbidden): pods "p" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "team""#
    );

    // auth can-i (SelfSubjectAccessReview, sent as Protobuf) and --list.
    assert_eq!(
        ok(&c, &alice, &["-n", "team", "auth", "can-i", "list", "pods"]).trim(),
        "yes"
    );
    let (success, out, _) = text(&as_user(
        &c,
        &alice,
        &["-n", "default", "auth", "can-i", "list", "pods"],
    ));
    assert!(!success);
    assert_eq!(out.trim(), "no");
    let list = ok(&c, &alice, &["-n", "team", "auth", "can-i", "--list"]);
    assert!(
        list.lines()
            .any(|l| l.starts_with("pods ") && l.contains("[get list]")),
        "{list}"
    );
    assert!(
        list.contains("selfsubjectaccessreviews.authorization.k8s.io"),
        "{list}"
    );
    assert_eq!(
        c.ok(&["auth", "can-i", "list", "pods", "-n", "team", "--as", "alice"])
            .trim(),
        "yes"
    );

    // Impersonation needs the impersonate verb.
    let err = denied(&c, &alice, &["-n", "team", "get", "pods", "--as", "bob"]);
    assert_eq!(
        err,
        r#"Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#
    );
    c.ok(&[
        "create",
        "clusterrole",
        "impersonate-bob",
        "--verb=impersonate",
        "--resource=users",
        "--resource-name=bob",
    ]);
    c.ok(&[
        "create",
        "clusterrolebinding",
        "alice-impersonates",
        "--clusterrole=impersonate-bob",
        "--user=alice",
    ]);
    eventually(Duration::from_secs(5), "impersonation", || {
        as_user(&c, &alice, &["auth", "whoami", "--as", "bob"])
            .status
            .success()
    });
    let who = ok(&c, &alice, &["auth", "whoami", "--as", "bob"]);
    assert!(who.contains("bob") && !who.contains("alice"), "{who}");
    let err = denied(
        &c,
        &alice,
        &["get", "pods", "--as", "bob", "--as-group", "system:masters"],
    );
    assert!(
        err.contains(r#"groups "system:masters" is forbidden"#),
        "{err}"
    );

    // Escalation: bob may create Roles and RoleBindings in team, but not
    // grant what he does not hold.
    let bob = kubeconfig_for(&c, "bob", "bob-token");
    c.ok(&[
        "-n",
        "team",
        "create",
        "role",
        "role-maker",
        "--verb=create",
        "--resource=roles,rolebindings",
    ]);
    c.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "devs-make",
        "--role=role-maker",
        "--group=devs",
    ]);
    c.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "devs-read",
        "--role=pod-reader",
        "--group=devs",
    ]);
    eventually(Duration::from_secs(5), "bob's bindings", || {
        as_user(
            &c,
            &bob,
            &["-n", "team", "auth", "can-i", "create", "roles"],
        )
        .status
        .success()
    });
    let err = denied(
        &c,
        &bob,
        &[
            "-n",
            "team",
            "create",
            "role",
            "big",
            "--verb=get,delete",
            "--resource=pods,secrets",
        ],
    );
    assert_eq!(
        err,
        "Error from server (Forbidden): roles.rbac.authorization.k8s.io \"big\" is forbidden: user \"bob\" (groups=[\"devs\" \"ops\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\"]}"
    );
    ok(
        &c,
        &bob,
        &[
            "-n",
            "team",
            "create",
            "role",
            "small",
            "--verb=get",
            "--resource=pods",
        ],
    );
    let err = denied(
        &c,
        &bob,
        &[
            "-n",
            "team",
            "create",
            "rolebinding",
            "root",
            "--clusterrole=cluster-admin",
            "--user=bob",
        ],
    );
    assert!(
        err.contains("rolebindings.rbac.authorization.k8s.io \"root\" is forbidden: user \"bob\""),
        "{err}"
    );
    ok(
        &c,
        &bob,
        &[
            "-n",
            "team",
            "create",
            "rolebinding",
            "fine",
            "--role=small",
            "--user=carol",
        ],
    );
    // A dry run is authorized and checked as the real request.
    let err = denied(
        &c,
        &bob,
        &[
            "-n",
            "team",
            "create",
            "role",
            "big",
            "--verb=delete",
            "--resource=pods",
            "--dry-run=server",
        ],
    );
    assert!(
        err.contains("is attempting to grant RBAC permissions not currently held"),
        "{err}"
    );
    let err = denied(
        &c,
        &bob,
        &[
            "-n",
            "default",
            "create",
            "configmap",
            "x",
            "--dry-run=server",
        ],
    );
    assert!(
        err.contains(r#"User "bob" cannot create resource "configmaps""#),
        "{err}"
    );

    // A ServiceAccount token from `kubectl create token`.
    c.ok(&["-n", "team", "create", "serviceaccount", "bot"]);
    c.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "bot-pods",
        "--role=pod-reader",
        "--serviceaccount=team:bot",
    ]);
    let token = c.ok(&["-n", "team", "create", "token", "bot"]);
    let bot = kubeconfig_for(&c, "bot", token.trim());
    let who = ok(&c, &bot, &["auth", "whoami"]);
    assert!(who.contains("system:serviceaccount:team:bot"), "{who}");
    assert!(
        who.contains("[system:serviceaccounts system:serviceaccounts:team system:authenticated]"),
        "{who}"
    );
    eventually(Duration::from_secs(5), "the bot's binding", || {
        as_user(&c, &bot, &["-n", "team", "get", "pods"])
            .status
            .success()
    });
    denied(&c, &bot, &["-n", "default", "get", "pods"]);
    token_reviews(&c, token.trim());
    // Deleting the ServiceAccount invalidates its tokens.
    c.ok(&["-n", "team", "delete", "serviceaccount", "bot"]);
    let err = denied(&c, &bot, &["-n", "team", "get", "pods"]);
    assert!(
        err.contains("You must be logged in to the server (Unauthorized)"),
        "{err}"
    );
    let err = c.fails(
        &["-n", "team", "create", "token", "default", "--duration=1m"],
        None,
    );
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );

    // An expired token (signed by the cluster's key an hour ago) is 401.
    let uid = c.ok(&[
        "-n",
        "team",
        "get",
        "sa",
        "default",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    let key = std::fs::read_to_string(c.data_dir.join("pki/sa.key")).expect("sa.key");
    let authority = keelson_auth::serviceaccount::TokenAuthority::from_pem(
        &key,
        &[],
        keelson_auth::serviceaccount::DEFAULT_ISSUER,
        &[],
    )
    .expect("key");
    let now = chrono::Utc::now().timestamp();
    let (expired, _) = authority
        .issue("team", "default", uid.trim(), &[], now - 7200, 3600)
        .expect("token");
    let (fresh, _) = authority
        .issue("team", "default", uid.trim(), &[], now, 3600)
        .expect("token");
    let old = kubeconfig_for(&c, "expired", &expired);
    let err = denied(&c, &old, &["auth", "whoami"]);
    assert!(err.contains("Unauthorized"), "{err}");
    let good = kubeconfig_for(&c, "fresh", &fresh);
    assert!(ok(&c, &good, &["auth", "whoami"]).contains("system:serviceaccount:team:default"));

    legacy_token_secret(&c);

    // ClusterRole aggregation picks up a new labelled role.
    c.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: monitoring}\naggregationRule:\n  clusterRoleSelectors:\n  - matchLabels: {example.com/aggregate-to-monitoring: \"true\"}\nrules: []\n",
    );
    c.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: monitoring-endpoints\n  labels: {example.com/aggregate-to-monitoring: \"true\", rbac.authorization.k8s.io/aggregate-to-view: \"true\"}\nrules:\n- apiGroups: [\"\"]\n  resources: [\"endpoints\", \"widgets\"]\n  verbs: [\"get\"]\n",
    );
    eventually(Duration::from_secs(5), "aggregation", || {
        let rules = c.ok(&[
            "get",
            "clusterrole",
            "monitoring",
            "-o",
            "jsonpath={.rules}",
        ]);
        rules.contains("widgets")
    });
    eventually(Duration::from_secs(5), "aggregation into view", || {
        c.ok(&["get", "clusterrole", "view", "-o", "jsonpath={.rules}"])
            .contains("widgets")
    });

    // A user made the kubeadm way: key and CSR with openssl, a
    // CertificateSigningRequest, `kubectl certificate approve`, the issued
    // certificate in a kubeconfig.
    let dir = c.home.path();
    let key = dir.join("jane.key");
    let csr = dir.join("jane.csr");
    let status = std::process::Command::new("openssl")
        .args([
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&csr)
        .args(["-subj", "/CN=jane/O=qa"])
        .output()
        .expect("openssl");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let request = b64.encode(std::fs::read(&csr).expect("csr"));
    c.ok_stdin(
        &["apply", "-f", "-"],
        &format!("apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {{name: jane}}\nspec:\n  request: {request}\n  signerName: kubernetes.io/kube-apiserver-client\n  expirationSeconds: 86400\n  usages: [client auth]\n"),
    );
    // Approving needs `update` on `/approval` (RBAC, at the gateway) and,
    // in admission (CertificateApproval), `approve` on the signer.
    let err = denied(&c, &alice, &["certificate", "approve", "jane"]);
    assert!(err.contains("Forbidden"), "{err}");
    c.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: csr-approval}\nrules:\n- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [get, list]}\n- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests/approval], verbs: [update]}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: alice-csr-approval}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csr-approval}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]\n",
    );
    let mut err = String::new();
    eventually(Duration::from_secs(5), "the signer refusal", || {
        err = text(&as_user(&c, &alice, &["certificate", "approve", "jane"])).2;
        err.contains("signerName")
    });
    assert_eq!(
        err.trim(),
        r#"Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "jane" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client""#
    );
    // The domain's wildcard grants every signer of kubernetes.io.
    c.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: alice-kubernetes-signers}\nrules:\n- {apiGroups: [certificates.k8s.io], resources: [signers], verbs: [approve], resourceNames: [\"kubernetes.io/*\"]}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: alice-kubernetes-signers}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: alice-kubernetes-signers}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]\n",
    );
    let mut out = String::new();
    eventually(Duration::from_secs(5), "alice's approval", || {
        let o = as_user(&c, &alice, &["certificate", "approve", "jane"]);
        out = text(&o).1;
        o.status.success()
    });
    assert!(out.contains("approved"), "{out}");
    let mut cert = String::new();
    eventually(Duration::from_secs(5), "the issued certificate", || {
        cert = c.ok(&["get", "csr", "jane", "-o", "jsonpath={.status.certificate}"]);
        !cert.trim().is_empty()
    });
    // The approval went through admission and is recorded in
    // managedFields as kube records it.
    let csr_json: serde_json::Value =
        serde_json::from_str(&c.ok(&["get", "csr", "jane", "-o", "json", "--show-managed-fields"]))
            .expect("csr json");
    let entries = csr_json["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields");
    assert!(
        entries
            .iter()
            .any(|e| e["subresource"] == "approval" && e["operation"] == "Update"),
        "{entries:?}"
    );
    // An approval update that drops the Approved condition is refused by
    // the approval validation, as kube refuses it.
    let mut dropped = csr_json.clone();
    dropped["status"]["conditions"] = serde_json::json!([]);
    let out = c.kubectl_stdin(
        &[
            "replace",
            "--raw",
            "/apis/certificates.k8s.io/v1/certificatesigningrequests/jane/approval",
            "-f",
            "-",
        ],
        Some(&dropped.to_string()),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            r#"status.conditions: Forbidden: updates may not remove a condition of type "Approved""#
        ),
        "{err}"
    );
    let cert_path = dir.join("jane.crt");
    std::fs::write(&cert_path, b64.decode(cert.trim()).expect("base64")).expect("crt");
    let jane = dir.join("jane.kubeconfig");
    std::fs::write(
        &jane,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: k\n  context: {{cluster: k, user: u}}\ncurrent-context: k\nusers:\n- name: u\n  user:\n    client-certificate: {}\n    client-key: {}\n",
            c.url,
            c.data_dir.join("pki/ca.crt").display(),
            cert_path.display(),
            key.display()
        ),
    )
    .expect("kubeconfig");
    let who = ok(&c, &jane, &["auth", "whoami"]);
    assert!(
        who.contains("jane") && who.contains("[qa system:authenticated]"),
        "{who}"
    );
    let err = denied(&c, &jane, &["get", "pods"]);
    assert!(
        err.contains(r#"User "jane" cannot list resource "pods""#),
        "{err}"
    );

    // Anonymous: the public endpoints only.
    block_on(async {
        let anon = c.anonymous_client();
        let r = anon
            .get(format!("{}/version", c.url))
            .send()
            .await
            .expect("version");
        assert_eq!(r.status().as_u16(), 200);
        let r = anon
            .get(format!("{}/api", c.url))
            .send()
            .await
            .expect("api");
        assert_eq!(r.status().as_u16(), 403);
        let v: serde_json::Value = r.json().await.expect("status");
        assert_eq!(
            v["message"],
            r#"forbidden: User "system:anonymous" cannot get path "/api""#
        );
        let r = anon
            .get(format!("{}/api", c.url))
            .bearer_auth("wrong")
            .send()
            .await
            .expect("api");
        assert_eq!(r.status().as_u16(), 401);
    });
    // Issuer discovery, for ServiceAccounts (and the admin).
    let jwks = c.ok(&["get", "--raw", "/openid/v1/jwks"]);
    assert!(jwks.contains("\"kty\":\"EC\""), "{jwks}");
    let oidc = c.ok(&["get", "--raw", "/.well-known/openid-configuration"]);
    assert!(
        oidc.contains(keelson_auth::serviceaccount::DEFAULT_ISSUER),
        "{oidc}"
    );
}

/// POST a TokenReview of `token` for `audiences` (none: the field is left
/// out) as the admin; the answer's `status`.
fn review(c: &Cluster, token: &str, audiences: Option<&[&str]>) -> serde_json::Value {
    let mut spec = serde_json::json!({"token": token});
    if let Some(a) = audiences {
        spec["audiences"] = serde_json::json!(a);
    }
    let body = serde_json::json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec,
    });
    let (code, answer) = block_on(async {
        let r = c
            .client()
            .post(format!(
                "{}/apis/authentication.k8s.io/v1/tokenreviews",
                c.url
            ))
            .json(&body)
            .send()
            .await
            .expect("send");
        let code = r.status().as_u16();
        (code, r.json::<serde_json::Value>().await.expect("json"))
    });
    assert_eq!(code, 201, "{answer}");
    answer["status"].clone()
}

/// TokenReview as kube's: audiences honoured (a token minted for `api`
/// reviews for `api` with `status.audiences`, the API audiences apply when
/// the review names none), refusals with kube's `error` and `user: {}`.
fn token_reviews(c: &Cluster, bot_token: &str) {
    use serde_json::json;
    const ISSUER: &str = keelson_auth::serviceaccount::DEFAULT_ISSUER;
    let s = review(c, bot_token, None);
    assert_eq!(s["authenticated"], json!(true), "{s}");
    assert_eq!(
        s["user"]["username"], "system:serviceaccount:team:bot",
        "{s}"
    );
    assert_eq!(s["audiences"], json!([ISSUER]), "{s}");
    // A token for audience `api` (kubectl create token --audience api).
    let api = c.ok(&["-n", "team", "create", "token", "bot", "--audience", "api"]);
    let s = review(c, api.trim(), Some(&["api"]));
    assert_eq!(s["authenticated"], json!(true), "{s}");
    assert_eq!(
        s["user"]["username"], "system:serviceaccount:team:bot",
        "{s}"
    );
    assert_eq!(s["audiences"], json!(["api"]), "{s}");
    let s = review(c, api.trim(), Some(&["other", "api"]));
    assert_eq!(s["audiences"], json!(["api"]), "{s}");
    // Without audiences the API server's own apply: the `api` token is refused.
    let s = review(c, api.trim(), None);
    assert_eq!(
        s,
        json!({"user": {}, "error": format!(
            r#"[invalid bearer token, token audiences ["api"] is invalid for the target audiences ["{ISSUER}"]]"#
        )}),
    );
    let s = review(c, bot_token, Some(&["y"]));
    assert_eq!(
        s["error"],
        format!(
            r#"[invalid bearer token, token audiences ["{ISSUER}"] is invalid for the target audiences ["y"]]"#
        ),
        "{s}"
    );
    // An unknown token.
    let s = review(c, "not-a-token", None);
    assert_eq!(s, json!({"user": {}, "error": "invalid bearer token"}));
    // Token-file users hold for the API audiences only.
    let s = review(c, "alice-token", None);
    assert_eq!(s["user"]["username"], "alice", "{s}");
    assert_eq!(s["audiences"], json!([ISSUER]), "{s}");
    let s = review(c, "alice-token", Some(&["api"]));
    assert_eq!(s, json!({"user": {}, "error": "invalid bearer token"}));
    // An expired token of the cluster's key.
    let uid = c.ok(&[
        "-n",
        "team",
        "get",
        "sa",
        "bot",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    let key = std::fs::read_to_string(c.data_dir.join("pki/sa.key")).expect("sa.key");
    let authority = keelson_auth::serviceaccount::TokenAuthority::from_pem(&key, &[], ISSUER, &[])
        .expect("key");
    let now = chrono::Utc::now().timestamp();
    let (expired, _) = authority
        .issue("team", "bot", uid.trim(), &[], now - 7200, 3600)
        .expect("token");
    let s = review(c, &expired, None);
    assert_eq!(
        s,
        json!({"user": {}, "error": "[invalid bearer token, service account token has expired]"})
    );
    // A token bound to a ServiceAccount that is not there.
    let (ghost, _) = authority
        .issue("team", "ghost", "no-uid", &[], now, 3600)
        .expect("token");
    let s = review(c, &ghost, None);
    assert_eq!(
        s["error"], r#"[invalid bearer token, serviceaccounts "ghost" not found]"#,
        "{s}"
    );
    // No token: kube's 400.
    let (code, answer) = block_on(async {
        let r = c
            .client()
            .post(format!("{}/apis/authentication.k8s.io/v1/tokenreviews", c.url))
            .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}}))
            .send()
            .await
            .expect("send");
        (
            r.status().as_u16(),
            r.json::<serde_json::Value>().await.expect("json"),
        )
    });
    assert_eq!(code, 400, "{answer}");
    assert_eq!(
        answer["message"],
        "token is required for TokenReview in authentication"
    );
}

/// A long-lived token the documented way: a `kubernetes.io/service-account-token`
/// Secret naming a ServiceAccount, filled by the tokens controller; the
/// token works while the Secret exists; deleting the ServiceAccount
/// deletes its token Secrets.
fn legacy_token_secret(c: &Cluster) {
    use base64::Engine;
    c.ok(&["-n", "team", "create", "serviceaccount", "build-robot"]);
    c.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "build-robot-pods",
        "--role=pod-reader",
        "--serviceaccount=team:build-robot",
    ]);
    let secret = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: team\n  annotations:\n    kubernetes.io/service-account.name: build-robot\ntype: kubernetes.io/service-account-token\n"
        )
    };
    c.ok_stdin(&["apply", "-f", "-"], &secret("build-robot-secret"));
    c.ok_stdin(&["apply", "-f", "-"], &secret("build-robot-spare"));
    let field = |name: &str, path: &str| {
        c.ok(&[
            "-n",
            "team",
            "get",
            "secret",
            name,
            "-o",
            &format!("jsonpath={{{path}}}"),
        ])
    };
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut token = String::new();
    eventually(Duration::from_secs(10), "data.token filled", || {
        token = field("build-robot-secret", ".data.token");
        !token.is_empty()
    });
    let token = String::from_utf8(b64.decode(token.trim()).expect("base64")).expect("utf-8");
    let decoded = |path: &str| {
        String::from_utf8(
            b64.decode(field("build-robot-secret", path).trim())
                .expect("base64"),
        )
        .expect("utf-8")
    };
    assert_eq!(decoded(".data.namespace"), "team");
    assert_eq!(
        decoded(".data.ca\\.crt"),
        std::fs::read_to_string(c.data_dir.join("pki/ca.crt")).expect("ca.crt")
    );
    let sa_uid = c.ok(&[
        "-n",
        "team",
        "get",
        "sa",
        "build-robot",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    assert_eq!(
        field(
            "build-robot-secret",
            ".metadata.annotations.kubernetes\\.io/service-account\\.uid"
        ),
        sa_uid
    );
    let robot = kubeconfig_for(c, "build-robot", &token);
    let who = ok(c, &robot, &["auth", "whoami"]);
    assert!(
        who.contains("system:serviceaccount:team:build-robot"),
        "{who}"
    );
    assert!(
        who.contains("[system:serviceaccounts system:serviceaccounts:team system:authenticated]"),
        "{who}"
    );
    eventually(Duration::from_secs(5), "the build robot's binding", || {
        as_user(c, &robot, &["-n", "team", "get", "pods"])
            .status
            .success()
    });
    let err = denied(c, &robot, &["-n", "default", "get", "pods"]);
    assert!(
        err.contains(
            r#"User "system:serviceaccount:team:build-robot" cannot list resource "pods""#
        ),
        "{err}"
    );
    // Its use is recorded on the Secret (the day, UTC).
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    eventually(Duration::from_secs(5), "legacy-token-last-used", || {
        let l = field(
            "build-robot-secret",
            ".metadata.labels.kubernetes\\.io/legacy-token-last-used",
        );
        l == today || l == tomorrow
    });
    // Deleting the Secret revokes the token.
    c.ok(&["-n", "team", "delete", "secret", "build-robot-secret"]);
    let err = denied(c, &robot, &["auth", "whoami"]);
    assert!(
        err.contains("You must be logged in to the server (Unauthorized)"),
        "{err}"
    );
    // Deleting the ServiceAccount deletes its remaining token Secrets.
    eventually(Duration::from_secs(10), "the spare token filled", || {
        !field("build-robot-spare", ".data.token").is_empty()
    });
    c.ok(&["-n", "team", "delete", "serviceaccount", "build-robot"]);
    eventually(Duration::from_secs(10), "the spare token deleted", || {
        !c.kubectl(&["-n", "team", "get", "secret", "build-robot-spare"])
            .status
            .success()
    });
}

#[test]
fn auth_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn auth_distributed() {
    scenario(Mode::Distributed);
}

#[test]
fn always_allow() {
    let c = start(Mode::Embedded, &["--authorization-mode", "AlwaysAllow"]);
    let alice = kubeconfig_for(&c, "alice", "alice-token");
    ok(&c, &alice, &["-n", "default", "get", "pods"]);
    assert_eq!(
        ok(&c, &alice, &["auth", "can-i", "delete", "nodes"]).trim(),
        "yes"
    );
    // Authentication still applies.
    let stranger = kubeconfig_for(&c, "stranger", "nope");
    let err = denied(&c, &stranger, &["get", "pods"]);
    assert!(err.contains("Unauthorized"), "{err}");
}

/// ClusterTrustBundleAttest (with the ClusterTrustBundle gate and
/// `certificates.k8s.io/v1beta1` on): a bundle that names a signer needs
/// `attest` on it; one without a signer does not.
#[test]
fn cluster_trust_bundle_attest() {
    let c = start(
        Mode::Embedded,
        &[
            "--feature-gates=ClusterTrustBundle=true",
            "--runtime-config=certificates.k8s.io/v1beta1=true",
        ],
    );
    let alice = kubeconfig_for(&c, "alice", "alice-token");
    c.ok(&[
        "create",
        "clusterrole",
        "bundles",
        "--verb=create,get,list",
        "--resource=clustertrustbundles.certificates.k8s.io",
    ]);
    c.ok(&[
        "create",
        "clusterrolebinding",
        "alice-bundles",
        "--clusterrole=bundles",
        "--user=alice",
    ]);
    let pem = std::fs::read_to_string(c.data_dir.join("pki/ca.crt")).expect("ca");
    let indented: String = pem.lines().map(|l| format!("    {l}\n")).collect();
    let bundle = |name: &str, signer: &str| {
        let signer = if signer.is_empty() {
            String::new()
        } else {
            format!("  signerName: {signer}\n")
        };
        format!("apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata: {{name: \"{name}\"}}\nspec:\n{signer}  trustBundle: |\n{indented}")
    };
    let apply = |name: &str, signer: &str| {
        let kc = format!("--kubeconfig={}", alice.display());
        c.kubectl_stdin(
            &[kc.as_str(), "create", "-f", "-"],
            Some(&bundle(name, signer)),
        )
    };
    // Alice may create bundles; one without a signer needs nothing more.
    eventually(Duration::from_secs(5), "alice's create grant", || {
        apply("plain", "").status.success()
    });
    let out = apply("example.com:signer:one", "example.com/signer");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        r#"Error from server (Forbidden): error when creating "STDIN": clustertrustbundles.certificates.k8s.io "example.com:signer:one" is forbidden: user not permitted to attest for signerName "example.com/signer""#
    );
    // `attest` on the domain's wildcard grants it.
    c.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: alice-attest-example}\nrules:\n- {apiGroups: [certificates.k8s.io], resources: [signers], verbs: [attest], resourceNames: [\"example.com/*\"]}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: alice-attest-example}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: alice-attest-example}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]\n",
    );
    eventually(Duration::from_secs(5), "alice's attest grant", || {
        apply("example.com:signer:one", "example.com/signer")
            .status
            .success()
    });
    let signer = c.ok(&[
        "get",
        "clustertrustbundle",
        "example.com:signer:one",
        "-o",
        "jsonpath={.spec.signerName}",
    ]);
    assert_eq!(signer, "example.com/signer");
}

/// A client certificate from a CA the server does not trust completes the
/// handshake, as kube's does, and is refused by authentication: `401`
/// (also on a public path, not anonymous), unless a bearer token
/// authenticates the request.
#[test]
fn foreign_client_certificate() {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let c = start(Mode::Embedded, &[]);
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::default();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "elsewhere-ca");
    let ca = ca.self_signed(&ca_key).expect("ca");
    let key = KeyPair::generate().expect("key");
    let mut leaf = CertificateParams::default();
    leaf.distinguished_name.push(DnType::CommonName, "mallory");
    leaf.distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    leaf.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let leaf = leaf.signed_by(&key, &ca, &ca_key).expect("leaf");
    let identity =
        reqwest::Identity::from_pem(format!("{}{}", leaf.pem(), key.serialize_pem()).as_bytes())
            .expect("identity");
    let client = |token: Option<&str>| {
        let mut b = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&c.ca_pem).expect("ca"))
            .identity(identity.clone());
        if let Some(t) = token {
            let mut h = reqwest::header::HeaderMap::new();
            h.insert(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {t}").parse().expect("header"),
            );
            b = b.default_headers(h);
        }
        b.build().expect("client")
    };
    let get = |client: reqwest::Client, path: &str| {
        block_on(async {
            let r = client
                .get(format!("{}{path}", c.url))
                .send()
                .await
                .expect("the handshake completes");
            let code = r.status().as_u16();
            (code, r.text().await.expect("body"))
        })
    };
    for path in ["/api/v1/namespaces", "/version"] {
        let (code, body) = get(client(None), path);
        assert_eq!(code, 401, "{path}: {body}");
        let status: serde_json::Value = serde_json::from_str(&body).expect("Status");
        assert_eq!(
            status,
            serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401,
            })
        );
    }
    // A bearer token still authenticates on such a connection.
    let (code, body) = get(client(Some("alice-token")), "/version");
    assert_eq!(code, 200, "{body}");
    let (code, body) = get(client(Some("nope")), "/version");
    assert_eq!(code, 401, "{body}");
    // The cluster's own certificate is unchanged.
    assert!(c.ok(&["auth", "whoami"]).contains("kubernetes-admin"));
}
