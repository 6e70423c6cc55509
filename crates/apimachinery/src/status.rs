//! `meta.k8s.io/v1 Status` errors with kube-apiserver's reasons, codes,
//! messages and details (see `k8s.io/apimachinery/pkg/api/errors`).

use serde::{Deserialize, Serialize};

use crate::field::FieldError;
use crate::gr::GroupResource;

mod reason;

pub use reason::StatusReason;

/// One entry of `details.causes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StatusCause {
    /// The CauseType, e.g. `FieldValueInvalid`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Field path, e.g. `metadata.name`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// `details` of a Status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StatusDetails {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    #[serde(
        default,
        rename = "retryAfterSeconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub retry_after_seconds: Option<i32>,
}

/// A failed API call, rendered to clients as a `kind: Status` object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `reason` (e.g. `NotFound`); [`StatusReason::Unknown`] omits it.
    pub reason: StatusReason,
    /// `message`.
    pub message: String,
    /// `details`; `None` omits the key, `Some(default)` renders `{}`.
    /// Boxed so `Result<_, ApiError>` stays small on every return path.
    pub details: Option<Box<StatusDetails>>,
    /// `metadata.continue` of the Status (used by 410 Expired lists).
    pub continue_token: Option<String>,
    /// Warnings recorded before the request failed (an admission step's,
    /// before a later one refused): kube sends them as `Warning` headers
    /// with the error. Not part of the Status body.
    pub warnings: Vec<String>,
    /// Audit annotations admission recorded before the request failed
    /// (kube logs them with the refused request). Not part of the body.
    /// Boxed, as `details`: most errors have none.
    pub audit_annotations: Option<Box<std::collections::BTreeMap<String, String>>>,
}

