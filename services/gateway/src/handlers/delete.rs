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
use keelson_apimachinery::{ApiError, ApiResult, FieldError};
use keelson_auth::Attributes;
use serde_json::json;

use crate::apiconfig::FeatureGates;
use crate::filters::{current_state, current_user};

use super::write::{admit, WriteOpts};
use super::{Ctx, Reply};
pub(crate) async fn delete(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let body = super::object::json_body(cx, body, "DeleteOptions")?;
    let opts = delete_options(cx, &body)?;
    if opts.ignore_store_read_error {
        return delete_corrupt(cx, &cx.ri.name).await;
    }
    delete_one(cx, &cx.ri.name, &opts).await
}

/// The request's `DeleteOptions`; `ignoreStoreReadErrorWithClusterBreakingPotential`
/// is dropped unless the `AllowUnsafeMalformedObjectDeletion` gate is on,
/// then validated (kube's `DeleteResource`).
pub(crate) fn delete_options(cx: &Ctx<'_>, body: &[u8]) -> ApiResult<DeleteOptions> {
    let mut opts = DeleteOptions::from_request(cx.query, body)?;
    if !FeatureGates::global().enabled(UNSAFE_DELETE_GATE) {
        opts.ignore_store_read_error = false;
    }
    opts.validate_unsafe_delete()?;
    Ok(opts)
}

const UNSAFE_DELETE_GATE: &str = "AllowUnsafeMalformedObjectDeletion";
const UNSAFE_DELETE_FIELD: &str = "ignoreStoreReadErrorWithClusterBreakingPotential";
const UNSAFE_DELETE_VERB: &str = "unsafe-delete-ignore-read-errors";

/// kube's unsafe deletion of a corrupt object (`corruptObjectDeleter`): the
/// user also needs the `unsafe-delete-ignore-read-errors` verb; an object
/// that reads fine is refused with `422`; a corrupt one is removed from the
/// store without decoding (no preconditions, finalizers, admission or
/// garbage collection) and the answer is a `Success` Status.
async fn delete_corrupt(cx: &Ctx<'_>, name: &str) -> ApiResult<Reply> {
    let gr = cx.gr();
    authorize_unsafe_delete(cx, name)?;
    let key = cx.key(name);
    match cx.b.store.get(&key).await {
        Ok(_) => {
            return Err(ApiError::invalid(
                &gr.group,
                &gr.resource,
                name,
                &[FieldError::invalid(
                    UNSAFE_DELETE_FIELD,
                    true,
                    "is exclusively used to delete corrupt object(s), try again by removing this option",
                )],
            ))
        }
        Err(e) if !e.message.contains("corrupt object") => return Err(e),
        Err(_) => {}
    }
    tracing::warn!(resource = %gr, namespace = %cx.ri.namespace, name, "unsafe deletion of a corrupt object");
    cx.b.store
        .delete(
            &key,
            StoreDeleteOptions {
                ignore_store_read_error: true,
                ..Default::default()
            },
        )
        .await?;
    Ok(Reply::ok(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": name, "kind": cx.info.kind},
        "code": 200,
    })))
}

/// kube's `authorizeUnsafeDelete`: `403 <resource> "<name>" is forbidden:
/// not permitted to do "unsafe-delete-ignore-read-errors", reason: ...`.
fn authorize_unsafe_delete(cx: &Ctx<'_>, name: &str) -> ApiResult<()> {
    let Some(state) = current_state() else {
        return Ok(());
    };
    let gr = cx.gr();
    let d = state.authz.authorize(&Attributes {
        user: current_user().as_ref().clone(),
        verb: UNSAFE_DELETE_VERB.into(),
        resource_request: true,
        namespace: cx.ri.namespace.clone(),
        api_group: gr.group.clone(),
        resource: gr.resource.clone(),
        name: name.into(),
        ..Default::default()
    });
    if d.allowed {
        return Ok(());
    }
    Err(ApiError::forbidden(
        &gr,
        name,
        &format!(
            "not permitted to do {UNSAFE_DELETE_VERB:?}, reason: {}",
            d.reason
        ),
    ))
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
                    ignore_store_read_error: false,
                },
            )
            .await?;
    if let (DeleteOutcome::Deleted(obj), false) = (&outcome, dry) {
        super::service_alloc::after_delete(cx, obj).await;
    }
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
        DeleteOutcome::Deleted(obj) => {
            // StatusDetails' `group` is `omitempty`: none for core resources.
            let mut details = serde_json::Map::new();
            details.insert("name".into(), name.into());
            if !gr.group.is_empty() {
                details.insert("group".into(), gr.group.as_str().into());
            }
            details.insert("kind".into(), gr.resource.as_str().into());
            details.insert("uid".into(), meta_str(&obj, "uid").into());
            Reply::ok(json!({
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            }))
        }
    })
}
