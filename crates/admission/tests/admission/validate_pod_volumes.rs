//! Pod volume sources (kube's `validateVolumeSource` and the per-source
//! validators): kube's exact messages, the PersistentVolume variants that
//! share them, and a realistic pod using many sources that must pass.

use serde_json::{json, Value};

use std::sync::Arc;

use keelson_admission::PluginConfig;
use keelson_api::AdmissionApi;

use crate::support::{admission_with, admitted, create, message, pod, MemStore};

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// The refusal of a Pod `p` (with a service account) with `vols`.
async fn vol_message(vols: Value) -> String {
    message(create(
        "",
        "pods",
        "default",
        pod(json!({
            "serviceAccountName": "default",
            "containers": [{"name": "c", "image": "i"}],
            "volumes": vols,
        })),
    ))
    .await
}

#[tokio::test]
async fn host_path_empty_dir_and_git_repo() {
    assert_eq!(
        vol_message(json!([
            {"name": "a", "hostPath": {"path": "/x/../y", "type": "Dir"}},
            {"name": "b", "emptyDir": {"sizeLimit": "-1Gi"}},
            {"name": "c", "gitRepo": {"directory": "/abs/../x"}},
            {"name": "d", "hostPath": {}},
        ]))
        .await,
        "Pod \"p\" is invalid: [spec.volumes[0].hostPath.path: Invalid value: \"/x/../y\": must not contain '..', spec.volumes[0].hostPath.type: Unsupported value: \"Dir\": supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\", spec.volumes[1].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity, spec.volumes[2].gitRepo.repository: Required value, spec.volumes[2].gitRepo.directory: Invalid value: \"/abs/../x\": must be a relative path, spec.volumes[2].gitRepo.directory: Invalid value: \"/abs/../x\": must not contain '..', spec.volumes[3].hostPath.path: Required value]"
    );
}

#[tokio::test]
async fn secret_and_config_map_items_and_modes() {
    assert_eq!(
        vol_message(json!([
            {"name": "s", "secret": {"defaultMode": 1000, "items": [
                {"key": "", "path": "../x", "mode": 1000}, {"key": "k", "path": "..x"}]}},
            {"name": "m", "configMap": {"name": "cm", "items": [
                {"key": "k", "path": "/etc/x"}, {"key": "k2", "path": ""}]}},
        ]))
        .await,
        format!("Pod \"p\" is invalid: [spec.volumes[0].secret.secretName: Required value, spec.volumes[0].secret.defaultMode: Invalid value: 1000: {MODE}, spec.volumes[0].secret.items[0].key: Required value, spec.volumes[0].secret.items[0].path: Invalid value: \"../x\": must not contain '..', spec.volumes[0].secret.items[0].mode: Invalid value: 1000: {MODE}, spec.volumes[0].secret.items[1].path: Invalid value: \"..x\": must not start with '..', spec.volumes[1].configMap.items[0].path: Invalid value: \"/etc/x\": must be a relative path, spec.volumes[1].configMap.items[1].path: Required value]")
    );
}

#[tokio::test]
async fn downward_api_items_are_reported_at_the_source() {
    // kube validates each item at `downwardAPI`, without an index.
    assert_eq!(
        vol_message(json!([{"name": "d", "downwardAPI": {"items": [
            {"path": "a"},
            {"path": "b", "fieldRef": {"fieldPath": "metadata.name"},
             "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu"}, "mode": -1},
        ]}}]))
        .await,
        format!("Pod \"p\" is invalid: [spec.volumes[0].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required, spec.volumes[0].downwardAPI: Invalid value: \"resource\": fieldRef and resourceFieldRef can not be specified simultaneously, spec.volumes[0].downwardAPI.mode: Invalid value: -1: {MODE}]")
    );
}

#[tokio::test]
async fn downward_api_field_paths() {
    // `fieldRef.apiVersion` reads as its default (v1); a volume supports
    // labels and annotations, not the env-only paths.
    assert_eq!(
        vol_message(json!([{"name": "d", "downwardAPI": {"items": [
            {"path": "a", "fieldRef": {"fieldPath": "spec.nodeName"}},
            {"path": "b", "fieldRef": {"fieldPath": "metadata.labels['app']"}},
        ]}}]))
        .await,
        "Pod \"p\" is invalid: spec.volumes[0].downwardAPI.fieldRef.fieldPath: Unsupported value: \"spec.nodeName\": supported values: \"metadata.annotations\", \"metadata.labels\", \"metadata.name\", \"metadata.namespace\", \"metadata.uid\""
    );
}

