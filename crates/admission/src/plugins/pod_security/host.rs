//! The baseline checks of what the pod shares with its host: host
//! namespaces, host ports, probe and lifecycle hosts, Windows host
//! processes.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::checks::{
    boolean, containers_phrase, join_quote_set, obj, pluralize, string, Forbidden, PodView,
};

/// `hostNamespaces`: no `hostNetwork`, `hostPID`, `hostIPC`.
pub fn host_namespaces_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let spec = pod.spec.as_object();
    let found: Vec<&str> = [
        ("hostNetwork", "hostNetwork=true"),
        ("hostPID", "hostPID=true"),
        ("hostIPC", "hostIPC=true"),
    ]
    .iter()
    .filter(|(k, _)| boolean(spec, k) == Some(true))
    .map(|(_, s)| *s)
    .collect();
    if found.is_empty() {
        return None;
    }
    Forbidden::new("host namespaces", found.join(", "))
}

/// `hostPorts`: no container port with a `hostPort`.
pub fn host_ports_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut bad = Vec::new();
    let mut ports = BTreeSet::new();
    for c in &pod.containers {
        let mut valid = true;
        for p in
            c.c.get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        {
            let hp = p.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if hp != 0 {
                valid = false;
                ports.insert(hp.to_string());
            }
        }
        if !valid {
            bad.push(c.name);
        }
    }
    if bad.is_empty() {
        return None;
    }
    let list: Vec<&str> = ports.iter().map(String::as_str).collect();
    Forbidden::new(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            list.join(", ")
        ),
    )
}

/// The `host` of a probe's or handler's `httpGet` and `tcpSocket`.
fn hosts(handler: Option<&Map<String, Value>>) -> Vec<String> {
    let mut out = Vec::new();
    for kind in ["httpGet", "tcpSocket"] {
        let h = string(obj(handler.and_then(|h| h.get(kind))), "host");
        if !h.is_empty() {
            out.push(h.to_string());
        }
    }
    out
}

/// `hostProbesAndHostLifecycle` (v1.34+): probes and lifecycle handlers
/// set no `host`.
pub fn host_probes_1_34(pod: &PodView<'_>) -> Option<Forbidden> {
    let mut bad = BTreeSet::new();
    let mut forbidden = BTreeSet::new();
    for c in &pod.containers {
        let lifecycle = obj(c.c.get("lifecycle"));
        let handlers = [
            obj(c.c.get("livenessProbe")),
            obj(c.c.get("readinessProbe")),
            obj(c.c.get("startupProbe")),
            obj(lifecycle.and_then(|l| l.get("postStart"))),
            obj(lifecycle.and_then(|l| l.get("preStop"))),
        ];
        for h in handlers {
            let found = hosts(h);
            if !found.is_empty() {
                bad.insert(c.name.to_string());
                forbidden.extend(found);
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    Forbidden::new(
        "probe or lifecycle host",
        format!(
            "{} {} {} {} {}",
            pluralize("container", "containers", bad.len()),
            join_quote_set(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                forbidden.len()
            ),
            join_quote_set(&forbidden)
        ),
    )
}

fn host_process(sc: Option<&Map<String, Value>>) -> bool {
    boolean(obj(sc.and_then(|s| s.get("windowsOptions"))), "hostProcess") == Some(true)
}

/// `windowsHostProcess`: no `windowsOptions.hostProcess=true`.
pub fn windows_host_process_1_0(pod: &PodView<'_>) -> Option<Forbidden> {
    let bad: Vec<&str> = pod
        .containers
        .iter()
        .filter(|c| host_process(c.sc()))
        .map(|c| c.name)
        .collect();
    let mut setters = Vec::new();
    if host_process(pod.pod_sc()) {
        setters.push("pod".to_string());
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    Forbidden::new(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters.join(" and ")
        ),
    )
}
