//! Ingress, IngressClass, NetworkPolicy, ServiceCIDR and IPAddress
//! (`pkg/apis/networking/validation`). An IPAddress's name rule (a
//! canonical IP) is in `validation/objectmeta.rs`.

use keelson_apimachinery::FieldError;
use regex::Regex;
use serde_json::Value;

use super::util::{
    cidr, dns1123_subdomain, immutable, int_of, invalid_all, label_selector, list_of, parse_cidr,
    port_name_errors, port_num, regex_error, str_of,
};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if !w.subresource.is_empty() {
        return Vec::new();
    }
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let sp = Path::new("spec");
    match kind {
        "Ingress" => validate_ingress_spec(spec, &sp),
        "IngressClass" => {
            let mut errs = Vec::new();
            if let Some(old) = w.old() {
                errs.extend(immutable(
                    spec.get("controller"),
                    old.get("spec").and_then(|s| s.get("controller")),
                    &sp.child("controller"),
                ));
            }
            errs.extend(validate_ingress_class_spec(spec, &sp));
            errs
        }
        // kube's update validates the spec twice (the strategy, then
        // `ValidateNetworkPolicyUpdate`), so the causes repeat.
        "NetworkPolicy" => {
            let mut errs = validate_network_policy_spec(spec, &sp);
            if w.old().is_some() {
                errs.extend(validate_network_policy_spec(spec, &sp));
            }
            errs
        }
        "ServiceCIDR" => match w.old() {
            None => service_cidr_spec(spec),
            Some(old) => service_cidr_update(spec, old.get("spec").unwrap_or(&empty)),
        },
        "IPAddress" => {
            let mut errs = ip_address_parent(spec);
            if let Some(old) = w.old() {
                let parent = |s: &Value| {
                    s.get("parentRef")
                        .filter(|v| !v.is_null())
                        .map(super::util::semantic)
                };
                if parent(spec) != parent(old.get("spec").unwrap_or(&empty)) {
                    let value = spec
                        .get("parentRef")
                        .filter(|v| v.is_object())
                        .map_or(Value::Null, |p| {
                            serde_json::json!({"Group": str_of(p, "group"), "Resource": str_of(p, "resource"),
                                "Namespace": str_of(p, "namespace"), "Name": str_of(p, "name")})
                        });
                    errs.push(FieldError::invalid(
                        "spec.parentRef",
                        value,
                        "field is immutable",
                    ));
                }
            }
            errs
        }
        _ => Vec::new(),
    }
}

const WILDCARD_FMT: &str = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

/// kube's `IsWildcardDNS1123Subdomain`.
fn wildcard_subdomain_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 253 {
        errs.push("must be no more than 253 characters".into());
    }
    let ok = Regex::new(&format!("^{WILDCARD_FMT}$")).is_ok_and(|re| re.is_match(v));
    if !ok {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            WILDCARD_FMT,
            &["*.example.com"],
        ));
    }
    errs
}

fn host_errors(host: &str, path: &Path) -> Vec<FieldError> {
    if host.contains('*') {
        invalid_all(wildcard_subdomain_errors(host), path, host)
    } else {
        dns1123_subdomain(host, path)
    }
}

