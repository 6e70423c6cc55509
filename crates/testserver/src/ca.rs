//! The process's test CA, made once: every test server gets the same CA,
//! admin key and ServiceAccount signing key (written into its data
//! directory, which Keelson reads instead of generating its own), so a
//! start generates one key (the serving one) instead of four.

use std::path::Path;
use std::sync::OnceLock;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};

use crate::TestServerError;

/// The CA and the keys shared by this process's test servers.
pub(crate) struct TestCa {
    ca_pem: String,
    ca_key_pem: String,
    sa_key_pem: String,
    admin_key_pem: String,
    token: String,
}

static CA: OnceLock<Result<TestCa, String>> = OnceLock::new();

impl TestCa {
    /// The process's CA, made on first use.
    pub(crate) fn get() -> Result<&'static TestCa, TestServerError> {
        CA.get_or_init(|| TestCa::generate().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| TestServerError::Start(format!("test CA: {e}")))
    }

    fn generate() -> Result<TestCa, rcgen::Error> {
        let ca_key = KeyPair::generate()?;
        let mut p = CertificateParams::default();
        // Keelson's own CA parameters: it re-derives the issuer from them
        // and the key, so certificates it signs chain to this `ca.crt`.
        p.distinguished_name.push(DnType::CommonName, "keelson-ca");
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = p.self_signed(&ca_key)?;
        // A bearer token for Keelson's second admin user; unused by the
        // clients here, but present so Keelson does not make one.
        let token = format!(
            "testserver{:x}{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        Ok(TestCa {
            ca_pem: ca_cert.pem(),
            ca_key_pem: ca_key.serialize_pem(),
            sa_key_pem: KeyPair::generate()?.serialize_pem(),
            admin_key_pem: KeyPair::generate()?.serialize_pem(),
            token,
        })
    }

    /// Lay out `<data_dir>/pki` and the token as Keelson keeps them.
    pub(crate) fn write_into(&self, data_dir: &Path) -> Result<(), TestServerError> {
        let pki = data_dir.join("pki");
        std::fs::create_dir_all(&pki)?;
        std::fs::write(pki.join("ca.key"), &self.ca_key_pem)?;
        std::fs::write(pki.join("ca.crt"), &self.ca_pem)?;
        std::fs::write(pki.join("admin.key"), &self.admin_key_pem)?;
        std::fs::write(pki.join("sa.key"), &self.sa_key_pem)?;
        std::fs::write(data_dir.join("admin-token"), &self.token)?;
        Ok(())
    }
}
