//! `update`: PUT of one object (or of its `status`); resources that allow
//! it create a missing object.

use bytes::Bytes;
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::options::UpdateOptions;
use keelson_apimachinery::{ApiError, ApiResult, FieldError, FieldErrorKind};
use serde_json::Value;

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
    require_resource_version(cx, &obj).map_err(plain)?;
    super::custom::to_request_version(cx.b, cx.info, &mut old)
        .await
        .map_err(plain)?;
    super::versions::to_served(cx.info, &mut old).map_err(plain)?;
    let new = merge_subresource(cx, obj, &old).map_err(plain)?;
    write_update(cx, new, old, raw, false, owner, fv, dry).await
}

/// kube's generic store on an update without `metadata.resourceVersion`
/// (or with `"0"`): unconditional when the strategy allows it
/// (`AllowUnconditionalUpdate`), else `422` naming the resource.
fn require_resource_version(cx: &Ctx<'_>, obj: &Value) -> ApiResult<()> {
    let rv = meta_str(obj, "resourceVersion");
    let unset = rv.is_empty() || rv.parse::<u64>() == Ok(0);
    if !unset || !cx.info.strategy.requires_resource_version {
        return Ok(());
    }
    let err = FieldError {
        kind: FieldErrorKind::Invalid,
        field: "metadata.resourceVersion".into(),
        value: None,
        // Go's `%#v` of the parsed uint64 0.
        detail: "0x0: must be specified for an update".into(),
    };
    Err(ApiError::invalid(
        &cx.info.group,
        &cx.info.plural,
        &cx.ri.name,
        &[err],
    ))
}
