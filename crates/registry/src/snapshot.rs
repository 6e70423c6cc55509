//! One immutable generation of the catalog and its lookups.
//!
//! A snapshot never changes: a request, a discovery document or an OpenAPI
//! document is computed against one snapshot, and a change to the catalog
//! (see [`crate::Catalog`]) builds a new snapshot with the next generation.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use crate::builtin::{self, CATALOG_JSON};
use crate::optional::OptionalResource;
use crate::resource::{GroupInfo, ResourceInfo};
use crate::schema::Schema;

/// Errors loading a catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The catalog JSON does not parse.
    #[error("catalog.json does not parse: {0}")]
    Parse(#[from] serde_json::Error),
    /// A resource to insert has an empty version, kind or plural.
    #[error("resource {resource} lacks a version, kind or plural")]
    Incomplete {
        /// `group/version/plural` of the resource.
        resource: String,
    },
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
    /// Resources of the group versions kube-apiserver registers but serves
    /// only when `--runtime-config` enables them, in group order then
    /// version priority order (not served: see [`CatalogSnapshot::optional`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub optional: Vec<OptionalResource>,
}

/// One generation of the resource and schema catalog, with lookup indexes.
#[derive(Debug, Clone)]
pub struct CatalogSnapshot {
    generation: u64,
    data: CatalogData,
    by_plural: HashMap<(String, String, String), usize>,
    by_kind: HashMap<(String, String, String), usize>,
}

/// The generation of the built-in catalog.
pub const BUILTIN_GENERATION: u64 = 1;

static BUILTIN: OnceLock<Result<Arc<CatalogSnapshot>, String>> = OnceLock::new();

impl CatalogSnapshot {
    /// The built-in Kubernetes 1.34 catalog (generation
    /// [`BUILTIN_GENERATION`]), parsed once and shared: the cheap way for
    /// pure code and tests to read the built-in data.
    ///
    /// # Panics
    /// Only if the embedded, generated `catalog.json` is corrupt — a build
    /// defect that this crate's tests catch; use [`Self::try_builtin`] to
    /// handle it.
    pub fn builtin() -> &'static Arc<CatalogSnapshot> {
        match Self::try_builtin() {
            Ok(c) => c,
            // The file is generated and tested in this crate; failing here
            // means the binary was built from a broken checkout.
            Err(e) => panic!("embedded catalog is invalid: {e}"),
        }
    }

    /// The built-in catalog, or why it could not be loaded.
    pub fn try_builtin() -> Result<&'static Arc<CatalogSnapshot>, &'static str> {
        BUILTIN
            .get_or_init(|| {
                let mut data: CatalogData =
                    serde_json::from_str(CATALOG_JSON).map_err(|e| e.to_string())?;
                for i in 0..data.resources.len() {
                    let s = builtin::strategy(&data.resources[i], &data.definitions);
                    data.resources[i].strategy = s;
                }
                for i in 0..data.optional.len() {
                    let s = builtin::strategy(&data.optional[i].resource, &data.definitions);
                    data.optional[i].resource.strategy = s;
                }
                Self::from_data(data)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Parse a catalog from its JSON form and build the indexes (strategies
    /// as the file has them).
    pub fn from_json(json: &str) -> Result<Self, CatalogError> {
        Self::from_data(serde_json::from_str(json)?)
    }

    /// Build the indexes over already-parsed data.
    pub fn from_data(data: CatalogData) -> Result<Self, CatalogError> {
        let mut by_plural = HashMap::with_capacity(data.resources.len());
        let mut by_kind = HashMap::with_capacity(data.resources.len());
        for r in data.optional.iter().map(|o| &o.resource) {
            if !data.definitions.contains_key(&r.definition) {
                return Err(CatalogError::MissingDefinition {
                    resource: format!("{}/{}/{}", r.group, r.version, r.plural),
                    definition: r.definition.clone(),
                });
            }
        }
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
        Ok(CatalogSnapshot {
            generation: BUILTIN_GENERATION,
            data,
            by_plural,
            by_kind,
        })
    }

    /// This snapshot's generation: [`BUILTIN_GENERATION`] for the built-in
    /// catalog, one more for every change after it.
    pub fn generation(&self) -> u64 {
        self.generation
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

    /// The resources kube-apiserver registers but serves only when
    /// `--runtime-config` enables their group version (none of them is
    /// served by this snapshot).
    pub fn optional(&self) -> &[OptionalResource] {
        &self.data.optional
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

/// Copy-on-write changes: each builds the next generation and leaves `self`
/// as it was.
impl CatalogSnapshot {
    /// The next generation with `resources` added (a resource with the same
    /// group, version and plural is replaced) and `definitions` added or
    /// replaced. In a group of custom resources only, versions are in
    /// kube's priority order (`v1` before `v1beta1`, the first preferred),
    /// as kube's CRD discovery sorts them; a new version of a built-in group
    /// is served after the existing ones, so its preferred version does not
    /// change.
    pub fn inserted(
        &self,
        resources: Vec<ResourceInfo>,
        definitions: BTreeMap<String, Schema>,
    ) -> Result<CatalogSnapshot, CatalogError> {
        let mut data = self.data.clone();
        data.definitions.extend(definitions);
        for r in resources {
            if r.version.is_empty() || r.kind.is_empty() || r.plural.is_empty() {
                return Err(CatalogError::Incomplete {
                    resource: format!("{}/{}/{}", r.group, r.version, r.plural),
                });
            }
            match data.groups.iter_mut().find(|g| g.name == r.group) {
                Some(g) if !g.versions.contains(&r.version) => g.versions.push(r.version.clone()),
                Some(_) => {}
                None => data.groups.push(GroupInfo {
                    name: r.group.clone(),
                    versions: vec![r.version.clone()],
                }),
            }
            let same = |x: &ResourceInfo| {
                x.group == r.group && x.version == r.version && x.plural == r.plural
            };
            let group = r.group.clone();
            match data.resources.iter_mut().find(|x| same(x)) {
                Some(slot) => *slot = r,
                None => data.resources.push(r),
            }
            let all_custom = data
                .resources
                .iter()
                .filter(|x| x.group == group)
                .all(|x| x.custom.is_some());
            if let Some(g) = data.groups.iter_mut().find(|g| g.name == group) {
                if all_custom {
                    g.versions
                        .sort_by(|a, b| keelson_apimachinery::version::compare_kube_aware(a, b));
                }
            }
        }
        self.next(data)
    }

    /// The next generation without the resource `group`/`version`/`plural`;
    /// a group version left with no resources is no longer served.
    /// Definitions stay (other resources may reference them).
    pub fn removed(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<CatalogSnapshot, CatalogError> {
        let mut data = self.data.clone();
        data.resources
            .retain(|r| !(r.group == group && r.version == version && r.plural == plural));
        let still_served = |g: &str, v: &str| {
            data.resources
                .iter()
                .any(|r| r.group == g && r.version == v)
        };
        let mut groups = std::mem::take(&mut data.groups);
        for g in &mut groups {
            if g.name == group && !still_served(group, version) {
                g.versions.retain(|v| v != version);
            }
        }
        groups.retain(|g| !g.versions.is_empty());
        data.groups = groups;
        self.next(data)
    }

    fn next(&self, data: CatalogData) -> Result<CatalogSnapshot, CatalogError> {
        let mut next = Self::from_data(data)?;
        next.generation = self.generation + 1;
        Ok(next)
    }
}
