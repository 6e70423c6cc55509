//! Storage: persistent volumes, claims and storage classes.

use serde_json::Value;

use super::columns::*;
use super::quantity;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

pub(crate) static PERSISTENT_VOLUME: Printer = Printer {
    columns: &[
        NAME,
        col("Capacity", "string", PV_SPEC_CAPACITY),
        col("Access Modes", "string", PV_SPEC_ACCESS_MODES),
        col("Reclaim Policy", "string", PV_SPEC_RECLAIM_POLICY),
        col("Status", "string", PV_STATUS_PHASE),
        col("Claim", "string", PV_SPEC_CLAIM_REF),
        col("StorageClass", "string", "StorageClass of the pv"),
        col(
            "VolumeAttributesClass",
            "string",
            "VolumeAttributesClass of the pv",
        ),
        col("Reason", "string", PV_STATUS_REASON),
        AGE,
        wide("VolumeMode", "string", PV_SPEC_VOLUME_MODE),
    ],
    print: print_persistent_volume,
};

pub(crate) static PERSISTENT_VOLUME_CLAIM: Printer = Printer {
    columns: &[
        NAME,
        col("Status", "string", PVC_STATUS_PHASE),
        col("Volume", "string", PVC_SPEC_VOLUME_NAME),
        col("Capacity", "string", PVC_STATUS_CAPACITY),
        col("Access Modes", "string", PVC_STATUS_ACCESS_MODES),
        col("StorageClass", "string", "StorageClass of the pvc"),
        col(
            "VolumeAttributesClass",
            "string",
            "VolumeAttributesClass of the pvc",
        ),
        AGE,
        wide("VolumeMode", "string", PVC_SPEC_VOLUME_MODE),
    ],
    print: print_persistent_volume_claim,
};

pub(crate) static STORAGE_CLASS: Printer = Printer {
    columns: &[
        NAME,
        col("Provisioner", "string", SC_PROVISIONER),
        col("ReclaimPolicy", "string", SC_RECLAIM_POLICY),
        col("VolumeBindingMode", "string", SC_VOLUME_BINDING_MODE),
        col("AllowVolumeExpansion", "string", SC_ALLOW_VOLUME_EXPANSION),
        AGE,
    ],
    print: print_storage_class,
};

