//! EndpointSlice (`pkg/apis/discovery/validation`: `ValidateEndpointSlice`,
//! `ValidateEndpointSliceCreate`, `ValidateEndpointSliceUpdate`).
//!
//! Addresses as kube 1.34 checks them: IPv4 ones with
//! `IsValidIPForLegacyField` (sloppy: `StrictIPCIDRValidation` is off),
//! IPv6 ones with the strict `IsValidIP`, both then of their family and
//! not special (`ValidateEndpointIP`); FQDN ones as domain names.

use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::Value;

use super::netaddr;
use super::util::{
    dns1123_label, dns1123_subdomain, duplicate, invalid_all, list_of, obj_of, semantic, str_of,
};
use super::{Path, Write};

const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_ENDPOINTS: usize = 1000;
const MAX_ZONE_HINTS: usize = 8;
const MAX_NODE_HINTS: usize = 8;

/// The errors of one object of this group's `kind`.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "EndpointSlice" {
        return Vec::new();
    }
    let old = w.old();
    let mut errs = validate_endpoint_slice(obj, old);
    if let Some(old) = old {
        errs.extend(super::util::immutable(
            obj.get("addressType"),
            old.get("addressType"),
            &Path::new("addressType"),
        ));
    }
    errs
}

/// kube's `field.TooMany(path, actual, max)`.
pub(crate) fn too_many(path: &Path, actual: usize, max: usize) -> FieldError {
    let noun = if max == 1 { "item" } else { "items" };
    FieldError {
        kind: FieldErrorKind::TooMany,
        field: path.as_str().to_string(),
        value: Some(Value::from(actual)),
        detail: format!("must have at most {max} {noun}"),
    }
}

/// `ValidateEndpointSliceSpec`: the endpoints' errors are dropped when an
/// update leaves them unchanged (kube's ratcheting for addresses older
/// rules accepted; compared as `Semantic.DeepEqual`).
fn validate_endpoint_slice(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = validate_address_type(str_of(obj, "addressType"));
    errs.extend(validate_ports(list_of(obj, "ports"), &Path::new("ports")));
    let endpoint_errs = validate_endpoints(
        list_of(obj, "endpoints"),
        str_of(obj, "addressType"),
        &Path::new("endpoints"),
    );
    let eps = |o: &Value| semantic(&serde_json::json!({"e": o.get("endpoints")}));
    if old.is_none_or(|o| eps(o) != eps(obj)) {
        errs.extend(endpoint_errs);
    }
    errs
}

/// `validateAddressType`.
fn validate_address_type(ty: &str) -> Vec<FieldError> {
    let path = Path::new("addressType");
    if ty.is_empty() {
        vec![FieldError::required(path.as_str(), "")]
    } else if !ADDRESS_TYPES.contains(&ty) {
        vec![FieldError::not_supported(path.as_str(), ty, ADDRESS_TYPES)]
    } else {
        Vec::new()
    }
}

/// `validateEndpoints`.
fn validate_endpoints(endpoints: &[Value], ty: &str, path: &Path) -> Vec<FieldError> {
    if endpoints.len() > MAX_ENDPOINTS {
        return vec![too_many(path, endpoints.len(), MAX_ENDPOINTS)];
    }
    let mut errs = Vec::new();
    for (i, ep) in endpoints.iter().enumerate() {
        let ip = path.index(i);
        let ap = ip.child("addresses");
        let addrs = list_of(ep, "addresses");
        if addrs.is_empty() {
            errs.push(FieldError::required(
                ap.as_str(),
                "must contain at least 1 address",
            ));
        } else if addrs.len() > MAX_ADDRESSES {
            errs.push(too_many(&ap, addrs.len(), MAX_ADDRESSES));
        }
        for (j, a) in addrs.iter().enumerate() {
            let a = a.as_str().unwrap_or("");
            match ty {
                "IPv4" => errs.extend(ip_address(a, false, &ap, j)),
                "IPv6" => errs.extend(ip_address(a, true, &ap, j)),
                "FQDN" => errs.extend(fully_qualified_domain_name(a, &ap.index(j))),
                _ => {}
            }
        }
        if let Some(node) = ep.get("nodeName").and_then(Value::as_str) {
            errs.extend(dns1123_subdomain(node, &ip.child("nodeName")));
        }
        if let Some(host) = ep.get("hostname").and_then(Value::as_str) {
            errs.extend(dns1123_label(host, &ip.child("hostname")));
        }
        if let Some(hints) = obj_of(ep, "hints") {
            errs.extend(validate_hints(
                &Value::Object(hints.clone()),
                &ip.child("hints"),
            ));
        }
    }
    errs
}

