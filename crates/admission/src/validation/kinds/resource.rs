//! resource.k8s.io (DRA): DeviceClass, ResourceClaim, ResourceClaimTemplate
//! and ResourceSlice (`pkg/apis/resource/validation`: `ValidateDeviceClass`,
//! `ValidateResourceClaim`, `ValidateResourceClaimStatusUpdate`,
//! `ValidateResourceClaimTemplate`, `ValidateResourceSlice` and their
//! updates).
//!
//! kube validates the internal type, whose shape is `v1`'s: a `v1beta1`
//! object (flat requests, `basic` devices) is read through [`as_v1`] so the
//! paths are the ones kube reports. Absent `allocationMode`, `count` and
//! toleration `operator` are read as their defaults, since kube validates
//! after defaulting at every version.

use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::{Map, Value};

use super::util::{
    dns1123_label, dns1123_subdomain, duplicate, immutable, int_of, list_of, obj_of, regex_error,
    str_of,
};
use super::{Path, Write};

/// `resource.DeviceRequestsMaxSize` (also constraint/config request lists
/// and allocation results).
const DEVICE_REQUESTS_MAX: usize = 32;
/// `resource.FirstAvailableDeviceRequestMaxSize`.
const FIRST_AVAILABLE_MAX: usize = 8;
/// `resource.DeviceConstraintsMaxSize`.
const CONSTRAINTS_MAX: usize = 32;
/// `resource.DeviceConfigMaxSize`.
const CONFIG_MAX: usize = 32;
/// `resource.DeviceSelectorsMaxSize`.
const SELECTORS_MAX: usize = 32;
/// `resource.CELSelectorExpressionMaxLength`.
const CEL_MAX_LEN: usize = 10 * 1024;
/// `resource.OpaqueParametersMaxLength`.
const OPAQUE_PARAMETERS_MAX: usize = 10 * 1024;
/// `resource.ResourceClaimReservedForMaxSize`.
const RESERVED_FOR_MAX: usize = 256;
/// `resource.ResourceSliceMaxDevices`.
const SLICE_MAX_DEVICES: usize = 128;
/// `resource.ResourceSliceMaxAttributesAndCapacitiesPerDevice`.
const MAX_ATTRS_AND_CAPS: usize = 32;
/// `resource.DeviceAttributeMaxValueLength`.
const ATTR_VALUE_MAX: usize = 64;
/// `resource.DeviceMaxIDLength`.
const MAX_ID_LEN: usize = 32;
/// `resource.PoolNameMaxLength`.
const POOL_NAME_MAX: usize = 253;
/// `resource.DeviceTaintsMaxLength`.
const TAINTS_MAX: usize = 4;

const ALLOCATION_MODES: &[&str] = &["All", "ExactCount"];
const TOLERATION_OPERATORS: &[&str] = &["Equal", "Exists"];
const TAINT_EFFECTS: &[&str] = &["NoExecute", "NoSchedule"];

/// The errors of one object of this group's `kind`.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let obj = &as_v1(kind, obj);
    let old = w.old().map(|o| as_v1(kind, o));
    let old = old.as_ref();
    match kind {
        "DeviceClass" => validate_device_class_spec(spec(obj), old.map(spec), &Path::new("spec")),
        "ResourceClaim" => match old {
            Some(old) if w.is_status() => validate_resource_claim_status_update(obj, old),
            Some(old) => immutable(obj.get("spec"), old.get("spec"), &Path::new("spec")),
            None => validate_device_claim(
                spec(obj).get("devices").unwrap_or(&Value::Null),
                &Path::new("spec").child("devices"),
            ),
        },
        "ResourceClaimTemplate" => match old {
            Some(old) => immutable(obj.get("spec"), old.get("spec"), &Path::new("spec")),
            None => {
                let p = Path::new("spec").child("spec").child("devices");
                let devices = spec(spec(obj)).get("devices").unwrap_or(&Value::Null);
                validate_device_claim(devices, &p)
            }
        },
        "ResourceSlice" => validate_resource_slice_spec(spec(obj), old.map(spec)),
        _ => Vec::new(),
    }
}

fn spec(obj: &Value) -> &Value {
    obj.get("spec")
        .filter(|s| s.is_object())
        .unwrap_or(&Value::Null)
}

/// The object in `v1`'s shape (the registry's conversion of a `v1beta1`
/// object; other versions are returned as they are).
fn as_v1(kind: &str, obj: &Value) -> Value {
    let mut obj = obj.clone();
    if str_of(&obj, "apiVersion") == "resource.k8s.io/v1beta1" {
        keelson_registry::conversion::dra::v1beta1_to_v1(kind, &mut obj);
    }
    obj
}

fn too_many(path: &Path, n: usize, max: usize) -> FieldError {
    FieldError {
        kind: FieldErrorKind::TooMany,
        field: path.as_str().to_string(),
        value: Some(Value::from(n)),
        detail: format!("must have at most {max} items"),
    }
}

