//! The write path shared by create, update and patch: admission (with the
//! request's field validation and dry run), the managedFields of an
//! `Update` operation (the merge service; an apply has recorded its own),
//! Service IP and node-port allocation ([`super::service_alloc`]), then the
//! store.

use keelson_api::{
    AdmissionRequest, AdmissionResponse, AdmitPhase, CreateOptions, FieldOwner, FieldValidation,
    ManagedFieldsRequest, Operation, UpdateOptions,
};
use keelson_apimachinery::meta::{meta_mut, meta_str};
use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::Value;

use super::status::strip_status_for_create;
use super::{plain, Ctx, HandlerResult, Reply};
/// The write options every admission call carries.
#[derive(Clone, Copy)]
pub(crate) struct WriteOpts {
    pub fv: FieldValidation,
    pub dry: bool,
}

/// How a write records ownership in managedFields.
#[derive(Clone)]
pub(crate) enum Ownership {
    /// An `Update` operation by this owner (create, update, non-apply
    /// patch): the merge service compares the admitted object with the
    /// stored one.
    Update(FieldOwner),
    /// Already recorded (an apply).
    Recorded,
}

/// Bring managedFields up to date for an `Update` operation. As kube's
/// handlers run the field manager before mutating admission, the entry is
/// recorded from `unmutated` (the object as decoded and defaulted) when
/// admission changed it: what plugins, policies and webhooks added is not
/// the writer's. An admission step that changed `managedFields` itself
/// keeps today's recording from the admitted object.
async fn record_update(
    cx: &Ctx<'_>,
    ownership: &Ownership,
    old: Option<&Value>,
    new: Value,
    unmutated: Option<Value>,
) -> ApiResult<Value> {
    let Ownership::Update(owner) = ownership else {
        return Ok(new);
    };
    let record = |mut new: Value| {
        // kube's field manager compares the typed objects: what decoding
        // into the Go struct drops (an empty `annotations: {}` or
        // `finalizers: []`) is owned by no one. `managedFields` stays as
        // sent: an empty list, non-nil in Go, resets them.
        if cx.info.custom.is_none() {
            let sent = meta_mut(&mut new).and_then(|m| m.shift_remove("managedFields"));
            keelson_codec::protobuf::go_json::normalize(&mut new);
            if let (Some(sent), Some(meta)) = (sent, meta_mut(&mut new)) {
                meta.insert("managedFields".into(), sent);
            }
        }
        cx.b.merge.update_managed_fields(ManagedFieldsRequest {
            gr: cx.gr(),
            kind: cx.info.kind.clone(),
            owner: owner.clone(),
            old: old.cloned().unwrap_or(Value::Null),
            new,
        })
    };
    let managed = |o: &Value| o.pointer("/metadata/managedFields").cloned();
    match unmutated.filter(|u| managed(u) == managed(&new)) {
        None => record(new).await,
        Some(unmutated) => {
            let recorded = record(unmutated).await?;
            let mut new = new;
            if let Some(meta) = meta_mut(&mut new) {
                match managed(&recorded) {
                    Some(fields) => {
                        meta.insert("managedFields".into(), fields);
                    }
                    None => {
                        meta.shift_remove("managedFields");
                    }
                }
            }
            Ok(new)
        }
    }
}

/// Admit one write; the admitted object and the warnings.
pub(crate) async fn admit(
    cx: &Ctx<'_>,
    operation: Operation,
    object: Option<Value>,
    old_object: Option<Value>,
    raw_body: Option<Vec<u8>>,
    is_patch: bool,
    opts: WriteOpts,
) -> ApiResult<(Option<Value>, Vec<String>)> {
    let kind = SubresourceKind {
        api_version: "",
        kind: &cx.info.kind,
    };
    let resp = admit_as(
        cx,
        kind,
        operation,
        object,
        old_object,
        raw_body,
        is_patch,
        opts,
        AdmitPhase::All,
    )
    .await?;
    Ok((resp.object, resp.warnings))
}

/// One phase of [`admit`], keeping the object as it was before the
/// mutating phase for the field manager ([`AdmissionResponse::unmutated`]).
#[allow(clippy::too_many_arguments)]
async fn admit_write(
    cx: &Ctx<'_>,
    operation: Operation,
    object: Value,
    old_object: Option<Value>,
    raw_body: Option<Vec<u8>>,
    is_patch: bool,
    opts: WriteOpts,
    phase: AdmitPhase,
) -> ApiResult<AdmissionResponse> {
    let kind = SubresourceKind {
        api_version: "",
        kind: &cx.info.kind,
    };
    admit_as(
        cx,
        kind,
        operation,
        Some(object),
        old_object,
        raw_body,
        is_patch,
        opts,
        phase,
    )
    .await
}