#[tokio::test]
async fn projected_sources() {
    assert_eq!(
        vol_message(json!([{"name": "p", "projected": {"sources": [
            {"secret": {"name": "s", "items": [{"key": "a", "path": "x"}]}},
            {"configMap": {"name": "c", "items": [{"key": "b", "path": "x"}]},
             "downwardAPI": {"items": [{"path": "y", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"serviceAccountToken": {"path": "/abs", "expirationSeconds": 60}},
            {"serviceAccountToken": {"path": "t", "expirationSeconds": 5_000_000_000_i64}},
            {"downwardAPI": {"items": [{"path": "y", "fieldRef": {"fieldPath": "metadata.uid"}}]}},
            {},
        ], "defaultMode": 512}}]))
        .await,
        format!("Pod \"p\" is invalid: [spec.volumes[0].projected.defaultMode: Invalid value: 512: {MODE}, spec.volumes[0].projected: Invalid value: \"c\": conflicting duplicate paths, spec.volumes[0].projected.sources[1]: Forbidden: may not specify more than 1 volume type per source, spec.volumes[0].projected.sources[2].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes, spec.volumes[0].projected.path: Invalid value: \"/abs\": must be a relative path, spec.volumes[0].projected.sources[3].serviceAccountToken.expirationSeconds: Invalid value: 5000000000: may not specify a duration larger than 2^32 seconds, spec.volumes[0].projected: Invalid value: \"y\": conflicting duplicate paths]")
    );
}

#[tokio::test]
async fn projected_token_needs_a_service_account() {
    // ServiceAccount admission would name the `default` account first.
    let config = PluginConfig::from_flags(&[], &["ServiceAccount".to_string()])
        .unwrap_or_else(|e| panic!("{e}"));
    let adm = admission_with(Arc::new(MemStore::default()), config).await;
    let req = create(
        "",
        "pods",
        "default",
        pod(json!({
            "containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "t", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}}]}}],
        })),
    );
    let msg = adm.admit(req).await.err().map(|e| e.message);
    assert_eq!(
        msg.as_deref().unwrap_or("admitted"),
        "Pod \"p\" is invalid: spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: must not be specified when serviceAccountName is not set"
    );
}

#[tokio::test]
async fn csi_ephemeral_and_claims() {
    assert_eq!(
        vol_message(json!([
            {"name": "c", "csi": {"driver": "Bad_Driver", "nodePublishSecretRef": {"name": "Bad"}}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {
                "metadata": {"name": "x", "uid": "u", "generation": 2, "labels": {"a": "b"}},
                "spec": {}}}},
            {"name": "f", "ephemeral": {}},
            {"name": "g", "persistentVolumeClaim": {"claimName": "p-e"}},
        ]))
        .await,
        // kube reports an invalid node-publish secret name at `csi.name`.
        format!("Pod \"p\" is invalid: [spec.volumes[0].csi.driver: Invalid value: \"Bad_Driver\": {SUBDOMAIN}, spec.volumes[0].csi.name: Invalid value: \"Bad\": {SUBDOMAIN}, spec.volumes[1].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set, spec.volumes[1].ephemeral.volumeClaimTemplate.metadata.uID: Forbidden: cannot be set, spec.volumes[1].ephemeral.volumeClaimTemplate.metadata.generation: Forbidden: cannot be set, spec.volumes[1].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at least 1 access mode is required, spec.volumes[1].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value, spec.volumes[2].ephemeral.volumeClaimTemplate: Required value, spec.volumes[3].persistentVolumeClaim.claimName: Invalid value: \"p-e\": must not reference a PVC that gets created for an ephemeral volume]")
    );
}

#[tokio::test]
async fn ephemeral_claim_name_too_long() {
    let name = "p".repeat(250);
    let mut obj = pod(json!({
        "containers": [{"name": "c", "image": "i"}],
        "volumes": [{"name": "data", "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}],
    }));
    obj["metadata"]["name"] = json!(name);
    let msg = message(create("", "pods", "default", obj)).await;
    assert_eq!(
        msg,
        format!("Pod \"{name}\" is invalid: spec.volumes[0].name: Invalid value: \"data\": PVC name \"{name}-data\": must be no more than 253 characters")
    );
}

#[tokio::test]
async fn more_than_one_source_at_kubes_paths() {
    // The second and later sources are reported, two at kube's misspelt
    // paths (`cephFS`, `downwarAPI`).
    assert_eq!(
        vol_message(json!([{"name": "x", "emptyDir": {}, "hostPath": {"path": "/a"},
            "cephfs": {"monitors": ["m"]}, "downwardAPI": {}}]))
        .await,
        "Pod \"p\" is invalid: [spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type, spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type, spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type]"
    );
}

#[tokio::test]
async fn network_and_cloud_sources() {
    let msg = vol_message(json!([
        {"name": "n", "nfs": {"server": "", "path": "rel"}},
        {"name": "i", "iscsi": {"targetPortal": "", "iqn": "foo", "lun": 300,
            "chapAuthSession": true, "initiatorName": "iqn.bad"}},
        {"name": "g", "glusterfs": {"endpoints": "", "path": ""}},
        {"name": "r", "rbd": {"monitors": [], "image": ""}},
        {"name": "ce", "cephfs": {"monitors": []}},
        {"name": "ci", "cinder": {"volumeID": "", "secretRef": {"name": ""}}},
        {"name": "fc", "fc": {"targetWWNs": ["a"], "wwids": ["b"], "lun": 300}},
        {"name": "fc2", "fc": {}},
        {"name": "af", "azureFile": {"secretName": "", "shareName": ""}},
        {"name": "ad", "azureDisk": {"diskName": "", "diskURI": "", "cachingMode": "Bogus", "kind": "Managed"}},
        {"name": "vs", "vsphereVolume": {"volumePath": ""}},
        {"name": "q", "quobyte": {"registry": "a:1,b", "volume": ""}},
        {"name": "q2", "quobyte": {"registry": "a:1", "tenant": "x".repeat(65), "volume": "v"}},
        {"name": "pw", "portworxVolume": {"volumeID": ""}},
        {"name": "sc", "scaleIO": {"gateway": "", "system": "", "secretRef": {"name": "s"}}},
        {"name": "fl", "flocker": {"datasetName": "a/b", "datasetUUID": "u"}},
        {"name": "fl2", "flocker": {}},
        {"name": "aws", "awsElasticBlockStore": {"volumeID": "", "partition": -1}},
        {"name": "ph", "photonPersistentDisk": {"pdID": ""}},
        {"name": "so", "storageos": {"volumeName": "Bad", "volumeNamespace": "Bad", "secretRef": {"name": ""}}},
        {"name": "fx", "flexVolume": {"driver": "", "options": {"kubernetes.io/x": "1", "a.k8s.io": "2", "ok/y": "3"}}},
        {"name": "ad2", "azureDisk": {"diskName": "d", "diskURI": "/subscriptions/x"}},
    ]))
    .await;
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [spec.volumes[0].nfs.server: Required value, spec.volumes[0].nfs.path: Invalid value: \"rel\": must be an absolute path, spec.volumes[1].iscsi.targetPortal: Required value, spec.volumes[1].iscsi.iqn: Invalid value: \"foo\": must be valid format starting with iqn, eui, or naa, spec.volumes[1].iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive, spec.volumes[1].iscsi.secretRef: Required value, spec.volumes[1].iscsi.initiatorname: Invalid value: \"iqn.bad\": must be valid format, spec.volumes[2].glusterfs.endpoints: Required value, spec.volumes[2].glusterfs.path: Required value, spec.volumes[3].rbd.monitors: Required value, spec.volumes[3].rbd.image: Required value, spec.volumes[4].cephfs.monitors: Required value, spec.volumes[5].cinder.volumeID: Required value, spec.volumes[5].cinder.secretRef.name: Required value, spec.volumes[6].fc.targetWWNs: Invalid value: [\"a\"]: targetWWNs and wwids can not be specified simultaneously, spec.volumes[6].fc.lun: Invalid value: 300: must be between 0 and 255, inclusive, spec.volumes[7].fc.targetWWNs: Required value: must specify either targetWWNs or wwids, but not both, spec.volumes[8].azureFile.secretName: Required value, spec.volumes[8].azureFile.shareName: Required value, spec.volumes[9].azureDisk.diskName: Required value, spec.volumes[9].azureDisk.diskURI: Required value, spec.volumes[9].azureDisk.cachingMode: Unsupported value: \"Bogus\": supported values: \"None\", \"ReadOnly\", \"ReadWrite\", spec.volumes[9].azureDisk.diskURI: Unsupported value: \"\": supported values: \"/subscriptions/{{sub-id}}/resourcegroups/{{group-name}}/providers/microsoft.compute/disks/{{disk-id}}\", spec.volumes[10].vsphereVolume.volumePath: Required value, spec.volumes[11].quobyte.registry: Invalid value: \"a:1,b\": must be a host:port pair or multiple pairs separated by commas, spec.volumes[11].quobyte.volume: Required value, spec.volumes[12].quobyte.tenant: Required value: must be a UUID and may not exceed a length of 64 characters, spec.volumes[13].portworxVolume.volumeID: Required value, spec.volumes[14].scaleIO.gateway: Required value, spec.volumes[14].scaleIO.system: Required value, spec.volumes[14].scaleIO.volumeName: Required value, spec.volumes[15].flocker: Invalid value: \"resource\": datasetName and datasetUUID can not be specified simultaneously, spec.volumes[15].flocker.datasetName: Invalid value: \"a/b\": must not contain '/', spec.volumes[16].flocker: Required value: one of datasetName and datasetUUID is required, spec.volumes[17].awsElasticBlockStore.volumeID: Required value, spec.volumes[17].awsElasticBlockStore.partition: Invalid value: -1: must be between 1 and 255, inclusive, spec.volumes[18].photonPersistentDisk.pdID: Required value, spec.volumes[19].storageos.volumeName: Invalid value: \"Bad\": {LABEL}, spec.volumes[19].storageos.volumeNamespace: Invalid value: \"Bad\": {LABEL}, spec.volumes[19].storageos.secretRef.name: Required value, spec.volumes[20].flexVolume.driver: Required value, spec.volumes[20].flexVolume.options[kubernetes.io/x]: Invalid value: \"kubernetes.io/x\": kubernetes.io and k8s.io namespaces are reserved, spec.volumes[20].flexVolume.options[a.k8s.io]: Invalid value: \"a.k8s.io\": kubernetes.io and k8s.io namespaces are reserved, spec.volumes[21].azureDisk.diskURI: Unsupported value: \"/subscriptions/x\": supported values: \"https://{{account-name}}.blob.core.windows.net/{{container-name}}/{{disk-name}}.vhd\"]")
    );
}

#[tokio::test]
async fn iscsi_initiator_name_length() {
    // Checked on the volume's name, even for a second source.
    let portal = format!("{}.example.com:3260", "a".repeat(50));
    assert_eq!(
        vol_message(json!([{"name": "disk", "emptyDir": {},
            "iscsi": {"targetPortal": portal, "iqn": "iqn.2001-04.com.example:storage", "lun": 0,
                      "initiatorName": "iqn.2001-04.com.example:node"}}]))
        .await,
        "Pod \"p\" is invalid: [spec.volumes[0].iscsi: Forbidden: may not specify more than 1 volume type, spec.volumes[0].name: Invalid value: \"disk\": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.]"
    );
}

#[tokio::test]
async fn invalid_volume_is_not_mountable() {
    // A volume with errors is not in the valid set, so a mount of it is not
    // found either (kube's `ValidateVolumes` map).
    let msg = message(create(
        "",
        "pods",
        "default",
        pod(json!({
            "containers": [{"name": "c", "image": "i",
                "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}]}],
            "volumes": [{"name": "cfg", "configMap": {"name": "c", "defaultMode": -1}}],
        })),
    ))
    .await;
    assert_eq!(
        msg,
        format!("Pod \"p\" is invalid: [spec.volumes[0].configMap.defaultMode: Invalid value: -1: {MODE}, spec.containers[0].volumeMounts[0].name: Not found: \"cfg\"]")
    );
}

#[tokio::test]
async fn template_volumes_use_the_template_path() {
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "volumes": [{"name": "s", "secret": {"secretName": "s", "items": [{"key": "k", "path": "/abs"}]}}]}}}});
    assert_eq!(
        message(create("apps", "deployments", "default", d)).await,
        "Deployment.apps \"d\" is invalid: spec.template.spec.volumes[0].secret.items[0].path: Invalid value: \"/abs\": must be a relative path"
    );
}

