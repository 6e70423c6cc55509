//! The two ways a MutatingAdmissionPolicy changes an object, as kube's
//! `mutating/patch` package applies them: an apply configuration merged
//! into the object by its schema (structured-merge-diff's `Merge`, no field
//! ownership recorded), and RFC 6902 operations applied as
//! `gopkg.in/evanphx/json-patch.v4` applies them, with its error wording.
//!
//! The JSON Patch applier is our own rather than the `json-patch` crate's:
//! kube shows evanphx's messages to the user (`add operation does not
//! apply: doc is missing path: ...`) and keeps its quirks (a `replace` of a
//! missing object key adds it), which the crate does not.

use keelson_registry::CatalogSnapshot;
use serde_json::Value;

use crate::fieldmanager::typed;
use crate::schema::TypeRef;

/// Merge `patch` (an `Object{...}` result, its `apiVersion` and `kind` the
/// object's) into `live` by the schema of `api_version`/`kind`; kube's
/// error, without its `error applying patch: ` prefix, when the patch has
/// undeclared fields or sets an atomic list, map or struct.
pub fn apply_configuration(
    snap: &CatalogSnapshot,
    api_version: &str,
    kind: &str,
    live: &Value,
    patch: &Value,
) -> Result<Value, String> {
    let ty = TypeRef::for_kind(snap, api_version, kind);
    let errs = typed::validate(patch, ty);
    if !errs.is_empty() {
        return Err(format!(
            "failed to convert patch object to typed object: {}",
            typed::validation_message(&errs)
        ));
    }
    let atomics = typed::find_atomics(patch, ty);
    if !atomics.is_empty() {
        return Err(format!(
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
            atomics.join(", ")
        ));
    }
    typed::merge(live, patch, ty).map_err(|e| format!("failed to merge patch: {e}"))
}

/// What applying JSON Patch operations came to.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonPatchOutcome {
    /// Every operation applied: the patched object.
    Applied(Value),
    /// A `test` operation failed: kube leaves the object as it was.
    TestFailed,
}

const MISSING: &str = "missing value";
const INVALID_INDEX: &str = "invalid index referenced";

/// Apply `ops` (objects with `op`, `path`, `from`, `value`) to `doc` as
/// evanphx/json-patch v4 does; its error message on failure.
pub fn apply_json_patch(doc: &Value, ops: &[Value]) -> Result<JsonPatchOutcome, String> {
    let mut doc = doc.clone();
    for op in ops {
        let text = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or("");
        let (path, from) = (text("path"), text("from"));
        let value = op.get("value").cloned().unwrap_or(Value::Null);
        let r = match text("op") {
            "add" => add(&mut doc, path, value),
            "remove" => remove(&mut doc, path),
            "replace" => replace(&mut doc, path, value),
            "move" => move_op(&mut doc, from, path),
            "copy" => copy(&mut doc, from, path),
            "test" => match test(&doc, path, &value) {
                Ok(true) => Ok(()),
                Ok(false) => return Ok(JsonPatchOutcome::TestFailed),
                Err(e) => Err(e),
            },
            other => Err(format!("Unexpected kind: {other}")),
        };
        r?;
    }
    Ok(JsonPatchOutcome::Applied(doc))
}

/// A JSON Pointer segment, unescaped.
fn unescape(s: &str) -> String {
    s.replace("~1", "/").replace("~0", "~")
}

/// evanphx's `findObject`: the container holding the path's last segment
/// (and that segment), or `None` when the path has no `/` or a parent is
/// missing.
fn find_object<'d>(doc: &'d mut Value, path: &str) -> Option<(&'d mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let mut cur = doc;
    for part in &split[1..split.len() - 1] {
        let key = unescape(part);
        cur = match cur {
            Value::Object(m) => m.get_mut(&key)?,
            Value::Array(a) => {
                let i: usize = key.parse().ok()?;
                a.get_mut(i)?
            }
            _ => return None,
        };
        if !cur.is_object() && !cur.is_array() {
            return None;
        }
    }
    Some((cur, unescape(split[split.len() - 1])))
}

fn index(key: &str, len: usize, allow_end: bool) -> Result<usize, String> {
    let i: i64 = key.parse().map_err(|_| {
        format!("value was not a proper array index: '{key}': strconv.Atoi: parsing {key:?}: invalid syntax")
    })?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if i < 0 || (i as usize) > max || (!allow_end && len == 0) {
        return Err(format!(
            "Unable to access invalid index: {i}: {INVALID_INDEX}"
        ));
    }
    Ok(i as usize)
}

fn container_add(con: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(a) => {
            if key == "-" {
                a.push(value);
                return Ok(());
            }
            let i = index(key, a.len(), true)?;
            a.insert(i, value);
            Ok(())
        }
        _ => Err(MISSING.to_string()),
    }
}

