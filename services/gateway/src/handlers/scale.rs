//! The `scale` subresource: an `autoscaling/v1 Scale` view of a workload's
//! `spec.replicas`, `status.replicas` and label selector; get, update and
//! patch.

use bytes::Bytes;
use keelson_api::{
    FieldOwner, ManagedFieldsRequest, PatchRequest, PatchType, UpdateOptions as StoreUpdateOptions,
};
use keelson_apimachinery::managedfields::{
    pointer_path, ReplicasPaths, ScaleHandler, SCALE_API_VERSION,
};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::options::{PatchOptions, UpdateOptions};
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource};
use serde_json::{json, Map, Value};

use super::object::summary;
use super::patch::patch_type;
use super::{Ctx, Reply};
use keelson_registry::ScalePaths;

/// Where the resource keeps its replicas and selector (catalog data).
fn paths<'a>(cx: &Ctx<'a>) -> ApiResult<&'a ScalePaths> {
    cx.info
        .strategy
        .scale
        .as_ref()
        .ok_or_else(ApiError::path_not_found)
}

/// Set the value at a JSON pointer, making (or replacing with) objects on
/// the way, as writing `spec.replicas` into a workload does.
fn set_at(obj: &mut Value, pointer: &str, value: Value) {
    let mut cur = obj;
    let mut parts = pointer.split('/').skip(1).peekable();
    while let Some(part) = parts.next() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Value::Object(m) = cur else { return };
        if parts.peek().is_none() {
            m.insert(part.to_owned(), value);
            return;
        }
        cur = m
            .entry(part.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}
/// The label selector string of a workload, as the Scale status shows it.
fn selector_string(obj: &Value, paths: &ScalePaths) -> String {
    // A CRD without labelSelectorPath: kube's Scale has no selector (an
    // empty pointer would name the whole object).
    if paths.label_selector.is_empty() {
        return String::new();
    }
    let sel = obj.pointer(&paths.label_selector);
    // A CRD's labelSelectorPath names a selector already in string form.
    if let Some(Value::String(s)) = sel {
        return s.clone();
    }
    let mut parts = Vec::new();
    let labels = sel
        .and_then(|s| s.get("matchLabels"))
        .or_else(|| sel.filter(|s| s.get("matchExpressions").is_none()));
    if let Some(Value::Object(m)) = labels {
        let mut kv: Vec<_> = m.iter().collect();
        kv.sort_by(|a, b| a.0.cmp(b.0));
        for (k, v) in kv {
            parts.push(format!("{}={}", k, v.as_str().unwrap_or("")));
        }
    }
    if let Some(Value::Array(exprs)) = sel.and_then(|s| s.get("matchExpressions")) {
        for e in exprs {
            let key = e.get("key").and_then(|v| v.as_str()).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(|v| v.as_str()).unwrap_or("") {
                "In" => parts.push(format!("{} in ({})", key, values.join(","))),
                "NotIn" => parts.push(format!("{} notin ({})", key, values.join(","))),
                "Exists" => parts.push(key.to_string()),
                "DoesNotExist" => parts.push(format!("!{}", key)),
                _ => {}
            }
        }
    }
    parts.join(",")
}

fn scale_of(obj: &Value, paths: &ScalePaths) -> Value {
    let m = |f: &str| meta_str(obj, f).to_string();
    let mut metadata = Map::new();
    for f in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        let v = m(f);
        if !v.is_empty() {
            metadata.insert(f.into(), Value::String(v));
        }
    }
    let replicas = obj
        .pointer(&paths.spec_replicas)
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let status_replicas = obj
        .pointer(&paths.status_replicas)
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let mut status = json!({"replicas": status_replicas});
    let sel = selector_string(obj, paths);
    if !sel.is_empty() {
        status["selector"] = Value::String(sel);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": replicas},
        "status": status,
    })
}

/// The workload named on the URL in the request's version: a custom
/// object is stored in its CRD's storage version, and the scale paths are
/// the requested version's (converted through the CRD's webhook).
async fn read(cx: &Ctx<'_>) -> ApiResult<Value> {
    let mut obj = cx.b.store.get(&cx.key(&cx.ri.name)).await?;
    super::custom::to_request_version(cx.b, cx.info, &mut obj).await?;
    Ok(obj)
}

/// `GET .../scale`.
pub(crate) async fn get(cx: &Ctx<'_>) -> ApiResult<Reply> {
    let obj = read(cx).await?;
    Ok(Reply::ok(scale_of(&obj, paths(cx)?)))
}

