//! CertificateSigningRequest (`pkg/apis/certificates/validation`:
//! `validateCertificateSigningRequest`, the update, `/status` and
//! `/approval` variants with kube's compatibility options) and
//! ClusterTrustBundle (`ValidateClusterTrustBundle*`; its name rule is in
//! `validation/objectmeta.rs`).
//!
//! The request's PEM framing is checked, not its DER content or signature
//! (Go's `x509` errors are not reproduced); `status.certificate` content is
//! not parsed (docs/compatibility.md).

use base64::Engine as _;
use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{duplicate, list_of, str_of};
use super::{Path, Write};

const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";
const USAGES: &[&str] = &[
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
    "any",
    "server auth",
    "client auth",
    "code signing",
    "email protection",
    "s/mime",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "timestamping",
    "ocsp signing",
    "microsoft sgc",
    "netscape sgc",
];
const ALL_STATUSES: &[&str] = &["False", "True", "Unknown"];
const TRUE_ONLY: &[&str] = &["True"];
const TRUE_ONLY_TYPES: &[&str] = &["Approved", "Denied", "Failed"];

/// The errors of one object of this group's `kind`.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind == "ClusterTrustBundle" {
        return validate_cluster_trust_bundle(obj, w.old());
    }
    if kind != "CertificateSigningRequest" {
        return Vec::new();
    }
    let old = w.old();
    let opts = Opts::new(old);
    let mut errs = validate_csr(obj, &opts);
    if let Some(old) = old {
        errs.extend(validate_csr_update(
            obj,
            old,
            w.subresource == "approval",
            w.is_status(),
        ));
    }
    errs
}

/// kube's `certificateValidationOptions`: what the stored object already
/// broke is tolerated.
struct Opts {
    allow_both_approved_and_denied: bool,
    allow_legacy_signer: bool,
    allow_duplicate_condition_types: bool,
    allow_empty_condition_type: bool,
    allow_unknown_usages: bool,
    allow_duplicate_usages: bool,
}

impl Opts {
    fn new(old: Option<&Value>) -> Opts {
        let conds = old.map(conditions).unwrap_or(&[]);
        let types: Vec<&str> = conds.iter().map(|c| str_of(c, "type")).collect();
        let usages: Vec<&str> = old
            .and_then(|o| o.get("spec"))
            .map(|s| list_of(s, "usages"))
            .unwrap_or(&[])
            .iter()
            .map(|u| u.as_str().unwrap_or(""))
            .collect();
        let dup = |list: &[&str]| list.iter().enumerate().any(|(i, t)| list[..i].contains(t));
        Opts {
            allow_both_approved_and_denied: types.contains(&"Approved")
                && types.contains(&"Denied"),
            allow_legacy_signer: old
                .and_then(|o| o.get("spec"))
                .is_some_and(|s| str_of(s, "signerName") == LEGACY_SIGNER),
            allow_duplicate_condition_types: dup(&types),
            allow_empty_condition_type: types.contains(&""),
            allow_unknown_usages: usages.iter().any(|u| !USAGES.contains(u)),
            allow_duplicate_usages: dup(&usages),
        }
    }
}

fn conditions(obj: &Value) -> &[Value] {
    obj.get("status")
        .map(|s| list_of(s, "conditions"))
        .unwrap_or(&[])
}

