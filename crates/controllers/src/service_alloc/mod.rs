//! Service ClusterIP and NodePort allocation, as kube-apiserver's Service
//! REST storage does it (`pkg/registry/core/service/storage`:
//! `beginCreate`/`beginUpdate`, `initIPFamilyFields`, `allocClusterIPs`,
//! `initNodePorts`, `patchAllocatedValues`, `normalizeClusterIPs`).
//!
//! The cluster is single-stack IPv4: the service range is
//! [`SERVICE_CIDR`] and node ports come from [`NODE_PORTS`].
//!
//! - ClusterIPs use kube's IPAddress-based allocator (the 1.33+ default):
//!   each allocated IP is a `networking.k8s.io/v1` `IPAddress` object named
//!   by the IP and pointing at its Service. Creating that object through
//!   the store is the allocation, so a taken IP fails with `AlreadyExists`
//!   in embedded and distributed mode alike.
//! - Node ports live in one bitmap object, kube's `RangeAllocation` at
//!   `ranges/servicenodeports`, rewritten with compare-and-swap on its
//!   `resourceVersion` (see [`ports`]).
//!
//! Callers (the gateway's write and delete paths, the namespace and
//! garbage collectors) allocate with [`Allocator::allocate_create`] /
//! [`Allocator::allocate_update`] after the field manager has run and
//! before the store write, release what a failed write allocated with
//! [`Allocator::release`], and release a deleted Service's values with
//! [`Allocator::release_service`].

pub mod ports;
mod range;

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use keelson_api::{CreateOptions, DeleteOptions, DeleteOutcome, StoreApi};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource, ObjectKey};
use serde_json::{json, Map, Value};

pub use range::{AllocError, Ipv4Range, PortRange};

/// The service IP range (`--service-cluster-ip-range`).
pub const SERVICE_CIDR: &str = "10.96.0.0/12";
/// The node-port range (`--service-node-port-range`).
pub const NODE_PORTS: PortRange = PortRange {
    base: 30000,
    last: 32767,
};
/// The default ServiceCIDR's name.
pub const SERVICE_CIDR_NAME: &str = "kubernetes";
/// The `managed-by` label value of the IPAddresses the allocator creates.
pub const IP_ALLOCATOR: &str = "ipallocator.k8s.io";
const LABEL_FAMILY: &str = "ipaddress.kubernetes.io/ip-family";
const LABEL_MANAGED_BY: &str = "ipaddress.kubernetes.io/managed-by";

const EXTERNAL_NAME: &str = "ExternalName";
const NONE: &str = "None";

/// `networking.k8s.io/ipaddresses`.
pub fn ipaddresses() -> GroupResource {
    GroupResource::new("networking.k8s.io", "ipaddresses")
}

/// Whether `gr` is the core `services` resource.
pub fn is_services(gr: &GroupResource) -> bool {
    gr.group.is_empty() && gr.resource == "services"
}

/// After a store delete of an object of `gr`: when it was a Service that
/// is now gone, release what it held. For the controllers that delete
/// through the store (namespace deletion, garbage collection).
pub async fn release_deleted(store: &dyn StoreApi, gr: &GroupResource, outcome: &DeleteOutcome) {
    if let (true, DeleteOutcome::Deleted(obj)) = (is_services(gr), outcome) {
        Allocator::new(store).release_service(obj).await;
    }
}

/// What one write allocated (to release if the write fails), or what it
/// leaves behind (to release once it succeeds).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub ips: Vec<Ipv4Addr>,
    pub ports: Vec<u16>,
}

impl Allocation {
    pub fn is_empty(&self) -> bool {
        self.ips.is_empty() && self.ports.is_empty()
    }
}

/// The outcome of [`Allocator::allocate_update`].
#[derive(Debug, Default)]
pub struct UpdatePlan {
    /// Newly allocated: release if the update fails.
    pub allocated: Allocation,
    /// No longer used: release once the update succeeded.
    pub released: Allocation,
}

