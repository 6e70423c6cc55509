//! kube's `pkg/api/pod/warnings.go`: `warningsForPodSpecAndMeta`, shared
//! by Pods (no path prefix) and every pod template (`spec.template`,
//! `template`, `spec.jobTemplate.spec.template`).

use keelson_cel::library::quantity::Quantity;
use serde_json::{Map, Value};

use super::super::util::{int_of, list_of, obj_of, str_of};
use super::super::Path;
use super::{node_label_deprecated, pvc_spec_warnings};

/// Annotations kube warns about wherever they appear (key, message).
const DEPRECATED_ANNOTATIONS: &[(&str, &str)] = &[
    (
        "scheduler.alpha.kubernetes.io/critical-pod",
        "non-functional in v1.16+; use the \"priorityClassName\" field instead",
    ),
    (
        "security.alpha.kubernetes.io/sysctls",
        "non-functional in v1.11+; use the \"sysctls\" field instead",
    ),
    (
        "security.alpha.kubernetes.io/unsafe-sysctls",
        "non-functional in v1.11+; use the \"sysctls\" field instead",
    ),
];

/// Removed volume plugins, in kube's order of checking (field, message);
/// `ephemeral` is checked between `glusterfs` and `cephfs`.
const DEPRECATED_VOLUMES_BEFORE_EPHEMERAL: &[(&str, &str)] = &[
    (
        "photonPersistentDisk",
        "deprecated in v1.11, non-functional in v1.16+",
    ),
    ("gitRepo", "deprecated in v1.11"),
    ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
    ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
    ("storageOS", "deprecated in v1.22, non-functional in v1.25+"),
    ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
    ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
];
const DEPRECATED_VOLUMES_AFTER_EPHEMERAL: &[(&str, &str)] = &[
    ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
    ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
];

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn present(obj: &Value, key: &str) -> bool {
    obj.get(key).is_some_and(|v| !v.is_null())
}

/// A map's keys in a fixed order (Go ranges over maps at random; sorted
/// keeps the answers stable).
fn sorted_keys(m: Option<&Map<String, Value>>) -> Vec<&str> {
    let mut keys: Vec<&str> = m.into_iter().flatten().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys
}

/// A quantity as JSON carries it (a string or a bare number).
fn quantity_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `<path>: fractional byte value "<q>" is invalid, must be an integer`
/// when the quantity's `MilliValue()` is not a multiple of 1000.
pub(super) fn fractional_bytes(v: Option<&Value>, path: &Path) -> Option<String> {
    let q = Quantity::parse(&quantity_text(v?)?)?;
    let nanos = q.nanos()?;
    // MilliValue rounds up (away from zero) to the next milli-unit.
    let milli = if nanos >= 0 {
        (nanos + 999_999) / 1_000_000
    } else {
        -((-nanos + 999_999) / 1_000_000)
    };
    if milli % 1000 == 0 {
        return None;
    }
    let shown = Quantity::canonical(nanos, q.format());
    Some(format!(
        "{path}: fractional byte value {shown:?} is invalid, must be an integer"
    ))
}

/// `GetWarningsForNodeSelectorTerm`: deprecated node labels as
/// matchExpressions keys.
fn node_selector_term(term: &Value, path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (i, e) in list_of(term, "matchExpressions").iter().enumerate() {
        let key = str_of(e, "key");
        if let Some(msg) = node_label_deprecated(key) {
            let p = path.child("matchExpressions").index(i).child("key");
            out.push(format!("{p}: {key} is {msg}"));
        }
    }
    out
}

/// `pods.VisitContainersWithPath`: init containers, containers, then
/// ephemeral containers, each with its path.
fn containers<'a>(spec: &'a Value, spec_path: &Path) -> Vec<(&'a Value, Path)> {
    let mut out = Vec::new();
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let p = spec_path.child(list);
        for (i, c) in list_of(spec, list).iter().enumerate() {
            out.push((c, p.index(i)));
        }
    }
    out
}

/// Go's `%+v` of an `api.ContainerPort`.
fn port_struct(port: &Value) -> String {
    format!(
        "{{Name:{} HostPort:{} ContainerPort:{} Protocol:{} HostIP:{}}}",
        str_of(port, "name"),
        int_of(port, "hostPort").unwrap_or(0),
        int_of(port, "containerPort").unwrap_or(0),
        str_of(port, "protocol"),
        str_of(port, "hostIP"),
    )
}

