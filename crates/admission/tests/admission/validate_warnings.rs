//! Warnings on writes: kube's registry strategies' `WarningsOnCreate` /
//! `WarningsOnUpdate` (pod warnings for Pods and every pod template, and
//! the other kinds' own), with kube's exact text.

use keelson_api::{AdmissionApi, AdmissionRequest, Operation};
use serde_json::{json, Value};

use crate::support::{admission, create};

fn update(group: &str, resource: &str, sub: &str, new: Value, old: Value) -> AdmissionRequest {
    let mut req = create(group, resource, "default", new);
    req.operation = Operation::Update;
    req.subresource = sub.into();
    req.old_object = Some(old);
    req
}

/// The warnings of an admitted write.
async fn warned(req: AdmissionRequest) -> Vec<String> {
    let adm = admission().await;
    match adm.admit(req).await {
        Ok(resp) => resp.warnings,
        Err(e) => panic!("refused: {}", e.message),
    }
}

/// The admitted object (defaulted, as the store holds it).
async fn admitted(req: AdmissionRequest) -> Value {
    let adm = admission().await;
    adm.admit(req).await.unwrap().object.unwrap()
}

fn pod_spec() -> Value {
    json!({
        "nodeSelector": {"beta.kubernetes.io/os": "linux", "kubernetes.io/os": "linux"},
        "terminationGracePeriodSeconds": -5,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchExpressions": [{"key": "beta.kubernetes.io/arch", "operator": "Exists"}]}}]
            },
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname"}]}
        },
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "failure-domain.beta.kubernetes.io/region", "whenUnsatisfiable": "DoNotSchedule"}],
        "volumes": [{"name": "repo", "gitRepo": {"repository": "https://example.com/r.git"}}],
        "imagePullSecrets": [{"name": "reg"}, {"name": "reg"}],
        "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}, {"ip": "10.0.0.1", "hostnames": ["b"]}],
        "containers": [
            {"name": "web", "image": "nginx",
             "ports": [{"containerPort": 80}, {"containerPort": 80}, {"containerPort": 81, "hostIP": "127.0.0.1"}],
             "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}, {"name": "B", "value": "x"}, {"name": "B", "value": "$(B)y"}],
             "resources": {"requests": {"memory": "100m"}, "limits": {"memory": "1.5"}}},
            {"name": "side", "image": "busybox", "ports": [{"containerPort": 80, "hostPort": 8080}]}
        ]
    })
}

/// Every pod warning, in kube's order, on a Pod (paths from the root).
#[tokio::test]
async fn pod_create_warnings_in_kubes_order() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "my.pod", "annotations": {
            "scheduler.alpha.kubernetes.io/critical-pod": "",
            "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
            "container.seccomp.security.alpha.kubernetes.io/web": "runtime/default"}},
        "spec": pod_spec()});
    let w = warned(create("", "pods", "default", pod)).await;
    let expected = [
        "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
        "spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead",
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key: beta.kubernetes.io/arch is deprecated since v1.14; use \"kubernetes.io/arch\" instead",
        "spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use \"topology.kubernetes.io/region\" instead",
        "spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod",
        "metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the \"priorityClassName\" field instead",
        "spec.volumes[0].gitRepo: deprecated in v1.11",
        "spec.hostAliases[1].ip: duplicate ip \"10.0.0.1\"",
        "spec.imagePullSecrets[1].name: duplicate name \"reg\"",
        "metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the \"seccompProfile\" field instead",
        "metadata.annotations[container.seccomp.security.alpha.kubernetes.io/web]: non-functional in v1.27+; use the \"seccompProfile\" field instead",
        "spec.containers[0].resources.limits[memory]: fractional byte value \"1500m\" is invalid, must be an integer",
        "spec.containers[0].resources.requests[memory]: fractional byte value \"100m\" is invalid, must be an integer",
        "spec.containers[0].env[1]: hides previous definition of \"A\", which may be dropped when using apply",
        "spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]",
        "spec.containers[0].ports[2]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:81 Protocol:TCP HostIP:127.0.0.1}",
        "spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[0]",
        "spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[1]",
        "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod",
    ];
    assert_eq!(w, expected);
}

/// A Pod update has no warnings (kube skips them on that frequent path).
#[tokio::test]
async fn pod_updates_have_no_warnings() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"terminationGracePeriodSeconds": -1, "containers": [{"name": "c", "image": "i"}]}});
    let old = admitted(create("", "pods", "default", pod.clone())).await;
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"a": "b"});
    assert_eq!(
        warned(update("", "pods", "", new, old)).await,
        Vec::<String>::new()
    );
}

fn deployment(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}, "annotations": {
                "container.apparmor.security.beta.kubernetes.io/c": "runtime/default"}},
                "spec": spec}}})
}