fn too_long(path: &Path, max: usize) -> FieldError {
    FieldError::too_long(path.as_str(), &format!("may not be more than {max} bytes"))
}

fn required(path: &Path, detail: &str) -> FieldError {
    FieldError::required(path.as_str(), detail)
}

/// `corevalidation.ValidateCSIDriverName` (kube's driver name rule).
fn validate_driver_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(required(path, ""));
    }
    if name.len() > 63 {
        errs.push(too_long(path, 63));
    }
    for m in keelson_apimachinery::names::is_dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(path.as_str(), name, &m));
    }
    errs
}

/// `validatePoolName`: required, at most 253 bytes, each `/`-separated part
/// a DNS subdomain.
fn validate_pool_name(name: &str, path: &Path) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![required(path, "")];
    }
    let mut errs = Vec::new();
    if name.len() > POOL_NAME_MAX {
        errs.push(too_long(path, POOL_NAME_MAX));
    }
    for part in name.split('/') {
        errs.extend(dns1123_subdomain(part, path));
    }
    errs
}

/// `metav1validation.ValidateLabelName`.
fn validate_label_name(name: &str, path: &Path) -> Vec<FieldError> {
    keelson_apimachinery::names::is_qualified_name(name)
        .into_iter()
        .map(|m| FieldError::invalid(path.as_str(), name, &m))
        .collect()
}

/// `validateLabelValue`.
fn validate_label_value(value: &str, path: &Path) -> Vec<FieldError> {
    keelson_apimachinery::names::is_valid_label_value(value)
        .into_iter()
        .map(|m| FieldError::invalid(path.as_str(), value, &m))
        .collect()
}

/// `validateDeviceClaim`: requests, constraints and config.
fn validate_device_claim(devices: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let requests = list_of(devices, "requests");
    let names = RequestNames::of(requests);
    let rp = path.child("requests");
    if requests.len() > DEVICE_REQUESTS_MAX {
        errs.push(too_many(&rp, requests.len(), DEVICE_REQUESTS_MAX));
    } else {
        for (i, r) in requests.iter().enumerate() {
            errs.extend(validate_device_request(r, &rp.index(i)));
        }
        errs.extend(duplicates(requests, |r| str_of(r, "name"), &rp));
    }
    let constraints = list_of(devices, "constraints");
    let cp = path.child("constraints");
    if constraints.len() > CONSTRAINTS_MAX {
        errs.push(too_many(&cp, constraints.len(), CONSTRAINTS_MAX));
    } else {
        for (i, c) in constraints.iter().enumerate() {
            errs.extend(validate_device_constraint(c, &cp.index(i), &names));
        }
    }
    let config = list_of(devices, "config");
    let fp = path.child("config");
    if config.len() > CONFIG_MAX {
        errs.push(too_many(&fp, config.len(), CONFIG_MAX));
    } else {
        for (i, c) in config.iter().enumerate() {
            let p = fp.index(i);
            errs.extend(validate_request_refs(c, &p.child("requests"), &names));
            errs.extend(validate_device_configuration(c, &p));
        }
    }
    errs
}

/// `Duplicate value` errors for items whose `key` repeats an earlier one.
fn duplicates<'a>(
    items: &'a [Value],
    key: impl Fn(&'a Value) -> &'a str,
    path: &Path,
) -> Vec<FieldError> {
    let mut seen = std::collections::HashSet::new();
    let mut errs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let k = key(item);
        if !seen.insert(k) {
            errs.push(duplicate(&path.index(i), k));
        }
    }
    errs
}

/// The claim's request names, each with its subrequest names.
struct RequestNames<'a>(Vec<(&'a str, Vec<&'a str>)>);

impl<'a> RequestNames<'a> {
    fn of(requests: &'a [Value]) -> Self {
        RequestNames(
            requests
                .iter()
                .map(|r| {
                    let subs = list_of(r, "firstAvailable")
                        .iter()
                        .map(|s| str_of(s, "name"))
                        .collect();
                    (str_of(r, "name"), subs)
                })
                .collect(),
        )
    }

    /// `requestNames.Has`: `req` or `req/sub`.
    fn has(&self, name: &str) -> bool {
        let mut parts = name.split('/');
        let (Some(req), sub, None) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        self.0
            .iter()
            .any(|(n, subs)| *n == req && sub.is_none_or(|s| subs.contains(&s)))
    }
}

const REQUEST_REF_MSG: &str =
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

/// The `requests` list of a constraint or config: a set of at most 32
/// references to the claim's requests (`validateRequestNameRef`).
fn validate_request_refs(obj: &Value, path: &Path, names: &RequestNames<'_>) -> Vec<FieldError> {
    let refs = list_of(obj, "requests");
    if refs.len() > DEVICE_REQUESTS_MAX {
        return vec![too_many(path, refs.len(), DEVICE_REQUESTS_MAX)];
    }
    let mut errs = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        let name = r.as_str().unwrap_or("");
        let p = path.index(i);
        let segments: Vec<&str> = name.split('/').collect();
        if segments.len() > 2 {
            errs.push(FieldError::invalid(p.as_str(), name, REQUEST_REF_MSG));
            continue;
        }
        for s in &segments {
            errs.extend(dns1123_label(s, &p));
        }
        if !names.has(name) {
            errs.push(FieldError::invalid(p.as_str(), name, REQUEST_REF_MSG));
        }
    }
    errs.extend(duplicates(refs, |r| r.as_str().unwrap_or(""), path));
    errs
}

