//! kube's Service update strategy, `dropTypeDependentFields`
//! (`pkg/registry/core/service/strategy.go`): when a Service changes to a
//! type that no longer uses a field the server may have filled in, and the
//! client did not change that field, the field is cleared before
//! validation (so `kubectl patch svc x -p '{"spec":{"type":"NodePort"}}'`
//! of a LoadBalancer is not refused for its leftover
//! `allocateLoadBalancerNodePorts`). Releasing what was allocated is the
//! Service allocator's job (`keelson_controllers::service_alloc`), which
//! compares the stored object with the new one.

use serde_json::{Map, Value};

fn spec(svc: &Value) -> Option<&Map<String, Value>> {
    svc.get("spec").and_then(Value::as_object)
}

fn field<'a>(svc: &'a Value, key: &str) -> Option<&'a Value> {
    spec(svc).and_then(|s| s.get(key)).filter(|v| !v.is_null())
}

fn ty(svc: &Value) -> &str {
    field(svc, "type").and_then(Value::as_str).unwrap_or("")
}

fn same(new: &Value, old: &Value, key: &str) -> bool {
    field(new, key) == field(old, key)
}

fn needs_cluster_ip(svc: &Value) -> bool {
    ty(svc) != "ExternalName"
}

fn needs_node_port(svc: &Value) -> bool {
    matches!(ty(svc), "NodePort" | "LoadBalancer")
}

fn needs_hc_node_port(svc: &Value) -> bool {
    ty(svc) == "LoadBalancer"
        && field(svc, "externalTrafficPolicy").and_then(Value::as_str) == Some("Local")
}

/// kube's `ExternallyAccessible`: NodePort, LoadBalancer, or ClusterIP
/// with external IPs.
fn externally_accessible(svc: &Value) -> bool {
    needs_node_port(svc)
        || (ty(svc) == "ClusterIP"
            && field(svc, "externalIPs")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty()))
}

fn node_ports(svc: &Value) -> Vec<Value> {
    field(svc, "ports")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .map(|p| p.get("nodePort").cloned().unwrap_or(Value::Null))
                .collect()
        })
        .unwrap_or_default()
}

/// Clear, in `new`, the type-dependent fields its type no longer uses and
/// that are as `old` had them.
pub(super) fn drop_type_dependent_fields(new: &mut Value, old: &Value) {
    let mut clear: Vec<&str> = Vec::new();
    if needs_cluster_ip(old) && !needs_cluster_ip(new) {
        if same(new, old, "clusterIP") && same(new, old, "clusterIPs") {
            clear.extend(["clusterIP", "clusterIPs"]);
        }
        if same(new, old, "ipFamilies") {
            clear.push("ipFamilies");
        }
        if same(new, old, "ipFamilyPolicy") {
            clear.push("ipFamilyPolicy");
        }
    }
    let drop_node_ports =
        needs_node_port(old) && !needs_node_port(new) && node_ports(new) == node_ports(old);
    if needs_hc_node_port(old) && !needs_hc_node_port(new) && same(new, old, "healthCheckNodePort")
    {
        clear.push("healthCheckNodePort");
    }
    if ty(old) == "LoadBalancer" && ty(new) != "LoadBalancer" {
        if field(new, "allocateLoadBalancerNodePorts").is_some()
            && same(new, old, "allocateLoadBalancerNodePorts")
        {
            clear.push("allocateLoadBalancerNodePorts");
        }
        if same(new, old, "loadBalancerClass") {
            clear.push("loadBalancerClass");
        }
    }
    if externally_accessible(old)
        && !externally_accessible(new)
        && same(new, old, "externalTrafficPolicy")
    {
        clear.push("externalTrafficPolicy");
    }
    let Some(s) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for k in clear {
        s.shift_remove(k);
    }
    if drop_node_ports {
        if let Some(ps) = s.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ps.iter_mut().filter_map(Value::as_object_mut) {
                p.shift_remove("nodePort");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::drop_type_dependent_fields;
    use serde_json::json;

    #[test]
    fn load_balancer_to_node_port_drops_what_only_it_used() {
        let old = json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 30100, "allocateLoadBalancerNodePorts": true,
            "loadBalancerClass": "x", "ports": [{"port": 80, "nodePort": 30080}]}});
        let mut new = old.clone();
        new["spec"]["type"] = json!("NodePort");
        new["spec"]["externalTrafficPolicy"] = json!("Cluster");
        drop_type_dependent_fields(&mut new, &old);
        assert_eq!(
            new,
            json!({"spec": {"type": "NodePort", "externalTrafficPolicy": "Cluster",
                "ports": [{"port": 80, "nodePort": 30080}]}})
        );
    }

    #[test]
    fn changed_fields_are_left_for_validation() {
        let old = json!({"spec": {"type": "NodePort", "externalTrafficPolicy": "Cluster",
            "clusterIP": "10.96.0.9", "clusterIPs": ["10.96.0.9"], "ports": [{"port": 80, "nodePort": 30080}]}});
        let mut new = old.clone();
        new["spec"]["type"] = json!("ClusterIP");
        new["spec"]["ports"][0]["nodePort"] = json!(30081);
        drop_type_dependent_fields(&mut new, &old);
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30081);
        assert!(new["spec"].get("externalTrafficPolicy").is_none());
        assert_eq!(new["spec"]["clusterIP"], "10.96.0.9");

        let mut ext = old.clone();
        ext["spec"]["type"] = json!("ExternalName");
        ext["spec"]["externalName"] = json!("example.com");
        drop_type_dependent_fields(&mut ext, &old);
        assert!(ext["spec"].get("clusterIP").is_none() && ext["spec"].get("clusterIPs").is_none());
        assert!(ext["spec"]["ports"][0].get("nodePort").is_none());
    }
}
