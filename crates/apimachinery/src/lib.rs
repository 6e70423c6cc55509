//! Keelson's shared Kubernetes API vocabulary: `Status` errors, field errors,
//! group/resource keys, object metadata helpers, name validation and the
//! typed request options with the resourceVersion tables.
#![forbid(unsafe_code)]

pub mod featuregates;
pub mod field;
pub mod generate_name;
pub mod go_syntax;
pub mod gofmt;
pub mod gr;
pub mod json;
pub mod managedfields;
pub mod meta;
pub mod names;
pub mod options;
pub mod status;
pub mod version;
pub mod watch;

pub use field::{FieldError, FieldErrorKind};
pub use gr::{GroupResource, ObjectKey};
pub use status::{ApiError, ApiResult, StatusCause, StatusDetails, StatusReason};
