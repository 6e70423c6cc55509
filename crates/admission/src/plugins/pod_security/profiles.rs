//! The checks of the kernel security profiles and settings a pod picks:
//! AppArmor, seccomp, SELinux, `procMount`, sysctls.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::checks::{
    containers_phrase, go_quote, join_quote, join_quote_set, obj, pluralize, string, Forbidden,
    PodView,
};

const APPARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// `appArmorProfile`: types RuntimeDefault or Localhost, annotations
/// `runtime/default`, `localhost/*` or empty.
pub fn app_armor_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let allowed = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(p) = obj(pod.pod_sc().and_then(|s| s.get("appArmorProfile"))) {
        let t = string(Some(p), "type");
        if !allowed(t) {
            setters.push("pod".to_string());
            values.insert(t.to_string());
        }
    }
    let mut bad = Vec::new();
    for c in &pod.containers {
        if let Some(p) = obj(c.sc().and_then(|s| s.get("appArmorProfile"))) {
            let t = string(Some(p), "type");
            if !allowed(t) {
                bad.push(c.name);
                values.insert(t.to_string());
            }
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    let mut annotations: Vec<String> = pod
        .annotations()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.starts_with(APPARMOR_PREFIX))
        .filter_map(|(k, v)| {
            let v = v.as_str().unwrap_or("");
            let ok = v.is_empty() || v == "runtime/default" || v.starts_with("localhost/");
            (!ok).then(|| format!("{k}={}", go_quote(v)))
        })
        .collect();
    let mut list: Vec<String> = values.into_iter().collect();
    if !annotations.is_empty() {
        annotations.sort();
        setters.push(pluralize("annotation", "annotations", annotations.len()).to_string());
        list.extend(annotations);
    }
    if setters.is_empty() {
        return None;
    }
    Forbidden::new(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            list.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            setters.join(" and "),
            join_quote(&list)
        ),
    )
}

/// `procMount`: only `Default`.
pub fn proc_mount_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut bad = Vec::new();
    let mut types = BTreeSet::new();
    for c in &pod.containers {
        let Some(pm) = c
            .sc()
            .and_then(|s| s.get("procMount"))
            .filter(|v| !v.is_null())
        else {
            continue;
        };
        let pm = pm.as_str().unwrap_or("");
        if pm != "Default" {
            bad.push(c.name);
            types.insert(pm.to_string());
        }
    }
    if bad.is_empty() {
        return None;
    }
    Forbidden::new(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&bad),
            join_quote_set(&types)
        ),
    )
}

const SELINUX_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

/// `seLinuxOptions` (v1.0).
pub fn se_linux_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    se_linux(pod, SELINUX_1_0)
}

/// `seLinuxOptions` (v1.31: `container_engine_t` allowed).
pub fn se_linux_1_31(pod: &PodView<'_>) -> Option<Forbidden> {
    se_linux(pod, SELINUX_1_31)
}

fn se_linux(pod: &PodView<'_>, allowed: &[&str]) -> Option<Forbidden> {
    let mut types = BTreeSet::new();
    let mut set_user = false;
    let mut set_role = false;
    let mut valid = |opts: &Map<String, Value>| {
        let mut ok = true;
        let t = string(Some(opts), "type");
        if !allowed.contains(&t) {
            ok = false;
            types.insert(t.to_string());
        }
        if !string(Some(opts), "user").is_empty() {
            ok = false;
            set_user = true;
        }
        if !string(Some(opts), "role").is_empty() {
            ok = false;
            set_role = true;
        }
        ok
    };
    let mut setters = Vec::new();
    if let Some(o) = obj(pod.pod_sc().and_then(|s| s.get("seLinuxOptions"))) {
        if !valid(o) {
            setters.push("pod".to_string());
        }
    }
    let mut bad = Vec::new();
    for c in &pod.containers {
        if let Some(o) = obj(c.sc().and_then(|s| s.get("seLinuxOptions"))) {
            if !valid(o) {
                bad.push(c.name);
            }
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", types.len()),
            join_quote_set(&types)
        ));
    }
    if set_user {
        data.push("user may not be set".to_string());
    }
    if set_role {
        data.push("role may not be set".to_string());
    }
    Forbidden::new(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.join(" and "),
            data.join("; ")
        ),
    )
}

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

fn valid_seccomp(t: &str) -> bool {
    t == "Localhost" || t == "RuntimeDefault"
}