/// `validateDeviceRequest`: a DNS-label name and exactly one of `exactly`
/// and `firstAvailable`.
fn validate_device_request(r: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = dns1123_label(str_of(r, "name"), &path.child("name"));
    let first = list_of(r, "firstAvailable");
    let exactly = r.get("exactly").filter(|e| e.is_object());
    match (first.is_empty(), exactly) {
        (true, None) => errs.push(required(
            path,
            "exactly one of `exactly` or `firstAvailable` is required",
        )),
        (false, Some(_)) => errs.push(FieldError::invalid(
            path.as_str(),
            Value::Null,
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )),
        (false, None) => {
            let fp = path.child("firstAvailable");
            if first.len() > FIRST_AVAILABLE_MAX {
                errs.push(too_many(&fp, first.len(), FIRST_AVAILABLE_MAX));
            } else {
                for (i, s) in first.iter().enumerate() {
                    let p = fp.index(i);
                    errs.extend(dns1123_label(str_of(s, "name"), &p.child("name")));
                    errs.extend(validate_exact_request(s, &p));
                }
                errs.extend(duplicates(first, |s| str_of(s, "name"), &fp));
            }
        }
        (true, Some(e)) => errs.extend(validate_exact_request(e, &path.child("exactly"))),
    }
    errs
}

/// `validateExactDeviceRequest` (also the body of a subrequest): class,
/// selectors, allocation mode and count, tolerations.
fn validate_exact_request(r: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let class = str_of(r, "deviceClassName");
    let cp = path.child("deviceClassName");
    if class.is_empty() {
        errs.push(required(&cp, ""));
    } else {
        errs.extend(dns1123_subdomain(class, &cp));
    }
    errs.extend(validate_selectors(
        list_of(r, "selectors"),
        &path.child("selectors"),
        false,
    ));
    let mode = r
        .get("allocationMode")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .unwrap_or("ExactCount");
    let count = int_of(r, "count").unwrap_or(0);
    match mode {
        "All" if count != 0 => errs.push(FieldError::invalid(
            path.child("count").as_str(),
            count,
            "must not be specified when allocationMode is 'All'",
        )),
        // kube defaults an unset (zero) count to 1 before validating.
        "ExactCount" if count < 0 => errs.push(FieldError::invalid(
            path.child("count").as_str(),
            count,
            "must be greater than zero",
        )),
        "All" | "ExactCount" => {}
        other => errs.push(FieldError::not_supported(
            path.child("allocationMode").as_str(),
            other,
            ALLOCATION_MODES,
        )),
    }
    let tp = path.child("tolerations");
    for (i, t) in list_of(r, "tolerations").iter().enumerate() {
        errs.extend(validate_device_toleration(t, &tp.index(i)));
    }
    errs
}

/// `validateSelectorSlice`: at most 32 selectors, each with a CEL
/// expression of at most 10 KiB that compiles in DRA's environment
/// (`validateCELSelector`). `stored` (an unchanged DeviceClass's
/// selectors) is kube's `StoredExpressions` environment, which differs
/// from the new expressions' only by kube 1.34's `ext.Lists` v3, absent
/// from keelson-cel: both compile alike here.
fn validate_selectors(selectors: &[Value], path: &Path, _stored: bool) -> Vec<FieldError> {
    if selectors.len() > SELECTORS_MAX {
        return vec![too_many(path, selectors.len(), SELECTORS_MAX)];
    }
    let mut errs = Vec::new();
    for (i, s) in selectors.iter().enumerate() {
        let p = path.index(i);
        match s.get("cel").filter(|c| c.is_object()) {
            None => errs.push(required(&p.child("cel"), "")),
            Some(cel) => {
                let expr = str_of(cel, "expression");
                let ep = p.child("cel").child("expression");
                if expr.len() > CEL_MAX_LEN {
                    // kube does not compile a too long expression
                    errs.push(too_long(&ep, CEL_MAX_LEN));
                } else {
                    errs.extend(compile_selector(expr, &ep));
                }
            }
        }
    }
    errs
}

/// `resourceapi.CELSelectorExpressionMaxCost`.
const CEL_MAX_COST: u64 = 1_000_000;

