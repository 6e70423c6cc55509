//! storage.k8s.io (`pkg/apis/storage/validation`): StorageClass,
//! VolumeAttachment, CSIDriver, CSINode, CSIStorageCapacity and
//! VolumeAttributesClass, create and update.
//!
//! Not reproduced: map entries (parameters, matchLabels) are checked in
//! key order (kube: Go map order).

use keelson_apimachinery::names::{is_dns1123_subdomain, is_qualified_name};
use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::Quantity;
use serde_json::{json, Map, Value};

use super::core_pod::volumes::csi_driver_name;
use super::util::{
    duplicate, go_selector, immutable, int_of, invalid_all, list_of, obj_of, semantic, str_of,
    validate_label_selector,
};
use super::{Path, Write};

/// kube's `maxProvisionerParameterSize` and `maxProvisionerParameterLen`.
const MAX_PARAMETER_SIZE: usize = 256 * 1024;
const MAX_PARAMETER_LEN: usize = 512;
/// kube's `maxAttachedVolumeMetadataSize` and `maxVolumeErrorMessageSize`.
const MAX_ATTACHED_METADATA_SIZE: usize = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE_SIZE: usize = 1024;
/// kube's `csiNodeIDLongerMaxLength` (the 1.34 strategy always allows it).
const CSI_NODE_ID_MAX_LENGTH: usize = 256;
/// The gate that makes CSINode `allocatable.count` mutable.
const MUTABLE_ALLOCATABLE_GATE: &str = "MutableCSINodeAllocatableCount";

/// The errors of one object of this group's `kind`; none for kinds
/// without rules.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let old = w.old();
    match kind {
        "StorageClass" => {
            let mut errs = validate_storage_class(obj);
            if let Some(old) = old {
                errs.extend(validate_storage_class_update(obj, old));
            }
            errs
        }
        "VolumeAttachment" => match old {
            None => {
                let mut errs = validate_volume_attachment(obj);
                errs.extend(validate_volume_attachment_v1(obj));
                errs
            }
            // kube's update runs `ValidateVolumeAttachment` twice (the
            // strategy and `ValidateVolumeAttachmentUpdate` both call it).
            Some(old) => {
                let mut errs = validate_volume_attachment(obj);
                errs.extend(validate_volume_attachment(obj));
                let spec = |o: &Value| semantic(o.get("spec").unwrap_or(&Value::Null));
                if spec(obj) != spec(old) {
                    errs.push(FieldError::invalid(
                        "spec",
                        go_attachment_spec(obj.get("spec").unwrap_or(&Value::Null)),
                        "field is immutable",
                    ));
                }
                errs
            }
        },
        "CSIDriver" => {
            let spec = obj.get("spec").unwrap_or(&Value::Null);
            let mut errs = validate_csi_driver_spec(spec);
            if let Some(old) = old {
                let old_spec = old.get("spec").unwrap_or(&Value::Null);
                errs.extend(immutable(
                    spec.get("attachRequired"),
                    old_spec.get("attachRequired"),
                    &Path::new("spec.attachedRequired"),
                ));
                let modes = |s: &Value| semantic(&json!({"m": s.get("volumeLifecycleModes")}));
                if modes(spec) != modes(old_spec) {
                    errs.push(FieldError::invalid(
                        "spec.volumeLifecycleModes",
                        spec.get("volumeLifecycleModes")
                            .cloned()
                            .unwrap_or(Value::Null),
                        "field is immutable",
                    ));
                }
            }
            errs
        }
        "CSINode" => {
            let mut errs = validate_csi_node(obj);
            if let Some(old) = old {
                // As VolumeAttachment: the create rules run twice.
                errs.extend(validate_csi_node(obj));
                errs.extend(validate_csi_node_update(obj, old));
            }
            errs
        }
        "CSIStorageCapacity" => {
            let allow_invalid = old.is_some_and(|o| {
                !validate_label_selector(o.get("nodeTopology"), false, &Path::new("nodeTopology"))
                    .is_empty()
            });
            let mut errs = validate_storage_capacity(obj, allow_invalid);
            if let Some(old) = old {
                let topo = |o: &Value| o.get("nodeTopology").filter(|v| !v.is_null()).map(semantic);
                if topo(obj) != topo(old) {
                    errs.push(FieldError::invalid(
                        "nodeTopology",
                        obj.get("nodeTopology")
                            .filter(|v| !v.is_null())
                            .map_or(Value::Null, go_selector),
                        "field is immutable",
                    ));
                }
                let class = str_of(obj, "storageClassName");
                if class != str_of(old, "storageClassName") {
                    errs.push(FieldError::invalid(
                        "storageClassName",
                        class,
                        "field is immutable",
                    ));
                }
            }
            errs
        }
        "VolumeAttributesClass" => {
            let mut errs = Vec::new();
            if let Some(old) = old {
                if str_of(obj, "driverName") != str_of(old, "driverName") {
                    errs.push(FieldError::forbidden(
                        "driverName",
                        "updates to driverName are forbidden.",
                    ));
                }
                // Plain `reflect.DeepEqual`: an absent map differs from `{}`.
                if obj.get("parameters").filter(|v| !v.is_null())
                    != old.get("parameters").filter(|v| !v.is_null())
                {
                    errs.push(FieldError::forbidden(
                        "parameters",
                        "updates to parameters are forbidden.",
                    ));
                }
            }
            errs.extend(validate_provisioner(
                str_of(obj, "driverName"),
                "driverName",
            ));
            errs.extend(validate_parameters(obj_of(obj, "parameters"), false));
            errs
        }
        _ => Vec::new(),
    }
}

