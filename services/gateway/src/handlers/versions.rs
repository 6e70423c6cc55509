//! Built-in resources served at several versions and stored at one
//! (`autoscaling/v1` HorizontalPodAutoscalers stored as `v2`): request
//! bodies go to the store in the storage version, and every object read
//! (gets, write answers, list items, watch events) is shown in the version
//! asked for. The conversions are `keelson_registry::conversion`'s.

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt as _};
use keelson_apimachinery::{ApiError, ApiResult};
use keelson_codec::{encode_event_value, EventType, Format, Target};
use keelson_registry::conversion;
use keelson_registry::ResourceInfo;
use serde_json::Value;

/// Whether `info` is served by converting from another stored version.
pub(crate) fn converts(info: &ResourceInfo) -> bool {
    info.custom.is_none() && conversion::needs_conversion(&info.group, &info.version, &info.plural)
}

fn convert_to(object: &mut Value, version: &str) -> ApiResult<()> {
    conversion::convert(object, version).map_err(|e| ApiError::internal(e.to_string()))?;
    keelson_codec::protobuf::go_json::normalize(object);
    Ok(())
}

/// An object of `info`'s kind about to be stored: in the storage version.
pub(crate) fn to_storage(info: &ResourceInfo, object: &mut Value) -> ApiResult<()> {
    if !converts(info) || !own_kind(info, object) {
        return Ok(());
    }
    match conversion::storage_version(&info.group, &info.plural) {
        Some(v) => convert_to(object, v),
        None => Ok(()),
    }
}

/// An object of `info`'s kind read from the store: in `info`'s version.
/// Anything else (a `Status`) is left as it is.
pub(crate) fn to_served(info: &ResourceInfo, object: &mut Value) -> ApiResult<()> {
    if !converts(info) {
        return Ok(());
    }
    // A deletecollection answers the list of what it deleted.
    if object.get("kind").and_then(Value::as_str) == Some(info.list_kind.as_str()) {
        if let Some(items) = object.get_mut("items").and_then(Value::as_array_mut) {
            for item in items.iter_mut() {
                item_to_served(info, item)?;
            }
        }
        return Ok(());
    }
    if !own_kind(info, object) {
        return Ok(());
    }
    convert_to(object, &info.version)
}

fn own_kind(info: &ResourceInfo, object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some(info.kind.as_str())
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.split_once('/').map(|(g, _)| g) == Some(info.group.as_str()))
}

/// Whether a list or watch in `out` needs its objects converted (Tables
/// and object metadata look the same in every version).
pub(crate) fn converts_format(info: &ResourceInfo, out: Format) -> bool {
    converts(info) && out.target == Target::Object
}

/// JSON list items (the cache's bytes) shown in `info`'s version.
pub(crate) fn list_items(
    info: &ResourceInfo,
    items: BoxStream<'static, ApiResult<Bytes>>,
) -> BoxStream<'static, ApiResult<Bytes>> {
    let info = info.clone();
    items
        .map(move |item| {
            let bytes = item?;
            let mut v: Value = serde_json::from_slice(&bytes)
                .map_err(|e| ApiError::internal(format!("list item: {e}")))?;
            item_to_served(&info, &mut v)?;
            keelson_apimachinery::json::to_vec_go(&v)
                .map(Bytes::from)
                .map_err(|e| ApiError::internal(e.to_string()))
        })
        .boxed()
}

/// A list item (stored, without type meta as list items are) in `info`'s
/// version, still without type meta.
fn item_to_served(info: &ResourceInfo, item: &mut Value) -> ApiResult<()> {
    let typed = item.get("apiVersion").is_some();
    if !typed {
        if let Some(m) = item.as_object_mut() {
            let storage =
                conversion::storage_version(&info.group, &info.plural).unwrap_or(&info.version);
            m.insert(
                "apiVersion".into(),
                Value::from(format!("{}/{}", info.group, storage)),
            );
            m.insert("kind".into(), Value::from(info.kind.clone()));
        }
    }
    if own_kind(info, item) {
        convert_to(item, &info.version)?;
    }
    if !typed {
        if let Some(m) = item.as_object_mut() {
            // `shift_remove` keeps the other fields in place.
            m.shift_remove("kind");
            m.shift_remove("apiVersion");
        }
    }
    Ok(())
}

/// A JSON watch frame from the cache (`{"type":..,"object":..}\n`) as an
/// event of `stream` (JSON, Protobuf or CBOR framing) with its object in
/// `info`'s version.
pub(crate) fn watch_frame(
    info: &ResourceInfo,
    stream: Format,
    t: EventType,
    frame: Bytes,
) -> Bytes {
    let Ok(mut event) = serde_json::from_slice::<Value>(&frame) else {
        return frame;
    };
    let Some(object) = event.get_mut("object") else {
        return frame;
    };
    if to_served(info, object).is_err() {
        return frame;
    }
    encode_event_value(stream, t, object).unwrap_or(frame)
}