/// kube's DRA CEL environment (`dynamic-resource-allocation/cel`, with
/// `DRAConsumableCapacity` off as 1.34 ships it, so no
/// `device.allowMultipleAllocations`): `device` of type
/// `kubernetes.DRADevice` with `driver`, `attributes` (domain → id → any
/// value) and `capacity` (domain → id → quantity), each map bounded by
/// `ResourceSliceMaxAttributesAndCapacitiesPerDevice` for the cost
/// estimate, plus `cel.bind`. Declared as a schema so the estimator sees
/// the bounds; attribute and capacity values are `dyn`.
static DRA_ENV: std::sync::LazyLock<keelson_cel::expr::Env> = std::sync::LazyLock::new(|| {
    let per_device = MAX_ATTRS_AND_CAPS as u64;
    let nested = |value: Value| {
        serde_json::json!({"type": "object", "maxProperties": per_device,
            "additionalProperties": {"type": "object", "maxProperties": per_device,
                "additionalProperties": value}})
    };
    let any = serde_json::json!({"x-kubernetes-int-or-string": true});
    let device = serde_json::json!({"type": "object", "properties": {
        // a schema's maxLength counts code points (4 bytes each):
        // 16 bounds the driver name near its 63 bytes
        "driver": {"type": "string", "maxLength": 16},
        "attributes": nested(any.clone()),
        "capacity": nested(any),
    }});
    let mut env = keelson_cel::expr::Env::new();
    env.declare(
        "device",
        keelson_cel::expr::Type::from_schema(&device, false),
    );
    env.declare_bindings();
    env
});

/// `validateCELSelector`'s compile (`CompileCELExpression`, then the
/// estimated cost against `CELSelectorExpressionMaxCost`), with kube's
/// `convertCELErrorToValidationError`.
fn compile_selector(expr: &str, path: &Path) -> Option<FieldError> {
    use keelson_cel::expr::{Expression, Returns};
    let invalid = |detail: &str| Some(FieldError::invalid(path.as_str(), expr, detail));
    match Expression::compile_costed(expr, &DRA_ENV, Returns::Any) {
        Err(detail) => invalid(&detail),
        Ok((_, ty, cost)) => {
            let name = match ty.name() {
                // the declared object type's name
                n if n == "object" => "kubernetes.DRADevice".to_string(),
                n => n,
            };
            if name != "bool" && name != "dyn" {
                invalid(&format!(
                    "must evaluate to bool or the unknown type, not {name}"
                ))
            } else if cost > CEL_MAX_COST {
                Some(FieldError::forbidden(
                    path.as_str(),
                    "too complex, exceeds cost limit",
                ))
            } else {
                None
            }
        }
    }
}

/// `validateDeviceToleration`.
fn validate_device_toleration(t: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let key = str_of(t, "key");
    if !key.is_empty() {
        errs.extend(validate_label_name(key, &path.child("key")));
    }
    let value = str_of(t, "value");
    let op = t
        .get("operator")
        .and_then(Value::as_str)
        .filter(|o| !o.is_empty())
        .unwrap_or("Equal");
    match op {
        "Exists" if !value.is_empty() => errs.push(FieldError::invalid(
            path.child("value").as_str(),
            value,
            "must be empty for operator `Exists`",
        )),
        "Exists" => {}
        "Equal" => errs.extend(validate_label_value(value, &path.child("value"))),
        other => errs.push(FieldError::not_supported(
            path.child("operator").as_str(),
            other,
            TOLERATION_OPERATORS,
        )),
    }
    let effect = str_of(t, "effect");
    if !effect.is_empty() && !TAINT_EFFECTS.contains(&effect) {
        errs.push(FieldError::not_supported(
            path.child("effect").as_str(),
            effect,
            TAINT_EFFECTS,
        ));
    }
    errs
}

/// `validateDeviceConstraint`: its requests and a fully qualified
/// `matchAttribute`.
fn validate_device_constraint(c: &Value, path: &Path, names: &RequestNames<'_>) -> Vec<FieldError> {
    let mut errs = validate_request_refs(c, &path.child("requests"), names);
    match c.get("matchAttribute").and_then(Value::as_str) {
        Some(name) => errs.extend(validate_fully_qualified_name(
            name,
            &path.child("matchAttribute"),
        )),
        None => errs.push(required(&path.child("matchAttribute"), "")),
    }
    errs
}

/// `validateDeviceConfiguration`: an `opaque` entry with a driver name and
/// JSON-object parameters of at most 10 KiB.
fn validate_device_configuration(c: &Value, path: &Path) -> Vec<FieldError> {
    let op = path.child("opaque");
    let Some(opaque) = c.get("opaque").filter(|o| o.is_object()) else {
        return vec![required(&op, "")];
    };
    let mut errs = validate_driver_name(str_of(opaque, "driver"), &op.child("driver"));
    let pp = op.child("parameters");
    match opaque.get("parameters") {
        None | Some(Value::Null) => errs.push(required(&pp, "")),
        Some(v) => {
            let len = serde_json::to_string(v).map_or(0, |s| s.len());
            if len > OPAQUE_PARAMETERS_MAX {
                errs.push(too_long(&pp, OPAQUE_PARAMETERS_MAX));
            } else if !v.is_object() {
                errs.push(FieldError::invalid(
                    pp.as_str(),
                    "<value omitted>",
                    "must be a valid JSON object",
                ));
            }
        }
    }
    errs
}