/// The kind a subresource's own object is admitted as, when it is not the
/// resource's: a `v1` Binding on `pods/binding`, a `policy/v1` Eviction on
/// `pods/eviction`, an `autoscaling/v1` Scale on `/scale`.
#[derive(Clone, Copy)]
pub(crate) struct SubresourceKind<'a> {
    /// The kind's API version; empty for the resource's own kind.
    pub api_version: &'a str,
    pub kind: &'a str,
}

/// Admit the object of a subresource with its own kind (kube's create and
/// update handlers run the whole chain on it: webhooks and policies that
/// match the subresource see it, built-in rules of the resource's kind do
/// not); the admitted object and the warnings.
pub(crate) async fn admit_subresource(
    cx: &Ctx<'_>,
    kind: SubresourceKind<'_>,
    operation: Operation,
    object: Value,
    old_object: Option<Value>,
    opts: WriteOpts,
) -> ApiResult<(Value, Vec<String>)> {
    admit_subresource_phase(
        cx,
        kind,
        operation,
        object,
        old_object,
        opts,
        AdmitPhase::All,
    )
    .await
}

/// One phase of [`admit_subresource`], for a registry that does its own
/// work between the phases (a Binding's validation).
pub(crate) async fn admit_subresource_phase(
    cx: &Ctx<'_>,
    kind: SubresourceKind<'_>,
    operation: Operation,
    object: Value,
    old_object: Option<Value>,
    opts: WriteOpts,
    phase: AdmitPhase,
) -> ApiResult<(Value, Vec<String>)> {
    let resp = admit_as(
        cx,
        kind,
        operation,
        Some(object),
        old_object,
        None,
        false,
        opts,
        phase,
    )
    .await?;
    let admitted = resp
        .object
        .ok_or_else(|| ApiError::internal("admission returned no object"))?;
    Ok((admitted, resp.warnings))
}

#[allow(clippy::too_many_arguments)]
async fn admit_as(
    cx: &Ctx<'_>,
    kind: SubresourceKind<'_>,
    operation: Operation,
    object: Option<Value>,
    old_object: Option<Value>,
    raw_body: Option<Vec<u8>>,
    is_patch: bool,
    opts: WriteOpts,
    phase: AdmitPhase,
) -> ApiResult<AdmissionResponse> {
    let name = object
        .as_ref()
        .or(old_object.as_ref())
        .map(|o| meta_str(o, "name").to_string())
        .unwrap_or_default();
    // RBAC writes are checked for escalation against the stored object.
    let old_for_checks = (cx.ri.group == "rbac.authorization.k8s.io")
        .then(|| old_object.clone())
        .flatten();
    let resp =
        cx.b.admission
            .admit_phase(
                AdmissionRequest {
                    operation,
                    gr: cx.gr(),
                    api_version: cx.info.api_version(),
                    kind: kind.kind.to_string(),
                    kind_api_version: kind.api_version.to_string(),
                    namespace: cx.ri.namespace.clone(),
                    name,
                    subresource: cx.ri.subresource.clone(),
                    object,
                    old_object,
                    raw_body,
                    is_patch,
                    field_validation: opts.fv,
                    dry_run: opts.dry,
                    user: Some(admission_user()),
                    options: Some(operation_options(cx, operation, opts.dry)),
                },
                phase,
            )
            .await
            .inspect_err(|e| {
                if let Some(a) = &e.audit_annotations {
                    crate::filters::add_audit_annotations(a);
                }
            })?;
    crate::filters::add_audit_annotations(&resp.audit_annotations);
    super::review::check_escalation(cx, resp.object.as_ref(), old_for_checks.as_ref())?;
    Ok(resp)
}

/// The request's user as admission sees it (after impersonation).
fn admission_user() -> keelson_api::UserInfo {
    let u = crate::filters::current_user();
    keelson_api::UserInfo {
        username: u.name.clone(),
        uid: u.uid.clone(),
        groups: u.groups.clone(),
        extra: u.extra.clone(),
    }
}