/// `validateProvisioner`: required, a qualified name once lower-cased
/// (the lower-cased value is the one reported).
fn validate_provisioner(prov: &str, path: &str) -> Vec<FieldError> {
    if prov.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let lower = prov.to_lowercase();
    invalid_all(is_qualified_name(&lower), &Path::new(path), &lower)
}

/// `validateParameters`: at most 512 entries, no empty key, 256 KiB in
/// all; at least one unless `allow_empty`.
fn validate_parameters(params: Option<&Map<String, Value>>, allow_empty: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let len = params.map_or(0, Map::len);
    if len > MAX_PARAMETER_LEN {
        errs.push(FieldError::too_long(
            "parameters",
            &format!("may not be more than {MAX_PARAMETER_LEN} bytes"),
        ));
        return errs;
    }
    let mut total = 0usize;
    for (k, v) in params.into_iter().flatten() {
        if k.is_empty() {
            errs.push(FieldError::invalid(
                "parameters",
                "",
                "field can not be empty.",
            ));
        }
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    if total > MAX_PARAMETER_SIZE {
        errs.push(FieldError::too_long(
            "parameters",
            &format!("may not be more than {MAX_PARAMETER_SIZE} bytes"),
        ));
    }
    if !allow_empty && len == 0 {
        errs.push(FieldError::required(
            "parameters",
            "must contain at least one key/value pair",
        ));
    }
    errs
}

/// `ValidateStorageClass`.
fn validate_storage_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = validate_provisioner(str_of(obj, "provisioner"), "provisioner");
    errs.extend(validate_parameters(obj_of(obj, "parameters"), true));
    let reclaim = str_of(obj, "reclaimPolicy");
    if !reclaim.is_empty() && !["Delete", "Retain"].contains(&reclaim) {
        errs.push(FieldError::not_supported(
            "reclaimPolicy",
            reclaim,
            &["Delete", "Retain"],
        ));
    }
    const MODES: &[&str] = &["Immediate", "WaitForFirstConsumer"];
    match obj.get("volumeBindingMode").and_then(Value::as_str) {
        None => errs.push(FieldError::required("volumeBindingMode", "")),
        Some(m) if !MODES.contains(&m) => {
            errs.push(FieldError::not_supported("volumeBindingMode", m, MODES))
        }
        Some(_) => {}
    }
    errs.extend(validate_allowed_topologies(list_of(
        obj,
        "allowedTopologies",
    )));
    errs
}

