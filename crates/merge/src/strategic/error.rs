//! The errors kube's `strategicpatch` returns while applying a patch, with
//! Go's wording, and the answer kube-apiserver's patch handler gives for
//! each (`interpretStrategicMergePatchError`, else the raw error).

use keelson_apimachinery::{ApiError, StatusReason};
use serde_json::{Map, Value};

use super::gofmt;
use crate::errors;

/// A failed strategic merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SmpError {
    /// `mergepatch.ErrBadPatchFormatForPrimitiveList`: 400.
    BadPrimitiveList,
    /// `mergepatch.ErrBadPatchFormatForRetainKeys`: 400.
    BadRetainKeys,
    /// `mergepatch.ErrBadPatchFormatForSetElementOrderList`: 400.
    BadSetElementOrder,
    /// `mergepatch.ErrNoListOfLists`: 422 with the generic message.
    ListOfLists,
    /// Any other error: kube-apiserver passes it through unconverted, so
    /// the client gets a 500 with no reason and Go's message.
    Other(String),
    /// kube panics on this input (a nil element type, comparing or
    /// hashing a map): the apiserver answers 500.
    Panic,
}

pub(super) type SmpResult<T> = Result<T, SmpError>;

impl SmpError {
    fn other(msg: impl Into<String>) -> SmpError {
        SmpError::Other(msg.into())
    }
}

/// What kube-apiserver's panic recovery writes.
const PANIC_MESSAGE: &str = "This request caused apiserver to panic. Look in the logs for details.";

impl From<SmpError> for ApiError {
    fn from(e: SmpError) -> ApiError {
        match e {
            SmpError::BadPrimitiveList => {
                ApiError::bad_request("invalid patch format of primitive list")
            }
            SmpError::BadRetainKeys => ApiError::bad_request("invalid patch format of retainKeys"),
            SmpError::BadSetElementOrder => {
                ApiError::bad_request("invalid patch format of setElementOrder list")
            }
            SmpError::ListOfLists => errors::rejected(),
            SmpError::Other(msg) => ApiError::new(500, StatusReason::Unknown, msg),
            SmpError::Panic => ApiError::new(500, StatusReason::InternalError, PANIC_MESSAGE),
        }
    }
}

/// `mergepatch.ErrNoMergeKey`.
pub(super) fn no_merge_key(m: &Map<String, Value>, key: &str) -> SmpError {
    SmpError::other(format!(
        "map: {} does not contain declared merge key: {key}",
        gofmt::v_map(m)
    ))
}

/// `mergepatch.ErrBadArgType` for a value that is not a `[]interface{}`.
pub(super) fn not_a_list(actual: &Value) -> SmpError {
    SmpError::other(format!(
        "expected a []interface {{}}, but received a {}",
        gofmt::type_name(actual)
    ))
}

/// `mergepatch.ErrBadArgType` for a value that is not a
/// `map[string]interface{}`.
pub(super) fn not_a_map(actual: &Value) -> SmpError {
    SmpError::other(format!(
        "expected a map[string]interface {{}}, but received a {}",
        gofmt::type_name(actual)
    ))
}

/// `mergepatch.ErrBadPatchType`: an unknown `$patch` value.
pub(super) fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> SmpError {
    SmpError::other(format!(
        "unknown patch type: {} in map: {}",
        gofmt::s(directive),
        gofmt::v_map(m)
    ))
}

/// `$patch: merge` as an item of a merging list.
pub(super) fn list_merge_directive() -> SmpError {
    SmpError::other("merging lists cannot yet be specified in the patch")
}

/// A list of maps merged without a merge key; `kind` is the Go kind of the
/// element type (`struct` for kube's API types).
pub(super) fn no_merge_key_declared(kind: &str) -> SmpError {
    SmpError::other(format!("cannot merge lists without merge key for {kind}"))
}

/// `sliceElementType` over lists whose elements differ in type.
pub(super) fn mixed_element_types(lists: &[&[Value]]) -> SmpError {
    let rendered: Vec<String> = lists.iter().map(|l| gofmt::v_list(l)).collect();
    SmpError::other(format!(
        "list element types are not identical: [{}]",
        rendered.join(" ")
    ))
}

/// `sliceElementType` over lists with no element at all.
pub(super) fn no_elements() -> SmpError {
    SmpError::other("no elements in any of the given slices")
}

/// `findMapInSliceBasedOnKeyValue` met an element that is not a map.
pub(super) fn element_not_a_map(index: usize) -> SmpError {
    SmpError::other(format!("value for key {index} is not a map"))
}

/// A patch list whose items are out of the `$setElementOrder` order.
pub(super) fn order_mismatch(patch_list: &[Value], order: &[Value]) -> SmpError {
    SmpError::other(format!(
        "The order in patch list:\n{}\n doesn't match $setElementOrder list:\n{}\n",
        gofmt::v_list(patch_list),
        gofmt::v_list(order)
    ))
}

/// `extractRetainKeysPatchStrategy` over a tag it cannot read.
pub(super) fn unexpected_strategy(strategies: &[&str]) -> SmpError {
    SmpError::other(format!(
        "unexpected patch strategy: [{}]",
        strategies.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_like_kube_apiserver() {
        let e = ApiError::from(SmpError::BadRetainKeys);
        assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
        assert_eq!(e.message, "invalid patch format of retainKeys");
        let e = ApiError::from(SmpError::ListOfLists);
        assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
        let m = json!({"image": "nginx"});
        let e = ApiError::from(no_merge_key(m.as_object().unwrap(), "name"));
        assert_eq!((e.code, e.reason.as_str()), (500, ""));
        assert_eq!(
            e.message,
            "map: map[image:nginx] does not contain declared merge key: name"
        );
        assert!(e.to_status_json().get("reason").is_none());
    }
}
