//! Aggregated discovery (`APIGroupDiscoveryList`).

use keelson_registry::{CatalogSnapshot, ResourceInfo};
use serde_json::{json, Map, Value};

/// Which `apidiscovery.k8s.io` version to emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggVersion {
    /// `apidiscovery.k8s.io/v2`.
    V2,
    /// `apidiscovery.k8s.io/v2beta1` (same shape; kube 1.34 no longer
    /// serves it, see the gateway's discovery handler).
    V2Beta1,
}

impl AggVersion {
    /// The `apiVersion` string.
    pub fn api_version(self) -> &'static str {
        match self {
            AggVersion::V2 => "apidiscovery.k8s.io/v2",
            AggVersion::V2Beta1 => "apidiscovery.k8s.io/v2beta1",
        }
    }
}

/// `/api` (`legacy_core = true`: one item named `""`) or `/apis` (every
/// other group, in discovery order) as an `APIGroupDiscoveryList`.
pub fn aggregated(c: &CatalogSnapshot, legacy_core: bool, version: AggVersion) -> Value {
    let items: Vec<Value> = c
        .groups()
        .iter()
        .filter(|g| g.name.is_empty() == legacy_core)
        .map(|g| {
            let versions: Vec<Value> = g
                .versions
                .iter()
                .map(|v| {
                    let mut rs: Vec<&ResourceInfo> = c.resources_in(&g.name, v).collect();
                    rs.sort_by(|a, b| a.plural.cmp(&b.plural));
                    let resources: Vec<Value> = rs.into_iter().map(resource).collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({
                "metadata": {"name": g.name, "creationTimestamp": null},
                "versions": versions
            })
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": version.api_version(),
        "metadata": {},
        "items": items
    })
}

fn resource(r: &ResourceInfo) -> Value {
    let mut m = Map::new();
    m.insert("resource".into(), json!(r.plural));
    m.insert(
        "responseKind".into(),
        json!({"group": r.group, "version": r.version, "kind": r.kind}),
    );
    let scope = if r.namespaced {
        "Namespaced"
    } else {
        "Cluster"
    };
    m.insert("scope".into(), json!(scope));
    m.insert("singularResource".into(), json!(r.singular));
    m.insert("verbs".into(), json!(r.verbs));
    if !r.short_names.is_empty() {
        m.insert("shortNames".into(), json!(r.short_names));
    }
    if !r.categories.is_empty() {
        m.insert("categories".into(), json!(r.categories));
    }
    if !r.subresources.is_empty() {
        let subs: Vec<Value> = r
            .subresources
            .iter()
            .map(|s| {
                json!({
                    "subresource": s.name,
                    "responseKind": {"group": s.group, "version": s.version, "kind": s.kind},
                    "verbs": s.verbs
                })
            })
            .collect();
        m.insert("subresources".into(), Value::Array(subs));
    }
    Value::Object(m)
}
