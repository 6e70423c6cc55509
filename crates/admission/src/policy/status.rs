//! A policy's `status` as kube's ValidatingAdmissionPolicy status
//! controller keeps it: once per generation, `observedGeneration` and the
//! `typeChecking` result (`typecheck.rs`'s expression warnings), applied
//! to the status by the field manager
//! `validatingadmissionpolicy-status-controller`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use keelson_api::{ObjectKey, StoreApi, UpdateOptions};
use keelson_apimachinery::GroupResource;
use keelson_registry::Catalog;
use serde_json::{json, Value};

/// kube's controller name, the manager of the status fields.
const MANAGER: &str = "validatingadmissionpolicy-status-controller";

/// Writes the status of policies whose generation is ahead of it.
pub(crate) struct StatusWriter {
    store: Arc<dyn StoreApi>,
    /// The live catalog: the schemas expressions are type-checked against.
    catalog: Catalog,
    /// (name, generation) already written or being written.
    done: Arc<Mutex<HashSet<(String, i64)>>>,
}

fn generation(obj: &Value, path: &[&str]) -> i64 {
    let mut v = obj;
    for p in path {
        match v.get(p) {
            Some(x) => v = x,
            None => return 0,
        }
    }
    v.as_i64().unwrap_or(0)
}

impl StatusWriter {
    pub(crate) fn new(store: Arc<dyn StoreApi>, catalog: Catalog) -> StatusWriter {
        StatusWriter {
            store,
            catalog,
            done: Arc::default(),
        }
    }

    /// Schedule the status write of `policy` if its generation is ahead.
    pub(crate) fn observe(&self, policy: &Value) {
        let gen = generation(policy, &["metadata", "generation"]);
        if gen <= generation(policy, &["status", "observedGeneration"]) {
            return;
        }
        let name = keelson_apimachinery::meta::meta_str(policy, "name").to_string();
        let Ok(mut done) = self.done.lock() else {
            return;
        };
        if !done.insert((name.clone(), gen)) {
            return;
        }
        let store = self.store.clone();
        let catalog = self.catalog.clone();
        let done = self.done.clone();
        tokio::spawn(async move {
            if !write(&store, &catalog, &name, gen).await {
                // Let a later event try again.
                if let Ok(mut d) = done.lock() {
                    d.remove(&(name, gen));
                }
            }
        });
    }
}

/// Read, set the status, write with the read revision; a few tries on
/// conflict. False when it did not get written.
async fn write(store: &Arc<dyn StoreApi>, catalog: &Catalog, name: &str, gen: i64) -> bool {
    let key = ObjectKey::new(
        GroupResource::new(super::GROUP, "validatingadmissionpolicies"),
        "",
        name,
    );
    for _ in 0..5 {
        let Ok(mut obj) = store.get(&key).await else {
            return true; // deleted: nothing to do
        };
        let current = generation(&obj, &["metadata", "generation"]);
        if current != gen || generation(&obj, &["status", "observedGeneration"]) >= gen {
            return true; // superseded, or already observed
        }
        let warnings = super::typecheck::warnings(&obj, &catalog.snapshot());
        set_status(&mut obj, warnings);
        match store.update(&key, obj, UpdateOptions::default()).await {
            Ok(_) => return true,
            Err(e) if e.code == 409 => continue,
            Err(e) => {
                tracing::debug!(policy = name, error = %e, "writing the policy status failed");
                return false;
            }
        }
    }
    false
}

/// The status kube's controller applies (`typeChecking` with the
/// `expressionWarnings`, if any), and its managed fields entry.
fn set_status(obj: &mut Value, warnings: Vec<Value>) {
    let gen = generation(obj, &["metadata", "generation"]);
    let Some(m) = obj.as_object_mut() else { return };
    let status = m.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    if let Some(s) = status.as_object_mut() {
        s.insert("observedGeneration".into(), gen.into());
        let tc = if warnings.is_empty() {
            json!({})
        } else {
            json!({ "expressionWarnings": warnings })
        };
        s.insert("typeChecking".into(), tc);
    }
    let typed = m
        .get("status")
        .and_then(|s| s.get("typeChecking"))
        .is_some_and(|t| t.get("expressionWarnings").is_some());
    let tc_fields = if typed {
        json!({"f:expressionWarnings": {}})
    } else {
        json!({})
    };
    let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let entry = json!({
        "manager": MANAGER,
        "operation": "Apply",
        "apiVersion": "admissionregistration.k8s.io/v1",
        "time": chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:observedGeneration": {}, "f:typeChecking": tc_fields}},
        "subresource": "status",
    });
    let fields = meta
        .entry("managedFields")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(list) = fields.as_array_mut() {
        list.retain(|e| {
            !(e.get("manager").and_then(Value::as_str) == Some(MANAGER)
                && e.get("subresource").and_then(Value::as_str) == Some("status"))
        });
        list.push(entry);
    }
}