#[tokio::test]
async fn persistent_volume_variants() {
    let pv = |source: Value| {
        let mut spec = json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]});
        if let (Some(m), Some(s)) = (spec.as_object_mut(), source.as_object()) {
            m.extend(s.clone());
        }
        create(
            "",
            "persistentvolumes",
            "",
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"}, "spec": spec}),
        )
    };
    // The PV's iSCSI variant: the length check on the PV's name at
    // `targetportal`, no "starting with" wording, a secretRef name.
    let portal = format!("{}.example.com:3260", "a".repeat(50));
    assert_eq!(
        message(pv(json!({"iscsi": {"targetPortal": portal, "iqn": "foo", "lun": 0,
            "initiatorName": "iqn.2001-04.com.example:node", "secretRef": {"name": ""}}})))
        .await,
        format!("PersistentVolume \"pv\" is invalid: [spec.iscsi.targetportal: Invalid value: \"{portal}\": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified., spec.iscsi.iqn: Invalid value: \"foo\": must be valid format, spec.iscsi.secretRef.name: Required value]")
    );
    assert_eq!(
        message(pv(json!({"glusterfs": {"endpoints": "e", "path": "p", "endpointsNamespace": ""},
            "cephfs": {"monitors": ["m"]}})))
        .await,
        "PersistentVolume \"pv\" is invalid: [spec.glusterfs.endpointsNamespace: Invalid value: \"\": if the endpointnamespace is set, it must be a valid namespace name, spec.cephFS: Forbidden: may not specify more than 1 volume type]"
    );
    assert_eq!(
        message(pv(
            json!({"cinder": {"volumeID": "v", "secretRef": {"name": "s"}}})
        ))
        .await,
        "PersistentVolume \"pv\" is invalid: spec.cinder.secretRef.namespace: Required value"
    );
    assert_eq!(
        message(pv(
            json!({"azureFile": {"secretName": "s", "shareName": "x", "secretNamespace": ""}})
        ))
        .await,
        "PersistentVolume \"pv\" is invalid: spec.azureFile.secretNamespace: Required value"
    );
}

