//! Pod security validation (kube 1.34's `validatePodSpecSecurityContext`,
//! `ValidateSecurityContext`, host network and user namespace rules,
//! Windows and OS rules): kube's exact messages, and realistic secure,
//! privileged and Windows workloads that must still be admitted.

use std::sync::Arc;

use keelson_admission::PluginConfig;
use keelson_api::AdmissionApi;
use serde_json::{json, Value};

use crate::support::{admission_with, admitted, create, message, pod, MemStore};

const RANGE: &str = "must be between 0 and 2147483647, inclusive";

async fn pod_message(spec: Value) -> String {
    message(create("", "pods", "default", pod(spec))).await
}

/// `errs` as kube's aggregate of a Pod named `p`.
fn invalid(errs: &[&str]) -> String {
    format!("Pod \"p\" is invalid: [{}]", errs.join(", "))
}

#[tokio::test]
async fn pod_security_context_ids_and_policies() {
    let msg = pod_message(json!({
        "containers": [{"name": "c", "image": "i"}],
        "shareProcessNamespace": true, "hostPID": true,
        "securityContext": {
            "runAsUser": -1, "runAsGroup": 2147483648_i64, "fsGroup": -5,
            "supplementalGroups": [1, -2],
            "fsGroupChangePolicy": "Sometimes",
            "supplementalGroupsPolicy": "Loose",
            "seLinuxChangePolicy": "MountOption",
        }
    }))
    .await;
    assert_eq!(
        msg,
        invalid(&[
            &format!("spec.securityContext.fsGroup: Invalid value: -5: {RANGE}"),
            &format!("spec.securityContext.runAsUser: Invalid value: -1: {RANGE}"),
            &format!("spec.securityContext.runAsGroup: Invalid value: 2147483648: {RANGE}"),
            &format!("spec.securityContext.supplementalGroups[1]: Invalid value: -2: {RANGE}"),
            "spec.securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled",
            "spec.securityContext.fsGroupChangePolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnRootMismatch\"",
            "spec.securityContext.supplementalGroupsPolicy: Unsupported value: \"Loose\": supported values: \"Merge\", \"Strict\"",
            "spec.securityContext.seLinuxChangePolicy: Unsupported value: \"MountOption\": supported values: \"Recursive\"",
        ])
    );
}

#[tokio::test]
async fn sysctls_names_duplicates_and_host_namespaces() {
    let msg = pod_message(json!({
        "containers": [{"name": "c", "image": "i"}],
        "hostNetwork": true, "hostIPC": true,
        "securityContext": {"sysctls": [
            {"name": "", "value": "1"},
            {"name": "Net.bad", "value": "1"},
            {"name": "net.core.somaxconn", "value": "1024"},
            {"name": "net.core.somaxconn", "value": "2048"},
            {"name": "kernel.shm_rmid_forced", "value": "1"},
            {"name": "kernel.domainname", "value": "x"},
        ]}
    }))
    .await;
    let regex = r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";
    let s = "spec.securityContext.sysctls";
    assert_eq!(
        msg,
        invalid(&[
            &format!("{s}[0].name: Required value"),
            &format!("{s}[1].name: Invalid value: \"Net.bad\": must have at most 253 characters and match regex {regex}"),
            &format!("{s}[2].name: Invalid value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' is true"),
            &format!("{s}[3].name: Duplicate value: \"net.core.somaxconn\""),
            &format!("{s}[3].name: Invalid value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' is true"),
            &format!("{s}[4].name: Invalid value: \"kernel.shm_rmid_forced\": may not be specified when 'hostIPC' is true"),
        ])
    );
}