/// `seccompProfile_baseline` (v1.0): the alpha annotations.
pub fn seccomp_baseline_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let valid =
        |v: &str| v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/");
    let annotations = pod.annotations();
    let mut forbidden = BTreeSet::new();
    let mut look = |key: &str| {
        if let Some(v) = annotations.and_then(|a| a.get(key)) {
            let v = v.as_str().unwrap_or("");
            if !valid(v) {
                forbidden.insert(format!("{key}={}", go_quote(v)));
            }
        }
    };
    look(SECCOMP_POD_ANNOTATION);
    for c in &pod.containers {
        look(&format!("{SECCOMP_CONTAINER_PREFIX}{}", c.name));
    }
    if forbidden.is_empty() {
        return None;
    }
    let list: Vec<&str> = forbidden.iter().map(String::as_str).collect();
    Forbidden::new(
        "seccompProfile",
        format!(
            "forbidden {} {}",
            pluralize("annotation", "annotations", forbidden.len()),
            list.join(", ")
        ),
    )
}

fn seccomp_type(sc: Option<&Map<String, Value>>) -> Option<&str> {
    obj(sc.and_then(|s| s.get("seccompProfile"))).map(|p| string(Some(p), "type"))
}

/// `seccompProfile_baseline` (v1.19): the field, when set, is
/// RuntimeDefault or Localhost.
pub fn seccomp_baseline_1_19(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(t) = seccomp_type(pod.pod_sc()).filter(|t| !valid_seccomp(t)) {
        setters.push("pod".to_string());
        values.insert(t.to_string());
    }
    let mut bad = Vec::new();
    for c in &pod.containers {
        if let Some(t) = seccomp_type(c.sc()).filter(|t| !valid_seccomp(t)) {
            bad.push(c.name);
            values.insert(t.to_string());
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    Forbidden::new(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote_set(&values)
        ),
    )
}

/// `seccompProfile_restricted` (v1.19): the pod or every container sets
/// RuntimeDefault or Localhost.
pub fn seccomp_restricted_1_19(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let mut pod_set = false;
    if let Some(t) = seccomp_type(pod.pod_sc()) {
        if valid_seccomp(t) {
            pod_set = true;
        } else {
            setters.push("pod".to_string());
            values.insert(t.to_string());
        }
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in &pod.containers {
        match seccomp_type(c.sc()) {
            Some(t) if !valid_seccomp(t) => {
                explicit.push(c.name);
                values.insert(t.to_string());
            }
            Some(_) => {}
            None if !pod_set => implicit.push(c.name),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return Forbidden::new(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                setters.join(" and "),
                join_quote_set(&values)
            ),
        );
    }
    if !implicit.is_empty() {
        return Forbidden::new(
            "seccompProfile",
            format!(
                "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                containers_phrase(&implicit)
            ),
        );
    }
    None
}

/// `seccompProfile_restricted` (v1.25): Windows pods are exempt.
pub fn seccomp_restricted_1_25(pod: &PodView<'_>) -> Option<Forbidden> {
    if pod.windows() {
        return None;
    }
    seccomp_restricted_1_19(pod)
}

const SYSCTLS_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const SYSCTLS_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const SYSCTLS_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SYSCTLS_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

/// `sysctls` (v1.0): the safe set.
pub fn sysctls_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    sysctls(pod, &[SYSCTLS_1_0])
}

/// `sysctls` (v1.27): and `ip_local_reserved_ports`.
pub fn sysctls_1_27(pod: &PodView<'_>) -> Option<Forbidden> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27])
}

/// `sysctls` (v1.29): and the TCP keepalive and fin timeout ones.
pub fn sysctls_1_29(pod: &PodView<'_>) -> Option<Forbidden> {
    sysctls(pod, &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29])
}

/// `sysctls` (v1.32): and `tcp_rmem` / `tcp_wmem`.
pub fn sysctls_1_32(pod: &PodView<'_>) -> Option<Forbidden> {
    sysctls(
        pod,
        &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29, SYSCTLS_1_32],
    )
}

fn sysctls(pod: &PodView<'_>, allowed: &[&[&str]]) -> Option<Forbidden> {
    let forbidden: Vec<&str> = pod
        .pod_sc()
        .and_then(|s| s.get("sysctls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| s.get("name").and_then(Value::as_str).unwrap_or(""))
        .filter(|n| !allowed.iter().any(|set| set.contains(n)))
        .collect();
    if forbidden.is_empty() {
        return None;
    }
    Forbidden::new("forbidden sysctls", forbidden.join(", "))
}
