//! The `Status` errors kube-apiserver's patch handler returns
//! (`k8s.io/apiserver/pkg/endpoints/handlers/patch.go`).

use keelson_apimachinery::ApiError;

/// kube's `maxJSONPatchOperations`.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The patch types this service applies, in the order kube-apiserver lists
/// them in its 415 for a PATCH of a built-in resource
/// (`negotiation.NewUnsupportedMediaTypeError(supportedTypes)`).
pub const SUPPORTED_PATCH_TYPES: &str = "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml";

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

/// 422 from `NewGenericServerResponse(422, ...)`: the underlying error text
/// (a failed JSON patch operation, strategic merge patch's list of lists)
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
