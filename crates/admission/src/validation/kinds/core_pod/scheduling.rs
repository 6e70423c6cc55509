//! The pod spec's scheduling and name-resolution rules (kube's
//! `validateAffinity`, `validatePodDNSConfig`, `validateReadinessGates`,
//! `validateSchedulingGates`, `ValidateHostAliases`, priority and runtime
//! class names, `preemptionPolicy`, `overhead`) and the ephemeral-container
//! and pod-level resource calls that sit between the containers and
//! `validatePodHostNetworkDeps` in `ValidatePodSpec`.

use keelson_apimachinery::names::{is_dns1123_label, is_qualified_name, is_valid_label_value};
use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::super::util::{
    dns1123_subdomain, duplicate, int_of, invalid_all, list_of, str_of, validate_label_selector,
};
use super::super::Path;
use super::container_extra::{self as extra, SpecCtx};
use super::topology;

/// `obj[key]` when it is an object.
fn object<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| v.is_object())
}

/// The calls between `validateInitContainers` and
/// `validatePodHostNetworkDeps`: `validateEphemeralContainers`, then
/// `validatePodResources`.
pub(super) fn after_init_containers(
    spec: &Value,
    vols: &[String],
    ctx: &SpecCtx<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = extra::ephemeral_containers(spec, vols, ctx, &path.child("ephemeralContainers"));
    errs.extend(super::pod_resources::pod_resources(
        spec,
        &path.child("resources"),
    ));
    errs
}

/// The calls from `validateAffinity` to `validateSchedulingGates`, in
/// kube's order (they follow the security context and image pull secrets);
/// `labels`: the pod's labels when its strategy merges label keys (Pod
/// create).
pub(super) fn affinity_to_gates(
    spec: &Value,
    path: &Path,
    labels: Option<&serde_json::Map<String, Value>>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(a) = object(spec, "affinity") {
        errs.extend(affinity(a, &path.child("affinity"), labels));
    }
    errs.extend(dns_config(spec, &path.child("dnsConfig")));
    for (i, g) in list_of(spec, "readinessGates").iter().enumerate() {
        let t = str_of(g, "conditionType");
        let p = path.child("readinessGates").index(i).child("conditionType");
        errs.extend(invalid_all(is_qualified_name(t), &p, t));
    }
    let gp = path.child("schedulingGates");
    let mut seen: Vec<&str> = Vec::new();
    for (i, g) in list_of(spec, "schedulingGates").iter().enumerate() {
        let name = str_of(g, "name");
        errs.extend(invalid_all(is_qualified_name(name), &gp.index(i), name));
        if seen.contains(&name) {
            errs.push(duplicate(&gp.index(i), name));
        }
        seen.push(name);
    }
    errs
}

/// The calls after `ValidateTolerations`: host aliases, priority class,
/// runtime class, preemption policy, overhead.
pub(super) fn after_tolerations(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, alias) in list_of(spec, "hostAliases").iter().enumerate() {
        let ap = path.child("hostAliases").index(i);
        errs.extend(ip(str_of(alias, "ip"), &ap.child("ip")));
        for (j, h) in list_of(alias, "hostnames").iter().enumerate() {
            let h = h.as_str().unwrap_or("");
            errs.extend(dns1123_subdomain(h, &ap.child("hostnames").index(j)));
        }
    }
    let pc = str_of(spec, "priorityClassName");
    if !pc.is_empty() {
        errs.extend(dns1123_subdomain(pc, &path.child("priorityClassName")));
    }
    if let Some(rc) = spec.get("runtimeClassName").and_then(Value::as_str) {
        errs.extend(dns1123_subdomain(rc, &path.child("runtimeClassName")));
    }
    if let Some(pp) = spec.get("preemptionPolicy").and_then(Value::as_str) {
        let p = path.child("preemptionPolicy");
        match pp {
            "PreemptLowerPriority" | "Never" => {}
            "" => errs.push(FieldError::required(p.as_str(), "")),
            other => errs.push(FieldError::not_supported(
                p.as_str(),
                other,
                &["PreemptLowerPriority", "Never"],
            )),
        }
    }
    if let Some(o) = spec.get("overhead").filter(|v| v.is_object()) {
        let r = serde_json::json!({ "limits": o });
        errs.extend(extra::resources(
            &r,
            extra::Names::Container,
            &[],
            &path.child("overhead"),
        ));
    }
    errs
}