/// The operation's options as kube hands them to admission: the request's
/// `CreateOptions`/`UpdateOptions` (a patch's `PatchOptions` become the
/// `UpdateOptions` kube derives from them) or `DeleteOptions`, from the
/// query.
fn operation_options(cx: &Ctx<'_>, operation: Operation, dry: bool) -> Value {
    let kind = match operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
    };
    let mut m = serde_json::Map::new();
    m.insert("kind".into(), kind.into());
    m.insert("apiVersion".into(), "meta.k8s.io/v1".into());
    let q = cx.query;
    if operation == Operation::Delete {
        if let Some(g) = q
            .get("gracePeriodSeconds")
            .and_then(|g| g.parse::<i64>().ok())
        {
            m.insert("gracePeriodSeconds".into(), g.into());
        }
        if let Some(p) = q.get("propagationPolicy").filter(|p| !p.is_empty()) {
            m.insert("propagationPolicy".into(), p.into());
        }
    }
    if dry {
        m.insert("dryRun".into(), serde_json::json!(["All"]));
    }
    if operation != Operation::Delete {
        if let Some(f) = q.get("fieldManager").filter(|f| !f.is_empty()) {
            m.insert("fieldManager".into(), f.into());
        }
        if let Some(f) = q.get("fieldValidation").filter(|f| !f.is_empty()) {
            m.insert("fieldValidation".into(), f.into());
        }
    }
    Value::Object(m)
}

/// The first admission call of a write: the whole chain, or only the
/// mutating phase when the registry has work before validation.
fn first_phase(split: bool) -> AdmitPhase {
    if split {
        AdmitPhase::Mutating
    } else {
        AdmitPhase::All
    }
}

/// The object and warnings of an admission that must return an object.
fn admitted_object(resp: AdmissionResponse) -> ApiResult<(Value, Vec<String>)> {
    let object = resp
        .object
        .ok_or_else(|| ApiError::internal("admission returned no object"))?;
    Ok((object, resp.warnings))
}

/// What the validating phase of a split write is asked.
struct Validate {
    operation: Operation,
    old: Option<Value>,
    is_patch: bool,
    opts: WriteOpts,
}

/// The validating phase after the registry's work between the phases (a
/// Service's allocation): the admitted object, its warnings added to
/// `warnings`; on refusal the allocation is released.
async fn validate_phase(
    cx: &Ctx<'_>,
    v: Validate,
    obj: Value,
    allocated: &keelson_controllers::service_alloc::Allocation,
    warnings: &mut Vec<String>,
) -> Result<Value, (ApiError, Vec<String>)> {
    let validated = admit_write(
        cx,
        v.operation,
        obj,
        v.old,
        None,
        v.is_patch,
        v.opts,
        AdmitPhase::Validating,
    )
    .await
    .and_then(admitted_object);
    match validated {
        Ok((o, w)) => {
            warnings.extend(w);
            Ok(o)
        }
        Err(e) => {
            super::service_alloc::release(cx, allocated).await;
            Err(plain(e.with_warnings(std::mem::take(warnings))))
        }
    }
}