/// One topology term as kube compares terms: each key's set of values.
type TermMap = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// `validateAllowedTopologies`. kube compares each term with a list that
/// starts with one empty placeholder per term (`make(..., len)` before
/// appending), so a term without expressions is a duplicate of each.
fn validate_allowed_topologies(terms: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<TermMap> = vec![TermMap::new(); terms.len()];
    for (i, term) in terms.iter().enumerate() {
        let tp = Path::new("allowedTopologies").index(i);
        let mut map = TermMap::new();
        for (j, req) in list_of(term, "matchLabelExpressions").iter().enumerate() {
            let rp = tp.child("matchLabelExpressions").index(j);
            let values = list_of(req, "values");
            if values.is_empty() {
                errs.push(FieldError::required(rp.child("values").as_str(), ""));
            }
            let mut set = std::collections::BTreeSet::new();
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or_default();
                if !set.insert(v.to_string()) {
                    errs.push(duplicate(&rp.child("values").index(k), v));
                }
            }
            let key = str_of(req, "key");
            errs.extend(invalid_all(is_qualified_name(key), &rp.child("key"), key));
            if map.contains_key(key) {
                errs.push(duplicate(&rp.child("key"), key));
            }
            map.insert(key.to_string(), set);
        }
        for earlier in &seen {
            if *earlier == map {
                errs.push(duplicate(&tp.child("matchLabelExpressions"), ""));
            }
        }
        seen.push(map);
    }
    errs
}