/// Result alias used across the project.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A bare error with code, reason (a [`StatusReason`] or its wire
    /// string) and message and no details.
    pub fn new(code: u16, reason: impl Into<StatusReason>, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: reason.into(),
            message: message.into(),
            details: None,
            continue_token: None,
            warnings: Vec::new(),
            audit_annotations: None,
        }
    }

    /// This error with `warnings` recorded before it (they come first).
    pub fn with_warnings(mut self, mut warnings: Vec<String>) -> Self {
        warnings.append(&mut self.warnings);
        self.warnings = warnings;
        self
    }

    /// This error with the audit annotations recorded before it (an
    /// earlier value of a key stays, as kube's `AddAnnotation`).
    pub fn with_audit_annotations(
        mut self,
        annotations: std::collections::BTreeMap<String, String>,
    ) -> Self {
        if annotations.is_empty() {
            return self;
        }
        let mine = self.audit_annotations.get_or_insert_with(Default::default);
        for (k, v) in annotations {
            mine.entry(k).or_insert(v);
        }
        self
    }

    fn with_resource(mut self, gr: &GroupResource, name: &str) -> Self {
        self.details = Some(Box::new(StatusDetails {
            name: name.to_string(),
            group: gr.group.clone(),
            kind: gr.resource.clone(),
            ..Default::default()
        }));
        self
    }

    /// 404 `pods "p" not found`.
    pub fn not_found(gr: &GroupResource, name: &str) -> Self {
        Self::new(
            404,
            StatusReason::NotFound,
            format!("{} {:?} not found", gr, name),
        )
        .with_resource(gr, name)
    }

    /// 409 `pods "p" already exists`.
    pub fn already_exists(gr: &GroupResource, name: &str) -> Self {
        Self::new(
            409,
            StatusReason::AlreadyExists,
            format!("{} {:?} already exists", gr, name),
        )
        .with_resource(gr, name)
    }

    /// kube's `NewGenerateNameConflict`: 409 `AlreadyExists` `<gr> "<name>"
    /// already exists, the server was not able to generate a unique name for
    /// the object`, retry after 1 s.
    pub fn generate_name_conflict(gr: &GroupResource, name: &str) -> Self {
        let mut e = Self::new(
            409,
            StatusReason::AlreadyExists,
            format!(
                "{} {:?} already exists, the server was not able to generate a unique name for the object",
                gr, name
            ),
        )
        .with_resource(gr, name);
        if let Some(d) = e.details.as_mut() {
            d.retry_after_seconds = Some(1);
        }
        e
    }

    /// 409 Conflict `Operation cannot be fulfilled on <gr> "<name>": <msg>`.
    pub fn conflict(gr: &GroupResource, name: &str, msg: &str) -> Self {
        Self::new(
            409,
            StatusReason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} {:?}: {}",
                gr, name, msg
            ),
        )
        .with_resource(gr, name)
    }

    /// 409 Conflict for a stale resourceVersion.
    pub fn optimistic_lock(gr: &GroupResource, name: &str) -> Self {
        Self::conflict(gr, name, OPTIMISTIC_LOCK_MSG)
    }

    /// 403 `<gr> "<name>" is forbidden: <msg>`.
    pub fn forbidden(gr: &GroupResource, name: &str, msg: &str) -> Self {
        let message = if name.is_empty() {
            format!("{} is forbidden: {}", gr, msg)
        } else {
            format!("{} {:?} is forbidden: {}", gr, name, msg)
        };
        Self::new(403, StatusReason::Forbidden, message).with_resource(gr, name)
    }

    /// 422 Invalid: `<Kind> "<name>" is invalid: <errors>`; `group_kind` is
    /// `Kind` or `Kind.group`.
    pub fn invalid(group: &str, kind: &str, name: &str, errs: &[FieldError]) -> Self {
        let group_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{}.{}", kind, group)
        };
        let causes: Vec<StatusCause> = errs
            .iter()
            .map(|e| StatusCause {
                reason: e.kind.cause_reason().to_string(),
                message: e.body(),
                field: e.field.clone(),
            })
            .collect();
        let message = format!(
            "{} {:?} is invalid: {}",
            group_kind,
            name,
            FieldError::aggregate(errs)
        );
        let mut e = Self::new(422, StatusReason::Invalid, message);
        e.details = Some(Box::new(StatusDetails {
            name: name.to_string(),
            group: group.to_string(),
            kind: kind.to_string(),
            causes,
            ..Default::default()
        }));
        e
    }

    /// 400 BadRequest with no details.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, StatusReason::BadRequest, message)
    }

    /// 405 MethodNotAllowed as go-restful reports it, with `details: {}`.
    pub fn method_not_allowed() -> Self {
        let mut e = Self::new(
            405,
            StatusReason::MethodNotAllowed,
            "the server does not allow this method on the requested resource",
        );
        e.details = Some(Box::default());
        e
    }

    /// 405 MethodNotSupported: `<verb> is not supported on resources of kind "<gr>"`.
    pub fn method_not_supported(gr: &GroupResource, action: &str) -> Self {
        let mut e = Self::new(
            405,
            StatusReason::MethodNotAllowed,
            format!(
                "{} is not supported on resources of kind {:?}",
                action,
                gr.to_string()
            ),
        );
        e.details = Some(Box::new(StatusDetails {
            group: gr.group.clone(),
            kind: gr.resource.clone(),
            ..Default::default()
        }));
        e
    }

    /// 404 for a path the server does not serve.
    pub fn path_not_found() -> Self {
        let mut e = Self::new(
            404,
            StatusReason::NotFound,
            "the server could not find the requested resource",
        );
        e.details = Some(Box::default());
        e
    }

    /// 413 `Request entity too large: limit is N`.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            StatusReason::RequestEntityTooLarge,
            format!("Request entity too large: limit is {}", limit),
        )
    }

    /// 415 for a body media type we cannot decode.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, StatusReason::UnsupportedMediaType, message)
    }

    /// 406 for an Accept header we cannot satisfy.
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, StatusReason::NotAcceptable, message)
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::new(401, StatusReason::Unauthorized, "Unauthorized")
    }

    /// 500 InternalError: `Internal error occurred: <msg>`.
    pub fn internal(msg: impl std::fmt::Display) -> Self {
        let mut e = Self::new(
            500,
            StatusReason::InternalError,
            format!("Internal error occurred: {}", msg),
        );
        e.details = Some(Box::new(StatusDetails {
            causes: vec![StatusCause {
                message: msg.to_string(),
                ..Default::default()
            }],
            ..Default::default()
        }));
        e
    }

    /// 504 Timeout for a revision the store has not reached:
    /// `Timeout: Too large resource version: X, current: Y`, with a
    /// `ResourceVersionTooLarge` cause and `Retry-After: 1`.
    pub fn too_large_resource_version(requested: u64, current: u64) -> Self {
        let mut e = Self::new(
            504,
            StatusReason::Timeout,
            format!(
                "Timeout: Too large resource version: {}, current: {}",
                requested, current
            ),
        );
        e.details = Some(Box::new(StatusDetails {
            causes: vec![StatusCause {
                reason: "ResourceVersionTooLarge".into(),
                message: "Too large resource version".into(),
                field: String::new(),
            }],
            retry_after_seconds: Some(1),
            ..Default::default()
        }));
        e
    }

    /// 503 ServiceUnavailable (a backing service cannot be reached).
    pub fn unavailable(msg: impl Into<String>) -> Self {
        Self::new(503, StatusReason::ServiceUnavailable, msg)
    }

    /// The Status object as JSON.
    pub fn to_status_json(&self) -> serde_json::Value {
        let mut metadata = serde_json::Map::new();
        if let Some(c) = &self.continue_token {
            metadata.insert("continue".into(), serde_json::Value::String(c.clone()));
        }
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), "Status".into());
        m.insert("apiVersion".into(), "v1".into());
        m.insert("metadata".into(), serde_json::Value::Object(metadata));
        m.insert("status".into(), "Failure".into());
        m.insert("message".into(), self.message.clone().into());
        if !self.reason.is_empty() {
            m.insert("reason".into(), self.reason.as_str().into());
        }
        if let Some(d) = &self.details {
            m.insert(
                "details".into(),
                serde_json::to_value(d).unwrap_or(serde_json::Value::Null),
            );
        }
        m.insert("code".into(), self.code.into());
        serde_json::Value::Object(m)
    }

    /// Parse a Status object back (used by remote service clients).
    pub fn from_status_json(v: &serde_json::Value) -> Option<Self> {
        let code = v.get("code")?.as_u64()? as u16;
        let details = v
            .get("details")
            .and_then(|d| serde_json::from_value(d.clone()).ok());
        Some(ApiError {
            code,
            reason: v
                .get("reason")
                .and_then(|r| r.as_str())
                .unwrap_or("")
                .into(),
            message: v
                .get("message")
                .and_then(|r| r.as_str())
                .unwrap_or("")
                .to_string(),
            details,
            continue_token: v
                .pointer("/metadata/continue")
                .and_then(|c| c.as_str())
                .map(str::to_string),
            warnings: Vec::new(),
            audit_annotations: None,
        })
    }
}

