//! Keelson as envtest's `kube-apiserver` (and `etcd`): the start sequence
//! controller-runtime's envtest runs — TinyCA certificates (ECDSA P-256,
//! SEC1 keys) in the cert dir, its argv, the `--help` flag probe, the
//! `/healthz` poll over HTTPS — then kubectl with a `system:masters`
//! client certificate. Also the key formats kube accepts, with keys made
//! by `openssl`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const KEELSON: &str = env!("CARGO_BIN_EXE_keelson");

/// Kills the process when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl");
    assert!(out.status.success(), "openssl {args:?}: {out:?}");
}

/// A PKCS#8 PEM key rewritten as SEC1 (`EC PRIVATE KEY`), as Go's
/// `keyutil.MarshalPrivateKeyToPEM` writes ECDSA keys.
fn write_sec1(dir: &Path, name: &str, pkcs8: &str) {
    let tmp = format!("{name}.pkcs8");
    std::fs::write(dir.join(&tmp), pkcs8).expect("write");
    openssl(dir, &["ec", "-in", &tmp, "-out", name]);
    let text = std::fs::read_to_string(dir.join(name)).expect("read");
    assert!(text.contains("BEGIN EC PRIVATE KEY"), "{text}");
}

/// controller-runtime's TinyCA: a self-signed P-256 CA.
struct TinyCa {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl TinyCa {
    fn new(cn: &str) -> TinyCa {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut p = rcgen::CertificateParams::default();
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
            rcgen::KeyUsagePurpose::KeyEncipherment,
        ];
        let cert = p.self_signed(&key).expect("ca");
        TinyCa { cert, key }
    }

    /// (cert PEM, key PKCS#8 PEM) signed by this CA.
    fn issue(&self, cn: &str, orgs: &[&str], sans: &[&str], server: bool) -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut p =
            rcgen::CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .expect("params");
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        for o in orgs {
            p.distinguished_name
                .push(rcgen::DnType::OrganizationName, *o);
        }
        p.extended_key_usages = vec![if server {
            rcgen::ExtendedKeyUsagePurpose::ServerAuth
        } else {
            rcgen::ExtendedKeyUsagePurpose::ClientAuth
        }];
        let cert = p.signed_by(&key, &self.cert, &self.key).expect("sign");
        (cert.pem(), key.serialize_pem())
    }
}

/// What envtest prepares: the cert dir and the kubeconfig of its admin.
struct Prepared {
    dir: tempfile::TempDir,
    serving_ca: String,
    kubeconfig: PathBuf,
    port: u16,
}

fn prepare() -> Prepared {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // populateAPIServerCerts: serving pair from one TinyCA, the
    // ServiceAccount signer another TinyCA's own cert and key.
    let serving = TinyCa::new("envtest-serving");
    let (crt, key) = serving.issue("localhost", &[], &["localhost", "127.0.0.1"], true);
    std::fs::write(d.join("apiserver.crt"), crt).expect("write");
    write_sec1(d, "apiserver.key", &key);
    let sa = TinyCa::new("envtest-sa");
    std::fs::write(d.join("sa-signer.crt"), sa.cert.pem()).expect("write");
    write_sec1(d, "sa-signer.key", &sa.key.serialize_pem());
    // CertAuthn: a client CA, and a system:masters user from it.
    let clients = TinyCa::new("envtest-client-ca");
    std::fs::write(d.join("client-cert-auth-ca.crt"), clients.cert.pem()).expect("write");
    let (ucrt, ukey) = clients.issue("envtest-admin", &["system:masters"], &[], false);
    let port = free_port();
    let b64 = |s: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(s)
    };
    let kubeconfig = d.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority-data: {}\nusers:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: admin\ncurrent-context: envtest\n",
            b64(&serving.cert.pem()),
            b64(&ucrt),
            b64(&ukey)
        ),
    )
    .expect("kubeconfig");
    Prepared {
        serving_ca: serving.cert.pem(),
        dir,
        kubeconfig,
        port,
    }
}

/// envtest's argv (controller-runtime's defaultArgs, CertAuthn's flags).
fn envtest_args(p: &Prepared, etcd_url: &str) -> Vec<String> {
    let d = p.dir.path().display().to_string();
    let port = p.port;
    vec![
        "--advertise-address=127.0.0.1".into(),
        "--service-cluster-ip-range=10.0.0.0/24".into(),
        "--allow-privileged=true".into(),
        "--disable-admission-plugins=ServiceAccount".into(),
        format!("--cert-dir={d}"),
        "--authorization-mode=RBAC".into(),
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".into(),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!("--service-account-key-file={d}/sa-signer.crt"),
        format!("--service-account-signing-key-file={d}/sa-signer.key"),
        format!("--etcd-servers={etcd_url}"),
        format!("--client-ca-file={d}/client-cert-auth-ca.crt"),
    ]
}

