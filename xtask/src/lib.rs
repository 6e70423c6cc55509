//! Catalog generator: upstream JSON schemas + the resource table →
//! `crates/registry/data/catalog.json`.
#![forbid(unsafe_code)]

mod normalize;
pub mod protobuf;
mod table;
pub mod validation;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use keelson_registry::{
    CatalogData, GroupInfo, OptionalResource, ResourceInfo, Schema, SubresourceInfo,
};
use sha2::{Digest, Sha256};

pub use normalize::normalize_definition;
pub use table::{ResourceTable, SubresourceSpec};

/// Kubernetes version of the upstream schemas.
pub const KUBERNETES_VERSION: &str = "v1.34.0";

/// Generator failures. Every one stops generation.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The definitions file is not the expected JSON.
    #[error("definitions: {0}")]
    Definitions(String),
    /// The resource table does not parse.
    #[error("resource table: {0}")]
    Table(#[from] serde_yaml::Error),
    /// The table names a kind no definition carries.
    #[error("resource table names {gvk} but no upstream definition has that x-kubernetes-group-version-kind")]
    NoDefinition {
        /// `group/version/Kind`.
        gvk: String,
    },
    /// More than one definition carries the same kind.
    #[error("{gvk} is carried by several definitions ({names}); set `definition:` in the table")]
    AmbiguousDefinition {
        /// `group/version/Kind`.
        gvk: String,
        /// The candidates.
        names: String,
    },
    /// A named definition (table `definition:` or `extraDefinitions`) does not exist.
    #[error("definition {0} named in the resource table does not exist upstream")]
    UnknownDefinition(String),
    /// A feature gate on a resource of a version served by default.
    #[error("resource {0} has a featureGate but its version is served by default")]
    GateOnDefault(String),
    /// A resource is listed twice.
    #[error("resource {0} is listed twice")]
    Duplicate(String),
    /// A `$ref` points nowhere.
    #[error("definition {from} references missing definition {to}")]
    DanglingRef {
        /// Referencing definition.
        from: String,
        /// Missing target.
        to: String,
    },
    /// Serialisation failed.
    #[error("serialise: {0}")]
    Json(#[from] serde_json::Error),
}

/// What one generation produced.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    /// Number of resources.
    pub resources: usize,
    /// Number of definitions kept.
    pub definitions: usize,
    /// Size of the written file.
    pub bytes: usize,
}

/// Read the inputs, generate, write `out`.
pub fn gen_catalog_files(
    definitions: &Path,
    resources: &Path,
    out: &Path,
) -> Result<Stats, GenError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|source| GenError::Io {
            path: p.to_path_buf(),
            source,
        })
    };
    let defs_json = read(definitions)?;
    let table_yaml = read(resources)?;
    let (bytes, data) = gen_catalog(&defs_json, &table_yaml)?;
    std::fs::write(out, &bytes).map_err(|source| GenError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(Stats {
        resources: data.resources.len(),
        definitions: data.definitions.len(),
        bytes: bytes.len(),
    })
}

/// Generate the catalog from the upstream definitions JSON and the table
/// YAML. Returns the minified file bytes (with a trailing newline) and the data.
pub fn gen_catalog(defs_json: &str, table_yaml: &str) -> Result<(Vec<u8>, CatalogData), GenError> {
    let upstream = parse_definitions(defs_json)?;
    let table: ResourceTable = serde_yaml::from_str(table_yaml)?;

    let gvk_index = index_by_gvk(&upstream);
    let mut roots: BTreeSet<String> = BTreeSet::new();
    for name in &table.extra_definitions {
        if !upstream.contains_key(name) {
            return Err(GenError::UnknownDefinition(name.clone()));
        }
        roots.insert(name.clone());
    }

    let mut groups = Vec::new();
    let mut resources = Vec::new();
    let mut optional = Vec::new();
    let mut seen = BTreeSet::new();
    for g in &table.groups {
        groups.push(GroupInfo {
            name: g.name.clone(),
            versions: g
                .versions
                .iter()
                .filter(|v| v.served_by_default)
                .map(|v| v.version.clone())
                .collect(),
        });
        for v in &g.versions {
            for r in &v.resources {
                let id = format!("{}/{}/{}", g.name, v.version, r.plural);
                if !seen.insert(id.clone()) {
                    return Err(GenError::Duplicate(id));
                }
                let definition =
                    match &r.definition {
                        Some(d) if upstream.contains_key(d) => d.clone(),
                        Some(d) => return Err(GenError::UnknownDefinition(d.clone())),
                        None => find_by_gvk(&gvk_index, &g.name, &v.version, &r.kind)?.ok_or_else(
                            || GenError::NoDefinition {
                                gvk: format!("{}/{}/{}", g.name, v.version, r.kind),
                            },
                        )?,
                    };
                roots.insert(definition.clone());
                let list_kind = format!("{}List", r.kind);
                if let Some(list) = find_by_gvk(&gvk_index, &g.name, &v.version, &list_kind)? {
                    roots.insert(list);
                } else if r.verbs().iter().any(|x| x == "list") {
                    return Err(GenError::NoDefinition {
                        gvk: format!("{}/{}/{}", g.name, v.version, list_kind),
                    });
                }
                let subresources: Vec<SubresourceInfo> = r
                    .subresources
                    .iter()
                    .map(|s| s.resolve(&g.name, &v.version, &r.kind))
                    .collect();
                for s in &subresources {
                    // Option kinds (PodExecOptions, ...) have no schema; that is fine.
                    if let Some(d) = find_by_gvk(&gvk_index, &s.group, &s.version, &s.kind)? {
                        roots.insert(d);
                    }
                }
                let storage = r
                    .storage
                    .clone()
                    .unwrap_or_else(|| format!("{}/{}", g.name, v.version));
                // Only storage-backed resources (all of which support watch)
                // carry a storageVersionHash; bindings, reviews and
                // componentstatuses do not.
                let stored = r.verbs().iter().any(|x| x == "watch");
                if r.feature_gate.is_some() && v.served_by_default {
                    return Err(GenError::GateOnDefault(id));
                }
                let info = ResourceInfo {
                    group: g.name.clone(),
                    version: v.version.clone(),
                    kind: r.kind.clone(),
                    list_kind,
                    plural: r.plural.clone(),
                    singular: r.singular.clone().unwrap_or_else(|| r.kind.to_lowercase()),
                    namespaced: r.namespaced,
                    verbs: r.verbs(),
                    short_names: r.short_names.clone(),
                    categories: r.categories.clone(),
                    subresources,
                    definition,
                    name_rule: r.name_rule,
                    storage_version_hash: if stored {
                        storage_version_hash(&format!("{storage}/{}", r.kind))
                    } else {
                        String::new()
                    },
                    strategy: Default::default(),
                    custom: None,
                };
                if v.served_by_default {
                    resources.push(info);
                } else {
                    optional.push(OptionalResource {
                        resource: info,
                        feature_gate: r.feature_gate.clone(),
                    });
                }
            }
        }
    }

    let kept = closure(&upstream, roots)?;
    let definitions: BTreeMap<String, Schema> = kept
        .into_iter()
        .filter_map(|n| upstream.get(&n).map(|s| (n, s.clone())))
        .collect();
    let data = CatalogData {
        kubernetes_version: KUBERNETES_VERSION.to_owned(),
        groups,
        resources,
        definitions,
        optional,
    };
    let mut bytes = serde_json::to_vec(&data)?;
    bytes.push(b'\n');
    Ok((bytes, data))
}

