//! `metadata.managedFields` between a workload and its `scale` subresource
//! (kube's `k8s.io/apimachinery/pkg/util/managedfields` `ScaleHandler`):
//! the workload's entries that own its replicas field become entries of the
//! `autoscaling/v1 Scale` owning `.spec.replicas`, so a write of the scale
//! conflicts with (and takes the field from) the managers of the workload,
//! and the scale's entries are folded back into the workload's.
//!
//! Entries are handled as the JSON kube stores; a `fieldsV1` set is a tree
//! of `f:<name>` keys whose leaves are `{}` and whose inner members carry
//! `".": {}`.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// The Scale's group/version.
pub const SCALE_API_VERSION: &str = "autoscaling/v1";

/// The replicas field in a Scale.
const SCALE_REPLICAS: [&str; 2] = ["spec", "replicas"];

/// Where each `group/version` of the workload keeps its replicas (kube's
/// `ResourcePathMappings`); `None` for a version without a scale
/// subresource.
pub type ReplicasPaths = BTreeMap<String, Option<Vec<String>>>;

/// The path of a JSON pointer (`/spec/replicas` → `["spec", "replicas"]`).
pub fn pointer_path(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// Converts managedFields between a workload and its scale subresource.
#[derive(Debug, Clone)]
pub struct ScaleHandler {
    parent: Vec<Value>,
    api_version: String,
    paths: ReplicasPaths,
}

/// kube's manager identifier: manager, operation, subresource, and the
/// version for `Update` entries (an applier is one manager at any version).
fn identity(e: &Value) -> Id {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let op = s("operation");
    let version = if op == "Apply" {
        String::new()
    } else {
        s("apiVersion")
    };
    (s("manager"), op, version, s("subresource"))
}

fn entries_of(v: Option<&Value>) -> Vec<Value> {
    match v {
        Some(Value::Array(a)) => a.iter().filter(|e| e.is_object()).cloned().collect(),
        _ => Vec::new(),
    }
}

/// Whether the set holds `path` as a member.
fn has(fields: &Value, path: &[impl AsRef<str>]) -> bool {
    let mut cur = fields;
    for p in path {
        match cur.get(format!("f:{}", p.as_ref())) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    cur.as_object()
        .is_some_and(|m| m.is_empty() || m.contains_key("."))
}

/// The set less the member `path` (its children stay); objects left with
/// nothing in them were only on the way to it and go too.
fn without(fields: &Value, path: &[impl AsRef<str>]) -> Value {
    fn remove(m: &mut Map<String, Value>, path: &[&str]) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        let key = format!("f:{first}");
        let Some(Value::Object(child)) = m.get_mut(&key) else {
            return;
        };
        if rest.is_empty() {
            if child.is_empty() {
                m.remove(&key);
            } else {
                child.remove(".");
            }
        } else {
            remove(child, rest);
            if child.is_empty() {
                m.remove(&key);
            }
        }
    }
    let mut out = fields.clone();
    if let Value::Object(m) = &mut out {
        let path: Vec<&str> = path.iter().map(AsRef::as_ref).collect();
        remove(m, &path);
    }
    out
}

/// The one-member set `path`.
fn only(path: &[impl AsRef<str>]) -> Value {
    path.iter().rev().fold(
        json!({}),
        |inner, p| json!({ format!("f:{}", p.as_ref()): inner }),
    )
}

fn is_empty_set(fields: Option<&Value>) -> bool {
    fields.is_none_or(|f| f.as_object().is_none_or(Map::is_empty))
}

/// `e` with another set and version (and the time `time`, kube's times
/// follow the workload's entries).
fn with_set(e: &Value, fields: Value, api_version: &str, time: Option<&Value>) -> Value {
    let mut out = e.clone();
    if let Value::Object(m) = &mut out {
        m.insert("apiVersion".into(), Value::from(api_version));
        m.insert("fieldsType".into(), Value::from("FieldsV1"));
        m.insert("fieldsV1".into(), fields);
        match time {
            Some(t) => m.insert("time".into(), t.clone()),
            None => m.remove("time"),
        };
    }
    out
}

fn seconds(e: &Value) -> i64 {
    e.get("time")
        .and_then(Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map_or(0, |t| t.timestamp())
}

/// kube's order of managedFields entries: by operation (`Apply` first),
/// time, manager, version, subresource.
pub fn entry_order(a: &Value, b: &Value) -> Ordering {
    let s = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    s(a, "operation")
        .cmp(&s(b, "operation"))
        .then_with(|| seconds(a).cmp(&seconds(b)))
        .then_with(|| s(a, "manager").cmp(&s(b, "manager")))
        .then_with(|| s(a, "apiVersion").cmp(&s(b, "apiVersion")))
        .then_with(|| s(a, "subresource").cmp(&s(b, "subresource")))
}

/// A manager identity (see [`identity`]).
type Id = (String, String, String, String);

/// One entry per key (the last wins, as in kube's map of managers), in
/// kube's order. The key is the identity an entry had where it came from:
/// an `Update` entry of the Scale keeps its `autoscaling/v1` key after it
/// is rewritten at the workload's version, so it may sit beside the
/// workload's own entry of that manager, as in kube.
fn finish(entries: Vec<(Id, Value)>) -> Vec<Value> {
    let mut by_id: BTreeMap<Id, Value> = BTreeMap::new();
    for (id, e) in entries {
        by_id.insert(id, e);
    }
    let mut out: Vec<Value> = by_id.into_values().collect();
    out.sort_by(entry_order);
    out
}

impl ScaleHandler {
    /// A handler for the workload `parent` (its managedFields), written at
    /// `api_version`, keeping its replicas where `paths` says.
    pub fn new(parent: &Value, api_version: &str, paths: ReplicasPaths) -> ScaleHandler {
        ScaleHandler {
            parent: entries_of(parent.pointer("/metadata/managedFields")),
            api_version: api_version.to_string(),
            paths,
        }
    }

    fn path_of(&self, e: &Value) -> Option<&Option<Vec<String>>> {
        let v = e.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        self.paths.get(v)
    }

    /// The Scale's managedFields: each workload entry that owns the
    /// replicas, as an `autoscaling/v1` entry owning `.spec.replicas`
    /// (kube's `ToSubresource`).
    pub fn to_subresource(&self) -> Vec<Value> {
        let out = self
            .parent
            .iter()
            .filter(|e| {
                matches!(self.path_of(e), Some(Some(path))
                    if e.get("fieldsV1").is_some_and(|f| has(f, path)))
            })
            .map(|e| {
                let out = with_set(e, only(&SCALE_REPLICAS), SCALE_API_VERSION, e.get("time"));
                (identity(e), out)
            })
            .collect();
        finish(out)
    }

    /// The workload's managedFields after a write of the scale whose
    /// entries are `scale` (kube's `ToParent`): a workload manager that no
    /// longer owns the Scale's replicas loses the workload's; a scale
    /// manager that owns them owns the workload's at its version.
    pub fn to_parent(&self, scale: &[Value]) -> Vec<Value> {
        let mut scale_by_id: BTreeMap<_, &Value> = scale
            .iter()
            .filter(|e| e.is_object())
            .map(|e| (identity(e), e))
            .collect();
        let parent_time = |id: &Id| {
            self.parent
                .iter()
                .find(|p| identity(p) == *id)
                .and_then(|p| p.get("time"))
        };
        let mut out = Vec::new();
        for e in &self.parent {
            let Some(path) = self.path_of(e) else {
                // A version the workload is not served at: dropped.
                continue;
            };
            let fields = e.get("fieldsV1").cloned().unwrap_or_else(|| json!({}));
            match path {
                Some(path) if has(&fields, path) => {
                    if scale_by_id.remove(&identity(e)).is_some() {
                        out.push((identity(e), e.clone()));
                    } else {
                        let rest = without(&fields, path);
                        if !is_empty_set(Some(&rest)) {
                            let v = e.get("apiVersion").and_then(Value::as_str).unwrap_or("");
                            out.push((identity(e), with_set(e, rest, v, e.get("time"))));
                        }
                    }
                }
                _ => out.push((identity(e), e.clone())),
            }
        }
        let own_path = self.paths.get(&self.api_version).cloned().flatten();
        for (id, e) in scale_by_id {
            let owns = e.get("fieldsV1").is_some_and(|f| has(f, &SCALE_REPLICAS));
            if !owns {
                continue;
            }
            let fields = own_path.as_deref().map_or_else(|| json!({}), only);
            let time = parent_time(&id);
            out.push((id, with_set(e, fields, &self.api_version, time)));
        }
        finish(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler(parent: Value) -> ScaleHandler {
        let paths = ReplicasPaths::from([(
            "apps/v1".to_string(),
            Some(vec!["spec".to_string(), "replicas".to_string()]),
        )]);
        ScaleHandler::new(
            &json!({"metadata": {"managedFields": parent}}),
            "apps/v1",
            paths,
        )
    }

    #[test]
    fn sets() {
        let f = json!({"f:spec": {"f:replicas": {}, "f:template": {".": {}, "f:x": {}}}});
        assert!(has(&f, &["spec", "replicas"]));
        assert!(has(&f, &["spec", "template"]));
        assert!(!has(&f, &["spec"]));
        assert_eq!(
            without(&f, &["spec", "replicas"]),
            json!({"f:spec": {"f:template": {".": {}, "f:x": {}}}})
        );
        assert_eq!(
            without(
                &json!({"f:spec": {"f:replicas": {}}}),
                &["spec", "replicas"]
            ),
            json!({})
        );
    }

    #[test]
    fn to_subresource_keeps_replicas_owners() {
        let h = handler(json!([
            {"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {}}}},
            {"manager": "other", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:paused": {}}}}
        ]));
        let s = h.to_subresource();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0]["manager"], "kubectl");
        assert_eq!(s[0]["apiVersion"], "autoscaling/v1");
        assert_eq!(s[0]["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
        assert_eq!(s[0]["time"], "2026-01-01T00:00:00Z");
    }

    #[test]
    fn to_parent_steals_and_adds() {
        let h = handler(json!([
            {"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {}}}}
        ]));
        let scale = vec![
            json!({"manager": "hpa", "operation": "Apply", "apiVersion": "autoscaling/v1",
            "subresource": "scale", "time": "2026-01-02T00:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}),
        ];
        let p = h.to_parent(&scale);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0]["manager"], "hpa");
        assert_eq!(p[0]["apiVersion"], "apps/v1");
        assert_eq!(p[0]["subresource"], "scale");
        assert!(
            p[0].get("time").is_none(),
            "kube takes times from the workload's entries"
        );
        assert_eq!(p[1]["fieldsV1"], json!({"f:spec": {"f:template": {}}}));
    }

    /// A same-value write of the Scale leaves an updater's replicas on its
    /// `autoscaling/v1` key: the workload's entry loses them and a second
    /// entry of that manager owns them, and the other fields stay owned.
    #[test]
    fn to_parent_keeps_an_updaters_other_fields() {
        let h = handler(json!([
            {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {}}}}
        ]));
        let p = h.to_parent(&h.to_subresource());
        assert_eq!(p.len(), 2, "{p:?}");
        let sets: Vec<&Value> = p.iter().map(|e| &e["fieldsV1"]).collect();
        assert!(
            sets.contains(&&json!({"f:spec": {"f:template": {}}})),
            "{p:?}"
        );
        assert!(
            sets.contains(&&json!({"f:spec": {"f:replicas": {}}})),
            "{p:?}"
        );
        assert!(p.iter().all(|e| e["apiVersion"] == "apps/v1"), "{p:?}");
    }

    #[test]
    fn to_parent_keeps_an_owner_that_still_owns() {
        let parent = json!([
            {"manager": "a", "operation": "Apply", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
        ]);
        let h = handler(parent.clone());
        let scale = h.to_subresource();
        assert_eq!(
            h.to_parent(&scale),
            parent.as_array().cloned().unwrap_or_default()
        );
    }
}