#[tokio::test]
async fn seccomp_and_apparmor_profiles() {
    let msg = pod_message(json!({
        "securityContext": {
            "seccompProfile": {"type": "Localhost"},
            "appArmorProfile": {"type": "Localhost", "localhostProfile": " x "},
        },
        "containers": [
            {"name": "a", "image": "i", "securityContext": {
                "seccompProfile": {"type": "RuntimeDefault", "localhostProfile": "p.json"},
                "appArmorProfile": {"type": "Bogus"},
            }},
            {"name": "b", "image": "i", "securityContext": {
                "seccompProfile": {"type": "Localhost", "localhostProfile": "/abs/../x.json"},
                "appArmorProfile": {"type": "RuntimeDefault", "localhostProfile": "k"},
            }},
            {"name": "c", "image": "i", "securityContext": {
                "seccompProfile": {"type": "Chaos"},
                "appArmorProfile": {},
            }},
        ]
    }))
    .await;
    let c = "spec.containers";
    assert_eq!(
        msg,
        invalid(&[
            &format!("{c}[0].securityContext.seccompProfile.localhostProfile: Invalid value: {{\"Type\":\"RuntimeDefault\",\"LocalhostProfile\":\"p.json\"}}: can only be set when seccomp type is Localhost"),
            &format!("{c}[0].securityContext.appArmorProfile.type: Unsupported value: \"Bogus\": supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\""),
            &format!("{c}[1].securityContext.seccompProfile.localhostProfile: Invalid value: \"/abs/../x.json\": must be a relative path"),
            &format!("{c}[1].securityContext.seccompProfile.localhostProfile: Invalid value: \"/abs/../x.json\": must not contain '..'"),
            &format!("{c}[1].securityContext.appArmorProfile.localhostProfile: Invalid value: \"k\": can only be set when AppArmor type is Localhost"),
            &format!("{c}[2].securityContext.seccompProfile.type: Unsupported value: \"Chaos\": supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\""),
            &format!("{c}[2].securityContext.appArmorProfile.type: Required value: type is required when appArmorProfile is set"),
            "spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost",
            "spec.securityContext.appArmorProfile.localhostProfile: Invalid value: \" x \": must not be padded with whitespace",
        ])
    );
}

#[tokio::test]
async fn container_security_context_rules() {
    let msg = pod_message(json!({"containers": [
        {"name": "a", "image": "i", "securityContext": {
            "privileged": true, "allowPrivilegeEscalation": false,
            "runAsUser": -1, "runAsGroup": 5, "procMount": "Unmasked",
            "capabilities": {"add": ["CAP_SYS_ADMIN"]},
        }},
        {"name": "b", "image": "i", "securityContext": {"procMount": "Weird"}},
    ]}))
    .await;
    let sc = r#"{"Capabilities":{"Add":["CAP_SYS_ADMIN"],"Drop":null},"Privileged":true,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":-1,"RunAsGroup":5,"RunAsNonRoot":null,"ReadOnlyRootFilesystem":null,"AllowPrivilegeEscalation":false,"ProcMount":"Unmasked","SeccompProfile":null,"AppArmorProfile":null}"#;
    let a = "spec.containers[0].securityContext";
    assert_eq!(
        msg,
        invalid(&[
            &format!("{a}.runAsUser: Invalid value: -1: {RANGE}"),
            &format!("{a}.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`"),
            &format!("{a}: Invalid value: {sc}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"),
            &format!("{a}: Invalid value: {sc}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"),
            "spec.containers[1].securityContext.procMount: Unsupported value: \"Weird\": supported values: \"Default\", \"Unmasked\"",
        ])
    );
}

#[tokio::test]
async fn privileged_is_refused_without_allow_privileged() {
    let mut config = PluginConfig::default();
    config.allow_privileged = false;
    let adm = admission_with(Arc::new(MemStore::default()), config).await;
    let spec = json!({"initContainers": [{"name": "init", "image": "i", "securityContext": {"privileged": true}}],
        "containers": [{"name": "c", "image": "i", "securityContext": {"privileged": false}}]});
    let err = adm
        .admit(create("", "pods", "default", pod(spec)))
        .await
        .err()
        .map(|e| e.message);
    assert_eq!(
        err.as_deref(),
        Some("Pod \"p\" is invalid: spec.initContainers[0].securityContext.privileged: Forbidden: disallowed by cluster policy")
    );
    let hp = json!({"hostNetwork": true, "os": {"name": "windows"},
        "securityContext": {"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
        "containers": [{"name": "c", "image": "i"}]});
    let err = adm
        .admit(create("", "pods", "default", pod(hp)))
        .await
        .err()
        .map(|e| e.message);
    assert_eq!(
        err.as_deref(),
        Some("Pod \"p\" is invalid: spec: Forbidden: hostProcess containers are disallowed by cluster policy")
    );
}

#[tokio::test]
async fn host_network_ports_and_host_users() {
    let msg = pod_message(json!({
        "hostNetwork": true,
        "containers": [{"name": "c", "image": "i", "ports": [
            {"containerPort": 80},
            {"containerPort": 443, "hostPort": 8443},
        ]}]
    }))
    .await;
    assert_eq!(msg, "Pod \"p\" is invalid: spec.containers[0].ports[1].hostPort: Invalid value: 8443: must match `containerPort` when `hostNetwork` is true");

    let deployment = |host_port: i64| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "i",
                    "ports": [{"containerPort": 80, "hostPort": host_port}]}]}}}})
    };
    admitted(create("apps", "deployments", "default", deployment(0))).await;
    assert_eq!(
        message(create("apps", "deployments", "default", deployment(81))).await,
        "Deployment.apps \"d\" is invalid: spec.template.spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is true"
    );

    let msg = pod_message(json!({
        "hostUsers": false, "hostNetwork": true, "hostPID": true, "hostIPC": true,
        "containers": [{"name": "c", "image": "i", "securityContext": {"procMount": "Unmasked"}}]
    }))
    .await;
    assert_eq!(
        msg,
        invalid(&[
            "spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false",
            "spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false",
            "spec.HostIPC: Forbidden: when `pod.Spec.HostUsers` is false",
        ])
    );
}