/// `ValidatePodCreate`'s own rules after the spec: no ephemeral containers,
/// no `nodeName` while scheduling gates remain.
pub(super) fn pod_create(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sp = Path::new("spec");
    if !list_of(spec, "ephemeralContainers").is_empty() {
        errs.push(FieldError::forbidden(
            sp.child("ephemeralContainers").as_str(),
            "cannot be set on create",
        ));
    }
    if !str_of(spec, "nodeName").is_empty() && !list_of(spec, "schedulingGates").is_empty() {
        errs.push(FieldError::forbidden(
            sp.child("nodeName").as_str(),
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs
}

/// `ValidatePodTemplateSpec`'s last rule: templates carry no ephemeral
/// containers (`path` is the template's `spec`).
pub(super) fn template_ephemeral(spec: &Value, path: &Path) -> Vec<FieldError> {
    if list_of(spec, "ephemeralContainers").is_empty() {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        path.child("ephemeralContainers").as_str(),
        "ephemeral containers not allowed in pod template",
    )]
}

const IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// kube's `IsValidIP` (`ParseIPSloppy`: IPv4 octets may have leading zeros).
fn ip(s: &str, path: &Path) -> Vec<FieldError> {
    let ok = if s.contains(':') {
        s.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        let parts: Vec<&str> = s.split('.').collect();
        parts.len() == 4
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.len() <= 3
                    && p.bytes().all(|b| b.is_ascii_digit())
                    && p.parse::<u16>().is_ok_and(|n| n <= 255)
            })
    };
    if ok {
        Vec::new()
    } else {
        vec![FieldError::invalid(path.as_str(), s, IP_MSG)]
    }
}

/// A `[]string` error value as apimachinery 1.34 prints it: its JSON
/// (`["a","b"]`).
fn json_strings(list: &[Value]) -> Value {
    Value::Array(
        list.iter()
            .map(|v| Value::String(v.as_str().unwrap_or("").to_string()))
            .collect(),
    )
}

/// kube's `IsDNS1123SubdomainWithUnderscore` (relaxed search names, on in
/// 1.34).
fn subdomain_with_underscore(v: &str) -> Vec<String> {
    const FMT: &str = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*";
    let mut errs = Vec::new();
    if v.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        let l = l.strip_prefix('_').unwrap_or(l);
        let b = l.as_bytes();
        let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && alnum(b[0])
            && alnum(b[b.len() - 1])
            && b.iter().all(|&c| alnum(c) || c == b'-' || c == b'_')
    };
    if !v.split('.').all(label_ok) {
        errs.push(super::super::util::regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
            FMT,
            &["example.com"],
        ));
    }
    errs
}

/// kube's `validatePodDNSConfig` with the pod's `dnsPolicy`.
fn dns_config(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cfg = object(spec, "dnsConfig");
    if str_of(spec, "dnsPolicy") == "None" {
        let Some(c) = cfg else {
            return vec![FieldError::required(
                path.as_str(),
                "must provide `dnsConfig` when `dnsPolicy` is None",
            )];
        };
        if list_of(c, "nameservers").is_empty() {
            return vec![FieldError::required(
                path.child("nameservers").as_str(),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            )];
        }
    }
    let Some(c) = cfg else {
        return errs;
    };
    let ns = list_of(c, "nameservers");
    let np = path.child("nameservers");
    if ns.len() > 3 {
        errs.push(FieldError::invalid(
            np.as_str(),
            json_strings(ns),
            "must not have more than 3 nameservers",
        ));
    }
    for (i, n) in ns.iter().enumerate() {
        errs.extend(ip(n.as_str().unwrap_or(""), &np.index(i)));
    }
    let searches = list_of(c, "searches");
    let sp = path.child("searches");
    if searches.len() > 32 {
        errs.push(FieldError::invalid(
            sp.as_str(),
            json_strings(searches),
            "must not have more than 32 search paths",
        ));
    }
    let joined: Vec<&str> = searches.iter().map(|s| s.as_str().unwrap_or("")).collect();
    if joined.join(" ").len() > 2048 {
        errs.push(FieldError::invalid(
            sp.as_str(),
            json_strings(searches),
            "must not have more than 2048 characters (including spaces) in the search list",
        ));
    }
    for (i, s) in joined.iter().enumerate() {
        if *s != "." {
            let s = s.strip_suffix('.').unwrap_or(s);
            errs.extend(invalid_all(subdomain_with_underscore(s), &sp.index(i), s));
        }
    }
    for (i, o) in list_of(c, "options").iter().enumerate() {
        if str_of(o, "name").is_empty() {
            errs.push(FieldError::required(
                path.child("options").index(i).as_str(),
                "must not be empty",
            ));
        }
    }
    errs
}