/// envtest's `CheckFlag("insecure-port")`: `--help` lists the flags and
/// not `--insecure-port` (kube 1.24+ has none).
fn check_help(bin: &Path, pre: &[&str]) {
    let out = Command::new(bin)
        .args(pre)
        .arg("--help")
        .output()
        .expect("help");
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8_lossy(&out.stdout);
    for f in [
        "--secure-port",
        "--etcd-servers",
        "--cert-dir",
        "--client-ca-file",
    ] {
        assert!(help.contains(f), "{f} missing from --help:\n{help}");
    }
    assert!(!help.contains("insecure-port"), "{help}");
}

fn wait_healthz(p: &Prepared, proc_: &mut Proc) {
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(p.serving_ca.as_bytes()).expect("ca"))
        .build()
        .expect("client");
    let url = format!("https://127.0.0.1:{}/healthz", p.port);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = proc_.0.try_wait() {
            panic!("kube-apiserver exited: {status}");
        }
        let got = rt.block_on(async {
            let r = client.get(&url).send().await.ok()?;
            let code = r.status().as_u16();
            Some((code, r.text().await.ok()?))
        });
        if let Some((200, body)) = &got {
            assert_eq!(body, "ok");
            return;
        }
        assert!(Instant::now() < deadline, "no /healthz 200: {got:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn kubectl(kubectl: &Path, p: &Prepared, args: &[&str]) -> Output {
    Command::new(kubectl)
        .arg(format!("--kubeconfig={}", p.kubeconfig.display()))
        .args(args)
        .output()
        .expect("kubectl")
}

fn configmap_round_trip(kubectl_bin: &Path, p: &Prepared) {
    let out = kubectl(
        kubectl_bin,
        p,
        &["create", "configmap", "envtest-cm", "--from-literal=a=b"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "configmap/envtest-cm created"
    );
    let out = kubectl(kubectl_bin, p, &["get", "configmaps", "-o", "name"]);
    assert!(out.status.success(), "{out:?}");
    let names = String::from_utf8_lossy(&out.stdout);
    assert!(
        names.lines().any(|l| l == "configmap/envtest-cm"),
        "{names}"
    );
    let out = kubectl(
        kubectl_bin,
        p,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "envtest-admin");
}

fn spawn(bin: &Path, args: &[String]) -> Proc {
    Proc(
        Command::new(bin)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn"),
    )
}

fn kubectl_on_path() -> PathBuf {
    PathBuf::from("kubectl")
}

/// envtest with its etcd replaced by Keelson's stand-in: Keelson keeps the
/// data itself.
#[test]
fn envtest_start_sequence_with_etcd_standin() {
    let p = prepare();
    let etcd_port = free_port();
    let etcd_url = format!("http://127.0.0.1:{etcd_port}");
    let _etcd = spawn(
        Path::new(KEELSON),
        &[
            "etcd".into(),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--data-dir={}/etcd", p.dir.path().display()),
        ],
    );
    check_help(Path::new(KEELSON), &["kube-apiserver"]);
    let mut args = vec!["kube-apiserver".to_string()];
    args.extend(envtest_args(&p, &etcd_url));
    let mut api = spawn(Path::new(KEELSON), &args);
    wait_healthz(&p, &mut api);
    configmap_round_trip(&kubectl_on_path(), &p);
    // The stand-in answers etcd's health check and nothing else.
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let (health, other) = rt.block_on(async {
        let h = reqwest::get(format!("{etcd_url}/health"))
            .await
            .expect("health");
        let o = reqwest::get(format!("{etcd_url}/v3/kv/range"))
            .await
            .expect("other");
        (h.text().await.expect("body"), o.status().as_u16())
    });
    assert_eq!(health, "{\"health\":\"true\"}");
    assert_eq!(other, 501);
    // Keelson stored the object itself, not on the stand-in, and in
    // memory: no sled store in the data directory.
    assert!(!p.dir.path().join("keelson-data/store").exists());
}

const PRIVILEGED_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: priv\nspec:\n  containers:\n  - name: c\n    image: busybox\n    securityContext:\n      privileged: true\n";

/// `kubectl create -f -` of `yaml`.
fn kubectl_create(p: &Prepared, yaml: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(kubectl_on_path())
        .arg(format!("--kubeconfig={}", p.kubeconfig.display()))
        .args(["create", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(yaml.as_bytes())
        .expect("write");
    child.wait_with_output().expect("kubectl")
}

/// `--admission-control-config-file`: PodSecurity's defaults and
/// exemptions from kube's `AdmissionConfiguration` (a `path` entry beside
/// the file), and a file that does not parse stopping the start with
/// kube's error.
#[test]
fn admission_control_config_file() {
    let p = prepare();
    let d = p.dir.path();
    std::fs::write(
        d.join("admission.yaml"),
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: podsecurity.yaml\n",
    )
    .expect("write");
    std::fs::write(
        d.join("podsecurity.yaml"),
        "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\nexemptions:\n  namespaces: [kube-system]\n",
    )
    .expect("write");
    let mut args = vec!["kube-apiserver".to_string()];
    args.extend(
        envtest_args(&p, "")
            .into_iter()
            .filter(|a| !a.starts_with("--etcd-servers")),
    );
    args.push(format!(
        "--admission-control-config-file={}",
        d.join("admission.yaml").display()
    ));
    let mut api = spawn(Path::new(KEELSON), &args);
    wait_healthz(&p, &mut api);
    let out = kubectl_create(&p, PRIVILEGED_POD);
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (Forbidden): error when creating \"STDIN\": pods \"priv\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"c\" must not set securityContext.privileged=true)"
    );
    let exempt = PRIVILEGED_POD.replace("name: priv\n", "name: priv\n  namespace: kube-system\n");
    let out = kubectl_create(&p, &exempt);
    assert!(out.status.success(), "{out:?}");
    drop(api);
    // A configuration of the wrong kind: kube-apiserver's start error.
    std::fs::write(
        d.join("admission.yaml"),
        "apiVersion: apiserver.config.k8s.io/v1\nkind: Nope\n",
    )
    .expect("write");
    let out = Command::new(KEELSON).args(&args).output().expect("keelson");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no kind \"Nope\" is registered for version \"apiserver.config.k8s.io/v1\""),
        "{err}"
    );
}