/// Allocates Service IPs and node ports through a store.
pub struct Allocator<'a> {
    store: &'a dyn StoreApi,
    range: Ipv4Range,
}

impl<'a> Allocator<'a> {
    pub fn new(store: &'a dyn StoreApi) -> Self {
        Allocator {
            store,
            range: SERVICE_RANGE,
        }
    }

    /// kube's `beginCreate`: normalize the cluster IP fields, default the
    /// IP family fields, allocate cluster IPs and node ports. With `dry`
    /// nothing is stored (a dynamic IP shows as the range's network
    /// address, as kube's dry-run allocator answers).
    pub async fn allocate_create(&self, svc: &mut Value, dry: bool) -> ApiResult<Allocation> {
        generate_name(svc);
        normalize_create(svc);
        init_ip_families(svc, None)?;
        let mut done = Allocation::default();
        if let Some(ip) = self.alloc_cluster_ip(svc, dry).await? {
            done.ips.push(ip);
        }
        if needs_node_port(svc) {
            match ports::allocate(self.store, svc, None, dry).await {
                Ok(p) => done.ports = p,
                Err(e) => {
                    if !dry {
                        self.release(&done).await;
                    }
                    return Err(e);
                }
            }
        }
        Ok(done)
    }

    /// kube's `beginUpdate`: keep the allocated values the update omits,
    /// refuse a changed cluster IP, allocate for a type that now needs
    /// values and plan the release of what is no longer used.
    pub async fn allocate_update(
        &self,
        new: &mut Value,
        old: &Value,
        dry: bool,
    ) -> ApiResult<UpdatePlan> {
        patch_allocated_values(new, old);
        normalize_update(new, old);
        init_ip_families(new, Some(old))?;
        check_cluster_ips_unchanged(new, old)?;
        let mut plan = UpdatePlan::default();
        let (old_ext, new_ext) = (is_external_name(old), is_external_name(new));
        if !new_ext && (old_ext || (cluster_ips(old).is_empty() && !is_headless(old))) {
            // From ExternalName (or a Service stored without an IP): allocate.
            if let Some(ip) = self.alloc_cluster_ip(new, dry).await? {
                plan.allocated.ips.push(ip);
            }
        } else if !old_ext && new_ext && !is_headless(old) {
            plan.released.ips = allocated_ips(old);
        }
        drop_type_dependent_ports(new, old);
        if needs_node_port(new) {
            match ports::allocate(self.store, new, Some(old), dry).await {
                Ok(p) => plan.allocated.ports = p,
                Err(e) => {
                    if !dry {
                        self.release(&plan.allocated).await;
                    }
                    return Err(e);
                }
            }
        }
        let kept: BTreeSet<u16> = held_ports(new).into_iter().collect();
        plan.released.ports = held_ports(old)
            .into_iter()
            .filter(|p| !kept.contains(p))
            .collect();
        Ok(plan)
    }

    /// Release values (best effort: failures are logged, kube's repair
    /// loops would reclaim them).
    pub async fn release(&self, a: &Allocation) {
        for ip in &a.ips {
            if let Err(e) = self.release_ip(*ip, None).await {
                tracing::warn!(ip = %ip, error = %e.message, "couldn't release a service IP");
            }
        }
        if !a.ports.is_empty() {
            if let Err(e) = ports::release(self.store, &a.ports).await {
                tracing::warn!(ports = ?a.ports, error = %e.message, "couldn't release node ports");
            }
        }
    }

    /// Release the cluster IPs and node ports of a deleted Service. An
    /// IPAddress is only removed while it still points at this Service.
    pub async fn release_service(&self, svc: &Value) {
        for ip in allocated_ips(svc) {
            if let Err(e) = self.release_ip(ip, Some(svc)).await {
                tracing::warn!(ip = %ip, error = %e.message, "couldn't release a service IP");
            }
        }
        let p = held_ports(svc);
        if !p.is_empty() {
            if let Err(e) = ports::release(self.store, &p).await {
                tracing::warn!(ports = ?p, error = %e.message, "couldn't release node ports");
            }
        }
    }

