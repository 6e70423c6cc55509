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

/// Decode stored bytes and stamp `metadata.resourceVersion` with
/// `revision` (the revision is not part of the stored bytes' truth).
pub fn decode(value: &[u8], revision: u64) -> Result<Value, ApiError> {
    let mut obj: Value = serde_json::from_slice(value)
        .map_err(|e| ApiError::internal(format!("stored object is not valid JSON: {e}")))?;
    set_meta_str(&mut obj, "resourceVersion", &revision.to_string());
    Ok(obj)
}

/// Decode a key's value at its mod revision.
pub fn decode_kv(kv: &keelson_kv::KeyValue) -> Result<Value, ApiError> {
    decode(&kv.value, kv.mod_revision)
}

/// Encode for storage; the resourceVersion is stored empty.
pub fn encode(obj: &Value) -> Result<Vec<u8>, ApiError> {
    let mut obj = obj.clone();
    set_meta_str(&mut obj, "resourceVersion", "");
    serde_json::to_vec(&obj).map_err(ApiError::internal)
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
pub fn prepare_create(obj: &mut Value, key: &ObjectKey, name: &str, track_generation: bool) {
    set_identity(obj, key, name);
    set_meta_str(obj, "uid", &uuid::Uuid::new_v4().to_string());
    set_meta_str(obj, "creationTimestamp", &now_rfc3339());
    if track_generation {
        set_meta(obj, "generation", Some(Value::from(1)));
    }
    remove_meta(obj, "deletionTimestamp");
    remove_meta(obj, "deletionGracePeriodSeconds");
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
/// object that is being deleted with a zero grace period.
pub fn should_delete_during_update(new: &Value, stored: &Value) -> bool {
    !has_finalizers(new) && is_deleting(stored) && grace_period(stored) == Some(0)
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
}

/// Check delete preconditions (`BeforeDelete`), with kube's messages.
pub fn check_preconditions(
    key: &ObjectKey,
    stored: &Value,
    uid: Option<&str>,
    rv: Option<&str>,
) -> Result<(), ApiError> {
    if let Some(uid) = uid {
        let actual = meta_str(stored, "uid");
        if uid != actual {
            return Err(ApiError::conflict(
                &key.gr,
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
                &key.gr,
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
