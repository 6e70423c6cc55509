//! `patch`: JSON patch and merge patch through the merge service, then the
//! update path; retried when a concurrent write moved the object and the
//! patch carried no resourceVersion.

use bytes::Bytes;
use keelson_api::{PatchRequest, PatchType};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult};

use super::object::{check_name, prepare_object};
use super::options::{dry_run, field_validation};
use super::status::merge_subresource;
use super::write::write_update;
use super::{plain, Ctx, HandlerResult};
use crate::http_util::media_type;
/// The patch format of the request's Content-Type, or `415`.
pub(crate) fn patch_type(cx: &Ctx<'_>) -> ApiResult<PatchType> {
    PatchType::from_media_type(&media_type(cx.header(http::header::CONTENT_TYPE))).ok_or_else(
        || {
            let mut e = ApiError::unsupported_media_type("415: Unsupported Media Type");
            e.details = Some(Default::default());
            e
        },
    )
}

/// How often a patch is retried when a concurrent write moved the object
/// (kube-apiserver retries patches that carry no resourceVersion).
const PATCH_RETRIES: usize = 5;

pub(crate) async fn patch(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let dry = dry_run(cx.query, &[], "PatchOptions").map_err(plain)?;
    let fv = field_validation(cx.query, "PatchOptions").map_err(plain)?;
    let pt = patch_type(cx).map_err(plain)?;
    let key = cx.key(&cx.ri.name);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let old = cx.b.store.get(&key).await.map_err(plain)?;
        let patched =
            cx.b.merge
                .patch(PatchRequest {
                    patch_type: pt,
                    gr: cx.gr(),
                    kind: cx.info.kind.clone(),
                    original: old.clone(),
                    patch: body.to_vec(),
                })
                .await
                .map_err(plain)?;
        let patched = prepare_object(cx, patched).map_err(plain)?;
        check_name(&patched, &cx.ri.name).map_err(plain)?;
        let client_rv = meta_str(&patched, "resourceVersion") != meta_str(&old, "resourceVersion");
        let new = merge_subresource(cx, patched, &old);
        match write_update(cx, new, old, None, true, fv, dry).await {
            Err((e, _))
                if e.code == 409
                    && e.reason == "Conflict"
                    && !client_rv
                    && attempt < PATCH_RETRIES =>
            {
                continue
            }
            other => return other,
        }
    }
}
