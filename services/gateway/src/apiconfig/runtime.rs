//! kube's `--runtime-config`: which group versions and resources are
//! served. kube's order is followed (`api/all`, `api/ga|beta|alpha`,
//! `api/legacy`, then group versions and resources, a resource's own entry
//! winning over its version's), over every version kube-apiserver 1.34
//! registers; the result is applied to the catalog at start: resources
//! switched off are removed, the catalog's optional (off-by-default beta)
//! resources switched on are inserted, if their feature gate is on.

use std::collections::BTreeMap;

use keelson_registry::{Catalog, CatalogSnapshot, ResourceInfo};

use super::gates::FeatureGates;
use super::{parse_map, registered, value_of, ApiConfigError};

/// The aggregate keys, in the order kube applies them.
const LEVELS: [&str; 5] = ["api/all", "api/ga", "api/beta", "api/alpha", "api/legacy"];

/// `ga`, `beta` or `alpha`, by the version's name (`v2beta1` is beta).
fn stability(version: &str) -> &'static str {
    if version.contains("alpha") {
        "alpha"
    } else if version.contains("beta") {
        "beta"
    } else {
        "ga"
    }
}

/// `group/version` as kube prints it (`v1` for the core group).
fn gv_name(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

type Gv = (String, String);
type Gvr = (String, String, String);

/// A parsed `--runtime-config`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    entries: BTreeMap<String, String>,
}

/// What the runtime config serves, resolved against one catalog.
#[derive(Debug, Default)]
struct Resolved {
    /// Each registered group version: on or off, and the key that decided.
    versions: BTreeMap<Gv, (bool, String)>,
    /// Resources with their own entry: on or off, and the key.
    resources: BTreeMap<Gvr, (bool, String)>,
}

impl Resolved {
    /// Whether `r` is served: its own entry, else its version's.
    fn serves(&self, r: &ResourceInfo) -> bool {
        let gvr = (r.group.clone(), r.version.clone(), r.plural.clone());
        match self.resources.get(&gvr) {
            Some((on, _)) => *on,
            None => self
                .versions
                .get(&(r.group.clone(), r.version.clone()))
                .is_some_and(|(on, _)| *on),
        }
    }
}

impl RuntimeConfig {
    /// Parse the flag's value (`api/all=false,batch/v1=true,...`).
    pub fn parse(s: &str) -> RuntimeConfig {
        RuntimeConfig {
            entries: parse_map(s),
        }
    }

    /// The state of every registered group version after the entries, in
    /// kube's order, with kube's errors.
    fn resolve(&self, catalog: &CatalogSnapshot) -> Result<Resolved, ApiConfigError> {
        let mut out = Resolved::default();
        for (g, v) in registered::all() {
            out.versions
                .insert((g.to_string(), v.to_string()), (false, String::new()));
        }
        for r in catalog.optional().iter().map(|o| &o.resource) {
            out.versions
                .entry((r.group.clone(), r.version.clone()))
                .or_insert((false, String::new()));
        }
        for g in catalog.groups() {
            for v in &g.versions {
                out.versions
                    .insert((g.name.clone(), v.clone()), (true, String::new()));
            }
        }
        let group_known = |g: &str| {
            registered::group(g)
                || catalog.group(g).is_some()
                || catalog.optional().iter().any(|o| o.resource.group == g)
        };
        for key in LEVELS {
            let Some(v) = self.entries.get(key) else {
                continue;
            };
            let enabled = value_of(key, v)?;
            let level = key.trim_start_matches("api/");
            for ((g, ver), state) in out.versions.iter_mut() {
                let applies = match level {
                    "all" => true,
                    "legacy" => g.is_empty(),
                    l => stability(ver) == l,
                };
                if applies {
                    *state = (enabled, key.to_string());
                }
            }
        }
        for (key, v) in &self.entries {
            if LEVELS.contains(&key.as_str()) {
                continue;
            }
            let tokens: Vec<&str> = key.split('/').collect();
            if tokens.len() < 2 || tokens.len() > 3 {
                continue;
            }
            // `api/v1` is the core group.
            let group = if tokens[0] == "api" { "" } else { tokens[0] };
            let version = tokens[1];
            if tokens[1..].iter().any(|t| t.is_empty()) {
                return Err(ApiConfigError::InvalidKey(key.clone()));
            }
            // kube ignores groups it does not register.
            if !group_known(group) {
                continue;
            }
            let gv = (group.to_string(), version.to_string());
            if !out.versions.contains_key(&gv) {
                return Err(ApiConfigError::UnregisteredVersion(gv_name(group, version)));
            }
            let enabled = value_of(key, v)?;
            match tokens.get(2) {
                None => {
                    out.versions.insert(gv, (enabled, key.clone()));
                }
                Some(resource) => {
                    let gvr = (gv.0, gv.1, resource.to_string());
                    out.resources.insert(gvr, (enabled, key.clone()));
                }
            }
        }
        Ok(out)
    }

