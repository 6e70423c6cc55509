//! Defaulting of the core (`v1`) kinds other than pods, as seen in
//! `kubectl get -o yaml`.

use keelson_api::{AdmissionApi, AdmissionRequest, Operation};
use serde_json::{json, Value};

use crate::support::{admission, create};

/// The admitted object of `req`.
async fn admitted(req: AdmissionRequest) -> Value {
    admission().await.admit(req).await.unwrap().object.unwrap()
}

/// An update of `resource` (through `subresource`) from `old` to `new`.
fn update(
    resource: &str,
    namespace: &str,
    subresource: &str,
    new: Value,
    old: Value,
) -> AdmissionRequest {
    let mut req = create("", resource, namespace, new);
    req.operation = Operation::Update;
    req.subresource = subresource.into();
    req.old_object = Some(old);
    req
}

#[tokio::test]
async fn secret_type_opaque() {
    let obj = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
        "data": {"k": "dg=="}});
    let o = admitted(create("", "secrets", "default", obj)).await;
    assert_eq!(o["type"], "Opaque");
    let obj = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"},
        "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
    let o = admitted(create("", "secrets", "default", obj)).await;
    assert_eq!(o["type"], "kubernetes.io/tls");
}

#[tokio::test]
async fn secret_string_data_moves_into_data() {
    let obj = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
        "data": {"a": "b2xk", "keep": "dg=="},
        "stringData": {"a": "new", "b": "hello world"}});
    let o = admitted(create("", "secrets", "default", obj)).await;
    assert_eq!(
        o["data"],
        json!({"a": "bmV3", "keep": "dg==", "b": "aGVsbG8gd29ybGQ="})
    );
    assert!(o.get("stringData").is_none(), "{o}");

    let old = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "u", "namespace": "default", "uid": "1", "resourceVersion": "5",
                     "creationTimestamp": "2025-01-02T03:04:05Z"},
        "type": "Opaque", "data": {"a": "b2xk"}});
    let mut new = old.clone();
    new["stringData"] = json!({"c": "x"});
    let o = admitted(update("secrets", "default", "", new, old)).await;
    assert_eq!(o["data"], json!({"a": "b2xk", "c": "eA=="}));
    assert!(o.get("stringData").is_none(), "{o}");
}

#[tokio::test]
async fn persistent_volume_defaults() {
    // The gateway has already reset the status (registry status policy).
    let obj = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/pv1"}},
        "status": {"phase": "Pending", "lastPhaseTransitionTime": "2025-01-02T03:04:05Z"}});
    let o = admitted(create("", "persistentvolumes", "", obj)).await;
    assert_eq!(o["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(o["spec"]["volumeMode"], "Filesystem");
    assert_eq!(
        o["spec"]["hostPath"],
        json!({"path": "/tmp/pv1", "type": ""})
    );
    assert_eq!(
        o["status"],
        json!({"phase": "Pending", "lastPhaseTransitionTime": "2025-01-02T03:04:05Z"})
    );

    let obj = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv2"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Block",
                 "rbd": {"monitors": ["m"], "image": "i"}}});
    let o = admitted(create("", "persistentvolumes", "", obj)).await;
    assert_eq!(o["spec"]["persistentVolumeReclaimPolicy"], "Delete");
    assert_eq!(o["spec"]["volumeMode"], "Block");
    assert_eq!(
        o["spec"]["rbd"],
        json!({"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin",
               "keyring": "/etc/ceph/keyring"})
    );
    assert_eq!(o["status"], json!({"phase": "Pending"}));
}

#[tokio::test]
async fn persistent_volume_sources() {
    let obj = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "azureDisk": {"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd"}}});
    let o = admitted(create("", "persistentvolumes", "", obj)).await;
    assert_eq!(
        o["spec"]["azureDisk"],
        json!({"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd", "cachingMode": "ReadWrite", "fsType": "ext4",
               "readOnly": false, "kind": "Shared"})
    );
    let obj = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "iscsi": {"targetPortal": "t:3260", "iqn": "iqn.2001-04.com.example:s", "lun": 0}}});
    let o = admitted(create("", "persistentvolumes", "", obj)).await;
    assert_eq!(o["spec"]["iscsi"]["iscsiInterface"], "default");
    let obj = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "scaleIO": {"gateway": "g", "system": "s", "volumeName": "v", "secretRef": {"name": "x"}}}});
    let o = admitted(create("", "persistentvolumes", "", obj)).await;
    assert_eq!(o["spec"]["scaleIO"]["storageMode"], "ThinProvisioned");
    assert_eq!(o["spec"]["scaleIO"]["fsType"], "xfs");
}