#[tokio::test]
async fn windows_options_and_host_process() {
    let subdomain = keelson_apimachinery::names::is_dns1123_subdomain("Bad_Name").join("");
    let msg = pod_message(json!({
        "securityContext": {"windowsOptions": {"hostProcess": true, "runAsUserName": "a\\b\\c"}},
        "containers": [
            {"name": "a", "image": "i"},
            {"name": "b", "image": "i", "securityContext": {"windowsOptions": {
                "hostProcess": false, "gmsaCredentialSpecName": "Bad_Name",
                "gmsaCredentialSpec": "", "runAsUserName": "dom\\...",
            }}},
        ]
    }))
    .await;
    let b = "spec.containers[1].securityContext.windowsOptions";
    assert_eq!(
        msg,
        invalid(&[
            &format!("{b}.gmsaCredentialSpecName: Invalid value: \"Bad_Name\": {subdomain}"),
            &format!("{b}.gmsaCredentialSpec: Invalid value: \"\": gmsaCredentialSpec cannot be an empty string"),
            &format!("{b}.runAsUserName: Invalid value: \"dom\\\\...\": runAsUserName's User cannot contain only periods or spaces"),
            "spec.securityContext.windowsOptions.runAsUserName: Invalid value: \"a\\\\b\\\\c\": runAsUserName cannot contain more than one backslash",
            &format!("{b}.hostProcess: Invalid value: false: pod hostProcess value must be identical if both are specified, was true"),
            "spec: Invalid value: \"\": If pod contains any hostProcess containers then all containers must be HostProcess containers",
            "spec.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers",
        ])
    );
}

