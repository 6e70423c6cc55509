//! kube's CertificateSigningRequest admission plugins
//! (`plugin/pkg/admission/certificates/*`):
//! - CertificateApproval: approving or denying (`/approval`) needs the
//!   `approve` verb on the request's signer;
//! - CertificateSigning: setting the certificate or conditions through
//!   `/status` needs the `sign` verb on it;
//! - ClusterTrustBundleAttest: a ClusterTrustBundle that names a signer
//!   needs the `attest` verb on it;
//! - CertificateSubjectRestriction: a request for the
//!   `kubernetes.io/kube-apiserver-client` signer may not ask for the
//!   `system:masters` group, which no RBAC rule could take back from the
//!   certificate it would yield.

use base64::Engine as _;
use keelson_api::Operation;
use keelson_apimachinery::ApiResult;
use keelson_auth::csr::{request_organizations, KUBE_APISERVER_CLIENT};
use keelson_cel::library::authz::Check;
use serde_json::Value;

use super::util::str_at;
use super::Attrs;

/// An update of `certificatesigningrequests/<subresource>`.
fn csr_update(a: &Attrs<'_>, subresource: &str) -> bool {
    a.req.operation == Operation::Update
        && a.req.subresource == subresource
        && a.req.gr.group == "certificates.k8s.io"
        && a.req.gr.resource == "certificatesigningrequests"
}

/// The stored request's signer: kube checks the *old* object, so an
/// update cannot dodge the check by changing `spec.signerName`.
fn old_signer<'a>(a: &'a Attrs<'_>) -> &'a str {
    a.req
        .old_object
        .as_ref()
        .map(|o| str_at(o, &["spec", "signerName"]))
        .unwrap_or_default()
}

/// `IsAuthorizedForSignerName`: `verb` on `signers` named by `signer`,
/// else on its domain's wildcard `<domain>/*`.
async fn authorized_for_signer(a: &Attrs<'_>, verb: &str, signer: &str) -> bool {
    let check = |name: String| Check {
        user: crate::policy::user_of(a.req.user.as_ref()),
        verb: verb.to_string(),
        resource_request: true,
        group: "certificates.k8s.io".into(),
        version: "*".into(),
        resource: "signers".into(),
        name,
        ..Check::default()
    };
    if a.authz.allows(a.store, &check(signer.to_string())).await {
        return true;
    }
    let domain = signer.split('/').next().unwrap_or_default();
    a.authz.allows(a.store, &check(format!("{domain}/*"))).await
}

/// CertificateApproval: updates of `/approval` only.
pub(crate) async fn approval(a: &Attrs<'_>) -> ApiResult<()> {
    if !csr_update(a, "approval") {
        return Ok(());
    }
    let signer = old_signer(a);
    if !authorized_for_signer(a, "approve", signer).await {
        return Err(a.forbidden(&format!(
            "user not permitted to approve requests with signerName {signer:?}"
        )));
    }
    Ok(())
}

/// kube's `ClusterTrustBundle` feature gate (beta, off in 1.34): without
/// it ClusterTrustBundleAttest does nothing.
const CLUSTER_TRUST_BUNDLE_GATE: &str = "ClusterTrustBundle";

/// ClusterTrustBundleAttest: creates and updates of `clustertrustbundles`
/// with a `spec.signerName` (the *new* one: validation refuses changing
/// it), except updates that change only the garbage collector's fields.
pub(crate) async fn attest(a: &Attrs<'_>, bundle: &Value) -> ApiResult<()> {
    if !matches!(a.req.operation, Operation::Create | Operation::Update)
        || !a.is("certificates.k8s.io", "clustertrustbundles")
        || !keelson_apimachinery::featuregates::FeatureGates::global()
            .enabled(CLUSTER_TRUST_BUNDLE_GATE)
    {
        return Ok(());
    }
    let signer = str_at(bundle, &["spec", "signerName"]);
    if signer.is_empty() {
        return Ok(());
    }
    if a.req.operation == Operation::Update
        && a.req
            .old_object
            .as_ref()
            .is_some_and(|old| only_gc_fields_changed(bundle, old))
    {
        return Ok(());
    }
    if !authorized_for_signer(a, "attest", signer).await {
        return Err(a.forbidden(&format!(
            "user not permitted to attest for signerName {signer:?}"
        )));
    }
    Ok(())
}

/// kube's `rbac.IsOnlyMutatingGCFields`: `new` equals `old` once its
/// ownerReferences, finalizers, selfLink and managedFields are `old`'s.
fn only_gc_fields_changed(new: &Value, old: &Value) -> bool {
    const GC_FIELDS: &[&str] = &["ownerReferences", "finalizers", "selfLink", "managedFields"];
    let strip = |o: &Value| {
        let mut o = o.clone();
        if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            for f in GC_FIELDS {
                meta.remove(*f);
            }
        }
        o
    };
    strip(new) == strip(old)
}

/// CertificateSigning: updates of `/status` that change the certificate
/// or the conditions (an absent list equals an empty one, as Go's
/// semantic equality has it).
pub(crate) async fn signing(a: &Attrs<'_>, csr: &Value) -> ApiResult<()> {
    if !csr_update(a, "status") {
        return Ok(());
    }
    let status = |o: Option<&Value>, field: &str| -> Value {
        match o.and_then(|o| o.pointer(&format!("/status/{field}"))) {
            None | Some(Value::Null) => Value::Array(Vec::new()),
            Some(Value::String(s)) if s.is_empty() => Value::Array(Vec::new()),
            Some(v) => v.clone(),
        }
    };
    let old = a.req.old_object.as_ref();
    if status(old, "certificate") == status(Some(csr), "certificate")
        && status(old, "conditions") == status(Some(csr), "conditions")
    {
        return Ok(());
    }
    let signer = old_signer(a);
    if !authorized_for_signer(a, "sign", signer).await {
        return Err(a.forbidden(&format!(
            "user not permitted to sign requests with signerName {signer:?}"
        )));
    }
    Ok(())
}

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
