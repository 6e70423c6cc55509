//! `update`: PUT of one object (or of its `status`); resources that allow
//! it create a missing object.

use bytes::Bytes;
use keelson_apimachinery::options::UpdateOptions;

use super::object::{check_name, decode_body, prepare_object};
use super::status::merge_subresource;
use super::write::{create_object, write_update, Ownership};
use super::{plain, Ctx, HandlerResult};
pub(crate) async fn update(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let opts = UpdateOptions::from_query(cx.query).map_err(plain)?;
    let (dry, fv) = (opts.dry_run, opts.field_validation);
    let (value, raw) = decode_body(cx, body).map_err(plain)?;
    let obj = prepare_object(cx, value).map_err(plain)?;
    check_name(&obj, &cx.ri.name).map_err(plain)?;
    let key = cx.key(&cx.ri.name);
    let owner = Ownership::Update(cx.owner(&opts.field_manager));
    let mut old = match cx.b.store.get(&key).await {
        Ok(o) => o,
        Err(e)
            if e.is_not_found()
                && cx.ri.subresource.is_empty()
                && cx.info.strategy.allow_create_on_update =>
        {
            return create_object(cx, obj, raw, owner, fv, dry).await;
        }
        Err(e) => return Err(plain(e)),
    };
    super::custom::to_request_version(cx.b, cx.info, &mut old)
        .await
        .map_err(plain)?;
    super::versions::to_served(cx.info, &mut old).map_err(plain)?;
    let new = merge_subresource(cx, obj, &old).map_err(plain)?;
    write_update(cx, new, old, raw, false, owner, fv, dry).await
}