/// `validateQualifiedName`: a C identifier, optionally prefixed with a
/// driver-name domain and `/`.
fn validate_qualified_name(name: &str, path: &Path) -> Vec<FieldError> {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [id] => validate_c_identifier(id, path),
        [domain, id] => {
            let mut errs = if domain.is_empty() {
                vec![FieldError::invalid(
                    path.as_str(),
                    "",
                    "the domain must not be empty",
                )]
            } else {
                validate_driver_name(domain, path)
            };
            if id.is_empty() {
                errs.push(FieldError::invalid(
                    path.as_str(),
                    "",
                    "the name must not be empty",
                ));
            } else {
                errs.extend(validate_c_identifier(id, path));
            }
            errs
        }
        _ => vec![FieldError::invalid(
            path.as_str(),
            name,
            "must not contain more than one slash",
        )],
    }
}

/// `validateFullyQualifiedName`: a qualified name with a domain.
fn validate_fully_qualified_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_qualified_name(name, path);
    if !name.contains('/') {
        errs.push(FieldError::invalid(
            path.as_str(),
            name,
            "a fully qualified name must be a domain and a name separated by a slash",
        ));
    }
    errs
}

/// `validateCIdentifier`: at most 32 bytes, kube's `IsCIdentifier`.
fn validate_c_identifier(id: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if id.len() > MAX_ID_LEN {
        errs.push(too_long(path, MAX_ID_LEN));
    }
    let mut bytes = id.bytes();
    let ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !ok {
        errs.push(FieldError::invalid(
            path.as_str(),
            id,
            &regex_error(
                "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'",
                "[A-Za-z_][A-Za-z0-9_]*",
                &["my_name", "MY_NAME", "MyName"],
            ),
        ));
    }
    errs
}

/// `validateDeviceClassSpec`: selectors and config; the expressions and
/// config entries of unchanged lists are not revalidated on update.
fn validate_device_class_spec(spec: &Value, old: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let unchanged = |key: &str| old.is_some_and(|o| o.get(key) == spec.get(key));
    errs.extend(validate_selectors(
        list_of(spec, "selectors"),
        &path.child("selectors"),
        unchanged("selectors"),
    ));
    let config = list_of(spec, "config");
    let cp = path.child("config");
    if config.len() > CONFIG_MAX {
        errs.push(too_many(&cp, config.len(), CONFIG_MAX));
    } else if !unchanged("config") {
        for (i, c) in config.iter().enumerate() {
            errs.extend(validate_device_configuration(c, &cp.index(i)));
        }
    }
    errs
}

/// `validateResourceClaimStatusUpdate` (after `ValidateObjectMetaUpdate`,
/// which the dispatcher runs).
fn validate_resource_claim_status_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sp = Path::new("status");
    let status = obj.get("status").unwrap_or(&Value::Null);
    let old_status = old.get("status").unwrap_or(&Value::Null);
    let reserved = list_of(status, "reservedFor");
    let rp = sp.child("reservedFor");
    if reserved.len() > RESERVED_FOR_MAX {
        errs.push(too_many(&rp, reserved.len(), RESERVED_FOR_MAX));
    } else {
        for (i, r) in reserved.iter().enumerate() {
            let p = rp.index(i);
            for f in ["resource", "name", "uid"] {
                if str_of(r, f).is_empty() {
                    errs.push(required(&p.child(f), ""));
                }
            }
        }
        errs.extend(duplicates(reserved, |r| str_of(r, "uid"), &rp));
    }
    let alloc = status.get("allocation").filter(|a| a.is_object());
    let old_alloc = old_status.get("allocation").filter(|a| a.is_object());
    let ids: Vec<String> = alloc
        .map(|a| a.get("devices").unwrap_or(&Value::Null))
        .map(|d| list_of(d, "results").iter().map(device_id).collect())
        .unwrap_or_default();
    let dp = sp.child("devices");
    let devices = list_of(status, "devices");
    for (i, d) in devices.iter().enumerate() {
        let p = dp.index(i);
        errs.extend(validate_driver_name(
            str_of(d, "driver"),
            &p.child("driver"),
        ));
        errs.extend(validate_pool_name(str_of(d, "pool"), &p.child("pool")));
        errs.extend(dns1123_label(str_of(d, "device"), &p.child("device")));
        let id = device_id(d);
        if !ids.contains(&id) {
            errs.push(FieldError::invalid(
                p.as_str(),
                id,
                "must be an allocated device in the claim",
            ));
        }
    }
    if !reserved.is_empty() {
        if alloc.is_none() {
            errs.push(FieldError::forbidden(
                rp.as_str(),
                "may not be specified when `allocated` is not set",
            ));
        } else if obj
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null())
        {
            let old_reserved = list_of(old_status, "reservedFor");
            if reserved.iter().any(|r| !old_reserved.contains(r)) {
                errs.push(FieldError::forbidden(
                    rp.as_str(),
                    "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                ));
            }
        }
    }
    let ap = sp.child("allocation");
    match (alloc, old_alloc) {
        (Some(a), Some(o)) => errs.extend(immutable(Some(a), Some(o), &ap)),
        (Some(a), None) => {
            let requests = list_of(spec(obj).get("devices").unwrap_or(&Value::Null), "requests");
            errs.extend(validate_allocation_result(
                a,
                &ap,
                &RequestNames::of(requests),
            ));
        }
        _ => {}
    }
    errs
}

