use serde_json::json;

use super::*;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo::new(name, groups.iter().map(|g| g.to_string()).collect())
}

fn attrs(u: UserInfo, verb: &str, ns: &str, resource: &str) -> Attributes {
    Attributes {
        user: u,
        verb: verb.into(),
        resource_request: true,
        namespace: ns.into(),
        resource: resource.into(),
        ..Default::default()
    }
}

#[test]
fn role_binding_grants_in_its_namespace() {
    let rbac = Rbac::new();
    rbac.apply(
        "roles",
        EventType::Added,
        &json!({"metadata": {"name": "r", "namespace": "a"}, "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
    );
    rbac.apply(
        "rolebindings",
        EventType::Added,
        &json!({"metadata": {"name": "b", "namespace": "a"}, "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "alice"}]}),
    );
    let alice = user("alice", &["system:authenticated"]);
    assert!(
        rbac.authorize(&attrs(alice.clone(), "list", "a", "pods"))
            .allowed
    );
    assert!(
        !rbac
            .authorize(&attrs(alice.clone(), "list", "b", "pods"))
            .allowed
    );
    assert!(
        !rbac
            .authorize(&attrs(alice.clone(), "delete", "a", "pods"))
            .allowed
    );
    assert!(
        !rbac
            .authorize(&attrs(user("bob", &[]), "list", "a", "pods"))
            .allowed
    );
    rbac.apply(
        "roles",
        EventType::Deleted,
        &json!({"metadata": {"name": "r", "namespace": "a"}}),
    );
    let d = rbac.authorize(&attrs(alice, "list", "a", "pods"));
    assert!(!d.allowed);
    assert_eq!(
        d.reason,
        "RBAC: role.rbac.authorization.k8s.io \"r\" not found"
    );
}

#[test]
fn bootstrap_policy_and_masters() {
    let rbac = Rbac::new();
    rbac.replace("clusterroles", &crate::bootstrap::cluster_roles());
    rbac.replace(
        "clusterrolebindings",
        &crate::bootstrap::cluster_role_bindings(),
    );
    let anon = Attributes {
        user: UserInfo::anonymous(),
        verb: "get".into(),
        path: "/version".into(),
        ..Default::default()
    };
    assert!(rbac.authorize(&anon).allowed);
    let mut api = anon.clone();
    api.path = "/api".into();
    assert!(!rbac.authorize(&api).allowed);
    api.user = user("x", &["system:authenticated"]);
    assert!(rbac.authorize(&api).allowed);
    let auth = Authorizer {
        mode: Mode::Rbac,
        rbac: rbac.clone(),
    };
    assert!(
        auth.authorize(&attrs(
            user("root", &["system:masters"]),
            "delete",
            "",
            "nodes"
        ))
        .allowed
    );
    let sa = UserInfo::service_account("ns", "sa", "");
    rbac.apply(
        "rolebindings",
        EventType::Added,
        &json!({"metadata": {"name": "b", "namespace": "ns"}, "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]}),
    );
    // `view` is aggregated: empty until the controller fills it.
    assert!(
        !auth
            .authorize(&attrs(sa.clone(), "get", "ns", "pods"))
            .allowed
    );
    rbac.apply(
        "clusterroles",
        EventType::Modified,
        &json!({"metadata": {"name": "view"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
    );
    assert!(
        auth.authorize(&attrs(sa.clone(), "get", "ns", "pods"))
            .allowed
    );
    assert!(!auth.authorize(&attrs(sa, "get", "other", "pods")).allowed);
    let (rules, errs) = rbac.rules_for(&user("x", &["system:authenticated"]), "");
    assert!(errs.is_empty());
    assert!(rules.len() >= 3);
}

/// The cost of one RBAC decision over the bootstrap policy and a few
/// namespaced bindings (run with `--release -- --ignored --nocapture`).
#[test]
#[ignore]
fn authorize_cost() {
    let rbac = Rbac::new();
    rbac.replace("clusterroles", &crate::bootstrap::cluster_roles());
    rbac.replace(
        "clusterrolebindings",
        &crate::bootstrap::cluster_role_bindings(),
    );
    for i in 0..20 {
        let ns = format!("ns{i}");
        rbac.apply(
            "roles",
            EventType::Added,
            &json!({"metadata": {"name": "r", "namespace": ns}, "rules": [{"verbs": ["get", "create"], "apiGroups": [""], "resources": ["configmaps"]}]}),
        );
        rbac.apply(
            "rolebindings",
            EventType::Added,
            &json!({"metadata": {"name": "b", "namespace": ns}, "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "bencher"}]}),
        );
    }
    let auth = Authorizer {
        mode: Mode::Rbac,
        rbac,
    };
    let a = Attributes {
        user: user("bencher", &["system:authenticated"]),
        verb: "get".into(),
        resource_request: true,
        namespace: "ns7".into(),
        resource: "configmaps".into(),
        name: "x".into(),
        ..Default::default()
    };
    let n = 1_000_000;
    let t = std::time::Instant::now();
    for _ in 0..n {
        assert!(auth.authorize(std::hint::black_box(&a)).allowed);
    }
    println!("authorize: {:?} per decision", t.elapsed() / n);
}

/// kube's allow reasons: `RBAC: allowed by <binding describer>`.
#[test]
fn allow_reasons_name_the_binding() {
    let rbac = Rbac::new();
    rbac.apply(
        "roles",
        EventType::Added,
        &json!({"metadata": {"name": "reader", "namespace": "a"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
    );
    rbac.apply(
        "rolebindings",
        EventType::Added,
        &json!({"metadata": {"name": "read", "namespace": "a"}, "roleRef": {"kind": "Role", "name": "reader"},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "bot"}]}),
    );
    rbac.apply(
        "clusterroles",
        EventType::Added,
        &json!({"metadata": {"name": "lister"}, "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]}),
    );
    rbac.apply(
        "clusterrolebindings",
        EventType::Added,
        &json!({"metadata": {"name": "list-all"}, "roleRef": {"kind": "ClusterRole", "name": "lister"},
            "subjects": [{"kind": "Group", "name": "devs"}]}),
    );
    let d = rbac.authorize(&attrs(user("alice", &[]), "get", "a", "pods"));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by RoleBinding "read/a" of Role "reader" to User "alice""#
    );
    let d = rbac.authorize(&attrs(
        user("system:serviceaccount:a:bot", &[]),
        "get",
        "a",
        "pods",
    ));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by RoleBinding "read/a" of Role "reader" to ServiceAccount "bot/a""#
    );
    let d = rbac.authorize(&attrs(user("carol", &["devs"]), "list", "", "pods"));
    assert!(d.allowed);
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by ClusterRoleBinding "list-all" of ClusterRole "lister" to Group "devs""#
    );
}
