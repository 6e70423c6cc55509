//! ServiceAccount (`plugin/pkg/admission/serviceaccount`), on pod creates:
//! `serviceAccountName` defaults to `default`; the account must exist; its
//! token is mounted as the projected `kube-api-access-<rand>` volume in
//! every container and init container (unless `automountServiceAccountToken`
//! is false on the pod, else on the account, or the container already
//! mounts that path); the account's image pull secrets are copied when the
//! pod has none; mirror pods may reference neither accounts nor secrets.

use std::time::Duration;

use keelson_apimachinery::ApiResult;
use serde_json::{json, Map, Value};

use super::cache::{live_get, service_accounts};
use super::util::{annotation, objects, objects_mut, random_suffix, spec_mut, str_at};
use super::Attrs;

const DEFAULT_NAME: &str = "default";
const VOLUME_PREFIX: &str = "kube-api-access-";
/// `DefaultAPITokenMountPath`.
pub(crate) const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
const ENFORCE_MOUNTABLE: &str = "kubernetes.io/enforce-mountable-secrets";
/// `serviceaccount.WarnOnlyBoundTokenExpirationSeconds`.
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;
/// How often the `default` account is looked up before a pod is refused
/// (it is created by a controller shortly after its namespace).
const DEFAULT_ATTEMPTS: u32 = 10;

/// kube's v1 conversion: `serviceAccount` (deprecated) and
/// `serviceAccountName` are one field; the name wins, the old field fills
/// an empty name, and both are written.
pub(crate) fn deprecated_name(pod: &mut Value) {
    let Some(spec) = spec_mut(pod) else { return };
    let name = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| {
            spec.get("serviceAccount")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .map(str::to_string);
    if let Some(name) = name {
        spec.insert("serviceAccountName".into(), Value::from(name.clone()));
        spec.insert("serviceAccount".into(), Value::from(name));
    }
}

/// The plugin's `Admit` (and `Validate`, which it ends with).
pub(crate) async fn admit(a: &Attrs<'_>, pod: &mut Value) -> ApiResult<()> {
    if !a.is("", "pods") || a.req.operation != keelson_api::Operation::Create {
        return Ok(());
    }
    if annotation(pod, MIRROR_ANNOTATION).is_some() {
        return mirror_pod(a, pod);
    }
    let Some(spec) = spec_mut(pod) else {
        return Ok(());
    };
    let sa_name = match spec.get("serviceAccountName").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => DEFAULT_NAME.to_string(),
    };
    spec.insert("serviceAccountName".into(), Value::from(sa_name.clone()));
    spec.insert("serviceAccount".into(), Value::from(sa_name.clone()));
    let namespace = a.req.namespace.as_str();
    let account = account(a, namespace, &sa_name).await?;
    if should_automount(&account, spec) {
        mount_token(spec);
    }
    let has_pull_secrets = spec
        .get("imagePullSecrets")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !has_pull_secrets {
        let copied: Vec<Value> = objects(&account, &["imagePullSecrets"])
            .into_iter()
            .map(|r| json!({"name": r.get("name").and_then(Value::as_str).unwrap_or("")}))
            .collect();
        if copied.is_empty() {
            spec.remove("imagePullSecrets");
        } else {
            spec.insert("imagePullSecrets".into(), Value::Array(copied));
        }
    }
    if enforces_mountable(&account) {
        limit_secret_references(&account, spec).map_err(|m| a.forbidden(&m))?;
    }
    Ok(())
}

/// The plugin's `Validate` (after validation; a mutating webhook may have
/// changed the pod since `admit`): mirror pods, the account exists, its
/// mountable secrets.
pub(crate) async fn validate(a: &Attrs<'_>, pod: &Value) -> ApiResult<()> {
    if !a.is("", "pods") || a.req.operation != keelson_api::Operation::Create {
        return Ok(());
    }
    if annotation(pod, MIRROR_ANNOTATION).is_some() {
        return mirror_pod(a, pod);
    }
    let Some(spec) = pod.get("spec").and_then(Value::as_object) else {
        return Ok(());
    };
    let sa_name = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let namespace = a.req.namespace.as_str();
    let account = account(a, namespace, sa_name).await?;
    if enforces_mountable(&account) {
        limit_secret_references(&account, spec).map_err(|m| a.forbidden(&m))?;
    }
    Ok(())
}

