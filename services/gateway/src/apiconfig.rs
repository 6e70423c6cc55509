//! kube-apiserver's `--runtime-config` (which API group versions and
//! resources are served) and `--feature-gates`, parsed with kube's syntax
//! and errors. The runtime config is applied to the gateway's catalog at
//! start (discovery, OpenAPI and serving all read it); the gates are one
//! process-wide set ([`FeatureGates::global`]).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use keelson_registry::Catalog;

/// Why `--runtime-config` or `--feature-gates` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiConfigError {
    /// A value that is not a Go `strconv.ParseBool` boolean (kube's text).
    #[error("invalid value of {key}: {value}, err: strconv.ParseBool: parsing {value:?}: invalid syntax")]
    InvalidValue {
        /// The key, e.g. `batch/v1`.
        key: String,
        /// The value given.
        value: String,
    },
    /// A key that is not `group/version[/resource]` (kube's text).
    #[error("invalid key {0}")]
    InvalidKey(String),
    /// A version of a known group that kube has never registered.
    #[error("group version {0} that has not been registered")]
    UnregisteredVersion(String),
    /// Versions enabled that Keelson's catalog has no data for.
    #[error("--runtime-config {key}=true: Keelson has no data for {what} (it serves the group versions kube-apiserver 1.34 enables by default); remove it or set it to false")]
    Unsupported {
        /// The key, e.g. `api/beta`.
        key: String,
        /// What is missing, e.g. `resource.k8s.io/v1beta1`.
        what: String,
    },
    /// The catalog could not be changed.
    #[error("--runtime-config: {0}")]
    Catalog(String),
}

/// Whether a Go `strconv.ParseBool` accepts `v`, and its value.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// `k=v,k2=v2` as kube's `ConfigurationMap` reads it (a key without `=`
/// has the empty value).
fn parse_map(s: &str) -> BTreeMap<String, String> {
    s.split(',')
        .map(str::trim)
        .filter(|kv| !kv.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (kv.to_string(), String::new()),
        })
        .collect()
}

/// kube's `getRuntimeConfigValue`: an empty value is `true`.
fn value_of(key: &str, v: &str) -> Result<bool, ApiConfigError> {
    if v.is_empty() {
        return Ok(true);
    }
    parse_bool(v).ok_or_else(|| ApiConfigError::InvalidValue {
        key: key.to_string(),
        value: v.to_string(),
    })
}

/// Whether `version` is a GA version (`v1`, `v2`), else beta or alpha.
fn stability(version: &str) -> &'static str {
    if version.contains("alpha") {
        "alpha"
    } else if version.contains("beta") {
        "beta"
    } else {
        "ga"
    }
}

/// A parsed `--runtime-config`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    entries: BTreeMap<String, String>,
}

/// One change the runtime config makes to the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// Stop serving every resource of a group version.
    DisableVersion(String, String),
    /// Stop serving one resource.
    DisableResource(String, String, String),
}

impl RuntimeConfig {
    /// Parse the flag's value (`api/all=false,batch/v1=true,...`).
    pub fn parse(s: &str) -> RuntimeConfig {
        RuntimeConfig {
            entries: parse_map(s),
        }
    }

