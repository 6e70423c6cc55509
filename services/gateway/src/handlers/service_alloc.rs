//! The write path's side of Service allocation: cluster IPs and node
//! ports are allocated after the field manager has run and before the
//! store write (kube's Service storage `BeginCreate`/`BeginUpdate`, so the
//! allocated values are not in the writer's managedFields), released if
//! that write fails, and released after a Service is deleted. The
//! allocator itself is [`keelson_controllers::service_alloc`], shared with
//! the controllers that delete Services.

use keelson_apimachinery::ApiResult;
use keelson_controllers::service_alloc::{is_services, Allocation, Allocator, UpdatePlan};
use serde_json::Value;

use super::Ctx;

/// Whether the request writes a Service's main resource (not `status`).
pub(crate) fn applies(cx: &Ctx<'_>) -> bool {
    is_services(&cx.gr()) && cx.ri.subresource.is_empty()
}

/// Allocate for a Service being created (see [`Allocator::allocate_create`]).
pub(crate) async fn on_create(cx: &Ctx<'_>, obj: &mut Value, dry: bool) -> ApiResult<Allocation> {
    if !applies(cx) {
        return Ok(Allocation::default());
    }
    Allocator::new(cx.b.store.as_ref())
        .allocate_create(obj, dry)
        .await
}

/// Allocate for a Service being updated (see [`Allocator::allocate_update`]).
pub(crate) async fn on_update(
    cx: &Ctx<'_>,
    new: &mut Value,
    old: &Value,
    dry: bool,
) -> ApiResult<UpdatePlan> {
    if !applies(cx) {
        return Ok(UpdatePlan::default());
    }
    Allocator::new(cx.b.store.as_ref())
        .allocate_update(new, old, dry)
        .await
}

/// Release values (what a failed write allocated, or what a successful
/// update no longer uses).
pub(crate) async fn release(cx: &Ctx<'_>, a: &Allocation) {
    if !a.is_empty() {
        Allocator::new(cx.b.store.as_ref()).release(a).await;
    }
}

/// Release what a deleted Service held.
pub(crate) async fn after_delete(cx: &Ctx<'_>, deleted: &Value) {
    if is_services(&cx.gr()) {
        Allocator::new(cx.b.store.as_ref())
            .release_service(deleted)
            .await;
    }
}