/// kube's `warningsForPodSpecAndMeta` for the pod spec `spec` and the
/// metadata `meta`, paths under `prefix` (the root for a Pod).
pub(super) fn pod_spec_and_meta(prefix: &Path, spec: &Value, meta: &Value) -> Vec<String> {
    let mut w = Vec::new();
    let spec_path = prefix.child("spec");
    let annotations = obj_of(meta, "annotations");
    let has_annotation = |k: &str| annotations.is_some_and(|a| a.contains_key(k));
    let annotation_path = prefix.child("metadata").child("annotations");

    // Deprecated node labels in selectors, affinity and topology.
    for k in sorted_keys(obj_of(spec, "nodeSelector")) {
        if let Some(msg) = node_label_deprecated(k) {
            w.push(format!("{}: {msg}", spec_path.child("nodeSelector").key(k)));
        }
    }
    let affinity = spec.get("affinity").unwrap_or(&Value::Null);
    if let Some(node) = affinity.get("nodeAffinity").filter(|v| v.is_object()) {
        let required = node
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .unwrap_or(&Value::Null);
        if required.is_object() {
            let terms = spec_path
                .child("affinity")
                .child("nodeAffinity")
                .child("requiredDuringSchedulingIgnoredDuringExecution")
                .child("nodeSelectorTerms");
            for (i, t) in list_of(required, "nodeSelectorTerms").iter().enumerate() {
                w.extend(node_selector_term(t, &terms.index(i)));
            }
        }
        let preferred = spec_path
            .child("affinity")
            .child("nodeAffinity")
            .child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in list_of(node, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            let pref = t.get("preference").unwrap_or(&Value::Null);
            w.extend(node_selector_term(
                pref,
                &preferred.index(i).child("preference"),
            ));
        }
    }
    let tsc = spec_path.child("topologySpreadConstraints");
    for (i, t) in list_of(spec, "topologySpreadConstraints")
        .iter()
        .enumerate()
    {
        let key = str_of(t, "topologyKey");
        if let Some(msg) = node_label_deprecated(key) {
            w.push(format!(
                "{}: {key} is {msg}",
                tsc.index(i).child("topologyKey")
            ));
        }
        if !present(t, "labelSelector") {
            w.push(format!(
                "{}: a null labelSelector results in matching no pod",
                tsc.index(i).child("labelSelector")
            ));
        }
    }

    // Deprecated annotations.
    for (key, msg) in DEPRECATED_ANNOTATIONS {
        if has_annotation(key) {
            w.push(format!("{}: {msg}", annotation_path.key(key)));
        }
    }

    // Deprecated and removed volume plugins.
    let volumes = spec_path.child("volumes");
    for (i, v) in list_of(spec, "volumes").iter().enumerate() {
        for (f, msg) in DEPRECATED_VOLUMES_BEFORE_EPHEMERAL {
            if present(v, f) {
                w.push(format!("{}: {msg}", volumes.index(i).child(f)));
            }
        }
        if let Some(t) = v
            .get("ephemeral")
            .and_then(|e| e.get("volumeClaimTemplate"))
            .filter(|t| t.is_object())
        {
            let p = volumes
                .index(i)
                .child("ephemeral")
                .child("volumeClaimTemplate")
                .child("spec");
            w.extend(pvc_spec_warnings(t.get("spec").unwrap_or(&Value::Null), &p));
        }
        for (f, msg) in DEPRECATED_VOLUMES_AFTER_EPHEMERAL {
            if present(v, f) {
                w.push(format!("{}: {msg}", volumes.index(i).child(f)));
            }
        }
    }

    // Duplicate hostAliases and imagePullSecrets.
    let aliases = list_of(spec, "hostAliases");
    if aliases.len() > 1 {
        let mut seen = std::collections::HashSet::new();
        for (i, a) in aliases.iter().enumerate() {
            let ip = str_of(a, "ip");
            if !seen.insert(ip) {
                w.push(format!(
                    "{}: duplicate ip {ip:?}",
                    spec_path.child("hostAliases").index(i).child("ip")
                ));
            }
        }
    }
    let secrets = list_of(spec, "imagePullSecrets");
    if secrets.len() > 1 {
        let mut seen = std::collections::HashSet::new();
        for (i, s) in secrets.iter().enumerate() {
            let name = str_of(s, "name");
            if !seen.insert(name) {
                w.push(format!(
                    "{}: duplicate name {name:?}",
                    spec_path.child("imagePullSecrets").index(i).child("name")
                ));
            }
        }
    }
    for (i, s) in secrets.iter().enumerate() {
        let name = str_of(s, "name");
        if name.is_empty() {
            w.push(format!(
                "{}: invalid empty name {name:?}",
                spec_path.child("imagePullSecrets").index(i).child("name")
            ));
        }
    }

    // Fractional memory / ephemeral-storage overhead.
    let overhead = spec.get("overhead").unwrap_or(&Value::Null);
    for r in ["memory", "ephemeral-storage"] {
        w.extend(fractional_bytes(
            overhead.get(r),
            &spec_path.child("overhead").key(r),
        ));
    }

    // The pod seccomp annotation without the field.
    let pod_sc = spec.get("securityContext").unwrap_or(&Value::Null);
    if !present(pod_sc, "seccompProfile") && has_annotation(SECCOMP_POD_ANNOTATION) {
        w.push(format!(
            "{}: non-functional in v1.27+; use the \"seccompProfile\" field instead",
            annotation_path.key(SECCOMP_POD_ANNOTATION)
        ));
    }
    let pod_apparmor = present(pod_sc, "appArmorProfile");
    // Pods get their AppArmor warnings elsewhere (the annotations are
    // synced to the fields); only templates warn here.
    let is_template = !prefix.as_str().is_empty();

    let all = containers(spec, &spec_path);
    for (c, p) in &all {
        let name = str_of(c, "name");
        let sc = c.get("securityContext").unwrap_or(&Value::Null);
        let seccomp_key = format!("{SECCOMP_CONTAINER_PREFIX}{name}");
        if !present(sc, "seccompProfile") && has_annotation(&seccomp_key) {
            w.push(format!(
                "{}: non-functional in v1.27+; use the \"seccompProfile\" field instead",
                annotation_path.key(&seccomp_key)
            ));
        }
        let apparmor_key = format!("{APPARMOR_CONTAINER_PREFIX}{name}");
        if is_template
            && !pod_apparmor
            && !present(sc, "appArmorProfile")
            && has_annotation(&apparmor_key)
        {
            w.push(format!(
                "{}: deprecated since v1.30; use the \"appArmorProfile\" field instead",
                annotation_path.key(&apparmor_key)
            ));
        }
        let res = c.get("resources").unwrap_or(&Value::Null);
        let limits = res.get("limits").unwrap_or(&Value::Null);
        let requests = res.get("requests").unwrap_or(&Value::Null);
        for r in ["memory", "ephemeral-storage"] {
            w.extend(fractional_bytes(
                limits.get(r),
                &p.child("resources").child("limits").key(r),
            ));
            w.extend(fractional_bytes(
                requests.get(r),
                &p.child("resources").child("requests").key(r),
            ));
        }
        let env = list_of(c, "env");
        if env.len() > 1 {
            let mut seen = std::collections::HashSet::new();
            for (i, e) in env.iter().enumerate() {
                let n = str_of(e, "name");
                if seen.insert(n) {
                    continue;
                }
                let reference = format!("$({n})");
                let value = str_of(e, "value");
                let bad =
                    present(e, "valueFrom") || value == reference || !value.contains(&reference);
                if bad {
                    w.push(format!(
                        "{}: hides previous definition of {n:?}, which may be dropped when using apply",
                        p.child("env").index(i)
                    ));
                }
            }
        }
    }

    // Ports across all containers.
    let mut all_ports: Vec<(String, Path, &Value)> = Vec::new();
    for (c, p) in &all {
        for (i, port) in list_of(c, "ports").iter().enumerate() {
            let here = p.child("ports").index(i);
            let host_ip = str_of(port, "hostIP");
            let host_port = int_of(port, "hostPort").unwrap_or(0);
            if !host_ip.is_empty() && host_port == 0 {
                w.push(format!(
                    "{here}: hostIP set without hostPort: {}",
                    port_struct(port)
                ));
            }
            let key = format!(
                "{}/{}",
                int_of(port, "containerPort").unwrap_or(0),
                str_of(port, "protocol")
            );
            for (k, other_path, other) in &all_ports {
                if *k != key {
                    continue;
                }
                let other_ip = str_of(other, "hostIP");
                let other_port = int_of(other, "hostPort").unwrap_or(0);
                if host_ip == other_ip && host_port == other_port {
                    w.push(format!(
                        "{here}: duplicate port definition with {other_path}"
                    ));
                } else if host_port == 0 || other_port == 0 {
                    w.push(format!(
                        "{here}: overlapping port definition with {other_path}"
                    ));
                } else if host_port == other_port && (host_ip.is_empty() != other_ip.is_empty()) {
                    w.push(format!(
                        "{here}: dangerously ambiguous port definition with {other_path}"
                    ));
                }
            }
            all_ports.push((key, here, port));
        }
    }

    if int_of(spec, "terminationGracePeriodSeconds").is_some_and(|s| s < 0) {
        w.push(format!(
            "{}: must be >= 0; negative values are invalid and will be treated as 1",
            spec_path.child("terminationGracePeriodSeconds")
        ));
    }

    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(a) = affinity.get(kind).filter(|v| v.is_object()) else {
            continue;
        };
        let base = spec_path.child("affinity").child(kind);
        let req = base.child("requiredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in list_of(a, "requiredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            if !present(t, "labelSelector") {
                w.push(format!(
                    "{}: a null labelSelector results in matching no pod",
                    req.index(i).child("labelSelector")
                ));
            }
        }
        let pref = base.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in list_of(a, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            let term = t.get("podAffinityTerm").unwrap_or(&Value::Null);
            if !present(term, "labelSelector") {
                w.push(format!(
                    "{}: a null labelSelector results in matching no pod",
                    pref.index(i)
                        .child("podAffinityTerm")
                        .child("labelSelector")
                ));
            }
        }
    }
    w
}
