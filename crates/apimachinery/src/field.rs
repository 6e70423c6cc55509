//! Field errors (`k8s.io/apimachinery/pkg/util/validation/field`).

use serde_json::Value;

/// The type of a field error; decides its wording and cause reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorKind {
    Invalid,
    Required,
    NotSupported,
    Forbidden,
    TooLong,
    Duplicate,
    NotFound,
    /// `Too many`: a list or map over its maximum size.
    TooMany,
}

impl FieldErrorKind {
    /// The human string, e.g. `Invalid value`.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldErrorKind::Invalid => "Invalid value",
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::Duplicate => "Duplicate value",
            FieldErrorKind::NotFound => "Not found",
            FieldErrorKind::TooMany => "Too many",
        }
    }

    /// The `details.causes[].reason` value.
    pub fn cause_reason(self) -> &'static str {
        match self {
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::NotSupported => "FieldValueNotSupported",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::TooLong => "FieldValueTooLong",
            FieldErrorKind::Duplicate => "FieldValueDuplicate",
            FieldErrorKind::NotFound => "FieldValueNotFound",
            FieldErrorKind::TooMany => "FieldValueTooMany",
        }
    }

    fn omits_value(self) -> bool {
        matches!(
            self,
            FieldErrorKind::Required | FieldErrorKind::Forbidden | FieldErrorKind::TooLong
        )
    }
}

/// One validation failure on one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub kind: FieldErrorKind,
    /// Path such as `metadata.labels`.
    pub field: String,
    /// The offending value, if any.
    pub value: Option<Value>,
    /// Extra explanation.
    pub detail: String,
}

impl FieldError {
    /// `Invalid value` with a string value.
    pub fn invalid(field: &str, value: impl Into<Value>, detail: &str) -> Self {
        FieldError {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            value: Some(value.into()),
            detail: detail.into(),
        }
    }
    /// `Required value`.
    pub fn required(field: &str, detail: &str) -> Self {
        FieldError {
            kind: FieldErrorKind::Required,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }
    /// `Forbidden`.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        FieldError {
            kind: FieldErrorKind::Forbidden,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }
    /// `Too long`.
    pub fn too_long(field: &str, detail: &str) -> Self {
        FieldError {
            kind: FieldErrorKind::TooLong,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }
    /// `Unsupported value` with the list of supported values.
    pub fn not_supported(field: &str, value: impl Into<Value>, supported: &[&str]) -> Self {
        let detail = format!(
            "supported values: {}",
            supported
                .iter()
                .map(|s| format!("{:?}", s))
                .collect::<Vec<_>>()
                .join(", ")
        );
        FieldError {
            kind: FieldErrorKind::NotSupported,
            field: field.into(),
            value: Some(value.into()),
            detail,
        }
    }

    /// The body without the field path: `Invalid value: "x": detail`.
    pub fn body(&self) -> String {
        let mut s = self.kind.as_str().to_string();
        if !self.kind.omits_value() {
            if let Some(v) = &self.value {
                s.push_str(": ");
                s.push_str(&render_value(v));
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// Several errors as kube-apiserver's aggregate: one bare, many `[a, b]`.
    pub fn aggregate(errs: &[FieldError]) -> String {
        let mut seen = Vec::new();
        for e in errs {
            let s = e.to_string();
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
        if seen.len() == 1 {
            seen.remove(0)
        } else {
            format!("[{}]", seen.join(", "))
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.body())
        } else {
            write!(f, "{}: {}", self.field, self.body())
        }
    }
}

/// The JSON kind of a value as Go's `encoding/json` names it in
/// `UnmarshalTypeError` messages (`number`, `string`, `object`, ...).
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Render a value as Go's field errors do (strings quoted, 1.34 JSON otherwise).
pub fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{:?}", s),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_kube() {
        let e = FieldError::required("metadata.name", "name or generateName is required");
        assert_eq!(
            e.to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
        let e = FieldError::not_supported(
            "fieldValidation",
            "Bogus",
            &["", "Ignore", "Strict", "Warn"],
        );
        assert_eq!(e.to_string(), "fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
        let two = [
            FieldError::forbidden("a", "x"),
            FieldError::forbidden("b", "y"),
        ];
        assert_eq!(
            FieldError::aggregate(&two),
            "[a: Forbidden: x, b: Forbidden: y]"
        );
    }
}
