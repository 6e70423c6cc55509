//! `create`: POST to a collection.

use bytes::Bytes;
use keelson_apimachinery::options::CreateOptions;
use keelson_apimachinery::{ApiError, StatusReason};

use super::object::{decode_body, prepare_object};
use super::write::{create_object, Ownership};
use super::{plain, Ctx, HandlerResult};
pub(crate) async fn create(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let opts = CreateOptions::from_query(cx.query).map_err(plain)?;
    let (dry, fv) = (opts.dry_run, opts.field_validation);
    let (value, raw) = decode_body(cx, body).map_err(plain)?;
    let obj = prepare_object(cx, value).map_err(plain)?;
    // kube's storage refuses a create that carries a resourceVersion (a
    // plain error: `500` with no reason); a dry run never reaches it.
    let rv = keelson_apimachinery::meta::meta_str(&obj, "resourceVersion");
    if !dry && rv.parse::<u64>().is_ok_and(|v| v != 0) {
        return Err(plain(ApiError::new(
            500,
            StatusReason::Unknown,
            "resourceVersion should not be set on objects to be created",
        )));
    }
    let owner = Ownership::Update(cx.owner(&opts.field_manager));
    create_object(cx, obj, raw, owner, fv, dry).await
}
