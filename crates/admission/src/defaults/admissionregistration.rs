//! `admissionregistration.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/admissionregistration/v1/defaults.go`).
//!
//! Webhooks get `failurePolicy: Fail`, `matchPolicy: Equivalent`, empty
//! namespace and object selectors and `timeoutSeconds: 10` (mutating ones
//! also `reinvocationPolicy: Never`); their rules get `scope: "*"` and a
//! service reference port 443. v1 defaults neither `sideEffects` nor
//! `admissionReviewVersions` (both are required). Policies get
//! `failurePolicy: Fail`, and the match resources of policies and bindings
//! the webhook match defaults; a binding's `paramRef` gets none in v1.
//! MutatingAdmissionPolicy (`v1beta1`, `SetObjectDefaults_MutatingAdmissionPolicy`)
//! and its binding get the same as their validating counterparts.

use serde_json::{Map, Value};

use super::{child, each, object_at, or_set};

/// MutatingWebhookConfiguration: each webhook, with `reinvocationPolicy`.
pub(super) fn mutating_webhook_configuration(obj: &mut Value) {
    webhooks(obj, true);
}

/// ValidatingWebhookConfiguration: each webhook.
pub(super) fn validating_webhook_configuration(obj: &mut Value) {
    webhooks(obj, false);
}

/// ValidatingAdmissionPolicy: the spec's `failurePolicy` (the spec is a
/// struct in Go, so even an absent one gets it) and `matchConstraints`.
pub(super) fn validating_admission_policy(obj: &mut Value) {
    let Some(spec) = obj.as_object_mut().and_then(|m| child(m, "spec")) else {
        return;
    };
    or_set(spec, "failurePolicy", "Fail");
    if let Some(m) = spec
        .get_mut("matchConstraints")
        .and_then(Value::as_object_mut)
    {
        match_resources(m);
    }
}

/// ValidatingAdmissionPolicyBinding: the spec's `matchResources`.
pub(super) fn validating_admission_policy_binding(obj: &mut Value) {
    if let Some(m) = object_at(obj, &["spec", "matchResources"]) {
        match_resources(m);
    }
}

/// MutatingAdmissionPolicy (`v1beta1`): as a validating policy, the spec's
/// `failurePolicy` and `matchConstraints`; `reinvocationPolicy` has no
/// default (it is required).
pub(super) fn mutating_admission_policy(obj: &mut Value) {
    validating_admission_policy(obj);
}

/// MutatingAdmissionPolicyBinding (`v1beta1`): the spec's `matchResources`
/// (`paramRef` gets no default in v1beta1).
pub(super) fn mutating_admission_policy_binding(obj: &mut Value) {
    validating_admission_policy_binding(obj);
}

/// The webhooks of a configuration; `mutating` adds `reinvocationPolicy`.
fn webhooks(obj: &mut Value, mutating: bool) {
    let Some(config) = obj.as_object_mut() else {
        return;
    };
    for hook in each(config, "webhooks") {
        or_set(hook, "failurePolicy", "Fail");
        or_set(hook, "matchPolicy", "Equivalent");
        or_set(hook, "namespaceSelector", Map::new());
        or_set(hook, "objectSelector", Map::new());
        or_set(hook, "timeoutSeconds", 10);
        if mutating {
            or_set(hook, "reinvocationPolicy", "Never");
        }
        if let Some(service) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            or_set(service, "port", 443);
        }
        rules(hook, "rules");
    }
}

/// A policy's or binding's match resources: the webhook match defaults and
/// the scope of the (excluded) resource rules.
fn match_resources(m: &mut Map<String, Value>) {
    or_set(m, "matchPolicy", "Equivalent");
    or_set(m, "namespaceSelector", Map::new());
    or_set(m, "objectSelector", Map::new());
    rules(m, "resourceRules");
    rules(m, "excludeResourceRules");
}

