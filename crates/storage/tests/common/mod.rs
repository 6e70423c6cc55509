#![allow(dead_code)]

use std::path::Path;

use keelson_apimachinery::{GroupResource, ObjectKey};
use keelson_storage::{LocalStore, StoreConfig};
use serde_json::Value;

pub fn config() -> StoreConfig {
    StoreConfig {
        compaction_interval: None,
        ..StoreConfig::default()
    }
}

pub async fn open(dir: &Path) -> LocalStore {
    LocalStore::open(dir, config()).await.expect("open store")
}

pub fn cms() -> GroupResource {
    GroupResource::new("", "configmaps")
}

pub fn cm_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new(cms(), ns, name)
}

pub fn cm(name: &str, data: &str) -> Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"k": data},
    })
}

pub fn meta<'a>(obj: &'a Value, field: &str) -> &'a Value {
    &obj["metadata"][field]
}

pub fn rv(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion is a string")
        .parse()
        .expect("resourceVersion is a number")
}