/// kube's `validateAffinity`.
fn affinity(
    a: &Value,
    path: &Path,
    labels: Option<&serde_json::Map<String, Value>>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(na) = object(a, "nodeAffinity") {
        let np = path.child("nodeAffinity");
        if let Some(req) = object(na, "requiredDuringSchedulingIgnoredDuringExecution") {
            errs.extend(node_selector(
                req,
                false,
                &np.child("requiredDuringSchedulingIgnoredDuringExecution"),
            ));
        }
        let pp = np.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in list_of(na, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            errs.extend(weight(t, &pp.index(i)));
            if let Some(pref) = object(t, "preference") {
                errs.extend(node_selector_term(
                    pref,
                    true,
                    &pp.index(i).child("preference"),
                ));
            }
        }
    }
    for key in ["podAffinity", "podAntiAffinity"] {
        let Some(pa) = object(a, key) else {
            continue;
        };
        let kp = path.child(key);
        let rp = kp.child("requiredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in list_of(pa, "requiredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            errs.extend(pod_affinity_term(t, &rp.index(i), labels));
        }
        let pp = kp.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in list_of(pa, "preferredDuringSchedulingIgnoredDuringExecution")
            .iter()
            .enumerate()
        {
            errs.extend(weight(t, &pp.index(i)));
            let term = t.get("podAffinityTerm").unwrap_or(&Value::Null);
            errs.extend(pod_affinity_term(
                term,
                &pp.index(i).child("podAffinityTerm"),
                labels,
            ));
        }
    }
    errs
}

/// A preferred term's `weight` in 1..=100.
fn weight(t: &Value, path: &Path) -> Vec<FieldError> {
    let w = int_of(t, "weight").unwrap_or(0);
    if (1..=100).contains(&w) {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            path.child("weight").as_str(),
            w,
            "must be in the range 1-100",
        )]
    }
}

/// kube's `ValidateNodeSelector` (a pod's required node affinity, a
/// volume's node affinity); `allow_invalid_values` lets label values
/// already stored through.
pub(crate) fn node_selector(
    sel: &Value,
    allow_invalid_values: bool,
    path: &Path,
) -> Vec<FieldError> {
    let tp = path.child("nodeSelectorTerms");
    let terms = list_of(sel, "nodeSelectorTerms");
    if terms.is_empty() {
        return vec![FieldError::required(
            tp.as_str(),
            "must have at least one node selector term",
        )];
    }
    terms
        .iter()
        .enumerate()
        .flat_map(|(i, t)| node_selector_term(t, allow_invalid_values, &tp.index(i)))
        .collect()
}

/// kube's `ValidateNodeSelectorTerm`; `allow_invalid_values` for preferred
/// terms.
fn node_selector_term(term: &Value, allow_invalid_values: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (j, req) in list_of(term, "matchExpressions").iter().enumerate() {
        let rp = path.child("matchExpressions").index(j);
        let values = list_of(req, "values");
        let vp = rp.child("values");
        match str_of(req, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        vp.as_str(),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        vp.as_str(),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            "Gt" | "Lt" => {
                if values.len() != 1 {
                    errs.push(FieldError::required(
                        vp.as_str(),
                        "must be specified single value when `operator` is 'Lt' or 'Gt'",
                    ));
                }
            }
            op => errs.push(FieldError::invalid(
                rp.child("operator").as_str(),
                op,
                "not a valid selector operator",
            )),
        }
        let key = str_of(req, "key");
        errs.extend(invalid_all(is_qualified_name(key), &rp.child("key"), key));
        if !allow_invalid_values {
            for (i, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("");
                errs.extend(invalid_all(is_valid_label_value(v), &vp.index(i), v));
            }
        }
    }
    for (j, req) in list_of(term, "matchFields").iter().enumerate() {
        let rp = path.child("matchFields").index(j);
        let values = list_of(req, "values");
        match str_of(req, "operator") {
            "In" | "NotIn" => {
                if values.len() != 1 {
                    errs.push(FieldError::required(
                        rp.child("values").as_str(),
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                    ));
                }
            }
            op => errs.push(FieldError::invalid(
                rp.child("operator").as_str(),
                op,
                "not a valid selector operator",
            )),
        }
        let key = str_of(req, "key");
        if key != "metadata.name" {
            errs.push(FieldError::invalid(
                rp.child("key").as_str(),
                key,
                "not a valid field selector key",
            ));
        } else {
            for (i, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("");
                errs.extend(dns1123_subdomain(v, &rp.child("values").index(i)));
            }
        }
    }
    errs
}

