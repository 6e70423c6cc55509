//! The one mapping between `ApiError` and gRPC `Status`.
//!
//! An `ApiError` travels as a gRPC status whose code is chosen from the HTTP
//! code and whose details bytes hold the Kubernetes `Status` JSON
//! ([`ApiError::to_status_json`]); the receiving side rebuilds the identical
//! `ApiError` from those bytes. A status without such details is a transport
//! or framework failure and becomes `503 ServiceUnavailable` (or `504`/`500`)
//! naming the service that could not be reached.

use keelson_apimachinery::{ApiError, StatusReason};
use tonic::{Code, Status};

/// The gRPC code for an `ApiError`, from its HTTP code (and reason, which
/// tells the two 409s apart).
pub fn grpc_code(err: &ApiError) -> Code {
    match err.code {
        400 | 422 => Code::InvalidArgument,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::NotFound,
        409 if err.is_already_exists() => Code::AlreadyExists,
        409 => Code::Aborted,
        410 => Code::FailedPrecondition,
        413 | 429 => Code::ResourceExhausted,
        503 => Code::Unavailable,
        504 => Code::DeadlineExceeded,
        _ => Code::Internal,
    }
}

/// Longest `grpc-message` sent; the full message is in the details.
const MAX_GRPC_MESSAGE: usize = 1024;

/// The key under which an error's warnings ride in the details' Status
/// JSON (removed again on receipt; never sent to HTTP clients).
const WARNINGS_KEY: &str = "keelsonWarnings";

/// The key under which an error's audit annotations ride likewise.
const AUDIT_ANNOTATIONS_KEY: &str = "keelsonAuditAnnotations";

/// Encode an `ApiError` as a gRPC status carrying the Status JSON (and its
/// warnings).
pub fn to_grpc_status(err: &ApiError) -> Status {
    let mut status = err.to_status_json();
    if !err.warnings.is_empty() {
        if let Some(m) = status.as_object_mut() {
            m.insert(WARNINGS_KEY.into(), serde_json::json!(err.warnings));
        }
    }
    if let Some(a) = &err.audit_annotations {
        if let Some(m) = status.as_object_mut() {
            m.insert(AUDIT_ANNOTATIONS_KEY.into(), serde_json::json!(a));
        }
    }
    let details = serde_json::to_vec(&status).unwrap_or_default();
    Status::with_details(
        grpc_code(err),
        truncate(&err.message, MAX_GRPC_MESSAGE),
        details.into(),
    )
}

/// Decode a gRPC status received from `service` (e.g. `"store"`) back into
/// an `ApiError`.
pub fn from_grpc_status(service: &str, status: &Status) -> ApiError {
    if let Some(err) = decode_details(status.details()) {
        return err;
    }
    match status.code() {
        Code::Unavailable | Code::Unknown | Code::Cancelled => ApiError::unavailable(format!(
            "the {service} service is unavailable: {}",
            status.message()
        )),
        Code::DeadlineExceeded => ApiError::new(
            504,
            StatusReason::Timeout,
            format!(
                "the {service} service did not answer in time: {}",
                status.message()
            ),
        ),
        code => ApiError::internal(format!(
            "the {service} service failed: {code:?}: {}",
            status.message()
        )),
    }
}

fn decode_details(details: &[u8]) -> Option<ApiError> {
    if details.is_empty() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(details).ok()?;
    let warnings = v
        .get(WARNINGS_KEY)
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let annotations = v
        .get(AUDIT_ANNOTATIONS_KEY)
        .and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default();
    ApiError::from_status_json(&v).map(|e| {
        e.with_warnings(warnings)
            .with_audit_annotations(annotations)
    })
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_apimachinery::{FieldError, GroupResource};

    #[test]
    fn codes_follow_http_codes() {
        let gr = GroupResource::new("", "pods");
        let cases = [
            (ApiError::not_found(&gr, "p"), Code::NotFound),
            (ApiError::already_exists(&gr, "p"), Code::AlreadyExists),
            (ApiError::optimistic_lock(&gr, "p"), Code::Aborted),
            (ApiError::bad_request("x"), Code::InvalidArgument),
            (
                ApiError::invalid("", "Pod", "p", &[FieldError::required("spec", "")]),
                Code::InvalidArgument,
            ),
            (ApiError::forbidden(&gr, "p", "no"), Code::PermissionDenied),
            (ApiError::unauthorized(), Code::Unauthenticated),
            (ApiError::unavailable("down"), Code::Unavailable),
            (ApiError::too_large(3), Code::ResourceExhausted),
            (
                ApiError::new(504, "Timeout", "slow"),
                Code::DeadlineExceeded,
            ),
            (ApiError::internal("boom"), Code::Internal),
            (ApiError::method_not_allowed(), Code::Internal),
        ];
        for (err, code) in cases {
            let st = to_grpc_status(&err);
            assert_eq!(st.code(), code, "{err}");
            assert_eq!(from_grpc_status("store", &st), err);
        }
    }

    #[test]
    fn status_without_details_is_unavailable_naming_the_service() {
        let e = from_grpc_status("merge", &Status::unavailable("tcp connect error"));
        assert_eq!(e.code, 503);
        assert_eq!(e.reason, "ServiceUnavailable");
        assert_eq!(
            e.message,
            "the merge service is unavailable: tcp connect error"
        );
    }

    #[test]
    fn garbage_details_fall_back_to_the_code() {
        let st = Status::with_details(Code::Internal, "oops", b"not json".to_vec().into());
        let e = from_grpc_status("store", &st);
        assert_eq!(e.code, 500);
        assert_eq!(
            e.message,
            "Internal error occurred: the store service failed: Internal: oops"
        );
    }

    #[test]
    fn long_messages_are_cut_in_the_header_only() {
        let err = ApiError::bad_request("é".repeat(1000));
        let st = to_grpc_status(&err);
        assert!(st.message().len() <= MAX_GRPC_MESSAGE);
        assert_eq!(from_grpc_status("store", &st), err);
    }
}
