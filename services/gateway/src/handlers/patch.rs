//! `patch`: every patch type through the merge service, then the update
//! path; retried when a concurrent write moved the object and the patch
//! carried no resourceVersion. A Server-Side Apply of a missing object
//! creates it.

use bytes::Bytes;
use keelson_api::{PatchRequest, PatchType};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::options::PatchOptions;
use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::Value;

use super::object::{check_name, prepare_object};
use super::status::merge_subresource;
use super::write::{create_object, write_update, Ownership};
use super::{plain, Ctx, HandlerResult};
use crate::http_util::media_type;
/// `application/apply-patch+cbor`: a Server-Side Apply whose
/// configuration is CBOR (kube serves it with CBORServingAndStorage).
const APPLY_CBOR: &str = "application/apply-patch+cbor";

/// Whether the request is a CBOR Server-Side Apply.
fn is_apply_cbor(cx: &Ctx<'_>) -> bool {
    media_type(cx.header(http::header::CONTENT_TYPE)) == APPLY_CBOR
}

/// The patch format of the request's Content-Type, or `415`. A CBOR apply
/// is an apply (its body is read by [`apply_body`]); no other patch type
/// has a CBOR form.
pub(crate) fn patch_type(cx: &Ctx<'_>) -> ApiResult<PatchType> {
    if is_apply_cbor(cx) {
        return Ok(PatchType::Apply);
    }
    PatchType::from_media_type(&media_type(cx.header(http::header::CONTENT_TYPE))).ok_or_else(
        || {
            let mut e = ApiError::unsupported_media_type("415: Unsupported Media Type");
            e.details = Some(Default::default());
            e
        },
    )
}

/// The patch body for the merge service: a CBOR apply configuration as the
/// JSON it stands for (kube's `400 error decoding YAML: cbor: ...` when it
/// is not acceptable CBOR), any other body as it is.
pub(crate) fn apply_body(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Vec<u8>> {
    if !is_apply_cbor(cx) {
        return Ok(body.to_vec());
    }
    let config = keelson_codec::cbor::decode_apply(body)?;
    serde_json::to_vec(&config).map_err(|e| ApiError::internal(e.to_string()))
}

/// A strategic merge result is converted into the resource's Go type by
/// kube, which keeps no `apiVersion`/`kind` from the patch: a patch body
/// naming another kind patches the object as its own kind. (Non-string
/// values were already refused by the merge's typed round trip.)
fn typed_kind(cx: &Ctx<'_>, pt: PatchType, mut patched: Value) -> Value {
    if pt == PatchType::StrategicMerge {
        if let Some(m) = patched.as_object_mut() {
            m.insert("apiVersion".into(), Value::String(cx.info.api_version()));
            m.insert("kind".into(), Value::String(cx.info.kind.clone()));
        }
    }
    patched
}

/// How often a patch is retried when a concurrent write moved the object
/// (kube-apiserver retries patches that carry no resourceVersion).
const PATCH_RETRIES: usize = 5;

pub(crate) async fn patch(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    // kube checks the patch type before decoding the options.
    let pt = patch_type(cx).map_err(plain)?;
    if pt == PatchType::StrategicMerge && cx.info.custom.is_some() {
        return Err(plain(super::custom::strategic_merge_unsupported()));
    }
    let apply = pt == PatchType::Apply;
    let opts = PatchOptions::from_query(cx.query, apply).map_err(plain)?;
    let (dry, fv) = (opts.dry_run, opts.field_validation);
    let patch_body = apply_body(cx, body).map_err(plain)?;
    let owner = cx.owner(&opts.field_manager);
    // An apply records its own ownership; other patches are Update
    // operations, recorded after admission so defaulted fields are owned.
    let ownership = if apply {
        Ownership::Recorded
    } else {
        Ownership::Update(owner.clone())
    };
    let key = cx.key(&cx.ri.name);
    let mut attempt = 0;
    loop {
        attempt += 1;
        if attempt > 1 {
            // The conflicting write may not be durable yet, and the store
            // reads only durable revisions: give it a moment (5, 10, 20,
            // 40 ms) rather than reading the same old object again.
            tokio::time::sleep(std::time::Duration::from_millis(5 << (attempt - 2))).await;
        }
        let old = match cx.b.store.get(&key).await {
            Ok(mut old) => {
                super::custom::to_request_version(cx.b, cx.info, &mut old)
                    .await
                    .map_err(plain)?;
                super::versions::to_served(cx.info, &mut old).map_err(plain)?;
                Some(old)
            }
            Err(e) if e.is_not_found() && apply && cx.ri.subresource.is_empty() => None,
            Err(e) => return Err(plain(e)),
        };
        let patched =
            cx.b.merge
                .patch(PatchRequest {
                    patch_type: pt,
                    gr: cx.gr(),
                    kind: cx.info.kind.clone(),
                    owner: owner.clone(),
                    force: opts.force.unwrap_or(false),
                    original: old.clone().unwrap_or(Value::Null),
                    patch: patch_body.clone(),
                })
                .await
                .map_err(plain)?;
        let patched = prepare_object(cx, typed_kind(cx, pt, patched)).map_err(plain)?;
        check_name(&patched, &cx.ri.name).map_err(plain)?;
        let Some(old) = old else {
            match create_object(cx, patched, None, ownership.clone(), fv, dry).await {
                // Created meanwhile: apply to it.
                Err((e, _)) if e.is_already_exists() && attempt < PATCH_RETRIES => continue,
                other => return other,
            }
        };
        let client_rv = meta_str(&patched, "resourceVersion") != meta_str(&old, "resourceVersion");
        let new = merge_subresource(cx, patched, &old).map_err(plain)?;
        match write_update(cx, new, old, None, true, ownership.clone(), fv, dry).await {
            Err((e, _)) if e.is_conflict() && !client_rv && attempt < PATCH_RETRIES => continue,
            other => return other,
        }
    }
}
