//! The checks of what a container may do as a process: privileged mode,
//! capabilities, privilege escalation, running as root.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::checks::{
    boolean, containers_phrase, join_quote_set, obj, Container, Forbidden, PodView,
};

/// `privileged`: no `securityContext.privileged=true`.
pub fn privileged_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let bad: Vec<&str> = pod
        .containers
        .iter()
        .filter(|c| boolean(c.sc(), "privileged") == Some(true))
        .map(|c| c.name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    Forbidden::new(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&bad)
        ),
    )
}

/// The default set baseline allows to add.
const ALLOWED_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn capabilities<'a>(c: &Container<'a>) -> Option<&'a Map<String, Value>> {
    obj(c.sc().and_then(|s| s.get("capabilities")))
}

fn cap_list<'a>(caps: &'a Map<String, Value>, key: &str) -> Vec<&'a str> {
    caps.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or(""))
        .collect()
}

/// `capabilities_baseline`: only the default set in `capabilities.add`.
pub fn capabilities_baseline_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut bad = Vec::new();
    let mut caps = BTreeSet::new();
    for c in &pod.containers {
        let Some(cs) = capabilities(c) else { continue };
        let mut valid = true;
        for cap in cap_list(cs, "add") {
            if !ALLOWED_CAPABILITIES.contains(&cap) {
                valid = false;
                caps.insert(cap.to_string());
            }
        }
        if !valid {
            bad.push(c.name);
        }
    }
    if bad.is_empty() {
        return None;
    }
    Forbidden::new(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad),
            join_quote_set(&caps)
        ),
    )
}

/// `allowPrivilegeEscalation` (v1.8): every container sets it to false.
pub fn allow_privilege_escalation_1_8(pod: &PodView<'_>) -> Option<Forbidden> {
    let bad: Vec<&str> = pod
        .containers
        .iter()
        .filter(|c| boolean(c.sc(), "allowPrivilegeEscalation") != Some(false))
        .map(|c| c.name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    Forbidden::new(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&bad)
        ),
    )
}

/// `allowPrivilegeEscalation` (v1.25): Windows pods are exempt.
pub fn allow_privilege_escalation_1_25(pod: &PodView<'_>) -> Option<Forbidden> {
    if pod.windows() {
        return None;
    }
    allow_privilege_escalation_1_8(pod)
}

/// `capabilities_restricted` (v1.22): drop `ALL`, add only
/// `NET_BIND_SERVICE`.
pub fn capabilities_restricted_1_22(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    let mut forbidden = BTreeSet::new();
    for c in &pod.containers {
        let Some(cs) = capabilities(c) else {
            missing_drop.push(c.name);
            continue;
        };
        if !cap_list(cs, "drop").contains(&"ALL") {
            missing_drop.push(c.name);
        }
        let mut added = false;
        for cap in cap_list(cs, "add") {
            if cap != "NET_BIND_SERVICE" {
                added = true;
                forbidden.insert(cap.to_string());
            }
        }
        if added {
            adding.push(c.name);
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote_set(&forbidden)
        ));
    }
    if details.is_empty() {
        return None;
    }
    Forbidden::new("unrestricted capabilities", details.join("; "))
}

/// `capabilities_restricted` (v1.25): Windows pods are exempt.
pub fn capabilities_restricted_1_25(pod: &PodView<'_>) -> Option<Forbidden> {
    if pod.windows() {
        return None;
    }
    capabilities_restricted_1_22(pod)
}

/// `runAsNonRoot`: the pod or every container sets it to true, none to
/// false.
pub fn run_as_non_root_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    let pod_value = boolean(pod.pod_sc(), "runAsNonRoot");
    if pod_value == Some(false) {
        setters.push("pod".to_string());
    }
    let pod_non_root = pod_value == Some(true);
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in &pod.containers {
        match boolean(c.sc(), "runAsNonRoot") {
            Some(false) => explicit.push(c.name),
            Some(true) => {}
            None if !pod_non_root => implicit.push(c.name),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return Forbidden::new(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters.join(" and ")
            ),
        );
    }
    if !implicit.is_empty() {
        return Forbidden::new(
            "runAsNonRoot != true",
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                containers_phrase(&implicit)
            ),
        );
    }
    None
}

fn root_user(sc: Option<&Map<String, Value>>) -> bool {
    sc.and_then(|s| s.get("runAsUser")).and_then(Value::as_i64) == Some(0)
}

/// `runAsUser` (v1.23): neither the pod nor a container sets
/// `runAsUser=0`.
pub fn run_as_user_1_23(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut setters = Vec::new();
    if root_user(pod.pod_sc()) {
        setters.push("pod".to_string());
    }
    let bad: Vec<&str> = pod
        .containers
        .iter()
        .filter(|c| root_user(c.sc()))
        .map(|c| c.name)
        .collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    Forbidden::new(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters.join(" and ")),
    )
}
