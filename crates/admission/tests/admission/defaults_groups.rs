//! Defaulting of the networking, RBAC, storage, scheduling and discovery
//! kinds, as kube-apiserver 1.34 fills them in on create.

use keelson_api::AdmissionApi;
use serde_json::{json, Value};

use crate::support::{admission, create};

/// The object admitted for a create of `obj` as `group`/`resource`.
async fn admitted(group: &str, resource: &str, namespace: &str, obj: Value) -> Value {
    let adm = admission().await;
    adm.admit(create(group, resource, namespace, obj))
        .await
        .unwrap()
        .object
        .unwrap()
}

#[tokio::test]
async fn network_policy_defaults() {
    let obj = json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "np"}, "spec": {"podSelector": {}}});
    let o = admitted("networking.k8s.io", "networkpolicies", "default", obj).await;
    assert_eq!(o["spec"]["policyTypes"], json!(["Ingress"]));

    let obj = json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "np"}, "spec": {"podSelector": {},
            "ingress": [{"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}],
            "egress": [{"ports": [{"port": 443}]}]}});
    let o = admitted("networking.k8s.io", "networkpolicies", "default", obj).await;
    let spec = &o["spec"];
    assert_eq!(spec["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(spec["ingress"][0]["ports"][0]["protocol"], "TCP");
    assert_eq!(spec["ingress"][0]["ports"][1]["protocol"], "UDP");
    assert_eq!(spec["egress"][0]["ports"][0]["protocol"], "TCP");

    // Explicit policy types are kept, even with egress rules.
    let obj = json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "np"}, "spec": {"podSelector": {}, "policyTypes": ["Egress"],
            "egress": [{}]}});
    let o = admitted("networking.k8s.io", "networkpolicies", "default", obj).await;
    assert_eq!(o["spec"]["policyTypes"], json!(["Egress"]));
}

#[tokio::test]
async fn ingress_class_parameters_scope() {
    let obj = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "ic"}, "spec": {"controller": "example.com/ingress",
            "parameters": {"apiGroup": "example.com", "kind": "Params", "name": "p"}}});
    let o = admitted("networking.k8s.io", "ingressclasses", "", obj).await;
    assert_eq!(o["spec"]["parameters"]["scope"], "Cluster");

    let obj = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "ic"}, "spec": {"controller": "example.com/ingress",
            "parameters": {"kind": "Params", "name": "p", "scope": "Namespace", "namespace": "default"}}});
    let o = admitted("networking.k8s.io", "ingressclasses", "", obj).await;
    assert_eq!(o["spec"]["parameters"]["scope"], "Namespace");

    // No parameters, no scope.
    let obj = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "ic"}, "spec": {"controller": "example.com/ingress"}});
    let o = admitted("networking.k8s.io", "ingressclasses", "", obj).await;
    assert!(o["spec"].get("parameters").is_none());
}

#[tokio::test]
async fn role_binding_subjects_and_role_ref() {
    let obj = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "rb"},
        "roleRef": {"kind": "Role", "name": "reader"},
        "subjects": [{"kind": "User", "name": "bob"},
                     {"kind": "Group", "name": "devs"},
                     {"kind": "ServiceAccount", "name": "default", "namespace": "default"}]});
    let o = admitted("rbac.authorization.k8s.io", "rolebindings", "default", obj).await;
    assert_eq!(o["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(o["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(o["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(o["subjects"][2].get("apiGroup").is_none());
}

#[tokio::test]
async fn cluster_role_binding_keeps_explicit_api_group() {
    let obj = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "crb"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                     {"kind": "User", "name": "bob"}]});
    let o = admitted("rbac.authorization.k8s.io", "clusterrolebindings", "", obj).await;
    assert_eq!(o["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(o["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
}

#[tokio::test]
async fn storage_class_defaults() {
    let obj = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "sc"}, "provisioner": "example.com/disk"});
    let o = admitted("storage.k8s.io", "storageclasses", "", obj).await;
    assert_eq!(o["reclaimPolicy"], "Delete");
    assert_eq!(o["volumeBindingMode"], "Immediate");

    let obj = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "sc"}, "provisioner": "example.com/disk",
        "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"});
    let o = admitted("storage.k8s.io", "storageclasses", "", obj).await;
    assert_eq!(o["reclaimPolicy"], "Retain");
    assert_eq!(o["volumeBindingMode"], "WaitForFirstConsumer");
}

