//! First-start credentials, all kept in the data directory: a CA, a
//! serving certificate, the admin's client certificate (CN
//! `kubernetes-admin`, O `system:masters`, as kubeadm's `admin.conf`), an
//! admin bearer token (a second admin user), the ServiceAccount token
//! signing key (`pki/sa.key`) and a kubeconfig.

use std::path::{Path, PathBuf};

use rand::Rng;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};

use crate::GatewayError;

/// What the gateway needs to serve TLS and check tokens.
pub struct Credentials {
    /// PEM of the CA certificate (written into the kubeconfig).
    pub ca_pem: String,
    /// PEM of the CA key (the `kube-apiserver-client` CSR signer).
    pub ca_key_pem: String,
    /// PEM chain of the serving certificate.
    pub cert_pem: String,
    /// PEM of the serving key.
    pub key_pem: String,
    /// The admin bearer token.
    pub token: String,
    /// PEM of the admin's client certificate and key.
    pub admin_cert_pem: String,
    pub admin_key_pem: String,
}

/// The admin client certificate's user (kubeadm's).
pub const ADMIN_USER: &str = "kubernetes-admin";

fn read_or_create(
    path: &Path,
    make: impl FnOnce() -> Result<String, GatewayError>,
) -> Result<String, GatewayError> {
    if let Ok(s) = std::fs::read_to_string(path) {
        if !s.trim().is_empty() {
            return Ok(s);
        }
    }
    let s = make()?;
    write_private(path, &s)?;
    Ok(s)
}

fn write_private(path: &Path, contents: &str) -> Result<(), GatewayError> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    opts.mode(0o600);
    let mut f = opts.open(path).map_err(|e| GatewayError::io(path, e))?;
    f.write_all(contents.as_bytes())
        .map_err(|e| GatewayError::io(path, e))
}

fn ca_params() -> CertificateParams {
    let mut p = CertificateParams::default();
    p.distinguished_name.push(DnType::CommonName, "keelson-ca");
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    p
}

/// Load (or create on first start) the CA and token, and issue a serving
/// certificate for `sans` signed by the CA.
pub fn load_or_create(data_dir: &Path, sans: &[String]) -> Result<Credentials, GatewayError> {
    let pki = data_dir.join("pki");
    std::fs::create_dir_all(&pki).map_err(|e| GatewayError::io(&pki, e))?;
    let tls = |e: rcgen::Error| GatewayError::Tls(e.to_string());

    let ca_key_pem = read_or_create(&pki.join("ca.key"), || {
        Ok(KeyPair::generate().map_err(tls)?.serialize_pem())
    })?;
    let ca_key = KeyPair::from_pem(&ca_key_pem).map_err(tls)?;
    // The CA certificate is rebuilt from fixed parameters and the persisted
    // key, so certificates it signs chain to the persisted ca.crt.
    let ca_cert = ca_params().self_signed(&ca_key).map_err(tls)?;
    let ca_pem = read_or_create(&pki.join("ca.crt"), || Ok(ca_cert.pem()))?;

    let mut params = CertificateParams::new(sans.to_vec()).map_err(tls)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "keelson-apiserver");
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().map_err(tls)?;
    let cert = params.signed_by(&key, &ca_cert, &ca_key).map_err(tls)?;
    let cert_pem = cert.pem();
    let key_pem = key.serialize_pem();
    write_private(&pki.join("serving.crt"), &cert_pem)?;
    write_private(&pki.join("serving.key"), &key_pem)?;

    // The admin's client certificate, re-issued on each start from its
    // persisted key.
    let admin_key_pem = read_or_create(&pki.join("admin.key"), || {
        Ok(KeyPair::generate().map_err(tls)?.serialize_pem())
    })?;
    let admin_key = KeyPair::from_pem(&admin_key_pem).map_err(tls)?;
    let mut admin = CertificateParams::default();
    admin
        .distinguished_name
        .push(DnType::CommonName, ADMIN_USER);
    admin
        .distinguished_name
        .push(DnType::OrganizationName, keelson_auth::user::MASTERS);
    admin.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    admin.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    admin.not_before = rcgen::date_time_ymd(2024, 1, 1);
    admin.not_after = rcgen::date_time_ymd(2124, 1, 1);
    let admin_cert_pem = admin
        .signed_by(&admin_key, &ca_cert, &ca_key)
        .map_err(tls)?
        .pem();
    write_private(&pki.join("admin.crt"), &admin_cert_pem)?;

    let token = read_or_create(&data_dir.join("admin-token"), || {
        let mut rng = rand::thread_rng();
        Ok((0..48)
            .map(|_| {
                let i = rng.gen_range(0..62u8);
                (match i {
                    0..=9 => b'0' + i,
                    10..=35 => b'a' + i - 10,
                    _ => b'A' + i - 36,
                }) as char
            })
            .collect())
    })?
    .trim()
    .to_string();

    Ok(Credentials {
        ca_pem,
        ca_key_pem,
        cert_pem,
        key_pem,
        token,
        admin_cert_pem,
        admin_key_pem,
    })
}