/// `driver/pool/device` of a result or device status, as kube prints a
/// device ID.
fn device_id(d: &Value) -> String {
    format!(
        "{}/{}/{}",
        str_of(d, "driver"),
        str_of(d, "pool"),
        str_of(d, "device")
    )
}

/// `validateAllocationResult`: each result names a claim request, a driver,
/// a pool and a device; config sources and requests.
fn validate_allocation_result(a: &Value, path: &Path, names: &RequestNames<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let devices = a.get("devices").unwrap_or(&Value::Null);
    let dp = path.child("devices");
    let results = list_of(devices, "results");
    let rp = dp.child("results");
    if results.len() > DEVICE_REQUESTS_MAX {
        errs.push(too_many(&rp, results.len(), DEVICE_REQUESTS_MAX));
    } else {
        for (i, r) in results.iter().enumerate() {
            let p = rp.index(i);
            let request = str_of(r, "request");
            let reqp = p.child("request");
            let segments: Vec<&str> = request.split('/').collect();
            if segments.len() > 2 {
                errs.push(FieldError::invalid(reqp.as_str(), request, REQUEST_REF_MSG));
            } else {
                for s in &segments {
                    errs.extend(dns1123_label(s, &reqp));
                }
                if !names.has(request) {
                    errs.push(FieldError::invalid(reqp.as_str(), request, REQUEST_REF_MSG));
                }
            }
            errs.extend(validate_driver_name(
                str_of(r, "driver"),
                &p.child("driver"),
            ));
            errs.extend(validate_pool_name(str_of(r, "pool"), &p.child("pool")));
            errs.extend(dns1123_label(str_of(r, "device"), &p.child("device")));
            let tp = p.child("tolerations");
            for (j, t) in list_of(r, "tolerations").iter().enumerate() {
                errs.extend(validate_device_toleration(t, &tp.index(j)));
            }
        }
    }
    let config = list_of(devices, "config");
    let cp = dp.child("config");
    if config.len() > 2 * CONFIG_MAX {
        errs.push(too_many(&cp, config.len(), 2 * CONFIG_MAX));
    } else {
        for (i, c) in config.iter().enumerate() {
            let p = cp.index(i);
            let source = str_of(c, "source");
            match source {
                "" => errs.push(required(&p.child("source"), "")),
                "FromClaim" | "FromClass" => {}
                other => errs.push(FieldError::not_supported(
                    p.child("source").as_str(),
                    other,
                    &["FromClaim", "FromClass"],
                )),
            }
            errs.extend(validate_request_refs(c, &p.child("requests"), names));
            errs.extend(validate_device_configuration(c, &p));
        }
    }
    errs
}