    async fn release_ip(&self, ip: Ipv4Addr, owner: Option<&Value>) -> ApiResult<()> {
        let key = ObjectKey::new(ipaddresses(), "", &ip.to_string());
        let current = match self.store.get(&key).await {
            Ok(o) => o,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e),
        };
        if let Some(svc) = owner {
            let r = current
                .pointer("/spec/parentRef")
                .cloned()
                .unwrap_or(Value::Null);
            let field = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("").to_string();
            if field("resource") != "services"
                || field("namespace") != meta_str(svc, "namespace")
                || field("name") != meta_str(svc, "name")
            {
                return Ok(());
            }
        }
        let opts = DeleteOptions {
            precondition_uid: Some(meta_str(&current, "uid").to_string()).filter(|u| !u.is_empty()),
            ..DeleteOptions::default()
        };
        match self.store.delete(&key, opts).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() || e.is_conflict() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// kube's `allocClusterIPs` for a single-stack IPv4 cluster: the
    /// requested `clusterIPs[0]` or a free one; `None` when the Service gets
    /// no IP (ExternalName, headless) or when `dry`.
    async fn alloc_cluster_ip(&self, svc: &mut Value, dry: bool) -> ApiResult<Option<Ipv4Addr>> {
        if is_external_name(svc) || is_headless(svc) {
            return Ok(None);
        }
        let requested = cluster_ips(svc).first().cloned().unwrap_or_default();
        let ip = if requested.is_empty() {
            if dry {
                self.range.network()
            } else {
                self.allocate_next(svc).await?
            }
        } else {
            let ip = requested.parse::<Ipv4Addr>().map_err(|_| {
                // Validated by init_ip_families; a v6 address lands here.
                alloc_invalid(
                    svc,
                    &requested,
                    &AllocError::IpNotInRange(self.range.to_string()),
                )
            })?;
            if !self.range.contains(ip) {
                return Err(alloc_invalid(
                    svc,
                    &requested,
                    &AllocError::IpNotInRange(self.range.to_string()),
                ));
            }
            if !dry {
                match self.create_ipaddress(ip, svc).await {
                    Ok(()) => {}
                    Err(e) if e.is_already_exists() => {
                        return Err(alloc_invalid(svc, &requested, &AllocError::IpAllocated))
                    }
                    Err(e) => return Err(e),
                }
            }
            ip
        };
        let spec = spec_mut(svc);
        spec.insert("clusterIP".into(), json!(ip.to_string()));
        spec.insert("clusterIPs".into(), json!([ip.to_string()]));
        Ok((!dry).then_some(ip))
    }

    /// A free IP of the range, recorded as an IPAddress: kube's
    /// `allocateNextService` (upper band first, random starts; a lost race
    /// for one address moves on to the next).
    async fn allocate_next(&self, svc: &Value) -> ApiResult<Ipv4Addr> {
        let taken: BTreeSet<String> = self
            .store
            .list(&ipaddresses(), None)
            .await?
            .items
            .iter()
            .map(|o| meta_str(o, "name").to_string())
            .collect();
        for ip in self.range.candidates() {
            if taken.contains(&ip.to_string()) {
                continue;
            }
            match self.create_ipaddress(ip, svc).await {
                Ok(()) => return Ok(ip),
                Err(e) if e.is_already_exists() => continue,
                Err(e) => return Err(e),
            }
        }
        Err(ApiError::internal(format!(
            "failed to allocate a serviceIP: {}",
            AllocError::Full
        )))
    }

