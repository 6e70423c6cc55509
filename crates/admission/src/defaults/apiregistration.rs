//! `apiregistration.k8s.io/v1` defaults
//! (`k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/defaults.go`): port
//! 443 of an APIService's service reference.

use serde_json::Value;

use super::{object_at, or_set};

/// APIService: the service reference's `port`.
pub(super) fn api_service(obj: &mut Value) {
    if let Some(service) = object_at(obj, &["spec", "service"]) {
        or_set(service, "port", 443);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn service_port() {
        let mut s = json!({"spec": {"service": {"name": "m", "namespace": "kube-system"}}});
        super::api_service(&mut s);
        assert_eq!(s["spec"]["service"]["port"], 443);
        let mut s = json!({"spec": {"service": {"name": "m", "namespace": "n", "port": 8443}}});
        super::api_service(&mut s);
        assert_eq!(s["spec"]["service"]["port"], 8443);
        let mut s = json!({"spec": {"group": "", "version": "v1"}});
        super::api_service(&mut s);
        assert!(s["spec"].get("service").is_none());
    }
}
