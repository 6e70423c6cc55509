//! `deletecollection`: delete every object of a collection that matches
//! the request's selectors, with the same options as `delete`; the answer
//! is the list of deleted objects.

use bytes::Bytes;
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::options::invalid_options;
use keelson_apimachinery::{ApiResult, FieldError};
use keelson_selectors::{FieldSelector, LabelSelector};
use serde_json::{json, Map, Value};

use super::delete::delete_one;
use super::{Ctx, Reply};
use crate::filters::request_info::ResourceRequest;
pub(crate) async fn delete_collection(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let body = super::object::json_body(cx, body, "DeleteOptions")?;
    let opts = super::delete::delete_options(cx, &body)?;
    if opts.ignore_store_read_error {
        return Err(invalid_options(
            "DeleteOptions",
            &[FieldError::invalid(
                "ignoreStoreReadErrorWithClusterBreakingPotential",
                true,
                "is not allowed with DELETECOLLECTION, try again after removing the option",
            )],
        ));
    }
    let mut items = list_items(cx).await?;
    // Custom objects are answered in the request's version, converted as
    // they are listed (before anything is deleted, as kube's storage
    // converts what the list reads).
    super::custom::convert_to(cx.b, cx.info, &mut items, &cx.info.api_version()).await?;
    let mut deleted = Vec::new();
    for item in items {
        let name = meta_str(&item, "name").to_string();
        let ns_cx = Ctx {
            b: cx.b,
            ri: &ResourceRequest {
                namespace: meta_str(&item, "namespace").to_string(),
                ..cx.ri.clone()
            },
            info: cx.info,
            query: cx.query,
            headers: cx.headers,
        };
        match delete_one(&ns_cx, &name, &opts).await {
            Ok(_) => deleted.push(item),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Reply::ok(list_object(cx, deleted, Map::new())))
}

/// The parsed selectors of a list request, and whether any is set.
fn selectors(cx: &Ctx<'_>) -> ApiResult<(LabelSelector, FieldSelector, bool)> {
    let l = cx.query.get("labelSelector").unwrap_or("");
    let f = cx.query.get("fieldSelector").unwrap_or("");
    Ok((
        LabelSelector::parse(l)?,
        FieldSelector::parse(f, &cx.info.group, &cx.info.plural)?,
        !l.trim().is_empty() || !f.trim().is_empty(),
    ))
}

fn namespace_filter<'a>(cx: &'a Ctx<'_>) -> Option<&'a str> {
    (!cx.ri.namespace.is_empty()).then_some(cx.ri.namespace.as_str())
}

/// Every current object of the collection that matches the selectors.
async fn list_items(cx: &Ctx<'_>) -> ApiResult<Vec<Value>> {
    let (labels, fields, _) = selectors(cx)?;
    let res = cx.b.store.list(&cx.gr(), namespace_filter(cx)).await?;
    Ok(res
        .items
        .into_iter()
        .filter(|o| labels.matches(o) && fields.matches(o))
        .collect())
}

fn list_object(cx: &Ctx<'_>, items: Vec<Value>, metadata: Map<String, Value>) -> Value {
    let items: Vec<Value> = items
        .into_iter()
        .map(|mut o| {
            if cx.info.custom.is_some() {
                // kube's unstructured lists keep each item's type meta.
                super::custom::as_served_version(cx.info, &mut o);
            } else if let Some(m) = o.as_object_mut() {
                // Typed lists from kube-apiserver carry no per-item type meta.
                m.remove("apiVersion");
                m.remove("kind");
            }
            o
        })
        .collect();
    json!({
        "kind": cx.info.list_kind,
        "apiVersion": cx.info.api_version(),
        "metadata": metadata,
        "items": items,
    })
}
