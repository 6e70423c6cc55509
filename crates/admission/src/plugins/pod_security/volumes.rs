//! The volume checks: no hostPath (baseline), only the restricted
//! volume types (restricted).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::checks::{join_quote, join_quote_set, pluralize, Forbidden, PodView};

fn volumes<'a>(pod: &PodView<'a>) -> impl Iterator<Item = &'a Map<String, Value>> {
    pod.spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn has(v: &Map<String, Value>, source: &str) -> bool {
    v.get(source).is_some_and(|s| !s.is_null())
}

fn name(v: &Map<String, Value>) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("")
}

/// `hostPathVolumes`: no `hostPath` volume.
pub fn host_path_volumes_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let bad: Vec<&str> = volumes(pod)
        .filter(|v| has(v, "hostPath"))
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    Forbidden::new(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad)
        ),
    )
}

/// The volume sources restricted allows.
const ALLOWED: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The others, in the order kube names a volume's type by.
const NAMED: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

/// `restrictedVolumes`: only configMap, csi, downwardAPI, emptyDir,
/// ephemeral, image, persistentVolumeClaim, projected and secret.
pub fn restricted_volumes_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for v in volumes(pod) {
        if ALLOWED.iter().any(|s| has(v, s)) {
            continue;
        }
        bad.push(name(v));
        let t = NAMED
            .iter()
            .find(|s| has(v, s))
            .copied()
            .unwrap_or("unknown");
        types.insert(t.to_string());
    }
    if bad.is_empty() {
        return None;
    }
    Forbidden::new(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                types.len()
            ),
            join_quote_set(&types)
        ),
    )
}
