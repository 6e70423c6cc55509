//! A Service reference resolved as kube-apiserver's endpoint routing does.

use std::net::{IpAddr, SocketAddr};

use keelson_api::StoreApi;
use keelson_apimachinery::{ApiError, GroupResource, ObjectKey};
use serde_json::Value;

fn str_at<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or("")
}

/// kube's endpoint routing for a Service: the Service (of a routable
/// type) and its port, then a ready address of its Endpoints with the
/// port of the same name.
pub async fn resolve_endpoint(
    store: &dyn StoreApi,
    namespace: &str,
    name: &str,
    port: i32,
) -> Result<SocketAddr, String> {
    let svc = store
        .get(&ObjectKey::new(
            GroupResource::new("", "services"),
            namespace,
            name,
        ))
        .await
        .map_err(|e| not_found_or(e, "service", name))?;
    let svc_type = svc
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if !matches!(svc_type, "ClusterIP" | "LoadBalancer" | "NodePort") {
        return Err(format!("unsupported service type {svc_type:?}"));
    }
    let port_name = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(i64::from(port)))
        .map(|p| str_at(p, "name").to_string())
        .ok_or_else(|| format!("no service port {port} found for service {name:?}"))?;
    let eps = store
        .get(&ObjectKey::new(
            GroupResource::new("", "endpoints"),
            namespace,
            name,
        ))
        .await
        .map_err(|e| not_found_or(e, "endpoints", name))?;
    for subset in eps
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(p) = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| str_at(p, "name") == port_name)
        else {
            continue;
        };
        let ips: Vec<IpAddr> = subset
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| str_at(a, "ip").parse().ok())
            .collect();
        let Some(target_port) = p.get("port").and_then(Value::as_u64) else {
            continue;
        };
        if ips.is_empty() {
            continue;
        }
        let ip = ips[rand::random::<usize>() % ips.len()];
        let target_port = u16::try_from(target_port).map_err(|e| e.to_string())?;
        return Ok(SocketAddr::new(ip, target_port));
    }
    Err(format!("no endpoints available for service {name:?}"))
}

/// A lister's not-found wording (`service "x" not found`), else the
/// error's message.
fn not_found_or(e: ApiError, resource: &str, name: &str) -> String {
    if e.is_not_found() {
        format!("{resource} {name:?} not found")
    } else {
        e.message
    }
}
