//! EndpointSlice (`pkg/apis/discovery/validation`: `ValidateEndpointSlice`,
//! `ValidateEndpointSliceCreate`, `ValidateEndpointSliceUpdate`).
//!
//! IPv4/IPv6 address syntax and the special-IP checks are not done here
//! (docs/compatibility.md); FQDN addresses are.

use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::Value;

use super::util::{dns1123_label, dns1123_subdomain, duplicate, list_of, obj_of, str_of};
use super::{Path, Write};

const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 100;
const MAX_ENDPOINTS: usize = 1000;
const MAX_ZONE_HINTS: usize = 8;

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

/// `ValidateEndpointSlice` (after metadata): the endpoints are checked
/// only when they changed (kube's ratcheting for addresses validated by
/// older rules).
fn validate_endpoint_slice(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = validate_address_type(str_of(obj, "addressType"));
    errs.extend(validate_ports(list_of(obj, "ports"), &Path::new("ports")));
    let changed = old.is_none_or(|o| o.get("endpoints") != obj.get("endpoints"));
    if changed {
        errs.extend(validate_endpoints(
            list_of(obj, "endpoints"),
            str_of(obj, "addressType"),
            &Path::new("endpoints"),
        ));
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
        if ty == "FQDN" {
            for (j, a) in addrs.iter().enumerate() {
                errs.extend(fully_qualified_domain_name(
                    a.as_str().unwrap_or(""),
                    &ap.index(j),
                ));
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

/// `validateHints`: the zone hints (at most 8, unique, label values).
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
