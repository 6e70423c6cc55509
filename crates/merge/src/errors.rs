//! The `Status` errors kube-apiserver's patch handler returns
//! (`k8s.io/apiserver/pkg/endpoints/handlers/patch.go`).

use keelson_apimachinery::ApiError;

/// kube's `maxJSONPatchOperations`.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The patch types this service applies, as listed in its 415 message.
pub const SUPPORTED_PATCH_TYPES: &str = "application/json-patch+json, application/merge-patch+json";

/// 400 `error decoding patch: <go error>`.
pub(crate) fn decoding(inner: &str) -> ApiError {
    ApiError::bad_request(format!("error decoding patch: {inner}"))
}

/// 413 for a JSON patch with too many operations.
pub(crate) fn too_many_operations(n: usize) -> ApiError {
    ApiError::new(
        413,
        "RequestEntityTooLarge",
        format!("Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {n}"),
    )
}

/// 422 from `NewGenericServerResponse(422, ...)`: the json-patch error text
/// is dropped and `details` is `{}`.
pub(crate) fn rejected() -> ApiError {
    let mut e = ApiError::new(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    );
    e.details = Some(Box::default());
    e
}

/// 415 for patch types that arrive with a later issue.
pub(crate) fn unsupported(media_type: &str) -> ApiError {
    ApiError::unsupported_media_type(format!(
        "the body of the request was in an unknown format - accepted media types include: {SUPPORTED_PATCH_TYPES} ({media_type} is not supported yet)"
    ))
}
