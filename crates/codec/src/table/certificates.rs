//! certificates.k8s.io: certificate signing requests.
//!
//! kube describes the columns with the `certificates/v1beta1` docs (the
//! Go types are still there, though the version is no longer served).

use serde_json::Value;

use super::columns::*;
use super::time::{self, Time};
use super::util::*;
use super::{Printer, Row};

// certificates/v1beta1 CertificateSigningRequestSpec / Status
const CSR_SIGNER_NAME: &str = "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.";
const CSR_REQUEST: &str = "Base64-encoded PKCS#10 CSR data";
const CSR_EXPIRATION_SECONDS: &str = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.";
const CSR_CONDITIONS: &str = "Conditions applied to the request, such as approval or denial.";

/// `kubectl get csr`: Name, Age, SignerName, Requestor (the requesting
/// user), RequestedDuration and Condition.
pub(crate) static CERTIFICATE_SIGNING_REQUEST: Printer = Printer {
    columns: &[
        NAME,
        AGE,
        col("SignerName", "string", CSR_SIGNER_NAME),
        col("Requestor", "string", CSR_REQUEST),
        col("RequestedDuration", "string", CSR_EXPIRATION_SECONDS),
        col("Condition", "string", CSR_CONDITIONS),
    ],
    print: print_csr,
};

/// kube's `extractCSRStatus`: `Denied`, else `Approved`, else `Pending`;
/// then `,Failed` and `,Issued` (a certificate is there).
fn csr_status(o: &Value) -> String {
    let (mut approved, mut denied, mut failed) = (false, false, false);
    for c in arr_at(o, &["status", "conditions"]) {
        match str_at(c, &["type"]) {
            "Approved" => approved = true,
            "Denied" => denied = true,
            "Failed" => failed = true,
            _ => {}
        }
    }
    let mut status = String::from(if denied {
        "Denied"
    } else if approved {
        "Approved"
    } else {
        "Pending"
    });
    if failed {
        status.push_str(",Failed");
    }
    if !str_at(o, &["status", "certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    status
}

fn print_csr(o: &Value, now: Time) -> Row {
    let signer = match str_at(o, &["spec", "signerName"]) {
        "" => "<none>",
        s => s,
    };
    // `duration.HumanDuration(expirationSeconds * time.Second)`.
    let requested = opt_int(o, &["spec", "expirationSeconds"]).map_or_else(
        || "<none>".to_string(),
        |s| time::human_duration(i128::from(s) * 1_000_000_000),
    );
    Row::new(vec![
        Value::from(name(o)),
        age(o, now),
        Value::from(signer),
        Value::from(str_at(o, &["spec", "username"])),
        Value::from(requested),
        Value::from(csr_status(o)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    fn csr(spec: Value, status: Value) -> Value {
        json!({"metadata": {"name": "csr1", "creationTimestamp": "2024-05-01T11:59:00Z"},
               "spec": spec, "status": status})
    }

    #[test]
    fn columns() {
        let names: Vec<(&str, i32)> = CERTIFICATE_SIGNING_REQUEST
            .columns
            .iter()
            .map(|c| (c.name, c.priority))
            .collect();
        assert_eq!(
            names,
            vec![
                ("Name", 0),
                ("Age", 0),
                ("SignerName", 0),
                ("Requestor", 0),
                ("RequestedDuration", 0),
                ("Condition", 0)
            ]
        );
        assert_eq!(
            CERTIFICATE_SIGNING_REQUEST.columns[3].description,
            "Base64-encoded PKCS#10 CSR data"
        );
    }

    // Facts from kube's printers_test.go TestPrintCertificateSigningRequest.
    #[test]
    fn pending_approved_denied_issued() {
        let c = print_csr(
            &csr(
                json!({"signerName": "example.com/signer", "username": "CSR Requestor"}),
                json!({}),
            ),
            now(),
        )
        .cells;
        assert_eq!(
            c,
            vec![
                json!("csr1"),
                json!("60s"),
                json!("example.com/signer"),
                json!("CSR Requestor"),
                json!("<none>"),
                json!("Pending")
            ]
        );
        let cond =
            |spec: Value, status: Value| print_csr(&csr(spec, status), now()).cells[5].clone();
        assert_eq!(
            cond(
                json!({}),
                json!({"conditions": [{"type": "Approved", "status": "True"}], "certificate": "Y2VydA=="})
            ),
            json!("Approved,Issued")
        );
        assert_eq!(
            cond(
                json!({}),
                json!({"conditions": [{"type": "Approved"}, {"type": "Denied"}]})
            ),
            json!("Denied")
        );
        assert_eq!(
            cond(
                json!({}),
                json!({"conditions": [{"type": "Approved"}, {"type": "Failed"}]})
            ),
            json!("Approved,Failed")
        );
        assert_eq!(
            cond(json!({}), json!({"certificate": "Y2VydA=="})),
            json!("Pending,Issued")
        );
        assert_eq!(
            cond(json!({}), json!({"certificate": ""})),
            json!("Pending")
        );
    }

    #[test]
    fn signer_and_requested_duration() {
        let c = print_csr(&csr(json!({"expirationSeconds": 7200}), json!({})), now()).cells;
        assert_eq!((&c[2], &c[4]), (&json!("<none>"), &json!("120m")));
        let d = |secs: i64| {
            print_csr(&csr(json!({"expirationSeconds": secs}), json!({})), now()).cells[4].clone()
        };
        assert_eq!(d(600), json!("10m"));
        assert_eq!(d(86400), json!("24h"));
        assert_eq!(d(31_536_000), json!("365d"));
        assert_eq!(d(3 * 3600 + 1800), json!("3h30m"));
    }
}
