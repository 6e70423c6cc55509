//! Node ports: kube's `portallocator` over one bitmap object, the
//! `RangeAllocation` kube keeps at `/registry/ranges/servicenodeports`
//! (resource `ranges`, name `servicenodeports`; not served by the API).
//!
//! Every change reads the object, edits the bitmap and writes it back with
//! the `resourceVersion` it read; a concurrent writer makes the store answer
//! `409 Conflict` and the whole step is retried. The bitmap is kube's
//! encoding: bit `i` stands for port `base + i`, as the big-endian bytes of
//! a big integer, base64 in `data`.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use keelson_api::{CreateOptions, StoreApi, UpdateOptions};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource, ObjectKey};
use serde_json::{json, Value};

use super::{hc_port, needs_hc_node_port, node_ports, svc_type, AllocError, NODE_PORTS};

/// How often a lost compare-and-swap is retried before giving up.
const ATTEMPTS: usize = 32;
const NAME: &str = "servicenodeports";

fn key() -> ObjectKey {
    ObjectKey::new(GroupResource::new("", "ranges"), "", NAME)
}

/// Decode a bitmap into the set of used ports.
pub fn decode(data: &str) -> BTreeSet<u16> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap_or_default();
    let mut used = BTreeSet::new();
    let n = bytes.len();
    for (i, b) in bytes.iter().enumerate() {
        for bit in 0..8 {
            if b & (1 << bit) != 0 {
                let offset = (n - 1 - i) * 8 + bit;
                if let Ok(off) = u16::try_from(offset) {
                    if let Some(p) = NODE_PORTS.base.checked_add(off) {
                        if p <= NODE_PORTS.last {
                            used.insert(p);
                        }
                    }
                }
            }
        }
    }
    used
}