/// Type checks of an `autoscaling/v1 Scale` body, as Go's decoder makes them.
fn check_scale(scale: &Value) -> ApiResult<()> {
    let err = |v: &Value, field: &str, go_type: &str| {
        ApiError::bad_request(format!(
            "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field {} of type {}",
            keelson_apimachinery::field::json_kind(v),
            field,
            go_type
        ))
    };
    if !scale.is_object() {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type Scale): json: cannot unmarshal {} into Go value of type v1.Scale",
            keelson_apimachinery::field::json_kind(scale)
        )));
    }
    if let Some(k) = scale.get("kind").filter(|k| !k.is_null()) {
        if k.as_str().is_some_and(|k| k != "Scale" && !k.is_empty()) {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type Scale): object kind {} does not match",
                k
            )));
        }
    }
    match scale.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for f in ["name", "namespace", "resourceVersion", "uid"] {
                if let Some(v) = m.get(f).filter(|v| !v.is_null() && !v.is_string()) {
                    return Err(err(v, &format!("ObjectMeta.metadata.{}", f), "string"));
                }
            }
            for f in ["labels", "annotations"] {
                match m.get(f) {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(kv)) => {
                        if let Some(v) = kv.values().find(|v| !v.is_string() && !v.is_null()) {
                            return Err(err(v, &format!("ObjectMeta.metadata.{}", f), "string"));
                        }
                    }
                    Some(v) => {
                        return Err(err(
                            v,
                            &format!("ObjectMeta.metadata.{}", f),
                            "map[string]string",
                        ))
                    }
                }
            }
        }
        Some(v) => return Err(err(v, "Scale.metadata", "v1.ObjectMeta")),
    }
    match scale.get("spec") {
        None | Some(Value::Null) | Some(Value::Object(_)) => Ok(()),
        Some(v) => Err(err(v, "Scale.spec", "v1.ScaleSpec")),
    }
}

/// The managedFields of the workload `obj` as the Scale sees them (kube's
/// `ScaleHandler` over the workload's version and replicas path).
fn scale_handler(cx: &Ctx<'_>, obj: &Value) -> ApiResult<ScaleHandler> {
    let api_version = match obj.get("apiVersion").and_then(Value::as_str) {
        Some(v) if !v.is_empty() => v.to_string(),
        _ => cx.info.api_version(),
    };
    let path = pointer_path(&paths(cx)?.spec_replicas);
    let mappings = ReplicasPaths::from([(api_version.clone(), Some(path))]);
    Ok(ScaleHandler::new(obj, &api_version, mappings))
}

/// The workload's Scale with the managedFields its writes are recorded
/// against.
fn tracked_scale(cx: &Ctx<'_>, obj: &Value, handler: &ScaleHandler) -> ApiResult<Value> {
    let mut scale = scale_of(obj, paths(cx)?);
    let entries = handler.to_subresource();
    if !entries.is_empty() {
        scale["metadata"]["managedFields"] = Value::Array(entries);
    }
    Ok(scale)
}

/// What a write of the Scale is: the new Scale, and whether it is an apply
/// (which recorded its managedFields already).
struct ScaleWrite {
    scale: Value,
    applied: bool,
}

/// The Scale's `spec.replicas`, with kube's decode error for a value that
/// is not an int32 and `ValidateScale`'s for a negative one.
fn scale_replicas(scale: &Value, name: &str) -> ApiResult<i64> {
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_i64().filter(|n| i32::try_from(*n).is_ok()).ok_or_else(|| {
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                v
            ))
        })?,
    };
    if replicas < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            name,
            &[FieldError::invalid(
                "spec.replicas",
                replicas,
                "must be greater than or equal to 0",
            )],
        ));
    }
    Ok(replicas)
}

