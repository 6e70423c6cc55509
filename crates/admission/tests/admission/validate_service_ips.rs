//! The IP rules of Service, Endpoints and EndpointSlice with kube 1.34's
//! messages: cluster IPs and IP families, external IPs, source ranges,
//! traffic distribution, the load balancer status, special endpoint IPs.

use keelson_api::{AdmissionRequest, Operation};
use serde_json::{json, Value};

use crate::support::{accepted, admitted, create, message};

const NOT_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const NOT_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const RANGES: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";
const ES: &str = "discovery.k8s.io";

fn service(meta: Value, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec})
}

fn svc(spec: Value) -> AdmissionRequest {
    create(
        "",
        "services",
        "default",
        service(json!({"name": "web"}), spec),
    )
}

fn update(group: &str, resource: &str, sub: &str, old: Value, new: Value) -> AdmissionRequest {
    let mut req = create(group, resource, "default", new);
    req.operation = Operation::Update;
    req.subresource = sub.into();
    req.old_object = Some(old);
    req
}

fn invalid(body: &str) -> String {
    format!("Service \"web\" is invalid: {body}")
}

/// A stored ClusterIP Service as the allocator leaves it.
fn stored(extra: Value) -> Value {
    let mut spec = json!({"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
        "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
        "internalTrafficPolicy": "Cluster", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]});
    for (k, v) in extra.as_object().into_iter().flatten() {
        spec[k] = v.clone();
    }
    service(
        json!({"name": "web", "namespace": "default", "resourceVersion": "5"}),
        spec,
    )
}

#[tokio::test]
async fn cluster_ip_fields() {
    let port = json!([{"port": 80}]);
    assert_eq!(
        message(svc(
            json!({"ports": port, "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.11"]})
        ))
        .await,
        invalid(
            "spec.clusterIPs: Invalid value: [\"10.96.0.11\"]: first value must match `clusterIP`"
        )
    );
    assert_eq!(
        message(svc(json!({"ports": port, "clusterIPs": ["10.96.0.10"]}))).await,
        invalid("spec.clusterIPs: Invalid value: [\"10.96.0.10\"]: must be empty when `clusterIP` is not specified")
    );
    // A bad cluster IP is all kube answers (its allocator checks the IP
    // fields before the rest of validation): the bad port name is not
    // reported.
    assert_eq!(
        message(svc(
            json!({"ports": [{"port": 80, "name": "Web"}], "clusterIP": "10.96.0.300"})
        ))
        .await,
        invalid(&format!(
            "spec.clusterIPs[0]: Invalid value: \"10.96.0.300\": {NOT_IP}"
        ))
    );
    assert_eq!(
        message(svc(json!({"ports": port, "clusterIP": "10.96.0.1", "ipFamilyPolicy": "PreferDualStack",
            "clusterIPs": ["10.96.0.1", "fd00::1", "10.96.0.2"]}))).await,
        invalid("spec.clusterIPs: Invalid value: [\"10.96.0.1\",\"fd00::1\",\"10.96.0.2\"]: may only hold up to 2 values")
    );
    assert_eq!(
        message(svc(json!({"ports": port, "clusterIP": "10.96.0.1", "ipFamilyPolicy": "PreferDualStack",
            "clusterIPs": ["10.96.0.1", "10.96.0.2"]}))).await,
        invalid("spec.clusterIPs: Invalid value: [\"10.96.0.1\",\"10.96.0.2\"]: may specify no more than one IP for each IP family")
    );
    assert_eq!(
        message(svc(json!({"ports": port, "clusterIP": "10.96.0.10", "ipFamilies": ["IPv6"]}))).await,
        invalid("spec.clusterIPs[0]: Invalid value: \"10.96.0.10\": expected an IPv6 value as indicated by `ipFamilies[0]`")
    );
    assert_eq!(
        message(svc(json!({"ports": port, "ipFamilies": ["IPv5", "IPv4", "IPv4"], "ipFamilyPolicy": "Dual"}))).await,
        invalid("[spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\", spec.ipFamilies[2]: Duplicate value: \"IPv4\", spec.ipFamilyPolicy: Unsupported value: \"Dual\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\"]")
    );
    assert_eq!(
        message(svc(json!({"type": "NodePort", "ports": port, "clusterIP": "None"}))).await,
        invalid("spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services")
    );
    // `clusterIP` alone initializes `clusterIPs` (kube's normalizeClusterIPs).
    assert_eq!(
        message(svc(json!({"type": "ExternalName", "externalName": "db.example.com", "clusterIP": "10.96.0.5"}))).await,
        invalid("spec.clusterIPs: Forbidden: may not be set for ExternalName services")
    );
}

