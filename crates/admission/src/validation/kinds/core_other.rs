//! The other core kinds: Namespace, ServiceAccount, PersistentVolume(Claim), LimitRange, ResourceQuota, Event, Node (`pkg/apis/core/validation`).

use std::collections::{BTreeMap, BTreeSet};

use keelson_apimachinery::names::is_qualified_name;
use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::Quantity;
use serde_json::{Map, Value};

use super::util::{
    dns1123_subdomain, immutable, invalid_all, list_of, obj_of, semantic, str_of,
    validate_label_selector,
};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "Namespace" if w.is_status() => match w.old() {
            Some(old) => validate_namespace_status_update(obj, old),
            None => Vec::new(),
        },
        "Namespace" if w.subresource.is_empty() || w.subresource == "finalize" => {
            validate_namespace(obj, w.subresource == "finalize")
        }
        "PersistentVolumeClaim" if w.is_status() => validate_pvc_status_update(obj),
        "PersistentVolumeClaim" if w.subresource.is_empty() => {
            // The claim comes as kube's strategy left it
            // (`defaults::pvc::data_sources`); the stored one is
            // normalized too, as kube's `PrepareForUpdate` does, so a claim
            // stored before normalization compares alike.
            let old = w.old().map(|o| {
                let mut o = o.clone();
                if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) {
                    crate::defaults::pvc::normalize(spec);
                }
                o
            });
            let mut errs = validate_pvc(obj, PvcOpts::of(w.old()));
            if let Some(old) = &old {
                errs.extend(validate_pvc_update(obj, old));
            }
            errs
        }
        "Event" => super::events::validate_event(w, obj, false),
        _ => Vec::new(),
    }
}

/// kube's standard (unqualified) finalizer names.
const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