/// Apply a desired Scale to the workload and store it: the replicas, the
/// resourceVersion precondition, and the Scale's managedFields folded back
/// into the workload's, as kube's scale subresources do.
async fn apply_scale(
    cx: &Ctx<'_>,
    old: Value,
    old_scale: Value,
    handler: &ScaleHandler,
    write: ScaleWrite,
) -> ApiResult<Reply> {
    check_scale(&write.scale)?;
    let opts = UpdateOptions::from_query(cx.query)?;
    let dry = opts.dry_run;
    let name = &cx.ri.name;
    scale_replicas(&write.scale, name)?;
    // kube's update handler runs the admission chain on the Scale
    // (`autoscaling/v1`, the old Scale beside it): webhooks and policies
    // matching `<resource>/scale` see it, and it is applied as admitted.
    let (admitted, warnings) = super::write::admit_subresource(
        cx,
        super::write::SubresourceKind {
            api_version: SCALE_API_VERSION,
            kind: "Scale",
        },
        keelson_api::Operation::Update,
        write.scale,
        Some(old_scale.clone()),
        super::write::WriteOpts {
            fv: opts.field_validation,
            dry,
        },
    )
    .await?;
    let write = ScaleWrite {
        scale: admitted,
        applied: write.applied,
    };
    let replicas = scale_replicas(&write.scale, name)?;
    // The Scale's own managedFields: an apply recorded them; other writes
    // are an `Update` of the Scale by the writer.
    let recorded = if write.applied {
        write.scale
    } else {
        cx.b.merge
            .update_managed_fields(ManagedFieldsRequest {
                gr: GroupResource::new("autoscaling", "scale"),
                kind: "Scale".into(),
                owner: FieldOwner {
                    api_version: SCALE_API_VERSION.into(),
                    ..cx.owner(&opts.field_manager)
                },
                old: old_scale,
                new: write.scale,
            })
            .await?
    };
    let scale_entries = match recorded.pointer("/metadata/managedFields") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let mut new = old;
    set_at(&mut new, &paths(cx)?.spec_replicas, Value::from(replicas));
    let rv = meta_str(&recorded, "resourceVersion").to_string();
    if !rv.is_empty() {
        keelson_apimachinery::meta::set_meta_str(&mut new, "resourceVersion", &rv);
    }
    let entries = handler.to_parent(&scale_entries);
    if let Some(Value::Object(meta)) = new.get_mut("metadata") {
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(entries));
        }
    }
    super::custom::to_storage_version(cx.b, cx.info, &mut new).await?;
    let mut stored =
        cx.b.store
            .update(
                &cx.key(name),
                new,
                StoreUpdateOptions {
                    dry_run: dry,
                    track_generation: cx.info.tracks_generation(),
                    create_if_missing: false,
                },
            )
            .await?;
    super::custom::to_request_version(cx.b, cx.info, &mut stored).await?;
    Ok(Reply {
        warnings,
        ..Reply::ok(scale_of(&stored, paths(cx)?))
    })
}

/// `PUT .../scale`.
pub(crate) async fn update(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let body = &super::object::json_body(cx, body, "Scale")?;
    let scale: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type Scale): couldn't get version/kind; json parse error: {} ({})",
            e,
            summary(body)
        ))
    })?;
    let name = meta_str(&scale, "name");
    if name != cx.ri.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            name, cx.ri.name
        )));
    }
    let old = read(cx).await?;
    let handler = scale_handler(cx, &old)?;
    let old_scale = tracked_scale(cx, &old, &handler)?;
    let write = ScaleWrite {
        scale,
        applied: false,
    };
    apply_scale(cx, old, old_scale, &handler, write).await
}

/// `PATCH .../scale`.
pub(crate) async fn patch(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let pt = patch_type(cx)?;
    let opts = PatchOptions::from_query(cx.query, pt == PatchType::Apply)?;
    let old = read(cx).await?;
    let handler = scale_handler(cx, &old)?;
    let old_scale = tracked_scale(cx, &old, &handler)?;
    let patched =
        cx.b.merge
            .patch(PatchRequest {
                patch_type: pt,
                gr: GroupResource::new("autoscaling", "scale"),
                kind: "Scale".into(),
                owner: FieldOwner {
                    api_version: SCALE_API_VERSION.into(),
                    ..cx.owner(&opts.field_manager)
                },
                force: opts.force.unwrap_or(false),
                original: old_scale.clone(),
                patch: super::patch::apply_body(cx, body)?,
            })
            .await?;
    let write = ScaleWrite {
        scale: patched,
        applied: pt == PatchType::Apply,
    };
    apply_scale(cx, old, old_scale, &handler, write).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_view() {
        let d = json!({"metadata": {"name": "d", "namespace": "default", "resourceVersion": "7"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}}, "status": {"replicas": 1}});
        let s = scale_of(&d, &ScalePaths::default());
        assert_eq!(s["apiVersion"], "autoscaling/v1");
        assert_eq!(s["spec"]["replicas"], 2);
        assert_eq!(s["status"]["selector"], "app=x");
        assert_eq!(s["metadata"]["resourceVersion"], "7");
    }
}
