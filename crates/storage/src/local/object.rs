//! Pure metadata rules of kube-apiserver's generic registry
//! (`rest.BeforeCreate`/`BeforeUpdate`/`BeforeDelete`, `store.go`), applied
//! to JSON objects. No IO here.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use keelson_apimachinery::meta::{meta_mut, meta_str, now_rfc3339, set_meta_str};
use keelson_apimachinery::{ApiError, ObjectKey};
use serde_json::{Map, Value};

/// kube's wording when a create carries a resourceVersion (a plain error,
/// so a 500 with no reason).
pub const RV_SET_ON_CREATE: &str = "resourceVersion should not be set on objects to be created";

/// Check the body is a JSON object.
pub fn require_object(obj: &Value) -> Result<(), ApiError> {
    if obj.is_object() {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "the object to store must be a JSON object",
        ))
    }
}

/// Decode Keelson-JSON stored bytes and stamp `metadata.resourceVersion`
/// with `revision` (the revision is not part of the stored bytes' truth);
/// see [`crate::ValueCodec`] for the other encoding.
pub fn decode(value: &[u8], revision: u64) -> Result<Value, ApiError> {
    crate::ValueCodec::Json.decode(&[], value, revision)
}

/// Decode a key's Keelson-JSON value at its mod revision.
pub fn decode_kv(kv: &keelson_kv::KeyValue) -> Result<Value, ApiError> {
    crate::ValueCodec::Json.decode_kv(kv)
}

/// ObjectMeta's fields before `resourceVersion`, in Go's order.
const BEFORE_RV: [&str; 5] = ["name", "generateName", "namespace", "selfLink", "uid"];

/// Set `metadata.resourceVersion`, in ObjectMeta's place when it is new
/// (after the identity fields), so answers keep kube's field order; in a
/// custom resource's (an unstructured object's) sorted keys, in its
/// sorted place.
pub fn set_resource_version(obj: &mut Value, rv: &str) {
    if let Some(v) = obj
        .get_mut("metadata")
        .and_then(|m| m.get_mut("resourceVersion"))
    {
        *v = Value::String(rv.to_string());
        return;
    }
    let unstructured = !is_built_in(obj);
    let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        set_meta_str(obj, "resourceVersion", rv);
        return;
    };
    let at = if unstructured {
        m.keys()
            .position(|k| k.as_str() > "resourceVersion")
            .unwrap_or(m.len())
    } else {
        m.keys()
            .rposition(|k| BEFORE_RV.contains(&k.as_str()))
            .map_or(0, |i| i + 1)
    };
    m.shift_insert(at, "resourceVersion".into(), Value::String(rv.to_string()));
}

/// Whether `obj` is of a built-in kind (one kube serves typed, not as an
/// unstructured map).
fn is_built_in(obj: &Value) -> bool {
    match (
        obj.get("apiVersion").and_then(Value::as_str),
        obj.get("kind").and_then(Value::as_str),
    ) {
        (Some(av), Some(kind)) => keelson_codec::protobuf::has_kind(av, kind),
        _ => true,
    }
}

/// Encode as Keelson's JSON; the resourceVersion is stored empty.
pub fn encode(obj: &Value) -> Result<Vec<u8>, ApiError> {
    crate::ValueCodec::Json.encode(obj)
}

/// Remove `metadata.<field>`.
pub fn remove_meta(obj: &mut Value, field: &str) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove(field);
    }
}

fn meta_field<'a>(obj: &'a Value, field: &str) -> Option<&'a Value> {
    obj.get("metadata").and_then(|m| m.get(field))
}

fn set_meta(obj: &mut Value, field: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            if let Some(m) = meta_mut(obj) {
                m.insert(field.to_string(), v);
            }
        }
        None => remove_meta(obj, field),
    }
}

/// `metadata.generation` as an integer.
pub fn generation(obj: &Value) -> Option<i64> {
    meta_field(obj, "generation").and_then(Value::as_i64)
}

