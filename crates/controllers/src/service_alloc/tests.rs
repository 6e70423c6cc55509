use std::sync::Arc;

use keelson_api::StoreApi;
use serde_json::json;

use super::*;

async fn store() -> (tempfile::TempDir, Arc<dyn StoreApi>) {
    let dir = tempfile::tempdir().unwrap();
    let store = keelson_storage::LocalStore::open(dir.path(), Default::default())
        .await
        .unwrap();
    (dir, Arc::new(store))
}

fn svc(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

async fn ipaddress(store: &dyn StoreApi, ip: &str) -> Option<Value> {
    store.get(&ObjectKey::new(ipaddresses(), "", ip)).await.ok()
}

#[test]
fn service_range_constant_matches_the_cidr() {
    assert_eq!(SERVICE_RANGE.to_string(), SERVICE_CIDR);
}

#[tokio::test]
async fn create_allocates_a_free_ip_and_records_it() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut s = svc(
        "web",
        json!({"type": "ClusterIP", "selector": {"app": "web"}, "ports": [{"port": 80}]}),
    );
    let got = a.allocate_create(&mut s, false).await.unwrap();
    assert_eq!(got.ips.len(), 1);
    let ip = got.ips[0].to_string();
    assert_eq!(s["spec"]["clusterIP"], json!(ip));
    assert_eq!(s["spec"]["clusterIPs"], json!([ip]));
    assert_eq!(s["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(s["spec"]["ipFamilyPolicy"], json!("SingleStack"));
    let rec = ipaddress(store.as_ref(), &ip).await.unwrap();
    assert_eq!(
        rec["spec"]["parentRef"],
        json!({"resource": "services", "namespace": "default", "name": "web"})
    );
    assert_eq!(
        rec["metadata"]["labels"]["ipaddress.kubernetes.io/managed-by"],
        json!(IP_ALLOCATOR)
    );
    // Releasing the deleted Service removes its IPAddress.
    a.release_service(&s).await;
    assert!(ipaddress(store.as_ref(), &ip).await.is_none());
}

#[tokio::test]
async fn requested_ip_taken_or_out_of_range_is_kubes_422() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut s1 = svc(
        "a",
        json!({"clusterIP": "10.96.0.10", "ports": [{"port": 80}]}),
    );
    a.allocate_create(&mut s1, false).await.unwrap();
    assert_eq!(s1["spec"]["clusterIPs"], json!(["10.96.0.10"]));
    let mut s2 = svc(
        "b",
        json!({"clusterIP": "10.96.0.10", "ports": [{"port": 80}]}),
    );
    let e = a.allocate_create(&mut s2, false).await.unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        r#"Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated"#
    );
    let mut s3 = svc(
        "c",
        json!({"clusterIP": "10.0.0.1", "ports": [{"port": 80}]}),
    );
    let e = a.allocate_create(&mut s3, false).await.unwrap_err();
    assert_eq!(
        e.message,
        r#"Service "c" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.1"]: failed to allocate IP 10.0.0.1: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12"#
    );
    // A released IP can be requested again; another Service's release
    // leaves it alone.
    a.release_service(&svc("b", json!({"clusterIPs": ["10.96.0.10"]})))
        .await;
    assert!(ipaddress(store.as_ref(), "10.96.0.10").await.is_some());
    a.release_service(&s1).await;
    let mut s4 = svc(
        "d",
        json!({"clusterIP": "10.96.0.10", "ports": [{"port": 80}]}),
    );
    a.allocate_create(&mut s4, false).await.unwrap();
}

#[tokio::test]
async fn dry_run_stores_nothing() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut s = svc("web", json!({"type": "NodePort", "ports": [{"port": 80}]}));
    let got = a.allocate_create(&mut s, true).await.unwrap();
    assert!(got.is_empty());
    assert_eq!(s["spec"]["clusterIP"], json!("10.96.0.0"));
    assert!(s["spec"]["ports"][0]["nodePort"].as_u64().is_some());
    assert!(store
        .list(&ipaddresses(), None)
        .await
        .unwrap()
        .items
        .is_empty());
}

