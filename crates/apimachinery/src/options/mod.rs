//! Typed Kubernetes request options (`meta.k8s.io/v1` `ListOptions`,
//! `GetOptions`, `CreateOptions`, `UpdateOptions`, `PatchOptions`,
//! `DeleteOptions`), parsed from the query string (and, for delete, the
//! body) and validated once, with kube-apiserver's messages.
//!
//! Pure: no IO, no knowledge of resources. What needs the catalog (label and
//! field selectors, which fields a resource can select on) stays a string
//! here and is checked by the caller; which state to read is a typed answer
//! from the resourceVersion tables in [`resource_version`].

pub mod continue_token;
pub mod delete;
pub mod get;
pub mod list;
pub mod query;
pub mod resource_version;
pub mod write;

pub use continue_token::{expired_continue, ContinueToken};
pub use delete::{DeleteOptions, Preconditions, PropagationPolicy};
pub use get::GetOptions;
pub use list::{ListOptions, ReadFrom};
pub use query::Query;
pub use resource_version::{ListRevision, ResourceVersionMatch, WatchStart};
pub use write::{CreateOptions, FieldValidation, PatchOptions, UpdateOptions};

use crate::field::FieldError;
use crate::status::ApiError;

/// kube's `422` for invalid options of `kind` (e.g. `ListOptions`):
/// `ListOptions.meta.k8s.io "" is invalid: <errors>`.
pub fn invalid_options(kind: &str, errs: &[FieldError]) -> ApiError {
    ApiError::invalid("meta.k8s.io", kind, "", errs)
}

/// The first 30 characters of a body (and ` ...` when there are more), as
/// kube quotes a body it could not decode.
pub fn body_summary(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(body);
    let mut out: String = s.chars().take(30).collect();
    if s.chars().count() > 30 {
        out.push_str(" ...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_cut_at_30_characters() {
        assert_eq!(body_summary(b"{\"a\":1}"), "{\"a\":1}");
        let long = "x".repeat(31);
        assert_eq!(
            body_summary(long.as_bytes()),
            format!("{} ...", &long[..30])
        );
        assert_eq!(body_summary("é".repeat(30).as_bytes()), "é".repeat(30));
    }
}
