//! `delete`: one object, with `DeleteOptions` from the body and query
//! (dry run, grace period, preconditions, propagation policy); graceful
//! deletion of pods bound to a node; the answer is the deleted object or a
//! `Success` Status (kube's `deleteResource`: `202 Accepted` when
//! `orphanDependents: false` leaves the object in place for the garbage
//! collector).

use bytes::Bytes;
use keelson_api::{DeleteOptions as StoreDeleteOptions, DeleteOutcome, FieldValidation, Operation};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::options::DeleteOptions;
use keelson_apimachinery::ApiResult;
use serde_json::json;

use super::write::{admit, WriteOpts};
use super::{Ctx, Reply};
pub(crate) async fn delete(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let body = super::object::json_body(cx, body, "DeleteOptions")?;
    let opts = DeleteOptions::from_request(cx.query, &body)?;
    delete_one(cx, &cx.ri.name, &opts).await
}

/// Delete the object `name` of the request's collection.
pub(crate) async fn delete_one(cx: &Ctx<'_>, name: &str, opts: &DeleteOptions) -> ApiResult<Reply> {
    let (grace, dry) = (opts.grace_period_seconds, opts.dry_run);
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
    let outcome =
        cx.b.store
            .delete(
                &key,
                StoreDeleteOptions {
                    dry_run: dry,
                    precondition_uid: opts.preconditions.uid.clone(),
                    precondition_resource_version: opts.preconditions.resource_version.clone(),
                    grace_period_seconds: grace_period,
                    propagation_policy: opts.propagation_policy,
                    orphan_dependents: opts.orphan_dependents,
                },
            )
            .await?;
    Ok(match outcome {
        DeleteOutcome::Marked(obj) => Reply {
            code: if opts.orphan_dependents == Some(false) {
                202
            } else {
                200
            },
            ..Reply::ok(obj)
        },
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