#[tokio::test]
async fn headless_and_external_name_get_no_ip() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut h = svc("h", json!({"clusterIP": "None", "selector": {"a": "b"}}));
    assert!(a.allocate_create(&mut h, false).await.unwrap().is_empty());
    assert_eq!(h["spec"]["clusterIPs"], json!(["None"]));
    assert_eq!(h["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(h["spec"]["ipFamilyPolicy"], json!("SingleStack"));
    let mut hs = svc("hs", json!({"clusterIP": "None"}));
    a.allocate_create(&mut hs, false).await.unwrap();
    assert_eq!(hs["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert_eq!(hs["spec"]["ipFamilyPolicy"], json!("RequireDualStack"));
    let mut e = svc(
        "e",
        json!({"type": "ExternalName", "externalName": "example.com"}),
    );
    assert!(a.allocate_create(&mut e, false).await.unwrap().is_empty());
    assert!(e["spec"].get("clusterIP").is_none());
    assert!(e["spec"].get("ipFamilies").is_none());
}

#[tokio::test]
async fn ip_family_errors() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut s = svc("s", json!({"ipFamilyPolicy": "RequireDualStack"}));
    let e = a.allocate_create(&mut s, false).await.unwrap_err();
    assert_eq!(
        e.message,
        r#"Service "s" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services"#
    );
    let mut s = svc("s", json!({"ipFamilies": ["IPv6"]}));
    let e = a.allocate_create(&mut s, false).await.unwrap_err();
    assert_eq!(
        e.message,
        r#"Service "s" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster"#
    );
    let mut s = svc("s", json!({"ipFamilyPolicy": "PreferDualStack"}));
    a.allocate_create(&mut s, false).await.unwrap();
    assert_eq!(s["spec"]["ipFamilies"], json!(["IPv4"]));
}

#[tokio::test]
async fn update_keeps_values_refuses_changes_and_follows_type_changes() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut old = svc(
        "s",
        json!({"type": "NodePort", "ports": [{"name": "http", "port": 80}]}),
    );
    a.allocate_create(&mut old, false).await.unwrap();
    let ip = old["spec"]["clusterIP"].clone();
    let np = old["spec"]["ports"][0]["nodePort"].clone();
    // An update without the allocated values keeps them.
    let mut new = svc(
        "s",
        json!({"type": "NodePort", "ports": [{"name": "http", "port": 80}]}),
    );
    let plan = a.allocate_update(&mut new, &old, false).await.unwrap();
    assert!(plan.allocated.is_empty() && plan.released.is_empty());
    assert_eq!(new["spec"]["clusterIP"], ip);
    assert_eq!(new["spec"]["clusterIPs"], json!([ip]));
    assert_eq!(new["spec"]["ports"][0]["nodePort"], np);
    // A changed cluster IP is refused.
    let mut changed = new.clone();
    changed["spec"]["clusterIP"] = json!("10.96.0.99");
    changed["spec"]["clusterIPs"] = json!(["10.96.0.99"]);
    let e = a
        .allocate_update(&mut changed, &old, false)
        .await
        .unwrap_err();
    assert_eq!(
        e.message,
        r#"Service "s" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.99"]: may not change once set"#
    );
    // To ExternalName: the IP and node port are released after the write.
    let mut ext = svc(
        "s",
        json!({"type": "ExternalName", "externalName": "x.example"}),
    );
    let plan = a.allocate_update(&mut ext, &old, false).await.unwrap();
    assert_eq!(plan.released.ips.len(), 1);
    assert_eq!(plan.released.ports.len(), 1);
    a.release(&plan.released).await;
    assert!(ipaddress(store.as_ref(), ip.as_str().unwrap())
        .await
        .is_none());
    // And back: a new IP.
    let mut back = svc("s", json!({"type": "ClusterIP", "ports": [{"port": 80}]}));
    let plan = a.allocate_update(&mut back, &ext, false).await.unwrap();
    assert_eq!(plan.allocated.ips.len(), 1);
    assert!(back["spec"]["clusterIP"].as_str().is_some());
}

#[tokio::test]
async fn node_port_to_cluster_ip_drops_and_releases_the_ports() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut old = svc(
        "s",
        json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
        "ports": [{"port": 80, "nodePort": 30080}]}),
    );
    a.allocate_create(&mut old, false).await.unwrap();
    let hc = old["spec"]["healthCheckNodePort"]
        .as_u64()
        .expect("hc port");
    let mut new = old.clone();
    new["spec"]["type"] = json!("ClusterIP");
    new["spec"]["externalTrafficPolicy"] = json!("Cluster");
    let plan = a.allocate_update(&mut new, &old, false).await.unwrap();
    assert!(new["spec"]["ports"][0].get("nodePort").is_none(), "{new}");
    assert!(new["spec"].get("healthCheckNodePort").is_none(), "{new}");
    let mut released = plan.released.ports.clone();
    released.sort();
    let mut want = vec![30080, u16::try_from(hc).unwrap()];
    want.sort();
    assert_eq!(released, want);
    assert!(plan.released.ips.is_empty());
}

#[tokio::test]
async fn node_ports_are_exclusive_and_released() {
    let (_d, store) = store().await;
    let a = Allocator::new(store.as_ref());
    let mut s1 = svc(
        "a",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}),
    );
    a.allocate_create(&mut s1, false).await.unwrap();
    let mut s2 = svc(
        "b",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}),
    );
    let e = a.allocate_create(&mut s2, false).await.unwrap_err();
    assert_eq!(
        e.message,
        r#"Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"#
    );
    // The failed create released the IP it had taken.
    assert_eq!(
        store.list(&ipaddresses(), None).await.unwrap().items.len(),
        1
    );
    a.release_service(&s1).await;
    let mut s3 = svc(
        "c",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}),
    );
    a.allocate_create(&mut s3, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_never_share_a_node_port() {
    let (_d, store) = store().await;
    let mut tasks = Vec::new();
    for i in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let a = Allocator::new(store.as_ref());
            let mut s = svc(
                &format!("s{i}"),
                json!({"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}),
            );
            a.allocate_create(&mut s, false).await.unwrap();
            node_ports(&s)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let distinct: BTreeSet<u16> = all.iter().copied().collect();
    assert_eq!(all.len(), 16);
    assert_eq!(distinct.len(), 16);
    let (_, used) = ports::tests_load(store.as_ref()).await;
    assert_eq!(used, distinct);
}

#[test]
fn generate_name_is_set_before_allocation() {
    let mut s = json!({"metadata": {"generateName": "web-"}, "spec": {}});
    generate_name(&mut s);
    let name = meta_str(&s, "name");
    assert!(name.starts_with("web-") && name.len() == 9);
}
