//! `get`: one object, by name.

use keelson_apimachinery::ApiResult;

use super::{Ctx, Reply};
pub(crate) async fn get(cx: &Ctx<'_>) -> ApiResult<Reply> {
    // resourceVersion unset: most recent; "0": any; N: not older than N.
    if let Some(rv) = super::list::parse_resource_version(cx.query)? {
        super::list::require_revision(cx.b, rv).await?;
    }
    let obj = cx.b.store.get(&cx.key(&cx.ri.name)).await?;
    Ok(Reply::ok(obj))
}
