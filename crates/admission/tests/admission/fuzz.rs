//! Random mutations of valid objects of many kinds through admission
//! (decoding, defaulting, validation), on create and on update: never a
//! panic, and every refusal is a client error (400 from the decoder, 422
//! from validation), never a 5xx. Deterministic: a fixed-seed xorshift.

use keelson_api::{AdmissionApi, Operation};
use serde_json::{json, Value};

use crate::support::{admission, create};

/// xorshift64*: enough randomness for mutations, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn labels() -> Value {
    json!({"app": "web"})
}

fn pod_spec() -> Value {
    json!({
        "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]},
            {"name": "sidecar", "image": "envoy", "restartPolicy": "Always"}],
        "containers": [{
            "name": "web", "image": "nginx:1.27",
            "ports": [{"name": "http", "containerPort": 80}],
            "env": [{"name": "A", "value": "1"},
                {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}},
            "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]
        }],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cm"}}],
        "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels()}}]
    })
}

fn template() -> Value {
    json!({"metadata": {"labels": labels()}, "spec": pod_spec()})
}

/// (group, resource, namespace, object): one valid object a kind.
fn corpus() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let mut all = builtin_corpus();
    all.extend(crate::validate_kinds::valid_newer_kinds());
    all
}

fn builtin_corpus() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let meta = |name: &str| json!({"name": name, "labels": labels()});
    let mut job_template = template();
    job_template["spec"]["restartPolicy"] = json!("Never");
    vec![
        (
            "",
            "pods",
            "default",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta("p"), "spec": pod_spec()}),
        ),
        (
            "",
            "replicationcontrollers",
            "default",
            json!({"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": meta("rc"), "spec": {"replicas": 1, "selector": labels(), "template": template()}}),
        ),
        (
            "apps",
            "deployments",
            "default",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("d"),
            "spec": {"replicas": 2, "selector": {"matchLabels": labels()}, "template": template(),
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}}}),
        ),
        (
            "apps",
            "statefulsets",
            "default",
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("s"),
            "spec": {"replicas": 1, "serviceName": "s", "selector": {"matchLabels": labels()}, "template": template(),
                "volumeClaimTemplates": [{"metadata": {"name": "claim"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
        ),
        (
            "apps",
            "daemonsets",
            "default",
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta("ds"),
            "spec": {"selector": {"matchLabels": labels()}, "template": template()}}),
        ),
        (
            "batch",
            "jobs",
            "default",
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("j"),
            "spec": {"completions": 3, "parallelism": 2, "completionMode": "Indexed", "backoffLimit": 2,
                "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]},
                "template": job_template.clone()}}),
        ),
        (
            "batch",
            "cronjobs",
            "default",
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("cj"),
            "spec": {"schedule": "*/5 * * * *", "timeZone": "Etc/UTC", "concurrencyPolicy": "Forbid",
                "jobTemplate": {"spec": {"template": job_template}}}}),
        ),
        (
            "autoscaling",
            "horizontalpodautoscalers",
            "default",
            json!({"apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler", "metadata": meta("h"),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "minReplicas": 1, "maxReplicas": 5,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}}),
        ),
        (
            "policy",
            "poddisruptionbudgets",
            "default",
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": meta("pdb"), "spec": {"minAvailable": "50%", "selector": {"matchLabels": labels()}}}),
        ),
        (
            "",
            "services",
            "default",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": meta("svc"),
            "spec": {"type": "LoadBalancer", "selector": labels(), "externalTrafficPolicy": "Local",
                "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "https", "port": 443}]}}),
        ),
        (
            "",
            "endpoints",
            "default",
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("ep"),
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"name": "http", "port": 80}]}]}),
        ),
        (
            "",
            "configmaps",
            "default",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("cm"),
            "data": {"a.conf": "x=1"}, "binaryData": {"b.bin": "AAEC"}}),
        ),
        (
            "",
            "secrets",
            "default",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta("tls"),
            "type": "kubernetes.io/tls", "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"}}),
        ),
        (
            "",
            "namespaces",
            "",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta("ns1")}),
        ),
        (
            "",
            "persistentvolumeclaims",
            "default",
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": meta("pvc"), "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
        ),
        (
            "rbac.authorization.k8s.io",
            "roles",
            "default",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role", "metadata": meta("r"),
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"], "resourceNames": ["p"]}]}),
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            "default",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding", "metadata": meta("rb"),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]}),
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "default",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": meta("ing"), "spec": {"ingressClassName": "nginx",
                "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}],
                "rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
                    "backend": {"service": {"name": "svc", "port": {"number": 80}}}}]}}]}}),
        ),
        (
            "networking.k8s.io",
            "networkpolicies",
            "default",
            json!({"apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy", "metadata": meta("np"),
            "spec": {"podSelector": {"matchLabels": labels()}, "policyTypes": ["Ingress"],
                "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                    "ports": [{"protocol": "TCP", "port": 80, "endPort": 90}]}]}}),
        ),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            "",
            json!({"apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass", "metadata": meta("high"), "value": 1000}),
        ),
        (
            "coordination.k8s.io",
            "leases",
            "default",
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": meta("l"), "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}),
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            "",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": meta("fast"), "provisioner": "example.com/disk", "parameters": {"type": "ssd"}}),
        ),
        (
            "",
            "nodes",
            "",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": meta("n1"),
            "spec": {"podCIDRs": ["10.244.0.0/24"], "providerID": "kind://n1",
                "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4", "pods": "110"}}}),
        ),
        (
            "",
            "resourcequotas",
            "default",
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta("q"),
            "spec": {"hard": {"pods": "10", "requests.cpu": "4"}, "scopes": ["NotTerminating"]}}),
        ),
        (
            "",
            "limitranges",
            "default",
            json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": meta("lr"),
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "100m"}},
                {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}}]}}),
        ),
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": meta("vw"),
            "webhooks": [{"name": "pods.check.example.com", "sideEffects": "None",
                "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
                "clientConfig": {"service": {"name": "hook", "namespace": "system", "path": "/validate"}}}]}),
        ),
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            "",
            json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": meta("mw"),
            "webhooks": [{"name": "inject.example.com", "sideEffects": "NoneOnDryRun",
                "admissionReviewVersions": ["v1"], "reinvocationPolicy": "IfNeeded",
                "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}],
                "clientConfig": {"url": "https://hooks.example.com/mutate"}}]}),
        ),
        (
            "node.k8s.io",
            "runtimeclasses",
            "",
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": meta("gvisor"),
            "handler": "runsc", "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
            "scheduling": {"nodeSelector": {"runtime": "gvisor"},
                "tolerations": [{"key": "runtime", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"}]}}),
        ),
        (
            "resource.k8s.io",
            "resourceclaims",
            "default",
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta("gpu"),
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                    "selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
                    "tolerations": [{"key": "k", "operator": "Exists"}]}},
                {"name": "nic", "firstAvailable": [{"name": "a", "deviceClassName": "nic.example.com"}]}],
                "constraints": [{"requests": ["gpu"], "matchAttribute": "example.com/numa"}],
                "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}}}),
        ),
        (
            "resource.k8s.io",
            "resourceslices",
            "",
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": meta("node-1-gpu"),
            "spec": {"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                "nodeName": "node-1", "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "A100"},
                    "v": {"version": "1.0.0"}}, "capacity": {"memory": {"value": "40Gi"}},
                    "taints": [{"key": "k", "effect": "NoSchedule"}]}]}}),
        ),
        (
            "resource.k8s.io",
            "deviceclasses",
            "",
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta("gpu.example.com"),
            "spec": {"selectors": [{"cel": {"expression": "true"}}],
                "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}}),
        ),
        (
            "apps",
            "deployments",
            "default",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("warned"),
            "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": {"metadata": {"labels": {"app": "w"},
                "annotations": {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}},
                "spec": {"nodeSelector": {"beta.kubernetes.io/os": "linux"}, "terminationGracePeriodSeconds": -1,
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
                    "containers": [{"name": "c", "image": "i", "resources": {"requests": {"memory": "100m"}},
                        "ports": [{"containerPort": 80}, {"containerPort": 80, "hostIP": "1.2.3.4"}],
                        "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "$(A)"}]}]}}}}),
        ),
    ]
}

/// Every JSON pointer in `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        _ => {}
    }
}

fn surprising(rng: &mut Rng) -> Value {
    let long = "x".repeat(300);
    let choices = [
        Value::Null,
        json!(-1),
        json!(0),
        json!(70000),
        json!(i64::MAX),
        json!(1.5),
        json!(""),
        json!("Bad_Name"),
        json!(".."),
        json!("*"),
        json!("-1"),
        json!(long),
        json!(true),
        json!([]),
        json!([null]),
        json!({}),
        json!({"": ""}),
        json!({"a": {"b": [1, "2", {}]}}),
    ];
    choices[rng.below(choices.len())].clone()
}

/// One random change: replace a node, remove it, or duplicate a list item.
fn mutate(obj: &Value, rng: &mut Rng) -> Value {
    let mut out = obj.clone();
    let mut ps = Vec::new();
    pointers(&out, String::new(), &mut ps);
    // Keep type meta: a different kind is another request altogether.
    ps.retain(|p| p != "/apiVersion" && p != "/kind");
    let Some(p) = ps.get(rng.below(ps.len())).cloned() else {
        return out;
    };
    let (parent, last) = p.rsplit_once('/').unwrap_or(("", &p));
    let op = rng.below(3);
    let value = surprising(rng);
    if let Some(target) = out.pointer_mut(parent) {
        match target {
            Value::Object(m) => {
                let key = last.replace("~1", "/").replace("~0", "~");
                if op == 0 {
                    m.remove(&key);
                } else {
                    m.insert(key, value);
                }
            }
            Value::Array(a) => {
                if let Ok(i) = last.parse::<usize>() {
                    match op {
                        0 if i < a.len() => {
                            a.remove(i);
                        }
                        1 if i < a.len() => {
                            let copy = a[i].clone();
                            a.push(copy);
                        }
                        _ if i < a.len() => a[i] = value,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test]
async fn mutations_never_panic_and_answer_client_errors() {
    let adm = admission().await;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut refused = 0;
    let mut admitted = 0;
    for (group, resource, ns, obj) in corpus() {
        let base = adm
            .admit(create(group, resource, ns, obj.clone()))
            .await
            .unwrap_or_else(|e| panic!("valid {resource} refused: {}", e.message))
            .object
            .expect("an admitted object");
        for i in 0..150 {
            let mutated = mutate(&obj, &mut rng);
            let mut req = create(group, resource, ns, mutated.clone());
            if i % 2 == 1 {
                req.operation = Operation::Update;
                req.old_object = Some(base.clone());
            }
            match adm.admit(req).await {
                Ok(_) => admitted += 1,
                Err(e) => {
                    assert!(
                        matches!(e.code, 400 | 403 | 404 | 422),
                        "{resource}: {} {}\n{mutated}",
                        e.code,
                        e.message
                    );
                    refused += 1;
                }
            }
        }
    }
    // The mutations do reach the rules.
    assert!(
        refused > 500 && admitted > 100,
        "refused {refused}, admitted {admitted}"
    );
}
