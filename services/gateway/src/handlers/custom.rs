//! What the handlers do differently for custom resources (resources of a
//! CustomResourceDefinition, `ResourceInfo.custom`): the deprecation
//! `Warning`, the versions kube converts between (`conversion: None`
//! here, `Webhook` through `keelson_apiextensions::conversion`), and the
//! patch types a custom resource accepts.

use bytes::Bytes;
use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt as _, TryStreamExt as _};
use http::HeaderMap;
use keelson_api::StoreApi;
use keelson_apiextensions::conversion::WebhookConverter;
use keelson_apimachinery::{ApiError, ApiResult};
use keelson_codec::{negotiate_output, Encoding, Format, Target};
use keelson_registry::ResourceInfo;
use serde_json::Value;

use crate::Backends;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// kube's custom-resource serializers: JSON, YAML (and CBOR, served by
/// Keelson for every resource); no Protobuf.
const NOT_ACCEPTABLE: &str =
    "only the following media types are accepted: application/json, application/yaml, application/cbor";
const UNSUPPORTED_MEDIA_TYPE: &str = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/cbor";

/// The catalog generation to serve a request for `group`/`version`/
/// `resource` with, when the current one lacks it. A client that saw a
/// CRD `Established` may ask before this process's catalog follower has
/// applied it (the two follow different streams): if the CRD
/// (`<resource>.<group>`) is stored with its names accepted and serves
/// `version`, wait up to 2 s for the follower, as kube's own handler
/// serves every Established CRD. Anything else answers at once.
pub(crate) async fn await_served(
    b: &Backends,
    group: &str,
    version: &str,
    resource: &str,
) -> Option<Arc<keelson_registry::CatalogSnapshot>> {
    if group.is_empty()
        || keelson_registry::CatalogSnapshot::builtin()
            .group(group)
            .is_some()
    {
        return None;
    }
    let key = keelson_api::ObjectKey::new(
        keelson_apiextensions::crd_resource(),
        "",
        &format!("{resource}.{group}"),
    );
    let stored = b.store.get(&key).await.ok()?;
    let crd = keelson_apiextensions::Crd::from_value(&stored).ok()?;
    let accepted = crd.condition_true("NamesAccepted") || crd.condition_true("Established");
    if !accepted
        || !crd
            .spec
            .versions
            .iter()
            .any(|v| v.served && v.name == version)
    {
        return None;
    }
    for _ in 0..200 {
        let snapshot = b.catalog.snapshot();
        if snapshot.lookup(group, version, resource).is_some() {
            return Some(snapshot);
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    None
}

/// The response format for a custom resource: the Accept header negotiated
/// without Protobuf, which custom resources do not have (406 when nothing
/// else is acceptable).
pub(crate) fn output_format(
    info: &ResourceInfo,
    headers: &HeaderMap,
    out: Format,
) -> ApiResult<Format> {
    if info.custom.is_none() || out.encoding != Encoding::Protobuf {
        return Ok(out);
    }
    let accept = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let rest: Vec<&str> = accept
        .split(',')
        .filter(|r| r.split(';').next().map(str::trim) != Some(PROTOBUF))
        .collect();
    if rest.iter().all(|r| r.trim().is_empty()) {
        return Err(ApiError::not_acceptable(NOT_ACCEPTABLE));
    }
    negotiate_output(Some(&rest.join(","))).map_err(|_| ApiError::not_acceptable(NOT_ACCEPTABLE))
}

/// A Protobuf body for a custom object is kube's `415`.
pub(crate) fn check_body_type(info: &ResourceInfo, headers: &HeaderMap) -> ApiResult<()> {
    let ct = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if info.custom.is_some() && ct.split(';').next().map(str::trim) == Some(PROTOBUF) {
        return Err(ApiError::unsupported_media_type(UNSUPPORTED_MEDIA_TYPE));
    }
    Ok(())
}

/// kube's `415` for a strategic merge patch of a custom resource (CBOR
/// served: `apply-patch+cbor` is listed).
pub(crate) fn strategic_merge_unsupported() -> ApiError {
    ApiError::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor",
    )
}

/// The `Warning` every request to a deprecated version gets.
pub(crate) fn deprecation_warning(info: &ResourceInfo) -> Option<String> {
    info.custom.as_ref()?.deprecation_warning.clone()
}

/// The converter every handler of the process shares (one HTTPS client
/// per CRD revision).
fn converter() -> &'static WebhookConverter {
    static CONVERTER: std::sync::OnceLock<WebhookConverter> = std::sync::OnceLock::new();
    CONVERTER.get_or_init(WebhookConverter::new)
}