/// `ValidateIngressSpec`.
fn validate_ingress_spec(spec: &Value, sp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = list_of(spec, "rules");
    let default = spec.get("defaultBackend").filter(|v| v.is_object());
    if rules.is_empty() && default.is_none() {
        // kube 1.34 prints the rules as JSON: `null` when unset.
        let value = if spec.get("rules").is_some_and(Value::is_array) {
            Value::Array(Vec::new())
        } else {
            Value::Null
        };
        errs.push(FieldError::invalid(
            sp.as_str(),
            value,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(b) = default {
        errs.extend(ingress_backend(b, &sp.child("defaultBackend")));
    }
    for (i, rule) in rules.iter().enumerate() {
        let rp = sp.child("rules").index(i);
        let host = str_of(rule, "host");
        if !host.is_empty() {
            if host.parse::<std::net::IpAddr>().is_ok() {
                errs.push(FieldError::invalid(
                    rp.child("host").as_str(),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            errs.extend(host_errors(host, &rp.child("host")));
        }
        if let Some(http) = rule.get("http").filter(|v| v.is_object()) {
            let hp = rp.child("http");
            let paths = list_of(http, "paths");
            if paths.is_empty() {
                errs.push(FieldError::required(hp.child("paths").as_str(), ""));
            }
            for (j, p) in paths.iter().enumerate() {
                errs.extend(http_path(p, &hp.child("paths").index(j)));
            }
        }
    }
    for (i, tls) in list_of(spec, "tls").iter().enumerate() {
        let tp = sp.child("tls").index(i);
        for (j, h) in list_of(tls, "hosts").iter().enumerate() {
            let h = h.as_str().unwrap_or("");
            errs.extend(host_errors(h, &tp.child("hosts").index(j)));
        }
        let secret = str_of(tls, "secretName");
        if !secret.is_empty() {
            errs.extend(dns1123_subdomain(secret, &tp.child("secretName")));
        }
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        errs.extend(dns1123_subdomain(class, &sp.child("ingressClassName")));
    }
    errs
}

/// `validateHTTPIngressPath`.
fn http_path(p: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(ty) = p.get("pathType").and_then(Value::as_str) else {
        return vec![FieldError::required(
            path.child("pathType").as_str(),
            "pathType must be specified",
        )];
    };
    let value = str_of(p, "path");
    let pp = path.child("path");
    match ty {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    pp.as_str(),
                    value,
                    "must be an absolute path",
                ));
            }
            if !value.is_empty() {
                for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                    if value.contains(seq) {
                        errs.push(FieldError::invalid(
                            pp.as_str(),
                            value,
                            &format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suf in ["/..", "/."] {
                    if value.ends_with(suf) {
                        errs.push(FieldError::invalid(
                            pp.as_str(),
                            value,
                            &format!("cannot end with '{suf}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    pp.as_str(),
                    value,
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            path.child("pathType").as_str(),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    if let Some(b) = p.get("backend") {
        errs.extend(ingress_backend(b, &path.child("backend")));
    } else {
        errs.extend(ingress_backend(&Value::Null, &path.child("backend")));
    }
    errs
}

/// `validateIngressBackend`.
fn ingress_backend(b: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let resource = b.get("resource").filter(|v| v.is_object());
    let service = b.get("service").filter(|v| v.is_object());
    match (resource, service) {
        (Some(_), Some(_)) => {
            errs.push(FieldError::invalid(
                path.as_str(),
                "",
                "cannot set both resource and service backends",
            ));
        }
        (Some(r), None) => {
            let rp = path.child("resource");
            if let Some(g) = r.get("apiGroup").and_then(Value::as_str) {
                errs.extend(dns1123_subdomain(g, &rp.child("apiGroup")));
            }
            for key in ["kind", "name"] {
                let v = str_of(r, key);
                if v.is_empty() {
                    errs.push(FieldError::required(
                        rp.child(key).as_str(),
                        &format!("{key} is required"),
                    ));
                } else {
                    errs.extend(invalid_all(
                        crate::validation::path_segment_errors(v, false),
                        &rp.child(key),
                        v,
                    ));
                }
            }
        }
        (None, Some(s)) => {
            let spath = path.child("service");
            let name = str_of(s, "name");
            if name.is_empty() {
                errs.push(FieldError::required(spath.child("name").as_str(), ""));
            } else {
                errs.extend(invalid_all(
                    keelson_apimachinery::names::is_dns1035_label(name),
                    &spath.child("name"),
                    name,
                ));
            }
            let empty = Value::Null;
            let port = s.get("port").unwrap_or(&empty);
            let pname = str_of(port, "name");
            let pnum = int_of(port, "number").unwrap_or(0);
            let ppath = spath.child("port");
            if !pname.is_empty() && pnum != 0 {
                errs.push(FieldError::invalid(
                    path.as_str(),
                    "",
                    "cannot set both port name & port number",
                ));
            } else if !pname.is_empty() {
                errs.extend(invalid_all(
                    port_name_errors(pname),
                    &ppath.child("name"),
                    pname,
                ));
            } else if pnum != 0 {
                errs.extend(port_num(pnum, &ppath.child("number")));
            } else {
                errs.push(FieldError::required(
                    path.as_str(),
                    "port name or number is required",
                ));
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            path.as_str(),
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

/// `validateIngressClassSpec`: a domain-prefixed controller, parameters.
fn validate_ingress_class_spec(spec: &Value, sp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cp = sp.child("controller");
    let controller = str_of(spec, "controller");
    if controller.len() > 250 {
        errs.push(FieldError::too_long(
            cp.as_str(),
            "may not be more than 250 bytes",
        ));
    }
    if controller.is_empty() {
        errs.push(FieldError::required(cp.as_str(), ""));
        return errs;
    }
    match controller.split_once('/') {
        Some((host, rest)) if !host.is_empty() && !rest.is_empty() => {
            errs.extend(dns1123_subdomain(host, &cp));
            const HTTP_PATH_FMT: &str = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+";
            let ok = Regex::new(&format!("^{HTTP_PATH_FMT}$")).is_ok_and(|re| re.is_match(rest));
            if !ok {
                errs.push(FieldError::invalid(
                    cp.as_str(),
                    rest,
                    &format!("Invalid path (regex used for validation is '{HTTP_PATH_FMT}')"),
                ));
            }
        }
        _ => errs.push(FieldError::invalid(
            cp.as_str(),
            controller,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )),
    }
    if let Some(params) = spec.get("parameters").filter(|v| v.is_object()) {
        let pp = sp.child("parameters");
        if let Some(g) = params.get("apiGroup").and_then(Value::as_str) {
            errs.extend(dns1123_subdomain(g, &pp.child("apiGroup")));
        }
        for key in ["kind", "name"] {
            let v = str_of(params, key);
            if v.is_empty() {
                errs.push(FieldError::required(
                    pp.child(key).as_str(),
                    &format!("{key} is required"),
                ));
            } else {
                errs.extend(invalid_all(
                    crate::validation::path_segment_errors(v, false),
                    &pp.child(key),
                    v,
                ));
            }
        }
        let scope = str_of(params, "scope");
        match scope {
            "Cluster" => {
                if params.get("namespace").is_some_and(|v| !v.is_null()) {
                    errs.push(FieldError::forbidden(
                        pp.child("namespace").as_str(),
                        "`parameters.scope` is set to 'Cluster'",
                    ));
                }
            }
            "Namespace" => match params.get("namespace").and_then(Value::as_str) {
                None => errs.push(FieldError::required(
                    pp.child("namespace").as_str(),
                    "`parameters.scope` is set to 'Namespace'",
                )),
                Some(ns) => errs.extend(super::util::dns1123_label(ns, &pp.child("namespace"))),
            },
            "" => errs.push(FieldError::required(pp.child("scope").as_str(), "")),
            other => errs.push(FieldError::not_supported(
                pp.child("scope").as_str(),
                other,
                &["Cluster", "Namespace"],
            )),
        }
    }
    errs
}

/// `ValidateNetworkPolicySpec`.
fn validate_network_policy_spec(spec: &Value, sp: &Path) -> Vec<FieldError> {
    let empty = Value::Null;
    let mut errs = label_selector(
        spec.get("podSelector").unwrap_or(&empty),
        &sp.child("podSelector"),
    );
    for (dir, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list_of(spec, dir).iter().enumerate() {
            let rp = sp.child(dir).index(i);
            for (j, port) in list_of(rule, "ports").iter().enumerate() {
                errs.extend(network_policy_port(port, &rp.child("ports").index(j)));
            }
            for (j, peer) in list_of(rule, peers).iter().enumerate() {
                errs.extend(network_policy_peer(peer, &rp.child(peers).index(j)));
            }
        }
    }
    let types = list_of(spec, "policyTypes");
    if types.len() > 2 {
        errs.push(FieldError::invalid(
            sp.child("policyTypes").as_str(),
            Value::Array(types.to_vec()),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if t != "Ingress" && t != "Egress" {
            errs.push(FieldError::not_supported(
                sp.child("policyTypes").index(i).as_str(),
                t,
                &["Ingress", "Egress"],
            ));
        }
    }
    errs
}

/// `ValidateNetworkPolicyPort`.
fn network_policy_port(port: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(p) = port.get("protocol").and_then(Value::as_str) {
        if !["TCP", "UDP", "SCTP"].contains(&p) {
            errs.push(FieldError::not_supported(
                path.child("protocol").as_str(),
                p,
                &["TCP", "UDP", "SCTP"],
            ));
        }
    }
    let end = int_of(port, "endPort");
    let ep = path.child("endPort");
    match port.get("port") {
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            errs.extend(port_num(n, &path.child("port")));
            if let Some(e) = end {
                if e < n {
                    errs.push(FieldError::invalid(
                        ep.as_str(),
                        n,
                        "must be greater than or equal to `port`",
                    ));
                }
                errs.extend(port_num(e, &ep));
            }
        }
        Some(Value::String(s)) => {
            if let Some(e) = end {
                errs.push(FieldError::invalid(
                    ep.as_str(),
                    e,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            errs.extend(invalid_all(port_name_errors(s), &path.child("port"), s));
        }
        _ => {
            if let Some(e) = end {
                errs.push(FieldError::invalid(
                    ep.as_str(),
                    e,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`.
fn network_policy_peer(peer: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(key).filter(|v| v.is_object()) {
            n += 1;
            errs.extend(label_selector(sel, &path.child(key)));
        }
    }
    let ip_block = peer.get("ipBlock").filter(|v| v.is_object());
    if let Some(b) = ip_block {
        n += 1;
        errs.extend(ip_block_errors(b, &path.child("ipBlock")));
    }
    if n == 0 {
        errs.push(FieldError::required(path.as_str(), "must specify a peer"));
    } else if n > 1 && ip_block.is_some() {
        errs.push(FieldError::forbidden(
            path.as_str(),
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

/// `ValidateIPBlock`.
fn ip_block_errors(b: &Value, path: &Path) -> Vec<FieldError> {
    let c = str_of(b, "cidr");
    if c.is_empty() {
        return vec![FieldError::required(path.child("cidr").as_str(), "")];
    }
    let mut errs = cidr(c, &path.child("cidr"));
    let Some((addr, width, len)) = parse_cidr(c) else {
        return errs;
    };
    let mask = |l: u32| -> u128 {
        if l == 0 {
            0
        } else {
            (u128::MAX << (width - l)) & (u128::MAX >> (128 - width))
        }
    };
    for (i, e) in list_of(b, "except").iter().enumerate() {
        let e = e.as_str().unwrap_or("");
        let ep = path.child("except").index(i);
        errs.extend(cidr(e, &ep));
        let Some((ea, ew, el)) = parse_cidr(e) else {
            continue;
        };
        let contains = ew == width && (ea & mask(len)) == (addr & mask(len));
        if !contains || len >= el {
            errs.push(FieldError::invalid(
                ep.as_str(),
                e,
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

/// `validateServiceCIDRSpec` at `spec.cidrs`: one or two canonical CIDRs,
/// at most one per IP family.
fn service_cidr_spec(spec: &Value) -> Vec<FieldError> {
    let cp = Path::new("spec").child("cidrs");
    let cidrs: Vec<&str> = list_of(spec, "cidrs")
        .iter()
        .map(|c| c.as_str().unwrap_or_default())
        .collect();
    if cidrs.is_empty() {
        return vec![FieldError::required(
            cp.as_str(),
            "at least one CIDR required",
        )];
    }
    if cidrs.len() > 2 {
        // kube prints the internal spec struct.
        return vec![FieldError::invalid(
            cp.as_str(),
            serde_json::json!({ "CIDRs": cidrs }),
            "may only hold up to 2 values",
        )];
    }
    let mut errs = Vec::new();
    for (i, c) in cidrs.iter().enumerate() {
        errs.extend(invalid_all(super::netaddr::cidr_errors(c), &cp.index(i), c));
    }
    if let [a, b] = cidrs[..] {
        let fa = super::netaddr::cidr_family(a);
        if fa.is_some() && fa == super::netaddr::cidr_family(b) {
            errs.push(FieldError::invalid(
                cp.as_str(),
                serde_json::json!(cidrs),
                "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
            ));
        }
    }
    errs
}

/// `ValidateServiceCIDRUpdate`: the CIDRs are fixed, except that a
/// single-family ServiceCIDR may add its second family.
fn service_cidr_update(spec: &Value, old: &Value) -> Vec<FieldError> {
    let cp = Path::new("spec").child("cidrs");
    let strs = |s: &Value| -> Vec<String> {
        list_of(s, "cidrs")
            .iter()
            .map(|c| c.as_str().unwrap_or_default().to_string())
            .collect()
    };
    let (new, was) = (strs(spec), strs(old));
    let mut errs = Vec::new();
    if new.len() == was.len() {
        for (i, (n, o)) in new.iter().zip(&was).enumerate() {
            if n != o {
                errs.push(FieldError::invalid(
                    cp.index(i).as_str(),
                    n.as_str(),
                    "field is immutable",
                ));
            }
        }
    } else if was.len() == 1 && new.len() == 2 {
        if new[0] != was[0] {
            errs.push(FieldError::invalid(
                cp.index(0).as_str(),
                new[0].as_str(),
                "field is immutable",
            ));
        }
        errs.extend(service_cidr_spec(spec));
    } else {
        let value = spec
            .get("cidrs")
            .filter(|v| v.is_array())
            .cloned()
            .unwrap_or(Value::Null);
        errs.push(FieldError::invalid(
            cp.as_str(),
            value,
            "field is immutable",
        ));
    }
    errs
}

/// `validateIPAddressParentReference`: required, with a resource and a
/// name (path segments), an optional DNS-subdomain group and path-segment
/// namespace.
fn ip_address_parent(spec: &Value) -> Vec<FieldError> {
    let pp = Path::new("spec").child("parentRef");
    let Some(parent) = spec.get("parentRef").filter(|v| v.is_object()) else {
        return vec![FieldError::required(pp.as_str(), "")];
    };
    let mut errs = Vec::new();
    let group = str_of(parent, "group");
    if !group.is_empty() {
        errs.extend(dns1123_subdomain(group, &pp.child("group")));
    }
    for (key, required) in [("resource", true), ("name", true), ("namespace", false)] {
        let v = str_of(parent, key);
        if v.is_empty() {
            if required {
                errs.push(FieldError::required(pp.child(key).as_str(), ""));
            }
        } else {
            errs.extend(invalid_all(
                crate::validation::path_segment_errors(v, false),
                &pp.child(key),
                v,
            ));
        }
    }
    errs
}
