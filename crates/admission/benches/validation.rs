//! Per-kind validation CPU per create: a realistic Deployment and a Pod
//! with 10 containers' worth of fields (ports, env, probes, resources,
//! volume mounts), decoded and defaulted as admission has them when it
//! validates. Run: `cargo bench -p keelson-admission --bench validation`.

use std::time::Instant;

use serde_json::{json, Value};

fn container(i: usize) -> Value {
    json!({
        "name": format!("c{i}"), "image": format!("registry.example.com/app/c{i}:1.2.{i}"),
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/app"], "args": ["--port=8080", "--verbose"],
        "ports": [{"name": format!("http{i}"), "containerPort": 8080 + i, "protocol": "TCP"},
                  {"name": format!("metrics{i}"), "containerPort": 9090 + i, "protocol": "TCP"}],
        "env": [{"name": "MODE", "value": "prod"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}],
        "envFrom": [{"configMapRef": {"name": "app-config"}}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080 + i, "scheme": "HTTP"},
            "initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"tcpSocket": {"port": 8080 + i}, "periodSeconds": 5, "timeoutSeconds": 1,
            "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "config", "mountPath": format!("/etc/c{i}"), "readOnly": true},
                         {"name": "data", "mountPath": format!("/data/c{i}")}],
        "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": true},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"
    })
}

fn pod_spec(containers: usize) -> Value {
    json!({
        "containers": (0..containers).map(container).collect::<Vec<_>>(),
        "volumes": [{"name": "config", "configMap": {"name": "app-config", "defaultMode": 420}},
                    {"name": "data", "emptyDir": {}}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "app", "securityContext": {"runAsUser": 1000, "fsGroup": 2000},
        "schedulerName": "default-scheduler", "enableServiceLinks": true,
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "app", "effect": "NoSchedule"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
            "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}]
    })
}

fn run(name: &str, group: &str, kind: &str, obj: &Value) {
    let iterations = 20_000;
    let errs = keelson_admission::validate_kind_on_create(group, kind, obj);
    assert!(errs.is_empty(), "{name} must be valid: {errs:?}");
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..iterations {
            std::hint::black_box(keelson_admission::validate_kind_on_create(group, kind, obj));
        }
        best = best.min(start.elapsed().as_secs_f64() / iterations as f64);
    }
    println!("{name:<40} {:>8.2} us per validation", best * 1e6);
}

fn main() {
    let labels = json!({"app": "web", "tier": "front"});
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": labels},
        "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec(2)}}
    });
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default", "labels": labels},
        "spec": pod_spec(10)
    });
    run(
        "Deployment (2 containers)",
        "apps",
        "Deployment",
        &deployment,
    );
    run("Pod (10 containers)", "", "Pod", &pod);
}
