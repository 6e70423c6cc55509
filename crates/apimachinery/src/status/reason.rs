//! `metav1.StatusReason`: the machine-readable reason of a failed call, and
//! the `errors.IsNotFound`-style predicates on [`ApiError`] that clients and
//! our own services switch on instead of comparing strings or codes.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::status::ApiError;

/// kube's `StatusReason` values; a reason this server does not know (from
/// another server, over the wire) is kept as [`StatusReason::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StatusReason {
    /// `""`: no reason given; the code alone says what happened.
    #[default]
    Unknown,
    /// `Unauthorized` (401).
    Unauthorized,
    /// `Forbidden` (403).
    Forbidden,
    /// `NotFound` (404).
    NotFound,
    /// `AlreadyExists` (409).
    AlreadyExists,
    /// `Conflict` (409).
    Conflict,
    /// `Gone` (410).
    Gone,
    /// `Invalid` (422).
    Invalid,
    /// `ServerTimeout` (500, retry).
    ServerTimeout,
    /// `StorageReadError` (500; Go name `StatusReasonStoreReadError`).
    StoreReadError,
    /// `Timeout` (504).
    Timeout,
    /// `TooManyRequests` (429).
    TooManyRequests,
    /// `BadRequest` (400).
    BadRequest,
    /// `MethodNotAllowed` (405).
    MethodNotAllowed,
    /// `NotAcceptable` (406).
    NotAcceptable,
    /// `RequestEntityTooLarge` (413).
    RequestEntityTooLarge,
    /// `UnsupportedMediaType` (415).
    UnsupportedMediaType,
    /// `InternalError` (500).
    InternalError,
    /// `Expired` (410): a resource version or continue token too old.
    Expired,
    /// `ServiceUnavailable` (503).
    ServiceUnavailable,
    /// Any other non-empty reason, as received.
    Other(String),
}

/// Every named reason, for parsing.
const NAMED: [StatusReason; 19] = [
    StatusReason::Unauthorized,
    StatusReason::Forbidden,
    StatusReason::NotFound,
    StatusReason::AlreadyExists,
    StatusReason::Conflict,
    StatusReason::Gone,
    StatusReason::Invalid,
    StatusReason::ServerTimeout,
    StatusReason::StoreReadError,
    StatusReason::Timeout,
    StatusReason::TooManyRequests,
    StatusReason::BadRequest,
    StatusReason::MethodNotAllowed,
    StatusReason::NotAcceptable,
    StatusReason::RequestEntityTooLarge,
    StatusReason::UnsupportedMediaType,
    StatusReason::InternalError,
    StatusReason::Expired,
    StatusReason::ServiceUnavailable,
];

impl StatusReason {
    /// The wire string (`""` for [`StatusReason::Unknown`]).
    pub fn as_str(&self) -> &str {
        match self {
            StatusReason::Unknown => "",
            StatusReason::Unauthorized => "Unauthorized",
            StatusReason::Forbidden => "Forbidden",
            StatusReason::NotFound => "NotFound",
            StatusReason::AlreadyExists => "AlreadyExists",
            StatusReason::Conflict => "Conflict",
            StatusReason::Gone => "Gone",
            StatusReason::Invalid => "Invalid",
            StatusReason::ServerTimeout => "ServerTimeout",
            StatusReason::StoreReadError => "StorageReadError",
            StatusReason::Timeout => "Timeout",
            StatusReason::TooManyRequests => "TooManyRequests",
            StatusReason::BadRequest => "BadRequest",
            StatusReason::MethodNotAllowed => "MethodNotAllowed",
            StatusReason::NotAcceptable => "NotAcceptable",
            StatusReason::RequestEntityTooLarge => "RequestEntityTooLarge",
            StatusReason::UnsupportedMediaType => "UnsupportedMediaType",
            StatusReason::InternalError => "InternalError",
            StatusReason::Expired => "Expired",
            StatusReason::ServiceUnavailable => "ServiceUnavailable",
            StatusReason::Other(s) => s,
        }
    }

    /// Whether no reason was given.
    pub fn is_empty(&self) -> bool {
        *self == StatusReason::Unknown
    }

    /// Whether this is one of kube's named reasons (apimachinery's
    /// `knownReasons`); for other reasons the predicates fall back to the
    /// HTTP code.
    pub fn is_known(&self) -> bool {
        !matches!(self, StatusReason::Unknown | StatusReason::Other(_))
    }
}

impl fmt::Display for StatusReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for StatusReason {
    fn from(s: &str) -> Self {
        if s.is_empty() {
            return StatusReason::Unknown;
        }
        NAMED
            .iter()
            .find(|r| r.as_str() == s)
            .cloned()
            .unwrap_or_else(|| StatusReason::Other(s.to_string()))
    }
}