#[tokio::test]
async fn csi_driver_defaults() {
    let obj = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
        "metadata": {"name": "disk.example.com"}, "spec": {}});
    let o = admitted("storage.k8s.io", "csidrivers", "", obj).await;
    assert_eq!(
        o["spec"],
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
               "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
               "requiresRepublish": false, "seLinuxMount": false})
    );

    let obj = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
        "metadata": {"name": "disk.example.com"},
        "spec": {"attachRequired": false, "podInfoOnMount": true, "fsGroupPolicy": "File",
                 "volumeLifecycleModes": ["Ephemeral"], "seLinuxMount": true}});
    let o = admitted("storage.k8s.io", "csidrivers", "", obj).await;
    let spec = &o["spec"];
    assert_eq!(spec["attachRequired"], false);
    assert_eq!(spec["podInfoOnMount"], true);
    assert_eq!(spec["fsGroupPolicy"], "File");
    assert_eq!(spec["volumeLifecycleModes"], json!(["Ephemeral"]));
    assert_eq!(spec["seLinuxMount"], true);
    assert_eq!(spec["storageCapacity"], false);
    assert_eq!(spec["requiresRepublish"], false);
}

#[tokio::test]
async fn volume_attachment_inline_spec_sources() {
    let obj = json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": "va"},
        "spec": {"attacher": "disk.example.com", "nodeName": "n1",
                 "source": {"inlineVolumeSpec": {"azureDisk": {"diskName": "d", "diskURI": "uri", "readOnly": true}}}}});
    // kube defaults the inline source (`kind: Shared`, whose diskURI must
    // then be a blob URL), then its PersistentVolume spec rules
    // (`validateInlinePersistentVolumeSpec`) refuse any inline spec but a
    // CSI one.
    let err = admission()
        .await
        .admit(create("storage.k8s.io", "volumeattachments", "", obj))
        .await
        .unwrap_err();
    assert_eq!(err.message, "VolumeAttachment.storage.k8s.io \"va\" is invalid: [spec.source.inlineVolumeSpec.csi: Required value: has to be specified in the context of inline volumes, spec.source.inlineVolumeSpec.accessModes: Required value, spec.source.inlineVolumeSpec.azureDisk.diskURI: Unsupported value: \"uri\": supported values: \"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd\"]");

    // A persistent volume name gets nothing.
    let obj = json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": "va"},
        "spec": {"attacher": "disk.example.com", "nodeName": "n1",
                 "source": {"persistentVolumeName": "pv1"}}});
    let o = admitted("storage.k8s.io", "volumeattachments", "", obj).await;
    assert_eq!(o["spec"]["source"], json!({"persistentVolumeName": "pv1"}));
}

#[tokio::test]
async fn priority_class_preemption_policy() {
    let obj = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000});
    let o = admitted("scheduling.k8s.io", "priorityclasses", "", obj).await;
    assert_eq!(o["preemptionPolicy"], "PreemptLowerPriority");

    let obj = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"});
    let o = admitted("scheduling.k8s.io", "priorityclasses", "", obj).await;
    assert_eq!(o["preemptionPolicy"], "Never");
}

#[tokio::test]
async fn endpoint_slice_ports() {
    let obj = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "es"}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"]}],
        "ports": [{"port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]});
    let o = admitted("discovery.k8s.io", "endpointslices", "default", obj).await;
    assert_eq!(
        o["ports"][0],
        json!({"name": "", "port": 80, "protocol": "TCP"})
    );
    assert_eq!(
        o["ports"][1],
        json!({"name": "dns", "port": 53, "protocol": "UDP"})
    );
}

#[tokio::test]
async fn kinds_without_defaults_are_unchanged() {
    let obj = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}});
    let o = admitted("policy", "poddisruptionbudgets", "default", obj.clone()).await;
    assert_eq!(o["spec"], obj["spec"]);

    let obj = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": "gvisor"}, "handler": "runsc"});
    let o = admitted("node.k8s.io", "runtimeclasses", "", obj).await;
    assert!(o.get("overhead").is_none() && o.get("scheduling").is_none());
}