fn container_remove(con: &mut Value, key: &str) -> Result<Value, String> {
    match con {
        Value::Object(m) => m
            .shift_remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: {MISSING}")),
        Value::Array(a) => {
            let i = index(key, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err(MISSING.to_string()),
    }
}

fn container_get(con: &Value, key: &str) -> Result<Option<Value>, String> {
    match con {
        Value::Object(m) => Ok(m.get(key).cloned()),
        Value::Array(a) => {
            let i = index(key, a.len(), false)?;
            Ok(a.get(i).cloned())
        }
        _ => Err(MISSING.to_string()),
    }
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let Some((con, key)) = find_object(doc, path) else {
        return Err(format!(
            "add operation does not apply: doc is missing path: \"{path}\": {MISSING}"
        ));
    };
    container_add(con, &key, value).map_err(|e| format!("error in add for path: '{path}': {e}"))
}

fn remove(doc: &mut Value, path: &str) -> Result<(), String> {
    let Some((con, key)) = find_object(doc, path) else {
        return Err(format!(
            "remove operation does not apply: doc is missing path: \"{path}\": {MISSING}"
        ));
    };
    container_remove(con, &key)
        .map(|_| ())
        .map_err(|e| format!("error in remove for path: '{path}': {e}"))
}

fn replace(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        if !value.is_object() && !value.is_array() {
            return Err("replace operation value must be object or array".into());
        }
        *doc = value;
        return Ok(());
    }
    let Some((con, key)) = find_object(doc, path) else {
        return Err(format!(
            "replace operation does not apply: doc is missing path: {path}: {MISSING}"
        ));
    };
    if container_get(con, &key).is_err() {
        return Err(format!(
            "replace operation does not apply: doc is missing key: {path}: {MISSING}"
        ));
    }
    // v4's quirk: a missing object key is not an error, it is set.
    match con {
        Value::Object(m) => {
            m.insert(key, value);
        }
        Value::Array(a) => {
            if let Ok(i) = index(&key, a.len(), false) {
                a[i] = value;
            }
        }
        _ => {}
    }
    Ok(())
}

fn move_op(doc: &mut Value, from: &str, path: &str) -> Result<(), String> {
    let Some((con, key)) = find_object(doc, from) else {
        return Err(format!(
            "move operation does not apply: doc is missing from path: {from}: {MISSING}"
        ));
    };
    let value =
        container_remove(con, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?;
    let Some((con, key)) = find_object(doc, path) else {
        return Err(format!(
            "move operation does not apply: doc is missing destination path: {path}: {MISSING}"
        ));
    };
    container_add(con, &key, value).map_err(|e| format!("error in move for path: '{path}': {e}"))
}

fn copy(doc: &mut Value, from: &str, path: &str) -> Result<(), String> {
    let Some((con, key)) = find_object(doc, from) else {
        return Err(format!(
            "copy operation does not apply: doc is missing from path: {from}: {MISSING}"
        ));
    };
    let value = container_get(con, &key)
        .map_err(|e| format!("error in copy for from: '{from}': {e}"))?
        .ok_or_else(|| format!("error in copy for from: '{from}': {MISSING}"))?;
    let Some((con, key)) = find_object(doc, path) else {
        return Err(format!(
            "copy operation does not apply: doc is missing destination path: {path}: {MISSING}"
        ));
    };
    container_add(con, &key, value)
        .map_err(|e| format!("error while adding value during copy: {e}"))
}

/// Whether the test passes; an error when its path is missing.
fn test(doc: &Value, path: &str, value: &Value) -> Result<bool, String> {
    if path.is_empty() {
        return Ok(doc == value);
    }
    let mut doc = doc.clone();
    let Some((con, key)) = find_object(&mut doc, path) else {
        return Err(format!(
            "test operation does not apply: is missing path: {path}: {MISSING}"
        ));
    };
    match container_get(con, &key).map_err(|e| format!("error in test for path: '{path}': {e}"))? {
        None => Ok(value.is_null()),
        Some(v) => Ok(&v == value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(doc: Value, ops: Value) -> Result<JsonPatchOutcome, String> {
        apply_json_patch(&doc, ops.as_array().unwrap())
    }

    #[test]
    fn json_patch_applies_with_evanphx_wording() {
        let doc = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"list": [1, 2]}});
        assert_eq!(
            patch(
                doc.clone(),
                json!([
                    {"op": "add", "path": "/metadata/labels/b", "value": "2"},
                    {"op": "add", "path": "/spec/list/-", "value": 3},
                    {"op": "remove", "path": "/spec/list/0"},
                    {"op": "replace", "path": "/spec/new", "value": true},
                    {"op": "copy", "from": "/metadata/labels/a", "path": "/spec/a"},
                    {"op": "move", "from": "/spec/a", "path": "/spec/b"}
                ])
            ),
            Ok(JsonPatchOutcome::Applied(json!({
                "metadata": {"labels": {"a": "1", "b": "2"}},
                "spec": {"list": [2, 3], "new": true, "b": "1"}
            })))
        );
        assert_eq!(
            patch(
                doc.clone(),
                json!([{"op": "add", "path": "/metadata/annotations/x", "value": "y"}])
            ),
            Err(r#"add operation does not apply: doc is missing path: "/metadata/annotations/x": missing value"#.into())
        );
        assert_eq!(
            patch(doc.clone(), json!([{"op": "remove", "path": "/spec/nope"}])),
            Err("error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value".into())
        );
        assert_eq!(
            patch(
                doc.clone(),
                json!([{"op": "add", "path": "/spec/list/5", "value": 0}])
            ),
            Err("error in add for path: '/spec/list/5': Unable to access invalid index: 5: invalid index referenced".into())
        );
        assert_eq!(
            patch(
                doc.clone(),
                json!([{"op": "test", "path": "/metadata/labels/a", "value": "2"}, {"op": "remove", "path": "/metadata"}])
            ),
            Ok(JsonPatchOutcome::TestFailed)
        );
        assert_eq!(
            patch(doc, json!([{"op": "frob", "path": "/a"}])),
            Err("Unexpected kind: frob".into())
        );
    }
}