/// Create through admission and the store; shared by POST and PUT-creates.
pub(crate) async fn create_object(
    cx: &Ctx<'_>,
    mut obj: Value,
    raw: Option<Vec<u8>>,
    ownership: Ownership,
    fv: FieldValidation,
    dry: bool,
) -> HandlerResult {
    super::custom::check_create(cx.info, meta_str(&obj, "name")).map_err(plain)?;
    strip_status_for_create(cx, &mut obj);
    if let Some(m) = meta_mut(&mut obj) {
        // Server-set fields are never taken from a create body.
        m.remove("resourceVersion");
        m.remove("creationTimestamp");
        m.remove("deletionTimestamp");
        m.remove("deletionGracePeriodSeconds");
        // A client's uid is never kept (kube's `FillObjectMetaSystemFields`
        // sets a new one); the store assigns it.
        m.remove("uid");
        // A Job's strategy names its uid and name in the generated selector
        // and template labels, so both are chosen before admission (kube
        // sets them in the store, just before the strategy); the store
        // keeps them.
        if cx.info.group == "batch" && cx.info.kind == "Job" {
            m.insert("uid".into(), uuid::Uuid::new_v4().to_string().into());
            let base = m.get("generateName").and_then(Value::as_str).unwrap_or("");
            let unnamed = m
                .get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if unnamed && !base.is_empty() {
                let name = keelson_apimachinery::generate_name::generate_name(base);
                m.insert("name".into(), name.into());
            }
        }
    }
    // A Service's allocation comes between the phases (kube's
    // `BeginCreate` runs after mutating admission, before validation).
    let split = super::service_alloc::applies(cx);
    let opts = WriteOpts { fv, dry };
    let resp = admit_write(
        cx,
        Operation::Create,
        obj,
        None,
        raw,
        false,
        opts,
        first_phase(split),
    )
    .await
    .map_err(plain)?;
    let mut warnings = resp.warnings;
    let obj = resp
        .object
        .ok_or_else(|| plain(ApiError::internal("admission returned no object")))?;
    let mut obj = record_update(cx, &ownership, None, obj, resp.unmutated)
        .await
        .map_err(|e| (e, warnings.clone()))?;
    // Service cluster IPs and node ports: after the field manager, before
    // the store (kube's `BeginCreate`).
    let allocated = super::service_alloc::on_create(cx, &mut obj, dry)
        .await
        .map_err(|e| (e, warnings.clone()))?;
    if split {
        let phase = Validate {
            operation: Operation::Create,
            old: None,
            is_patch: false,
            opts,
        };
        obj = validate_phase(cx, phase, obj, &allocated, &mut warnings).await?;
    }
    let result = async {
        super::custom::to_storage_version(cx.b, cx.info, &mut obj).await?;
        super::versions::to_storage(cx.info, &mut obj)?;
        let name = meta_str(&obj, "name").to_string();
        cx.b.store
            .create(
                &cx.key(&name),
                obj,
                CreateOptions {
                    dry_run: dry,
                    track_generation: cx.info.tracks_generation(),
                },
            )
            .await
    }
    .await;
    let stored = match result {
        Ok(stored) => stored,
        Err(e) => {
            super::service_alloc::release(cx, &allocated).await;
            return Err((e, warnings));
        }
    };
    Ok(Reply {
        code: 201,
        object: stored,
        warnings,
    })
}

/// Admit and store an update of the object named on the URL.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn write_update(
    cx: &Ctx<'_>,
    new: Value,
    old: Value,
    raw: Option<Vec<u8>>,
    is_patch: bool,
    ownership: Ownership,
    fv: FieldValidation,
    dry: bool,
) -> HandlerResult {
    // A Service's allocation comes between the phases (kube's
    // `BeginUpdate`).
    let split = super::service_alloc::applies(cx);
    let opts = WriteOpts { fv, dry };
    let resp = admit_write(
        cx,
        Operation::Update,
        new,
        Some(old.clone()),
        raw,
        is_patch,
        opts,
        first_phase(split),
    )
    .await
    .map_err(plain)?;
    let mut warnings = resp.warnings;
    let obj = resp
        .object
        .ok_or_else(|| plain(ApiError::internal("admission returned no object")))?;
    let mut obj = record_update(cx, &ownership, Some(&old), obj, resp.unmutated)
        .await
        .map_err(|e| (e, warnings.clone()))?;
    // Service cluster IPs and node ports (kube's `BeginUpdate`).
    let plan = super::service_alloc::on_update(cx, &mut obj, &old, dry)
        .await
        .map_err(|e| (e, warnings.clone()))?;
    if split {
        let phase = Validate {
            operation: Operation::Update,
            old: Some(old.clone()),
            is_patch,
            opts,
        };
        obj = validate_phase(cx, phase, obj, &plan.allocated, &mut warnings).await?;
    }
    let result = async {
        super::custom::to_storage_version(cx.b, cx.info, &mut obj).await?;
        super::versions::to_storage(cx.info, &mut obj)?;
        cx.b.store
            .update(
                &cx.key(&cx.ri.name),
                obj,
                UpdateOptions {
                    dry_run: dry,
                    track_generation: cx.info.tracks_generation(),
                    create_if_missing: false,
                },
            )
            .await
    }
    .await;
    let stored = match result {
        Ok(stored) => {
            if !dry {
                super::service_alloc::release(cx, &plan.released).await;
            }
            stored
        }
        Err(e) => {
            super::service_alloc::release(cx, &plan.allocated).await;
            return Err((e, warnings));
        }
    };
    Ok(Reply {
        code: 200,
        object: stored,
        warnings,
    })
}