impl From<String> for StatusReason {
    fn from(s: String) -> Self {
        StatusReason::from(s.as_str())
    }
}

impl From<&String> for StatusReason {
    fn from(s: &String) -> Self {
        StatusReason::from(s.as_str())
    }
}

impl From<StatusReason> for String {
    fn from(r: StatusReason) -> Self {
        match r {
            StatusReason::Other(s) => s,
            named => named.as_str().to_string(),
        }
    }
}

impl PartialEq<str> for StatusReason {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for StatusReason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for StatusReason {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

/// Predicates as apimachinery's `k8s.io/apimachinery/pkg/api/errors`
/// (`IsNotFound`, ...): the reason decides; when the reason is not one of
/// kube's named ones, most predicates fall back to the HTTP code.
impl ApiError {
    /// The reason matches, or (reason unknown) the code does.
    fn reason_or_code(&self, reason: StatusReason, code: u16) -> bool {
        self.reason == reason || (!self.reason.is_known() && self.code == code)
    }

    /// `NotFound`, or an unknown reason with 404.
    pub fn is_not_found(&self) -> bool {
        self.reason_or_code(StatusReason::NotFound, 404)
    }

    /// `AlreadyExists` (a 409 is not enough: it may be a conflict).
    pub fn is_already_exists(&self) -> bool {
        self.reason == StatusReason::AlreadyExists
    }

    /// `Conflict`, or an unknown reason with 409.
    pub fn is_conflict(&self) -> bool {
        self.reason_or_code(StatusReason::Conflict, 409)
    }

    /// `Invalid`, or an unknown reason with 422.
    pub fn is_invalid(&self) -> bool {
        self.reason_or_code(StatusReason::Invalid, 422)
    }

    /// `BadRequest`, or an unknown reason with 400.
    pub fn is_bad_request(&self) -> bool {
        self.reason_or_code(StatusReason::BadRequest, 400)
    }

    /// `Unauthorized`, or an unknown reason with 401.
    pub fn is_unauthorized(&self) -> bool {
        self.reason_or_code(StatusReason::Unauthorized, 401)
    }

    /// `Forbidden`, or an unknown reason with 403.
    pub fn is_forbidden(&self) -> bool {
        self.reason_or_code(StatusReason::Forbidden, 403)
    }

    /// `MethodNotAllowed`, or an unknown reason with 405.
    pub fn is_method_not_supported(&self) -> bool {
        self.reason_or_code(StatusReason::MethodNotAllowed, 405)
    }

    /// `NotAcceptable`, or an unknown reason with 406.
    pub fn is_not_acceptable(&self) -> bool {
        self.reason_or_code(StatusReason::NotAcceptable, 406)
    }

    /// `Gone`, or an unknown reason with 410.
    pub fn is_gone(&self) -> bool {
        self.reason_or_code(StatusReason::Gone, 410)
    }

    /// `Expired`: a resource version or continue token older than the
    /// retained history (apimachinery's `IsResourceExpired`).
    pub fn is_expired(&self) -> bool {
        self.reason == StatusReason::Expired
    }

    /// Either of [`is_gone`](Self::is_gone) and
    /// [`is_expired`](Self::is_expired): the history asked for is gone, so
    /// the client must re-list.
    pub fn is_gone_or_expired(&self) -> bool {
        self.is_gone() || self.is_expired()
    }

    /// `RequestEntityTooLarge`, or an unknown reason with 413.
    pub fn is_request_entity_too_large(&self) -> bool {
        self.reason_or_code(StatusReason::RequestEntityTooLarge, 413)
    }

    /// `UnsupportedMediaType`, or an unknown reason with 415.
    pub fn is_unsupported_media_type(&self) -> bool {
        self.reason_or_code(StatusReason::UnsupportedMediaType, 415)
    }

    /// `TooManyRequests`, or an unknown reason with 429.
    pub fn is_too_many_requests(&self) -> bool {
        self.reason_or_code(StatusReason::TooManyRequests, 429)
    }

    /// `InternalError`, or an unknown reason with 500.
    pub fn is_internal_error(&self) -> bool {
        self.reason_or_code(StatusReason::InternalError, 500)
    }

    /// `ServerTimeout` (the server could not finish in time; retry).
    pub fn is_server_timeout(&self) -> bool {
        self.reason == StatusReason::ServerTimeout
    }

    /// `Timeout`, or an unknown reason with 504.
    pub fn is_timeout(&self) -> bool {
        self.reason_or_code(StatusReason::Timeout, 504)
    }