#[tokio::test]
async fn persistent_volume_status_transition_time() {
    let spec = json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/p", "type": ""}, "persistentVolumeReclaimPolicy": "Retain",
        "volumeMode": "Filesystem"});
    let old = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
        "spec": spec,
        "status": {"phase": "Pending", "lastPhaseTransitionTime": "2025-01-02T03:04:05Z"}});

    // Same phase, no time: the stored time stays.
    let mut new = old.clone();
    new["status"] = json!({"phase": "Pending", "message": "m"});
    let o = admitted(update("persistentvolumes", "", "status", new, old.clone())).await;
    assert_eq!(
        o["status"]["lastPhaseTransitionTime"],
        "2025-01-02T03:04:05Z"
    );

    // A new phase with the stored time: now.
    let mut new = old.clone();
    new["status"]["phase"] = json!("Available");
    let o = admitted(update("persistentvolumes", "", "status", new, old.clone())).await;
    let t = o["status"]["lastPhaseTransitionTime"].as_str().unwrap();
    assert_ne!(t, "2025-01-02T03:04:05Z");
    assert!(t.ends_with('Z') && t.len() == 20, "{t}");

    // A new phase with a time of the client's: kept.
    let mut new = old.clone();
    new["status"] = json!({"phase": "Bound", "lastPhaseTransitionTime": "2025-02-02T00:00:00Z"});
    let o = admitted(update("persistentvolumes", "", "status", new, old.clone())).await;
    assert_eq!(
        o["status"]["lastPhaseTransitionTime"],
        "2025-02-02T00:00:00Z"
    );

    // A main-resource update leaves the (stored) status alone.
    let o = admitted(update(
        "persistentvolumes",
        "",
        "",
        old.clone(),
        old.clone(),
    ))
    .await;
    assert_eq!(o["status"], old["status"]);
}

#[tokio::test]
async fn persistent_volume_claim_defaults() {
    let obj = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {}});
    let o = admitted(create("", "persistentvolumeclaims", "default", obj)).await;
    assert_eq!(o["spec"]["volumeMode"], "Filesystem");
    assert_eq!(o["status"], json!({"phase": "Pending"}));

    let obj = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "b"},
        "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Block",
                 "resources": {"requests": {"storage": "1Gi"}}}});
    let o = admitted(create("", "persistentvolumeclaims", "default", obj)).await;
    assert_eq!(o["spec"]["volumeMode"], "Block");
    assert_eq!(o["status"]["phase"], "Pending");
}

#[tokio::test]
async fn ephemeral_volume_claim_templates_and_pod_volume_sources() {
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}],
                 "volumes": [
                    {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}}}}},
                    {"name": "r", "rbd": {"monitors": ["m"], "image": "i", "pool": "mine"}}]}});
    let o = admitted(create("", "pods", "default", obj)).await;
    let volumes = &o["spec"]["volumes"];
    assert_eq!(
        volumes[0]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
        "Filesystem"
    );
    assert_eq!(volumes[1]["rbd"]["pool"], "mine");
    assert_eq!(volumes[1]["rbd"]["user"], "admin");
}

#[tokio::test]
async fn endpoints_port_protocol() {
    let obj = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                     "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 53, "protocol": "UDP"}]}]});
    let o = admitted(create("", "endpoints", "default", obj)).await;
    assert_eq!(
        o["subsets"][0]["ports"],
        json!([{"name": "a", "port": 80, "protocol": "TCP"}, {"name": "b", "port": 53, "protocol": "UDP"}])
    );
}

#[tokio::test]
async fn node_allocatable_from_capacity() {
    let obj = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "spec": {"configSource": {"configMap": {"name": "c", "namespace": "kube-system",
                                                "kubeletConfigKey": "k"}}},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi"}, "config": {}}});
    let o = admitted(create("", "nodes", "", obj)).await;
    assert_eq!(
        o["status"]["allocatable"],
        json!({"cpu": "4", "memory": "8Gi"})
    );
    assert!(o["spec"].get("configSource").is_none());
    assert!(o["status"].get("config").is_none());

    let obj = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"},
        "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3500m"}}});
    let o = admitted(create("", "nodes", "", obj)).await;
    assert_eq!(o["status"]["allocatable"], json!({"cpu": "3500m"}));

    // A status write gets it too.
    let old = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3"}, "spec": {}});
    let mut new = old.clone();
    new["status"] = json!({"capacity": {"pods": "110"}});
    let o = admitted(update("nodes", "", "status", new, old)).await;
    assert_eq!(o["status"]["allocatable"], json!({"pods": "110"}));
}

#[tokio::test]
async fn limit_range_item_defaults() {
    let obj = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
        "spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m"},
             "default": {"memory": "512Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}}]}});
    let o = admitted(create("", "limitranges", "default", obj)).await;
    let limits = &o["spec"]["limits"];
    // One item per type, as kube's validation requires.
    let second = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr2"},
        "spec": {"limits": [{"type": "Container", "min": {"cpu": "50m"}}]}});
    let second = admitted(create("", "limitranges", "default", second)).await;
    assert_eq!(limits[0]["default"], json!({"memory": "512Mi", "cpu": "2"}));
    assert_eq!(
        limits[0]["defaultRequest"],
        json!({"memory": "512Mi", "cpu": "2"})
    );
    assert!(limits[1].get("default").is_none());
    assert!(limits[1].get("defaultRequest").is_none());
    assert!(second["spec"]["limits"][0].get("default").is_none());
    assert_eq!(
        second["spec"]["limits"][0]["defaultRequest"],
        json!({"cpu": "50m"})
    );
    assert_eq!(o["metadata"]["name"], "lr");
}

