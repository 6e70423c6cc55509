//! The `kubernetes.io/kube-apiserver-client` signer: a client certificate
//! from the cluster CA for an approved CertificateSigningRequest (the
//! subject's CN and O become the user and groups, as x509 authentication
//! reads them).

use crate::authn::AuthnError;

/// The signer Keelson serves.
pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
/// kube-controller-manager's `--cluster-signing-duration` default (1 year).
pub const MAX_DURATION_SECONDS: i64 = 365 * 24 * 3600;
/// kube backdates issued certificates by 5 minutes (clock skew).
const BACKDATE_SECONDS: i64 = 5 * 60;

fn err(what: &str, e: impl std::fmt::Display) -> AuthnError {
    AuthnError::Key(format!("{what}: {e}"))
}

/// Sign the PEM CSR `csr_pem` with the CA (`ca_cert_pem`, `ca_key_pem`):
/// a client certificate (`ClientAuth`) valid from 5 minutes before `now`
/// for `expiration_seconds` (at most a year; a year when absent). The
/// CSR's signature is checked. Returns the certificate PEM.
pub fn sign_client_certificate(
    csr_pem: &str,
    ca_cert_pem: &str,
    ca_key_pem: &str,
    now: i64,
    expiration_seconds: Option<i64>,
) -> Result<String, AuthnError> {
    let ca_key = rcgen::KeyPair::from_pem(ca_key_pem).map_err(|e| err("CA key", e))?;
    let ca = rcgen::CertificateParams::from_ca_cert_pem(ca_cert_pem)
        .map_err(|e| err("CA certificate", e))?
        .self_signed(&ca_key)
        .map_err(|e| err("CA certificate", e))?;
    let mut csr = rcgen::CertificateSigningRequestParams::from_pem(csr_pem)
        .map_err(|e| err("invalid certificate request", e))?;
    let duration = expiration_seconds
        .unwrap_or(MAX_DURATION_SECONDS)
        .clamp(600, MAX_DURATION_SECONDS);
    let at = |t: i64| time::OffsetDateTime::from_unix_timestamp(t).map_err(|e| err("time", e));
    let p = &mut csr.params;
    p.not_before = at(now - BACKDATE_SECONDS)?;
    p.not_after = at(now + duration)?;
    p.is_ca = rcgen::IsCa::NoCa;
    p.key_usages = vec![
        rcgen::KeyUsagePurpose::DigitalSignature,
        rcgen::KeyUsagePurpose::KeyEncipherment,
    ];
    p.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    p.subject_alt_names.clear();
    p.serial_number = Some(rcgen::SerialNumber::from_slice(
        uuid::Uuid::new_v4().as_bytes(),
    ));
    let cert = csr.signed_by(&ca, &ca_key).map_err(|e| err("signing", e))?;
    Ok(cert.pem())
}

/// The subject organizations (the groups a certificate for it would carry)
/// of the PEM certificate request `csr_pem`, as kube's `ParseCSR` reads
/// them: the first PEM block must be a `CERTIFICATE REQUEST`. The error is
/// kube's text for a wrong block, x509-parser's for bad DER.
pub fn request_organizations(csr_pem: &[u8]) -> Result<Vec<String>, String> {
    use x509_parser::prelude::FromDer;
    let pem = match x509_parser::pem::parse_x509_pem(csr_pem) {
        Ok((_, pem)) if pem.label == "CERTIFICATE REQUEST" => pem,
        _ => return Err("PEM block type must be CERTIFICATE REQUEST".to_string()),
    };
    let (_, csr) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&pem.contents)
            .map_err(|e| e.to_string())?;
    Ok(csr
        .certification_request_info
        .subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_a_client_certificate() {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut cap = rcgen::CertificateParams::default();
        cap.distinguished_name.push(rcgen::DnType::CommonName, "ca");
        cap.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = cap.self_signed(&ca_key).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::default();
        p.distinguished_name.push(rcgen::DnType::CommonName, "jane");
        p.distinguished_name
            .push(rcgen::DnType::OrganizationName, "devs");
        let csr = p.serialize_request(&key).unwrap().pem().unwrap();
        let now = chrono::Utc::now().timestamp();
        let pem =
            sign_client_certificate(&csr, &ca.pem(), &ca_key.serialize_pem(), now, Some(3600))
                .unwrap();
        let (_, der) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
        let u = crate::authn::user_from_certificate(&der.contents).unwrap();
        assert_eq!(
            (u.name.as_str(), u.groups.clone()),
            ("jane", vec!["devs".to_string()])
        );
        assert_eq!(
            request_organizations(csr.as_bytes()),
            Ok(vec!["devs".to_string()])
        );
        assert_eq!(
            request_organizations(pem.as_bytes()),
            Err("PEM block type must be CERTIFICATE REQUEST".to_string())
        );
        assert!(
            sign_client_certificate("junk", &ca.pem(), &ca_key.serialize_pem(), now, None).is_err()
        );
    }
}