/// `helper.GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
fn access_modes(modes: &[Value]) -> String {
    let has = |m: &str| modes.iter().any(|v| v.as_str() == Some(m));
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| has(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// A storage quantity (`0` when missing, as Go's zero Quantity).
fn storage(o: &Value, path: &[&str]) -> String {
    match opt_str(o, path) {
        Some(q) => quantity::canonical(q),
        None => "0".to_string(),
    }
}

const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

fn phase_or_terminating(o: &Value) -> &str {
    if deleting(o) {
        "Terminating"
    } else {
        str_at(o, &["status", "phase"])
    }
}

fn print_persistent_volume(o: &Value, now: Time) -> Row {
    let claim = match at(o, &["spec", "claimRef"]).filter(|c| c.is_object()) {
        Some(c) => format!("{}/{}", str_at(c, &["namespace"]), str_at(c, &["name"])),
        None => String::new(),
    };
    let class = opt_str(o, &["metadata", "annotations", BETA_STORAGE_CLASS])
        .unwrap_or_else(|| str_at(o, &["spec", "storageClassName"]));
    Row::new(vec![
        Value::from(name(o)),
        Value::from(storage(o, &["spec", "capacity", "storage"])),
        Value::from(access_modes(arr_at(o, &["spec", "accessModes"]))),
        Value::from(str_at(o, &["spec", "persistentVolumeReclaimPolicy"])),
        Value::from(phase_or_terminating(o)),
        Value::from(claim),
        Value::from(class),
        Value::from(opt_str(o, &["spec", "volumeAttributesClassName"]).unwrap_or("<unset>")),
        Value::from(str_at(o, &["status", "reason"])),
        age(o, now),
        Value::from(opt_str(o, &["spec", "volumeMode"]).unwrap_or("<unset>")),
    ])
}

fn print_persistent_volume_claim(o: &Value, now: Time) -> Row {
    let volume = str_at(o, &["spec", "volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            storage(o, &["status", "capacity", "storage"]),
            access_modes(arr_at(o, &["status", "accessModes"])),
        )
    };
    let class = opt_str(o, &["metadata", "annotations", BETA_STORAGE_CLASS])
        .or_else(|| opt_str(o, &["spec", "storageClassName"]))
        .unwrap_or("");
    Row::new(vec![
        Value::from(name(o)),
        Value::from(phase_or_terminating(o)),
        Value::from(volume),
        Value::from(capacity),
        Value::from(modes),
        Value::from(class),
        Value::from(opt_str(o, &["spec", "volumeAttributesClassName"]).unwrap_or("<unset>")),
        age(o, now),
        Value::from(opt_str(o, &["spec", "volumeMode"]).unwrap_or("<unset>")),
    ])
}

fn print_storage_class(o: &Value, now: Time) -> Row {
    let default = [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .iter()
    .any(|a| str_at(o, &["metadata", "annotations", a]) == "true");
    let mut n = name(o).to_string();
    if default {
        n.push_str(" (default)");
    }
    Row::new(vec![
        Value::from(n),
        Value::from(str_at(o, &["provisioner"])),
        Value::from(opt_str(o, &["reclaimPolicy"]).unwrap_or("Delete")),
        Value::from(opt_str(o, &["volumeBindingMode"]).unwrap_or("Immediate")),
        Value::from(opt_bool(o, &["allowVolumeExpansion"]).unwrap_or(false)),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    // Facts from kube's printers_test.go TestPrintPersistentVolume(Claim).
    #[test]
    fn volumes_and_claims() {
        let pv = json!({
            "metadata": {"name": "test1"},
            "spec": {"claimRef": {"name": "test", "namespace": "default"}, "accessModes": ["ReadOnlyMany"],
                     "volumeMode": "Filesystem", "capacity": {"storage": "4Gi"}, "storageClassName": "fast"},
            "status": {"phase": "Failed", "reason": "failed"}
        });
        assert_eq!(
            print_persistent_volume(&pv, now()).cells,
            vec![
                json!("test1"),
                json!("4Gi"),
                json!("ROX"),
                json!(""),
                json!("Failed"),
                json!("default/test"),
                json!("fast"),
                json!("<unset>"),
                json!("failed"),
                json!("<unknown>"),
                json!("Filesystem")
            ]
        );
        let pvc = json!({
            "metadata": {"name": "test1", "annotations": {BETA_STORAGE_CLASS: "beta"}},
            "spec": {"volumeName": "my-volume", "volumeAttributesClassName": "vac"},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"], "capacity": {"storage": "4096Mi"}}
        });
        assert_eq!(
            print_persistent_volume_claim(&pvc, now()).cells,
            vec![
                json!("test1"),
                json!("Bound"),
                json!("my-volume"),
                json!("4Gi"),
                json!("ROX,RWOP"),
                json!("beta"),
                json!("vac"),
                json!("<unknown>"),
                json!("<unset>")
            ]
        );
        let pending = json!({"metadata": {"name": "p", "deletionTimestamp": "2024-05-01T11:00:00Z"},
            "spec": {"storageClassName": "std", "volumeMode": "Block"}, "status": {"phase": "Pending"}});
        let c = print_persistent_volume_claim(&pending, now()).cells;
        assert_eq!(
            (&c[1], &c[3], &c[4], &c[5], &c[8]),
            (
                &json!("Terminating"),
                &json!(""),
                &json!(""),
                &json!("std"),
                &json!("Block")
            )
        );
    }

    #[test]
    fn storage_classes() {
        let sc = json!({"metadata": {"name": "sc1", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                        "provisioner": "kubernetes.io/glusterfs"});
        assert_eq!(
            print_storage_class(&sc, now()).cells,
            vec![
                json!("sc1 (default)"),
                json!("kubernetes.io/glusterfs"),
                json!("Delete"),
                json!("Immediate"),
                json!(false),
                json!("<unknown>")
            ]
        );
        let sc = json!({"metadata": {"name": "sc2"}, "provisioner": "p", "reclaimPolicy": "Retain",
                        "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true});
        let c = print_storage_class(&sc, now()).cells;
        assert_eq!(
            &c[..5],
            &[
                json!("sc2"),
                json!("p"),
                json!("Retain"),
                json!("WaitForFirstConsumer"),
                json!(true)
            ]
        );
    }
}
