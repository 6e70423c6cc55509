//! `networking.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/networking/v1/defaults.go`): NetworkPolicy
//! policy types and port protocols, IngressClass parameter scope. Ingress,
//! ServiceCIDR and IPAddress have no defaults.

use serde_json::Value;

use super::{child, each, object_at, or_set};

/// NetworkPolicy: `spec.policyTypes` (`[Ingress]`, plus `Egress` when
/// egress rules are given) and each ingress/egress port's `protocol`
/// (`TCP`).
pub(super) fn network_policy(obj: &mut Value) {
    let Some(spec) = obj.as_object_mut().and_then(|m| child(m, "spec")) else {
        return;
    };
    if is_empty_list(spec.get("policyTypes")) {
        let mut types = vec![Value::from("Ingress")];
        if !is_empty_list(spec.get("egress")) {
            types.push("Egress".into());
        }
        spec.insert("policyTypes".into(), Value::Array(types));
    }
    for direction in ["ingress", "egress"] {
        for rule in each(spec, direction) {
            for port in each(rule, "ports") {
                or_set(port, "protocol", "TCP");
            }
        }
    }
}

/// IngressClass: `spec.parameters.scope` (`Cluster`) when parameters are
/// given.
pub(super) fn ingress_class(obj: &mut Value) {
    if let Some(params) = object_at(obj, &["spec", "parameters"]) {
        or_set(params, "scope", "Cluster");
    }
}

/// Go's `len(list) == 0`: absent, null or `[]` (a non-list is left to
/// validation and counts as set).
fn is_empty_list(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn egress_rules_add_egress_type() {
        let mut np = json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}});
        network_policy(&mut np);
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    }

    #[test]
    fn missing_spec_is_created() {
        let mut np = json!({"metadata": {"name": "n"}});
        network_policy(&mut np);
        assert_eq!(np["spec"], json!({"policyTypes": ["Ingress"]}));
    }

    #[test]
    fn empty_egress_list_is_not_egress() {
        let mut np = json!({"spec": {"egress": []}});
        network_policy(&mut np);
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress"]));
    }
}
