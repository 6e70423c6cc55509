//! CertificateSubjectRestriction
//! (`plugin/pkg/admission/certificates/subjectrestriction`): a
//! CertificateSigningRequest for the `kubernetes.io/kube-apiserver-client`
//! signer may not ask for the `system:masters` group, which no RBAC rule
//! could take back from the certificate it would yield.

use base64::Engine as _;
use keelson_api::Operation;
use keelson_apimachinery::ApiResult;
use keelson_auth::csr::{request_organizations, KUBE_APISERVER_CLIENT};
use serde_json::Value;

use super::util::str_at;
use super::Attrs;

/// The validating phase: creates of `certificatesigningrequests` only.
pub(crate) fn subject_restriction(a: &Attrs<'_>, csr: &Value) -> ApiResult<()> {
    if a.req.operation != Operation::Create
        || !a.is("certificates.k8s.io", "certificatesigningrequests")
        || str_at(csr, &["spec", "signerName"]) != KUBE_APISERVER_CLIENT
    {
        return Ok(());
    }
    // Validation already refused a request that is not base64 PEM.
    let pem = base64::engine::general_purpose::STANDARD
        .decode(str_at(csr, &["spec", "request"]))
        .unwrap_or_default();
    let groups = request_organizations(&pem)
        .map_err(|e| a.forbidden(&format!("failed to parse CSR: {e}")))?;
    if groups.iter().any(|g| g == "system:masters") {
        return Err(a.forbidden(&format!(
            "use of {KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed"
        )));
    }
    Ok(())
}