/// `ValidateNamespace` / `ValidateNamespaceFinalizeUpdate`: the names in
/// `spec.finalizers` (indexed only on `finalize`, as in kube).
fn validate_namespace(obj: &Value, finalize: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let base = Path::new("spec").child("finalizers");
    let finalizers = obj
        .get("spec")
        .map(|s| list_of(s, "finalizers"))
        .unwrap_or(&[]);
    for (i, f) in finalizers.iter().enumerate() {
        let name = f.as_str().unwrap_or("");
        let path = if finalize {
            base.index(i)
        } else {
            base.clone()
        };
        for m in keelson_apimachinery::names::is_qualified_name(name) {
            errs.push(FieldError::invalid(path.as_str(), name, &m));
        }
        if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
            errs.push(FieldError::invalid(
                path.as_str(),
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

/// `ValidateNamespaceStatusUpdate`: the phase follows the deletion mark
/// (`status.Phase`, as kube spells the path). An empty phase is defaulted
/// to `Active` first, and the stored deletion mark is kept, as kube does.
fn validate_namespace_status_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let deleting = |o: &Value| {
        o.pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    };
    let phase = match obj.pointer("/status/phase").and_then(Value::as_str) {
        None | Some("") => "Active",
        Some(p) => p,
    };
    if !(deleting(old) || deleting(obj)) {
        if phase != "Active" {
            return vec![FieldError::invalid(
                "status.Phase",
                phase,
                "may only be 'Active' if `deletionTimestamp` is empty",
            )];
        }
    } else if phase != "Terminating" {
        return vec![FieldError::invalid(
            "status.Phase",
            phase,
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )];
    }
    Vec::new()
}

/// A quantity as the JSON decoder hands it over (a string, or a number
/// Go's `Quantity.UnmarshalJSON` also takes).
fn quantity_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A quantity's value in nano-units, its canonical string
/// (`Quantity.String()`, also what Go's JSON prints) and the parsed form.
struct Qty {
    q: Quantity,
    nanos: Option<i128>,
    text: String,
    /// Go holds the value as an `int64Amount` (else an `inf.Dec`).
    int64: bool,
}

impl Qty {
    /// `None` for a quantity that does not parse (the decoder refused
    /// those already); JSON `null` is Go's zero quantity.
    fn of(v: &Value) -> Option<Qty> {
        let raw = match v {
            Value::Null => "0".to_string(),
            other => quantity_text(other),
        };
        let raw = raw.trim();
        let q = Quantity::parse(raw)?;
        let nanos = q.nanos();
        let text = nanos.map_or(raw.to_string(), |n| Quantity::canonical(n, q.format()));
        Some(Qty {
            q,
            nanos,
            text,
            int64: go_int64_amount(raw),
        })
    }

    fn cmp(&self, o: &Qty) -> std::cmp::Ordering {
        self.q.cmp_to(&o.q)
    }

    /// `Quantity.Value()`.
    fn value(&self) -> i128 {
        self.nanos
            .map_or(0, |n| go_scaled(n, 1_000_000_000, self.int64))
    }

    /// `Quantity.MilliValue()`.
    fn milli_value(&self) -> i128 {
        self.nanos
            .map_or(0, |n| go_scaled(n, 1_000_000, self.int64))
    }
}

/// `Quantity.ScaledValue` of `nanos` nano-units in `unit`s: an
/// `int64Amount` rounds a remainder away from zero, an `inf.Dec` adds one
/// to the truncated value (so a negative one rounds towards zero).
pub(super) fn go_scaled(nanos: i128, unit: i128, int64: bool) -> i128 {
    let whole = nanos / unit;
    match nanos % unit {
        0 => whole,
        _ if int64 => whole + nanos.signum(),
        _ => whole + 1,
    }
}

/// Whether `ParseQuantity` keeps `s` in its `int64Amount` fast path: at
/// most 18 digits (binary suffixes: fewer, and no fraction), a scale of
/// at least nano, and a product that fits an int64.
pub(super) fn go_int64_amount(s: &str) -> bool {
    if s == "0" {
        return true;
    }
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let body = body.trim_start_matches('0');
    let int_end = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let num = if int_end == 0 { "0" } else { &body[..int_end] };
    let rest = &body[int_end..];
    let (denom, suffix) = match rest.strip_prefix('.') {
        Some(r) => {
            let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            (&r[..end], &r[end..])
        }
        None => ("", rest),
    };
    let (binary, exponent): (bool, i64) = match suffix {
        "" => (false, 0),
        "n" => (false, -9),
        "u" => (false, -6),
        "m" => (false, -3),
        "k" => (false, 3),
        "M" => (false, 6),
        "G" => (false, 9),
        "T" => (false, 12),
        "P" => (false, 15),
        "E" => (false, 18),
        "Ki" => (true, 10),
        "Mi" => (true, 20),
        "Gi" => (true, 30),
        "Ti" => (true, 40),
        "Pi" => (true, 50),
        "Ei" => (true, 60),
        e => match e
            .strip_prefix(['e', 'E'])
            .and_then(|x| x.parse::<i64>().ok())
        {
            Some(x) => (false, x),
            None => return false,
        },
    };
    let (precision, mut scale, mantissa) = if binary {
        if !denom.is_empty() {
            return false;
        }
        let decimal_digits = (exponent as f32 * 3.0 / 10.0) as i64;
        (
            15 - num.len() as i64 - decimal_digits - 1,
            0,
            1i64 << exponent,
        )
    } else {
        (18 - (num.len() + denom.len()) as i64, exponent, 1)
    };
    if precision < 0 {
        return false;
    }
    scale -= denom.len() as i64;
    if scale < -9 {
        return false;
    }
    format!("{num}{denom}")
        .parse::<i64>()
        .ok()
        .and_then(|v| v.checked_mul(mantissa))
        .is_some()
}

/// `validateBasicResource`: `Quantity.Value()` not negative (kube prints
/// the integer).
fn basic_resource(q: &Qty, path: &Path) -> Option<FieldError> {
    let value = q.value();
    (value < 0).then(|| {
        FieldError::invalid(
            path.as_str(),
            i64::try_from(value).unwrap_or(i64::MIN),
            "must be a valid resource quantity",
        )
    })
}

/// kube's `resizeStatusSet`, sorted.
const RESIZE_STATUSES: &[&str] = &[
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
];

/// `validatePersistentVolumeClaimResourceKey`: a qualified name, and
/// `storage` when it is a native (`kubernetes.io`) resource.
fn claim_resource_key(key: &str, path: &Path) -> Vec<FieldError> {
    let errs = invalid_all(is_qualified_name(key), path, key);
    if !errs.is_empty() {
        return errs;
    }
    let native = !key.contains('/') || key.contains("kubernetes.io/");
    if native && key != "storage" {
        return vec![FieldError::not_supported(path.as_str(), key, &["storage"])];
    }
    Vec::new()
}

/// `ValidatePersistentVolumeClaimStatusUpdate`: the capacity quantities
/// are not negative, and (RecoverVolumeExpansionFailure is GA in 1.34)
/// the allocated resources and their resize statuses are valid.
fn validate_pvc_status_update(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let status = obj.get("status").unwrap_or(&Value::Null);
    let cap_path = Path::new("status").child("capacity");
    for (k, v) in obj_of(status, "capacity").into_iter().flatten() {
        if let Some(q) = Qty::of(v) {
            errs.extend(basic_resource(&q, &cap_path.key(k)));
        }
    }
    let rsp = Path::new("status").child("allocatedResourceStatus");
    for (k, v) in obj_of(status, "allocatedResourceStatuses")
        .into_iter()
        .flatten()
    {
        errs.extend(claim_resource_key(k, &rsp));
        if !RESIZE_STATUSES.contains(&v.as_str().unwrap_or("")) {
            // kube reports the resource name, not the status.
            errs.push(FieldError::not_supported(
                rsp.as_str(),
                k.as_str(),
                RESIZE_STATUSES,
            ));
        }
    }
    let ap = Path::new("status").child("allocatedResources");
    for (k, v) in obj_of(status, "allocatedResources").into_iter().flatten() {
        let key_errs = claim_resource_key(k, &ap);
        if !key_errs.is_empty() {
            errs.extend(key_errs);
            continue;
        }
        let Some(q) = Qty::of(v) else {
            continue;
        };
        match basic_resource(&q, &ap.key(k)) {
            Some(e) => errs.push(e),
            None if q.q.is_negative() => errs.push(FieldError::invalid(
                ap.key(k).as_str(),
                q.text.as_str(),
                "must be greater than or equal to 0",
            )),
            None => {}
        }
    }
    errs
}

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// `PersistentVolumeClaimSpecValidationOptions` that follow the stored
/// claim (`ValidationOptionsForPersistentVolumeClaim`).
#[derive(Clone, Copy, Default)]
struct PvcOpts {
    /// The stored selector already has invalid label values.
    allow_invalid_selector_values: bool,
    /// The stored data source or reference already names an API group.
    allow_invalid_api_group: bool,
}

impl PvcOpts {
    fn of(old: Option<&Value>) -> PvcOpts {
        let Some(spec) = old.and_then(|o| o.get("spec")) else {
            return PvcOpts::default();
        };
        let has_group = |key: &str| {
            spec.get(key)
                .and_then(|d| d.get("apiGroup"))
                .is_some_and(|g| !g.is_null())
        };
        PvcOpts {
            allow_invalid_selector_values: !validate_label_selector(
                spec.get("selector"),
                false,
                &Path::new(""),
            )
            .is_empty(),
            allow_invalid_api_group: has_group("dataSource") || has_group("dataSourceRef"),
        }
    }
}

/// `ValidatePersistentVolumeClaimSpec` (at `spec`); `obj` is the claim.
fn validate_pvc(obj: &Value, opts: PvcOpts) -> Vec<FieldError> {
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let sp = Path::new("spec");
    let mut errs = Vec::new();
    let modes = list_of(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required(
            sp.child("accessModes").as_str(),
            "at least 1 access mode is required",
        ));
    }
    errs.extend(validate_label_selector(
        spec.get("selector"),
        opts.allow_invalid_selector_values,
        &sp.child("selector"),
    ));
    let (mut rwop, mut other) = (false, false);
    for m in modes {
        let m = m.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&m) {
            errs.push(FieldError::not_supported(
                sp.child("accessModes").as_str(),
                m,
                ACCESS_MODES,
            ));
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            sp.child("accessModes").as_str(),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let storage_path = sp.child("resources").key("storage");
    match spec.pointer("/resources/requests/storage") {
        None => errs.push(FieldError::required(storage_path.as_str(), "")),
        Some(v) => {
            if let Some(q) = Qty::of(v) {
                // `ValidatePositiveQuantityValue` (storage is no integer
                // resource, and a positive value is not negative).
                if q.nanos.map_or(q.q.is_negative(), |n| n <= 0) {
                    errs.push(FieldError::invalid(
                        storage_path.as_str(),
                        q.text.as_str(),
                        "must be greater than zero",
                    ));
                }
            }
        }
    }
    if let Some(class) = spec.get("storageClassName").and_then(Value::as_str) {
        if !class.is_empty() {
            errs.extend(dns1123_subdomain(class, &sp.child("storageClassName")));
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !["Block", "Filesystem"].contains(&mode) {
            errs.push(FieldError::not_supported(
                sp.child("volumeMode").as_str(),
                mode,
                &["Block", "Filesystem"],
            ));
        }
    }
    let source = spec.get("dataSource").filter(|d| !d.is_null());
    let source_ref = spec.get("dataSourceRef").filter(|d| !d.is_null());
    if let Some(ds) = source {
        errs.extend(data_source(ds, &sp.child("dataSource"), opts, false));
    }
    if let Some(dr) = source_ref {
        errs.extend(data_source(dr, &sp.child("dataSourceRef"), opts, true));
    }
    // kube's bad value here is a `*field.Path`, which Go's JSON prints `{}`.
    let path_value = || Value::Object(Map::new());
    let ref_namespace = source_ref
        .and_then(|r| r.get("namespace"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if !ref_namespace.is_empty() {
        if source.is_some() {
            errs.push(FieldError::invalid(
                sp.as_str(),
                path_value(),
                "may not be specified when dataSourceRef.namespace is specified",
            ));
        }
    } else if let (Some(ds), Some(dr)) = (source, source_ref) {
        let group = |d: &Value| d.get("apiGroup").filter(|g| !g.is_null()).cloned();
        let same = group(ds) == group(dr)
            && str_of(ds, "kind") == str_of(dr, "kind")
            && str_of(ds, "name") == str_of(dr, "name");
        if !same {
            errs.push(FieldError::invalid(
                sp.as_str(),
                path_value(),
                "must match dataSourceRef",
            ));
        }
    }
    // VolumeAttributesClass is GA (on) in 1.34.
    if let Some(vac) = spec
        .get("volumeAttributesClassName")
        .and_then(Value::as_str)
    {
        if !vac.is_empty() {
            errs.extend(dns1123_subdomain(
                vac,
                &sp.child("volumeAttributesClassName"),
            ));
        }
    }
    errs
}

/// `validateDataSource` / `validateDataSourceRef` (`is_ref`: also the
/// namespace).
fn data_source(ds: &Value, path: &Path, opts: PvcOpts, is_ref: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(ds, "name").is_empty() {
        errs.push(FieldError::required(path.child("name").as_str(), ""));
    }
    let kind = str_of(ds, "kind");
    if kind.is_empty() {
        errs.push(FieldError::required(path.child("kind").as_str(), ""));
    }
    let group = str_of(ds, "apiGroup");
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        errs.push(FieldError::invalid(
            path.as_str(),
            kind,
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ));
    }
    if !group.is_empty() && !opts.allow_invalid_api_group {
        errs.extend(dns1123_subdomain(group, &path.child("apiGroup")));
    }
    if is_ref {
        let ns = str_of(ds, "namespace");
        if !ns.is_empty() {
            errs.extend(invalid_all(
                keelson_apimachinery::names::is_dns1123_label(ns),
                &path.child("namespace"),
                ns,
            ));
        }
    }
    errs
}

/// kube's beta storage class annotation.
const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// A claim spec as `apiequality.Semantic.DeepEqual` compares it: Go's nil
/// and empty lists and maps alike, quantities by value, non-pointer
/// strings empty or absent alike, pointers (`null` dropped) kept.
fn pvc_spec_semantic(spec: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in spec {
        let v = match k.as_str() {
            _ if v.is_null() => continue,
            "volumeName" if v.as_str() == Some("") => continue,
            "storageClassName" | "volumeMode" | "volumeAttributesClassName" => v.clone(),
            "resources" => {
                let mut r = Map::new();
                for (list, items) in v.as_object().into_iter().flatten() {
                    let mut m = Map::new();
                    for (name, q) in items.as_object().into_iter().flatten() {
                        let n = Qty::of(q).and_then(|q| q.nanos);
                        m.insert(
                            name.clone(),
                            n.map_or_else(|| q.clone(), |n| Value::String(format!("{n}n"))),
                        );
                    }
                    if !m.is_empty() {
                        r.insert(list.clone(), Value::Object(m));
                    }
                }
                if r.is_empty() {
                    continue;
                }
                Value::Object(r)
            }
            "dataSource" | "dataSourceRef" => {
                let mut m = Map::new();
                for (f, x) in v.as_object().into_iter().flatten() {
                    let pointer = matches!(f.as_str(), "apiGroup" | "namespace");
                    if x.is_null() || (!pointer && x.as_str() == Some("")) {
                        continue;
                    }
                    m.insert(f.clone(), x.clone());
                }
                Value::Object(m)
            }
            // A pointer: present even when empty.
            "selector" => Value::Array(vec![semantic(v)]),
            _ => {
                let x = semantic(v);
                if x == Value::Array(Vec::new()) || x == Value::Object(Map::new()) {
                    continue;
                }
                x
            }
        };
        out.insert(k.clone(), v);
    }
    out
}

/// `ValidatePersistentVolumeClaimUpdate` after the claim's own rules: the
/// beta storage class annotation, the spec (fixed except a bound claim's
/// storage request and volumeAttributesClassName, a first `volumeName`,
/// a class set where there was none), the size, the volume mode and the
/// volumeAttributesClassName.
fn validate_pvc_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut new_spec = obj_of(obj, "spec").cloned().unwrap_or_default();
    let mut old_spec = obj_of(old, "spec").cloned().unwrap_or_default();
    for s in [&mut new_spec, &mut old_spec] {
        // A stored claim from before defaulting reads as defaulted.
        if s.get("volumeMode").is_none_or(Value::is_null) {
            s.insert("volumeMode".into(), Value::String("Filesystem".into()));
        }
    }
    let (orig_new, orig_old) = (new_spec.clone(), old_spec.clone());
    // The volume name may be set once.
    if str_of(&Value::Object(old_spec.clone()), "volumeName").is_empty() {
        match new_spec.get("volumeName") {
            Some(v) => old_spec.insert("volumeName".into(), v.clone()),
            None => old_spec.remove("volumeName"),
        };
    }
    let annotation = |o: &Value| {
        o.pointer("/metadata/annotations")
            .and_then(|a| a.get(BETA_STORAGE_CLASS))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (old_ann, new_ann) = (annotation(old), annotation(obj));
    let class = |s: &Map<String, Value>| {
        s.get("storageClassName")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (old_class, new_class) = (class(&orig_old), class(&orig_new));
    let from_annotation = old_ann.is_some()
        && old_class.is_none()
        && new_class.is_some()
        && new_class == old_ann
        && (new_ann.is_none() || new_ann == old_ann);
    if from_annotation {
        new_spec.remove("storageClassName");
    } else {
        let (n, o) = (
            new_ann.clone().unwrap_or_default(),
            old_ann.clone().unwrap_or_default(),
        );
        if n != o {
            errs.push(FieldError::invalid(
                &format!("metadata.annotations.{BETA_STORAGE_CLASS}"),
                n.as_str(),
                "field is immutable",
            ));
        }
        // A class may be set where there was none (matching the stored
        // annotation, if any).
        if old_class.is_none() && new_class.is_some() && (old_ann.is_none() || new_class == old_ann)
        {
            new_spec.remove("storageClassName");
        }
    }
    let phase = obj
        .get("status")
        .and_then(|s| s.get("phase"))
        .or_else(|| old.get("status").and_then(|s| s.get("phase")))
        .and_then(Value::as_str)
        .unwrap_or("");
    if phase == "Bound" {
        let old_req = orig_old
            .get("resources")
            .and_then(|r| r.get("requests"))
            .and_then(|r| r.get("storage"))
            .cloned()
            // Go's zero quantity.
            .unwrap_or_else(|| Value::String("0".into()));
        if let Some(req) = new_spec
            .get_mut("resources")
            .and_then(|r| r.get_mut("requests"))
            .and_then(Value::as_object_mut)
        {
            req.insert("storage".into(), old_req);
        }
        if new_spec
            .get("volumeAttributesClassName")
            .is_some_and(|v| !v.is_null())
        {
            match orig_old.get("volumeAttributesClassName") {
                Some(v) => new_spec.insert("volumeAttributesClassName".into(), v.clone()),
                None => new_spec.remove("volumeAttributesClassName"),
            };
        }
    }
    if pvc_spec_semantic(&new_spec) != pvc_spec_semantic(&old_spec) {
        // kube appends a go-cmp diff of the internal specs after a
        // newline; go-cmp randomizes its whitespace per process, so only
        // the sentence is reproduced.
        errs.push(FieldError::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    // Shrinking is allowed down to above the recorded capacity
    // (RecoverVolumeExpansionFailure is GA in 1.34).
    let size = |o: &Value, ptr: &str| Qty::of(o.pointer(ptr).unwrap_or(&Value::Null));
    let new_size = size(obj, "/spec/resources/requests/storage");
    let old_size = size(old, "/spec/resources/requests/storage");
    let status_size = size(old, "/status/capacity/storage");
    if let (Some(n), Some(o), Some(s)) = (new_size, old_size, status_size) {
        if n.cmp(&o).is_lt() && n.cmp(&s).is_le() {
            errs.push(FieldError::forbidden(
                "spec.resources.requests.storage",
                "field can not be less than status.capacity",
            ));
        }
    }
    errs.extend(immutable(
        orig_new.get("volumeMode"),
        orig_old.get("volumeMode"),
        &Path::new("volumeMode"),
    ));
    let vac = |s: &Map<String, Value>| {
        s.get("volumeAttributesClassName")
            .filter(|v| !v.is_null())
            .cloned()
    };
    if vac(&orig_old).is_some() {
        match vac(&orig_new) {
            None => errs.push(FieldError::forbidden(
                "spec.volumeAttributesClassName",
                "update from non-nil value to nil is forbidden",
            )),
            Some(v) if v.as_str() == Some("") && vac(&orig_old) != Some(v.clone()) => {
                errs.push(FieldError::forbidden(
                    "spec.volumeAttributesClassName",
                    "update from non-nil value to an empty string is forbidden",
                ))
            }
            Some(_) => {}
        }
    }
    errs
}

/// kube's `IsOvercommitAllowed`: native resources but hugepages.
fn overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

/// kube's `ValidateLimitRange` comparisons of one limit (at `ip`), after
/// its names: per resource, min ≤ max, min ≤ defaultRequest ≤ max,
/// defaultRequest ≤ default, min ≤ default ≤ max, 1 ≤ ratio ≤ max/min, and
/// default = defaultRequest for resources that may not be overcommitted.
/// `default` and `defaultRequest` do not count for `Pod` limits. The
/// resources are taken in name order (kube: Go map order, random).
pub(super) fn limit_range_comparisons(limit: &Value, ip: &Path) -> Vec<FieldError> {
    let pod = str_of(limit, "type") == "Pod";
    let list = |key: &str| -> BTreeMap<String, Qty> {
        if pod && matches!(key, "default" | "defaultRequest") {
            return BTreeMap::new();
        }
        obj_of(limit, key)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Qty::of(v).map(|q| (k.clone(), q)))
            .collect()
    };
    let (max, min, default, request, ratio) = (
        list("max"),
        list("min"),
        list("default"),
        list("defaultRequest"),
        list("maxLimitRequestRatio"),
    );
    let keys: BTreeSet<&String> = [&max, &min, &default, &request, &ratio]
        .iter()
        .flat_map(|m| m.keys())
        .collect();
    let mut errs = Vec::new();
    let at = |key: &str, k: &str| ip.child(key).key(k);
    for k in keys {
        let (mx, mn, df, rq, rt) = (
            max.get(k),
            min.get(k),
            default.get(k),
            request.get(k),
            ratio.get(k),
        );
        let mut push = |path: Path, bad: &Qty, msg: String| {
            errs.push(FieldError::invalid(path.as_str(), bad.text.as_str(), &msg));
        };
        if let (Some(mn), Some(mx)) = (mn, mx) {
            if mn.cmp(mx).is_gt() {
                push(
                    at("min", k),
                    mn,
                    format!(
                        "min value {} is greater than max value {}",
                        mn.text, mx.text
                    ),
                );
            }
        }
        if let (Some(rq), Some(mn)) = (rq, mn) {
            if mn.cmp(rq).is_gt() {
                push(
                    at("defaultRequest", k),
                    rq,
                    format!(
                        "min value {} is greater than default request value {}",
                        mn.text, rq.text
                    ),
                );
            }
        }
        if let (Some(rq), Some(mx)) = (rq, mx) {
            if rq.cmp(mx).is_gt() {
                push(
                    at("defaultRequest", k),
                    rq,
                    format!(
                        "default request value {} is greater than max value {}",
                        rq.text, mx.text
                    ),
                );
            }
        }
        if let (Some(rq), Some(df)) = (rq, df) {
            if rq.cmp(df).is_gt() {
                push(
                    at("defaultRequest", k),
                    rq,
                    format!(
                        "default request value {} is greater than default limit value {}",
                        rq.text, df.text
                    ),
                );
            }
        }
        if let (Some(df), Some(mn)) = (df, mn) {
            if mn.cmp(df).is_gt() {
                // kube reports the min value at `default`.
                push(
                    at("default", k),
                    mn,
                    format!(
                        "min value {} is greater than default value {}",
                        mn.text, df.text
                    ),
                );
            }
        }
        if let (Some(df), Some(mx)) = (df, mx) {
            if df.cmp(mx).is_gt() {
                // kube reports the max value at `default`.
                push(
                    at("default", k),
                    mx,
                    format!(
                        "default value {} is greater than max value {}",
                        df.text, mx.text
                    ),
                );
            }
        }
        if let Some(rt) = rt {
            if rt.nanos.map_or(rt.q.is_negative(), |n| n < 1_000_000_000) {
                push(
                    at("maxLimitRequestRatio", k),
                    rt,
                    format!("ratio {} is less than 1", rt.text),
                );
            }
            if let (Some(mn), Some(mx)) = (mn, mx) {
                // Milli precision when all three fit, else whole units.
                const MAX_MILLI: i128 = (i64::MAX / 1000) as i128;
                let (mut ratio_value, mut min_value, mut max_value) =
                    (rt.value() as f64, mn.value(), mx.value());
                if rt.value() < MAX_MILLI && min_value < MAX_MILLI && max_value < MAX_MILLI {
                    ratio_value = rt.milli_value() as f64 / 1000.0;
                    min_value = mn.milli_value();
                    max_value = mx.milli_value();
                }
                let limit = max_value as f64 / min_value as f64;
                if ratio_value > limit {
                    push(
                        at("maxLimitRequestRatio", k),
                        rt,
                        format!("ratio {} is greater than max/min = {limit:.6}", rt.text),
                    );
                }
            }
        }
        if let (Some(df), Some(rq)) = (df, rq) {
            if !overcommit_allowed(k) && df.cmp(rq).is_ne() {
                push(
                    at("defaultRequest", k),
                    rq,
                    format!(
                        "default value {} must equal to defaultRequest value {} in {k}",
                        df.text, rq.text
                    ),
                );
            }
        }
    }
    errs
}