/// kube-apiserver's `--allow-privileged`: envtest passes `true` and a
/// privileged container is created; without the flag kube-apiserver's
/// default (`false`) refuses it with kube's 422.
#[test]
fn allow_privileged_is_kube_apiservers_flag() {
    for (allow, want) in [(true, Ok(())), (false, Err(()))] {
        let p = prepare();
        let mut args = vec!["kube-apiserver".to_string()];
        args.extend(
            envtest_args(&p, "")
                .into_iter()
                .filter(|a| !a.starts_with("--etcd-servers"))
                .filter(|a| allow || !a.starts_with("--allow-privileged")),
        );
        let mut api = spawn(Path::new(KEELSON), &args);
        wait_healthz(&p, &mut api);
        let out = kubectl_create(&p, PRIVILEGED_POD);
        match want {
            Ok(()) => {
                assert!(out.status.success(), "{out:?}");
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout).trim(),
                    "pod/priv created"
                );
            }
            Err(()) => {
                assert!(!out.status.success(), "{out:?}");
                assert_eq!(
                    String::from_utf8_lossy(&out.stderr).trim(),
                    "The Pod \"priv\" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy"
                );
            }
        }
    }
}

/// `KUBEBUILDER_ASSETS` laid out by `keelson envtest-assets`, used the way
/// envtest uses it: `$DIR/etcd`, `$DIR/kube-apiserver`, `$DIR/kubectl`.
#[test]
fn envtest_through_kubebuilder_assets() {
    let p = prepare();
    let assets = p.dir.path().join("assets");
    let out = Command::new(KEELSON)
        .args(["envtest-assets", &assets.display().to_string()])
        .output()
        .expect("assets");
    assert!(out.status.success(), "{out:?}");
    for b in ["kube-apiserver", "etcd", "kubectl"] {
        assert!(assets.join(b).exists(), "{b}");
    }
    let etcd_url = format!("http://127.0.0.1:{}", free_port());
    let _etcd = spawn(
        &assets.join("etcd"),
        &[format!("--listen-client-urls={etcd_url}")],
    );
    check_help(&assets.join("kube-apiserver"), &[]);
    let mut api = spawn(&assets.join("kube-apiserver"), &envtest_args(&p, &etcd_url));
    wait_healthz(&p, &mut api);
    configmap_round_trip(&assets.join("kubectl"), &p);
}

