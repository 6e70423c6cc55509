//! `/version`.

use serde_json::{json, Value};

/// The Kubernetes version Keelson reports.
pub const GIT_VERSION: &str = "v1.34.1";

/// The `/version` body of a 1.34 server (`version.Info`, field order as
/// kube-apiserver writes it).
pub fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "34",
        "emulationMajor": "1",
        "emulationMinor": "34",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "33",
        "gitVersion": GIT_VERSION,
        // Keelson is not built from the Kubernetes tree; this is a fixed,
        // well-formed placeholder, not an upstream commit.
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-09-09T19:44:50Z",
        "goVersion": "go1.24.6",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}
