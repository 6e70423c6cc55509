//! networking.k8s.io validation beyond Ingress and NetworkPolicy:
//! ServiceCIDR, IPAddress and IngressClass parameters, with kube 1.34's
//! messages.

use keelson_api::{AdmissionRequest, Operation};
use serde_json::{json, Value};

use crate::support::{admitted, create, message};

const N: &str = "networking.k8s.io";

fn obj(kind: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "spec": spec})
}

fn update(resource: &str, old: Value, new: Value) -> AdmissionRequest {
    let mut req = create(N, resource, "", new);
    req.operation = Operation::Update;
    req.old_object = Some(old);
    req
}

#[tokio::test]
async fn service_cidr_rules() {
    let sc = |cidrs: Value| obj("ServiceCIDR", "extra", json!({"cidrs": cidrs}));
    let p = "ServiceCIDR.networking.k8s.io \"extra\" is invalid: ";
    let msg = |c: Value| message(create(N, "servicecidrs", "", sc(c)));
    assert_eq!(
        msg(json!([])).await,
        format!("{p}spec.cidrs: Required value: at least one CIDR required")
    );
    assert_eq!(
        msg(json!(["10.0.0.0/24", "10.1.0.0/24", "fd00::/64"])).await,
        format!("{p}spec.cidrs: Invalid value: {{\"CIDRs\":[\"10.0.0.0/24\",\"10.1.0.0/24\",\"fd00::/64\"]}}: may only hold up to 2 values")
    );
    assert_eq!(
        msg(json!(["10.0.0.1/24", "10.1.0.0/24"])).await,
        format!("{p}[spec.cidrs[0]: Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length, spec.cidrs: Invalid value: [\"10.0.0.1/24\",\"10.1.0.0/24\"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64]")
    );
    assert_eq!(
        msg(json!(["FD00::/64", "bogus"])).await,
        format!("{p}[spec.cidrs[0]: Invalid value: \"FD00::/64\": must be in canonical form (\"fd00::/64\"), spec.cidrs[1]: Invalid value: \"bogus\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)]")
    );
    // One family may add the other; nothing else changes.
    let single = sc(json!(["10.0.0.0/24"]));
    admitted(create(N, "servicecidrs", "", single.clone())).await;
    admitted(update(
        "servicecidrs",
        single.clone(),
        sc(json!(["10.0.0.0/24", "fd00::/64"])),
    ))
    .await;
    assert_eq!(
        message(update("servicecidrs", single.clone(), sc(json!(["10.2.0.0/24", "10.3.0.0/24"])))).await,
        format!("{p}[spec.cidrs[0]: Invalid value: \"10.2.0.0/24\": field is immutable, spec.cidrs: Invalid value: [\"10.2.0.0/24\",\"10.3.0.0/24\"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64]")
    );
    assert_eq!(
        message(update("servicecidrs", single, sc(json!(["10.9.0.0/24"])))).await,
        format!("{p}spec.cidrs[0]: Invalid value: \"10.9.0.0/24\": field is immutable")
    );
}

#[tokio::test]
async fn ip_address_rules() {
    let parent =
        json!({"group": "", "resource": "services", "namespace": "default", "name": "kubernetes"});
    let ip = |name: &str, spec: Value| obj("IPAddress", name, spec);
    // IPv6 names are fine; the name must be a canonical IP.
    admitted(create(
        N,
        "ipaddresses",
        "",
        ip("2001:db8::1", json!({"parentRef": parent})),
    ))
    .await;
    for (name, why) in [
        ("10.01.0.1", "must not have leading 0s".to_string()),
        (
            "2001:DB8::1",
            "must be in canonical form (\"2001:db8::1\")".to_string(),
        ),
        (
            "::ffff:10.0.0.1",
            "must not be an IPv4-mapped IPv6 address".to_string(),
        ),
        (
            "web",
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".to_string(),
        ),
    ] {
        assert_eq!(
            message(create(N, "ipaddresses", "", ip(name, json!({"parentRef": parent})))).await,
            format!("IPAddress.networking.k8s.io \"{name}\" is invalid: metadata.name: Invalid value: \"{name}\": {why}")
        );
    }
    let p = "IPAddress.networking.k8s.io \"10.0.0.5\" is invalid: ";
    assert_eq!(
        message(create(N, "ipaddresses", "", ip("10.0.0.5", json!({})))).await,
        format!("{p}spec.parentRef: Required value")
    );
    assert_eq!(
        message(create(N, "ipaddresses", "", ip("10.0.0.5", json!({"parentRef": {"group": "Bad_Group", "namespace": "a/b"}})))).await,
        format!("{p}[spec.parentRef.group: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.parentRef.resource: Required value, spec.parentRef.name: Required value, spec.parentRef.namespace: Invalid value: \"a/b\": may not contain '/']")
    );
    let good = ip("10.0.0.5", json!({"parentRef": parent}));
    let mut moved = good.clone();
    moved["spec"]["parentRef"]["name"] = json!("other");
    assert_eq!(
        message(update("ipaddresses", good, moved)).await,
        format!("{p}spec.parentRef: Invalid value: {{\"Group\":\"\",\"Resource\":\"services\",\"Namespace\":\"default\",\"Name\":\"other\"}}: field is immutable")
    );
}

#[tokio::test]
async fn ingress_class_parameters() {
    let class = |params: Value| {
        obj(
            "IngressClass",
            "nginx",
            json!({"controller": "example.com/ingress", "parameters": params}),
        )
    };
    let p = "IngressClass.networking.k8s.io \"nginx\" is invalid: ";
    assert_eq!(
        message(create(N, "ingressclasses", "", class(json!({"apiGroup": "Example", "kind": "Params",
            "name": "p", "scope": "Namespace", "namespace": "a.b"})))).await,
        format!("{p}[spec.parameters.apiGroup: Invalid value: \"Example\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.parameters.namespace: Invalid value: \"a.b\": must not contain dots]")
    );
    admitted(create(
        N,
        "ingressclasses",
        "",
        class(json!({"apiGroup": "example.com", "kind": "Params",
        "name": "p", "scope": "Namespace", "namespace": "team-a"})),
    ))
    .await;
}

#[tokio::test]
async fn api_service_rules() {
    const A: &str = "apiregistration.k8s.io";
    let svc = |name: &str, spec: Value| {
        json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name}, "spec": spec})
    };
    assert_eq!(
        message(create(A, "apiservices", "", svc("v1.metrics", json!({"group": "metrics.k8s.io", "version": "v1beta1",
            "caBundle": "AAEC", "insecureSkipTLSVerify": true})))).await,
        "APIService.apiregistration.k8s.io \"v1.metrics\" is invalid: [metadata.name: Invalid value: \"v1.metrics\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\", spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, spec.versionPriority: Invalid value: 0: must be positive and less than 1000, spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle, spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify]"
    );
    assert_eq!(
        message(create(A, "apiservices", "", svc("V1.", json!({"version": "V1", "groupPriorityMinimum": 10,
            "versionPriority": 10, "service": {}})))).await,
        "APIService.apiregistration.k8s.io \"V1.\" is invalid: [spec.group: Required value: only v1 may have an empty group and it better be legacy kube, spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'), spec.service.namespace: Required value, spec.service.name: Required value]"
    );
}