/// `metadata.deletionGracePeriodSeconds` as an integer.
pub fn grace_period(obj: &Value) -> Option<i64> {
    meta_field(obj, "deletionGracePeriodSeconds").and_then(Value::as_i64)
}

/// True when `metadata.deletionTimestamp` is set.
pub fn is_deleting(obj: &Value) -> bool {
    meta_field(obj, "deletionTimestamp").is_some_and(|v| !v.is_null())
}

/// True when `metadata.finalizers` is a non-empty list.
pub fn has_finalizers(obj: &Value) -> bool {
    meta_field(obj, "finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

/// Parse a non-empty resourceVersion; `None` when empty or unparsable.
pub fn parse_rv(rv: &str) -> Option<u64> {
    rv.parse().ok()
}

/// Name and namespace come from the request key; cluster-scoped objects
/// carry no namespace.
fn set_identity(obj: &mut Value, key: &ObjectKey, name: &str) {
    set_meta_str(obj, "name", name);
    if key.namespace.is_empty() {
        remove_meta(obj, "namespace");
    } else {
        set_meta_str(obj, "namespace", &key.namespace);
    }
}

/// System fields of a new object (`FillObjectMetaSystemFields`,
/// `BeforeCreate`): uid, creationTimestamp, generation, no deletion marks.
/// A uid already in `obj` is kept: the gateway assigns it before admission
/// (a Job's generated selector names it) after dropping the client's.
pub fn prepare_create(obj: &mut Value, key: &ObjectKey, name: &str, track_generation: bool) {
    set_identity(obj, key, name);
    if meta_str(obj, "uid").is_empty() {
        set_meta_str(obj, "uid", &uuid::Uuid::new_v4().to_string());
    }
    set_meta_str(obj, "creationTimestamp", &now_rfc3339());
    if track_generation {
        set_meta(obj, "generation", Some(Value::from(1)));
    }
    remove_meta(obj, "deletionTimestamp");
    remove_meta(obj, "deletionGracePeriodSeconds");
    kube_form(obj);
}

/// Put a built-in object in the form kube-apiserver stores and answers
/// with: its Go struct's field order and the zero values Go always writes
/// (see `keelson_codec::protobuf::go_json`). Every stored version passes
/// here, so reads, lists and watch events all share that form.
pub fn kube_form(obj: &mut Value) {
    keelson_codec::protobuf::go_json::normalize(obj);
}

/// The object without `metadata` and `status`: what generation tracks.
fn spec_part(obj: &Value) -> Map<String, Value> {
    let mut m = obj.as_object().cloned().unwrap_or_default();
    m.remove("metadata");
    m.remove("status");
    m
}

/// Carry the server-owned fields of `stored` into `new` (`BeforeUpdate`):
/// identity, uid, creationTimestamp, deletion marks and generation (bumped
/// when tracked and anything outside metadata/status changed).
pub fn prepare_update(new: &mut Value, stored: &Value, key: &ObjectKey, track_generation: bool) {
    set_identity(new, key, &key.name);
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        set_meta(new, field, meta_field(stored, field).cloned());
    }
    let mut gen = generation(stored);
    if track_generation && spec_part(new) != spec_part(stored) {
        gen = Some(gen.unwrap_or(0) + 1);
    }
    set_meta(new, "generation", gen.map(Value::from));
    kube_form(new);
}

/// True when `new` equals `stored` apart from resourceVersion.
pub fn is_noop(new: &Value, stored: &Value) -> bool {
    let mut a = new.clone();
    let mut b = stored.clone();
    remove_meta(&mut a, "resourceVersion");
    remove_meta(&mut b, "resourceVersion");
    a == b
}

/// `shouldDeleteDuringUpdate`: the update empties the finalizers of an
/// object that is being deleted with no or a zero grace period; a
/// namespace also waits for its `spec.finalizers` to be empty
/// (`ShouldDeleteNamespaceDuringUpdate`).
pub fn should_delete_during_update(new: &Value, stored: &Value) -> bool {
    if is_namespace(new) && has_spec_finalizers(new) {
        return false;
    }
    !has_finalizers(new) && is_deleting(stored) && grace_period(stored).is_none_or(|g| g == 0)
}

/// True for a core `v1` Namespace object.
pub fn is_namespace(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("Namespace")
        && obj.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// True when a namespace's `spec.finalizers` is a non-empty list.
pub fn has_spec_finalizers(ns: &Value) -> bool {
    ns.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

/// `metadata.finalizers` as strings.
pub fn finalizers(obj: &Value) -> Vec<String> {
    meta_field(obj, "finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Replace `metadata.finalizers` (removed when empty).
pub fn set_finalizers(obj: &mut Value, list: Vec<String>) {
    let v = (!list.is_empty()).then(|| Value::from(list));
    set_meta(obj, "finalizers", v);
    kube_form(obj);
}

/// The `orphan` finalizer (`metav1.FinalizerOrphanDependents`).
pub const ORPHAN: &str = "orphan";
/// The `foregroundDeletion` finalizer (`metav1.FinalizerDeleteDependents`).
pub const FOREGROUND: &str = "foregroundDeletion";

/// A resource's `DefaultGarbageCollectionPolicy` at the versions kube 1.34
/// serves: ReplicationControllers (`v1`) and Jobs (`batch/v1`) orphan their
/// dependents for backward compatibility; everything else deletes them.
pub fn orphans_by_default(gr: &keelson_apimachinery::GroupResource) -> bool {
    matches!(
        (gr.group.as_str(), gr.resource.as_str()),
        ("", "replicationcontrollers") | ("batch", "jobs")
    )
}

/// kube's `deletionFinalizersForGarbageCollection`: the object's finalizers
/// with `orphan`/`foregroundDeletion` set as the options (else the object's
/// own finalizers, else the resource's default) ask; `None` when they do
/// not change.
pub fn deletion_finalizers(
    obj: &Value,
    orphan_default: bool,
    policy: Option<keelson_apimachinery::options::PropagationPolicy>,
    orphan_dependents: Option<bool>,
) -> Option<Vec<String>> {
    use keelson_apimachinery::options::PropagationPolicy as P;
    let current = finalizers(obj);
    let has = |f: &str| {
        current
            .iter()
            .find(|c| *c == ORPHAN || *c == FOREGROUND)
            .is_some_and(|c| c == f)
    };
    let (orphan, foreground) = match (orphan_dependents, policy) {
        (Some(o), _) => (o, false),
        (None, Some(P::Orphan)) => (true, false),
        (None, Some(P::Foreground)) => (false, true),
        (None, Some(P::Background)) => (false, false),
        (None, None) if has(ORPHAN) => (true, false),
        (None, None) if has(FOREGROUND) => (false, true),
        (None, None) => (orphan_default, false),
    };
    let mut new: Vec<String> = current
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        new.push(ORPHAN.into());
    }
    if foreground {
        new.push(FOREGROUND.into());
    }
    let set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    (set(&new) != set(&current)).then_some(new)
}

fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Outcome of the graceful-deletion step of a delete (`rest.BeforeDelete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Graceful {
    /// Not a graceful delete (no period given, nothing to do).
    No,
    /// Marked (or re-marked with a shorter period) with this period.
    Yes(i64),
    /// Already being deleted with a period no longer than asked: leave it.
    Pending,
}

/// Apply a requested grace period to `obj` as `rest.BeforeDelete` does.
/// Negative periods count as 1 second.
pub fn before_delete(obj: &mut Value, grace: Option<i64>, now: DateTime<Utc>) -> Graceful {
    let Some(n) = grace.map(|n| if n < 0 { 1 } else { n }) else {
        return Graceful::No;
    };
    if is_deleting(obj) {
        let old = grace_period(obj);
        // Marked earlier without a period (finalizers): nothing to shorten.
        if old.is_none_or(|old| old == 0) {
            return Graceful::No;
        }
        if old.is_some_and(|old| old <= n) {
            return Graceful::Pending;
        }
        // Move the deadline back by the difference of the periods.
        let old_deadline = parse_time(meta_str(obj, "deletionTimestamp"));
        let deadline = match (old_deadline, old) {
            (Some(t), Some(old)) => t - Duration::seconds(old) + Duration::seconds(n),
            _ => now + Duration::seconds(n),
        };
        set_meta_str(obj, "deletionTimestamp", &format_time(deadline));
        set_meta(obj, "deletionGracePeriodSeconds", Some(Value::from(n)));
        kube_form(obj);
        return Graceful::Yes(n);
    }
    set_meta_str(
        obj,
        "deletionTimestamp",
        &format_time(now + Duration::seconds(n)),
    );
    set_meta(obj, "deletionGracePeriodSeconds", Some(Value::from(n)));
    if let Some(g) = generation(obj).filter(|g| *g > 0) {
        set_meta(obj, "generation", Some(Value::from(g + 1)));
    }
    kube_form(obj);
    Graceful::Yes(n)
}

/// `markAsDeleting`: an object kept for its finalizers gets
/// `deletionTimestamp` (now, unless already earlier) and a zero grace
/// period; its generation is bumped the first time.
pub fn mark_as_deleting(obj: &mut Value, now: DateTime<Utc>) {
    let existing = meta_field(obj, "deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(parse_time);
    if existing.is_none() {
        if let Some(g) = generation(obj).filter(|g| *g > 0) {
            set_meta(obj, "generation", Some(Value::from(g + 1)));
        }
    }
    if existing.is_none_or(|t| t > now) {
        set_meta_str(obj, "deletionTimestamp", &format_time(now));
    }
    set_meta(obj, "deletionGracePeriodSeconds", Some(Value::from(0)));
    kube_form(obj);
}

/// The group and Kind of a stored object as kube's `BeforeDelete` names
/// it in a precondition conflict (`Deployment.apps`), else the resource.
fn kind_of(key: &ObjectKey, stored: &Value) -> keelson_apimachinery::GroupResource {
    let kind = stored.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind.is_empty() {
        return key.gr.clone();
    }
    keelson_apimachinery::GroupResource::new(&key.gr.group, kind)
}

/// Check delete preconditions (`BeforeDelete`), with kube's messages.
pub fn check_preconditions(
    key: &ObjectKey,
    stored: &Value,
    uid: Option<&str>,
    rv: Option<&str>,
) -> Result<(), ApiError> {
    let gk = kind_of(key, stored);
    if let Some(uid) = uid {
        let actual = meta_str(stored, "uid");
        if uid != actual {
            return Err(ApiError::conflict(
                &gk,
                &key.name,
                &format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                ),
            ));
        }
    }
    if let Some(rv) = rv {
        let actual = meta_str(stored, "resourceVersion");
        if rv != actual {
            return Err(ApiError::conflict(
                &gk,
                &key.name,
                &format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_apimachinery::GroupResource;
    use serde_json::json;

    fn key() -> ObjectKey {
        ObjectKey::new(GroupResource::new("apps", "deployments"), "ns", "d")
    }

    #[test]
    fn generation_bumps_only_on_spec_changes() {
        let stored = json!({"metadata": {"name": "d", "generation": 3}, "spec": {"r": 1}, "status": {"x": 1}});
        let mut status_only =
            json!({"metadata": {"name": "d"}, "spec": {"r": 1}, "status": {"x": 2}});
        prepare_update(&mut status_only, &stored, &key(), true);
        assert_eq!(generation(&status_only), Some(3));
        let mut spec = json!({"metadata": {"name": "d", "generation": 99}, "spec": {"r": 2}});
        prepare_update(&mut spec, &stored, &key(), true);
        assert_eq!(generation(&spec), Some(4));
        let mut untracked = json!({"metadata": {"generation": 99}, "spec": {"r": 2}});
        prepare_update(&mut untracked, &stored, &key(), false);
        assert_eq!(generation(&untracked), Some(3));
    }

    #[test]
    fn graceful_shortening_moves_deadline_back() {
        let now = parse_time("2024-01-01T00:00:00Z").unwrap();
        let mut obj = json!({"metadata": {"generation": 1}});
        assert_eq!(before_delete(&mut obj, Some(30), now), Graceful::Yes(30));
        assert_eq!(meta_str(&obj, "deletionTimestamp"), "2024-01-01T00:00:30Z");
        assert_eq!(generation(&obj), Some(2));
        assert_eq!(before_delete(&mut obj, Some(30), now), Graceful::Pending);
        assert_eq!(before_delete(&mut obj, Some(10), now), Graceful::Yes(10));
        assert_eq!(meta_str(&obj, "deletionTimestamp"), "2024-01-01T00:00:10Z");
        assert_eq!(grace_period(&obj), Some(10));
        assert_eq!(before_delete(&mut obj, None, now), Graceful::No);
    }

    #[test]
    fn gc_finalizers_follow_kube() {
        use keelson_apimachinery::options::PropagationPolicy as P;
        let plain = json!({"metadata": {"finalizers": ["x"]}});
        assert_eq!(deletion_finalizers(&plain, false, None, None), None);
        assert_eq!(
            deletion_finalizers(&plain, true, None, None),
            Some(vec!["x".to_string(), "orphan".to_string()])
        );
        assert_eq!(
            deletion_finalizers(&plain, false, Some(P::Foreground), None),
            Some(vec!["x".to_string(), "foregroundDeletion".to_string()])
        );
        // orphanDependents wins; false means neither finalizer.
        let orphaned = json!({"metadata": {"finalizers": ["orphan"]}});
        assert_eq!(
            deletion_finalizers(&orphaned, false, None, Some(false)),
            Some(vec![])
        );
        // The object's own finalizer overrides the resource's default.
        let fg = json!({"metadata": {"finalizers": ["foregroundDeletion"]}});
        assert_eq!(deletion_finalizers(&fg, true, None, None), None);
        assert_eq!(
            deletion_finalizers(&fg, false, Some(P::Orphan), None),
            Some(vec!["orphan".to_string()])
        );
    }

    #[test]
    fn a_finalizer_marked_object_is_not_graceful_pending() {
        let now = parse_time("2024-01-01T00:00:00Z").unwrap();
        let mut obj = json!({"metadata": {"deletionTimestamp": "2023-01-01T00:00:00Z",
            "deletionGracePeriodSeconds": 0}});
        assert_eq!(before_delete(&mut obj, Some(30), now), Graceful::No);
    }

    #[test]
    fn namespaces_wait_for_spec_finalizers() {
        let stored = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}});
        let held = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {},
            "spec": {"finalizers": ["kubernetes"]}});
        assert!(!should_delete_during_update(&held, &stored));
        let done = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {},
            "spec": {"finalizers": []}});
        assert!(should_delete_during_update(&done, &stored));
    }

    #[test]
    fn mark_as_deleting_keeps_an_earlier_timestamp() {
        let now = parse_time("2024-01-01T00:00:00Z").unwrap();
        let mut obj =
            json!({"metadata": {"deletionTimestamp": "2023-01-01T00:00:00Z", "generation": 5}});
        mark_as_deleting(&mut obj, now);
        assert_eq!(meta_str(&obj, "deletionTimestamp"), "2023-01-01T00:00:00Z");
        assert_eq!(grace_period(&obj), Some(0));
        assert_eq!(generation(&obj), Some(5));
    }
}
