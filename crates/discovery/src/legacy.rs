//! Legacy (unaggregated) discovery documents.

use keelson_registry::{CatalogSnapshot, GroupInfo, ResourceInfo};
use serde_json::{json, Map, Value};

/// `/api`: `APIVersions` advertising `server_address` (`host:port`).
pub fn api_versions_with_address(c: &CatalogSnapshot, server_address: &str) -> Value {
    let versions = c.group("").map(|g| g.versions.clone()).unwrap_or_default();
    json!({
        "kind": "APIVersions",
        "versions": versions,
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ]
    })
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

fn group_body(g: &GroupInfo) -> Map<String, Value> {
    let versions: Vec<Value> = g
        .versions
        .iter()
        .map(|v| json!({"groupVersion": group_version(&g.name, v), "version": v}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    let mut m = Map::new();
    m.insert("name".into(), json!(g.name));
    m.insert("versions".into(), Value::Array(versions));
    m.insert("preferredVersion".into(), preferred);
    m
}

/// `/apis`: `APIGroupList` of every non-core group, in discovery order.
pub fn api_group_list(c: &CatalogSnapshot) -> Value {
    let groups: Vec<Value> = c
        .groups()
        .iter()
        .filter(|g| !g.name.is_empty())
        .map(|g| Value::Object(group_body(g)))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`: `APIGroup`, or `None` for an unknown (or the core) group.
pub fn api_group(c: &CatalogSnapshot, group: &str) -> Option<Value> {
    if group.is_empty() {
        return None;
    }
    let g = c.group(group)?;
    let mut m = Map::new();
    m.insert("kind".into(), json!("APIGroup"));
    m.insert("apiVersion".into(), json!("v1"));
    m.extend(group_body(g));
    Some(Value::Object(m))
}

/// `/api/v1` (group `""`) or `/apis/{group}/{version}`: `APIResourceList`
/// with one entry per resource and per subresource, sorted by name.
pub fn api_resource_list(c: &CatalogSnapshot, group: &str, version: &str) -> Option<Value> {
    if !c.group(group)?.versions.iter().any(|v| v == version) {
        return None;
    }
    let mut entries: Vec<(String, Value)> = Vec::new();
    for r in c.resources_in(group, version) {
        entries.push((r.plural.clone(), resource_entry(r)));
        for s in &r.subresources {
            let name = format!("{}/{}", r.plural, s.name);
            let mut m = Map::new();
            m.insert("name".into(), json!(name));
            m.insert("singularName".into(), json!(""));
            m.insert("namespaced".into(), json!(r.namespaced));
            if s.group != r.group || s.version != r.version {
                m.insert("group".into(), json!(s.group));
                m.insert("version".into(), json!(s.version));
            }
            m.insert("kind".into(), json!(s.kind));
            m.insert("verbs".into(), json!(s.verbs));
            entries.push((name, Value::Object(m)));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut m = Map::new();
    m.insert("kind".into(), json!("APIResourceList"));
    if !group.is_empty() {
        m.insert("apiVersion".into(), json!("v1"));
    }
    m.insert("groupVersion".into(), json!(group_version(group, version)));
    m.insert(
        "resources".into(),
        Value::Array(entries.into_iter().map(|(_, v)| v).collect()),
    );
    Some(Value::Object(m))
}

fn resource_entry(r: &ResourceInfo) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(r.plural));
    m.insert("singularName".into(), json!(r.singular));
    m.insert("namespaced".into(), json!(r.namespaced));
    m.insert("kind".into(), json!(r.kind));
    m.insert("verbs".into(), json!(r.verbs));
    if !r.short_names.is_empty() {
        m.insert("shortNames".into(), json!(r.short_names));
    }
    if !r.categories.is_empty() {
        m.insert("categories".into(), json!(r.categories));
    }
    if !r.storage_version_hash.is_empty() {
        m.insert("storageVersionHash".into(), json!(r.storage_version_hash));
    }
    Value::Object(m)
}