/// Templates warn at `spec.template...`, template AppArmor annotations
/// included; the workload's name is checked as a DNS label.
#[tokio::test]
async fn deployment_template_warnings_are_prefixed() {
    let d = deployment(
        "web.v2",
        json!({"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}, {"containerPort": 80}]}]}),
    );
    let w = warned(create("apps", "deployments", "default", d)).await;
    assert_eq!(w, [
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
        "spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the \"appArmorProfile\" field instead",
        "spec.template.spec.containers[0].ports[1]: duplicate port definition with spec.template.spec.containers[0].ports[0]",
    ]);
}

/// An update warns about the template only when it bumps the generation
/// (a spec change; for Deployments an annotation change too).
#[tokio::test]
async fn workload_updates_warn_when_the_spec_changes() {
    let spec =
        json!({"terminationGracePeriodSeconds": -1, "containers": [{"name": "c", "image": "i"}]});
    let old = admitted(create(
        "apps",
        "deployments",
        "default",
        deployment("d", spec),
    ))
    .await;
    let mut same = old.clone();
    same["metadata"]["labels"] = json!({"x": "y"});
    assert_eq!(
        warned(update("apps", "deployments", "", same, old.clone())).await,
        Vec::<String>::new()
    );
    let mut scaled = old.clone();
    scaled["spec"]["replicas"] = json!(3);
    assert_eq!(
        warned(update("apps", "deployments", "", scaled, old.clone())).await,
        [
            "spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; use the \"appArmorProfile\" field instead",
            "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
        ]
    );
    // The status subresource never warns.
    let mut status = old.clone();
    status["status"] = json!({"replicas": 1});
    status["spec"]["replicas"] = json!(4);
    assert_eq!(
        warned(update("apps", "deployments", "status", status, old)).await,
        Vec::<String>::new()
    );
}

/// Jobs, CronJobs, PodTemplates and StatefulSets at their own paths.
#[tokio::test]
async fn other_templates_warn_at_their_paths() {
    let tpl = json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i",
        "resources": {"requests": {"ephemeral-storage": "0.5"}}}]}});
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": tpl.clone()}});
    assert_eq!(
        warned(create("batch", "jobs", "default", job)).await,
        ["spec.template.spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value \"500m\" is invalid, must be an integer"]
    );
    let cj = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": tpl.clone()}}}});
    assert_eq!(
        warned(create("batch", "cronjobs", "default", cj)).await,
        ["spec.jobTemplate.spec.template.spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value \"500m\" is invalid, must be an integer"]
    );
    let pt = json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "pt"},
        "template": {"spec": {"containers": [{"name": "c", "image": "i"}], "imagePullSecrets": [{"name": ""}]}}});
    assert_eq!(
        warned(create("", "podtemplates", "default", pt)).await,
        ["template.spec.imagePullSecrets[0].name: invalid empty name \"\""]
    );
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
        "spec": {"serviceName": "s", "selector": {"matchLabels": {"app": "s"}},
            "template": {"metadata": {"labels": {"app": "s"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1500m"}}}}]}});
    assert_eq!(
        warned(create("apps", "statefulsets", "default", sts)).await,
        ["spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value \"1500m\" is invalid, must be an integer"]
    );
}

/// Service, Ingress, PVC, PV and StorageClass warnings.
#[tokio::test]
async fn other_kinds_warnings() {
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "h",
            "annotations": {"service.kubernetes.io/topology-aware-hints": "auto"}},
        "spec": {"clusterIP": "None", "sessionAffinity": "ClientIP", "externalName": "x.example.com",
            "ports": [{"port": 80}]}});
    assert_eq!(
        warned(create("", "services", "default", svc)).await,
        [
            "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead",
            "spec.SessionAffinity is ignored for headless services",
            "spec.externalName is ignored when spec.type is not \"ExternalName\"",
        ]
    );
    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i",
            "annotations": {"kubernetes.io/ingress.class": "nginx"}},
        "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}});
    assert_eq!(
        warned(create("networking.k8s.io", "ingresses", "default", ing)).await,
        ["annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead"]
    );
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c",
            "annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0.5"}}}});
    assert_eq!(
        warned(create("", "persistentvolumeclaims", "default", pvc)).await,
        [
            "metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use \"storageClassName\" attribute instead",
            "spec.resources.requests[storage]: fractional byte value \"500m\" is invalid, must be an integer",
        ]
    );
    let sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"},
        "provisioner": "a.io/x", "allowedTopologies": [{"matchLabelExpressions": [
            {"key": "failure-domain.beta.kubernetes.io/zone", "values": ["a"]}]}]});
    assert_eq!(
        warned(create("storage.k8s.io", "storageclasses", "", sc)).await,
        ["allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead"]
    );
}
