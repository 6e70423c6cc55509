//! Service and Endpoints (`pkg/apis/core/validation`: `ValidateService*`,
//! `ValidateEndpoints*`, `ValidateLoadBalancerStatus`).
//!
//! kube's Service storage runs its allocator (`BeginCreate`/`BeginUpdate`)
//! before the strategy's validation, and the allocator opens with
//! `ValidateServiceClusterIPsRelatedFields` on the Service as it has
//! normalized it (`patchAllocatedValues`, `normalizeClusterIPs`): when
//! that fails, its errors are all a client sees. Keelson validates before
//! allocating, so [`validate_service_write`] answers those errors alone, as
//! kube does; the cluster-configuration checks (`not configured on this
//! cluster`, taken or out-of-range IPs) stay the allocator's
//! (`keelson_controllers::service_alloc`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::netaddr;
use super::util::{
    dns1123_label, dns1123_subdomain, duplicate, int_of, invalid_all, labels, list_of, obj_of,
    port_num, port_num_or_name, semantic, str_of,
};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "Service" if w.subresource.is_empty() => validate_service_write(obj, w.old()),
        "Service" if w.is_status() => validate_service_status(obj, w.old()),
        "Endpoints" => validate_endpoints(obj, w.old()),
        _ => Vec::new(),
    }
}

const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const EXTERNAL_NAME: &str = "ExternalName";
const NONE: &str = "None";
const SOURCE_RANGES_ANNOTATION: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";
const TOPOLOGY_HINTS_ANNOTATION: &str = "service.kubernetes.io/topology-aware-hints";
const TOPOLOGY_MODE_ANNOTATION: &str = "service.kubernetes.io/topology-mode";
/// `sets.List(supportedServiceIPFamilyPolicy)`.
const IP_FAMILY_POLICIES: &[&str] = &["PreferDualStack", "RequireDualStack", "SingleStack"];
/// kube 1.34's supported `trafficDistribution` values, in kube's order:
/// `PreferSameTrafficDistribution` is beta and on in 1.34.
const TRAFFIC_DISTRIBUTIONS: &[&str] = &["PreferClose", "PreferSameZone", "PreferSameNode"];

/// A Service or Endpoints port's `protocol`: required, one of kube's.
fn protocol(port: &Value, path: &Path) -> Option<FieldError> {
    let proto = str_of(port, "protocol");
    let at = path.child("protocol");
    if proto.is_empty() {
        Some(FieldError::required(at.as_str(), ""))
    } else if !PROTOCOLS.contains(&proto) {
        Some(FieldError::not_supported(at.as_str(), proto, PROTOCOLS))
    } else {
        None
    }
}

fn spec_of(obj: &Value) -> &Value {
    static EMPTY: Value = Value::Null;
    obj.get("spec").unwrap_or(&EMPTY)
}

/// A list of strings (other members read as `""`).
fn strings(v: &Value, key: &str) -> Vec<String> {
    list_of(v, key)
        .iter()
        .map(|x| x.as_str().unwrap_or("").to_string())
        .collect()
}

/// `v[key]` when set to something other than `null`.
fn set<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get("metadata")
        .and_then(|m| obj_of(m, "annotations"))
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// A `[]string` as kube prints it: JSON, `null` when nil.
fn string_list_value(v: &Option<Vec<String>>) -> Value {
    match v {
        Some(l) => Value::Array(l.iter().cloned().map(Value::from).collect()),
        None => Value::Null,
    }
}

fn service_type(spec: &Value) -> &str {
    str_of(spec, "type")
}

/// The cluster IP fields as kube's Service storage has them when it
/// validates: `patchAllocatedValues` (update) and `normalizeClusterIPs`,
/// as the allocator applies them.
struct ClusterIps {
    ip: String,
    /// `None` for a nil list.
    ips: Option<Vec<String>>,
}

impl ClusterIps {
    fn list(&self) -> &[String] {
        self.ips.as_deref().unwrap_or(&[])
    }

    /// kube's `isHeadlessService`.
    fn headless(&self) -> bool {
        self.list().len() == 1 && self.list()[0] == NONE
    }

    fn of(spec: &Value) -> ClusterIps {
        ClusterIps {
            ip: str_of(spec, "clusterIP").to_string(),
            ips: set(spec, "clusterIPs").map(|_| strings(spec, "clusterIPs")),
        }
    }