/// kube-apiserver's optimistic-lock message.
pub const OPTIMISTIC_LOCK_MSG: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_message_and_details() {
        let e = ApiError::not_found(&GroupResource::new("apps", "deployments"), "foo");
        assert_eq!(e.message, "deployments.apps \"foo\" not found");
        let j = e.to_status_json();
        assert_eq!(j["details"]["kind"], "deployments");
        assert_eq!(j["details"]["group"], "apps");
        assert_eq!(j["code"], 404);
        assert_eq!(ApiError::from_status_json(&j).unwrap(), e);
    }

    #[test]
    fn conflict_message() {
        let e = ApiError::optimistic_lock(&GroupResource::new("", "configmaps"), "c");
        assert_eq!(e.message, "Operation cannot be fulfilled on configmaps \"c\": the object has been modified; please apply your changes to the latest version and try again");
    }

    #[test]
    fn invalid_renders_causes() {
        let errs = vec![FieldError::invalid("metadata.name", "Foo_Bar", "bad")];
        let e = ApiError::invalid("", "ConfigMap", "Foo_Bar", &errs);
        assert_eq!(
            e.message,
            "ConfigMap \"Foo_Bar\" is invalid: metadata.name: Invalid value: \"Foo_Bar\": bad"
        );
        let d = e.details.unwrap();
        assert_eq!(d.causes[0].reason, "FieldValueInvalid");
        assert_eq!(d.causes[0].message, "Invalid value: \"Foo_Bar\": bad");
    }
}
