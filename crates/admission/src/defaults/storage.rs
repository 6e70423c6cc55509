//! `storage.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/storage/v1/defaults.go` and the generated
//! defaulters): StorageClass policies, CSIDriver flags (with kube 1.34's
//! default feature gates: `SELinuxMountReadWriteOncePod` is on, so
//! `seLinuxMount` is defaulted), and the volume-source defaults of a
//! VolumeAttachment's inline volume spec. CSINode, CSIStorageCapacity and
//! VolumeAttributesClass have no defaults.

use serde_json::{Map, Value};

use super::{child, object_at, or_set, or_set_str};

/// StorageClass: `reclaimPolicy` (`Delete`) and `volumeBindingMode`
/// (`Immediate`).
pub(super) fn storage_class(obj: &mut Value) {
    if let Some(m) = obj.as_object_mut() {
        or_set(m, "reclaimPolicy", "Delete");
        or_set(m, "volumeBindingMode", "Immediate");
    }
}

/// CSIDriver: `attachRequired` (true), `podInfoOnMount`,
/// `storageCapacity`, `requiresRepublish` and `seLinuxMount` (false),
/// `fsGroupPolicy` (`ReadWriteOnceWithFSType`) and `volumeLifecycleModes`
/// (`[Persistent]` when empty). `spec` is a struct in Go, so a missing one
/// is defaulted too.
pub(super) fn csi_driver(obj: &mut Value) {
    let Some(spec) = obj.as_object_mut().and_then(|m| child(m, "spec")) else {
        return;
    };
    or_set(spec, "attachRequired", true);
    or_set(spec, "podInfoOnMount", false);
    or_set(spec, "storageCapacity", false);
    or_set(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
    let modes_empty = match spec.get("volumeLifecycleModes") {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    if modes_empty {
        spec.insert(
            "volumeLifecycleModes".into(),
            Value::Array(vec!["Persistent".into()]),
        );
    }
    or_set(spec, "requiresRepublish", false);
    or_set(spec, "seLinuxMount", false);
}

/// The CSIDriver strategy's `dropDisabledFields`: without the
/// `MutableCSINodeAllocatableCount` gate (off in 1.34),
/// `spec.nodeAllocatableUpdatePeriodSeconds` is dropped unless the stored
/// object already has it.
pub(super) fn drop_disabled_csi_driver_fields(obj: &mut Value, old: Option<&Value>) {
    const FIELD: &str = "nodeAllocatableUpdatePeriodSeconds";
    if keelson_apimachinery::featuregates::FeatureGates::global()
        .enabled("MutableCSINodeAllocatableCount")
        || old
            .and_then(|o| o.pointer("/spec/nodeAllocatableUpdatePeriodSeconds"))
            .is_some_and(|v| !v.is_null())
    {
        return;
    }
    if let Some(spec) = object_at(obj, &["spec"]) {
        spec.remove(FIELD);
    }
}

/// VolumeAttachment: the volume sources of `spec.source.inlineVolumeSpec`
/// get the core defaults of a PersistentVolume's sources (hostPath `type`,
/// RBD pool/user/keyring, iSCSI interface, Azure disk caching/kind/fsType/
/// readOnly, ScaleIO storage mode/fsType).
pub(super) fn volume_attachment(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec", "source", "inlineVolumeSpec"]) {
        persistent_volume_sources(spec);
    }
}

/// The source-level defaults of a `PersistentVolumeSpec`.
fn persistent_volume_sources(spec: &mut Map<String, Value>) {
    if let Some(h) = source(spec, "hostPath") {
        or_set(h, "type", "");
    }
    if let Some(r) = source(spec, "rbd") {
        or_set_str(r, "pool", "rbd");
        or_set_str(r, "user", "admin");
        or_set_str(r, "keyring", "/etc/ceph/keyring");
    }
    if let Some(i) = source(spec, "iscsi") {
        or_set_str(i, "iscsiInterface", "default");
    }
    if let Some(a) = source(spec, "azureDisk") {
        or_set(a, "cachingMode", "ReadWrite");
        or_set(a, "kind", "Shared");
        or_set(a, "fsType", "ext4");
        or_set(a, "readOnly", false);
    }
    if let Some(s) = source(spec, "scaleIO") {
        or_set_str(s, "storageMode", "ThinProvisioned");
        or_set_str(s, "fsType", "xfs");
    }
}

/// The source object at `key`, if it is one.
fn source<'a>(spec: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    spec.get_mut(key).and_then(Value::as_object_mut)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn csi_driver_without_spec() {
        let mut d = json!({"metadata": {"name": "d"}});
        csi_driver(&mut d);
        assert_eq!(
            d["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                   "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                   "requiresRepublish": false, "seLinuxMount": false})
        );
    }

    #[test]
    fn inline_volume_sources() {
        let mut va = json!({"spec": {"source": {"inlineVolumeSpec": {
            "rbd": {"monitors": ["m"], "image": "i", "user": "me"},
            "azureDisk": {"diskName": "d", "diskURI": "u", "cachingMode": "None"}}}}});
        volume_attachment(&mut va);
        let s = &va["spec"]["source"]["inlineVolumeSpec"];
        assert_eq!(s["rbd"]["pool"], "rbd");
        assert_eq!(s["rbd"]["user"], "me");
        assert_eq!(s["rbd"]["keyring"], "/etc/ceph/keyring");
        assert_eq!(s["azureDisk"]["cachingMode"], "None");
        assert_eq!(s["azureDisk"]["kind"], "Shared");
        assert_eq!(s["azureDisk"]["fsType"], "ext4");
        assert_eq!(s["azureDisk"]["readOnly"], false);
    }
}
