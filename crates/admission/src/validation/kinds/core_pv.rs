//! PersistentVolume (`ValidatePersistentVolume`, `...Update`,
//! `...StatusUpdate` in `pkg/apis/core/validation`): the spec's basic
//! rules. The volume sources' own fields, node affinity and
//! volumeAttributesClassName are not checked (docs/compatibility.md).

use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::Quantity;
use serde_json::{Map, Value};

use super::util::{list_of, str_of};
use super::{Path, Write};

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const RECLAIM_POLICIES: &[&str] = &["Delete", "Recycle", "Retain"];
const VOLUME_MODES: &[&str] = &["Block", "Filesystem"];
/// The volume sources in kube's order, with the key each is reported at.
const SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// The errors of a PersistentVolume write.
pub(crate) fn validate(w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if w.is_status() {
        // `ValidatePersistentVolumeStatusUpdate`: metadata only (the
        // resourceVersion is always there by now).
        return Vec::new();
    }
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut errs = validate_pv_spec(spec, &Path::new("spec"));
    if let Some(old) = w.old() {
        errs.extend(validate_pv_update(spec, old.get("spec").unwrap_or(&empty)));
    }
    errs
}

fn quantity_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `ValidatePersistentVolumeSpec` (not inline).
fn validate_pv_spec(spec: &Value, sp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mp = sp.child("accessModes");
    let modes = list_of(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required(mp.as_str(), ""));
    }
    let (mut rwop, mut other) = (false, false);
    for m in modes {
        let m = m.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&m) {
            errs.push(FieldError::not_supported(mp.as_str(), m, ACCESS_MODES));
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            mp.as_str(),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let cp = sp.child("capacity");
    let empty = Map::new();
    let capacity = spec
        .get("capacity")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if capacity.is_empty() {
        errs.push(FieldError::required(cp.as_str(), ""));
    }
    if !capacity.contains_key("storage") || capacity.len() > 1 {
        // Go marshals the ResourceList with sorted keys and canonical
        // quantities.
        let mut sorted: Vec<(&String, &Value)> = capacity.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut shown = Map::new();
        for (k, v) in sorted {
            let text = quantity_text(v);
            let canonical = Quantity::parse(&text)
                .and_then(|q| q.nanos().map(|n| Quantity::canonical(n, q.format())))
                .unwrap_or(text);
            shown.insert(k.clone(), Value::String(canonical));
        }
        // An absent list is Go's nil map: `null`.
        let value = match spec.get("capacity").filter(|c| c.is_object()) {
            None => Value::Null,
            Some(_) => Value::Object(shown),
        };
        errs.push(FieldError::not_supported(cp.as_str(), value, &["storage"]));
    }
    for (k, v) in capacity {
        let Some(q) = Quantity::parse(&quantity_text(v)) else {
            continue;
        };
        let Some(n) = q.nanos() else {
            continue;
        };
        let kp = cp.key(k);
        if n < 0 {
            // `Quantity.Value()`: rounded up to an integer.
            let value = n.div_euclid(1_000_000_000) + i128::from(n.rem_euclid(1_000_000_000) != 0);
            errs.push(FieldError::invalid(
                kp.as_str(),
                i64::try_from(value).unwrap_or(i64::MIN),
                "must be a valid resource quantity",
            ));
        }
        if n <= 0 {
            errs.push(FieldError::invalid(
                kp.as_str(),
                Quantity::canonical(n, q.format()),
                "must be greater than zero",
            ));
        }
    }
    let policy = str_of(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported(
            sp.child("persistentVolumeReclaimPolicy").as_str(),
            policy,
            RECLAIM_POLICIES,
        ));
    }
    let mut count = 0;
    for key in SOURCES {
        if spec.get(*key).is_some_and(|v| !v.is_null()) {
            // kube counts flexVolume without the "more than 1" check.
            if count > 0 && *key != "flexVolume" {
                errs.push(FieldError::forbidden(
                    sp.child(key).as_str(),
                    "may not specify more than 1 volume type",
                ));
            } else {
                count += 1;
                if *key == "local" && spec.get("nodeAffinity").is_none_or(Value::is_null) {
                    errs.push(FieldError::required(
                        sp.child("nodeAffinity").as_str(),
                        "Local volume requires node affinity",
                    ));
                }
            }
        }
    }
    if count == 0 {
        errs.push(FieldError::required(
            sp.as_str(),
            "must specify a volume type",
        ));
    }
    let root_host_path = spec
        .get("hostPath")
        .map(|h| str_of(h, "path"))
        .is_some_and(|p| !p.is_empty() && p.trim_end_matches('/').is_empty());
    if root_host_path && policy == "Recycle" {
        errs.push(FieldError::forbidden(
            sp.child("persistentVolumeReclaimPolicy").as_str(),
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    let class = str_of(spec, "storageClassName");
    if !class.is_empty() {
        for m in keelson_apimachinery::names::is_dns1123_subdomain(class) {
            errs.push(FieldError::invalid(
                sp.child("storageClassName").as_str(),
                class,
                &m,
            ));
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !VOLUME_MODES.contains(&mode) {
            errs.push(FieldError::not_supported(
                sp.child("volumeMode").as_str(),
                mode,
                VOLUME_MODES,
            ));
        }
    }
    errs
}

/// `ValidatePersistentVolumeUpdate` beyond the spec rules: the volume mode
/// is immutable (the source's immutability message carries a Go diff and
/// is not reproduced).
fn validate_pv_update(spec: &Value, old: &Value) -> Vec<FieldError> {
    super::util::immutable(
        spec.get("volumeMode"),
        old.get("volumeMode"),
        &Path::new("volumeMode"),
    )
}
