//! Pod and pod-template defaults (`SetDefaults_Pod`, `SetDefaults_PodSpec`,
//! `SetDefaults_Container`, probes, volumes, env field refs).

use serde_json::{Map, Value};

use super::{each, object_at, or_set, or_set_str};

/// A Pod: pod spec defaults plus `enableServiceLinks`.
pub(super) fn pod(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        pod_spec(spec, true);
        or_set(spec, "enableServiceLinks", true);
    }
}

/// A pod template at `path` (e.g. `["spec", "template"]`); `restart_always`
/// is false for Jobs, whose restartPolicy has no default.
pub(super) fn template_at(obj: &mut Value, path: &[&str], restart_always: bool) {
    let mut full: Vec<&str> = path.to_vec();
    full.push("spec");
    if let Some(spec) = object_at(obj, &full) {
        pod_spec(spec, restart_always);
    }
}

fn pod_spec(spec: &mut Map<String, Value>, restart_always: bool) {
    or_set_str(spec, "dnsPolicy", "ClusterFirst");
    if restart_always {
        or_set_str(spec, "restartPolicy", "Always");
    }
    or_set(spec, "terminationGracePeriodSeconds", 30);
    or_set(spec, "securityContext", Map::new());
    or_set_str(spec, "schedulerName", "default-scheduler");
    for c in each(spec, "initContainers") {
        container(c);
    }
    for c in each(spec, "containers") {
        container(c);
    }
    for v in each(spec, "volumes") {
        volume(v);
    }
}

fn container(c: &mut Map<String, Value>) {
    or_set_str(c, "terminationMessagePath", "/dev/termination-log");
    or_set_str(c, "terminationMessagePolicy", "File");
    if c.get("imagePullPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        let image = c.get("image").and_then(Value::as_str).unwrap_or("");
        let policy = pull_policy(image);
        c.insert("imagePullPolicy".into(), policy.into());
    }
    // A non-pointer struct: Go always serializes it.
    or_set(c, "resources", Map::new());
    for p in each(c, "ports") {
        or_set_str(p, "protocol", "TCP");
    }
    for e in each(c, "env") {
        if let Some(field_ref) = e
            .get_mut("valueFrom")
            .and_then(|v| v.get_mut("fieldRef"))
            .and_then(Value::as_object_mut)
        {
            or_set_str(field_ref, "apiVersion", "v1");
        }
    }
    for name in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(name).and_then(Value::as_object_mut) {
            probe(p);
        }
    }
    if let Some(lc) = c.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for hook in ["postStart", "preStop"] {
            if let Some(h) = lc.get_mut(hook).and_then(Value::as_object_mut) {
                http_get(h);
            }
        }
    }
}

/// `SetDefaults_Probe`: zero means unset.
fn probe(p: &mut Map<String, Value>) {
    for (key, default) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        let slot = p.entry(key).or_insert(Value::Null);
        if slot.is_null() || slot.as_i64() == Some(0) {
            *slot = default.into();
        }
    }
    http_get(p);
}

/// `SetDefaults_HTTPGetAction`.
fn http_get(handler: &mut Map<String, Value>) {
    if let Some(h) = handler.get_mut("httpGet").and_then(Value::as_object_mut) {
        or_set_str(h, "path", "/");
        or_set_str(h, "scheme", "HTTP");
    }
}

/// `SetDefaults_Volume`, the per-source `defaultMode` (0644 = 420), the
/// sources shared with persistent volumes and an ephemeral volume's claim
/// template.
fn volume(v: &mut Map<String, Value>) {
    if v.iter().all(|(k, val)| k == "name" || val.is_null()) {
        v.insert("emptyDir".into(), Value::Object(Map::new()));
    }
    for source in ["configMap", "secret", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
            or_set(s, "defaultMode", 420);
        }
    }
    persistent_volume_source(v);
    if let Some(spec) = object_at_map(v, &["ephemeral", "volumeClaimTemplate", "spec"]) {
        super::core::claim_spec(spec);
    }
}

/// The volume source defaults a pod volume and a PersistentVolume share
/// (`SetDefaults_HostPathVolumeSource` and the `+default` tags of the RBD,
/// iSCSI, Azure Disk and ScaleIO sources); `v` holds the source fields.
pub(super) fn persistent_volume_source(v: &mut Map<String, Value>) {
    if let Some(h) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        or_set(h, "type", "");
    }
    if let Some(rbd) = v.get_mut("rbd").and_then(Value::as_object_mut) {
        or_set_str(rbd, "pool", "rbd");
        or_set_str(rbd, "user", "admin");
        or_set_str(rbd, "keyring", "/etc/ceph/keyring");
    }
    if let Some(iscsi) = v.get_mut("iscsi").and_then(Value::as_object_mut) {
        or_set_str(iscsi, "iscsiInterface", "default");
    }
    if let Some(disk) = v.get_mut("azureDisk").and_then(Value::as_object_mut) {
        or_set(disk, "cachingMode", "ReadWrite");
        or_set(disk, "fsType", "ext4");
        or_set(disk, "readOnly", false);
        or_set(disk, "kind", "Shared");
    }
    if let Some(scale_io) = v.get_mut("scaleIO").and_then(Value::as_object_mut) {
        or_set_str(scale_io, "storageMode", "ThinProvisioned");
        or_set_str(scale_io, "fsType", "xfs");
    }
}

/// The object at `path` below the map `m`, if every step is an object.
fn object_at_map<'a>(
    m: &'a mut Map<String, Value>,
    path: &[&str],
) -> Option<&'a mut Map<String, Value>> {
    let (first, rest) = path.split_first()?;
    object_at(m.get_mut(*first)?, rest)
}

/// `Always` for `:latest` or an untagged, undigested image; otherwise (and
/// for references kube cannot parse) `IfNotPresent`.
pub(crate) fn pull_policy(image: &str) -> &'static str {
    if image.is_empty() || image.chars().any(char::is_whitespace) {
        return "IfNotPresent";
    }
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let (path, tag) = match name.rsplit_once(':') {
        Some((p, t)) if !t.contains('/') => (p, Some(t)),
        _ => (name, None),
    };
    // The repository path must be lowercase (the registry host may not be).
    let repo = match path.split_once('/') {
        Some((host, rest)) if host.contains(['.', ':']) || host == "localhost" => rest,
        _ => path,
    };
    if repo.chars().any(|c| c.is_ascii_uppercase()) {
        return "IfNotPresent";
    }
    match (tag, digest) {
        (Some("latest"), _) | (None, None) => "Always",
        _ => "IfNotPresent",
    }
}

#[cfg(test)]
mod tests {
    use super::pull_policy;

    #[test]
    fn pull_policies() {
        assert_eq!(pull_policy("nginx"), "Always");
        assert_eq!(pull_policy("nginx:latest"), "Always");
        assert_eq!(pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(pull_policy("localhost:5000/app"), "Always");
        assert_eq!(pull_policy("localhost:5000/app:v1"), "IfNotPresent");
        assert_eq!(pull_policy("nginx@sha256:abcd"), "IfNotPresent");
        assert_eq!(pull_policy("Nginx"), "IfNotPresent");
        assert_eq!(pull_policy(""), "IfNotPresent");
    }
}