    fn normalized(spec: &Value, old: Option<&Value>) -> ClusterIps {
        let mut v = ClusterIps::of(spec);
        let Some(old) = old.map(spec_of) else {
            // normalizeClusterIPs on create.
            if !v.ip.is_empty() && v.list().is_empty() {
                v.ips = Some(vec![v.ip.clone()]);
            }
            return v;
        };
        let o = ClusterIps::of(old);
        let ext = |s: &Value| service_type(s) == EXTERNAL_NAME;
        // patchAllocatedValues.
        if !ext(old) && !ext(spec) {
            if v.ip.is_empty() && !o.ip.is_empty() {
                v.ip = o.ip.clone();
            }
            if v.list().is_empty() && !o.list().is_empty() {
                v.ips = o.ips.clone();
            }
        }
        // normalizeClusterIPs on update.
        if !o.list().is_empty() && v.list().is_empty() && o.ip == v.ip {
            v.ips = o.ips.clone();
        }
        if o.ip != v.ip && o.list() == v.list() {
            if !o.ip.is_empty() && v.ip.is_empty() {
                v.ips = None;
            } else {
                v.ips = Some(vec![v.ip.clone()]);
            }
        }
        v
    }
}

/// kube's `ValidateServiceCreate` / `ValidateServiceUpdate` (the metadata
/// rules are the caller's), with the allocator's pre-validation first.
fn validate_service_write(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = spec_of(obj);
    let ips = ClusterIps::normalized(spec, old);
    let old_ips = old
        .map(|o| strings(spec_of(o), "clusterIPs"))
        .unwrap_or_default();
    // The allocator's `initIPFamilyFields` skips ExternalName Services and
    // updates of unchanged PreferDualStack ones; for the others its
    // `ValidateServiceClusterIPsRelatedFields` answers first.
    let prefer_dual_unchanged = old.is_some_and(|o| matching_prefer_dual_stack(spec, spec_of(o)));
    if service_type(spec) != EXTERNAL_NAME && !prefer_dual_unchanged {
        let errs = cluster_ips_related(spec, &ips, &old_ips);
        if !errs.is_empty() {
            return errs;
        }
    }
    let mut errs = Vec::new();
    if let Some(old) = old {
        let old_spec = spec_of(old);
        errs.extend(upgrade_downgrade_cluster_ips(old_spec, spec, &ips));
        errs.extend(load_balancer_class(Some(old_spec), spec));
        errs.extend(external_traffic_fields_update(old_spec, spec));
    }
    errs.extend(validate_service(obj, old, &ips, prefer_dual_unchanged));
    errs
}

/// kube's `ValidateServiceClusterIPsRelatedFields` as the allocator's
/// `initIPFamilyFields` runs it, before allocating and before validation:
/// on `svc` as the allocator has already normalized it (`old` for
/// updates); none for ExternalName Services and unchanged PreferDualStack
/// updates, which kube's allocator does not check.
pub(crate) fn cluster_ips_pre_validation(svc: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = spec_of(svc);
    if old.is_some_and(|o| matching_prefer_dual_stack(spec, spec_of(o))) {
        return Vec::new();
    }
    let old_ips = old
        .map(|o| strings(spec_of(o), "clusterIPs"))
        .unwrap_or_default();
    cluster_ips_related(spec, &ClusterIps::of(spec), &old_ips)
}

/// The allocator's `isMatchingPreferDualStackClusterIPFields`: an update
/// of a PreferDualStack Service that keeps its policy, IPs and families.
fn matching_prefer_dual_stack(spec: &Value, old: &Value) -> bool {
    fn policy(s: &Value) -> Option<&str> {
        set(s, "ipFamilyPolicy").and_then(Value::as_str)
    }
    policy(spec) == Some("PreferDualStack")
        && policy(old) == policy(spec)
        && str_of(spec, "clusterIP") == str_of(old, "clusterIP")
        && strings(spec, "clusterIPs") == strings(old, "clusterIPs")
        && strings(spec, "ipFamilies") == strings(old, "ipFamilies")
}

