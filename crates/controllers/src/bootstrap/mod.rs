//! What a cluster has from its first second, as kube-apiserver's
//! post-start hooks make it:
//!
//! - [`BootstrapController`]: kube's bootstrap ClusterRoles and
//!   ClusterRoleBindings (`keelson_auth::bootstrap`), reconciled on start:
//!   missing ones are created; ones annotated
//!   `rbac.authorization.kubernetes.io/autoupdate: "true"` get back the
//!   rules, subjects, labels and annotations the policy gives them;
//! - [`apiserver_objects`]: the `kubernetes` Service, Endpoints and
//!   EndpointSlice in `default` pointing at the API server's address, the
//!   IPAddress of the Service's `10.96.0.1`, the default ServiceCIDR
//!   `kubernetes`, `kube-system/extension-apiserver-authentication`
//!   with the client CA, and the PriorityClasses `system-node-critical`
//!   and `system-cluster-critical`.
//! - [`flowcontrol`]: kube's API Priority and Fairness bootstrap
//!   FlowSchemas and PriorityLevelConfigurations, and the FlowSchemas'
//!   `Dangling` conditions.

pub mod flowcontrol;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use keelson_api::{ApiResult, CreateOptions, GroupResource, ObjectKey, StoreApi, UpdateOptions};
use keelson_apimachinery::meta::meta_str;
use keelson_auth::bootstrap::{cluster_role_bindings, cluster_roles, AUTOUPDATE};
use serde_json::{json, Value};

/// The ConfigMap in `kube-system` where the API server publishes its
/// client CA (`client-ca-file`).
pub const AUTHENTICATION_CONFIGMAP: &str = "extension-apiserver-authentication";

/// How often the API server's own objects are checked again.
pub const APISERVER_OBJECTS_INTERVAL: Duration = Duration::from_secs(10);

/// Reconciles kube's bootstrap RBAC policy once per start.
pub struct BootstrapController {
    store: Arc<dyn StoreApi>,
}

impl BootstrapController {
    /// A controller over `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        BootstrapController { store }
    }

    /// Reconcile the policy (retrying until it succeeds or `shutdown`).
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            match reconcile_policy(self.store.as_ref()).await {
                Ok(changed) => {
                    tracing::info!(changed, "bootstrap RBAC policy reconciled");
                    return;
                }
                Err(e) => tracing::warn!(error = %e.message, "bootstrap RBAC policy: retrying"),
            }
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(crate::namespace::RETRY_AFTER) => {}
            }
        }
    }
}

fn rbac(resource: &str) -> GroupResource {
    GroupResource::new(keelson_auth::rbac::GROUP, resource)
}

/// Merge `want`'s labels and annotations into `have`'s metadata; true if
/// anything changed.
fn merge_meta(have: &mut Value, want: &Value) -> bool {
    let mut changed = false;
    for field in ["labels", "annotations"] {
        let Some(w) = want
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let Some(meta) = have.get_mut("metadata").and_then(Value::as_object_mut) else {
            continue;
        };
        let entry = meta.entry(field).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        if let Some(m) = entry.as_object_mut() {
            for (k, v) in w {
                if m.get(k) != Some(v) {
                    m.insert(k.clone(), v.clone());
                    changed = true;
                }
            }
        }
    }
    changed
}

/// Add the items of `want[field]` missing from `have[field]`.
fn union_list(have: &mut Value, want: &Value, field: &str) -> bool {
    let Some(w) = want.get(field).and_then(Value::as_array) else {
        return false;
    };
    let list = have
        .as_object_mut()
        .map(|m| m.entry(field).or_insert_with(|| json!([])));
    let Some(list) = list else {
        return false;
    };
    if !list.is_array() {
        *list = json!([]);
    }
    let mut changed = false;
    if let Some(items) = list.as_array_mut() {
        for x in w {
            if !items.contains(x) {
                items.push(x.clone());
                changed = true;
            }
        }
    }
    changed
}