    /// Check what the resolved config enables against what Keelson has:
    /// an alpha version kube would serve, or a resource of a known version
    /// the catalog lacks, is an error.
    fn check(resolved: &Resolved, catalog: &CatalogSnapshot) -> Result<(), ApiConfigError> {
        let mut alphas: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for ((g, v), (on, key)) in &resolved.versions {
            if *on && registered::unserved_alpha(g, v) {
                alphas.entry(key.as_str()).or_default().push(gv_name(g, v));
            }
        }
        if let Some((key, what)) = alphas.into_iter().next() {
            return Err(ApiConfigError::Unsupported {
                key: key.to_string(),
                what: what.join(", "),
            });
        }
        let known = |g: &str, v: &str, r: &str| {
            catalog.lookup(g, v, r).is_some() || catalog.optional().iter().any(|o| o.is(g, v, r))
        };
        let has_data = |g: &str, v: &str| {
            catalog.resources_in(g, v).next().is_some()
                || catalog
                    .optional()
                    .iter()
                    .any(|o| o.resource.group == g && o.resource.version == v)
        };
        for ((g, v, r), (on, key)) in &resolved.resources {
            if *on && has_data(g, v) && !known(g, v, r) {
                return Err(ApiConfigError::Unsupported {
                    key: key.clone(),
                    what: format!("{}/{r}", gv_name(g, v)),
                });
            }
            if *on && registered::unserved_alpha(g, v) {
                return Err(ApiConfigError::Unsupported {
                    key: key.clone(),
                    what: gv_name(g, v),
                });
            }
        }
        Ok(())
    }

    /// Apply the config to `catalog` (before anything reads it) with
    /// kube's default feature gates.
    pub fn apply(&self, catalog: &Catalog) -> Result<(), ApiConfigError> {
        self.apply_with(catalog, &FeatureGates::default())
    }

    /// Apply the config to `catalog` (before anything reads it): remove
    /// what it switches off, insert the optional resources it switches on
    /// whose feature gate (if any) is on in `gates`. An error names what
    /// cannot be served.
    pub fn apply_with(
        &self,
        catalog: &Catalog,
        gates: &FeatureGates,
    ) -> Result<(), ApiConfigError> {
        let snapshot = catalog.snapshot();
        let resolved = self.resolve(&snapshot)?;
        Self::check(&resolved, &snapshot)?;
        let catalog_err =
            |e: keelson_registry::CatalogError| ApiConfigError::Catalog(e.to_string());
        for r in snapshot.resources() {
            if r.custom.is_none() && !resolved.serves(r) {
                catalog
                    .remove(&r.group, &r.version, &r.plural)
                    .map_err(catalog_err)?;
            }
        }
        let enabled: Vec<ResourceInfo> = snapshot
            .optional()
            .iter()
            .filter(|o| resolved.serves(&o.resource))
            .filter(|o| o.feature_gate.as_deref().is_none_or(|g| gates.enabled(g)))
            .map(|o| o.resource.clone())
            .collect();
        if !enabled.is_empty() {
            catalog
                .insert(enabled, BTreeMap::new())
                .map_err(catalog_err)?;
        }
        Ok(())
    }
}