/// `ValidateServiceClusterIPsRelatedFields` (`clusterIP`/`clusterIPs`
/// agreement, `None`, at most two IPs of different families, `ipFamilies`
/// and `ipFamilyPolicy` values). IPs are checked with
/// `IsValidIPForLegacyField`, which kube 1.34 runs sloppily (the
/// `StrictIPCIDRValidation` gate is off); the stored IPs always pass.
fn cluster_ips_related(spec: &Value, v: &ClusterIps, old_ips: &[String]) -> Vec<FieldError> {
    if service_type(spec) == EXTERNAL_NAME {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let sp = Path::new("spec");
    let ips_path = sp.child("clusterIPs");
    let ips = v.list();
    let ips_value = string_list_value(&v.ips);
    if !v.ip.is_empty() {
        if ips.is_empty() {
            errs.push(FieldError::required(ips_path.as_str(), ""));
        } else if ips[0] != v.ip {
            errs.push(FieldError::invalid(
                ips_path.as_str(),
                ips_value.clone(),
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(FieldError::invalid(
            ips_path.as_str(),
            ips_value.clone(),
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let families = strings(spec, "ipFamilies");
    let mut seen: Vec<&str> = Vec::new();
    for (i, f) in families.iter().enumerate() {
        let at = sp.child("ipFamilies").index(i);
        if !["IPv4", "IPv6"].contains(&f.as_str()) {
            errs.push(FieldError::not_supported(
                at.as_str(),
                f.as_str(),
                &["IPv4", "IPv6"],
            ));
        }
        if seen.contains(&f.as_str()) {
            errs.push(duplicate(&at, f.as_str()));
        }
        seen.push(f);
    }
    if let Some(policy) = set(spec, "ipFamilyPolicy") {
        let p = policy.as_str().unwrap_or("");
        if !IP_FAMILY_POLICIES.contains(&p) {
            errs.push(FieldError::not_supported(
                sp.child("ipFamilyPolicy").as_str(),
                p,
                IP_FAMILY_POLICIES,
            ));
        }
    }
    let old: Vec<&str> = old_ips.iter().map(String::as_str).collect();
    let mut bad_ips = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == NONE {
            if ips.len() > 1 {
                bad_ips = true;
                errs.push(FieldError::invalid(
                    ips_path.as_str(),
                    ips_value.clone(),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let msgs = netaddr::legacy_ip_errors(ip, &old);
        bad_ips |= !msgs.is_empty();
        errs.extend(invalid_all(msgs, &ips_path.index(i), ip));
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid(
            ips_path.as_str(),
            ips_value.clone(),
            "may only hold up to 2 values",
        ));
    }
    if bad_ips {
        return errs;
    }
    if ips.len() > 1 {
        let v4 = ips.iter().any(|ip| netaddr::is_ipv4_string(ip));
        let v6 = ips.iter().any(|ip| netaddr::is_ipv6_string(ip));
        if !(v4 && v6) {
            errs.push(FieldError::invalid(
                ips_path.as_str(),
                ips_value,
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !v.headless() && !ips.is_empty() && !families.is_empty() {
        for (i, ip) in ips.iter().enumerate().take(families.len()) {
            let v6 = netaddr::is_ipv6_string(ip);
            let want = match families[i].as_str() {
                "IPv4" if v6 => "IPv4",
                "IPv6" if !v6 => "IPv6",
                _ => continue,
            };
            errs.push(FieldError::invalid(
                ips_path.index(i).as_str(),
                ip.as_str(),
                &format!("expected an {want} value as indicated by `ipFamilies[{i}]`"),
            ));
        }
    }
    errs
}

/// `validateUpgradeDowngradeClusterIPs`: the primary cluster IP never
/// changes (except to or from ExternalName), on the normalized IPs.
fn upgrade_downgrade_cluster_ips(old: &Value, spec: &Value, new: &ClusterIps) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if service_type(spec) == EXTERNAL_NAME || service_type(old) == EXTERNAL_NAME {
        return errs;
    }
    let o = ClusterIps::of(old);
    if o.headless() && new.headless() {
        return errs;
    }
    let (old_ips, new_ips) = (o.list(), new.list());
    let value = string_list_value(&new.ips);
    let at = |i: usize| Path::new("spec").child("clusterIPs").index(i);
    let changed =
        |i: usize| FieldError::invalid(at(i).as_str(), value.clone(), "may not change once set");
    if old_ips.len() == new_ips.len() {
        for (i, ip) in old_ips.iter().enumerate() {
            if *ip != new_ips[i] {
                errs.push(changed(i));
            }
        }
    } else if old_ips.len() > new_ips.len() {
        if new_ips.is_empty() {
            errs.push(FieldError::invalid(
                at(0).as_str(),
                value.clone(),
                "primary clusterIP can not be unset",
            ));
        }
        if !new_ips.is_empty() && new_ips[0] != old_ips[0] {
            errs.push(changed(0));
        }
        if new_ips.len() == 1 {
            // The policy as the allocator left it (the old one when unset).
            let policy = set(spec, "ipFamilyPolicy").or_else(|| set(old, "ipFamilyPolicy"));
            if policy.and_then(Value::as_str) != Some("SingleStack") {
                errs.push(FieldError::invalid(
                    "spec.ipFamilyPolicy",
                    policy.cloned().unwrap_or(Value::Null),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                ));
            }
        }
    } else if !old_ips.is_empty() && new_ips[0] != old_ips[0] {
        errs.push(changed(0));
    }
    errs
}

/// `validateLoadBalancerClassField`: the class is immutable while the
/// Service stays a LoadBalancer, a qualified name, and only for
/// LoadBalancers. (kube runs it from `ValidateServiceUpdate` and again from
/// `ValidateService`, so an update reports its errors twice.)
fn load_balancer_class(old: Option<&Value>, spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = Path::new("spec").child("loadBalancerClass");
    let lb = |s: &Value| service_type(s) == "LoadBalancer";
    let class = set(spec, "loadBalancerClass");
    if let Some(old) = old {
        if lb(old) && lb(spec) && set(old, "loadBalancerClass") != class {
            errs.push(FieldError::invalid(
                path.as_str(),
                class.cloned().unwrap_or(Value::Null),
                "may not change once set",
            ));
        }
    }
    match class {
        Some(c) if lb(spec) => {
            let c = c.as_str().unwrap_or("");
            errs.extend(invalid_all(
                keelson_apimachinery::names::is_qualified_name(c),
                &path,
                c,
            ));
        }
        Some(_) => errs.push(FieldError::forbidden(
            path.as_str(),
            "may only be used when `type` is 'LoadBalancer'",
        )),
        None => {}
    }
    errs
}

/// kube's `NeedsHealthCheck`.
fn needs_health_check(spec: &Value) -> bool {
    service_type(spec) == "LoadBalancer" && str_of(spec, "externalTrafficPolicy") == "Local"
}

/// `validateServiceExternalTrafficFieldsUpdate` on the health-check node
/// port the allocator keeps when the update omits it.
fn external_traffic_fields_update(old: &Value, spec: &Value) -> Vec<FieldError> {
    if !(needs_health_check(old) && needs_health_check(spec)) {
        return Vec::new();
    }
    let old_hc = int_of(old, "healthCheckNodePort").unwrap_or(0);
    let new_hc = match int_of(spec, "healthCheckNodePort").unwrap_or(0) {
        0 => old_hc,
        n => n,
    };
    if new_hc == old_hc {
        Vec::new()
    } else {
        vec![FieldError::forbidden(
            "spec.healthCheckNodePort",
            "field is immutable",
        )]
    }
}

/// `validateServicePort`.
fn validate_service_port(
    sp: &Value,
    require_name: bool,
    names: &mut Vec<String>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(sp, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(path.child("name").as_str(), ""));
    } else if !name.is_empty() {
        errs.extend(dns1123_label(name, &path.child("name")));
        if names.iter().any(|n| n == name) {
            errs.push(duplicate(&path.child("name"), name));
        } else {
            names.push(name.to_string());
        }
    }
    errs.extend(port_num(
        int_of(sp, "port").unwrap_or(0),
        &path.child("port"),
    ));
    errs.extend(protocol(sp, path));
    errs.extend(port_num_or_name(
        sp.get("targetPort"),
        &path.child("targetPort"),
    ));
    if let Some(app) = sp.get("appProtocol").and_then(Value::as_str) {
        errs.extend(invalid_all(
            keelson_apimachinery::names::is_qualified_name(app),
            &path.child("appProtocol"),
            app,
        ));
    }
    errs
}

/// Go's `%#v` of the `core.ServicePort{Protocol, Port}` key kube reports
/// duplicate ports with.
fn port_key(protocol: &str, port: i64) -> Value {
    // kube 1.34 prints the internal struct as JSON (Go field names; an
    // IntOrString of 0 is `0`).
    serde_json::json!({"Name": "", "Protocol": protocol, "AppProtocol": null, "Port": port,
        "TargetPort": 0, "NodePort": 0})
}

/// `validateService` (kube 1.34's order), on the normalized cluster IPs.
fn validate_service(
    obj: &Value,
    old: Option<&Value>,
    ips: &ClusterIps,
    cluster_ip_rules: bool,
) -> Vec<FieldError> {
    let spec = spec_of(obj);
    let sp = Path::new("spec");
    let mut errs = Vec::new();
    let ann = Path::new("metadata").child("annotations");
    if let (Some(hints), Some(mode)) = (
        annotation(obj, TOPOLOGY_HINTS_ANNOTATION),
        annotation(obj, TOPOLOGY_MODE_ANNOTATION),
    ) {
        if hints != mode {
            errs.push(FieldError::invalid(
                ann.key(TOPOLOGY_MODE_ANNOTATION).as_str(),
                mode,
                &format!(
                    "must match annotations[{TOPOLOGY_HINTS_ANNOTATION}] when both are specified"
                ),
            ));
        }
    }
    let ty = service_type(spec);
    let ports = list_of(spec, "ports");
    let headless = ips.headless();
    if ports.is_empty() && !headless && ty != EXTERNAL_NAME {
        errs.push(FieldError::required(sp.child("ports").as_str(), ""));
    }
    match ty {
        "LoadBalancer" | "NodePort" if headless => errs.push(FieldError::invalid(
            sp.child("clusterIPs").index(0).as_str(),
            NONE,
            &format!("may not be set to 'None' for {ty} services"),
        )),
        EXTERNAL_NAME => {
            let forbidden = |f: &str| {
                FieldError::forbidden(
                    sp.child(f).as_str(),
                    "may not be set for ExternalName services",
                )
            };
            if !ips.list().is_empty() {
                errs.push(forbidden("clusterIPs"));
            }
            if !list_of(spec, "ipFamilies").is_empty() {
                errs.push(forbidden("ipFamilies"));
            }
            if set(spec, "ipFamilyPolicy").is_some() {
                errs.push(forbidden("ipFamilyPolicy"));
            }
            let name = str_of(spec, "externalName");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errs.push(FieldError::required(sp.child("externalName").as_str(), ""));
            } else {
                errs.extend(dns1123_subdomain(cname, &sp.child("externalName")));
            }
        }
        _ => {}
    }
    let mut names = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        errs.extend(validate_service_port(
            p,
            ports.len() > 1,
            &mut names,
            &sp.child("ports").index(i),
        ));
    }
    if let Some(sel) = obj_of(spec, "selector") {
        errs.extend(labels(Some(sel), &sp.child("selector")));
    }
    errs.extend(session_affinity(spec, &sp));
    if cluster_ip_rules {
        let old_ips = old
            .map(|o| strings(spec_of(o), "clusterIPs"))
            .unwrap_or_default();
        errs.extend(cluster_ips_related(spec, ips, &old_ips));
    }
    errs.extend(external_ips(spec, old.map(spec_of), &sp));
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if ty.is_empty() {
        errs.push(FieldError::required(sp.child("type").as_str(), ""));
    } else if !TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            sp.child("type").as_str(),
            ty,
            TYPES,
        ));
    }
    if ty == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if int_of(p, "nodePort").unwrap_or(0) != 0 {
                errs.push(FieldError::forbidden(
                    sp.child("ports").index(i).child("nodePort").as_str(),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports: Vec<(String, i64)> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let np = int_of(p, "nodePort").unwrap_or(0);
        if np == 0 {
            continue;
        }
        let key = (str_of(p, "protocol").to_string(), np);
        if node_ports.contains(&key) {
            errs.push(duplicate(&sp.child("ports").index(i).child("nodePort"), np));
        }
        node_ports.push(key);
    }
    let mut seen: Vec<(String, i64)> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let key = (
            str_of(p, "protocol").to_string(),
            int_of(p, "port").unwrap_or(0),
        );
        if seen.contains(&key) {
            errs.push(duplicate(
                &sp.child("ports").index(i),
                port_key(&key.0, key.1),
            ));
        }
        seen.push(key);
    }
    errs.extend(source_ranges(obj, old, ty));
    if set(spec, "allocateLoadBalancerNodePorts").is_some() && ty != "LoadBalancer" {
        errs.push(FieldError::forbidden(
            sp.child("allocateLoadBalancerNodePorts").as_str(),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if ty == "LoadBalancer" && set(spec, "allocateLoadBalancerNodePorts").is_none() {
        // kube's path, without `spec.`.
        errs.push(FieldError::required("allocateLoadBalancerNodePorts", ""));
    }
    errs.extend(load_balancer_class(None, spec));
    errs.extend(external_traffic_policy(spec, ty, &sp));
    let itp = spec.get("internalTrafficPolicy").and_then(Value::as_str);
    match itp {
        None if matches!(ty, "NodePort" | "LoadBalancer" | "ClusterIP") => errs.push(
            FieldError::required(sp.child("internalTrafficPolicy").as_str(), ""),
        ),
        Some(p) if !["Cluster", "Local"].contains(&p) => errs.push(FieldError::not_supported(
            sp.child("internalTrafficPolicy").as_str(),
            p,
            &["Cluster", "Local"],
        )),
        _ => {}
    }
    if let Some(td) = set(spec, "trafficDistribution") {
        let td = td.as_str().unwrap_or("");
        if !TRAFFIC_DISTRIBUTIONS.contains(&td) {
            errs.push(FieldError::not_supported(
                sp.child("trafficDistribution").as_str(),
                td,
                TRAFFIC_DISTRIBUTIONS,
            ));
        }
    }
    errs
}

/// `sessionAffinity` and `validateClientIPAffinityConfig`.
fn session_affinity(spec: &Value, sp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let affinity = str_of(spec, "sessionAffinity");
    if affinity.is_empty() {
        errs.push(FieldError::required(
            sp.child("sessionAffinity").as_str(),
            "",
        ));
    } else if !["ClientIP", "None"].contains(&affinity) {
        errs.push(FieldError::not_supported(
            sp.child("sessionAffinity").as_str(),
            affinity,
            &["ClientIP", "None"],
        ));
    }
    let cfg_path = sp.child("sessionAffinityConfig");
    let config = set(spec, "sessionAffinityConfig");
    if affinity == "ClientIP" {
        const WHY: &str = "when session affinity type is ClientIP";
        let client = config.and_then(|c| set(c, "clientIP"));
        let cpath = cfg_path.child("clientIP");
        let tpath = cpath.child("timeoutSeconds");
        match (
            config,
            client,
            client.and_then(|c| set(c, "timeoutSeconds")),
        ) {
            (None, _, _) => errs.push(FieldError::required(cfg_path.as_str(), WHY)),
            (_, None, _) => errs.push(FieldError::required(cpath.as_str(), WHY)),
            (_, _, None) => errs.push(FieldError::required(tpath.as_str(), WHY)),
            (_, _, Some(t)) => {
                let t = t.as_i64().unwrap_or(0);
                if t <= 0 || t > 86400 {
                    errs.push(FieldError::invalid(
                        tpath.as_str(),
                        t,
                        "must be greater than 0 and less than 86400",
                    ));
                }
            }
        }
    } else if affinity == "None" && config.is_some() {
        errs.push(FieldError::forbidden(
            cfg_path.as_str(),
            "must not be set when session affinity is None",
        ));
    }
    errs
}

/// `externalIPs`: valid (sloppily, the stored ones always) and not a
/// special address (`ValidateEndpointIP`).
fn external_ips(spec: &Value, old: Option<&Value>, sp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let existing = old.map(|o| strings(o, "externalIPs")).unwrap_or_default();
    let existing: Vec<&str> = existing.iter().map(String::as_str).collect();
    for (i, ip) in strings(spec, "externalIPs").iter().enumerate() {
        let at = sp.child("externalIPs").index(i);
        let msgs = netaddr::legacy_ip_errors(ip, &existing);
        if msgs.is_empty() {
            errs.extend(invalid_all(netaddr::endpoint_ip_errors(ip), &at, ip));
        } else {
            errs.extend(invalid_all(msgs, &at, ip));
        }
    }
    errs
}

/// `loadBalancerSourceRanges` (kube's path `spec.LoadBalancerSourceRanges`,
/// values trimmed, stored ones always valid) or, without them, the
/// `service.beta.kubernetes.io/load-balancer-source-ranges` annotation
/// (checked when it changed). CIDRs are `IsValidCIDRForLegacyField`,
/// sloppy in 1.34.
fn source_ranges(obj: &Value, old: Option<&Value>, ty: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let forbidden = |p: &Path| {
        FieldError::forbidden(p.as_str(), "may only be used when `type` is 'LoadBalancer'")
    };
    let ranges = strings(spec_of(obj), "loadBalancerSourceRanges");
    if !ranges.is_empty() {
        let path = Path::new("spec").child("LoadBalancerSourceRanges");
        if ty != "LoadBalancer" {
            errs.push(forbidden(&path));
        }
        let existing: Vec<String> = old
            .map(|o| strings(spec_of(o), "loadBalancerSourceRanges"))
            .unwrap_or_default()
            .iter()
            .map(|s| s.trim().to_string())
            .collect();
        let existing: Vec<&str> = existing.iter().map(String::as_str).collect();
        for (i, r) in ranges.iter().enumerate() {
            let r = r.trim();
            errs.extend(invalid_all(
                netaddr::legacy_cidr_errors(r, &existing),
                &path.index(i),
                r,
            ));
        }
    } else if let Some(val) = annotation(obj, SOURCE_RANGES_ANNOTATION) {
        let path = Path::new("metadata")
            .child("annotations")
            .key(SOURCE_RANGES_ANNOTATION);
        if ty != "LoadBalancer" {
            errs.push(forbidden(&path));
        }
        let old_val = old.map(|o| annotation(o, SOURCE_RANGES_ANNOTATION).unwrap_or(""));
        if old_val != Some(val) {
            let val = val.trim();
            if !val.is_empty() {
                for r in val.split(',') {
                    let r = r.trim();
                    errs.extend(invalid_all(netaddr::legacy_cidr_errors(r, &[]), &path, r));
                }
            }
        }
    }
    errs
}

/// `validateServiceExternalTrafficPolicy`. A LoadBalancer with
/// `externalTrafficPolicy: Local` and no `healthCheckNodePort` is not
/// refused here: kube's allocator assigns one before validation, and
/// Keelson's after it.
fn external_traffic_policy(spec: &Value, ty: &str, sp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let accessible = matches!(ty, "LoadBalancer" | "NodePort")
        || (ty == "ClusterIP" && !list_of(spec, "externalIPs").is_empty());
    let etp = str_of(spec, "externalTrafficPolicy");
    let path = sp.child("externalTrafficPolicy");
    if !accessible {
        if !etp.is_empty() {
            errs.push(FieldError::invalid(
                path.as_str(),
                etp,
                "may only be set for externally-accessible services",
            ));
        }
    } else if etp.is_empty() {
        errs.push(FieldError::required(path.as_str(), ""));
    } else if !["Cluster", "Local"].contains(&etp) {
        errs.push(FieldError::not_supported(
            path.as_str(),
            etp,
            &["Cluster", "Local"],
        ));
    }
    let hc = int_of(spec, "healthCheckNodePort").unwrap_or(0);
    let hpath = sp.child("healthCheckNodePort");
    if !needs_health_check(spec) {
        if hc != 0 {
            errs.push(FieldError::invalid(
                hpath.as_str(),
                hc,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if hc != 0 {
        errs.extend(port_num(hc, &hpath));
    }
    errs
}

/// `ValidateServiceStatusUpdate`'s `ValidateLoadBalancerStatus`: ingress
/// only for LoadBalancers (the spec is the stored one: the status strategy
/// keeps it), each `ip` valid (sloppily; the stored ones always), `ipMode`
/// exactly when `ip` is set and supported, `hostname` a DNS-1123 subdomain
/// and not an IP.
fn validate_service_status(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = spec_of(old.unwrap_or(obj));
    let ingress_of = |o: &Value| -> Vec<Value> {
        o.get("status")
            .and_then(|s| s.get("loadBalancer"))
            .map(|lb| list_of(lb, "ingress").to_vec())
            .unwrap_or_default()
    };
    let ingress = ingress_of(obj);
    let path = Path::new("status").child("loadBalancer").child("ingress");
    if service_type(spec) != "LoadBalancer" && !ingress.is_empty() {
        errs.push(FieldError::forbidden(
            path.as_str(),
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return errs;
    }
    let existing: Vec<String> = old
        .map(ingress_of)
        .unwrap_or_default()
        .iter()
        .map(|i| str_of(i, "ip").to_string())
        .filter(|ip| !ip.is_empty())
        .collect();
    let existing: Vec<&str> = existing.iter().map(String::as_str).collect();
    for (i, ing) in ingress.iter().enumerate() {
        let at = path.index(i);
        let ip = str_of(ing, "ip");
        if !ip.is_empty() {
            errs.extend(invalid_all(
                netaddr::legacy_ip_errors(ip, &existing),
                &at.child("ip"),
                ip,
            ));
        }
        let mode_path = at.child("ipMode");
        match set(ing, "ipMode") {
            None if !ip.is_empty() => errs.push(FieldError::required(
                mode_path.as_str(),
                "must be specified when `ip` is set",
            )),
            None => {}
            Some(_) if ip.is_empty() => errs.push(FieldError::forbidden(
                mode_path.as_str(),
                "may not be specified when `ip` is not set",
            )),
            Some(m) => {
                let m = m.as_str().unwrap_or("");
                if !["Proxy", "VIP"].contains(&m) {
                    errs.push(FieldError::not_supported(
                        mode_path.as_str(),
                        m,
                        &["Proxy", "VIP"],
                    ));
                }
            }
        }
        let host = str_of(ing, "hostname");
        if !host.is_empty() {
            let hpath = at.child("hostname");
            errs.extend(dns1123_subdomain(host, &hpath));
            if netaddr::parse_ip(host).is_some() {
                errs.push(FieldError::invalid(
                    hpath.as_str(),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// `ValidateEndpoints` (create and update): each subset's addresses and
/// ports. On update, unchanged subsets are not re-checked (kube's
/// ratcheting for addresses older rules accepted).
fn validate_endpoints(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let errs = validate_endpoint_subsets(obj);
    let subsets = |o: &Value| semantic(&serde_json::json!({"s": o.get("subsets")}));
    if !errs.is_empty() && old.is_some_and(|o| subsets(o) == subsets(obj)) {
        return Vec::new();
    }
    errs
}

/// `validateEndpointSubsets`.
fn validate_endpoint_subsets(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let subsets = Path::new("subsets");
    for (i, ss) in list_of(obj, "subsets").iter().enumerate() {
        let ip = subsets.index(i);
        let addrs = list_of(ss, "addresses");
        let not_ready = list_of(ss, "notReadyAddresses");
        let ports = list_of(ss, "ports");
        if addrs.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(
                ip.as_str(),
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (j, a) in addrs.iter().enumerate() {
            errs.extend(endpoint_address(a, &ip.child("addresses").index(j)));
        }
        for (j, a) in not_ready.iter().enumerate() {
            errs.extend(endpoint_address(a, &ip.child("notReadyAddresses").index(j)));
        }
        for (j, p) in ports.iter().enumerate() {
            errs.extend(endpoint_port(
                p,
                ports.len() > 1,
                &ip.child("ports").index(j),
            ));
        }
    }
    errs
}

/// `validateEndpointAddress`: the IP (sloppily), hostname, nodeName, then
/// `ValidateEndpointIP` (which repeats an unparseable IP in its own words).
fn endpoint_address(a: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ip = str_of(a, "ip");
    let ip_path = path.child("ip");
    errs.extend(invalid_all(
        netaddr::legacy_ip_errors(ip, &[]),
        &ip_path,
        ip,
    ));
    let host = str_of(a, "hostname");
    if !host.is_empty() {
        errs.extend(dns1123_label(host, &path.child("hostname")));
    }
    if let Some(node) = a.get("nodeName").and_then(Value::as_str) {
        errs.extend(dns1123_subdomain(node, &path.child("nodeName")));
    }
    errs.extend(invalid_all(netaddr::endpoint_ip_errors(ip), &ip_path, ip));
    errs
}

/// `validateEndpointPort`.
fn endpoint_port(p: &Value, require_name: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(p, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(path.child("name").as_str(), ""));
    } else if !name.is_empty() {
        errs.extend(dns1123_label(name, &path.child("name")));
    }
    errs.extend(port_num(
        int_of(p, "port").unwrap_or(0),
        &path.child("port"),
    ));
    errs.extend(protocol(p, path));
    if let Some(app) = p.get("appProtocol").and_then(Value::as_str) {
        errs.extend(invalid_all(
            keelson_apimachinery::names::is_qualified_name(app),
            &path.child("appProtocol"),
            app,
        ));
    }
    errs
}