/// kube's `validatePodAffinityTerm`.
fn pod_affinity_term(
    t: &Value,
    path: &Path,
    labels: Option<&serde_json::Map<String, Value>>,
) -> Vec<FieldError> {
    let mut errs =
        validate_label_selector(t.get("labelSelector"), false, &path.child("labelSelector"));
    errs.extend(validate_label_selector(
        t.get("namespaceSelector"),
        false,
        &path.child("namespaceSelector"),
    ));
    for ns in list_of(t, "namespaces") {
        let ns = ns.as_str().unwrap_or("");
        errs.extend(invalid_all(
            is_dns1123_label(ns),
            &path.child("namespace"),
            ns,
        ));
    }
    errs.extend(match_label_keys(t, path, labels));
    let key = str_of(t, "topologyKey");
    let kp = path.child("topologyKey");
    if key.is_empty() {
        errs.push(FieldError::required(kp.as_str(), "can not be empty"));
    }
    errs.extend(invalid_all(is_qualified_name(key), &kp, key));
    errs
}

/// kube's `validateMatchLabelKeysAndMismatchLabelKeys` (MatchLabelKeysInPodAffinity
/// is on in 1.34) of term `t`; `labels`: the pod's labels on Pod create,
/// when kube's strategy has merged the keys the pod carries into the
/// selector (`key In (value)`, then `key NotIn (value)`) before validating,
/// so a key in both `matchLabelKeys` and the selector is caught.
fn match_label_keys(
    t: &Value,
    path: &Path,
    labels: Option<&serde_json::Map<String, Value>>,
) -> Vec<FieldError> {
    let selector = object(t, "labelSelector");
    let matching = topology::strings(t, "matchLabelKeys");
    let mismatching = topology::strings(t, "mismatchLabelKeys");
    let mut errs = topology::label_keys(&path.child("matchLabelKeys"), &matching, selector);
    errs.extend(topology::label_keys(
        &path.child("mismatchLabelKeys"),
        &mismatching,
        selector,
    ));
    if let Some(sel) = selector {
        let mut merged = Vec::new();
        if !matching.is_empty() || !mismatching.is_empty() {
            merged = topology::merged_keys(&matching, labels);
            merged.extend(topology::merged_keys(&mismatching, labels));
        }
        errs.extend(topology::exists_in_both(path, &matching, sel, &merged));
    }
    for (i, k) in matching.iter().enumerate() {
        if mismatching.contains(k) {
            errs.push(FieldError::invalid(
                path.child("matchLabelKeys").index(i).as_str(),
                *k,
                "exists in both matchLabelKeys and mismatchLabelKeys",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sloppy_ips() {
        assert!(ip("10.0.0.1", &Path::new("x")).is_empty());
        assert!(ip("010.000.000.001", &Path::new("x")).is_empty());
        assert!(ip("2001:db8::1", &Path::new("x")).is_empty());
        assert_eq!(ip("1.2.3", &Path::new("x")).len(), 1);
        assert_eq!(ip("", &Path::new("x")).len(), 1);
    }

    #[test]
    fn underscore_subdomains() {
        assert!(subdomain_with_underscore("_sip._tcp.example.com").is_empty());
        assert!(subdomain_with_underscore("my_svc.ns").is_empty());
        assert_eq!(subdomain_with_underscore("Bad..x").len(), 1);
        assert_eq!(subdomain_with_underscore("-a").len(), 1);
    }

    #[test]
    fn string_lists_print_as_json() {
        let e = FieldError::invalid(
            "x",
            json_strings(&[Value::from("a"), Value::from("b")]),
            "m",
        );
        assert_eq!(e.to_string(), r#"x: Invalid value: ["a","b"]: m"#);
    }
}