/// `validateResourceSliceSpec` (with the update's immutable fields).
fn validate_resource_slice_spec(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let path = Path::new("spec");
    let mut errs = validate_driver_name(str_of(spec, "driver"), &path.child("driver"));
    let pool = spec.get("pool").unwrap_or(&Value::Null);
    let pp = path.child("pool");
    errs.extend(validate_pool_name(str_of(pool, "name"), &pp.child("name")));
    let count = int_of(pool, "resourceSliceCount").unwrap_or(0);
    if count <= 0 {
        errs.push(FieldError::invalid(
            pp.child("resourceSliceCount").as_str(),
            count,
            "must be greater than zero",
        ));
    }
    let generation = int_of(pool, "generation").unwrap_or(0);
    if generation < 0 {
        errs.push(FieldError::invalid(
            pp.child("generation").as_str(),
            generation,
            "must be greater than or equal to zero",
        ));
    }
    if let Some(old) = old {
        let old_pool = old.get("pool").unwrap_or(&Value::Null);
        errs.extend(immutable(
            pool.get("name"),
            old_pool.get("name"),
            &pp.child("name"),
        ));
        errs.extend(immutable(
            spec.get("driver"),
            old.get("driver"),
            &path.child("driver"),
        ));
        errs.extend(immutable(
            spec.get("nodeName"),
            old.get("nodeName"),
            &path.child("nodeName"),
        ));
    }
    let mut set = Vec::new();
    if let Some(node) = spec.get("nodeName").and_then(Value::as_str) {
        let np = path.child("nodeName");
        if node.is_empty() {
            errs.push(FieldError::invalid(
                np.as_str(),
                "",
                "must be either unset or set to a non-empty string",
            ));
        } else {
            set.push("`nodeName`");
            errs.extend(dns1123_subdomain(node, &np));
        }
    }
    if let Some(sel) = spec.get("nodeSelector").filter(|s| s.is_object()) {
        set.push("`nodeSelector`");
        let terms = sel.get("nodeSelectorTerms").cloned().unwrap_or(Value::Null);
        if list_of(sel, "nodeSelectorTerms").len() != 1 {
            errs.push(FieldError::invalid(
                path.child("nodeSelector")
                    .child("nodeSelectorTerms")
                    .as_str(),
                terms,
                "must have exactly one node selector term",
            ));
        }
    }
    for key in ["allNodes", "perDeviceNodeSelection"] {
        match spec.get(key).and_then(Value::as_bool) {
            Some(true) => set.push(if key == "allNodes" {
                "`allNodes`"
            } else {
                "`perDeviceNodeSelection`"
            }),
            Some(false) => errs.push(FieldError::invalid(
                path.child(key).as_str(),
                false,
                "must be either unset or set to true",
            )),
            None => {}
        }
    }
    const ONE_OF: &str =
        "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
    match set.len() {
        0 => errs.push(required(&path, ONE_OF)),
        1 => {}
        _ => errs.push(FieldError::invalid(
            path.as_str(),
            format!("{{{}}}", set.join(", ")),
            &format!("{ONE_OF}, but multiple fields are set"),
        )),
    }
    let per_device = spec.get("perDeviceNodeSelection").and_then(Value::as_bool) == Some(true);
    let devices = list_of(spec, "devices");
    let dp = path.child("devices");
    if devices.len() > SLICE_MAX_DEVICES {
        errs.push(too_many(&dp, devices.len(), SLICE_MAX_DEVICES));
    } else {
        let old_devices = old.map(|o| list_of(o, "devices")).unwrap_or(&[]);
        for (i, d) in devices.iter().enumerate() {
            let name = str_of(d, "name");
            let old_device = old_devices.iter().find(|o| str_of(o, "name") == name);
            errs.extend(validate_device(d, old_device, &dp.index(i), per_device));
        }
        errs.extend(duplicates(devices, |d| str_of(d, "name"), &dp));
    }
    errs
}

/// `validateDevice`: name, attributes and capacity (at most 32 together),
/// taints, per-device node selection.
fn validate_device(
    d: &Value,
    old: Option<&Value>,
    path: &Path,
    per_device: bool,
) -> Vec<FieldError> {
    let mut errs = dns1123_label(str_of(d, "name"), &path.child("name"));
    let attrs = obj_of(d, "attributes");
    let caps = obj_of(d, "capacity");
    let n = attrs.map_or(0, Map::len) + caps.map_or(0, Map::len);
    if n > MAX_ATTRS_AND_CAPS {
        errs.push(FieldError::invalid(
            path.as_str(),
            n,
            &format!("the total number of attributes and capacities must not exceed {MAX_ATTRS_AND_CAPS}"),
        ));
    }
    let ap = path.child("attributes");
    for (k, v) in attrs.into_iter().flatten() {
        errs.extend(validate_qualified_name(k, &ap));
        errs.extend(validate_device_attribute(v, &ap.key(&truncate(k))));
    }
    let cp = path.child("capacity");
    for k in caps.into_iter().flatten().map(|(k, _)| k) {
        errs.extend(validate_qualified_name(k, &cp));
    }
    let taints = list_of(d, "taints");
    let tp = path.child("taints");
    let old_taints = old.map(|o| o.get("taints"));
    if old_taints.is_none_or(|o| o != d.get("taints")) {
        if taints.len() > TAINTS_MAX {
            errs.push(too_many(&tp, taints.len(), TAINTS_MAX));
        } else {
            for (i, t) in taints.iter().enumerate() {
                let p = tp.index(i);
                errs.extend(validate_label_name(str_of(t, "key"), &p.child("key")));
                let value = str_of(t, "value");
                if !value.is_empty() {
                    errs.extend(validate_label_value(value, &p.child("value")));
                }
                match str_of(t, "effect") {
                    "" => errs.push(required(&p.child("effect"), "")),
                    e if TAINT_EFFECTS.contains(&e) => {}
                    e => errs.push(FieldError::not_supported(
                        p.child("effect").as_str(),
                        e,
                        TAINT_EFFECTS,
                    )),
                }
            }
        }
    }
    const PER_DEVICE: &str = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
    let has = |k: &str| d.get(k).is_some_and(|v| !v.is_null());
    if per_device {
        let mut set = Vec::new();
        if let Some(node) = d.get("nodeName").and_then(Value::as_str) {
            if node.is_empty() {
                errs.push(FieldError::invalid(
                    path.child("nodeName").as_str(),
                    "",
                    "must not be empty",
                ));
            } else {
                set.push("`nodeName`");
                errs.extend(dns1123_subdomain(node, &path.child("nodeName")));
            }
        }
        if d.get("nodeSelector").is_some_and(Value::is_object) {
            set.push("`nodeSelector`");
        }
        match d.get("allNodes").and_then(Value::as_bool) {
            Some(true) => set.push("`allNodes`"),
            Some(false) => errs.push(FieldError::invalid(
                path.child("allNodes").as_str(),
                false,
                "must be either unset or set to true",
            )),
            None => {}
        }
        match set.len() {
            0 => errs.push(required(path, PER_DEVICE)),
            1 => {}
            _ => errs.push(FieldError::invalid(
                path.as_str(),
                format!("{{{}}}", set.join(", ")),
                PER_DEVICE,
            )),
        }
    } else if has("nodeName") || has("nodeSelector") || has("allNodes") {
        errs.push(FieldError::invalid(
            path.as_str(),
            Value::Null,
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        ));
    }
    errs
}