    async fn create_ipaddress(&self, ip: Ipv4Addr, svc: &Value) -> ApiResult<()> {
        let obj = ipaddress_object(ip, meta_str(svc, "namespace"), meta_str(svc, "name"));
        let key = ObjectKey::new(ipaddresses(), "", &ip.to_string());
        self.store
            .create(&key, obj, CreateOptions::default())
            .await
            .map(|_| ())
    }
}

/// [`SERVICE_CIDR`], parsed.
const SERVICE_RANGE: Ipv4Range = Ipv4Range::from_parts(u32::from_be_bytes([10, 96, 0, 0]), 12);

/// The IPAddress object recording `ip` for Service `namespace/name`.
pub fn ipaddress_object(ip: Ipv4Addr, namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {
            "name": ip.to_string(),
            "labels": {LABEL_FAMILY: "IPv4", LABEL_MANAGED_BY: IP_ALLOCATOR},
        },
        "spec": {"parentRef": {"resource": "services", "namespace": namespace, "name": name}},
    })
}

/// The default ServiceCIDR as kube's `kubernetes-service-cidr-controller`
/// leaves it: the range, and a `Ready` condition (applied without a
/// reason).
pub fn default_service_cidr(now: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": SERVICE_CIDR_NAME},
        "spec": {"cidrs": [SERVICE_CIDR]},
        "status": {"conditions": [{
            "type": "Ready",
            "status": "True",
            "lastTransitionTime": now,
            "reason": "",
            "message": "Kubernetes default Service CIDR is ready",
        }]},
    })
}

// ---- the Service's fields ----

fn spec(svc: &Value) -> Option<&Map<String, Value>> {
    svc.get("spec").and_then(Value::as_object)
}

fn spec_mut(svc: &mut Value) -> &mut Map<String, Value> {
    if !svc.get("spec").is_some_and(Value::is_object) {
        svc["spec"] = json!({});
    }
    match svc.get_mut("spec").and_then(Value::as_object_mut) {
        Some(m) => m,
        None => unreachable!("spec was just made an object"),
    }
}

fn spec_str<'v>(svc: &'v Value, field: &str) -> &'v str {
    spec(svc)
        .and_then(|s| s.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn svc_type(svc: &Value) -> &str {
    match spec_str(svc, "type") {
        "" => "ClusterIP",
        t => t,
    }
}

fn is_external_name(svc: &Value) -> bool {
    svc_type(svc) == EXTERNAL_NAME
}

/// kube's `needsNodePort`.
fn needs_node_port(svc: &Value) -> bool {
    matches!(svc_type(svc), "NodePort" | "LoadBalancer")
}

/// kube's `needsHCNodePort`: a LoadBalancer with `externalTrafficPolicy:
/// Local`.
fn needs_hc_node_port(svc: &Value) -> bool {
    svc_type(svc) == "LoadBalancer" && spec_str(svc, "externalTrafficPolicy") == "Local"
}

/// A non-zero `spec.healthCheckNodePort`.
fn hc_port(svc: &Value) -> Option<u16> {
    spec(svc)
        .and_then(|s| s.get("healthCheckNodePort"))
        .and_then(Value::as_u64)
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| *n != 0)
}

/// The node ports a Service holds: its ports' while its type allocates
/// them, and its health-check node port while it needs one.
fn held_ports(svc: &Value) -> Vec<u16> {
    let mut held = if needs_node_port(svc) {
        node_ports(svc)
    } else {
        Vec::new()
    };
    if needs_hc_node_port(svc) {
        held.extend(hc_port(svc));
    }
    held
}

