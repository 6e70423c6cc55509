//! `--admission-control-config-file`: PodSecurity's defaults and
//! exemptions and ResourceQuota's `limitedResources` from the file.

use std::sync::Arc;

use keelson_admission::{read_admission_config, LocalAdmission, PluginConfig};
use keelson_api::{
    AdmissionApi, AdmissionRequest, CreateOptions, GroupResource, ObjectKey, StoreApi, UserInfo,
};
use serde_json::{json, Value};

use crate::support::{admission_over, create, MemStore};

const CONFIG: &str = r#"
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
    exemptions:
      usernames: [admin]
      namespaces: [free]
- name: ResourceQuota
  path: quota.yaml
"#;

const QUOTA: &str = r#"
apiVersion: apiserver.config.k8s.io/v1
kind: ResourceQuotaConfiguration
limitedResources:
- resource: pods
  matchContains: [requests.cpu]
"#;

async fn configured(store: Arc<MemStore>) -> LocalAdmission {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("admission.yaml"), CONFIG).unwrap();
    std::fs::write(dir.path().join("quota.yaml"), QUOTA).unwrap();
    let mut config = PluginConfig::default();
    let warnings = read_admission_config(&dir.path().join("admission.yaml"), &mut config).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    drop(admission_over(store.clone()).await);
    for ns in ["plain", "free"] {
        store
            .create(
                &ObjectKey::new(GroupResource::new("", "namespaces"), "", ns),
                json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": ns}, "status": {"phase": "Active"}}),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        store
            .create(
                &ObjectKey::new(GroupResource::new("", "serviceaccounts"), ns, "default"),
                json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "default", "namespace": ns}}),
                CreateOptions::default(),
            )
            .await
            .unwrap();
    }
    LocalAdmission::with_plugins(store, keelson_registry::Catalog::builtin(), config)
}

fn pod(name: &str, container: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [container]}})
}

fn as_user(mut req: AdmissionRequest, user: &str) -> AdmissionRequest {
    req.user = Some(UserInfo {
        username: user.into(),
        ..UserInfo::default()
    });
    req
}

#[tokio::test]
async fn the_file_sets_the_default_level_and_the_exemptions() {
    let store = Arc::new(MemStore::default());
    let adm = configured(store).await;
    let privileged = pod(
        "p",
        json!({"name": "c", "image": "i", "securityContext": {"privileged": true}}),
    );
    let e = adm
        .admit(as_user(
            create("", "pods", "plain", privileged.clone()),
            "bob",
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        r#"pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)"#
    );
    adm.admit(as_user(
        create("", "pods", "plain", privileged.clone()),
        "admin",
    ))
    .await
    .unwrap();
    adm.admit(as_user(create("", "pods", "free", privileged), "bob"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_limited_resource_needs_a_quota() {
    let store = Arc::new(MemStore::default());
    let adm = configured(store.clone()).await;
    let cpu = pod(
        "c",
        json!({"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}),
    );
    let e = adm
        .admit(create("", "pods", "plain", cpu.clone()))
        .await
        .unwrap_err();
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        r#"pods "c" is forbidden: insufficient quota to consume: requests.cpu"#
    );
    // A pod that asks for no cpu is not limited.
    adm.admit(create(
        "",
        "pods",
        "plain",
        pod("n", json!({"name": "c", "image": "i"})),
    ))
    .await
    .unwrap();
    store
        .create(
            &ObjectKey::new(GroupResource::new("", "resourcequotas"), "plain", "cpu"),
            json!({"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "cpu", "namespace": "plain"},
                "spec": {"hard": {"requests.cpu": "1"}},
                "status": {"hard": {"requests.cpu": "1"}, "used": {"requests.cpu": "0"}}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    adm.admit(create("", "pods", "plain", cpu)).await.unwrap();
}
