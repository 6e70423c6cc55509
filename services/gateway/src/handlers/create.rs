//! `create`: POST to a collection.

use bytes::Bytes;

use super::object::{decode_body, prepare_object};
use super::options::{dry_run, field_validation};
use super::write::create_object;
use super::{plain, Ctx, HandlerResult};
pub(crate) async fn create(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let dry = dry_run(cx.query, &[], "CreateOptions").map_err(plain)?;
    let fv = field_validation(cx.query, "CreateOptions").map_err(plain)?;
    let (value, raw) = decode_body(cx, body).map_err(plain)?;
    let obj = prepare_object(cx, value).map_err(plain)?;
    create_object(cx, obj, raw, fv, dry).await
}