/// The account, or kube's `403` when it cannot be found.
async fn account(a: &Attrs<'_>, namespace: &str, sa_name: &str) -> ApiResult<Value> {
    match lookup(a, namespace, sa_name).await {
        Ok(Some(sa)) => Ok(sa),
        Ok(None) => Err(a.forbidden(&format!(
            "error looking up service account {namespace}/{sa_name}: serviceaccount {sa_name:?} not found"
        ))),
        Err(e) => Err(a.forbidden(&format!(
            "error looking up service account {namespace}/{sa_name}: {}",
            e.message
        ))),
    }
}

fn enforces_mountable(account: &Value) -> bool {
    annotation(account, ENFORCE_MOUNTABLE)
        .is_some_and(|v| matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True"))
}

/// `getServiceAccount`: the cache, then the store (ten times, 100–200 ms
/// apart, for `default`).
async fn lookup(a: &Attrs<'_>, namespace: &str, name: &str) -> ApiResult<Option<Value>> {
    if let Some(sa) = a
        .cache
        .get(a.store, &service_accounts(), namespace, name)
        .await?
    {
        return Ok(Some(sa));
    }
    let attempts = if name == DEFAULT_NAME {
        DEFAULT_ATTEMPTS
    } else {
        1
    };
    let interval = Duration::from_millis(100 + u64::from(uuid::Uuid::new_v4().as_bytes()[0]) % 100);
    for i in 0..attempts {
        if i != 0 {
            tokio::time::sleep(interval).await;
        }
        if let Some(sa) = live_get(a.store, &service_accounts(), namespace, name).await? {
            return Ok(Some(sa));
        }
    }
    Ok(None)
}

fn mirror_pod(a: &Attrs<'_>, pod: &Value) -> ApiResult<()> {
    if !str_at(pod, &["spec", "serviceAccountName"]).is_empty() {
        return Err(a.forbidden("a mirror pod may not reference service accounts"));
    }
    if references_secrets(pod) {
        return Err(a.forbidden("a mirror pod may not reference secrets"));
    }
    for v in objects(pod, &["spec", "volumes"]) {
        let token = v
            .get("projected")
            .map(|p| objects(p, &["sources"]))
            .unwrap_or_default()
            .iter()
            .any(|s| s.contains_key("serviceAccountToken"));
        if token {
            return Err(
                a.forbidden("a mirror pod may not use ServiceAccountToken volume projections")
            );
        }
    }
    Ok(())
}

/// `podutil.VisitPodSecretNames` found any name.
fn references_secrets(pod: &Value) -> bool {
    let named = |v: Option<&Value>, key: &str| {
        v.and_then(|x| x.get(key))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if !objects(pod, &["spec", "imagePullSecrets"]).is_empty() {
        return true;
    }
    for kind in ["containers", "initContainers", "ephemeralContainers"] {
        for c in objects(pod, &["spec", kind]) {
            let c = Value::Object(c.clone());
            for e in objects(&c, &["envFrom"]) {
                if named(e.get("secretRef"), "name") {
                    return true;
                }
            }
            for e in objects(&c, &["env"]) {
                if named(
                    e.get("valueFrom").and_then(|v| v.get("secretKeyRef")),
                    "name",
                ) {
                    return true;
                }
            }
        }
    }
    for v in objects(pod, &["spec", "volumes"]) {
        if named(v.get("secret"), "secretName")
            || named(v.get("azureFile"), "secretName")
            || [
                "cephfs",
                "cinder",
                "flexVolume",
                "rbd",
                "iscsi",
                "scaleIO",
                "storageos",
            ]
            .iter()
            .any(|k| named(v.get(*k).and_then(|s| s.get("secretRef")), "name"))
            || named(
                v.get("csi").and_then(|c| c.get("nodePublishSecretRef")),
                "name",
            )
        {
            return true;
        }
        if let Some(p) = v.get("projected") {
            if objects(p, &["sources"])
                .iter()
                .any(|s| named(s.get("secret"), "name"))
            {
                return true;
            }
        }
    }
    false
}

/// `shouldAutomount`: the pod's choice, else the account's, else true.
fn should_automount(account: &Value, spec: &Map<String, Value>) -> bool {
    if let Some(b) = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
    {
        return b;
    }
    account
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// `mountServiceAccountToken`.
fn mount_token(spec: &mut Map<String, Value>) {
    let existing = objects_mut(spec, "volumes")
        .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
        .find(|n| n.starts_with(VOLUME_PREFIX));
    let has_volume = existing.is_some();
    let volume_name = existing.unwrap_or_else(|| format!("{VOLUME_PREFIX}{}", random_suffix()));
    let mount = json!({
        "name": volume_name,
        "readOnly": true,
        "mountPath": TOKEN_MOUNT_PATH,
    });
    let mut needs_volume = false;
    for kind in ["initContainers", "containers"] {
        for c in objects_mut(spec, kind) {
            let mounted = c
                .get("volumeMounts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH));
            if mounted {
                continue;
            }
            match c.get_mut("volumeMounts").and_then(Value::as_array_mut) {
                Some(mounts) => mounts.push(mount.clone()),
                None => {
                    c.insert("volumeMounts".into(), Value::Array(vec![mount.clone()]));
                }
            }
            needs_volume = true;
        }
    }
    if !has_volume && needs_volume {
        let volume = token_volume(&volume_name);
        match spec.get_mut("volumes").and_then(Value::as_array_mut) {
            Some(vs) => vs.push(volume),
            None => {
                spec.insert("volumes".into(), Value::Array(vec![volume]));
            }
        }
    }
}

/// `TokenVolumeSource`, as the v1 API writes it.
fn token_volume(name: &str) -> Value {
    json!({
        "name": name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {
                    "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                    "path": "token"
                }},
                {"configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}]
                }},
                {"downwardAPI": {
                    "items": [{
                        "path": "namespace",
                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}
                    }]
                }}
            ],
            "defaultMode": 420
        }
    })
}