#[tokio::test]
async fn none_with_a_second_ip() {
    // The second (valid) IP is not reported; the misplaced `None` stops
    // the family checks.
    assert_eq!(
        message(svc(json!({"ports": [{"port": 80}], "clusterIP": "None", "clusterIPs": ["None", "10.96.0.1"]}))).await,
        invalid("spec.clusterIPs: Invalid value: [\"None\",\"10.96.0.1\"]: 'None' must be the first and only value")
    );
}

#[tokio::test]
async fn external_ips() {
    let msg = message(svc(json!({"ports": [{"port": 80}],
        "externalIPs": ["1.2.3", "127.0.0.1", "169.254.1.1", "0.0.0.0", "224.0.0.5", "fe80::1", "::1", "010.1.2.3", "203.0.113.7"]})))
    .await;
    assert_eq!(
        msg,
        invalid(&format!("[spec.externalIPs[0]: Invalid value: \"1.2.3\": {NOT_IP}, spec.externalIPs[1]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128), spec.externalIPs[2]: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10), spec.externalIPs[3]: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0), spec.externalIPs[4]: Invalid value: \"224.0.0.5\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10), spec.externalIPs[5]: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10), spec.externalIPs[6]: Invalid value: \"::1\": may not be in the loopback range (127.0.0.0/8, ::1/128)]"))
    );
}

#[tokio::test]
async fn source_ranges() {
    let lb = |ranges: Value| json!({"type": "LoadBalancer", "ports": [{"port": 443}], "loadBalancerSourceRanges": ranges});
    assert_eq!(
        message(svc(lb(json!(["10.0.0.0/8", " 192.168.0.0/16 ", "10.0.0.1/24", "10.0.0.0/33", "bogus"])))).await,
        invalid(&format!("[spec.LoadBalancerSourceRanges[3]: Invalid value: \"10.0.0.0/33\": {NOT_CIDR}, spec.LoadBalancerSourceRanges[4]: Invalid value: \"bogus\": {NOT_CIDR}]"))
    );
    let ann = |v: &str, spec: Value| {
        create(
            "",
            "services",
            "default",
            service(json!({"name": "web", "annotations": {RANGES: v}}), spec),
        )
    };
    assert_eq!(
        message(ann("10.0.0.0/8, nope", json!({"ports": [{"port": 80}]}))).await,
        invalid(&format!("[metadata.annotations[{RANGES}]: Forbidden: may only be used when `type` is 'LoadBalancer', metadata.annotations[{RANGES}]: Invalid value: \"nope\": {NOT_CIDR}]"))
    );
    // The field wins over the annotation.
    accepted(ann("nope", lb(json!(["10.0.0.0/8"])))).await;
    // An unchanged annotation is not checked again.
    let mut old = stored(
        json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": true,
        "externalTrafficPolicy": "Cluster", "ports": [{"port": 443, "protocol": "TCP", "targetPort": 443, "nodePort": 30443}]}),
    );
    old["metadata"]["annotations"] = json!({RANGES: "nope"});
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"tier": "edge"});
    accepted(update("", "services", "", old.clone(), new.clone())).await;
    new["metadata"]["annotations"][RANGES] = json!("nope,10.0.0.0/8");
    assert_eq!(
        message(update("", "services", "", old, new)).await,
        invalid(&format!(
            "metadata.annotations[{RANGES}]: Invalid value: \"nope\": {NOT_CIDR}"
        ))
    );
}