    /// The changes to the built-in catalog `catalog` has, in kube's order:
    /// `api/all`, `api/ga|beta|alpha`, `api/legacy`, then group versions
    /// and resources. Versions enabled that the catalog lacks are an error.
    fn changes(
        &self,
        catalog: &keelson_registry::CatalogSnapshot,
    ) -> Result<Vec<Change>, ApiConfigError> {
        let served: Vec<(String, String)> = catalog
            .groups()
            .iter()
            .flat_map(|g| g.versions.iter().map(move |v| (g.name.clone(), v.clone())))
            .collect();
        // Which served group versions stay on.
        let mut on: BTreeMap<(String, String), bool> =
            served.iter().map(|gv| (gv.clone(), true)).collect();
        for key in ["api/all", "api/ga", "api/beta", "api/alpha", "api/legacy"] {
            let Some(v) = self.entries.get(key) else {
                continue;
            };
            let enabled = value_of(key, v)?;
            let level = key.trim_start_matches("api/");
            if enabled && matches!(level, "all" | "beta" | "alpha") {
                return Err(ApiConfigError::Unsupported {
                    key: key.to_string(),
                    what: if level == "all" {
                        "beta or alpha API versions".into()
                    } else {
                        format!("{level} API versions")
                    },
                });
            }
            for ((g, ver), state) in on.iter_mut() {
                let applies = match level {
                    "all" => true,
                    "legacy" => g.is_empty(),
                    l => stability(ver) == l,
                };
                if applies {
                    *state = enabled;
                }
            }
        }
        let mut resources = Vec::new();
        for (key, v) in &self.entries {
            if key.starts_with("api/")
                && matches!(
                    key.as_str(),
                    "api/all" | "api/ga" | "api/beta" | "api/alpha" | "api/legacy"
                )
            {
                continue;
            }
            let tokens: Vec<&str> = key.split('/').collect();
            if tokens.len() < 2 || tokens.len() > 3 {
                continue;
            }
            // `api/v1` is the core group.
            let group = if tokens[0] == "api" { "" } else { tokens[0] };
            let version = tokens[1];
            if version.is_empty() || tokens.iter().any(|t| t.is_empty() && *t != tokens[0]) {
                return Err(ApiConfigError::InvalidKey(key.clone()));
            }
            let enabled = value_of(key, v)?;
            let gv_name = if group.is_empty() {
                version.to_string()
            } else {
                format!("{group}/{version}")
            };
            // kube ignores groups it does not register.
            if catalog.group(group).is_none() {
                continue;
            }
            let gv = (group.to_string(), version.to_string());
            if !on.contains_key(&gv) {
                if enabled {
                    return Err(ApiConfigError::Unsupported {
                        key: key.clone(),
                        what: gv_name,
                    });
                }
                continue;
            }
            match tokens.get(2) {
                None => {
                    on.insert(gv, enabled);
                }
                Some(resource) => {
                    if catalog.lookup(group, version, resource).is_none() {
                        if enabled {
                            return Err(ApiConfigError::Unsupported {
                                key: key.clone(),
                                what: format!("{gv_name}/{resource}"),
                            });
                        }
                        continue;
                    }
                    if !enabled {
                        resources.push(Change::DisableResource(
                            group.to_string(),
                            version.to_string(),
                            resource.to_string(),
                        ));
                    }
                }
            }
        }
        let mut changes: Vec<Change> = on
            .into_iter()
            .filter(|(_, enabled)| !enabled)
            .map(|((g, v), _)| Change::DisableVersion(g, v))
            .collect();
        changes.extend(resources);
        Ok(changes)
    }

    /// Stop serving what the config disables in `catalog` (before anything
    /// reads it); an error names what cannot be served.
    pub fn apply(&self, catalog: &Catalog) -> Result<(), ApiConfigError> {
        let snapshot = catalog.snapshot();
        for change in self.changes(&snapshot)? {
            let remove = |g: &str, v: &str, r: &str| {
                catalog
                    .remove(g, v, r)
                    .map(|_| ())
                    .map_err(|e| ApiConfigError::Catalog(e.to_string()))
            };
            match change {
                Change::DisableVersion(g, v) => {
                    let plurals: Vec<String> = snapshot
                        .resources_in(&g, &v)
                        .map(|r| r.plural.clone())
                        .collect();
                    for p in plurals {
                        remove(&g, &v, &p)?;
                    }
                }
                Change::DisableResource(g, v, r) => remove(&g, &v, &r)?,
            }
        }
        Ok(())
    }
}

/// One feature gate Keelson knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// kube's name.
    pub name: &'static str,
    /// kube 1.34's default.
    pub default: bool,
    /// kube's stage: `ALPHA`, `BETA` or `GA`.
    pub stage: &'static str,
}

/// The gates Keelson accepts: those whose behaviour it has.
pub const KNOWN_GATES: &[Gate] = &[
    // `ignoreStoreReadErrorWithClusterBreakingPotential` in DeleteOptions.
    Gate {
        name: "AllowUnsafeMalformedObjectDeletion",
        default: false,
        stage: "BETA",
    },
    // Keelson serves CBOR whatever this gate says (see compatibility.md).
    Gate {
        name: "CBORServingAndStorage",
        default: false,
        stage: "ALPHA",
    },
];

/// A parsed `--feature-gates` over kube's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates {
    set: BTreeMap<&'static str, bool>,
}

impl FeatureGates {
    /// Parse `A=true,B=false` with kube's errors (`unrecognized feature
    /// gate: X`, `missing bool value for X`, `invalid value of X=Y, err:
    /// ...`).
    pub fn parse(s: &str) -> Result<FeatureGates, String> {
        let mut set = BTreeMap::new();
        for kv in s.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
            let (k, v) = match kv.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => return Err(format!("missing bool value for {kv}")),
            };
            let gate = KNOWN_GATES
                .iter()
                .find(|g| g.name == k)
                .ok_or_else(|| format!("unrecognized feature gate: {k}"))?;
            let b = parse_bool(v).ok_or_else(|| {
                format!("invalid value of {k}={v}, err: strconv.ParseBool: parsing {v:?}: invalid syntax")
            })?;
            set.insert(gate.name, b);
        }
        Ok(FeatureGates { set })
    }

    /// Whether `name` is on (its default unless set).
    pub fn enabled(&self, name: &str) -> bool {
        self.set.get(name).copied().unwrap_or_else(|| {
            KNOWN_GATES
                .iter()
                .find(|g| g.name == name)
                .is_some_and(|g| g.default)
        })
    }

    /// The process's gates (kube's defaults until [`FeatureGates::install`]).
    pub fn global() -> &'static FeatureGates {
        GATES.get_or_init(FeatureGates::default)
    }

    /// Make these the process's gates; only the first call counts.
    pub fn install(self) {
        let _ = GATES.set(self);
    }
}