/// Part of kube's `dropTypeDependentFields`: a Service that no longer
/// needs node ports (or a health-check node port) drops the ones it had.
fn drop_type_dependent_ports(new: &mut Value, old: &Value) {
    if needs_node_port(old) && !needs_node_port(new) {
        let had: BTreeSet<u16> = node_ports(old).into_iter().collect();
        if let Some(ps) = spec_mut(new).get_mut("ports").and_then(Value::as_array_mut) {
            for p in ps.iter_mut() {
                let np = p.get("nodePort").and_then(Value::as_u64).unwrap_or(0);
                if u16::try_from(np).is_ok_and(|n| had.contains(&n)) {
                    if let Some(m) = p.as_object_mut() {
                        m.remove("nodePort");
                    }
                }
            }
        }
    }
    if needs_hc_node_port(old) && !needs_hc_node_port(new) && hc_port(new) == hc_port(old) {
        spec_mut(new).remove("healthCheckNodePort");
    }
}

fn string_list(svc: &Value, field: &str) -> Vec<String> {
    spec(svc)
        .and_then(|s| s.get(field))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn cluster_ips(svc: &Value) -> Vec<String> {
    string_list(svc, "clusterIPs")
}

fn is_headless(svc: &Value) -> bool {
    spec_str(svc, "clusterIP") == NONE || cluster_ips(svc).first().map(String::as_str) == Some(NONE)
}

/// The IPv4 cluster IPs a Service holds (what its IPAddresses record).
fn allocated_ips(svc: &Value) -> Vec<Ipv4Addr> {
    if is_external_name(svc) {
        return Vec::new();
    }
    let mut ips = cluster_ips(svc);
    if ips.is_empty() && !spec_str(svc, "clusterIP").is_empty() {
        ips.push(spec_str(svc, "clusterIP").to_string());
    }
    ips.iter().filter_map(|ip| ip.parse().ok()).collect()
}

/// Every non-zero `spec.ports[].nodePort`.
fn node_ports(svc: &Value) -> Vec<u16> {
    spec(svc)
        .and_then(|s| s.get("ports"))
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p.get("nodePort").and_then(Value::as_u64))
                .filter_map(|n| u16::try_from(n).ok())
                .filter(|n| *n != 0)
                .collect()
        })
        .unwrap_or_default()
}

fn has_selector(svc: &Value) -> bool {
    spec(svc)
        .and_then(|s| s.get("selector"))
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
}

/// An `Invalid value` whose value is a `[]string`: JSON, as kube 1.34's
/// `field.Error` prints any non-scalar value (`["10.96.0.10"]`).
fn invalid_strings(field: &str, v: &[String], detail: &str) -> FieldError {
    FieldError::invalid(
        field,
        Value::Array(v.iter().cloned().map(Value::from).collect()),
        detail,
    )
}

fn invalid(svc: &Value, errs: &[FieldError]) -> ApiError {
    ApiError::invalid("", "Service", meta_str(svc, "name"), errs)
}

/// kube's `allocIPs` failure: `spec.clusterIPs: Invalid value:
/// ["10.96.0.10"]: failed to allocate IP 10.96.0.10: <why>`.
fn alloc_invalid(svc: &Value, ip: &str, why: &AllocError) -> ApiError {
    invalid(
        svc,
        &[invalid_strings(
            "spec.clusterIPs",
            &cluster_ips(svc),
            &format!("failed to allocate IP {ip}: {why}"),
        )],
    )
}

/// kube names the object before `BeginCreate`, so the IPAddress's
/// `parentRef` carries the generated name.
fn generate_name(svc: &mut Value) {
    if !meta_str(svc, "name").is_empty() {
        return;
    }
    let base = meta_str(svc, "generateName").to_string();
    if base.is_empty() {
        return;
    }
    let name = keelson_apimachinery::generate_name::generate_name(&base);
    if let Some(m) = svc.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("name".into(), json!(name));
    }
}

/// kube's `normalizeClusterIPs` on create: `clusterIP` alone initializes
/// `clusterIPs`.
fn normalize_create(svc: &mut Value) {
    let ip = spec_str(svc, "clusterIP").to_string();
    if !ip.is_empty() && cluster_ips(svc).is_empty() {
        spec_mut(svc).insert("clusterIPs".into(), json!([ip]));
    }
}