/// kube's `truncateIfTooLong` for map keys in paths (limit 63+1+32).
fn truncate(key: &str) -> String {
    const MAX: usize = 63 + 1 + MAX_ID_LEN;
    if key.len() <= MAX || !key.is_ascii() {
        return key.to_string();
    }
    let remaining = MAX - 3;
    format!(
        "{}...{}",
        &key[..remaining.div_ceil(2)],
        &key[key.len() - remaining / 2..]
    )
}

/// `validateDeviceAttribute`: exactly one of `bool`, `int`, `string`,
/// `version`; strings and versions at most 64 bytes, versions semver.
fn validate_device_attribute(a: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    for key in ["bool", "int", "string", "version"] {
        let Some(v) = a.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        n += 1;
        let s = v.as_str().unwrap_or("");
        let p = path.child(key);
        if key == "version" && !is_semver(s) {
            errs.push(FieldError::invalid(
                p.as_str(),
                s,
                "must be a string compatible with semver.org spec 2.0.0",
            ));
        }
        if matches!(key, "string" | "version") && s.len() > ATTR_VALUE_MAX {
            errs.push(too_long(&p, ATTR_VALUE_MAX));
        }
    }
    match n {
        0 => errs.push(FieldError::invalid(
            path.as_str(),
            "",
            "exactly one value must be specified",
        )),
        1 => {}
        _ => errs.push(FieldError::invalid(
            path.as_str(),
            a.clone(),
            "exactly one value must be specified",
        )),
    }
    errs
}

/// Semantic versioning 2.0.0 (kube's `semverRe`).
fn is_semver(v: &str) -> bool {
    let numeric = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    let ident =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let pre = |s: &str| ident(s) && (numeric(s) || !s.bytes().all(|b| b.is_ascii_digit()));
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    if build.is_some_and(|b| !b.split('.').all(ident)) {
        return false;
    }
    let (core, prerelease) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    if prerelease.is_some_and(|p| !p.split('.').all(pre)) {
        return false;
    }
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| numeric(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_api::Operation;
    use serde_json::json;

    fn class_errors(expr: &str) -> Vec<String> {
        let obj = json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "c"}, "spec": {"selectors": [{"cel": {"expression": expr}}]}});
        let w = Write {
            op: Operation::Create,
            subresource: "",
            old: None,
            allow_privileged: true,
        };
        validate("DeviceClass", w, &obj)
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn selectors_compile_in_the_dra_environment() {
        for ok in [
            r#"device.driver == "gpu.example.com""#,
            r#"device.attributes["gpu.example.com"].model == "a100""#,
            r#"device.capacity["gpu.example.com"].memory.compareTo(quantity("1Gi")) >= 0"#,
            r#"cel.bind(g, device.attributes["gpu.example.com"], g.a && g.b)"#,
            r#"device.attributes["gpu.example.com"].exists(k, k.startsWith("x"))"#,
        ] {
            assert_eq!(class_errors(ok), Vec::<String>::new(), "{ok}");
        }
    }

    #[test]
    fn selector_errors_as_kube_words_them() {
        let p = "spec.selectors[0].cel.expression";
        assert_eq!(
            class_errors("device.nope"),
            [format!("{p}: Invalid value: \"device.nope\": compilation failed: ERROR: <input>:1:7: undefined field 'nope'\n | device.nope\n | ......^")]
        );
        assert_eq!(
            class_errors("device.driver"),
            [format!("{p}: Invalid value: \"device.driver\": must evaluate to bool or the unknown type, not string")]
        );
        assert_eq!(
            class_errors("device"),
            [format!("{p}: Invalid value: \"device\": must evaluate to bool or the unknown type, not kubernetes.DRADevice")]
        );
        assert_eq!(
            class_errors("object.x == 1"),
            [format!("{p}: Invalid value: \"object.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'object' (in container '')\n | object.x == 1\n | ^")]
        );
        let costly = "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, device.attributes.all(e, a == e)))))";
        assert_eq!(
            class_errors(costly),
            [format!("{p}: Forbidden: too complex, exceeds cost limit")]
        );
        let long = format!("{}true", " ".repeat(CEL_MAX_LEN));
        assert_eq!(
            class_errors(&long),
            [format!("{p}: Too long: may not be more than 10240 bytes")]
        );
    }
}
