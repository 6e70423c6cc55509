//! The parsed catalog and its lookups.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::resource::{GroupInfo, ResourceInfo};
use crate::schema::Schema;

/// The generated catalog file, embedded at build time.
const CATALOG_JSON: &str = include_str!("../data/catalog.json");

/// Errors loading a catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The catalog JSON does not parse.
    #[error("catalog.json does not parse: {0}")]
    Parse(#[from] serde_json::Error),
    /// A resource names a definition the catalog does not contain.
    #[error("resource {resource} names missing definition {definition}")]
    MissingDefinition {
        /// `group/version/plural` of the resource.
        resource: String,
        /// The missing definition name.
        definition: String,
    },
}

/// The serialised form of the catalog (`catalog.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogData {
    /// Kubernetes version the schemas come from, e.g. `v1.34.0`.
    pub kubernetes_version: String,
    /// Groups in `/apis` discovery order (core first).
    pub groups: Vec<GroupInfo>,
    /// Served resources, in group order then table order.
    pub resources: Vec<ResourceInfo>,
    /// Schema definitions by name.
    pub definitions: BTreeMap<String, Schema>,
}

/// The resource and schema catalog with lookup indexes.
#[derive(Debug)]
pub struct Catalog {
    data: CatalogData,
    by_plural: HashMap<(String, String, String), usize>,
    by_kind: HashMap<(String, String, String), usize>,
}

static CATALOG: OnceLock<Result<Catalog, String>> = OnceLock::new();

/// The built-in catalog, parsed once.
///
/// # Panics
/// Only if the embedded, generated `catalog.json` is corrupt — a build
/// defect that this crate's tests catch; use [`try_catalog`] to handle it.
pub fn catalog() -> &'static Catalog {
    match try_catalog() {
        Ok(c) => c,
        // The file is generated and tested in this crate; failing here means
        // the binary was built from a broken checkout.
        Err(e) => panic!("embedded catalog is invalid: {e}"),
    }
}

/// The built-in catalog, or why it could not be loaded.
pub fn try_catalog() -> Result<&'static Catalog, &'static str> {
    CATALOG
        .get_or_init(|| Catalog::from_json(CATALOG_JSON).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(String::as_str)
}

impl Catalog {
    /// Parse a catalog from its JSON form and build the indexes.
    pub fn from_json(json: &str) -> Result<Self, CatalogError> {
        Self::from_data(serde_json::from_str(json)?)
    }

    /// Build the indexes over already-parsed data.
    pub fn from_data(data: CatalogData) -> Result<Self, CatalogError> {
        let mut by_plural = HashMap::with_capacity(data.resources.len());
        let mut by_kind = HashMap::with_capacity(data.resources.len());
        for (i, r) in data.resources.iter().enumerate() {
            if !data.definitions.contains_key(&r.definition) {
                return Err(CatalogError::MissingDefinition {
                    resource: format!("{}/{}/{}", r.group, r.version, r.plural),
                    definition: r.definition.clone(),
                });
            }
            by_plural.insert(key(&r.group, &r.version, &r.plural), i);
            by_kind.insert(key(&r.group, &r.version, &r.kind), i);
        }
        Ok(Catalog {
            data,
            by_plural,
            by_kind,
        })
    }

    /// The underlying data.
    pub fn data(&self) -> &CatalogData {
        &self.data
    }

    /// Every served resource.
    pub fn resources(&self) -> &[ResourceInfo] {
        &self.data.resources
    }

    /// The resources of one group version, in table order.
    pub fn resources_in<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'a ResourceInfo> + 'a {
        self.data
            .resources
            .iter()
            .filter(move |r| r.group == group && r.version == version)
    }

    /// Look a resource up by group, version and plural (`pods`).
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceInfo> {
        self.by_plural
            .get(&key(group, version, plural))
            .map(|&i| &self.data.resources[i])
    }

    /// Look a resource up by group, version and kind (`Pod`).
    pub fn lookup_kind(&self, group: &str, version: &str, kind: &str) -> Option<&ResourceInfo> {
        self.by_kind
            .get(&key(group, version, kind))
            .map(|&i| &self.data.resources[i])
    }

    /// Groups in discovery order, core (`""`) first.
    pub fn groups(&self) -> &[GroupInfo] {
        &self.data.groups
    }

    /// The group `name`, if served.
    pub fn group(&self, name: &str) -> Option<&GroupInfo> {
        self.data.groups.iter().find(|g| g.name == name)
    }

    /// The definition `name`, e.g. `io.k8s.api.core.v1.Pod`.
    pub fn definition(&self, name: &str) -> Option<&Schema> {
        self.data.definitions.get(name)
    }

    /// Every definition by name.
    pub fn definitions(&self) -> &BTreeMap<String, Schema> {
        &self.data.definitions
    }

    /// Follow `schema`'s reference (repeatedly) to the definition it names;
    /// a schema without a reference is returned as is.
    pub fn resolve<'a>(&'a self, schema: &'a Schema) -> &'a Schema {
        let mut s = schema;
        // Bounded: definitions never reference themselves directly, but a
        // corrupt file must not loop forever.
        for _ in 0..8 {
            match s.reference.as_deref().and_then(|r| self.definition(r)) {
                Some(d) => s = d,
                None => break,
            }
        }
        s
    }
}

fn key(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.to_owned(), b.to_owned(), c.to_owned())
}
