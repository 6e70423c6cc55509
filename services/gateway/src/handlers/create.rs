//! `create`: POST to a collection.

use bytes::Bytes;
use keelson_apimachinery::options::CreateOptions;

use super::object::{decode_body, prepare_object};
use super::write::{create_object, Ownership};
use super::{plain, Ctx, HandlerResult};
pub(crate) async fn create(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let opts = CreateOptions::from_query(cx.query).map_err(plain)?;
    let (dry, fv) = (opts.dry_run, opts.field_validation);
    let (value, raw) = decode_body(cx, body).map_err(plain)?;
    let obj = prepare_object(cx, value).map_err(plain)?;
    let owner = Ownership::Update(cx.owner(&opts.field_manager));
    create_object(cx, obj, raw, owner, fv, dry).await
}