/// With a real etcd (what envtest starts), Keelson stores on it.
#[test]
fn envtest_on_real_etcd() {
    if Command::new("etcd").arg("--version").output().is_err() {
        eprintln!("no etcd on PATH; skipped");
        return;
    }
    let p = prepare();
    let (cport, pport) = (free_port(), free_port());
    let etcd_url = format!("http://127.0.0.1:{cport}");
    let _etcd = spawn(
        Path::new("etcd"),
        &[
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls=http://127.0.0.1:{pport}"),
            format!("--initial-advertise-peer-urls=http://127.0.0.1:{pport}"),
            format!("--initial-cluster=default=http://127.0.0.1:{pport}"),
            format!("--data-dir={}/etcd", p.dir.path().display()),
            "--unsafe-no-fsync".into(),
        ],
    );
    let mut args = vec!["kube-apiserver".to_string()];
    args.extend(envtest_args(&p, &etcd_url));
    let mut api = spawn(Path::new(KEELSON), &args);
    wait_healthz(&p, &mut api);
    configmap_round_trip(&kubectl_on_path(), &p);
    let out = Command::new("etcdctl")
        .args([
            &format!("--endpoints={etcd_url}"),
            "get",
            "/registry/configmaps/default/envtest-cm",
            "--keys-only",
        ])
        .output();
    if let Ok(out) = out {
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .contains("/registry/configmaps/default/envtest-cm"),
            "{out:?}"
        );
    }
}

