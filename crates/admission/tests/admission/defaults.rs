//! Defaulting as seen in `kubectl get -o yaml`.

use keelson_api::AdmissionApi;
use serde_json::json;

use crate::support::{admission, create};

#[tokio::test]
async fn pod_defaults() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]},
                                 {"name": "d", "image": "busybox:1.36"}]}});
    let o = adm
        .admit(create("", "pods", "default", obj))
        .await
        .unwrap()
        .object
        .unwrap();
    let spec = &o["spec"];
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["securityContext"], json!({}));
    assert_eq!(spec["enableServiceLinks"], true);
    let c = &spec["containers"][0];
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    assert_eq!(c["imagePullPolicy"], "Always");
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");
}

#[tokio::test]
async fn deployment_defaults() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}});
    let o = adm
        .admit(create("apps", "deployments", "default", obj))
        .await
        .unwrap()
        .object
        .unwrap();
    let spec = &o["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert!(pod.get("enableServiceLinks").is_none());
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
}

#[tokio::test]
async fn job_templates_get_no_restart_policy() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}});
    let o = adm
        .admit(create("batch", "jobs", "default", obj))
        .await
        .unwrap()
        .object
        .unwrap();
    assert_eq!(o["spec"]["template"]["spec"]["restartPolicy"], "Never");
    assert_eq!(o["spec"]["backoffLimit"], 6);
    assert_eq!(o["spec"]["completions"], 1);
}

#[tokio::test]
async fn service_defaults() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443, "targetPort": "https"}]}});
    let o = adm
        .admit(create("", "services", "default", obj))
        .await
        .unwrap()
        .object
        .unwrap();
    let spec = &o["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(
        spec["ports"][0],
        json!({"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80})
    );
    assert_eq!(spec["ports"][1]["targetPort"], "https");
}

#[tokio::test]
async fn namespace_defaults() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}});
    let o = adm
        .admit(create("", "namespaces", "", obj))
        .await
        .unwrap()
        .object
        .unwrap();
    assert_eq!(o["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(o["status"]["phase"], "Active");
    assert_eq!(
        o["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team-a"
    );
}
