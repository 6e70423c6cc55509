//! resource.k8s.io (DRA) validation: kube's exact messages for common
//! mistakes, and realistic objects (and updates) that must pass.

use keelson_api::{AdmissionApi, AdmissionRequest, Operation};
use serde_json::{json, Value};

use crate::support::{admission, create, message};

const R: &str = "resource.k8s.io";

fn update(resource: &str, ns: &str, old: Value, new: Value) -> AdmissionRequest {
    let mut req = create(R, resource, ns, new);
    req.operation = Operation::Update;
    req.old_object = Some(old);
    req
}

async fn admits(req: AdmissionRequest) {
    if let Err(e) = admission().await.admit(req).await {
        panic!("refused: {}", e.message);
    }
}

fn claim(devices: Value) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": devices}})
}

fn slice(spec: Value) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "s"}, "spec": spec})
}

fn class(spec: Value) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"}, "spec": spec})
}

#[tokio::test]
async fn claim_request_mistakes() {
    let p = "ResourceClaim.resource.k8s.io \"c\" is invalid: ";
    let c = claim(json!({"requests": [
        {"name": "gpu"},
        {"name": "Bad_Name", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "Some"}},
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "All", "count": 2}}
    ]}));
    assert_eq!(
        message(create(R, "resourceclaims", "default", c)).await,
        format!("{p}[spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required, spec.devices.requests[1].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.devices.requests[1].exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\", spec.devices.requests[2].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All', spec.devices.requests[2]: Duplicate value: \"gpu\"]")
    );
    let c = claim(json!({
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}],
        "constraints": [{"requests": ["nic"], "matchAttribute": "model"}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com"}}]
    }));
    assert_eq!(
        message(create(R, "resourceclaims", "default", c)).await,
        format!("{p}[spec.devices.constraints[0].requests[0]: Invalid value: \"nic\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/', spec.devices.constraints[0].matchAttribute: Invalid value: \"model\": a fully qualified name must be a domain and a name separated by a slash, spec.devices.config[0].opaque.parameters: Required value]")
    );
    let many: Vec<Value> = (0..33)
        .map(|i| json!({"name": format!("r{i}"), "exactly": {"deviceClassName": "c"}}))
        .collect();
    assert_eq!(
        message(create(
            R,
            "resourceclaims",
            "default",
            claim(json!({"requests": many}))
        ))
        .await,
        format!("{p}spec.devices.requests: Too many: 33: must have at most 32 items")
    );
    let c = claim(
        json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": "c",
        "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}, {"operator": "Gt", "effect": "Never"}]}}]}),
    );
    assert_eq!(
        message(create(R, "resourceclaims", "default", c)).await,
        format!("{p}[spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: \"v\": must be empty for operator `Exists`, spec.devices.requests[0].exactly.tolerations[1].operator: Unsupported value: \"Gt\": supported values: \"Equal\", \"Exists\", spec.devices.requests[0].exactly.tolerations[1].effect: Unsupported value: \"Never\": supported values: \"NoExecute\", \"NoSchedule\"]")
    );
}

#[tokio::test]
async fn claim_v1beta1_paths_are_v1s() {
    let c = json!({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "", "allocationMode": "Any"}]}}});
    assert_eq!(
        message(create(R, "resourceclaims", "default", c)).await,
        "ResourceClaim.resource.k8s.io \"c\" is invalid: [spec.devices.requests[0].exactly.deviceClassName: Required value, spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Any\": supported values: \"All\", \"ExactCount\"]"
    );
}

fn good_claim() -> Value {
    claim(json!({
        "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                "selectors": [{"cel": {"expression": "device.attributes[\"gpu.example.com\"].memory >= 8"}}],
                "allocationMode": "ExactCount", "count": 2,
                "tolerations": [{"key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoSchedule"}]}},
            {"name": "nic", "firstAvailable": [
                {"name": "fast", "deviceClassName": "nic.example.com", "allocationMode": "All"},
                {"name": "slow", "deviceClassName": "nic.example.com", "allocationMode": "ExactCount", "count": 1}]}
        ],
        "constraints": [{"requests": ["gpu", "nic/fast"], "matchAttribute": "example.com/numa"}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com",
            "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "Config", "sharing": "TimeSlicing"}}}]
    }))
}

