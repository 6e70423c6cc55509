//! kube-apiserver's `--runtime-config` (which API group versions and
//! resources are served: [`RuntimeConfig`]) and `--feature-gates`
//! ([`FeatureGates`]), parsed with kube's syntax and errors. The runtime
//! config is applied to the gateway's catalog at start (discovery, OpenAPI
//! and serving all read it); the gates are one process-wide set
//! ([`FeatureGates::global`]).

mod gates;
mod registered;
mod runtime;

use std::collections::BTreeMap;

use keelson_registry::Catalog;

pub use gates::{FeatureGates, Gate, KNOWN_GATES};
pub use runtime::RuntimeConfig;

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
    #[error("--runtime-config {key}=true: Keelson has no data for {what} (it serves kube-apiserver 1.34's GA and beta group versions, no alpha ones); remove it or set it to false (after api/all=true: add api/alpha=false)")]
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
pub(crate) fn parse_bool(v: &str) -> Option<bool> {
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

/// `--runtime-config` and `--feature-gates`, shared by `keelson` and
/// `keelson-gateway`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ApiFlags {
    /// kube's `--runtime-config`: `api/all`, `api/ga`, `api/beta`,
    /// `api/legacy`, `<group>/<version>`, `<group>/<version>/<resource>`,
    /// each `=true|false` (comma-separated).
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
        RuntimeConfig::parse(&self.runtime_config).apply_with(catalog, &self.feature_gates)
    }
}

#[cfg(test)]
mod tests;
