//! Service and Endpoints (`pkg/apis/core/validation`: `ValidateService*`, `ValidateEndpoints*`).
//!
//! The cluster IP, IP family and node port rules are the Service
//! allocator's (`keelson_controllers::service_alloc`), not repeated here.

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{
    dns1123_label, dns1123_subdomain, duplicate, int_of, invalid_all, labels, list_of, obj_of,
    port_num, port_num_or_name, str_of,
};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "Service" if w.subresource.is_empty() => validate_service(obj),
        "Endpoints" => validate_endpoints(obj),
        _ => Vec::new(),
    }
}

fn is_headless(spec: &Value) -> bool {
    let ips = list_of(spec, "clusterIPs");
    if ips.is_empty() {
        str_of(spec, "clusterIP") == "None"
    } else {
        ips.len() == 1 && ips[0].as_str() == Some("None")
    }
}

const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

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

/// `ValidateService` (without the cluster IP rules, see the module doc).
fn validate_service(obj: &Value) -> Vec<FieldError> {
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let sp = Path::new("spec");
    let mut errs = Vec::new();
    let ty = str_of(spec, "type");
    let ports = list_of(spec, "ports");
    let headless = is_headless(spec);
    if ports.is_empty() && !headless && ty != "ExternalName" {
        errs.push(FieldError::required(sp.child("ports").as_str(), ""));
    }
    match ty {
        "LoadBalancer" => {
            for (i, p) in ports.iter().enumerate() {
                if int_of(p, "port") == Some(10250) {
                    errs.push(FieldError::invalid(
                        sp.child("ports").index(i).as_str(),
                        10250,
                        "may not expose port 10250 externally since it is used by kubelet",
                    ));
                }
            }
        }
        "ExternalName" => {
            if !list_of(spec, "clusterIPs").is_empty() {
                errs.push(FieldError::forbidden(
                    sp.child("clusterIPs").as_str(),
                    "may not be set for ExternalName services",
                ));
            }
            if !list_of(spec, "ipFamilies").is_empty() {
                errs.push(FieldError::forbidden(
                    sp.child("ipFamilies").as_str(),
                    "may not be set for ExternalName services",
                ));
            }
            if spec.get("ipFamilyPolicy").is_some_and(|v| !v.is_null()) {
                errs.push(FieldError::forbidden(
                    sp.child("ipFamilyPolicy").as_str(),
                    "may not be set for ExternalName services",
                ));
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
    if affinity == "ClientIP" {
        let timeout = spec
            .get("sessionAffinityConfig")
            .and_then(|c| c.get("clientIP"))
            .and_then(|c| c.get("timeoutSeconds"))
            .and_then(Value::as_i64);
        let tpath = cfg_path.child("clientIP").child("timeoutSeconds");
        match timeout {
            Some(t) if t > 0 && t <= 86400 => {}
            Some(t) => errs.push(FieldError::invalid(
                tpath.as_str(),
                t,
                "must be greater than 0 and less than 86400",
            )),
            None => {}
        }
    } else if affinity == "None"
        && spec
            .get("sessionAffinityConfig")
            .is_some_and(|v| !v.is_null())
    {
        errs.push(FieldError::forbidden(
            cfg_path.as_str(),
            "must not be set when session affinity is None",
        ));
    }
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
            errs.push(super::util::duplicate(
                &sp.child("ports").index(i),
                port_key(&key.0, key.1),
            ));
        }
        seen.push(key);
    }
    if !list_of(spec, "loadBalancerSourceRanges").is_empty() && ty != "LoadBalancer" {
        errs.push(FieldError::forbidden(
            "spec.LoadBalancerSourceRanges",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if spec
        .get("allocateLoadBalancerNodePorts")
        .is_some_and(|v| !v.is_null())
        && ty != "LoadBalancer"
    {
        errs.push(FieldError::forbidden(
            sp.child("allocateLoadBalancerNodePorts").as_str(),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if ty == "LoadBalancer"
        && spec
            .get("allocateLoadBalancerNodePorts")
            .is_none_or(Value::is_null)
    {
        errs.push(FieldError::required("allocateLoadBalancerNodePorts", ""));
    }
    if let Some(class) = spec.get("loadBalancerClass").and_then(Value::as_str) {
        if ty != "LoadBalancer" {
            errs.push(FieldError::forbidden(
                sp.child("loadBalancerClass").as_str(),
                "may only be used when `type` is 'LoadBalancer'",
            ));
        } else {
            errs.extend(invalid_all(
                keelson_apimachinery::names::is_qualified_name(class),
                &sp.child("loadBalancerClass"),
                class,
            ));
        }
    }
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
    errs
}

/// `validateServiceExternalTrafficPolicy`.
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
    if hc != 0 {
        let hpath = sp.child("healthCheckNodePort");
        if ty != "LoadBalancer" {
            errs.push(FieldError::invalid(
                hpath.as_str(),
                hc,
                "may only be set when `type` is 'LoadBalancer'",
            ));
        } else if etp != "Local" {
            errs.push(FieldError::invalid(
                hpath.as_str(),
                hc,
                "may only be set when `externalTrafficPolicy` is 'Local'",
            ));
        } else {
            errs.extend(port_num(hc, &hpath));
        }
    }
    errs
}

/// `ValidateEndpoints`: each subset's addresses and ports.
fn validate_endpoints(obj: &Value) -> Vec<FieldError> {
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

/// `validateEpAddress`.
fn endpoint_address(a: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ip = str_of(a, "ip");
    if ip.parse::<std::net::IpAddr>().is_err() {
        errs.push(FieldError::invalid(
            path.child("ip").as_str(),
            ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    let host = str_of(a, "hostname");
    if !host.is_empty() {
        errs.extend(dns1123_label(host, &path.child("hostname")));
    }
    if let Some(node) = a.get("nodeName").and_then(Value::as_str) {
        for m in keelson_apimachinery::names::is_dns1123_subdomain(node) {
            errs.push(FieldError::invalid(
                path.child("nodeName").as_str(),
                node,
                &m,
            ));
        }
    }
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
    errs
}