/// `scope: "*"` on each rule of the array at `key`.
fn rules(m: &mut Map<String, Value>, key: &str) {
    for rule in each(m, key) {
        or_set(rule, "scope", "*");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn webhook_defaults_and_explicit_values() {
        let mut cfg = json!({"webhooks": [
            {"name": "a.example.com", "clientConfig": {"service": {"name": "s", "namespace": "n"}},
             "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]},
            {"name": "b.example.com", "clientConfig": {"url": "https://x"}, "failurePolicy": "Ignore",
             "matchPolicy": "Exact", "namespaceSelector": {"matchLabels": {"a": "b"}}, "timeoutSeconds": 3,
             "reinvocationPolicy": "IfNeeded", "rules": [{"scope": "Namespaced"}]}]});
        super::mutating_webhook_configuration(&mut cfg);
        let a = &cfg["webhooks"][0];
        assert_eq!(a["failurePolicy"], "Fail");
        assert_eq!(a["matchPolicy"], "Equivalent");
        assert_eq!(a["namespaceSelector"], json!({}));
        assert_eq!(a["objectSelector"], json!({}));
        assert_eq!(a["timeoutSeconds"], 10);
        assert_eq!(a["reinvocationPolicy"], "Never");
        assert_eq!(a["clientConfig"]["service"]["port"], 443);
        assert_eq!(a["rules"][0]["scope"], "*");
        assert!(a.get("sideEffects").is_none());
        assert!(a.get("admissionReviewVersions").is_none());
        let b = &cfg["webhooks"][1];
        assert_eq!(b["failurePolicy"], "Ignore");
        assert_eq!(b["matchPolicy"], "Exact");
        assert_eq!(b["namespaceSelector"], json!({"matchLabels": {"a": "b"}}));
        assert_eq!(b["timeoutSeconds"], 3);
        assert_eq!(b["reinvocationPolicy"], "IfNeeded");
        assert_eq!(b["rules"][0]["scope"], "Namespaced");
        assert!(b["clientConfig"].get("service").is_none());

        let mut cfg = json!({"webhooks": [{"name": "v", "clientConfig": {}}]});
        super::validating_webhook_configuration(&mut cfg);
        assert!(cfg["webhooks"][0].get("reinvocationPolicy").is_none());
        assert_eq!(cfg["webhooks"][0]["timeoutSeconds"], 10);
    }

    #[test]
    fn policy_and_binding() {
        let mut p = json!({});
        super::validating_admission_policy(&mut p);
        assert_eq!(p, json!({"spec": {"failurePolicy": "Fail"}}));
        let mut p = json!({"spec": {"failurePolicy": "Ignore", "matchConstraints": {
            "resourceRules": [{"resources": ["pods"]}], "excludeResourceRules": [{"scope": "Cluster"}]}}});
        super::validating_admission_policy(&mut p);
        assert_eq!(
            p["spec"],
            json!({"failurePolicy": "Ignore", "matchConstraints": {
                "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                "resourceRules": [{"resources": ["pods"], "scope": "*"}],
                "excludeResourceRules": [{"scope": "Cluster"}]}})
        );
        let mut b = json!({"spec": {"policyName": "p", "paramRef": {"name": "x"}}});
        super::validating_admission_policy_binding(&mut b);
        assert_eq!(
            b["spec"],
            json!({"policyName": "p", "paramRef": {"name": "x"}})
        );
        let mut b = json!({"spec": {"matchResources": {"matchPolicy": "Exact"}}});
        super::validating_admission_policy_binding(&mut b);
        assert_eq!(
            b["spec"]["matchResources"],
            json!({"matchPolicy": "Exact", "namespaceSelector": {}, "objectSelector": {}})
        );
    }

    #[test]
    fn mutating_policy_and_binding() {
        let mut p = json!({});
        super::mutating_admission_policy(&mut p);
        assert_eq!(p, json!({"spec": {"failurePolicy": "Fail"}}));
        let mut p = json!({"spec": {"matchConstraints": {"resourceRules": [{"resources": ["pods"]}]},
            "mutations": [{"patchType": "JSONPatch"}]}});
        super::mutating_admission_policy(&mut p);
        assert_eq!(
            p["spec"],
            json!({"failurePolicy": "Fail", "matchConstraints": {
                "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                "resourceRules": [{"resources": ["pods"], "scope": "*"}]},
                "mutations": [{"patchType": "JSONPatch"}]})
        );
        assert!(p["spec"].get("reinvocationPolicy").is_none());
        let mut b = json!({"spec": {"policyName": "p", "paramRef": {"name": "x"},
            "matchResources": {"excludeResourceRules": [{}]}}});
        super::mutating_admission_policy_binding(&mut b);
        assert_eq!(
            b["spec"],
            json!({"policyName": "p", "paramRef": {"name": "x"}, "matchResources": {
                "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                "excludeResourceRules": [{"scope": "*"}]}})
        );
    }
}