/// Create or bring up to date every bootstrap ClusterRole and binding;
/// returns how many objects were written.
pub async fn reconcile_policy(store: &dyn StoreApi) -> ApiResult<usize> {
    let mut written = 0;
    for (resource, objects) in [
        ("clusterroles", cluster_roles()),
        ("clusterrolebindings", cluster_role_bindings()),
    ] {
        for want in objects {
            let key = ObjectKey::new(rbac(resource), "", meta_str(&want, "name"));
            let mut have = match store.get(&key).await {
                Ok(h) => h,
                Err(e) if e.is_not_found() => {
                    match store.create(&key, want, CreateOptions::default()).await {
                        Ok(_) => written += 1,
                        Err(e) if e.is_already_exists() => {}
                        Err(e) => return Err(e),
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            let autoupdate = have
                .pointer(&format!(
                    "/metadata/annotations/{}",
                    AUTOUPDATE.replace('/', "~1")
                ))
                .and_then(Value::as_str)
                != Some("false");
            if !autoupdate {
                continue;
            }
            let mut changed = merge_meta(&mut have, &want);
            if resource == "clusterroles" {
                if want.get("aggregationRule").is_some() {
                    if have.get("aggregationRule").is_none_or(Value::is_null) {
                        have["aggregationRule"] = want["aggregationRule"].clone();
                        changed = true;
                    }
                } else {
                    changed |= union_list(&mut have, &want, "rules");
                }
            } else {
                changed |= union_list(&mut have, &want, "subjects");
            }
            if changed {
                store.update(&key, have, UpdateOptions::default()).await?;
                written += 1;
            }
        }
    }
    Ok(written)
}

/// The address the `kubernetes` Endpoints advertise: the bound one, or
/// loopback for an unspecified bind.
fn advertised(addr: SocketAddr) -> (String, &'static str) {
    let ip = addr.ip();
    match ip {
        std::net::IpAddr::V4(v4) if v4.is_unspecified() => ("127.0.0.1".into(), "IPv4"),
        std::net::IpAddr::V6(v6) if v6.is_unspecified() => ("::1".into(), "IPv6"),
        std::net::IpAddr::V4(_) => (ip.to_string(), "IPv4"),
        std::net::IpAddr::V6(_) => (ip.to_string(), "IPv6"),
    }
}

/// Create `want` at `key`, or replace the fields in `owned` when they
/// differ; true if something was written.
async fn upsert(
    store: &dyn StoreApi,
    key: &ObjectKey,
    want: Value,
    owned: &[&str],
) -> ApiResult<bool> {
    match store.get(key).await {
        Ok(mut have) => {
            let mut changed = merge_meta(&mut have, &want);
            for f in owned {
                if have.get(*f) != want.get(*f) {
                    have[*f] = want[*f].clone();
                    changed = true;
                }
            }
            if changed {
                store.update(key, have, UpdateOptions::default()).await?;
            }
            Ok(changed)
        }
        Err(e) if e.is_not_found() => match store.create(key, want, CreateOptions::default()).await
        {
            Ok(_) => Ok(true),
            Err(e) if e.is_already_exists() => Ok(false),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// The API server's own objects: the `kubernetes` Service, Endpoints and
/// EndpointSlice in `default` for `addr`, the IPAddress of its cluster IP,
/// the default ServiceCIDR `kubernetes`, the published client CA, and
/// kube's system PriorityClasses (created when missing).
pub async fn reconcile_apiserver_objects(
    store: &dyn StoreApi,
    addr: SocketAddr,
    ca_pem: &str,
) -> ApiResult<()> {
    let (ip, family) = advertised(addr);
    let port = addr.port();
    let labels = json!({"component": "apiserver", "provider": "kubernetes"});
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": labels},
        "spec": {
            "clusterIP": "10.96.0.1",
            "clusterIPs": ["10.96.0.1"],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
        "status": {"loadBalancer": {}},
    });
    let endpoints = json!({
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{
            "addresses": [{"ip": ip}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        }],
    });
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "kubernetes", "namespace": "default",
            "labels": {"kubernetes.io/service-name": "kubernetes"}},
        "addressType": family,
        "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    });
    let auth = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": AUTHENTICATION_CONFIGMAP, "namespace": "kube-system"},
        "data": {"client-ca-file": ca_pem},
    });
    let core = |r: &str, ns: &str, n: &str| ObjectKey::new(GroupResource::new("", r), ns, n);
    upsert(
        store,
        &core("services", "default", "kubernetes"),
        service,
        &[],
    )
    .await?;
    // Its cluster IP is recorded like any allocated one, in the range the
    // default ServiceCIDR declares (kube's ipallocator and
    // kubernetes-service-cidr-controller).
    let networking =
        |r: &str, n: &str| ObjectKey::new(GroupResource::new("networking.k8s.io", r), "", n);
    upsert(
        store,
        &networking("ipaddresses", "10.96.0.1"),
        crate::service_alloc::ipaddress_object(
            std::net::Ipv4Addr::new(10, 96, 0, 1),
            "default",
            "kubernetes",
        ),
        &["spec"],
    )
    .await?;
    upsert(
        store,
        &networking("servicecidrs", crate::service_alloc::SERVICE_CIDR_NAME),
        crate::service_alloc::default_service_cidr(
            &chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
        &[],
    )
    .await?;
    upsert(
        store,
        &core("endpoints", "default", "kubernetes"),
        endpoints,
        &["subsets"],
    )
    .await?;
    upsert(
        store,
        &ObjectKey::new(
            GroupResource::new("discovery.k8s.io", "endpointslices"),
            "default",
            "kubernetes",
        ),
        slice,
        &["addressType", "endpoints", "ports"],
    )
    .await?;
    upsert(
        store,
        &core("configmaps", "kube-system", AUTHENTICATION_CONFIGMAP),
        auth,
        &["data"],
    )
    .await?;
    // kube's `scheduling/bootstrap-system-priority-classes` hook: created
    // when missing, left alone otherwise.
    for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
        let pc = json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
            "preemptionPolicy": "PreemptLowerPriority",
        });
        let key = ObjectKey::new(
            GroupResource::new("scheduling.k8s.io", "priorityclasses"),
            "",
            name,
        );
        upsert(store, &key, pc, &[]).await?;
    }
    Ok(())
}

/// kube's `SystemPriorityClasses`: name, value, description.
const SYSTEM_PRIORITY_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// Keep the API server's own objects ([`reconcile_apiserver_objects`]) in
/// place, every [`APISERVER_OBJECTS_INTERVAL`] (a failure is retried a
/// second later), until `shutdown`.
pub async fn apiserver_objects(
    store: Arc<dyn StoreApi>,
    addr: SocketAddr,
    ca_pem: String,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        let wait = match reconcile_apiserver_objects(store.as_ref(), addr, &ca_pem).await {
            Ok(()) => APISERVER_OBJECTS_INTERVAL,
            Err(e) => {
                tracing::warn!(error = %e.message, "the kubernetes service: retrying");
                crate::namespace::RETRY_AFTER
            }
        };
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}