/// Encode the set of used ports as a bitmap.
pub fn encode(used: &BTreeSet<u16>) -> String {
    let Some(max) = used.iter().map(|p| usize::from(p - NODE_PORTS.base)).max() else {
        return String::new();
    };
    let n = max / 8 + 1;
    let mut bytes = vec![0u8; n];
    for p in used {
        let off = usize::from(p - NODE_PORTS.base);
        bytes[n - 1 - off / 8] |= 1 << (off % 8);
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The stored bitmap object, if any, and the ports it marks used.
async fn load(store: &dyn StoreApi) -> ApiResult<(Option<Value>, BTreeSet<u16>)> {
    match store.get(&key()).await {
        Ok(obj) => {
            let used = decode(obj.get("data").and_then(Value::as_str).unwrap_or(""));
            Ok((Some(obj), used))
        }
        Err(e) if e.is_not_found() => Ok((None, BTreeSet::new())),
        Err(e) => Err(e),
    }
}

/// Write the bitmap back: `Ok(false)` when another writer got there first.
async fn save(store: &dyn StoreApi, read: Option<Value>, used: &BTreeSet<u16>) -> ApiResult<bool> {
    let result = match read {
        None => {
            let obj = json!({
                "apiVersion": "v1",
                "kind": "RangeAllocation",
                "metadata": {"name": NAME},
                "range": NODE_PORTS.to_string(),
                "data": encode(used),
            });
            store.create(&key(), obj, CreateOptions::default()).await
        }
        Some(mut obj) => {
            obj["data"] = json!(encode(used));
            obj["range"] = json!(NODE_PORTS.to_string());
            store.update(&key(), obj, UpdateOptions::default()).await
        }
    };
    match result {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || e.is_already_exists() || e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Wait before retry `attempt` (none before the first): a lost race means
/// another writer's revision may not be readable yet.
async fn backoff(attempt: usize) {
    if attempt > 0 {
        let ms = rand::Rng::gen_range(&mut rand::thread_rng(), 1..=5 * attempt.min(20) as u64);
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// kube's `shouldAllocateNodePorts`.
fn should_allocate(svc: &Value) -> bool {
    if svc_type(svc) == "LoadBalancer" {
        if let Some(b) = svc
            .pointer("/spec/allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
        {
            return b;
        }
    }
    true
}

fn port_invalid(svc: &Value, i: usize, port: i64, why: &AllocError) -> ApiError {
    ApiError::invalid(
        "",
        "Service",
        meta_str(svc, "name"),
        &[FieldError::invalid(
            &format!("spec.ports[{i}].nodePort"),
            port,
            &why.to_string(),
        )],
    )
}

fn full() -> ApiError {
    ApiError::internal(format!(
        "failed to allocate a nodePort: {}",
        AllocError::Full
    ))
}

/// Reserve `port` in `used` (kube's `Allocate`).
fn take(used: &mut BTreeSet<u16>, port: i64) -> Result<u16, AllocError> {
    if !NODE_PORTS.contains(port) {
        return Err(AllocError::PortNotInRange(NODE_PORTS.to_string()));
    }
    let p = u16::try_from(port).map_err(|_| AllocError::PortNotInRange(NODE_PORTS.to_string()))?;
    if !used.insert(p) {
        return Err(AllocError::PortAllocated);
    }
    Ok(p)
}

fn take_next(used: &mut BTreeSet<u16>) -> Result<u16, AllocError> {
    let p = NODE_PORTS.pick(&|p| used.contains(&p))?;
    used.insert(p);
    Ok(p)
}

/// What [`assign`] decided.
#[derive(Debug)]
struct Assigned {
    /// The new `spec.ports`.
    ports: Vec<Value>,
    /// A health-check node port to set.
    hc: Option<u16>,
    /// The ports newly reserved.
    newly: Vec<u16>,
}

/// kube's `allocHealthCheckNodePort` for a Service that needs one and did
/// not before (or whose old one it does not keep).
fn assign_hc(
    svc: &Value,
    old: Option<&Value>,
    used: &mut BTreeSet<u16>,
    newly: &mut Vec<u16>,
) -> ApiResult<Option<u16>> {
    if !needs_hc_node_port(svc) {
        return Ok(None);
    }
    let requested = svc
        .pointer("/spec/healthCheckNodePort")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let old_hc = old.filter(|o| needs_hc_node_port(o)).and_then(hc_port);
    if requested != 0 && old_hc.is_some_and(|o| i64::from(o) == requested) {
        return Ok(None);
    }
    let got = if requested != 0 {
        take(used, requested).map_err(|e| {
            ApiError::internal(format!(
                "failed to allocate requested HealthCheck NodePort {requested}: {e}"
            ))
        })?
    } else {
        take_next(used).map_err(|e| {
            ApiError::internal(format!("failed to allocate a HealthCheck NodePort 0: {e}"))
        })?
    };
    newly.push(got);
    Ok(Some(got))
}

/// Decide every port's node port against `used` (which gains the newly
/// reserved ones), and the health-check node port.
/// `old` is the stored Service on update (kube's `updateNodePorts`), `None`
/// on create (kube's `initNodePorts`, where ports sharing a port number
/// share a node port).
fn assign(svc: &Value, old: Option<&Value>, used: &mut BTreeSet<u16>) -> ApiResult<Assigned> {
    let mut ports: Vec<Value> = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let allocate = should_allocate(svc);
    let mut newly = Vec::new();
    let node_port = |p: &Value| p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
    let port_number = |p: &Value| p.get("port").and_then(Value::as_i64).unwrap_or(0);
    match old {
        None => {
            let mut by_port: BTreeMap<i64, i64> = BTreeMap::new();
            for i in 0..ports.len() {
                let np = node_port(&ports[i]);
                if np == 0 && !allocate {
                    continue;
                }
                let number = port_number(&ports[i]);
                match by_port.get(&number).copied() {
                    None => {
                        let requested = ports[i..]
                            .iter()
                            .find(|p| port_number(p) == number && node_port(p) != 0)
                            .map(node_port)
                            .unwrap_or(0);
                        let got = if requested != 0 {
                            take(used, requested)
                                .map_err(|e| port_invalid(svc, i, requested, &e))?
                        } else {
                            take_next(used).map_err(|_| full())?
                        };
                        newly.push(got);
                        ports[i]["nodePort"] = json!(got);
                        by_port.insert(number, i64::from(got));
                    }
                    Some(shared) if np != shared => {
                        if np == 0 {
                            ports[i]["nodePort"] = json!(shared);
                        } else {
                            let got = take(used, np).map_err(|e| port_invalid(svc, i, np, &e))?;
                            newly.push(got);
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        Some(old) => {
            let old_numbers: BTreeSet<u16> = node_ports(old).into_iter().collect();
            let mut reserved: BTreeSet<i64> = BTreeSet::new();
            for (i, port) in ports.iter_mut().enumerate() {
                let np = node_port(port);
                if np == 0 && !allocate {
                    continue;
                }
                if np != 0 {
                    let kept = u16::try_from(np).is_ok_and(|p| old_numbers.contains(&p));
                    if !kept && !reserved.contains(&np) {
                        let got = take(used, np).map_err(|e| port_invalid(svc, i, np, &e))?;
                        newly.push(got);
                        reserved.insert(np);
                    }
                } else {
                    let got = take_next(used).map_err(|_| full())?;
                    newly.push(got);
                    port["nodePort"] = json!(got);
                }
            }
        }
    }
    let hc = assign_hc(svc, old, used, &mut newly)?;
    Ok(Assigned { ports, hc, newly })
}

/// Allocate the node ports `svc` needs (see [`assign`]) and set them in
/// `spec.ports`; the newly reserved ports. With `dry` nothing is stored.
pub async fn allocate(
    store: &dyn StoreApi,
    svc: &mut Value,
    old: Option<&Value>,
    dry: bool,
) -> ApiResult<Vec<u16>> {
    for attempt in 0..ATTEMPTS {
        backoff(attempt).await;
        let (read, mut used) = load(store).await?;
        let Assigned { ports, hc, newly } = assign(svc, old, &mut used)?;
        if !newly.is_empty() && !dry && !save(store, read, &used).await? {
            continue;
        }
        if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
            if spec.contains_key("ports") {
                spec.insert("ports".into(), Value::Array(ports));
            }
            if let Some(hc) = hc {
                spec.insert("healthCheckNodePort".into(), json!(hc));
            }
        }
        return Ok(if dry { Vec::new() } else { newly });
    }
    Err(ApiError::internal(
        "failed to allocate a nodePort: too many concurrent allocations",
    ))
}

/// Return `ports` to the range.
pub async fn release(store: &dyn StoreApi, ports: &[u16]) -> ApiResult<()> {
    for attempt in 0..ATTEMPTS {
        backoff(attempt).await;
        let (read, mut used) = load(store).await?;
        if read.is_none() {
            return Ok(());
        }
        let before = used.len();
        for p in ports {
            used.remove(p);
        }
        if used.len() == before || save(store, read, &used).await? {
            return Ok(());
        }
    }
    Err(ApiError::internal(
        "failed to release node ports: too many concurrent allocations",
    ))
}

/// The stored bitmap, for the parent module's tests.
#[cfg(test)]
pub(super) async fn tests_load(store: &dyn StoreApi) -> (Option<Value>, BTreeSet<u16>) {
    load(store).await.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_round_trips_in_kubes_encoding() {
        let used: BTreeSet<u16> = [30000, 30001, 30009, 32767].into_iter().collect();
        assert_eq!(decode(&encode(&used)), used);
        // Port 30000 is bit 0: one byte 0x01.
        let one: BTreeSet<u16> = [30000].into_iter().collect();
        assert_eq!(encode(&one), "AQ==");
        // Port 30008 is bit 8: bytes 0x01 0x00 (big-endian).
        let nine: BTreeSet<u16> = [30008].into_iter().collect();
        assert_eq!(encode(&nine), "AQA=");
        assert_eq!(encode(&BTreeSet::new()), "");
        assert!(decode("").is_empty());
    }

    fn svc(ports: Value) -> Value {
        json!({"metadata": {"name": "s"}, "spec": {"type": "NodePort", "ports": ports}})
    }

    #[test]
    fn create_shares_a_node_port_between_protocols_of_one_port() {
        let s = svc(json!([
            {"port": 53, "protocol": "TCP"},
            {"port": 53, "protocol": "UDP"},
            {"port": 80, "protocol": "TCP", "nodePort": 30080},
        ]));
        let mut used = BTreeSet::new();
        let Assigned { ports, newly, .. } = assign(&s, None, &mut used).unwrap();
        assert_eq!(ports[0]["nodePort"], ports[1]["nodePort"]);
        assert_eq!(ports[2]["nodePort"], 30080);
        assert_eq!(newly.len(), 2);
        assert!(used.contains(&30080));
    }

    #[test]
    fn create_refuses_taken_and_out_of_range_ports() {
        let mut used: BTreeSet<u16> = [30080].into_iter().collect();
        let e = assign(
            &svc(json!([{"port": 80, "nodePort": 30080}])),
            None,
            &mut used,
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "Service \"s\" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"
        );
        let e = assign(
            &svc(json!([{"port": 80, "nodePort": 8080}])),
            None,
            &mut used,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Service \"s\" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767"
        );
    }

    #[test]
    fn update_keeps_own_ports_and_allocates_new_ones() {
        let old = svc(json!([{"port": 80, "nodePort": 30080}]));
        let new = svc(json!([{"port": 80, "nodePort": 30080}, {"port": 81}]));
        let mut used: BTreeSet<u16> = [30080].into_iter().collect();
        let Assigned { ports, newly, .. } = assign(&new, Some(&old), &mut used).unwrap();
        assert_eq!(ports[0]["nodePort"], 30080);
        assert_eq!(newly.len(), 1);
        assert_ne!(ports[1]["nodePort"], 0);
    }

    #[test]
    fn local_load_balancer_gets_a_health_check_node_port() {
        let s = json!({"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer",
            "externalTrafficPolicy": "Local", "ports": [{"port": 80}]}});
        let mut used = BTreeSet::new();
        let a = assign(&s, None, &mut used).unwrap();
        let hc = a.hc.expect("a health-check node port");
        assert_eq!(a.newly.len(), 2);
        assert!(a.newly.contains(&hc));
        // Kept on update.
        let mut old = s.clone();
        old["spec"]["healthCheckNodePort"] = json!(hc);
        old["spec"]["ports"] = json!(a.ports);
        let again = assign(&old, Some(&old), &mut used).unwrap();
        assert!(again.hc.is_none() && again.newly.is_empty());
        // A taken requested one is kube's internal error.
        let mut taken = s.clone();
        taken["spec"]["healthCheckNodePort"] = json!(hc);
        let e = assign(&taken, None, &mut used).unwrap_err();
        assert_eq!(e.code, 500);
        assert!(e.message.ends_with(&format!(
            "failed to allocate requested HealthCheck NodePort {hc}: provided port is already allocated"
        )));
    }

    #[test]
    fn load_balancer_without_node_ports_allocates_none() {
        let s = json!({"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer",
            "allocateLoadBalancerNodePorts": false, "ports": [{"port": 80}]}});
        let mut used = BTreeSet::new();
        let Assigned { ports, newly, .. } = assign(&s, None, &mut used).unwrap();
        assert!(newly.is_empty());
        assert!(ports[0].get("nodePort").is_none());
    }
}