#[tokio::test]
async fn other_service_rules() {
    let port = json!([{"port": 80}]);
    assert_eq!(
        message(svc(json!({"ports": port, "trafficDistribution": "Nearest"}))).await,
        invalid("spec.trafficDistribution: Unsupported value: \"Nearest\": supported values: \"PreferClose\", \"PreferSameZone\", \"PreferSameNode\"")
    );
    assert_eq!(
        message(svc(json!({"ports": port, "sessionAffinity": "ClientIP",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}}}))).await,
        invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400")
    );
    assert_eq!(
        message(svc(json!({"ports": port, "healthCheckNodePort": 30100}))).await,
        invalid("spec.healthCheckNodePort: Invalid value: 30100: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'")
    );
    let meta = json!({"name": "web", "annotations": {"service.kubernetes.io/topology-aware-hints": "Auto",
        "service.kubernetes.io/topology-mode": "Disabled"}});
    assert_eq!(
        message(create("", "services", "default", service(meta, json!({"ports": port})))).await,
        invalid("metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: \"Disabled\": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified")
    );
    // kube 1.34 no longer refuses the kubelet port on LoadBalancers.
    accepted(svc(
        json!({"type": "LoadBalancer", "ports": [{"port": 10250}]}),
    ))
    .await;
}

#[tokio::test]
async fn service_updates() {
    let old = stored(json!({}));
    // A changed cluster IP is reported with the other errors, as
    // kube's ValidateServiceUpdate does.
    let mut new = old.clone();
    new["spec"]["clusterIP"] = json!("10.96.0.11");
    new["spec"].as_object_mut().unwrap().remove("clusterIPs");
    new["spec"]["ports"][0]["name"] = json!("Web");
    assert_eq!(
        message(update("", "services", "", old.clone(), new)).await,
        invalid("[spec.clusterIPs[0]: Invalid value: [\"10.96.0.11\"]: may not change once set, spec.ports[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]")
    );
    // A PUT that omits the allocated IPs keeps them.
    let mut new = old.clone();
    for k in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
        new["spec"].as_object_mut().unwrap().remove(k);
    }
    accepted(update("", "services", "", old, new)).await;

    let lb = stored(
        json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": true,
        "externalTrafficPolicy": "Local", "healthCheckNodePort": 30100, "loadBalancerClass": "example.com/a",
        "ports": [{"port": 443, "protocol": "TCP", "targetPort": 443, "nodePort": 30443}]}),
    );
    let mut new = lb.clone();
    new["spec"]["loadBalancerClass"] = json!("example.com/b");
    new["spec"]["healthCheckNodePort"] = json!(30200);
    assert_eq!(
        message(update("", "services", "", lb.clone(), new)).await,
        invalid("[spec.loadBalancerClass: Invalid value: \"example.com/b\": may not change once set, spec.healthCheckNodePort: Forbidden: field is immutable]")
    );
    let mut new = lb.clone();
    new["spec"]
        .as_object_mut()
        .unwrap()
        .remove("healthCheckNodePort");
    accepted(update("", "services", "", lb, new)).await;
}