/// A flag kube-apiserver does not have: kube's error, exit 1. One kube
/// has but Keelson does not implement: a warning naming it.
#[test]
fn unknown_and_unimplemented_flags() {
    let out = Command::new(KEELSON)
        .args(["kube-apiserver", "--no-such-flag=1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error: unknown flag: --no-such-flag"
    );
    let out = Command::new(KEELSON)
        .args(["kube-apiserver", "--version"])
        .output()
        .expect("run");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Kubernetes v1.34.1\n");
    let p = prepare();
    let d = p.dir.path().display().to_string();
    // A malformed signing key stops the start after the warnings.
    std::fs::write(p.dir.path().join("bad.key"), "not a key\n").expect("write");
    let out = Command::new(KEELSON)
        .args([
            "kube-apiserver".to_string(),
            format!("--cert-dir={d}"),
            "--secure-port=0".into(),
            "--enable-admission-plugins=NodeRestriction".into(),
            format!("--service-account-signing-key-file={d}/bad.key"),
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("admission plugin enabled but not implemented by Keelson")
            && err.contains("NodeRestriction"),
        "{err}"
    );
    assert!(
        err.lines().any(|l| l
            == format!("Error: failed to parse service-account-issuer-key-file: error reading private key file {d}/bad.key: data does not contain a valid RSA or ECDSA private key")),
        "{err}"
    );
}

/// Start plain `keelson` with a signing key and key file in `fmt` and wait
/// for `serving on`; returns the process's output if it exits.
fn start_with_keys(dir: &Path, signing: &str, verify: &str) -> Result<Proc, String> {
    use std::io::BufRead;
    let mut child = Command::new(KEELSON)
        .args([
            format!("--data-dir={}/data-{signing}", dir.display()),
            "--secure-port=0".into(),
            format!(
                "--service-account-signing-key-file={}/{signing}",
                dir.display()
            ),
            format!("--service-account-key-file={}/{verify}", dir.display()),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if line.starts_with("serving on https://") {
            return Ok(Proc(child));
        }
    }
    let out = child.wait_with_output().expect("wait");
    Err(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Every private key format kube reads signs, and every public form
/// verifies; a garbage key file gets kube's message and exit 1.
#[test]
fn service_account_keys_in_kube_formats() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    openssl(
        d,
        &["genrsa", "-traditional", "-out", "rsa-pkcs1.key", "2048"],
    );
    openssl(
        d,
        &[
            "pkcs8",
            "-topk8",
            "-nocrypt",
            "-in",
            "rsa-pkcs1.key",
            "-out",
            "rsa-pkcs8.key",
        ],
    );
    openssl(
        d,
        &[
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-out",
            "ec-sec1.key",
        ],
    );
    openssl(
        d,
        &[
            "pkcs8",
            "-topk8",
            "-nocrypt",
            "-in",
            "ec-sec1.key",
            "-out",
            "ec-pkcs8.key",
        ],
    );
    openssl(
        d,
        &["rsa", "-in", "rsa-pkcs1.key", "-pubout", "-out", "rsa.pub"],
    );
    openssl(
        d,
        &[
            "rsa",
            "-in",
            "rsa-pkcs1.key",
            "-RSAPublicKey_out",
            "-out",
            "rsa-pkcs1.pub",
        ],
    );
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-key",
            "ec-sec1.key",
            "-subj",
            "/CN=sa",
            "-days",
            "1",
            "-out",
            "ec.crt",
        ],
    );
    let pkcs1 = std::fs::read_to_string(d.join("rsa-pkcs1.key")).expect("read");
    assert!(pkcs1.starts_with("-----BEGIN RSA PRIVATE KEY-----"));
    for (signing, verify) in [
        ("rsa-pkcs1.key", "rsa-pkcs1.pub"),
        ("rsa-pkcs8.key", "rsa.pub"),
        ("ec-sec1.key", "ec.crt"),
        ("ec-pkcs8.key", "rsa-pkcs1.key"),
    ] {
        if let Err(e) = start_with_keys(d, signing, verify) {
            panic!("{signing} / {verify}: {e}");
        }
    }
    std::fs::write(
        d.join("garbage.pub"),
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    )
    .expect("write");
    let err = match start_with_keys(d, "ec-sec1.key", "garbage.pub") {
        Ok(_) => panic!("started with a garbage key file"),
        Err(e) => e,
    };
    let path = d.join("garbage.pub").display().to_string();
    assert!(
        err.contains(&format!("failed to parse key file {path:?}: error reading public key file {path}: data does not contain any valid RSA or ECDSA public keys")),
        "{err}"
    );
}

/// Without envtest's certificates, kube's behaviour: a self-signed
/// `apiserver.crt`/`apiserver.key` is written into `--cert-dir` and served.
#[test]
fn cert_dir_gets_a_self_signed_pair() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut api = spawn(
        Path::new(KEELSON),
        &[
            "kube-apiserver".into(),
            format!("--cert-dir={}", dir.path().display()),
            format!("--secure-port={port}"),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.path().join("apiserver.key").exists() {
        assert!(Instant::now() < deadline, "no apiserver.key");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    let p = Prepared {
        serving_ca: std::fs::read_to_string(dir.path().join("apiserver.crt")).expect("crt"),
        kubeconfig: dir.path().join("unused"),
        dir,
        port,
    };
    wait_healthz(&p, &mut api);
}

/// Serving pairs: a PKCS#1 RSA key serves; a bad or mismatched key stops
/// the start with Go's `tls.X509KeyPair` wording, as kube-apiserver's.
#[test]
fn serving_key_formats_and_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    openssl(d, &["genrsa", "-traditional", "-out", "tls.key", "2048"]);
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-key",
            "tls.key",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
            "-days",
            "1",
            "-out",
            "tls.crt",
        ],
    );
    openssl(
        d,
        &[
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-noout",
            "-out",
            "other.key",
        ],
    );
    std::fs::write(d.join("garbage.key"), "nothing here\n").expect("write");
    let port = free_port();
    let run = |key: &str| {
        Command::new(KEELSON)
            .args([
                "kube-apiserver".to_string(),
                format!("--cert-dir={}", d.display()),
                "--secure-port=0".to_string(),
                format!("--tls-cert-file={}/tls.crt", d.display()),
                format!("--tls-private-key-file={}/{key}", d.display()),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    for (key, want) in [
        (
            "garbage.key",
            "Error: tls: failed to find any PEM data in key input",
        ),
        (
            "other.key",
            "Error: tls: private key does not match public key",
        ),
    ] {
        let out = run(key).wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(1), "{key}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.lines().any(|l| l == want), "{key}: {err}");
    }
    let mut api = Proc(
        Command::new(KEELSON)
            .args([
                "kube-apiserver".to_string(),
                format!("--cert-dir={}", d.display()),
                format!("--secure-port={port}"),
                format!("--tls-cert-file={}/tls.crt", d.display()),
                format!("--tls-private-key-file={}/tls.key", d.display()),
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn"),
    );
    let p = Prepared {
        serving_ca: std::fs::read_to_string(d.join("tls.crt")).expect("crt"),
        kubeconfig: d.join("unused"),
        dir,
        port,
    };
    wait_healthz(&p, &mut api);
}