#[tokio::test]
async fn limit_range_without_name_gets_a_uuid() {
    let obj = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"generateName": "lr-"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}});
    let o = admitted(create("", "limitranges", "default", obj)).await;
    let name = o["metadata"]["name"].as_str().unwrap();
    assert_eq!(name.len(), 36, "{name}");
    assert_eq!(name.matches('-').count(), 4, "{name}");
}

#[tokio::test]
async fn service_account_secret_references_keep_names() {
    let obj = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"},
        "secrets": [{"name": "s1", "namespace": "other", "uid": "u"}, {"kind": "Secret"}]});
    let o = admitted(create("", "serviceaccounts", "default", obj)).await;
    assert_eq!(o["secrets"], json!([{"name": "s1"}, {}]));
}

#[tokio::test]
async fn service_session_affinity_and_external_ips() {
    let obj = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"},
        "spec": {"ports": [{"port": 80}], "sessionAffinity": "ClientIP",
                 "externalIPs": ["192.0.2.1"]}});
    let o = admitted(create("", "services", "default", obj)).await;
    assert_eq!(
        o["spec"]["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
    assert_eq!(o["spec"]["externalTrafficPolicy"], "Cluster");

    let obj = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"},
        "spec": {"ports": [{"port": 80}],
                 "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}}});
    let o = admitted(create("", "services", "default", obj)).await;
    assert_eq!(o["spec"]["sessionAffinity"], "None");
    assert!(o["spec"].get("sessionAffinityConfig").is_none());
    assert!(o["spec"].get("externalTrafficPolicy").is_none());

    let old = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80, "nodePort": 30080}]}});
    let mut new = old.clone();
    new["status"] = json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.9"}, {"hostname": "h"}]}});
    let o = admitted(update("services", "default", "status", new, old)).await;
    assert_eq!(
        o["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "192.0.2.9", "ipMode": "VIP"}, {"hostname": "h"}])
    );
}

#[tokio::test]
async fn kinds_without_visible_defaults_are_unchanged() {
    for (resource, obj) in [
        (
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                   "data": {"k": "v"}}),
        ),
        (
            "resourcequotas",
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                   "spec": {"hard": {"pods": "10"}}}),
        ),
        (
            "events",
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
                   "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R"}),
        ),
    ] {
        let mut o = admitted(create("", resource, "default", obj.clone())).await;
        // Admission only adds the request's namespace.
        o["metadata"].as_object_mut().unwrap().remove("namespace");
        assert_eq!(o, obj, "{resource}");
    }
}

/// A pod with `containers` (and `initContainers`) as given.
fn pod(containers: Value, init: Option<Value>) -> AdmissionRequest {
    let mut spec = json!({"containers": containers});
    if let Some(init) = init {
        spec["initContainers"] = init;
    }
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": spec, "status": {"phase": "Pending"}});
    create("", "pods", "default", obj)
}

#[tokio::test]
async fn pod_qos_class_on_create() {
    let both = json!({"cpu": "100m", "memory": "64Mi"});
    let cases = [
        // No requests or limits anywhere.
        (json!([{"name": "a", "image": "x"}]), None, "BestEffort"),
        // Limits only: requests default to them.
        (
            json!([{"name": "a", "image": "x", "resources": {"limits": both}}]),
            None,
            "Guaranteed",
        ),
        // Equal quantities written differently.
        (
            json!([{"name": "a", "image": "x", "resources": {
                "limits": {"cpu": "0.1", "memory": "64Mi"},
                "requests": {"cpu": "100m", "memory": "67108864"}}}]),
            None,
            "Guaranteed",
        ),
        // Requests below limits.
        (
            json!([{"name": "a", "image": "x", "resources": {
                "limits": both, "requests": {"cpu": "50m"}}}]),
            None,
            "Burstable",
        ),
        // Only a memory limit.
        (
            json!([{"name": "a", "image": "x", "resources": {"limits": {"memory": "1Gi"}}}]),
            None,
            "Burstable",
        ),
        // One container without resources.
        (
            json!([{"name": "a", "image": "x", "resources": {"limits": both}},
                   {"name": "b", "image": "x"}]),
            None,
            "Burstable",
        ),
        // An init container without resources.
        (
            json!([{"name": "a", "image": "x", "resources": {"limits": both}}]),
            Some(json!([{"name": "i", "image": "x"}])),
            "Burstable",
        ),
        // Only a request of a resource QoS ignores.
        (
            json!([{"name": "a", "image": "x", "resources": {
                "requests": {"ephemeral-storage": "1Gi"}}}]),
            None,
            "BestEffort",
        ),
    ];
    for (containers, init, want) in cases {
        let o = admitted(pod(containers.clone(), init)).await;
        assert_eq!(o["status"]["qosClass"], want, "{containers}");
        assert_eq!(o["status"]["phase"], "Pending");
    }
    let o = admitted(pod(
        json!([{"name": "a", "image": "x", "resources": {"limits": both}}]),
        None,
    ))
    .await;
    assert_eq!(
        o["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "100m", "memory": "64Mi"})
    );
}
