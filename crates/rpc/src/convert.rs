//! Conversions between `keelson-api` types and their proto messages.

use keelson_apimachinery::{ApiError, GroupResource, ObjectKey};
use serde_json::Value;

use crate::pb::common;

/// Encode a JSON object for the wire.
pub(crate) fn to_json_bytes(v: &Value) -> Vec<u8> {
    // Serializing a `Value` to memory cannot fail (all map keys are strings).
    serde_json::to_vec(v).unwrap_or_default()
}

/// Decode a JSON field received from `service`; a bad payload is a contract
/// violation between our own services, hence `500`.
pub(crate) fn from_json_bytes(service: &str, field: &str, b: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(b)
        .map_err(|e| ApiError::internal(format!("{service} rpc: {field} is not valid JSON: {e}")))
}

/// A required message field was absent.
pub(crate) fn missing(service: &str, field: &str) -> ApiError {
    ApiError::internal(format!("{service} rpc: missing {field}"))
}

/// An enum field held an unknown or unspecified value.
pub(crate) fn bad_enum(service: &str, field: &str, value: i32) -> ApiError {
    ApiError::internal(format!("{service} rpc: invalid {field} {value}"))
}

pub(crate) fn gr_to_pb(gr: &GroupResource) -> common::GroupResource {
    common::GroupResource {
        group: gr.group.clone(),
        resource: gr.resource.clone(),
    }
}

pub(crate) fn gr_from_pb(gr: common::GroupResource) -> GroupResource {
    GroupResource {
        group: gr.group,
        resource: gr.resource,
    }
}

pub(crate) fn key_to_pb(key: &ObjectKey) -> common::ObjectKey {
    common::ObjectKey {
        gr: Some(gr_to_pb(&key.gr)),
        namespace: key.namespace.clone(),
        name: key.name.clone(),
    }
}

pub(crate) fn key_from_pb(
    service: &str,
    key: Option<common::ObjectKey>,
) -> Result<ObjectKey, ApiError> {
    let key = key.ok_or_else(|| missing(service, "key"))?;
    let gr = key.gr.ok_or_else(|| missing(service, "key.gr"))?;
    Ok(ObjectKey {
        gr: gr_from_pb(gr),
        namespace: key.namespace,
        name: key.name,
    })
}