#[tokio::test]
async fn load_balancer_status() {
    let lb = stored(
        json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": true,
        "externalTrafficPolicy": "Cluster", "ports": [{"port": 443, "protocol": "TCP", "targetPort": 443, "nodePort": 30443}]}),
    );
    let mut new = lb.clone();
    new["status"] = json!({"loadBalancer": {"ingress": [
        {"ip": "1.2.3", "ipMode": "VIP"}, {"hostname": "lb.example.com", "ipMode": "VIP"},
        {"ip": "203.0.113.9", "ipMode": "Direct"}, {"hostname": "203.0.113.10"}, {"hostname": "Bad_Host"},
        {"ip": "203.0.113.11", "ipMode": "Proxy", "hostname": "lb.example.com"}]}});
    assert_eq!(
        message(update("", "services", "status", lb.clone(), new)).await,
        invalid(&format!("[status.loadBalancer.ingress[0].ip: Invalid value: \"1.2.3\": {NOT_IP}, status.loadBalancer.ingress[1].ipMode: Forbidden: may not be specified when `ip` is not set, status.loadBalancer.ingress[2].ipMode: Unsupported value: \"Direct\": supported values: \"Proxy\", \"VIP\", status.loadBalancer.ingress[3].hostname: Invalid value: \"203.0.113.10\": must be a DNS name, not an IP address, status.loadBalancer.ingress[4].hostname: Invalid value: \"Bad_Host\": {SUBDOMAIN}]"))
    );
    let mut new = lb.clone();
    new["status"] = json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.9", "ipMode": "VIP"}]}});
    accepted(update("", "services", "status", lb, new)).await;

    let old = stored(json!({}));
    let mut new = old.clone();
    new["status"] = json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.9", "ipMode": "VIP"}]}});
    assert_eq!(
        message(update("", "services", "status", old, new)).await,
        invalid("status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'")
    );
}

#[tokio::test]
async fn valid_services() {
    // Dual-stack: validation accepts it (the single-stack allocator is what
    // refuses the IPv6 family).
    accepted(svc(
        json!({"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}],
        "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10", "fd00:10:96::a"],
        "ipFamilies": ["IPv4", "IPv6"], "ipFamilyPolicy": "RequireDualStack",
        "trafficDistribution": "PreferSameZone"}),
    ))
    .await;
    accepted(create("", "services", "default", service(
        json!({"name": "edge", "annotations": {RANGES: "10.0.0.0/8, 192.168.0.0/16"}}),
        json!({"type": "LoadBalancer", "ports": [{"port": 443, "targetPort": 8443}],
            "loadBalancerSourceRanges": ["203.0.113.0/24", "2001:db8::/32"], "externalTrafficPolicy": "Local",
            "externalIPs": ["198.51.100.7", "2001:db8::7"], "loadBalancerClass": "example.com/lb"}),
    ))).await;
    accepted(svc(json!({"clusterIP": "None", "ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv4", "IPv6"],
        "ports": [{"port": 5432}]}))).await;
    accepted(svc(json!({"ports": [{"port": 80}], "externalIPs": ["010.1.2.3"], "trafficDistribution": "PreferSameNode"}))).await;
    let o = admitted(svc(
        json!({"ports": [{"port": 80}], "clusterIP": "10.96.0.12"}),
    ))
    .await;
    assert_eq!(o["spec"]["clusterIP"], "10.96.0.12");
}

#[tokio::test]
async fn endpoints_special_ips() {
    let ep = |subsets: Value| json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "default"}, "subsets": subsets});
    let bad = ep(
        json!([{"addresses": [{"ip": "127.0.0.1"}, {"ip": "169.254.169.254"}, {"ip": "010.1.2.3"}],
        "notReadyAddresses": [{"ip": "fe80::1"}, {"ip": "0.0.0.0"}], "ports": [{"port": 80, "protocol": "TCP"}]}]),
    );
    assert_eq!(
        message(create("", "endpoints", "default", bad.clone())).await,
        "Endpoints \"web\" is invalid: [subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128), subsets[0].addresses[1].ip: Invalid value: \"169.254.169.254\": may not be in the link-local range (169.254.0.0/16, fe80::/10), subsets[0].notReadyAddresses[0].ip: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10), subsets[0].notReadyAddresses[1].ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)]"
    );
    // Unchanged subsets are not checked again on update.
    let mut old = bad.clone();
    old["metadata"]["resourceVersion"] = json!("3");
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"app": "web"});
    accepted(update("", "endpoints", "", old, new)).await;
    accepted(create(
        "",
        "endpoints",
        "default",
        ep(
            json!([{"addresses": [{"ip": "10.244.1.5"}, {"ip": "fd00:10:244::5"}],
        "ports": [{"port": 80}]}]),
        ),
    ))
    .await;
}