/// kube's `normalizeClusterIPs` on update.
fn normalize_update(new: &mut Value, old: &Value) {
    let (old_ip, new_ip) = (
        spec_str(old, "clusterIP"),
        spec_str(new, "clusterIP").to_string(),
    );
    let (old_ips, new_ips) = (cluster_ips(old), cluster_ips(new));
    if !old_ips.is_empty() && new_ips.is_empty() && old_ip == new_ip {
        spec_mut(new).insert("clusterIPs".into(), json!(old_ips));
    }
    let new_ips = cluster_ips(new);
    if old_ip != new_ip && old_ips == new_ips {
        if !old_ip.is_empty() && new_ip.is_empty() {
            spec_mut(new).remove("clusterIPs");
        } else {
            spec_mut(new).insert("clusterIPs".into(), json!([new_ip]));
        }
    }
}

/// kube's `patchAllocatedValues`: an update that omits allocated values
/// keeps them (cluster IPs while the type needs one, node ports by port
/// name while it needs them and the old value is not used by another
/// port).
fn patch_allocated_values(new: &mut Value, old: &Value) {
    if needs_hc_node_port(old) && needs_hc_node_port(new) && hc_port(new).is_none() {
        if let Some(hc) = hc_port(old) {
            spec_mut(new).insert("healthCheckNodePort".into(), json!(hc));
        }
    }
    if !is_external_name(old) && !is_external_name(new) {
        if spec_str(new, "clusterIP").is_empty() && !spec_str(old, "clusterIP").is_empty() {
            let ip = spec_str(old, "clusterIP").to_string();
            spec_mut(new).insert("clusterIP".into(), json!(ip));
        }
        let old_ips = cluster_ips(old);
        if cluster_ips(new).is_empty() && !old_ips.is_empty() {
            spec_mut(new).insert("clusterIPs".into(), json!(old_ips));
        }
    }
    if needs_node_port(old) && needs_node_port(new) {
        let used: BTreeSet<u16> = node_ports(old)
            .into_iter()
            .filter(|p| node_ports(new).contains(p))
            .collect();
        let by_name: Vec<(String, u64)> = spec(old)
            .and_then(|s| s.get("ports"))
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .map(|p| {
                        (
                            p.get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            p.get("nodePort").and_then(Value::as_u64).unwrap_or(0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(ps) = spec_mut(new).get_mut("ports").and_then(Value::as_array_mut) {
            for p in ps.iter_mut() {
                if p.get("nodePort").and_then(Value::as_u64).unwrap_or(0) != 0 {
                    continue;
                }
                let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                // Go's map lookup: the last old port of that name wins.
                let old_val = by_name
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
                    .unwrap_or(0);
                let taken = u16::try_from(old_val).is_ok_and(|v| used.contains(&v));
                if old_val != 0 && !taken {
                    p["nodePort"] = json!(old_val);
                }
            }
        }
    }
}

/// kube's `initIPFamilyFields` for a single-stack IPv4 cluster.
fn init_ip_families(svc: &mut Value, old: Option<&Value>) -> ApiResult<()> {
    if is_external_name(svc) {
        return Ok(());
    }
    let headless_selectorless = spec_str(svc, "clusterIP") == NONE && !has_selector(svc);
    if spec_str(svc, "ipFamilyPolicy").is_empty() {
        let old_policy = old.map(|o| spec_str(o, "ipFamilyPolicy")).unwrap_or("");
        let policy = if !old_policy.is_empty() {
            old_policy.to_string()
        } else if headless_selectorless {
            "RequireDualStack".to_string()
        } else {
            "SingleStack".to_string()
        };
        spec_mut(svc).insert("ipFamilyPolicy".into(), json!(policy));
    }
    let policy = spec_str(svc, "ipFamilyPolicy").to_string();
    let ips = cluster_ips(svc);
    let mut families = string_list(svc, "ipFamilies");
    // Loose pre-validation (kube's ValidateServiceClusterIPsRelatedFields).
    let errs = keelson_admission::service_cluster_ips_pre_validation(svc, old);
    if !errs.is_empty() {
        return Err(invalid(svc, &errs));
    }
    let mut errs = Vec::new();
    if policy == "SingleStack" {
        if ips.len() == 2 {
            errs.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                policy.as_str(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if families.len() == 2 {
            errs.push(FieldError::invalid(
                "spec.ipFamilyPolicy",
                policy.as_str(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    for (i, ip) in ips.iter().enumerate() {
        if ip == NONE {
            break;
        }
        let fam = match ip.parse::<IpAddr>() {
            Ok(IpAddr::V6(_)) => "IPv6",
            _ => "IPv4",
        };
        if i >= families.len() {
            if fam == "IPv6" {
                errs.push(invalid_strings(
                    &format!("spec.clusterIPs[{i}]"),
                    &ips,
                    "IPv6 is not configured on this cluster",
                ));
            } else {
                families.push(fam.to_string());
            }
        }
    }
    if !errs.is_empty() {
        return Err(invalid(svc, &errs));
    }
    if headless_selectorless {
        if families.is_empty() {
            families.push("IPv4".into());
        }
        if families.len() < 2 && policy != "SingleStack" {
            let alt = if families[0] == "IPv4" {
                "IPv6"
            } else {
                "IPv4"
            };
            families.push(alt.into());
        }
        spec_mut(svc).insert("ipFamilies".into(), json!(families));
        return Ok(());
    }
    if policy == "RequireDualStack" {
        errs.push(FieldError::invalid(
            "spec.ipFamilyPolicy",
            policy.as_str(),
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, f) in families.iter().enumerate() {
        if f != "IPv4" {
            errs.push(FieldError::invalid(
                &format!("spec.ipFamilies[{i}]"),
                f.as_str(),
                "not configured on this cluster",
            ));
        }
    }
    if !errs.is_empty() {
        return Err(invalid(svc, &errs));
    }
    if families.is_empty() {
        families.push("IPv4".into());
    }
    spec_mut(svc).insert("ipFamilies".into(), json!(families));
    Ok(())
}

/// kube's `validateUpgradeDowngradeClusterIPs` for a single-stack cluster:
/// the primary cluster IP never changes (except to or from ExternalName).
fn check_cluster_ips_unchanged(new: &Value, old: &Value) -> ApiResult<()> {
    if is_external_name(new) || is_external_name(old) {
        return Ok(());
    }
    let (old_ips, new_ips) = (cluster_ips(old), cluster_ips(new));
    let headless = |ips: &[String]| ips.len() == 1 && ips[0] == NONE;
    if headless(&old_ips) && headless(&new_ips) {
        return Ok(());
    }
    let mut errs = Vec::new();
    if old_ips.len() == new_ips.len() {
        for (i, ip) in old_ips.iter().enumerate() {
            if *ip != new_ips[i] {
                errs.push(invalid_strings(
                    &format!("spec.clusterIPs[{i}]"),
                    &new_ips,
                    "may not change once set",
                ));
            }
        }
    } else if old_ips.len() > new_ips.len() {
        if new_ips.is_empty() {
            errs.push(invalid_strings(
                "spec.clusterIPs[0]",
                &new_ips,
                "primary clusterIP can not be unset",
            ));
        } else if new_ips[0] != old_ips[0] {
            errs.push(invalid_strings(
                "spec.clusterIPs[0]",
                &new_ips,
                "may not change once set",
            ));
        }
    } else if !old_ips.is_empty() && new_ips[0] != old_ips[0] {
        errs.push(invalid_strings(
            "spec.clusterIPs[0]",
            &new_ips,
            "may not change once set",
        ));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(invalid(new, &errs))
    }
}

#[cfg(test)]
mod tests;
