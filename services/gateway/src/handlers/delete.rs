//! `delete`: one object, with `DeleteOptions` from the body and query
//! (dry run, grace period, preconditions); graceful deletion of pods bound
//! to a node; the answer is the deleted object or a `Success` Status.

use bytes::Bytes;
use keelson_api::{DeleteOptions, DeleteOutcome, FieldValidation, Operation};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::{json, Value};

use super::object::summary;
use super::options::dry_run;
use super::write::{admit, WriteOpts};
use super::{Ctx, Reply};
/// The `DeleteOptions` body; an empty body is no options.
pub(crate) fn delete_options(body: &Bytes) -> ApiResult<Value> {
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(json!({}));
    }
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type DeleteOptions): couldn't get version/kind; json parse error: {} ({})",
            e,
            summary(body)
        ))
    })?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the object provided is unrecognized (must be of type DeleteOptions): body is not a JSON object",
        ));
    }
    Ok(v)
}

pub(crate) async fn delete(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let opts = delete_options(body)?;
    let body_dry: Vec<String> = opts
        .get("dryRun")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let dry = dry_run(cx.query, &body_dry, "DeleteOptions")?;
    let grace = opts
        .get("gracePeriodSeconds")
        .and_then(|v| v.as_i64())
        .or_else(|| {
            cx.query
                .get("gracePeriodSeconds")
                .and_then(|s| s.parse().ok())
        });
    delete_one(cx, &cx.ri.name, &opts, grace, dry).await
}

/// Delete the object `name` of the request's collection.
pub(crate) async fn delete_one(
    cx: &Ctx<'_>,
    name: &str,
    opts: &Value,
    grace: Option<i64>,
    dry: bool,
) -> ApiResult<Reply> {
    let key = cx.key(name);
    let old = cx.b.store.get(&key).await?;
    admit(
        cx,
        Operation::Delete,
        None,
        Some(old.clone()),
        None,
        false,
        WriteOpts {
            fv: FieldValidation::Ignore,
            dry,
        },
    )
    .await?;
    let gr = cx.gr();
    let grace_period = cx
        .info
        .strategy
        .graceful_deletion
        .grace_period_seconds(&old, grace);
    let precondition = |k: &str| {
        opts.pointer(&format!("/preconditions/{}", k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let outcome =
        cx.b.store
            .delete(
                &key,
                DeleteOptions {
                    dry_run: dry,
                    precondition_uid: precondition("uid"),
                    precondition_resource_version: precondition("resourceVersion"),
                    grace_period_seconds: grace_period,
                },
            )
            .await?;
    Ok(match outcome {
        DeleteOutcome::Marked(obj) => Reply::ok(obj),
        DeleteOutcome::Deleted(obj) if cx.info.strategy.returns_deleted_object => Reply::ok(obj),
        DeleteOutcome::Deleted(obj) => Reply::ok(json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {
                "name": name,
                "group": gr.group,
                "kind": gr.resource,
                "uid": meta_str(&obj, "uid"),
            }
        })),
    })
}
