//! Storage: persistent volumes, claims, storage classes, volume attributes
//! classes, volume attachments and the CSI objects (drivers, nodes, storage
//! capacities).

use serde_json::Value;

use super::columns::*;
use super::quantity;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

// storage/v1 swagger docs kube's columns carry.
const CSI_DRIVER_ATTACH_REQUIRED: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const CSI_DRIVER_POD_INFO_ON_MOUNT: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const CSI_DRIVER_STORAGE_CAPACITY: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const CSI_DRIVER_TOKEN_REQUESTS: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const CSI_DRIVER_REQUIRES_REPUBLISH: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const CSI_DRIVER_VOLUME_LIFECYCLE_MODES: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";
const CSI_CAPACITY_STORAGE_CLASS_NAME: &str = "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.";
const CSI_CAPACITY_CAPACITY: &str = "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.";
const VA_SPEC_ATTACHER: &str = "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().";
const VA_SOURCE_PERSISTENT_VOLUME_NAME: &str =
    "persistentVolumeName represents the name of the persistent volume to attach.";
const VA_SPEC_NODE_NAME: &str =
    "nodeName represents the node that the volume should be attached to.";
const VA_STATUS_ATTACHED: &str = "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.";
const VAC_DRIVER_NAME: &str = "Name of the CSI driver This field is immutable.";

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

pub(crate) static VOLUME_ATTRIBUTES_CLASS: Printer = Printer {
    columns: &[NAME, col("DriverName", "string", VAC_DRIVER_NAME), AGE],
    print: print_volume_attributes_class,
};

/// kube's VolumeAttachment columns: `Attacher` has the `name` format too.
pub(crate) static VOLUME_ATTACHMENT: Printer = Printer {
    columns: &[
        NAME,
        Column {
            name: "Attacher",
            ty: "string",
            format: "name",
            description: VA_SPEC_ATTACHER,
            priority: 0,
        },
        col("PV", "string", VA_SOURCE_PERSISTENT_VOLUME_NAME),
        col("Node", "string", VA_SPEC_NODE_NAME),
        col("Attached", "boolean", VA_STATUS_ATTACHED),
        AGE,
    ],
    print: print_volume_attachment,
};

pub(crate) static CSI_NODE: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Drivers",
            "integer",
            "Drivers indicates the number of CSI drivers registered on the node",
        ),
        AGE,
    ],
    print: print_csi_node,
};

pub(crate) static CSI_DRIVER: Printer = Printer {
    columns: &[
        NAME,
        col("AttachRequired", "boolean", CSI_DRIVER_ATTACH_REQUIRED),
        col("PodInfoOnMount", "boolean", CSI_DRIVER_POD_INFO_ON_MOUNT),
        col("StorageCapacity", "boolean", CSI_DRIVER_STORAGE_CAPACITY),
        col("TokenRequests", "string", CSI_DRIVER_TOKEN_REQUESTS),
        col(
            "RequiresRepublish",
            "boolean",
            CSI_DRIVER_REQUIRES_REPUBLISH,
        ),
        col("Modes", "string", CSI_DRIVER_VOLUME_LIFECYCLE_MODES),
        AGE,
    ],
    print: print_csi_driver,
};

/// kube's CSIStorageCapacity columns have no Age.
pub(crate) static CSI_STORAGE_CAPACITY: Printer = Printer {
    columns: &[
        NAME,
        col(
            "StorageClassName",
            "string",
            CSI_CAPACITY_STORAGE_CLASS_NAME,
        ),
        col("Capacity", "string", CSI_CAPACITY_CAPACITY),
    ],
    print: print_csi_storage_capacity,
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

/// `storageutil.IsDefaultAnnotationForVolumeAttributesClass`.
const DEFAULT_VOLUME_ATTRIBUTES_CLASS: &str =
    "volumeattributesclass.alpha.kubernetes.io/is-default-class";

fn print_volume_attributes_class(o: &Value, now: Time) -> Row {
    let mut n = name(o).to_string();
    if str_at(
        o,
        &["metadata", "annotations", DEFAULT_VOLUME_ATTRIBUTES_CLASS],
    ) == "true"
    {
        n.push_str(" (default)");
    }
    Row::new(vec![
        Value::from(n),
        Value::from(str_at(o, &["driverName"])),
        age(o, now),
    ])
}

fn print_volume_attachment(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "attacher"])),
        Value::from(str_at(o, &["spec", "source", "persistentVolumeName"])),
        Value::from(str_at(o, &["spec", "nodeName"])),
        Value::from(opt_bool(o, &["status", "attached"]).unwrap_or(false)),
        age(o, now),
    ])
}

fn print_csi_node(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(arr_at(o, &["spec", "drivers"]).len() as i64),
        age(o, now),
    ])
}