#[tokio::test]
async fn realistic_pod_with_many_sources_is_admitted() {
    let obj = json!({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-0", "labels": {"app": "web"}},
    "spec": {
        "serviceAccountName": "default",
        "containers": [{"name": "web", "image": "nginx:1.27",
            "resources": {"limits": {"memory": "256Mi"}},
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/nginx/conf.d", "readOnly": true},
                {"name": "tls", "mountPath": "/etc/tls", "readOnly": true},
                {"name": "cache", "mountPath": "/var/cache/nginx"},
                {"name": "podinfo", "mountPath": "/etc/podinfo"},
                {"name": "bundle", "mountPath": "/var/run/bundle"},
                {"name": "data", "mountPath": "/data"},
                {"name": "scratch", "mountPath": "/scratch"},
                {"name": "secrets-store", "mountPath": "/mnt/secrets", "readOnly": true},
                {"name": "logs", "mountPath": "/host/logs", "readOnly": true},
                {"name": "shared", "mountPath": "/shared"},
            ]}],
        "volumes": [
            {"name": "config", "configMap": {"name": "nginx-conf",
                "items": [{"key": "default.conf", "path": "default.conf"}, {"key": "extra", "path": "sub/extra.conf", "mode": 420}]}},
            {"name": "tls", "secret": {"secretName": "web-tls", "defaultMode": 256,
                "items": [{"key": "tls.crt", "path": "tls.crt"}, {"key": "tls.key", "path": "tls.key"}]}},
            {"name": "cache", "emptyDir": {"medium": "Memory", "sizeLimit": "128Mi"}},
            {"name": "podinfo", "downwardAPI": {"items": [
                {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                {"path": "app", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['app']"}},
                {"path": "mem", "resourceFieldRef": {"containerName": "web", "resource": "limits.memory", "divisor": "1Mi"}}]}},
            {"name": "bundle", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"audience": "vault", "expirationSeconds": 3600, "path": "vault-token"}},
                {"serviceAccountToken": {"path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"secret": {"name": "extra", "optional": true}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "web-data"}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
                "metadata": {"labels": {"app": "web"}, "annotations": {"example.com/purpose": "scratch"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                         "resources": {"requests": {"storage": "1Gi"}}}}}},
            {"name": "secrets-store", "csi": {"driver": "secrets-store.csi.k8s.io", "readOnly": true,
                "volumeAttributes": {"secretProviderClass": "vault"}, "nodePublishSecretRef": {"name": "creds"}}},
            {"name": "logs", "hostPath": {"path": "/var/log", "type": "Directory"}},
            {"name": "shared", "nfs": {"server": "nfs.example.com", "path": "/exports/shared"}},
            {"name": "disk", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage.disk1", "lun": 0,
                "initiatorName": "iqn.2001-04.com.example:node1"}},
            {"name": "repo", "gitRepo": {"repository": "https://example.com/r.git", "directory": "."}},
            {"name": "fc", "fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2}},
            {"name": "flex", "flexVolume": {"driver": "example.com/lvm", "options": {"volumeID": "v1"}}},
            {"name": "quobyte", "quobyte": {"registry": "registry:7861,[::1]:7861", "volume": "v"}},
            {"name": "azure", "azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d", "kind": "Managed"}},
            {"name": "gce", "gcePersistentDisk": {"pdName": "pd", "partition": 1}},
        ]}});
    let out = admitted(create("", "pods", "default", obj)).await;
    // ServiceAccount admission adds its own projected token volume after
    // these, which passes too.
    let names: Vec<&str> = out["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(names.len(), 18, "{names:?}");
    assert!(names[17].starts_with("kube-api-access-"), "{names:?}");
}
