//! The built-in strategies: what the gateway used to match by name.

use serde_json::json;

use crate::*;

fn info(group: &str, plural: &str) -> &'static ResourceInfo {
    let c = CatalogSnapshot::builtin();
    let version = c.group(group).and_then(|g| g.preferred_version()).unwrap();
    c.lookup(group, version, plural).unwrap()
}

#[test]
fn returns_deleted_object_as_kube_registries_do() {
    let with: Vec<String> = CatalogSnapshot::builtin()
        .resources()
        .iter()
        .filter(|r| r.strategy.returns_deleted_object)
        .map(|r| r.gr().to_string())
        .collect();
    assert_eq!(
        with,
        [
            "namespaces",
            "persistentvolumeclaims",
            "persistentvolumes",
            "pods",
            "resourcequotas",
            "serviceaccounts",
            "services",
            "storageclasses.storage.k8s.io"
        ]
    );
}

#[test]
fn create_on_update() {
    for (g, r) in [
        ("", "endpoints"),
        ("", "events"),
        ("", "limitranges"),
        ("", "serviceaccounts"),
        ("events.k8s.io", "events"),
        ("coordination.k8s.io", "leases"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
    ] {
        assert!(info(g, r).strategy.allow_create_on_update, "{g}/{r}");
    }
    for (g, r) in [("", "pods"), ("", "configmaps"), ("apps", "deployments")] {
        assert!(!info(g, r).strategy.allow_create_on_update, "{g}/{r}");
    }
}

#[test]
fn unconditional_updates_follow_kube_strategies() {
    for (g, r) in [
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
        ),
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
        ),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies",
        ),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicybindings",
        ),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("apiregistration.k8s.io", "apiservices"),
    ] {
        assert!(info(g, r).strategy.requires_resource_version, "{g}/{r}");
    }
    for (g, r) in [
        ("", "configmaps"),
        ("", "pods"),
        ("apps", "deployments"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("coordination.k8s.io", "leases"),
    ] {
        assert!(!info(g, r).strategy.requires_resource_version, "{g}/{r}");
    }
}

#[test]
fn status_policies() {
    assert_eq!(info("", "pods").strategy.status, StatusPolicy::PodPending);
    assert_eq!(
        info("apps", "deployments").strategy.status,
        StatusPolicy::Subresource
    );
    assert_eq!(info("", "configmaps").strategy.status, StatusPolicy::Plain);
    assert_eq!(
        StatusPolicy::PodPending.initial_status(),
        Some(json!({"phase": "Pending"}))
    );
    assert_eq!(StatusPolicy::Subresource.initial_status(), Some(json!({})));
    assert_eq!(StatusPolicy::Plain.initial_status(), None);
    assert!(StatusPolicy::Subresource.keeps_stored_status());
    assert!(!StatusPolicy::Plain.keeps_stored_status());
}

#[test]
fn persistent_volumes_start_pending_since_create() {
    let p = info("", "persistentvolumes").strategy.status;
    assert_eq!(p, StatusPolicy::PendingSinceCreate);
    assert_eq!(
        p.initial_status_at("2025-01-02T03:04:05Z"),
        Some(json!({"phase": "Pending", "lastPhaseTransitionTime": "2025-01-02T03:04:05Z"}))
    );
    let now = p.initial_status().unwrap();
    let t = now["lastPhaseTransitionTime"].as_str().unwrap();
    assert_eq!(t.len(), "2025-01-02T03:04:05Z".len());
    assert!(t.ends_with('Z'));
    assert!(p.keeps_stored_status());
}

#[test]
fn claims_reset_nodes_keep_status_on_create() {
    // A claim's phase comes from defaulting, after the reset.
    assert_eq!(
        info("", "persistentvolumeclaims").strategy.status,
        StatusPolicy::Subresource
    );
    let n = info("", "nodes").strategy.status;
    assert_eq!(n, StatusPolicy::KeptOnCreate);
    assert_eq!(n.initial_status(), None);
    assert!(n.keeps_stored_status());
    assert_eq!(
        info("", "resourcequotas").strategy.status,
        StatusPolicy::Subresource
    );
}

#[test]
fn pod_grace_periods() {
    let g = info("", "pods").strategy.graceful_deletion;
    assert_eq!(g, GracefulDeletion::PodOnNode);
    let unbound = json!({"spec": {}});
    let bound = json!({"spec": {"nodeName": "n1"}});
    let bound_10 = json!({"spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 10}});
    assert_eq!(g.grace_period_seconds(&unbound, Some(5)), None);
    assert_eq!(g.grace_period_seconds(&bound, None), Some(30));
    assert_eq!(g.grace_period_seconds(&bound_10, None), Some(10));
    assert_eq!(g.grace_period_seconds(&bound_10, Some(3)), Some(3));
    assert_eq!(g.grace_period_seconds(&bound_10, Some(0)), None);
    let other = info("", "configmaps").strategy.graceful_deletion;
    assert_eq!(other.grace_period_seconds(&bound, Some(5)), None);
}

#[test]
fn scale_paths_and_selectable_fields() {
    for (g, r) in [
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("", "replicationcontrollers"),
    ] {
        let s = info(g, r).strategy.scale.clone().unwrap();
        assert_eq!(
            (
                s.spec_replicas.as_str(),
                s.status_replicas.as_str(),
                s.label_selector.as_str()
            ),
            ("/spec/replicas", "/status/replicas", "/spec/selector")
        );
    }
    assert!(info("", "pods").strategy.scale.is_none());
    let pods = info("", "pods").strategy.selectable_fields.clone().unwrap();
    assert!(pods.iter().any(|f| f == "status.phase"));
    assert_eq!(
        info("", "secrets").strategy.selectable_fields,
        Some(vec!["type".to_owned()])
    );
    assert_eq!(info("", "configmaps").strategy.selectable_fields, None);
    assert_eq!(
        info("events.k8s.io", "events").strategy.selectable_fields,
        None
    );
}