/// One IPv4 or IPv6 address of `validateEndpoints`. The family mismatch
/// is reported at the `addresses` list itself, as kube does.
fn ip_address(a: &str, v6: bool, list: &Path, j: usize) -> Vec<FieldError> {
    let at = list.index(j);
    let msgs = if v6 {
        netaddr::ip_errors(a)
    } else {
        netaddr::legacy_ip_errors(a, &[])
    };
    if !msgs.is_empty() {
        return invalid_all(msgs, &at, a);
    }
    let mut errs = Vec::new();
    if v6 && !netaddr::is_ipv6_string(a) {
        errs.push(FieldError::invalid(
            list.as_str(),
            a,
            "must be an IPv6 address",
        ));
    } else if !v6 && !netaddr::is_ipv4_string(a) {
        errs.push(FieldError::invalid(
            list.as_str(),
            a,
            "must be an IPv4 address",
        ));
    }
    errs.extend(invalid_all(netaddr::endpoint_ip_errors(a), &at, a));
    errs
}

/// `validateHints`: the zone hints (at most 8, unique, label values), then
/// the node hints (at most 8, unique, node names).
fn validate_hints(hints: &Value, path: &Path) -> Vec<FieldError> {
    let fz = path.child("forZones");
    let zones = list_of(hints, "forZones");
    if zones.len() > MAX_ZONE_HINTS {
        return vec![too_many(&fz, zones.len(), MAX_ZONE_HINTS)];
    }
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, z) in zones.iter().enumerate() {
        let zp = fz.index(i).child("name");
        let name = str_of(z, "name");
        if seen.contains(&name) {
            errs.push(duplicate(&zp, name));
        } else {
            seen.push(name);
        }
        for m in keelson_apimachinery::names::is_valid_label_value(name) {
            errs.push(FieldError::invalid(zp.as_str(), name, &m));
        }
    }
    let fnp = path.child("forNodes");
    let nodes = list_of(hints, "forNodes");
    if nodes.len() > MAX_NODE_HINTS {
        errs.push(too_many(&fnp, nodes.len(), MAX_NODE_HINTS));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let np = fnp.index(i).child("name");
        let name = str_of(n, "name");
        if seen.contains(&name) {
            errs.push(duplicate(&np, name));
        } else {
            seen.push(name);
        }
        errs.extend(dns1123_subdomain(name, &np));
    }
    errs
}

/// `validatePorts`.
fn validate_ports(ports: &[Value], path: &Path) -> Vec<FieldError> {
    if ports.len() > MAX_PORTS {
        return vec![too_many(path, ports.len(), MAX_PORTS)];
    }
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        let ip = path.index(i);
        let name = str_of(p, "name");
        if !name.is_empty() {
            errs.extend(dns1123_label(name, &ip.child("name")));
        }
        if names.contains(&name) {
            errs.push(duplicate(&ip.child("name"), name));
        } else {
            names.push(name);
        }
        match p.get("protocol").and_then(Value::as_str) {
            None => errs.push(FieldError::required(ip.child("protocol").as_str(), "")),
            Some(proto) if !PROTOCOLS.contains(&proto) => errs.push(FieldError::not_supported(
                ip.child("protocol").as_str(),
                proto,
                PROTOCOLS,
            )),
            Some(_) => {}
        }
        if let Some(app) = p.get("appProtocol").and_then(Value::as_str) {
            for m in keelson_apimachinery::names::is_qualified_name(app) {
                errs.push(FieldError::invalid(
                    ip.child("appProtocol").as_str(),
                    app,
                    &m,
                ));
            }
        }
    }
    errs
}

/// apimachinery's `IsFullyQualifiedDomainName` (a trailing dot allowed).
fn fully_qualified_domain_name(name: &str, path: &Path) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path.as_str(), "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let msgs = keelson_apimachinery::names::is_dns1123_subdomain(name);
    if !msgs.is_empty() {
        return vec![FieldError::invalid(path.as_str(), name, &msgs.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            path.as_str(),
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let msgs = keelson_apimachinery::names::is_dns1123_label(label);
        if !msgs.is_empty() {
            return vec![FieldError::invalid(path.as_str(), label, &msgs.join(","))];
        }
    }
    Vec::new()
}