/// Whether `info`'s CRD converts through a webhook.
pub(crate) fn webhook_converted(info: &ResourceInfo) -> bool {
    info.custom.as_ref().is_some_and(|c| c.conversion_webhook)
}

/// Convert the objects of `info`'s own kind among `objects` to
/// `api_version` through the CRD's conversion webhook (nothing to do for
/// other CRDs, other kinds, or objects already in that version). One
/// review carries them all.
pub(crate) async fn convert_to(
    b: &Backends,
    info: &ResourceInfo,
    objects: &mut [Value],
    api_version: &str,
) -> ApiResult<()> {
    let Some(c) = info.custom.as_deref().filter(|c| c.conversion_webhook) else {
        return Ok(());
    };
    let own: Vec<usize> = (0..objects.len())
        .filter(|&i| objects[i].get("kind").and_then(Value::as_str) == Some(info.kind.as_str()))
        .collect();
    if own.len() == objects.len() {
        return Ok(converter()
            .convert(&*b.store, c, objects, api_version)
            .await?);
    }
    let mut picked: Vec<Value> = own.iter().map(|&i| objects[i].take()).collect();
    let converted = converter()
        .convert(&*b.store, c, &mut picked, api_version)
        .await;
    for (&i, o) in own.iter().zip(picked) {
        objects[i] = o;
    }
    Ok(converted?)
}

/// An object read for a write (the old object of an update or patch) in
/// the version the request is in.
pub(crate) async fn to_request_version(
    b: &Backends,
    info: &ResourceInfo,
    object: &mut Value,
) -> ApiResult<()> {
    convert_to(b, info, std::slice::from_mut(object), &info.api_version()).await
}

/// An admitted object in the CRD's storage version, ready to store.
pub(crate) async fn to_storage_version(
    b: &Backends,
    info: &ResourceInfo,
    object: &mut Value,
) -> ApiResult<()> {
    let Some(c) = info.custom.as_deref() else {
        return Ok(());
    };
    let storage = format!("{}/{}", info.group, c.storage_version);
    convert_to(b, info, std::slice::from_mut(object), &storage).await
}

/// [`as_served_version`] after the webhook conversion the CRD asks for.
pub(crate) async fn to_served_version(
    b: &Backends,
    info: &ResourceInfo,
    object: &mut Value,
) -> ApiResult<()> {
    to_request_version(b, info, object).await?;
    as_served_version(info, object);
    Ok(())
}

/// The items of a list (JSON, as the cache gives them) converted in one
/// review when the CRD converts through a webhook; other lists pass as
/// they are.
pub(crate) async fn convert_list_items(
    b: &Backends,
    info: &ResourceInfo,
    item_format: Format,
    items: BoxStream<'static, ApiResult<Bytes>>,
) -> ApiResult<BoxStream<'static, ApiResult<Bytes>>> {
    if !webhook_converted(info) || item_format != Format::JSON {
        return Ok(items);
    }
    let raw: Vec<Bytes> = items.try_collect().await?;
    let mut values = raw
        .iter()
        .map(|b| serde_json::from_slice::<Value>(b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::internal(e.to_string()))?;
    // The cache's JSON items carry no type meta: they are stored in the
    // storage version.
    let storage = info
        .custom
        .as_deref()
        .map(|c| format!("{}/{}", info.group, c.storage_version))
        .unwrap_or_default();
    for v in &mut values {
        if let Some(m) = v.as_object_mut() {
            m.entry("kind")
                .or_insert_with(|| Value::from(info.kind.clone()));
            m.entry("apiVersion")
                .or_insert_with(|| Value::from(storage.clone()));
        }
    }
    convert_to(b, info, &mut values, &info.api_version()).await?;
    let out = values
        .into_iter()
        .map(|v| {
            keelson_apimachinery::json::to_vec_go(&v)
                .map(Bytes::from)
                .map_err(|e| ApiError::internal(e.to_string()))
        })
        .collect::<Vec<_>>();
    Ok(futures::stream::iter(out).boxed())
}

/// Whether a list or watch of `info` in `out` reads JSON from the cache
/// and shows it here: a custom resource served at a version other than
/// its storage version, or converted by a webhook (objects may be stored
/// in an older version), shown as objects or a Table (whose columns read
/// the served version's fields). Object metadata looks the same in every
/// version and keeps the cache's shared bytes.
pub(crate) fn converts_format(info: &ResourceInfo, out: Format) -> bool {
    (other_version(info) || webhook_converted(info))
        && matches!(out.target, Target::Object | Target::Table(_))
}