/// `limitSecretReferences` (accounts annotated
/// `kubernetes.io/enforce-mountable-secrets: "true"`).
fn limit_secret_references(account: &Value, spec: &Map<String, Value>) -> Result<(), String> {
    let sa = keelson_apimachinery::meta::meta_str(account, "name");
    let names = |key: &str| -> Vec<String> {
        objects(account, &[key])
            .iter()
            .filter_map(|s| s.get("name").and_then(Value::as_str).map(str::to_string))
            .collect()
    };
    let mountable = names("secrets");
    let spec = Value::Object(spec.clone());
    for v in objects(&spec, &["volumes"]) {
        if let Some(secret) = v.get("secret") {
            let name = str_at(secret, &["secretName"]);
            if !mountable.iter().any(|m| m == name) {
                return Err(format!(
                    "volume with secret.secretName=\"{name}\" is not allowed because service account {sa} does not reference that secret"
                ));
            }
        }
    }
    for (kind, label) in [
        ("initContainers", "init container"),
        ("containers", "container"),
    ] {
        for c in objects(&spec, &[kind]) {
            let c = Value::Object(c.clone());
            for e in objects(&c, &["env"]) {
                let Some(r) = e.get("valueFrom").and_then(|v| v.get("secretKeyRef")) else {
                    continue;
                };
                let secret = str_at(r, &["name"]);
                if !mountable.iter().any(|m| m == secret) {
                    return Err(format!(
                        "{label} {} with envVar {} referencing secret.secretName=\"{secret}\" is not allowed because service account {sa} does not reference that secret",
                        str_at(&c, &["name"]),
                        e.get("name").and_then(Value::as_str).unwrap_or("")
                    ));
                }
            }
        }
    }
    let pull = names("imagePullSecrets");
    for (i, r) in objects(&spec, &["imagePullSecrets"]).iter().enumerate() {
        let name = r.get("name").and_then(Value::as_str).unwrap_or("");
        if !pull.iter().any(|p| p == name) {
            return Err(format!(
                "imagePullSecrets[{i}].name=\"{name}\" is not allowed because service account {sa} does not reference that imagePullSecret"
            ));
        }
    }
    Ok(())
}