fn slice(ty: &str, endpoints: Value) -> Value {
    json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "namespace": "default"}, "addressType": ty, "endpoints": endpoints})
}

fn es_invalid(body: &str) -> String {
    format!("EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: {body}")
}

#[tokio::test]
async fn endpoint_slice_addresses() {
    let v4 = slice(
        "IPv4",
        json!([{"addresses": ["10.1.2.3", "fd00::1", "127.0.0.1", "1.2.3", "010.1.2.3"]}]),
    );
    assert_eq!(
        message(create(ES, "endpointslices", "default", v4)).await,
        es_invalid(&format!("[endpoints[0].addresses: Invalid value: \"fd00::1\": must be an IPv4 address, endpoints[0].addresses[2]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128), endpoints[0].addresses[3]: Invalid value: \"1.2.3\": {NOT_IP}]"))
    );
    let v6 = slice(
        "IPv6",
        json!([{"addresses": ["2001:db8::1", "2001:DB8::2", "::ffff:10.0.0.1", "10.0.0.1", "fe80::1"]}]),
    );
    assert_eq!(
        message(create(ES, "endpointslices", "default", v6)).await,
        es_invalid("[endpoints[0].addresses[1]: Invalid value: \"2001:DB8::2\": must be in canonical form (\"2001:db8::2\"), endpoints[0].addresses[2]: Invalid value: \"::ffff:10.0.0.1\": must not be an IPv4-mapped IPv6 address, endpoints[0].addresses: Invalid value: \"10.0.0.1\": must be an IPv6 address, endpoints[0].addresses[4]: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)]")
    );
    // Unchanged endpoints are not checked again on update.
    let mut old = slice("IPv4", json!([{"addresses": ["127.0.0.1"]}]));
    old["metadata"]["resourceVersion"] = json!("4");
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"kubernetes.io/service-name": "web"});
    accepted(update(ES, "endpointslices", "", old, new)).await;
    accepted(create(ES, "endpointslices", "default", slice("IPv6", json!([
        {"addresses": ["fd00:10:244:1::5"], "conditions": {"ready": true}, "nodeName": "node-1",
            "zone": "zone-a", "hints": {"forZones": [{"name": "zone-a"}], "forNodes": [{"name": "node-1"}]}},
        {"addresses": ["2001:db8::7"]}])))).await;
}

#[tokio::test]
async fn endpoint_slice_node_hints() {
    let s = slice(
        "IPv4",
        json!([{"addresses": ["10.1.2.3"],
        "hints": {"forNodes": [{"name": "node-1"}, {"name": "node-1"}, {"name": "Node_2"}]}}]),
    );
    assert_eq!(
        message(create(ES, "endpointslices", "default", s)).await,
        es_invalid(&format!("[endpoints[0].hints.forNodes[1].name: Duplicate value: \"node-1\", endpoints[0].hints.forNodes[2].name: Invalid value: \"Node_2\": {SUBDOMAIN}]"))
    );
    let nodes: Vec<Value> = (0..9)
        .map(|i| json!({"name": format!("node-{i}")}))
        .collect();
    let s = slice(
        "IPv4",
        json!([{"addresses": ["10.1.2.3"], "hints": {"forNodes": nodes}}]),
    );
    assert_eq!(
        message(create(ES, "endpointslices", "default", s)).await,
        es_invalid("endpoints[0].hints.forNodes: Too many: 9: must have at most 8 items")
    );
}