/// The object of a JSON watch event from the cache
/// (`{"type":..,"object":{..}}`) in `info`'s version: converted through
/// the CRD's webhook when it has one, then shown as
/// [`as_served_version`] shows it.
pub(crate) async fn event_object(
    store: &Arc<dyn StoreApi>,
    info: &ResourceInfo,
    frame: &[u8],
) -> ApiResult<Value> {
    let mut event = serde_json::from_slice::<Value>(frame)
        .map_err(|e| ApiError::internal(format!("watch event: {e}")))?;
    let mut object = event
        .get_mut("object")
        .map(Value::take)
        .ok_or_else(|| ApiError::internal("watch event without an object"))?;
    if let Some(c) = info.custom.as_deref().filter(|c| c.conversion_webhook) {
        if object.get("kind").and_then(Value::as_str) == Some(info.kind.as_str()) {
            converter()
                .convert(
                    &**store,
                    c,
                    std::slice::from_mut(&mut object),
                    &info.api_version(),
                )
                .await?;
        }
    }
    as_served_version(info, &mut object);
    Ok(object)
}

/// kube 1.34's `forbidCreateAdmission`: a create of `name` (a POST, or
/// an apply that creates) while the CRD is being deleted is `403`
/// `<plural>.<group> "<name>" is forbidden: create not allowed while
/// custom resource definition is terminating`.
pub(crate) fn check_create(info: &ResourceInfo, name: &str) -> ApiResult<()> {
    if info.custom.as_ref().is_some_and(|c| c.terminating) {
        return Err(ApiError::forbidden(
            &info.gr(),
            name,
            "create not allowed while custom resource definition is terminating",
        ));
    }
    Ok(())
}

/// A custom object read or written through `info`'s version shows that
/// version (`conversion: None` rewrites `apiVersion` only), with the
/// version's defaults filled in (kube defaults on read too, for objects
/// stored before a default was added), its keys sorted as kube writes an
/// unstructured object.
pub(crate) fn as_served_version(info: &ResourceInfo, object: &mut Value) {
    if info.custom.is_none() {
        return;
    }
    let own = object.get("kind").and_then(Value::as_str) == Some(info.kind.as_str());
    if !own {
        return;
    }
    if let Some(m) = object.as_object_mut() {
        m.insert("apiVersion".into(), Value::from(info.api_version()));
    }
    if let Some(schema) = schemas().get(info) {
        schema.default(object);
    }
    // kube serves custom objects as unstructured maps: keys sorted at
    // every level.
    object.sort_all_objects();
}

/// List items of a custom resource as kube's unstructured lists have them
/// (`apiVersion` and `kind` first) and as [`as_served_version`] shows
/// them. Items are JSON objects (the list's item format); other formats
/// pass unchanged.
pub(crate) fn list_items(
    info: &ResourceInfo,
    item_format: Format,
    items: BoxStream<'static, ApiResult<Bytes>>,
) -> BoxStream<'static, ApiResult<Bytes>> {
    if info.custom.is_none() || item_format != Format::JSON {
        return items;
    }
    let info = info.clone();
    items
        .map(move |item| {
            let bytes = item?;
            let Ok(Value::Object(rest)) = serde_json::from_slice::<Value>(&bytes) else {
                return Ok(bytes);
            };
            let mut m = serde_json::Map::with_capacity(rest.len() + 2);
            m.insert("apiVersion".into(), Value::from(info.api_version()));
            m.insert("kind".into(), Value::from(info.kind.clone()));
            m.extend(rest);
            let mut v = Value::Object(m);
            as_served_version(&info, &mut v);
            Ok(keelson_apimachinery::json::to_vec_go(&v)
                .map(Bytes::from)
                .unwrap_or(bytes))
        })
        .boxed()
}

/// Whether `info` is a custom resource served at a version other than its
/// storage version.
pub(crate) fn other_version(info: &ResourceInfo) -> bool {
    info.custom
        .as_ref()
        .is_some_and(|c| c.storage_version != info.version)
}

/// Compiled schemas for read defaulting, shared by the process's handlers.
fn schemas() -> &'static keelson_apiextensions::SchemaCache {
    static CACHE: std::sync::OnceLock<keelson_apiextensions::SchemaCache> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(keelson_apiextensions::SchemaCache::new)
}