static GATES: OnceLock<FeatureGates> = OnceLock::new();

/// `--runtime-config` and `--feature-gates`, shared by `keelson` and
/// `keelson-gateway`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ApiFlags {
    /// kube's `--runtime-config`: `api/all=false`, `api/ga=false`,
    /// `api/legacy=false`, `<group>/<version>=true|false`,
    /// `<group>/<version>/<resource>=false` (comma-separated).
    #[arg(
        long = "runtime-config",
        env = "KEELSON_RUNTIME_CONFIG",
        default_value = ""
    )]
    pub runtime_config: String,
    /// kube's `--feature-gates` (`A=true,B=false`); see `KNOWN_GATES`.
    #[arg(long = "feature-gates", env = "KEELSON_FEATURE_GATES", default_value = "", value_parser = parse_gates)]
    pub feature_gates: FeatureGates,
}

fn parse_gates(s: &str) -> Result<FeatureGates, String> {
    FeatureGates::parse(s)
}

impl ApiFlags {
    /// Install the gates and apply the runtime config to `catalog`.
    pub fn apply(&self, catalog: &Catalog) -> Result<(), ApiConfigError> {
        self.feature_gates.clone().install();
        RuntimeConfig::parse(&self.runtime_config).apply(catalog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(c: &Catalog, g: &str, v: &str, r: &str) -> bool {
        c.snapshot().lookup(g, v, r).is_some()
    }

    #[test]
    fn disabling_a_group_version_and_a_resource() {
        let c = Catalog::builtin();
        RuntimeConfig::parse("batch/v1=false,apps/v1/deployments=false")
            .apply(&c)
            .expect("applies");
        assert!(!served(&c, "batch", "v1", "jobs"));
        assert!(
            c.snapshot().group("batch").is_none(),
            "the group leaves discovery"
        );
        assert!(!served(&c, "apps", "v1", "deployments"));
        assert!(served(&c, "apps", "v1", "replicasets"));
        assert!(served(&c, "", "v1", "pods"));
    }

    #[test]
    fn api_all_false_then_one_version_back() {
        let c = Catalog::builtin();
        RuntimeConfig::parse("api/all=false,api/v1=true,autoscaling/v1")
            .apply(&c)
            .expect("applies");
        assert!(served(&c, "", "v1", "pods"));
        assert!(served(&c, "autoscaling", "v1", "horizontalpodautoscalers"));
        assert!(!served(&c, "autoscaling", "v2", "horizontalpodautoscalers"));
        assert!(!served(&c, "apps", "v1", "deployments"));
    }

    #[test]
    fn errors() {
        let c = Catalog::builtin();
        let e = RuntimeConfig::parse("batch/v1=maybe")
            .apply(&c)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value of batch/v1: maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax"
        );
        let e = RuntimeConfig::parse("resource.k8s.io/v1beta1=true")
            .apply(&c)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("no data for resource.k8s.io/v1beta1"),
            "{e}"
        );
        let e = RuntimeConfig::parse("api/beta=true").apply(&c).unwrap_err();
        assert!(e.to_string().contains("beta API versions"), "{e}");
        // Disabling what is not served, or naming unknown groups, is fine.
        RuntimeConfig::parse("resource.k8s.io/v1beta1=false,example.com/v1=true")
            .apply(&c)
            .expect("kube ignores unknown groups");
    }

    #[test]
    fn feature_gates() {
        let g = FeatureGates::parse("AllowUnsafeMalformedObjectDeletion=true").expect("parses");
        assert!(g.enabled("AllowUnsafeMalformedObjectDeletion"));
        assert!(!FeatureGates::default().enabled("AllowUnsafeMalformedObjectDeletion"));
        assert_eq!(
            FeatureGates::parse("Nope=true").unwrap_err(),
            "unrecognized feature gate: Nope"
        );
        assert_eq!(
            FeatureGates::parse("CBORServingAndStorage").unwrap_err(),
            "missing bool value for CBORServingAndStorage"
        );
        assert_eq!(
            FeatureGates::parse("CBORServingAndStorage=yes").unwrap_err(),
            "invalid value of CBORServingAndStorage=yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax"
        );
    }
}
