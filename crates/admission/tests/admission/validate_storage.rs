//! storage.k8s.io validation: VolumeAttachment, CSIDriver, CSINode,
//! CSIStorageCapacity, VolumeAttributesClass and StorageClass topologies,
//! with kube 1.34's messages.

use keelson_api::{AdmissionRequest, Operation};
use serde_json::{json, Value};

use crate::support::{admitted, create, message};

const S: &str = "storage.k8s.io";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn obj(kind: &str, name: &str, body: Value) -> Value {
    let mut o =
        json!({"apiVersion": "storage.k8s.io/v1", "kind": kind, "metadata": {"name": name}});
    for (k, v) in body.as_object().unwrap() {
        o[k] = v.clone();
    }
    o
}

fn update(resource: &str, old: Value, new: Value) -> AdmissionRequest {
    let mut req = create(S, resource, "", new);
    req.operation = Operation::Update;
    req.old_object = Some(old);
    req
}

#[tokio::test]
async fn volume_attachment_rules() {
    let va = |spec: Value| obj("VolumeAttachment", "va", json!({"spec": spec}));
    let p = "VolumeAttachment.storage.k8s.io \"va\" is invalid: ";
    assert_eq!(
        message(create(S, "volumeattachments", "", va(json!({"nodeName": "Node_1", "source": {}})))).await,
        format!("{p}[spec.attacher: Required value, spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName, spec.nodeName: Invalid value: \"Node_1\": {SUBDOMAIN}, spec.attacher: Invalid value: \"\": {SUBDOMAIN}]")
    );
    assert_eq!(
        message(create(
            S,
            "volumeattachments",
            "",
            va(json!({"attacher": "CSI.Example.com", "nodeName": "n",
            "source": {"persistentVolumeName": "PV_1"}}))
        ))
        .await,
        format!("{p}spec.source.persistentVolumeName: Invalid value: \"PV_1\": {SUBDOMAIN}")
    );
    let good = va(
        json!({"attacher": "csi.example.com", "nodeName": "n", "source": {"persistentVolumeName": "pv"}}),
    );
    admitted(create(S, "volumeattachments", "", good.clone())).await;
    let mut moved = good.clone();
    moved["spec"]["nodeName"] = json!("m");
    assert_eq!(
        message(update("volumeattachments", good.clone(), moved)).await,
        format!("{p}spec: Invalid value: {{\"Attacher\":\"csi.example.com\",\"Source\":{{\"PersistentVolumeName\":\"pv\",\"InlineVolumeSpec\":null}},\"NodeName\":\"m\"}}: field is immutable")
    );
    let mut failed = good.clone();
    failed["status"] =
        json!({"attached": false, "attachError": {"message": "x".repeat(1025), "errorCode": -1}});
    let mut req = update("volumeattachments", good, failed);
    req.subresource = "status".into();
    assert_eq!(
        message(req).await,
        format!("{p}[status.attachError.message: Too long: may not be more than 262144 bytes, status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive]")
    );
}

#[tokio::test]
async fn csi_driver_rules() {
    let drv = |spec: Value| obj("CSIDriver", "csi.example.com", json!({"spec": spec}));
    let p = "CSIDriver.storage.k8s.io \"csi.example.com\" is invalid: ";
    assert_eq!(
        message(create(S, "csidrivers", "", drv(json!({"fsGroupPolicy": "Some",
            "volumeLifecycleModes": ["Persistent", "Forever"],
            "tokenRequests": [{"audience": "a", "expirationSeconds": 60}, {"audience": "a"},
                {"audience": "b", "expirationSeconds": 4294967297u64}]})))).await,
        format!("{p}[spec.fsGroupPolicy: Unsupported value: \"Some\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\", spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes, spec.tokenRequests[1].audience: Duplicate value: \"a\", spec.tokenRequests[2].expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds, spec.volumeLifecycleModes: Unsupported value: \"Forever\": supported values: \"Persistent\", \"Ephemeral\"]")
    );
    // Dropped while MutableCSINodeAllocatableCount is off (its default).
    let stored = admitted(create(
        S,
        "csidrivers",
        "",
        drv(json!({"nodeAllocatableUpdatePeriodSeconds": 5})),
    ))
    .await;
    assert!(
        stored["spec"]
            .get("nodeAllocatableUpdatePeriodSeconds")
            .is_none(),
        "{stored}"
    );
    let mut changed = stored.clone();
    changed["spec"]["attachRequired"] = json!(false);
    changed["spec"]["volumeLifecycleModes"] = json!(["Ephemeral"]);
    changed["spec"]["podInfoOnMount"] = json!(true);
    assert_eq!(
        message(update("csidrivers", stored, changed)).await,
        format!("{p}[spec.attachedRequired: Invalid value: false: field is immutable, spec.volumeLifecycleModes: Invalid value: [\"Ephemeral\"]: field is immutable]")
    );
}

