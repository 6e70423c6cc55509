//! Keelson's merge service logic: applying PATCH bodies to stored objects
//! with kube-apiserver's errors (JSON Patch, JSON Merge Patch, Strategic
//! Merge Patch), Server-Side Apply, and the `metadata.managedFields`
//! bookkeeping of every write (kube's field manager).
//!
//! The merge rules come from the resource's schema in the live catalog:
//! list types, map keys, map and struct types, patch strategies and merge
//! keys ([`schema`]).
//!
//! [`LocalMerge`] implements [`keelson_api::MergeApi`].
#![forbid(unsafe_code)]

mod errors;
mod fieldmanager;
mod gojson;
mod json_patch;
mod merge_patch;
pub mod mutation;
mod schema;
mod strategic;

use async_trait::async_trait;
use keelson_api::{FieldOwner, ManagedFieldsRequest, MergeApi, PatchRequest, PatchType};
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource};
use keelson_registry::{Catalog, CatalogSnapshot};
use serde_json::Value;

pub use errors::{MAX_JSON_PATCH_OPERATIONS, SUPPORTED_PATCH_TYPES};

use fieldmanager::FieldManager;
use schema::TypeRef;

/// The in-process merge service. Holds only the live catalog (the schemas
/// the merge rules come from).
#[derive(Debug, Clone)]
pub struct LocalMerge {
    catalog: Catalog,
}

impl LocalMerge {
    /// A merge service reading schemas from `catalog`.
    pub fn new(catalog: Catalog) -> LocalMerge {
        LocalMerge { catalog }
    }
}

#[async_trait]
impl MergeApi for LocalMerge {
    async fn patch(&self, req: PatchRequest) -> ApiResult<Value> {
        let snap = self.catalog.snapshot();
        let patched = match req.patch_type {
            PatchType::Json => json_patch::apply(&req.original, &req.patch)?,
            PatchType::Merge => merge_patch::apply(&req.original, &req.patch)?,
            PatchType::StrategicMerge => {
                let ty = TypeRef::for_kind(&snap, &req.owner.api_version, &req.kind);
                strategic::apply(&req.original, &req.patch, ty)?
            }
            PatchType::Apply => {
                let config = apply_config(&req.patch)?;
                let fm = field_manager(&snap, &req.gr, &req.owner, &req.kind);
                return fm.apply(
                    &req.original,
                    &config,
                    &req.owner.manager,
                    req.force,
                    &now(),
                );
            }
        };
        ensure_object(patched)
    }

    async fn update_managed_fields(&self, req: ManagedFieldsRequest) -> ApiResult<Value> {
        let snap = self.catalog.snapshot();
        let fm = field_manager(&snap, &req.gr, &req.owner, &req.kind);
        Ok(fm.update(&req.old, req.new, &req.owner.manager, &now()))
    }
}

/// The field manager for writes of `kind` by `owner` to resource `gr`.
fn field_manager<'a>(
    snap: &'a CatalogSnapshot,
    gr: &GroupResource,
    owner: &FieldOwner,
    kind: &str,
) -> FieldManager<'a> {
    let version = owner
        .api_version
        .rsplit_once('/')
        .map_or(owner.api_version.as_str(), |(_, v)| v);
    let resource = snap.lookup(&gr.group, version, &gr.resource);
    let has_status = resource.is_some_and(|r| r.has_subresource("status"));
    let status_resets = resource.map_or(&[][..], |r| &r.strategy.status_resets_metadata);
    // Entries at a version the resource is not served at are dropped; a
    // resource the catalog does not know (Scale) keeps every entry.
    let (group, plural, known) = (gr.group.clone(), gr.resource.clone(), resource.is_some());
    let served = move |api_version: &str| {
        let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
        !known || (g == group && snap.lookup(g, v, &plural).is_some())
    };
    let ty = TypeRef::for_kind(snap, &owner.api_version, kind);
    FieldManager::with_versions(
        ty,
        &owner.api_version,
        kind,
        &owner.subresource,
        has_status,
        status_resets,
        Box::new(served),
    )
}

/// `managedFields[].time`: now, to the second, as kube writes it.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// An `application/apply-patch+yaml` body (YAML, of which JSON is a
/// subset), or kube's `400 error decoding YAML`.
fn apply_config(body: &[u8]) -> ApiResult<Value> {
    // Clients mostly send JSON, which parses much faster as JSON than
    // through the YAML parser; anything else is YAML.
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?,
    };
    match value {
        Value::Object(_) => Ok(value),
        Value::Null => Ok(Value::Object(Default::default())),
        other => Err(ApiError::bad_request(format!(
            "error decoding YAML: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            gojson::kind(&other)
        ))),
    }
}

/// The patched document must decode as an object; kube reports a failure
/// as `422` against the `patch` field with the patched JSON as the value.
fn ensure_object(patched: Value) -> ApiResult<Value> {
    if patched.is_object() {
        return Ok(patched);
    }
    let json = serde_json::to_string(&patched).unwrap_or_default();
    let msg = format!(
        "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
        gojson::kind(&patched)
    );
    Err(ApiError::invalid(
        "",
        "",
        "",
        &[FieldError::invalid("patch", json, &msg)],
    ))
}