#[tokio::test]
async fn os_name_and_per_os_forbidden_fields() {
    let base = |os: Value| json!({"os": os, "containers": [{"name": "c", "image": "i"}]});
    assert_eq!(
        pod_message(base(json!({}))).await,
        "Pod \"p\" is invalid: spec.os.name: Required value: cannot be empty"
    );
    assert_eq!(
        pod_message(base(json!({"name": "mac"}))).await,
        "Pod \"p\" is invalid: spec.os: Unsupported value: \"mac\": supported values: \"linux\", \"windows\""
    );

    let linux = pod_message(json!({"os": {"name": "linux"},
        "securityContext": {"windowsOptions": {"runAsUserName": "u"}},
        "initContainers": [{"name": "i", "image": "i", "securityContext": {"windowsOptions": {}}}],
        "containers": [{"name": "c", "image": "i"}]}))
    .await;
    assert_eq!(
        linux,
        invalid(&[
            "spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
            "spec.initContainers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
        ])
    );

    let windows = pod_message(json!({"os": {"name": "windows"}, "hostPID": true,
        "securityContext": {"seLinuxOptions": {"level": "s0"}, "runAsUser": 1000,
            "sysctls": [{"name": "kernel.domainname", "value": "x"}]},
        "containers": [{"name": "c", "image": "i", "securityContext": {
            "privileged": false, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": true}}]}))
    .await;
    let f = "Forbidden: cannot be set for a windows pod";
    assert_eq!(
        windows,
        invalid(&[
            &format!("spec.securityContext.seLinuxOptions: {f}"),
            &format!("spec.hostPID: {f}"),
            &format!("spec.securityContext.sysctls: {f}"),
            &format!("spec.securityContext.runAsUser: {f}"),
            &format!("spec.containers[0].securityContext.capabilities: {f}"),
            &format!("spec.containers[0].securityContext.readOnlyRootFilesystem: {f}"),
            &format!("spec.containers[0].securityContext.privileged: {f}"),
        ])
    );
}

#[tokio::test]
async fn deprecated_annotations_must_match_the_fields_on_create() {
    let mut p = pod(json!({
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {"name": "a", "image": "i", "securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "mine"}}},
            {"name": "b", "image": "i", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
        ]
    }));
    p["metadata"]["annotations"] = json!({
        "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/a": "localhost/other",
        "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
    });
    assert_eq!(
        message(create("", "pods", "default", p)).await,
        invalid(&[
            "spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match",
            "spec.containers[0].securityContext.appArmorProfile.localhostProfile: Forbidden: apparmor profile in annotation and field must match",
            "spec.containers[1].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and field must match",
        ])
    );
}

#[tokio::test]
async fn restricted_pod_is_admitted() {
    let p = pod(json!({
        "os": {"name": "linux"},
        "securityContext": {
            "runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000,
            "supplementalGroups": [4000], "supplementalGroupsPolicy": "Strict",
            "fsGroupChangePolicy": "OnRootMismatch", "seLinuxChangePolicy": "Recursive",
            "seccompProfile": {"type": "RuntimeDefault"},
            "appArmorProfile": {"type": "RuntimeDefault"},
            "sysctls": [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "0"}],
        },
        "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
            "ports": [{"containerPort": 8080}],
            "securityContext": {
                "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                "procMount": "Default",
                "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/audit.json"},
                "appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-apparmor-example"},
            }}]
    }));
    admitted(create("", "pods", "default", p)).await;
}

#[tokio::test]
async fn privileged_daemonset_is_admitted() {
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "node-agent"},
        "spec": {"selector": {"matchLabels": {"app": "node-agent"}}, "template": {
            "metadata": {"labels": {"app": "node-agent"}},
            "spec": {
                "hostNetwork": true, "hostPID": true, "hostIPC": true,
                "dnsPolicy": "ClusterFirstWithHostNet",
                "securityContext": {"sysctls": [{"name": "kernel.domainname", "value": "node"}]},
                "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
                "containers": [{"name": "agent", "image": "quay.io/prometheus/node-exporter:v1.8.2",
                    "ports": [{"containerPort": 9100, "hostPort": 9100}, {"containerPort": 9101}],
                    "volumeMounts": [{"name": "root", "mountPath": "/host", "readOnly": true}],
                    "securityContext": {"privileged": true, "runAsUser": 0,
                        "capabilities": {"add": ["NET_ADMIN", "SYS_ADMIN", "SYS_PTRACE"]}}}]}}}});
    admitted(create("apps", "daemonsets", "default", ds)).await;
}

#[tokio::test]
async fn windows_pods_are_admitted() {
    let p = pod(json!({
        "os": {"name": "windows"},
        "nodeSelector": {"kubernetes.io/os": "windows"},
        "securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "gmsa-webapp-1", "runAsUserName": "ContainerUser"}},
        "containers": [{"name": "iis", "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "ports": [{"containerPort": 80}],
            "securityContext": {"windowsOptions": {"runAsUserName": "NT AUTHORITY\\NETWORK SERVICE"}}}]
    }));
    admitted(create("", "pods", "default", p)).await;
    let mut hp = pod(json!({
        "os": {"name": "windows"}, "hostNetwork": true,
        "securityContext": {"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
        "containers": [{"name": "csi", "image": "example.com/csi-proxy:v1", "ports": [{"containerPort": 9091}],
            "securityContext": {"windowsOptions": {"hostProcess": true}}}]
    }));
    hp["metadata"]["name"] = json!("hp");
    let out = admitted(create("", "pods", "default", hp)).await;
    assert_eq!(out["spec"]["containers"][0]["ports"][0]["hostPort"], 9091);
}