/// `--tls-cert-file`/`--tls-private-key-file` replace the generated
/// serving pair (the key in any of kube's PEM forms); returns the PEM of
/// `--client-ca-file` (empty without it).
pub fn apply_tls_files(
    creds: &mut Credentials,
    flags: &crate::TlsFileFlags,
) -> Result<String, GatewayError> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| GatewayError::io(p, e));
    match (&flags.tls_cert_file, &flags.tls_private_key_file) {
        (Some(cert), Some(key)) => {
            let cert_pem = read(cert)?;
            let key_pem = read(key)?;
            let key = serving_key(cert, key, &cert_pem, &key_pem).map_err(GatewayError::Tls)?;
            creds.cert_pem = cert_pem;
            creds.key_pem = key.to_pkcs8_pem();
        }
        (None, None) => {}
        _ => {
            return Err(GatewayError::Tls(
                "--tls-cert-file and --tls-private-key-file must be given together".into(),
            ))
        }
    }
    match &flags.client_ca_file {
        Some(p) => read(p),
        None => Ok(String::new()),
    }
}

/// The serving key of a cert/key file pair, with the errors kube-apiserver
/// reports (its `tls.X509KeyPair` messages, under `tls: `).
fn serving_key(
    cert_file: &Path,
    key_file: &Path,
    cert_pem: &str,
    key_pem: &str,
) -> Result<keelson_auth::keyutil::PrivateKey, String> {
    use keelson_auth::keyutil;
    if cert_pem.is_empty() || key_pem.is_empty() {
        return Err(format!(
            "missing content for serving cert \"serving-cert::{}::{}\"",
            cert_file.display(),
            key_file.display()
        ));
    }
    let certs = keyutil::pem_blocks(cert_pem);
    let Some(leaf) = certs.iter().find(|b| b.label == "CERTIFICATE") else {
        return Err("failed to find any PEM data in certificate input".into());
    };
    let blocks = keyutil::pem_blocks(key_pem);
    if blocks.is_empty() {
        return Err("failed to find any PEM data in key input".into());
    }
    if !blocks.iter().any(|b| b.label.ends_with("PRIVATE KEY")) {
        let skipped: Vec<&str> = blocks.iter().map(|b| b.label.as_str()).collect();
        return Err(format!(
            "failed to find PEM block with type ending in \"PRIVATE KEY\" in key input after skipping PEM blocks of the following types: [{}]",
            skipped.join(" ")
        ));
    }
    let key = keyutil::parse_private_key_pem(key_pem)
        .map_err(|_| "failed to parse private key".to_string())?;
    let leaf_spki = keyutil::certificate_spki(&leaf.der);
    if leaf_spki.as_deref() != Some(key.spki()) {
        return Err("private key does not match public key".into());
    }
    Ok(key)
}

/// The ServiceAccount token signing key: `<data-dir>/pki/sa.key`, created
/// on first start (a P-256 key).
pub fn service_account_key(data_dir: &Path) -> Result<PathBuf, GatewayError> {
    let pki = data_dir.join("pki");
    std::fs::create_dir_all(&pki).map_err(|e| GatewayError::io(&pki, e))?;
    let path = pki.join("sa.key");
    read_or_create(&path, || {
        Ok(keelson_auth::serviceaccount::generate_signing_key()?)
    })?;
    Ok(path)
}

/// Write `<data-dir>/kubeconfig` pointing at `server` with the CA: the
/// current context authenticates by the admin client certificate; the
/// `keelson-token` context by the admin bearer token.
pub fn write_kubeconfig(
    data_dir: &Path,
    server: &str,
    creds: &Credentials,
) -> Result<PathBuf, GatewayError> {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let ca = b64(&creds.ca_pem);
    let (cert, key) = (b64(&creds.admin_cert_pem), b64(&creds.admin_key_pem));
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: keelson\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\ncontexts:\n- name: keelson\n  context:\n    cluster: keelson\n    user: {ADMIN_USER}\n    namespace: default\n- name: keelson-token\n  context:\n    cluster: keelson\n    user: keelson-admin\n    namespace: default\ncurrent-context: keelson\nusers:\n- name: {ADMIN_USER}\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\n- name: keelson-admin\n  user:\n    token: {token}\npreferences: {{}}\n",
        token = creds.token
    );
    let path = data_dir.join("kubeconfig");
    write_private(&path, &kubeconfig)?;
    Ok(path)
}