#[tokio::test]
async fn csi_node_rules() {
    let node = |drivers: Value| obj("CSINode", "n1", json!({"spec": {"drivers": drivers}}));
    let p = "CSINode.storage.k8s.io \"n1\" is invalid: ";
    let long = "x".repeat(257);
    assert_eq!(
        message(create(S, "csinodes", "", node(json!([
            {"name": "d.example.com", "nodeID": long, "allocatable": {"count": -1}, "topologyKeys": ["zone", "zone"]},
            {"name": "d.example.com", "nodeID": ""}])))).await,
        format!("{p}[spec.drivers[0].nodeID: Invalid value: \"{long}\": must be 256 characters or less, spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0, spec.drivers[0]: Duplicate value: \"zone\", spec.drivers[1].nodeID: Required value, spec.drivers[1].name: Duplicate value: \"d.example.com\"]")
    );
    let good = node(json!([{"name": "d.example.com", "nodeID": "a", "topologyKeys": ["zone"]}]));
    admitted(create(S, "csinodes", "", good.clone())).await;
    let moved = node(
        json!([{"name": "d.example.com", "nodeID": "b", "topologyKeys": ["zone"]},
        {"name": "e.example.com", "nodeID": "c"}]),
    );
    assert_eq!(
        message(update("csinodes", good, moved)).await,
        format!("{p}spec.drivers: Invalid value: {{\"Name\":\"d.example.com\",\"NodeID\":\"b\",\"TopologyKeys\":[\"zone\"],\"Allocatable\":null}}: field is immutable")
    );
}

#[tokio::test]
async fn storage_capacity_and_attributes_class_rules() {
    let cap = |body: Value| {
        let mut o = obj("CSIStorageCapacity", "c", body);
        o["metadata"]["namespace"] = json!("default");
        o
    };
    let p = "CSIStorageCapacity.storage.k8s.io \"c\" is invalid: ";
    assert_eq!(
        message(create(S, "csistoragecapacities", "default", cap(json!({"storageClassName": "Fast",
            "capacity": "-1Gi", "nodeTopology": {"matchExpressions": [{"key": "zone", "operator": "In"}]}})))).await,
        format!("{p}[nodeTopology.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', storageClassName: Invalid value: \"Fast\": {SUBDOMAIN}, capacity: Invalid value: \"-1Gi\": must be greater than or equal to 0]")
    );
    let good = cap(json!({"storageClassName": "fast", "capacity": "1Gi"}));
    admitted(create(S, "csistoragecapacities", "default", good.clone())).await;
    let mut moved = good.clone();
    moved["storageClassName"] = json!("slow");
    moved["nodeTopology"] = json!({"matchLabels": {"zone": "a"}});
    let mut req = update("csistoragecapacities", good, moved);
    req.namespace = "default".into();
    assert_eq!(
        message(req).await,
        format!("{p}[nodeTopology: Invalid value: {{\"matchLabels\":{{\"zone\":\"a\"}}}}: field is immutable, storageClassName: Invalid value: \"slow\": field is immutable]")
    );

    let vac = |body: Value| obj("VolumeAttributesClass", "gold", body);
    let p = "VolumeAttributesClass.storage.k8s.io \"gold\" is invalid: ";
    assert_eq!(
        message(create(S, "volumeattributesclasses", "", vac(json!({"driverName": "A/B/C"})))).await,
        format!("{p}[driverName: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName'), parameters: Required value: must contain at least one key/value pair]")
    );
    let good = vac(json!({"driverName": "csi.example.com", "parameters": {"iops": "100"}}));
    admitted(create(S, "volumeattributesclasses", "", good.clone())).await;
    let mut changed = good.clone();
    changed["driverName"] = json!("other.example.com");
    changed["parameters"] = json!({"iops": "200"});
    assert_eq!(
        message(update("volumeattributesclasses", good, changed)).await,
        format!("{p}[driverName: Forbidden: updates to driverName are forbidden., parameters: Forbidden: updates to parameters are forbidden.]")
    );
}

#[tokio::test]
async fn storage_class_allowed_topologies() {
    let sc = |topologies: Value| {
        obj(
            "StorageClass",
            "fast",
            json!({"provisioner": "csi.example.com", "allowedTopologies": topologies}),
        )
    };
    let p = "StorageClass.storage.k8s.io \"fast\" is invalid: ";
    assert_eq!(
        message(create(S, "storageclasses", "", sc(json!([
            {"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}, {"key": "zone", "values": []}]},
            {"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]},
            {"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]}])))).await,
        format!("{p}[allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: \"a\", allowedTopologies[0].matchLabelExpressions[1].values: Required value, allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: \"zone\", allowedTopologies[2].matchLabelExpressions: Duplicate value: \"\"]")
    );
    // A term without expressions equals each of kube's placeholders.
    assert_eq!(
        message(create(
            S,
            "storageclasses",
            "",
            sc(json!([{}, {"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]))
        ))
        .await,
        format!("{p}allowedTopologies[0].matchLabelExpressions: Duplicate value: \"\"")
    );
}
