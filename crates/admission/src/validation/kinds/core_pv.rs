//! PersistentVolume (`ValidatePersistentVolume`, `...Update`,
//! `...StatusUpdate` in `pkg/apis/core/validation`): the spec's basic
//! rules, node affinity, volumeAttributesClassName, every volume source's
//! own fields (most shared with pod volumes, `core_pod::volumes`), and the
//! update rules.

use keelson_apimachinery::names::is_valid_label_value;
use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::Quantity;
use serde_json::{Map, Value};

use super::core_pod::volumes as vols;
use super::util::{dns1123_subdomain, invalid_all, list_of, str_of};
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
    let old_spec = w.old().map(|o| o.get("spec").unwrap_or(&empty));
    // `ValidationOptionsForPersistentVolume`: label values the stored
    // volume's required node affinity already has stay allowed.
    let allow_invalid_values = old_spec
        .and_then(|s| s.pointer("/nodeAffinity/required"))
        .is_some_and(has_invalid_label_value);
    let pv_name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut errs = validate_pv_spec(
        spec,
        &Path::new("spec"),
        pv_name,
        allow_invalid_values,
        false,
    );
    if let Some(old) = old_spec {
        errs.extend(validate_pv_update(spec, old));
    }
    errs
}

fn quantity_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `Quantity.Value()` of `text` (`nanos` nano-units), as an int64.
fn integer_value(text: &str, nanos: i128) -> i64 {
    let int64 = super::core_other::go_int64_amount(text.trim());
    let value = super::core_other::go_scaled(nanos, 1_000_000_000, int64);
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

/// `ValidatePersistentVolumeSpec` for a VolumeAttachment's
/// `inlineVolumeSpec` (`validateInlinePersistentVolumeSpec`, no name,
/// default options) at `sp`.
pub(crate) fn validate_inline_pv_spec(spec: &Value, sp: &Path) -> Vec<FieldError> {
    validate_pv_spec(spec, sp, "", false, true)
}

/// `ValidatePersistentVolumeSpec`; `inline` is its
/// `validateInlinePersistentVolumeSpec` (no claimRef nor capacity, a CSI
/// source required, the capacity rules skipped).
fn validate_pv_spec(
    spec: &Value,
    sp: &Path,
    pv_name: &str,
    allow_invalid_values: bool,
    inline: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if inline {
        const INLINE: &str = "may not be specified in the context of inline volumes";
        if spec.get("claimRef").is_some_and(|v| !v.is_null()) {
            errs.push(FieldError::forbidden(sp.child("claimRef").as_str(), INLINE));
        }
        if spec
            .get("capacity")
            .and_then(Value::as_object)
            .is_some_and(|c| !c.is_empty())
        {
            errs.push(FieldError::forbidden(sp.child("capacity").as_str(), INLINE));
        }
        if spec.get("csi").is_none_or(Value::is_null) {
            errs.push(FieldError::required(
                sp.child("csi").as_str(),
                "has to be specified in the context of inline volumes",
            ));
        }
    }
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
    if !inline && capacity.is_empty() {
        errs.push(FieldError::required(cp.as_str(), ""));
    }
    if !inline && (!capacity.contains_key("storage") || capacity.len() > 1) {
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
    for (k, v) in capacity.iter().filter(|_| !inline) {
        let text = quantity_text(v);
        let Some(q) = Quantity::parse(&text) else {
            continue;
        };
        let Some(n) = q.nanos() else {
            continue;
        };
        let kp = cp.key(k);
        let value = integer_value(&text, n);
        if value < 0 {
            errs.push(FieldError::invalid(
                kp.as_str(),
                value,
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
    // `validateVolumeNodeAffinity`: any non-nil affinity counts as given
    // for local volumes.
    let affinity = spec.get("nodeAffinity").filter(|a| !a.is_null());
    if let Some(a) = affinity {
        let ap = sp.child("nodeAffinity").child("required");
        match a.get("required").filter(|r| !r.is_null()) {
            Some(req) => errs.extend(super::core_pod::node_selector(
                req,
                allow_invalid_values,
                &ap,
            )),
            None => errs.push(FieldError::required(
                ap.as_str(),
                "must specify required node constraints",
            )),
        }
    }
    let mut count = 0;
    for key in SOURCES {
        if spec.get(*key).is_some_and(|v| !v.is_null()) {
            // kube counts flexVolume without the "more than 1" check.
            if count > 0 && *key != "flexVolume" {
                // kube reports a second CephFS source at `cephFS`.
                let at = if *key == "cephfs" { "cephFS" } else { key };
                errs.push(FieldError::forbidden(
                    sp.child(at).as_str(),
                    "may not specify more than 1 volume type",
                ));
            } else {
                count += 1;
                errs.extend(volume_source_fields(key, &spec[*key], sp, pv_name));
                if *key == "local" && affinity.is_none() {
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
        .filter(|h| !h.is_null())
        .is_some_and(|h| cleans_to_root(str_of(h, "path")));
    if root_host_path && policy == "Recycle" {
        errs.push(FieldError::forbidden(
            sp.child("persistentVolumeReclaimPolicy").as_str(),
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    let class = str_of(spec, "storageClassName");
    if !class.is_empty() {
        errs.extend(dns1123_subdomain(class, &sp.child("storageClassName")));
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
    // VolumeAttributesClass is GA (on) in 1.34.
    if let Some(vac) = spec
        .get("volumeAttributesClassName")
        .and_then(Value::as_str)
    {
        let vp = sp.child("volumeAttributesClassName");
        if vac.is_empty() {
            errs.push(FieldError::required(
                vp.as_str(),
                "an empty string is disallowed",
            ));
        } else {
            errs.extend(dns1123_subdomain(vac, &vp));
        }
        if spec.get("csi").is_none_or(Value::is_null) {
            errs.push(FieldError::required(
                sp.child("csi").as_str(),
                "has to be specified when using volumeAttributesClassName",
            ));
        }
    }
    errs
}

/// The source's own rules (`ValidatePersistentVolumeSpec`'s per-source
/// calls): the validators kube shares with pod volumes, the PV variants
/// (glusterfs, iSCSI, Cinder, Azure File, StorageOS) by flag, and the
/// PV-only `local` and CSI sources here.
fn volume_source_fields(key: &str, src: &Value, sp: &Path, pv_name: &str) -> Vec<FieldError> {
    let p = sp.child(key);
    match key {
        "hostPath" => vols::host_path(src, &p),
        "local" => {
            // `validateLocalVolumeSource`.
            let path = str_of(src, "path");
            let pp = p.child("path");
            if path.is_empty() {
                vec![FieldError::required(pp.as_str(), "")]
            } else {
                vols::no_backsteps(path, &pp)
            }
        }
        "gcePersistentDisk" => vols::gce_persistent_disk(src, &sp.child("persistentDisk")),
        "awsElasticBlockStore" => vols::aws_elastic_block_store(src, &p),
        "glusterfs" => vols::glusterfs(src, &p, true),
        "flocker" => vols::flocker(src, &p),
        "nfs" => vols::nfs(src, &p),
        "rbd" => vols::rbd(src, &p),
        "quobyte" => vols::quobyte(src, &p),
        "cephfs" => vols::cephfs(src, &p),
        "iscsi" => vols::iscsi(src, &p, Some(pv_name)),
        "cinder" => vols::cinder(src, &p, true),
        "fc" => vols::fc(src, &p),
        "flexVolume" => vols::flex_volume(src, &p),
        "azureFile" => vols::azure_file(src, &p, true),
        "vsphereVolume" => vols::vsphere_volume(src, &p),
        "photonPersistentDisk" => vols::photon_persistent_disk(src, &p),
        "portworxVolume" => vols::portworx_volume(src, &p),
        "azureDisk" => vols::azure_disk(src, &p),
        "scaleIO" => vols::scale_io(src, &p),
        "storageos" => vols::storageos(src, &p, true),
        "csi" => csi_persistent_volume_source(src, &p),
        _ => Vec::new(),
    }
}

/// `validateCSIPersistentVolumeSource`.
fn csi_persistent_volume_source(src: &Value, cp: &Path) -> Vec<FieldError> {
    let mut errs = vols::csi_driver_name(str_of(src, "driver"), &cp.child("driver"));
    if str_of(src, "volumeHandle").is_empty() {
        errs.push(FieldError::required(cp.child("volumeHandle").as_str(), ""));
    }
    for secret in [
        "controllerPublishSecretRef",
        "controllerExpandSecretRef",
        "nodePublishSecretRef",
        "nodeExpandSecretRef",
    ] {
        let Some(r) = src.get(secret).filter(|r| !r.is_null()) else {
            continue;
        };
        // `validatePVSecretReference`.
        let rp = cp.child(secret);
        let name = str_of(r, "name");
        if name.is_empty() {
            errs.push(FieldError::required(rp.child("name").as_str(), ""));
        } else {
            errs.extend(dns1123_subdomain(name, &rp.child("name")));
        }
        let ns = str_of(r, "namespace");
        if ns.is_empty() {
            errs.push(FieldError::required(rp.child("namespace").as_str(), ""));
        } else {
            errs.extend(invalid_all(
                keelson_apimachinery::names::is_dns1123_label(ns),
                &rp.child("namespace"),
                ns,
            ));
        }
    }
    errs
}

/// Go's `path.Clean(p) == "/"`.
fn cleans_to_root(p: &str) -> bool {
    if !p.starts_with('/') {
        return false;
    }
    let mut depth: Vec<&str> = Vec::new();
    for e in p.split('/') {
        match e {
            "" | "." => {}
            ".." => {
                depth.pop();
            }
            other => depth.push(other),
        }
    }
    depth.is_empty()
}

/// `helper.HasInvalidLabelValueInNodeSelectorTerms` of a node selector.
fn has_invalid_label_value(sel: &Value) -> bool {
    list_of(sel, "nodeSelectorTerms").iter().any(|t| {
        list_of(t, "matchExpressions").iter().any(|r| {
            list_of(r, "values")
                .iter()
                .any(|v| !is_valid_label_value(v.as_str().unwrap_or("")).is_empty())
        })
    })
}

/// `ValidatePersistentVolumeUpdate` beyond the spec rules, in kube's order:
/// the volume source, volumeMode, nodeAffinity, volumeAttributesClassName.
fn validate_pv_update(spec: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if volume_source(spec, old) != volume_source(old, &Value::Null) {
        // kube appends a go-cmp diff of the internal structs after a
        // newline; go-cmp randomizes its whitespace per process, so only
        // the sentence is reproduced.
        errs.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            "spec.persistentvolumesource is immutable after creation",
        ));
    }
    // A volume stored before defaulting reads as defaulted, as kube
    // defaults what it reads from storage.
    let filesystem = Value::String("Filesystem".into());
    let mode = |s: &Value| {
        s.get("volumeMode")
            .filter(|m| !m.is_null())
            .cloned()
            .unwrap_or_else(|| filesystem.clone())
    };
    errs.extend(super::util::immutable(
        Some(&mode(spec)),
        Some(&mode(old)),
        &Path::new("volumeMode"),
    ));
    // A volume without node affinity may get one.
    let old_affinity = old.get("nodeAffinity").filter(|a| !a.is_null());
    if let Some(old_affinity) = old_affinity {
        let new_affinity = spec.get("nodeAffinity").filter(|a| !a.is_null());
        if !affinity_equal(new_affinity, old_affinity) {
            errs.push(FieldError::invalid(
                "nodeAffinity",
                go_volume_node_affinity(new_affinity),
                "field is immutable, except for updating from beta label to GA",
            ));
        }
    }
    let vac = |s: &Value| {
        s.get("volumeAttributesClassName")
            .filter(|v| !v.is_null())
            .cloned()
    };
    if vac(old).is_some() && vac(spec).is_none() {
        errs.push(FieldError::forbidden(
            "spec.volumeAttributesClassName",
            "update from non-nil value to nil is forbidden",
        ));
    }
    errs
}

/// The `PersistentVolumeSource` members of `spec` as
/// `apiequality.Semantic.DeepEqual` compares them (Go zero values dropped).
/// A CSI `controllerExpandSecretRef` the stored volume (`old`) lacks may be
/// added, so it is left out then.
fn volume_source(spec: &Value, old: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for key in SOURCES {
        let Some(v) = spec.get(*key).filter(|v| !v.is_null()) else {
            continue;
        };
        let mut v = v.clone();
        if *key == "csi" {
            let old_lacks = old.get("csi").filter(|c| c.is_object()).is_some_and(|c| {
                c.get("controllerExpandSecretRef")
                    .is_none_or(Value::is_null)
            });
            if old_lacks {
                if let Some(m) = v.as_object_mut() {
                    m.remove("controllerExpandSecretRef");
                }
            }
        }
        // The source itself is a pointer: present even when empty.
        out.insert((*key).to_string(), Value::Array(vec![zeroless(&v)]));
    }
    out
}

/// `v` without Go's zero values (`null`, `""`, `false`, `0`, empty lists
/// and maps), which non-pointer fields cannot tell from absent ones.
fn zeroless(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), zeroless(x)))
                .filter(|(_, x)| !is_zero(x))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(zeroless).collect()),
        other => other.clone(),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

/// kube's beta node labels and their GA names (`betaToGALabel`).
const BETA_TO_GA: &[(&str, &str)] = &[
    (
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/zone",
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/region",
    ),
    ("beta.kubernetes.io/os", "kubernetes.io/os"),
    ("beta.kubernetes.io/arch", "kubernetes.io/arch"),
    (
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
    ),
];

/// `validatePvNodeAffinity`'s equality: semantic, except that a
/// requirement's key may move from a beta label to its GA name.
fn affinity_equal(new: Option<&Value>, old: &Value) -> bool {
    let Some(new) = new else {
        return false;
    };
    let required = |a: &Value| a.get("required").filter(|r| !r.is_null()).cloned();
    let (new_req, old_req) = (required(new), required(old));
    let (Some(new_req), Some(mut old_req)) = (new_req.clone(), old_req.clone()) else {
        return new_req.is_none() && old_req.is_none();
    };
    let terms = |s: &Value| list_of(s, "nodeSelectorTerms").to_vec();
    let new_terms = terms(&new_req);
    if let Some(Value::Array(old_terms)) = old_req.get_mut("nodeSelectorTerms") {
        for (nt, ot) in new_terms.iter().zip(old_terms.iter_mut()) {
            for list in ["matchExpressions", "matchFields"] {
                let new_reqs = list_of(nt, list);
                let Some(Value::Array(old_reqs)) = ot.get_mut(list) else {
                    continue;
                };
                for (nr, or) in new_reqs.iter().zip(old_reqs.iter_mut()) {
                    let (nk, ok) = (str_of(nr, "key"), str_of(or, "key").to_string());
                    if nk != ok && BETA_TO_GA.iter().any(|(b, g)| *b == ok && *g == nk) {
                        or["key"] = Value::String(nk.to_string());
                    }
                }
            }
        }
    }
    zeroless(&new_req) == zeroless(&old_req)
}

/// A `*core.VolumeNodeAffinity` as Go's `encoding/json` prints the
/// internal struct in a field error (no JSON tags: Go field names).
fn go_volume_node_affinity(a: Option<&Value>) -> Value {
    let Some(a) = a else {
        return Value::Null;
    };
    let list = |v: &Value, key: &str, f: &dyn Fn(&Value) -> Value| match v.get(key) {
        Some(Value::Array(items)) => Value::Array(items.iter().map(f).collect()),
        _ => Value::Null,
    };
    let requirement = |r: &Value| {
        let mut m = Map::new();
        m.insert("Key".into(), Value::String(str_of(r, "key").into()));
        m.insert(
            "Operator".into(),
            Value::String(str_of(r, "operator").into()),
        );
        m.insert("Values".into(), list(r, "values", &|v| v.clone()));
        Value::Object(m)
    };
    let term = |t: &Value| {
        let mut m = Map::new();
        m.insert(
            "MatchExpressions".into(),
            list(t, "matchExpressions", &requirement),
        );
        m.insert("MatchFields".into(), list(t, "matchFields", &requirement));
        Value::Object(m)
    };
    let required = match a.get("required").filter(|r| !r.is_null()) {
        Some(r) => {
            let mut m = Map::new();
            m.insert(
                "NodeSelectorTerms".into(),
                list(r, "nodeSelectorTerms", &term),
            );
            Value::Object(m)
        }
        None => Value::Null,
    };
    let mut m = Map::new();
    m.insert("Required".into(), required);
    Value::Object(m)
}
