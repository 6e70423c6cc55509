//! `metadata.managedFields`: decoding the entries into field sets per
//! manager, encoding them back in kube's order, and kube's cap on the
//! number of `Update` entries.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::set::Set;

/// kube's `DefaultMaxUpdateManagers`.
pub(crate) const MAX_UPDATE_MANAGERS: usize = 10;

/// kube's name for the entry the oldest updates are merged into.
const ANCIENT_CHANGES: &str = "ancient-changes";

/// The operation of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who an entry belongs to (kube's manager identifier): appliers are one
/// entry whatever version they apply at; updaters one per version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ManagerId {
    pub manager: String,
    pub operation: Operation,
    /// Empty for `Apply`.
    pub api_version: String,
    pub subresource: String,
}

impl ManagerId {
    /// The identity of `manager` doing `operation` at `api_version`.
    pub(crate) fn new(
        manager: &str,
        operation: Operation,
        api_version: &str,
        subresource: &str,
    ) -> ManagerId {
        ManagerId {
            manager: manager.to_string(),
            operation,
            api_version: match operation {
                Operation::Apply => String::new(),
                Operation::Update => api_version.to_string(),
            },
            subresource: subresource.to_string(),
        }
    }

    /// How kube names the manager in a conflict message.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {:?}", self.subresource);
        }
        if self.operation == Operation::Update {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }
}

/// One manager's fields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub set: Set,
    /// The version the fields were recorded at.
    pub api_version: String,
    /// `time`, as stored (RFC 3339, seconds).
    pub time: Option<String>,
}

/// Every manager's fields.
pub(crate) type Managed = BTreeMap<ManagerId, Entry>;

/// The object's managedFields, decoded. Absent or `null` is empty.
pub(crate) fn decode(obj: &Value) -> Result<Managed, String> {
    let mut out = Managed::new();
    let entries = match obj.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Array(a)) => a,
        Some(_) => return Err("managedFields is not a list".into()),
    };
    for e in entries {
        let m = e
            .as_object()
            .ok_or_else(|| "a managedFields entry is not an object".to_string())?;
        let text = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = match text("operation").as_str() {
            "Apply" => Operation::Apply,
            _ => Operation::Update,
        };
        let set = match m.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(f) => Set::from_fields_v1(f).map_err(|e| format!("error decoding set: {e}"))?,
        };
        let id = ManagerId::new(
            &text("manager"),
            operation,
            &text("apiVersion"),
            &text("subresource"),
        );
        let time = m.get("time").and_then(Value::as_str).map(str::to_string);
        out.insert(
            id,
            Entry {
                set,
                api_version: text("apiVersion"),
                time,
            },
        );
    }
    Ok(out)
}

/// The managedFields list in kube's order (`Apply` before `Update`, then
/// by time, manager, version, subresource); `None` when there is none.
pub(crate) fn encode(managed: &Managed) -> Option<Value> {
    if managed.is_empty() {
        return None;
    }
    let mut list: Vec<Value> = managed
        .iter()
        .map(|(id, e)| {
            let mut m = Map::new();
            if !id.manager.is_empty() {
                m.insert("manager".into(), Value::from(id.manager.clone()));
            }
            m.insert("operation".into(), Value::from(id.operation.as_str()));
            if !e.api_version.is_empty() {
                m.insert("apiVersion".into(), Value::from(e.api_version.clone()));
            }
            if let Some(t) = &e.time {
                m.insert("time".into(), Value::from(t.clone()));
            }
            m.insert("fieldsType".into(), Value::from("FieldsV1"));
            m.insert("fieldsV1".into(), e.set.to_fields_v1());
            if !id.subresource.is_empty() {
                m.insert("subresource".into(), Value::from(id.subresource.clone()));
            }
            Value::Object(m)
        })
        .collect();
    list.sort_by(keelson_apimachinery::managedfields::entry_order);
    Some(Value::Array(list))
}

fn seconds(t: Option<&str>) -> i64 {
    t.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map_or(0, |t| t.timestamp())
}

/// kube's `isResetManagedFields`: `[]` or `[{}]` asks for managedFields to
/// be cleared.
pub(crate) fn is_reset(obj: &Value) -> bool {
    match obj.pointer("/metadata/managedFields") {
        Some(Value::Array(a)) if a.is_empty() => true,
        Some(Value::Array(a)) if a.len() == 1 => a[0].as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// Merge the oldest `Update` entries, per version, into an
/// `ancient-changes` entry until at most `max` remain (kube's
/// `capManagersManager`).
pub(crate) fn cap_update_managers(managed: &mut Managed, max: usize) {
    let mut updaters: Vec<ManagerId> = managed
        .keys()
        .filter(|id| id.operation == Operation::Update)
        .cloned()
        .collect();
    if updaters.len() <= max {
        return;
    }
    updaters.sort_by(|a, b| {
        seconds(managed[a].time.as_deref())
            .cmp(&seconds(managed[b].time.as_deref()))
            .then_with(|| a.cmp(b))
    });
    let mut first_of_version: BTreeMap<String, ManagerId> = BTreeMap::new();
    let mut remaining = updaters.len();
    for id in updaters {
        if remaining <= max {
            break;
        }
        let Some(entry) = managed.get(&id).cloned() else {
            continue;
        };
        let version = entry.api_version.clone();
        let bucket = ManagerId::new(ANCIENT_CHANGES, Operation::Update, &version, "");
        match first_of_version.get(&version) {
            Some(first) => {
                if !managed.contains_key(&bucket) {
                    if let Some(f) = managed.remove(first) {
                        managed.insert(bucket.clone(), f);
                    }
                }
                if let Some(b) = managed.get_mut(&bucket) {
                    b.set = entry.set.union(&b.set);
                    b.time = entry.time.clone();
                }
                if id != bucket {
                    managed.remove(&id);
                }
                remaining -= 1;
            }
            None => {
                first_of_version.insert(version, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decode_encode_keeps_kube_order() {
        let obj = json!({"metadata": {"managedFields": [
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:b": {}}}},
            {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:01Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}},
            {"manager": "z", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-01T00:00:09Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:z": {}}}, "subresource": "status"}
        ]}});
        let m = decode(&obj).unwrap();
        let out = encode(&m).unwrap();
        let names: Vec<&str> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["z", "a", "b"]);
        assert_eq!(out[0]["subresource"], "status");
        assert_eq!(
            ManagerId::new("kubectl", Operation::Update, "apps/v1", "").describe(),
            r#""kubectl" using apps/v1"#
        );
        assert!(is_reset(&json!({"metadata": {"managedFields": []}})));
        assert!(is_reset(&json!({"metadata": {"managedFields": [{}]}})));
        assert!(!is_reset(&json!({"metadata": {}})));
    }

    #[test]
    fn cap_merges_the_oldest_updates() {
        let mut m = Managed::new();
        for i in 0..12 {
            let mut set = Set::new();
            set.insert(&[super::super::path::PathElement::field(&format!("f{i}"))]);
            m.insert(
                ManagerId::new(&format!("m{i:02}"), Operation::Update, "v1", ""),
                Entry {
                    set,
                    api_version: "v1".into(),
                    time: Some(format!("2024-01-01T00:00:{i:02}Z")),
                },
            );
        }
        cap_update_managers(&mut m, MAX_UPDATE_MANAGERS);
        assert_eq!(m.len(), 10);
        let bucket = &m[&ManagerId::new(ANCIENT_CHANGES, Operation::Update, "v1", "")];
        assert_eq!(bucket.set.paths().len(), 3);
        assert_eq!(bucket.time.as_deref(), Some("2024-01-01T00:00:02Z"));
    }
}