fn print_csi_driver(o: &Value, now: Time) -> Row {
    let modes: Vec<&str> = arr_at(o, &["spec", "volumeLifecycleModes"])
        .iter()
        .map(|m| m.as_str().unwrap_or(""))
        .collect();
    let modes = if modes.is_empty() {
        "<none>".to_string()
    } else {
        modes.join(",")
    };
    // kube's `<unset>` is for a nil list; an empty one does not survive
    // kube's storage, so it reads back nil too.
    let tokens = arr_at(o, &["spec", "tokenRequests"]);
    let token_requests = if tokens.is_empty() {
        "<unset>".to_string()
    } else {
        tokens
            .iter()
            .map(|t| str_at(t, &["audience"]))
            .collect::<Vec<_>>()
            .join(",")
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(opt_bool(o, &["spec", "attachRequired"]).unwrap_or(true)),
        Value::from(opt_bool(o, &["spec", "podInfoOnMount"]).unwrap_or(false)),
        Value::from(opt_bool(o, &["spec", "storageCapacity"]).unwrap_or(false)),
        Value::from(token_requests),
        Value::from(opt_bool(o, &["spec", "requiresRepublish"]).unwrap_or(false)),
        Value::from(modes),
        age(o, now),
    ])
}

fn print_csi_storage_capacity(o: &Value, _now: Time) -> Row {
    let capacity = match at(o, &["capacity"]) {
        Some(Value::String(q)) => quantity::canonical(q),
        Some(Value::Number(n)) => quantity::canonical(&n.to_string()),
        _ => "<unset>".to_string(),
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["storageClassName"])),
        Value::from(capacity),
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

    fn names_and_priorities(p: &Printer) -> Vec<(&'static str, &'static str, &'static str, i32)> {
        p.columns
            .iter()
            .map(|c| (c.name, c.ty, c.format, c.priority))
            .collect()
    }

    // Facts from kube's printers.go printCSIDriver / TestPrintCSIDriver.
    #[test]
    fn csi_drivers() {
        assert_eq!(
            names_and_priorities(&CSI_DRIVER),
            vec![
                ("Name", "string", "name", 0),
                ("AttachRequired", "boolean", "", 0),
                ("PodInfoOnMount", "boolean", "", 0),
                ("StorageCapacity", "boolean", "", 0),
                ("TokenRequests", "string", "", 0),
                ("RequiresRepublish", "boolean", "", 0),
                ("Modes", "string", "", 0),
                ("Age", "string", "", 0),
            ]
        );
        assert!(CSI_DRIVER.columns[1].description.starts_with(
            "attachRequired indicates this CSI volume driver requires an attach operation"
        ));
        let driver = json!({
            "metadata": {"name": "ebs.csi.aws.com", "creationTimestamp": "2024-05-01T11:00:00Z"},
            "spec": {"attachRequired": false, "podInfoOnMount": true, "storageCapacity": true,
                     "tokenRequests": [{"audience": "sts.amazonaws.com"}, {"audience": "vault", "expirationSeconds": 3600}],
                     "requiresRepublish": true, "volumeLifecycleModes": ["Persistent", "Ephemeral"]}
        });
        assert_eq!(
            print_csi_driver(&driver, now()).cells,
            vec![
                json!("ebs.csi.aws.com"),
                json!(false),
                json!(true),
                json!(true),
                json!("sts.amazonaws.com,vault"),
                json!(true),
                json!("Persistent,Ephemeral"),
                json!("60m")
            ]
        );
        // Unset pointers: attach required by default, the rest false.
        let bare = json!({"metadata": {"name": "d"}, "spec": {}});
        assert_eq!(
            print_csi_driver(&bare, now()).cells,
            vec![
                json!("d"),
                json!(true),
                json!(false),
                json!(false),
                json!("<unset>"),
                json!(false),
                json!("<none>"),
                json!("<unknown>")
            ]
        );
        let empty = json!({"metadata": {"name": "d"}, "spec": {"tokenRequests": [], "volumeLifecycleModes": []}});
        let c = print_csi_driver(&empty, now()).cells;
        assert_eq!((&c[4], &c[6]), (&json!("<unset>"), &json!("<none>")));
        let no_audience =
            json!({"metadata": {"name": "d"}, "spec": {"tokenRequests": [{}, {"audience": "a"}]}});
        assert_eq!(print_csi_driver(&no_audience, now()).cells[4], json!(",a"));
    }

    #[test]
    fn csi_nodes_and_capacities() {
        assert_eq!(
            names_and_priorities(&CSI_NODE),
            vec![
                ("Name", "string", "name", 0),
                ("Drivers", "integer", "", 0),
                ("Age", "string", "", 0),
            ]
        );
        assert_eq!(
            CSI_NODE.columns[1].description,
            "Drivers indicates the number of CSI drivers registered on the node"
        );
        let node = json!({"metadata": {"name": "node-1", "creationTimestamp": "2024-04-30T12:00:00Z"},
            "spec": {"drivers": [{"name": "a", "nodeID": "n"}, {"name": "b", "nodeID": "n"}]}});
        assert_eq!(
            print_csi_node(&node, now()).cells,
            vec![json!("node-1"), json!(2), json!("24h")]
        );
        assert_eq!(
            print_csi_node(&json!({"metadata": {"name": "n"}, "spec": {}}), now()).cells[1],
            json!(0)
        );

        // No Age column, and no age cell.
        assert_eq!(
            names_and_priorities(&CSI_STORAGE_CAPACITY),
            vec![
                ("Name", "string", "name", 0),
                ("StorageClassName", "string", "", 0),
                ("Capacity", "string", "", 0),
            ]
        );
        let cap = json!({"metadata": {"name": "csisc-x7kq2", "namespace": "kube-system"},
            "storageClassName": "fast", "capacity": "1024Mi"});
        assert_eq!(
            print_csi_storage_capacity(&cap, now()).cells,
            vec![json!("csisc-x7kq2"), json!("fast"), json!("1Gi")]
        );
        let unknown = json!({"metadata": {"name": "c"}, "storageClassName": "slow"});
        assert_eq!(
            print_csi_storage_capacity(&unknown, now()).cells,
            vec![json!("c"), json!("slow"), json!("<unset>")]
        );
        let zero = json!({"metadata": {"name": "c"}, "storageClassName": "s", "capacity": "0Gi"});
        assert_eq!(
            print_csi_storage_capacity(&zero, now()).cells[2],
            json!("0")
        );
    }

    // Facts from kube's printers.go printVolumeAttachment.
    #[test]
    fn volume_attachments() {
        assert_eq!(
            names_and_priorities(&VOLUME_ATTACHMENT),
            vec![
                ("Name", "string", "name", 0),
                ("Attacher", "string", "name", 0),
                ("PV", "string", "", 0),
                ("Node", "string", "", 0),
                ("Attached", "boolean", "", 0),
                ("Age", "string", "", 0),
            ]
        );
        assert_eq!(
            VOLUME_ATTACHMENT.columns[4].description,
            "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher."
        );
        let va = json!({
            "metadata": {"name": "csi-0a1b2c", "creationTimestamp": "2024-05-01T11:55:00Z"},
            "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pvc-123"}},
            "status": {"attached": true, "attachmentMetadata": {"devicePath": "/dev/xvdba"}}
        });
        assert_eq!(
            print_volume_attachment(&va, now()).cells,
            vec![
                json!("csi-0a1b2c"),
                json!("ebs.csi.aws.com"),
                json!("pvc-123"),
                json!("node-1"),
                json!(true),
                json!("5m")
            ]
        );
        // An inline volume spec has no PV name; no status is not attached.
        let inline = json!({"metadata": {"name": "csi-x"},
            "spec": {"attacher": "a", "nodeName": "n", "source": {"inlineVolumeSpec": {"csi": {"driver": "a", "volumeHandle": "h"}}}}});
        let c = print_volume_attachment(&inline, now()).cells;
        assert_eq!((&c[2], &c[4]), (&json!(""), &json!(false)));
    }

    #[test]
    fn volume_attributes_classes() {
        assert_eq!(
            names_and_priorities(&VOLUME_ATTRIBUTES_CLASS),
            vec![
                ("Name", "string", "name", 0),
                ("DriverName", "string", "", 0),
                ("Age", "string", "", 0),
            ]
        );
        assert_eq!(
            VOLUME_ATTRIBUTES_CLASS.columns[1].description,
            "Name of the CSI driver This field is immutable."
        );
        let vac = json!({"metadata": {"name": "gold", "creationTimestamp": "2024-05-01T09:00:00Z"},
            "driverName": "pd.csi.storage.gke.io", "parameters": {"iops": "3000"}});
        assert_eq!(
            print_volume_attributes_class(&vac, now()).cells,
            vec![json!("gold"), json!("pd.csi.storage.gke.io"), json!("3h")]
        );
        let default = json!({"metadata": {"name": "silver", "annotations": {DEFAULT_VOLUME_ATTRIBUTES_CLASS: "true"}},
            "driverName": "d"});
        assert_eq!(
            print_volume_attributes_class(&default, now()).cells[0],
            json!("silver (default)")
        );
        // The StorageClass annotation does not make a default class here.
        let sc_annotation = json!({"metadata": {"name": "bronze",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "driverName": "d"});
        assert_eq!(
            print_volume_attributes_class(&sc_annotation, now()).cells[0],
            json!("bronze")
        );
    }

    #[test]
    fn rows_match_columns() {
        for p in [
            &VOLUME_ATTRIBUTES_CLASS,
            &VOLUME_ATTACHMENT,
            &CSI_NODE,
            &CSI_DRIVER,
            &CSI_STORAGE_CAPACITY,
        ] {
            let row = (p.print)(&json!({"metadata": {"name": "x"}}), now());
            assert_eq!(row.cells.len(), p.columns.len());
        }
        for (kind, p) in [
            ("VolumeAttributesClass", &VOLUME_ATTRIBUTES_CLASS),
            ("VolumeAttachment", &VOLUME_ATTACHMENT),
            ("CSINode", &CSI_NODE),
            ("CSIDriver", &CSI_DRIVER),
            ("CSIStorageCapacity", &CSI_STORAGE_CAPACITY),
        ] {
            assert!(std::ptr::eq(
                crate::table::printer("storage.k8s.io", kind),
                p
            ));
        }
    }
}