#[tokio::test]
async fn claim_valid_and_updates() {
    admits(create(R, "resourceclaims", "default", good_claim())).await;
    admits(update(
        "resourceclaims",
        "default",
        good_claim(),
        good_claim(),
    ))
    .await;
    let mut changed = good_claim();
    changed["spec"]["devices"]["requests"][0]["exactly"]["count"] = json!(3);
    let msg = message(update("resourceclaims", "default", good_claim(), changed)).await;
    assert!(
        msg.starts_with("ResourceClaim.resource.k8s.io \"c\" is invalid: spec: Invalid value: ")
            && msg.ends_with(": field is immutable"),
        "{msg}"
    );
    // An allocation written through status.
    let mut allocated = good_claim();
    allocated["status"] = json!({
        "allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            {"request": "nic/fast", "driver": "nic.example.com", "pool": "node-1/pci", "device": "nic-0"}],
            "config": [{"source": "FromClaim", "requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "4c3b1a7e-0000-4000-8000-000000000001"}],
        "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
    });
    let mut req = update("resourceclaims", "default", good_claim(), allocated.clone());
    req.subresource = "status".into();
    admits(req).await;
    let mut bad = good_claim();
    bad["status"] = json!({
        "allocation": {"devices": {"results": [{"request": "tpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}},
        "reservedFor": [{"resource": "pods", "name": "p"}],
        "devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-9"}]
    });
    let mut req = update("resourceclaims", "default", good_claim(), bad);
    req.subresource = "status".into();
    assert_eq!(
        message(req).await,
        "ResourceClaim.resource.k8s.io \"c\" is invalid: [status.reservedFor[0].uid: Required value, status.devices[0]: Invalid value: \"gpu.example.com/node-1/gpu-9\": must be an allocated device in the claim, status.allocation.devices.results[0].request: Invalid value: \"tpu\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/']"
    );
    let mut unallocated = good_claim();
    unallocated["status"] = json!({"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]});
    let mut req = update("resourceclaims", "default", good_claim(), unallocated);
    req.subresource = "status".into();
    assert_eq!(
        message(req).await,
        "ResourceClaim.resource.k8s.io \"c\" is invalid: status.reservedFor: Forbidden: may not be specified when `allocated` is not set"
    );
}

#[tokio::test]
async fn claim_template_valid_and_mistakes() {
    let t = |devices: Value| {
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"metadata": {"labels": {"app": "x"}}, "spec": {"devices": devices}}})
    };
    let good = t(good_claim()["spec"]["devices"].clone());
    admits(create(R, "resourceclaimtemplates", "default", good.clone())).await;
    admits(update(
        "resourceclaimtemplates",
        "default",
        good.clone(),
        good,
    ))
    .await;
    let bad =
        t(json!({"requests": [{"name": "gpu", "exactly": {"deviceClassName": "c", "count": -1}}]}));
    assert_eq!(
        message(create(R, "resourceclaimtemplates", "default", bad)).await,
        "ResourceClaimTemplate.resource.k8s.io \"t\" is invalid: spec.spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"
    );
}

#[tokio::test]
async fn device_class_valid_and_mistakes() {
    let good = class(json!({
        "selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
        "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"mode": "shared"}}}]
    }));
    admits(create(R, "deviceclasses", "", good.clone())).await;
    admits(update("deviceclasses", "", good.clone(), good)).await;
    let bad = class(json!({
        "selectors": [{}, {"cel": {"expression": "x".repeat(10 * 1024 + 1)}}],
        "config": [{}, {"opaque": {"driver": "Not_A_Driver", "parameters": ["a"]}}]
    }));
    assert_eq!(
        message(create(R, "deviceclasses", "", bad)).await,
        "DeviceClass.resource.k8s.io \"gpu.example.com\" is invalid: [spec.selectors[0].cel: Required value, spec.selectors[1].cel.expression: Too long: may not be more than 10240 bytes, spec.config[0].opaque: Required value, spec.config[1].opaque.driver: Invalid value: \"Not_A_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.config[1].opaque.parameters: Invalid value: \"<value omitted>\": must be a valid JSON object]"
    );
}

fn good_slice() -> Value {
    slice(json!({
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "devices": [
            {"name": "gpu-0",
             "attributes": {"model": {"string": "A100"}, "gpu.example.com/index": {"int": 0},
                "driverVersion": {"version": "1.2.3-rc.1+build.5"}, "mig": {"bool": false}},
             "capacity": {"memory": {"value": "40Gi"}},
             "taints": [{"key": "gpu.example.com/unhealthy", "value": "ecc", "effect": "NoSchedule"}]},
            {"name": "gpu-1", "attributes": {"model": {"string": "A100"}}}
        ]
    }))
}

#[tokio::test]
async fn slice_valid_and_updates() {
    admits(create(R, "resourceslices", "", good_slice())).await;
    admits(update("resourceslices", "", good_slice(), good_slice())).await;
    let all = slice(json!({"driver": "net.example.com",
        "pool": {"name": "fabric", "generation": 0, "resourceSliceCount": 2},
        "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        "devices": [{"name": "port-0"}]}));
    admits(create(R, "resourceslices", "", all)).await;
    let mut moved = good_slice();
    moved["spec"]["nodeName"] = json!("node-2");
    assert_eq!(
        message(update("resourceslices", "", good_slice(), moved)).await,
        "ResourceSlice.resource.k8s.io \"s\" is invalid: spec.nodeName: Invalid value: \"node-2\": field is immutable"
    );
}

#[tokio::test]
async fn slice_mistakes() {
    let p = "ResourceSlice.resource.k8s.io \"s\" is invalid: ";
    let s = slice(json!({"driver": "gpu.example.com",
        "pool": {"name": "p", "resourceSliceCount": 0, "generation": -1},
        "allNodes": false}));
    assert_eq!(
        message(create(R, "resourceslices", "", s)).await,
        format!("{p}[spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero, spec.pool.generation: Invalid value: -1: must be greater than or equal to zero, spec.allNodes: Invalid value: false: must be either unset or set to true, spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required]")
    );
    let s = slice(json!({"driver": "gpu.example.com",
        "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n", "allNodes": true,
        "devices": [{"name": "d", "attributes": {"a": {}, "v": {"version": "1.2"}, "1x": {"int": 1}}},
                    {"name": "d", "nodeName": "n"}]}));
    assert_eq!(
        message(create(R, "resourceslices", "", s)).await,
        format!("{p}[spec: Invalid value: \"{{`nodeName`, `allNodes`}}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set, spec.devices[0].attributes[a]: Invalid value: \"\": exactly one value must be specified, spec.devices[0].attributes[v].version: Invalid value: \"1.2\": must be a string compatible with semver.org spec 2.0.0, spec.devices[0].attributes: Invalid value: \"1x\": a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*'), spec.devices[1]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec, spec.devices[1]: Duplicate value: \"d\"]")
    );
}