/// `validateCertificateSigningRequest` (after metadata).
fn validate_csr(obj: &Value, opts: &Opts) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let sp = Path::new("spec");
    let request = str_of(spec, "request");
    if let Err(msg) = check_request_pem(request) {
        errs.push(FieldError::invalid(
            sp.child("request").as_str(),
            request,
            msg,
        ));
    }
    let usages = list_of(spec, "usages");
    let up = sp.child("usages");
    if usages.is_empty() {
        errs.push(FieldError::required(up.as_str(), ""));
    }
    if !opts.allow_unknown_usages {
        let mut sorted = USAGES.to_vec();
        sorted.sort_unstable();
        for (i, u) in usages.iter().enumerate() {
            let u = u.as_str().unwrap_or("");
            if !USAGES.contains(&u) {
                errs.push(FieldError::not_supported(up.index(i).as_str(), u, &sorted));
            }
        }
    }
    if !opts.allow_duplicate_usages {
        for (i, u) in usages.iter().enumerate() {
            if usages[..i].contains(u) {
                errs.push(duplicate(&up.index(i), u.clone()));
            }
        }
    }
    let signer = str_of(spec, "signerName");
    let np = sp.child("signerName");
    if !opts.allow_legacy_signer && signer == LEGACY_SIGNER {
        errs.push(FieldError::invalid(
            np.as_str(),
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errs.extend(validate_signer_name(signer, &np));
    }
    if let Some(secs) = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .filter(|s| *s < 600)
    {
        errs.push(FieldError::invalid(
            sp.child("expirationSeconds").as_str(),
            secs,
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errs.extend(validate_conditions(obj, opts));
    errs
}

/// kube's `ParseCSR` framing: the first PEM block must be a
/// `CERTIFICATE REQUEST`.
fn check_request_pem(request_b64: &str) -> Result<(), &'static str> {
    const MSG: &str = "PEM block type must be CERTIFICATE REQUEST";
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(request_b64)
        .map_err(|_| MSG)?;
    let text = String::from_utf8_lossy(&bytes);
    match first_pem_block_type(&text) {
        Some(t) if t == "CERTIFICATE REQUEST" => Ok(()),
        _ => Err(MSG),
    }
}

/// The type of the first well-formed PEM block in `text` (Go's
/// `pem.Decode`, simplified: headers are skipped, the body must be base64).
fn first_pem_block_type(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + "-----BEGIN ".len()..];
        let line_end = after.find('\n').unwrap_or(after.len());
        let line = after[..line_end].trim_end_matches('\r');
        let at_line_start = start == 0 || rest[..start].ends_with('\n');
        if let Some(ty) = line.strip_suffix("-----").filter(|_| at_line_start) {
            let end_marker = format!("-----END {ty}-----");
            let body_all = &after[line_end.min(after.len())..];
            if let Some(end) = body_all.find(&end_marker) {
                let body: String = body_all[..end]
                    .lines()
                    .filter(|l| !l.contains(':'))
                    .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
                    .collect();
                if base64::engine::general_purpose::STANDARD
                    .decode(&body)
                    .is_ok()
                {
                    return Some(ty.to_string());
                }
            }
        }
        rest = &after[line_end.min(after.len())..];
    }
    None
}

/// core validation's `ValidateSignerName`.
pub(super) fn validate_signer_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(path.as_str(), ""));
        return errs;
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() != 2 {
        errs.push(FieldError::invalid(
            path.as_str(),
            name,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return errs;
    }
    let (domain, rest) = (segments[0], segments[1]);
    if domain.len() > 253 {
        errs.push(FieldError::too_long(
            path.as_str(),
            "may not be more than 253 bytes",
        ));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for l in &labels {
        let msgs = keelson_apimachinery::names::is_dns1123_label(l);
        if !msgs.is_empty() {
            for m in msgs {
                errs.push(FieldError::invalid(
                    path.as_str(),
                    domain,
                    &format!("validating label {l:?}: {m}"),
                ));
            }
            break;
        }
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(
            path.as_str(),
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for l in rest.split('.') {
        let msgs = keelson_apimachinery::names::is_dns1123_subdomain(l);
        if !msgs.is_empty() {
            for m in msgs {
                errs.push(FieldError::invalid(
                    path.as_str(),
                    rest,
                    &format!("validating label {l:?}: {m}"),
                ));
            }
            break;
        }
    }
    let max = 253 + (253 + 63 + 1) + 1;
    if name.len() > max {
        errs.push(FieldError::too_long(
            path.as_str(),
            &format!("may not be more than {max} bytes"),
        ));
    }
    errs
}

/// `validateConditions` at `status.conditions`.
fn validate_conditions(obj: &Value, opts: &Opts) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cp = Path::new("status").child("conditions");
    let mut seen: Vec<&str> = Vec::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions(obj).iter().enumerate() {
        let ip = cp.index(i);
        let ty = str_of(c, "type");
        if !opts.allow_empty_condition_type && ty.is_empty() {
            errs.push(FieldError::required(ip.child("type").as_str(), ""));
        }
        let allowed = if TRUE_ONLY_TYPES.contains(&ty) {
            TRUE_ONLY
        } else {
            ALL_STATUSES
        };
        let status = str_of(c, "status");
        if status.is_empty() {
            errs.push(FieldError::required(ip.child("status").as_str(), ""));
        } else if !allowed.contains(&status) {
            errs.push(FieldError::not_supported(
                ip.child("status").as_str(),
                status,
                allowed,
            ));
        }
        if !opts.allow_both_approved_and_denied {
            let clash = match ty {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if clash {
                errs.push(FieldError::invalid(
                    ip.child("type").as_str(),
                    ty,
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !opts.allow_duplicate_condition_types {
            if seen.contains(&ty) {
                errs.push(duplicate(&ip.child("type"), ty));
            }
            seen.push(ty);
        }
    }
    errs
}

/// `validateCertificateSigningRequestUpdate` beyond the create rules:
/// Approved/Denied/Failed conditions are never removed; Approved/Denied
/// are added only through `/approval`; the certificate is set only
/// through `/status`, once.
fn validate_csr_update(new: &Value, old: &Value, approval: bool, status: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = Path::new("status").child("conditions");
    let count = |o: &Value, t: &str| {
        conditions(o)
            .iter()
            .filter(|c| str_of(c, "type") == t)
            .count()
    };
    for t in ["Approved", "Denied", "Failed"] {
        if count(new, t) < count(old, t) {
            errs.push(FieldError::forbidden(
                path.as_str(),
                &format!("updates may not remove a condition of type {t:?}"),
            ));
        }
    }
    if !approval {
        for t in ["Approved", "Denied"] {
            if count(new, t) > count(old, t) {
                errs.push(FieldError::forbidden(
                    path.as_str(),
                    &format!("updates may not add a condition of type {t:?}"),
                ));
            }
        }
    }
    let cert = |o: &Value| {
        o.get("status")
            .map(|s| str_of(s, "certificate").to_string())
            .unwrap_or_default()
    };
    let (nc, oc) = (cert(new), cert(old));
    if nc != oc {
        let cp = Path::new("status").child("certificate");
        if !status {
            errs.push(FieldError::forbidden(
                cp.as_str(),
                "updates may not set certificate content",
            ));
        } else if !oc.is_empty() {
            errs.push(FieldError::forbidden(
                cp.as_str(),
                "updates may not modify existing certificate content",
            ));
        }
    }
    errs
}

/// kube's `MaxTrustBundleSize` (1 MiB).
const MAX_TRUST_BUNDLE_SIZE: usize = 1024 * 1024;

/// `ValidateClusterTrustBundle` and, with `old`, the update's immutable
/// `spec.signerName` (an unchanged `trustBundle` is not parsed again).
fn validate_cluster_trust_bundle(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let sp = Path::new("spec");
    let signer = str_of(spec, "signerName");
    if !signer.is_empty() {
        errs.extend(validate_signer_name(signer, &sp.child("signerName")));
    }
    let bundle = str_of(spec, "trustBundle");
    let old_spec = old.and_then(|o| o.get("spec"));
    if old_spec.is_none_or(|o| str_of(o, "trustBundle") != bundle) {
        errs.extend(validate_trust_bundle(bundle, &sp.child("trustBundle")));
    }
    if let Some(old_spec) = old_spec {
        errs.extend(super::util::immutable(
            spec.get("signerName"),
            old_spec.get("signerName"),
            &sp.child("signerName"),
        ));
    }
    errs
}

/// kube's `validateTrustBundle`: every PEM block a `CERTIFICATE` without
/// headers that parses as an X.509 CA certificate with basic constraints;
/// then at least one, and no duplicates.
fn validate_trust_bundle(bundle: &str, path: &Path) -> Vec<FieldError> {
    const OMITTED: &str = "<value omitted>";
    if bundle.len() > MAX_TRUST_BUNDLE_SIZE {
        return vec![FieldError::too_long(
            path.as_str(),
            &format!("may not be more than {MAX_TRUST_BUNDLE_SIZE} bytes"),
        )];
    }
    let mut errs = Vec::new();
    let mut seen: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
    for (i, block) in pem_blocks(bundle).into_iter().enumerate() {
        let problem = if block.kind != "CERTIFICATE" {
            Some(format!("entry {i} has bad block type: {}", block.kind))
        } else if block.has_headers {
            Some(format!("entry {i} has PEM block headers"))
        } else {
            match x509_parser::parse_x509_certificate(&block.der) {
                Err(_) => Some(format!("entry {i} does not parse as X.509")),
                Ok((_, cert)) => match cert.basic_constraints() {
                    Ok(Some(bc)) if bc.value.ca => None,
                    _ => Some(format!("entry {i} does not have the CA bit set")),
                },
            }
        };
        match problem {
            Some(msg) => errs.push(FieldError::invalid(path.as_str(), OMITTED, &msg)),
            None => match seen.iter_mut().find(|(der, _)| *der == block.der) {
                Some((_, at)) => at.push(i),
                None => seen.push((block.der, vec![i])),
            },
        }
    }
    // A malformed block hides the missing and duplicate anchor errors.
    if !errs.is_empty() {
        return errs;
    }
    if seen.is_empty() {
        errs.push(FieldError::invalid(
            path.as_str(),
            OMITTED,
            "at least one trust anchor must be provided",
        ));
    }
    for (_, at) in seen.iter().filter(|(_, at)| at.len() > 1) {
        let list: Vec<String> = at.iter().map(usize::to_string).collect();
        errs.push(FieldError::invalid(
            path.as_str(),
            OMITTED,
            &format!("duplicate trust anchor (indices [{}])", list.join(" ")),
        ));
    }
    errs
}

/// One PEM block as Go's `pem.Decode` returns it.
struct PemBlock {
    kind: String,
    has_headers: bool,
    der: Vec<u8>,
}

/// The PEM blocks of `text` in order, as repeated `pem.Decode` calls
/// find them: a `-----BEGIN T-----` line, optional `Key: value` header
/// lines, a base64 body and `-----END T-----`; anything that does not
/// frame a block is skipped.
fn pem_blocks(text: &str) -> Vec<PemBlock> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let at_line_start = start == 0 || rest[..start].ends_with('\n');
        let after = &rest[start + "-----BEGIN ".len()..];
        let line_end = after.find('\n').map_or(after.len(), |e| e + 1);
        let line = after[..line_end].trim_end_matches(['\r', '\n']);
        rest = &after[line_end..];
        let Some(kind) = line.strip_suffix("-----").filter(|_| at_line_start) else {
            continue;
        };
        let end_marker = format!("-----END {kind}-----");
        let Some(end) = rest.find(&end_marker) else {
            continue;
        };
        let lines: Vec<&str> = rest[..end].lines().collect();
        let headers = lines.iter().take_while(|l| l.contains(':')).count();
        let body: String = lines[headers..]
            .iter()
            .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
            .collect();
        if let Ok(der) = b64.decode(&body) {
            blocks.push(PemBlock {
                kind: kind.to_string(),
                has_headers: headers > 0,
                der,
            });
            rest = &rest[end + end_marker.len()..];
        }
    }
    blocks
}