/// `ValidateStorageClassUpdate`: parameters, provisioner, reclaimPolicy
/// and volumeBindingMode are fixed.
fn validate_storage_class_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // Plain `reflect.DeepEqual`: an absent map differs from `{}`.
    if obj.get("parameters").filter(|v| !v.is_null())
        != old.get("parameters").filter(|v| !v.is_null())
    {
        errs.push(FieldError::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if str_of(obj, "provisioner") != str_of(old, "provisioner") {
        errs.push(FieldError::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    // A stored object from before defaulting reads as defaulted, as kube
    // decodes it.
    let reclaim = |o: &Value| match str_of(o, "reclaimPolicy") {
        "" => "Delete".to_string(),
        v => v.to_string(),
    };
    if reclaim(obj) != reclaim(old) {
        errs.push(FieldError::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    let mode = |o: &Value| {
        o.get("volumeBindingMode")
            .cloned()
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Value::String("Immediate".into()))
    };
    errs.extend(immutable(
        Some(&mode(obj)),
        Some(&mode(old)),
        &Path::new("volumeBindingMode"),
    ));
    errs
}

/// `ValidateVolumeAttachment`: spec (attacher, source, nodeName), then
/// status (metadata size, attach and detach errors).
fn validate_volume_attachment(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    if str_of(spec, "attacher").is_empty() {
        errs.push(FieldError::required("spec.attacher", ""));
    }
    let source = spec.get("source").unwrap_or(&empty);
    let inline = source.get("inlineVolumeSpec").filter(|v| !v.is_null());
    let pv = source.get("persistentVolumeName").filter(|v| !v.is_null());
    const ONE_OF: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
    match (inline, pv) {
        (None, None) => errs.push(FieldError::required("spec.source", ONE_OF)),
        (Some(_), Some(_)) => errs.push(FieldError::forbidden("spec.source", ONE_OF)),
        (None, Some(name)) if name.as_str().unwrap_or_default().is_empty() => {
            errs.push(FieldError::required(
                "spec.source.persistentVolumeName",
                "must specify non empty persistentVolumeName",
            ))
        }
        (Some(spec), None) => errs.extend(super::core_pv::validate_inline_pv_spec(
            spec,
            &Path::new("spec.source.inlineVolumeSpec"),
        )),
        _ => {}
    }
    let node = str_of(spec, "nodeName");
    errs.extend(invalid_all(
        is_dns1123_subdomain(node),
        &Path::new("spec.nodeName"),
        node,
    ));
    let status = obj.get("status").unwrap_or(&empty);
    let metadata_size: usize = obj_of(status, "attachmentMetadata")
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if metadata_size > MAX_ATTACHED_METADATA_SIZE {
        errs.push(FieldError::too_long(
            "status.attachmentMetadata",
            &format!("may not be more than {MAX_ATTACHED_METADATA_SIZE} bytes"),
        ));
    }
    for field in ["attachError", "detachError"] {
        let Some(e) = status.get(field).filter(|v| v.is_object()) else {
            continue;
        };
        let p = Path::new("status").child(field);
        if str_of(e, "message").len() > MAX_VOLUME_ERROR_MESSAGE_SIZE {
            // kube checks 1024 bytes but reports the metadata limit.
            errs.push(FieldError::too_long(
                p.child("message").as_str(),
                &format!("may not be more than {MAX_ATTACHED_METADATA_SIZE} bytes"),
            ));
        }
        if let Some(code) = int_of(e, "errorCode").filter(|c| *c < 0) {
            errs.push(FieldError::invalid(
                p.child("errorCode").as_str(),
                code,
                "must be between 0 and 2147483647, inclusive",
            ));
        }
    }
    errs
}

/// `ValidateVolumeAttachmentV1` (creates only): the attacher is a CSI
/// driver name, the PersistentVolume name a DNS subdomain.
fn validate_volume_attachment_v1(obj: &Value) -> Vec<FieldError> {
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut errs = csi_driver_name(str_of(spec, "attacher"), &Path::new("spec.attacher"));
    if let Some(pv) = spec
        .pointer("/source/persistentVolumeName")
        .and_then(Value::as_str)
    {
        errs.extend(invalid_all(
            is_dns1123_subdomain(pv),
            &Path::new("spec.source.persistentVolumeName"),
            pv,
        ));
    }
    errs
}

/// A VolumeAttachment spec as kube prints the internal struct (Go field
/// names, no json tags).
fn go_attachment_spec(spec: &Value) -> Value {
    let source = spec.get("source").unwrap_or(&Value::Null);
    json!({
        "Attacher": str_of(spec, "attacher"),
        "Source": {
            "PersistentVolumeName": source.get("persistentVolumeName").cloned().unwrap_or(Value::Null),
            "InlineVolumeSpec": source.get("inlineVolumeSpec").cloned().unwrap_or(Value::Null),
        },
        "NodeName": str_of(spec, "nodeName"),
    })
}

/// `validateCSIDriverSpec` (note kube's `spec.attachedRequired` path).
fn validate_csi_driver_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sp = Path::new("spec");
    let absent = |k: &str| spec.get(k).is_none_or(Value::is_null);
    if absent("attachRequired") {
        errs.push(FieldError::required("spec.attachedRequired", ""));
    }
    if absent("podInfoOnMount") {
        errs.push(FieldError::required("spec.podInfoOnMount", ""));
    }
    if absent("storageCapacity") {
        errs.push(FieldError::required("spec.storageCapacity", ""));
    }
    const POLICIES: &[&str] = &["File", "None", "ReadWriteOnceWithFSType"];
    if let Some(p) = spec.get("fsGroupPolicy").and_then(Value::as_str) {
        if !POLICIES.contains(&p) {
            errs.push(FieldError::not_supported("spec.fsGroupPolicy", p, POLICIES));
        }
    }
    let mut audiences = std::collections::BTreeSet::new();
    for (i, t) in list_of(spec, "tokenRequests").iter().enumerate() {
        let tp = sp.child("tokenRequests").index(i);
        let audience = str_of(t, "audience");
        if !audiences.insert(audience) {
            errs.push(duplicate(&tp.child("audience"), audience));
            continue;
        }
        match int_of(t, "expirationSeconds") {
            Some(s) if s < 600 => errs.push(FieldError::invalid(
                tp.child("expirationSeconds").as_str(),
                s,
                "may not specify a duration less than 10 minutes",
            )),
            Some(s) if s > 1 << 32 => errs.push(FieldError::invalid(
                tp.child("expirationSeconds").as_str(),
                s,
                "may not specify a duration larger than 2^32 seconds",
            )),
            _ => {}
        }
    }
    const MODES: &[&str] = &["Persistent", "Ephemeral"];
    for m in list_of(spec, "volumeLifecycleModes") {
        let m = m.as_str().unwrap_or_default();
        if !MODES.contains(&m) {
            errs.push(FieldError::not_supported(
                "spec.volumeLifecycleModes",
                m,
                MODES,
            ));
        }
    }
    if absent("seLinuxMount") {
        errs.push(FieldError::required("spec.seLinuxMount", ""));
    }
    if let Some(s) = int_of(spec, "nodeAllocatableUpdatePeriodSeconds").filter(|s| *s < 10) {
        errs.push(FieldError::invalid(
            "spec.nodeAllocatableUpdatePeriodSeconds",
            s,
            "must be greater than or equal to 10 seconds",
        ));
    }
    errs
}

/// `ValidateCSINode`'s drivers: name, nodeID, allocatable count, unique
/// names, topology keys (reported at the driver).
fn validate_csi_node(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    let drivers = obj.get("spec").map_or(&[][..], |s| list_of(s, "drivers"));
    for (i, d) in drivers.iter().enumerate() {
        let dp = Path::new("spec").child("drivers").index(i);
        let name = str_of(d, "name");
        errs.extend(csi_driver_name(name, &dp.child("name")));
        let node_id = str_of(d, "nodeID");
        if node_id.is_empty() {
            errs.push(FieldError::required(dp.child("nodeID").as_str(), ""));
        } else if node_id.len() > CSI_NODE_ID_MAX_LENGTH {
            errs.push(FieldError::invalid(
                dp.child("nodeID").as_str(),
                node_id,
                &format!("must be {CSI_NODE_ID_MAX_LENGTH} characters or less"),
            ));
        }
        if let Some(c) = d
            .pointer("/allocatable/count")
            .and_then(Value::as_i64)
            .filter(|c| *c < 0)
        {
            errs.push(FieldError::invalid(
                dp.child("allocatable").child("count").as_str(),
                c,
                "must be greater than or equal to 0",
            ));
        }
        if !names.insert(name) {
            errs.push(duplicate(&dp.child("name"), name));
        }
        let mut keys = std::collections::BTreeSet::new();
        for k in list_of(d, "topologyKeys") {
            let k = k.as_str().unwrap_or_default();
            if k.is_empty() {
                errs.push(FieldError::required(dp.as_str(), ""));
            }
            if !keys.insert(k) {
                errs.push(duplicate(&dp, k));
            }
            errs.extend(invalid_all(is_qualified_name(k), &dp, k));
        }
    }
    errs
}

/// `ValidateCSINodeUpdate`: a driver kept by name keeps its nodeID and
/// topology keys (and its allocatable count unless
/// `MutableCSINodeAllocatableCount` is on), reported at `spec.drivers`.
fn validate_csi_node_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mutable_count = keelson_apimachinery::featuregates::FeatureGates::global()
        .enabled(MUTABLE_ALLOCATABLE_GATE);
    fn drivers(o: &Value) -> &[Value] {
        o.get("spec").map_or(&[][..], |s| list_of(s, "drivers"))
    }
    let go_driver = |d: &Value| {
        let allocatable = if mutable_count {
            Value::Null
        } else {
            match d.get("allocatable").filter(|a| a.is_object()) {
                Some(a) => json!({"Count": a.get("count").cloned().unwrap_or(Value::Null)}),
                None => Value::Null,
            }
        };
        json!({
            "Name": str_of(d, "name"),
            "NodeID": str_of(d, "nodeID"),
            "TopologyKeys": d.get("topologyKeys").cloned().unwrap_or(Value::Null),
            "Allocatable": allocatable,
        })
    };
    let mut errs = Vec::new();
    for od in drivers(old) {
        for nd in drivers(obj) {
            if str_of(od, "name") != str_of(nd, "name") {
                continue;
            }
            let (n, o) = (go_driver(nd), go_driver(od));
            if semantic(&n) != semantic(&o) {
                errs.push(FieldError::invalid("spec.drivers", n, "field is immutable"));
            }
        }
    }
    errs
}

/// `ValidateCSIStorageCapacity`: nodeTopology a label selector,
/// storageClassName a DNS subdomain, capacity not negative.
fn validate_storage_capacity(obj: &Value, allow_invalid_values: bool) -> Vec<FieldError> {
    let mut errs = validate_label_selector(
        obj.get("nodeTopology"),
        allow_invalid_values,
        &Path::new("nodeTopology"),
    );
    let class = str_of(obj, "storageClassName");
    errs.extend(invalid_all(
        is_dns1123_subdomain(class),
        &Path::new("storageClassName"),
        class,
    ));
    if let Some(q) = obj
        .get("capacity")
        .and_then(Value::as_str)
        .and_then(Quantity::parse)
        .filter(Quantity::is_negative)
    {
        let text = q
            .nanos()
            .map_or_else(String::new, |n| Quantity::canonical(n, q.format()));
        errs.push(FieldError::invalid(
            "capacity",
            text.as_str(),
            "must be greater than or equal to 0",
        ));
    }
    errs
}