    /// `ServiceUnavailable`, or an unknown reason with 503.
    pub fn is_unavailable(&self) -> bool {
        self.reason_or_code(StatusReason::ServiceUnavailable, 503)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gr::GroupResource;

    #[test]
    fn wire_strings_round_trip() {
        for r in NAMED {
            assert_eq!(StatusReason::from(r.as_str()), r);
            assert_eq!(String::from(r.clone()), r.to_string());
            assert!(r.is_known());
        }
        assert_eq!(StatusReason::from(""), StatusReason::Unknown);
        assert!(StatusReason::Unknown.is_empty() && !StatusReason::Unknown.is_known());
        let other = StatusReason::from("NamespaceTerminating");
        assert_eq!(other, StatusReason::Other("NamespaceTerminating".into()));
        assert_eq!(other, "NamespaceTerminating");
        assert!(!other.is_known() && !other.is_empty());
        assert_eq!(
            serde_json::to_value(StatusReason::AlreadyExists).unwrap(),
            "AlreadyExists"
        );
        assert_eq!(
            serde_json::from_value::<StatusReason>("Expired".into()).unwrap(),
            StatusReason::Expired
        );
    }

    #[test]
    fn compares_with_strings() {
        let r = StatusReason::Conflict;
        let owned = String::from("Conflict");
        assert!(r == "Conflict" && r == *"Conflict" && r == owned);
        assert!(r != "conflict");
        assert_eq!(r.as_str(), "Conflict");
    }

    #[test]
    fn predicates_follow_the_reason() {
        let gr = GroupResource::new("", "pods");
        assert!(ApiError::not_found(&gr, "p").is_not_found());
        assert!(ApiError::path_not_found().is_not_found());
        assert!(ApiError::already_exists(&gr, "p").is_already_exists());
        assert!(!ApiError::already_exists(&gr, "p").is_conflict());
        assert!(ApiError::optimistic_lock(&gr, "p").is_conflict());
        assert!(!ApiError::optimistic_lock(&gr, "p").is_already_exists());
        assert!(ApiError::invalid("", "Pod", "p", &[]).is_invalid());
        assert!(ApiError::bad_request("x").is_bad_request());
        assert!(ApiError::unauthorized().is_unauthorized());
        assert!(ApiError::forbidden(&gr, "p", "no").is_forbidden());
        assert!(ApiError::method_not_allowed().is_method_not_supported());
        assert!(ApiError::method_not_supported(&gr, "create").is_method_not_supported());
        assert!(ApiError::not_acceptable("x").is_not_acceptable());
        assert!(ApiError::too_large(1).is_request_entity_too_large());
        assert!(ApiError::unsupported_media_type("x").is_unsupported_media_type());
        assert!(ApiError::internal("x").is_internal_error());
        assert!(ApiError::too_large_resource_version(2, 1).is_timeout());
        assert!(ApiError::unavailable("x").is_unavailable());
        let expired = ApiError::new(410, "Expired", "too old resource version: 1 (2)");
        assert!(expired.is_expired() && !expired.is_gone() && expired.is_gone_or_expired());
        let gone = ApiError::new(410, "Gone", "gone");
        assert!(gone.is_gone() && !gone.is_expired() && gone.is_gone_or_expired());
        assert!(ApiError::new(500, "ServerTimeout", "x").is_server_timeout());
        assert!(ApiError::new(429, "TooManyRequests", "x").is_too_many_requests());
    }

    #[test]
    fn unknown_reasons_fall_back_to_the_code() {
        for (code, check) in [
            (404, ApiError::is_not_found as fn(&ApiError) -> bool),
            (409, ApiError::is_conflict),
            (410, ApiError::is_gone),
            (422, ApiError::is_invalid),
            (400, ApiError::is_bad_request),
            (401, ApiError::is_unauthorized),
            (403, ApiError::is_forbidden),
            (405, ApiError::is_method_not_supported),
            (406, ApiError::is_not_acceptable),
            (413, ApiError::is_request_entity_too_large),
            (415, ApiError::is_unsupported_media_type),
            (429, ApiError::is_too_many_requests),
            (500, ApiError::is_internal_error),
            (503, ApiError::is_unavailable),
            (504, ApiError::is_timeout),
        ] {
            assert!(
                check(&ApiError::new(code, "", "x")),
                "{code} without a reason"
            );
            assert!(
                check(&ApiError::new(code, "SomethingNew", "x")),
                "{code} other reason"
            );
            // A known reason is believed over the code.
            assert!(!check(&ApiError::new(code, "Invalid", "x")) || code == 422);
        }
        // No code fallback where apimachinery has none.
        assert!(!ApiError::new(409, "", "x").is_already_exists());
        assert!(!ApiError::new(410, "", "x").is_expired());
        assert!(!ApiError::new(500, "", "x").is_server_timeout());
        assert!(!ApiError::not_found(&GroupResource::new("", "pods"), "p").is_conflict());
    }
}