/// kube-apiserver's `storageVersionHash`: base64 of the first 8 bytes of
/// sha256("group/version/Kind").
pub fn storage_version_hash(gvk: &str) -> String {
    let digest = Sha256::digest(gvk.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

fn parse_definitions(json: &str) -> Result<BTreeMap<String, Schema>, GenError> {
    let root: serde_json::Value =
        serde_json::from_str(json).map_err(|e| GenError::Definitions(e.to_string()))?;
    let defs = root
        .get("$defs")
        .or_else(|| root.get("definitions"))
        .and_then(|d| d.as_object())
        .ok_or_else(|| GenError::Definitions("no top-level `$defs` object".into()))?;
    Ok(defs
        .iter()
        .map(|(name, node)| (name.clone(), normalize_definition(name, node)))
        .collect())
}

type GvkIndex = HashMap<(String, String, String), Vec<String>>;

fn index_by_gvk(defs: &BTreeMap<String, Schema>) -> GvkIndex {
    let mut idx: GvkIndex = HashMap::new();
    for (name, s) in defs {
        // Meta types (DeleteOptions, WatchEvent, ...) list dozens of GVKs;
        // only definitions owning a single GVK identify a served kind.
        if s.gvk.len() == 1 {
            let g = &s.gvk[0];
            idx.entry((g.group.clone(), g.version.clone(), g.kind.clone()))
                .or_default()
                .push(name.clone());
        }
    }
    idx
}

fn find_by_gvk(
    idx: &GvkIndex,
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Option<String>, GenError> {
    match idx.get(&(group.to_owned(), version.to_owned(), kind.to_owned())) {
        None => Ok(None),
        Some(names) if names.len() == 1 => Ok(Some(names[0].clone())),
        Some(names) => Err(GenError::AmbiguousDefinition {
            gvk: format!("{group}/{version}/{kind}"),
            names: names.join(", "),
        }),
    }
}

/// Every definition reachable from `roots` through `$ref`s.
fn closure(
    defs: &BTreeMap<String, Schema>,
    roots: BTreeSet<String>,
) -> Result<BTreeSet<String>, GenError> {
    let mut kept = BTreeSet::new();
    let mut stack: Vec<String> = roots.into_iter().collect();
    while let Some(name) = stack.pop() {
        if !kept.insert(name.clone()) {
            continue;
        }
        let Some(schema) = defs.get(&name) else {
            return Err(GenError::UnknownDefinition(name));
        };
        let mut refs = Vec::new();
        collect_refs(schema, &mut refs);
        for r in refs {
            if !defs.contains_key(&r) {
                return Err(GenError::DanglingRef { from: name, to: r });
            }
            if !kept.contains(&r) {
                stack.push(r);
            }
        }
    }
    Ok(kept)
}

fn collect_refs(s: &Schema, out: &mut Vec<String>) {
    if let Some(r) = &s.reference {
        out.push(r.clone());
    }
    for p in s.properties.values() {
        collect_refs(p, out);
    }
    if let Some(i) = &s.items {
        collect_refs(i, out);
    }
    if let Some(a) = &s.additional_properties {
        collect_refs(a, out);
    }
}

#[cfg(test)]
mod tests;
