//! kube-apiserver's `--admission-control-config-file`: an
//! `AdmissionConfiguration` (`apiserver.config.k8s.io/v1`, or
//! `apiserver.k8s.io/v1alpha1`) whose `plugins` give each admission
//! plugin its configuration, inline (`configuration`) or in a file
//! (`path`, relative to the configuration file's directory).
//!
//! Only the plugins that run read theirs, as in kube. PodSecurity,
//! ResourceQuota and the two webhook plugins (`kubeConfigFile`) are
//! configured; a configuration for another plugin is
//! ignored with a warning. Anything kube refuses at start is an
//! [`AdmissionConfigError`] with kube's message.

mod decode;
mod pod_security;
mod resource_quota;
mod webhook;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::PluginConfig;
use decode::Scheme;

/// Why kube-apiserver would not start with this configuration (the
/// message is kube's, after its `Error: `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AdmissionConfigError(String);

/// kube's wrapping of an admission set-up error.
fn apply(msg: String) -> AdmissionConfigError {
    AdmissionConfigError(format!("failed to apply admission: {msg}"))
}

const SCHEME: Scheme = Scheme {
    name: "k8s.io/apiserver/pkg/server/options/admission.go",
    kinds: &[
        ("apiserver.config.k8s.io/v1", "AdmissionConfiguration"),
        ("apiserver.k8s.io/v1alpha1", "AdmissionConfiguration"),
    ],
};

#[derive(Deserialize, Default)]
#[serde(default)]
struct File {
    plugins: Option<Vec<Entry>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Entry {
    name: String,
    path: String,
    configuration: Option<Value>,
}

/// Read the configuration file at `path` into `config` (whose enabled
/// plugins are already chosen); `Ok` holds the warnings to log (plugin
/// configurations Keelson does not implement).
pub fn read_admission_config(
    path: &Path,
    config: &mut PluginConfig,
) -> Result<Vec<String>, AdmissionConfigError> {
    let read_err = |msg: String| apply(format!("failed to read plugin config: {msg}"));
    let data = std::fs::read(path).map_err(|e| {
        read_err(format!(
            "unable to read admission control configuration from {:?} [{}]",
            path.display().to_string(),
            go_open_error(path, &e)
        ))
    })?;
    let entries = match decode::typed(&data, &SCHEME) {
        Ok((doc, _)) => decode::fields::<File>(doc)
            .map_err(read_err)?
            .plugins
            .unwrap_or_default(),
        Err(e) if decode::is_type_error(&e) && is_legacy(&data) => {
            // kube's opaque legacy files configure ImagePolicyWebhook and
            // PodNodeSelector, which Keelson does not run.
            return Ok(["ImagePolicyWebhook", "PodNodeSelector"]
                .into_iter()
                .filter(|p| config.enabled(p))
                .map(not_implemented)
                .collect());
        }
        Err(e) => return Err(read_err(e)),
    };
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut warnings = Vec::new();
    for plugin in config.enabled_plugins() {
        let Some(entry) = entries.iter().find(|e| e.name == plugin) else {
            continue;
        };
        let Some(data) = plugin_data(entry, &base)? else {
            continue;
        };
        let init = |e: String| apply(format!("couldn't init admission plugin {plugin:?}: {e}"));
        match plugin {
            "PodSecurity" => {
                let ps = pod_security::load(&data).map_err(init)?;
                ps.validate().map_err(|e| {
                    apply(format!(
                        "failed to initialize admission plugin {plugin:?}: {e}"
                    ))
                })?;
                config.pod_security = ps;
            }
            "ResourceQuota" => {
                config.resource_quota = resource_quota::load(&data).map_err(init)?;
            }
            "MutatingAdmissionWebhook" => {
                config.webhook_auth.mutating = Some(webhook::load(&data).map_err(init)?);
            }
            "ValidatingAdmissionWebhook" => {
                config.webhook_auth.validating = Some(webhook::load(&data).map_err(init)?);
            }
            other => warnings.push(not_implemented(other)),
        }
    }
    Ok(warnings)
}

fn not_implemented(plugin: &str) -> String {
    format!(
        "admission plugin {plugin}: its configuration in --admission-control-config-file is not implemented by Keelson; ignored"
    )
}

/// kube's `GetAdmissionPluginConfigurationFor`: the inline configuration,
/// else the file at `path`, else none.
fn plugin_data(entry: &Entry, base: &Path) -> Result<Option<Vec<u8>>, AdmissionConfigError> {
    if let Some(c) = entry.configuration.as_ref().filter(|c| !c.is_null()) {
        return serde_json::to_vec(c)
            .map(Some)
            .map_err(|e| apply(e.to_string()));
    }
    if entry.path.is_empty() {
        return Ok(None);
    }
    let mut path = PathBuf::from(&entry.path);
    if path.is_relative() {
        let dir = if base.as_os_str().is_empty() {
            std::env::current_dir().unwrap_or_default()
        } else {
            base.to_path_buf()
        };
        path = dir.join(path);
    }
    std::fs::read(&path).map(Some).map_err(|e| {
        // kube stops with klog.Fatalf and Go's %#v of the error.
        AdmissionConfigError(format!(
            "Couldn't open admission plugin configuration {}: &fs.PathError{{Op:\"open\", Path:{:?}, Err:0x{:x}}}",
            path.display(),
            path.display().to_string(),
            e.raw_os_error().unwrap_or(0)
        ))
    })
}

/// Whether the file is one of kube's legacy unversioned plugin files.
fn is_legacy(data: &[u8]) -> bool {
    decode::to_json(data).is_ok_and(|v| {
        v.get("imagePolicy").is_some() || v.get("podNodeSelectorPluginConfig").is_some()
    })
}

/// Go's `os.ReadFile` error text.
fn go_open_error(path: &Path, e: &std::io::Error) -> String {
    let p = path.display();
    match e.raw_os_error() {
        Some(2) => format!("open {p}: no such file or directory"),
        Some(13) => format!("open {p}: permission denied"),
        Some(20) => format!("open {p}: not a directory"),
        Some(21) => format!("read {p}: is a directory"),
        _ => format!("open {p}: {e}"),
    }
}

#[cfg(test)]
mod tests;
