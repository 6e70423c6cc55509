//! API versions: a HorizontalPodAutoscaler read and written at
//! `autoscaling/v1` and `v2` (stored at `v2`, converted as kube does),
//! kube's deprecation warnings and `apiserver_requested_deprecated_apis`,
//! `--runtime-config` and `--feature-gates`, all through the real kubectl
//! and raw HTTPS.

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

const V2_HPA: &str = r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: rich
  namespace: default
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 8
  metrics:
  - type: Pods
    pods:
      metric: {name: qps}
      target: {type: AverageValue, averageValue: "10"}
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 55}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 120
      selectPolicy: Min
      policies: [{type: Percent, value: 10, periodSeconds: 60}]
"#;

const V1_HPA: &str = r#"
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: plain
  namespace: default
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
  targetCPUUtilizationPercentage: 70
"#;

/// Both versions of one HPA (kubectl's short name `hpa.v1.autoscaling`
/// loses the version in kubectl's expansion, so the full resource name is
/// used).
fn hpa_versions(c: &Cluster) {
    c.ok(&["create", "deployment", "web", "--image=nginx"]);
    // `kubectl autoscale` creates an HPA; both versions show it.
    c.ok(&[
        "autoscale",
        "deployment",
        "web",
        "--max=5",
        "--cpu-percent=60",
    ]);
    let v1 = json_of(&c.ok(&[
        "get",
        "horizontalpodautoscalers.v1.autoscaling",
        "web",
        "-o",
        "json",
    ]));
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60, "{v1}");
    assert_eq!(v1["spec"]["maxReplicas"], 5);
    // kube's default, in both versions.
    assert_eq!(v1["spec"]["minReplicas"], 1, "{v1}");
    let v2 = json_of(&c.ok(&[
        "get",
        "horizontalpodautoscalers.v2.autoscaling",
        "web",
        "-o",
        "json",
    ]));
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]),
        "{v2}"
    );
    assert!(v2["spec"].get("targetCPUUtilizationPercentage").is_none());
    assert_eq!(v2["spec"]["minReplicas"], 1, "{v2}");

    // Created at v2, read at v1: the CPU target is the v1 field, the rest
    // travels in kube's annotations.
    c.ok_stdin(&["create", "-f", "-"], V2_HPA);
    let v1 = json_of(&c.ok(&[
        "get",
        "horizontalpodautoscalers.v1.autoscaling",
        "rich",
        "-o",
        "json",
    ]));
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 55, "{v1}");
    let ann = &v1["metadata"]["annotations"];
    assert_eq!(
        json_of(
            ann["autoscaling.alpha.kubernetes.io/metrics"]
                .as_str()
                .expect("metrics")
        ),
        json!([{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}}])
    );
    let behavior = ann["autoscaling.alpha.kubernetes.io/behavior"]
        .as_str()
        .expect("behavior");
    assert!(
        behavior.contains(r#""ScaleDown":{"StabilizationWindowSeconds":120,"SelectPolicy":"Min""#),
        "{behavior}"
    );
    // A v1 write keeps what v1 cannot show (the annotations round-trip).
    c.ok(&[
        "patch",
        "horizontalpodautoscalers.v1.autoscaling",
        "rich",
        "--type=merge",
        "-p",
        r#"{"spec":{"targetCPUUtilizationPercentage":75}}"#,
    ]);
    let v2 = json_of(&c.ok(&[
        "get",
        "horizontalpodautoscalers.v2.autoscaling",
        "rich",
        "-o",
        "json",
    ]));
    let metrics = v2["spec"]["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 2, "{v2}");
    assert_eq!(metrics[0]["pods"]["metric"]["name"], "qps");
    assert_eq!(metrics[1]["resource"]["target"]["averageUtilization"], 75);
    assert_eq!(v2["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Min");
    assert!(
        v2["metadata"].get("annotations").is_none(),
        "no round-trip annotation is stored: {v2}"
    );

    // Created at v1, read at v2.
    c.ok_stdin(&["create", "-f", "-"], V1_HPA);
    let v2 = json_of(&c.ok(&[
        "get",
        "horizontalpodautoscalers.v2.autoscaling",
        "plain",
        "-o",
        "json",
    ]));
    assert_eq!(
        v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        70
    );
    // Lists in each version.
    let l1 = json_of(&c.ok(&[
        "get",
        "horizontalpodautoscalers.v1.autoscaling",
        "-o",
        "json",
    ]));
    let l2 = json_of(&c.ok(&[
        "get",
        "horizontalpodautoscalers.v2.autoscaling",
        "-o",
        "json",
    ]));
    assert_eq!(l1["items"].as_array().map(Vec::len), Some(3));
    for item in l1["items"].as_array().expect("items") {
        assert_eq!(item["apiVersion"], "autoscaling/v1");
        assert!(
            item["spec"]["targetCPUUtilizationPercentage"].is_number(),
            "{item}"
        );
    }
    for item in l2["items"].as_array().expect("items") {
        assert!(item["spec"]["metrics"].is_array(), "{item}");
    }
    // The printed table is the same in both versions.
    let t1 = c.ok(&["get", "horizontalpodautoscalers.v1.autoscaling", "plain"]);
    assert!(t1.contains("cpu: <unknown>/70%"), "{t1}");

    // Raw lists and watches in each version (JSON and Protobuf).
    block_on(async {
        let http = c.client();
        let base = format!("{}/apis/autoscaling", c.url);
        let l: Value = http
            .get(format!(
                "{base}/v1/namespaces/default/horizontalpodautoscalers"
            ))
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        assert_eq!(l["apiVersion"], "autoscaling/v1");
        // Items keep Go's field order, without type meta.
        let first: Vec<&String> = l["items"][0].as_object().expect("item").keys().collect();
        assert_eq!(first, ["metadata", "spec", "status"], "{l}");
        assert!(
            l["items"][0]["spec"]["targetCPUUtilizationPercentage"].is_number(),
            "{l}"
        );
        let r = http
            .get(format!(
                "{base}/v1/namespaces/default/horizontalpodautoscalers"
            ))
            .header("Accept", "application/vnd.kubernetes.protobuf")
            .send()
            .await
            .expect("protobuf list");
        assert_eq!(r.status(), 200);
        let bytes = r.bytes().await.expect("body");
        assert!(bytes.starts_with(b"k8s\0"));
        for (version, field) in [("v1", "targetCPUUtilizationPercentage"), ("v2", "metrics")] {
            let mut w = http
                .get(format!(
                    "{base}/{version}/namespaces/default/horizontalpodautoscalers?watch=1&fieldSelector=metadata.name%3Dplain&timeoutSeconds=5"
                ))
                .send()
                .await
                .expect("watch");
            let chunk = tokio::time::timeout(Duration::from_secs(5), w.chunk())
                .await
                .expect("an event in time")
                .expect("chunk")
                .expect("bytes");
            let line = String::from_utf8_lossy(&chunk);
            let ev = json_of(line.lines().next().expect("a line"));
            assert_eq!(ev["type"], "ADDED");
            assert_eq!(ev["object"]["apiVersion"], format!("autoscaling/{version}"));
            assert!(ev["object"]["spec"].get(field).is_some(), "{ev}");
        }
        // A deletecollection at v1 answers the deleted objects at v1.
        let r: Value = http
            .delete(format!(
                "{base}/v1/namespaces/default/horizontalpodautoscalers"
            ))
            .send()
            .await
            .expect("deletecollection")
            .json()
            .await
            .expect("json");
        let items = r["items"].as_array().expect("items");
        assert_eq!(items.len(), 3, "{r}");
        assert_eq!(r["apiVersion"], "autoscaling/v1", "{r}");
        for item in items {
            assert!(
                item["spec"]["targetCPUUtilizationPercentage"].is_number(),
                "{item}"
            );
            assert!(item["spec"].get("metrics").is_none(), "{item}");
        }
    });
}

#[test]
fn hpa_at_both_versions_embedded() {
    hpa_versions(&Cluster::start(Mode::Embedded));
}

#[test]
fn hpa_at_both_versions_distributed() {
    hpa_versions(&Cluster::start(Mode::Distributed));
}

#[test]
fn deprecation_warnings_and_metric() {
    let c = Cluster::start(Mode::Embedded);
    let out = c.kubectl(&["get", "endpoints"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
        ),
        "{stderr}"
    );
    let out = c.kubectl(&["get", "componentstatuses"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"),
        "{stderr}"
    );
    // Not deprecated: no warning.
    let out = c.kubectl(&["get", "endpointslices"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("deprecated"));
    block_on(async {
        let text = c
            .client()
            .get(format!("{}/metrics", c.url))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        assert!(
            text.contains("# TYPE apiserver_requested_deprecated_apis gauge"),
            "{text}"
        );
        assert!(
            text.contains(r#"apiserver_requested_deprecated_apis{group="",removed_release="",resource="endpoints",subresource="",version="v1"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"apiserver_requested_deprecated_apis{group="",removed_release="",resource="componentstatuses",subresource="",version="v1"} 1"#),
            "{text}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("apiserver_requested_deprecated_apis{")
                    && l.contains(r#"resource="endpointslices""#)),
            "{text}"
        );
    });
}

#[test]
fn runtime_config_disables_versions_and_resources() {
    let c = Cluster::start_with(
        Mode::Embedded,
        &[
            "--runtime-config",
            "batch/v1=false,apps/v1/deployments=false",
        ],
    );
    let resources = c.ok(&["api-resources"]);
    assert!(!resources.contains("cronjobs"), "{resources}");
    assert!(!resources.contains("batch/v1"), "{resources}");
    assert!(!resources.contains("deployments"), "{resources}");
    assert!(resources.contains("replicasets"), "{resources}");
    let versions = c.ok(&["api-versions"]);
    assert!(!versions.contains("batch/v1"), "{versions}");
    let err = c.fails(&["get", "jobs"], None);
    assert!(
        err.contains(r#"the server doesn't have a resource type "jobs""#),
        "{err}"
    );
    block_on(async {
        let r = c
            .client()
            .get(format!("{}/apis/batch/v1/namespaces/default/jobs", c.url))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 404);
        let r = c
            .client()
            .get(format!(
                "{}/apis/apps/v1/namespaces/default/deployments",
                c.url
            ))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 404);
        let r = c
            .client()
            .get(format!("{}/openapi/v3/apis/batch/v1", c.url))
            .send()
            .await
            .expect("openapi");
        assert_eq!(r.status(), 404);
    });
}

const V1BETA1_VAC: &str = r#"
apiVersion: storage.k8s.io/v1beta1
kind: VolumeAttributesClass
metadata:
  name: gold
driverName: csi.example.com
parameters:
  iops: "3000"
"#;

const VAC_WARNING: &str = "Warning: storage.k8s.io/v1beta1 VolumeAttributesClass is deprecated in v1.34+, unavailable in v1.37+; use storage.k8s.io/v1 VolumeAttributesClass";

/// `--runtime-config` turns on beta versions kube-apiserver 1.34 serves off
/// by default: discovery lists them, a VolumeAttributesClass written at
/// `v1beta1` reads back at `v1` and `v1beta1`, kubectl prints kube's
/// deprecation warning; without the flag `v1beta1` is a 404.
#[test]
fn runtime_config_enables_beta_versions() {
    let c = Cluster::start_with(
        Mode::Embedded,
        &[
            "--runtime-config",
            "storage.k8s.io/v1beta1=true,networking.k8s.io/v1beta1=true",
        ],
    );
    let versions = c.ok(&["api-versions"]);
    let lines: Vec<&str> = versions.lines().collect();
    for gv in [
        "storage.k8s.io/v1beta1",
        "networking.k8s.io/v1beta1",
        "storage.k8s.io/v1",
    ] {
        assert!(lines.contains(&gv), "{gv} missing: {versions}");
    }
    assert!(!lines.contains(&"resource.k8s.io/v1beta1"), "{versions}");

    let out = c.kubectl_stdin(&["apply", "-f", "-"], Some(V1BETA1_VAC));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("volumeattributesclass.storage.k8s.io/gold created"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains(VAC_WARNING), "{stderr}");

    let v1 = json_of(&c.ok(&[
        "get",
        "volumeattributesclasses.v1.storage.k8s.io",
        "gold",
        "-o",
        "json",
    ]));
    assert_eq!(v1["apiVersion"], "storage.k8s.io/v1");
    assert_eq!(v1["driverName"], "csi.example.com");
    assert_eq!(v1["parameters"], json!({"iops": "3000"}));

    let out = c.kubectl(&[
        "get",
        "volumeattributesclasses.v1beta1.storage.k8s.io",
        "gold",
        "-o",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let beta = json_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(beta["apiVersion"], "storage.k8s.io/v1beta1");
    assert_eq!(beta["kind"], "VolumeAttributesClass");
    assert_eq!(beta["parameters"], json!({"iops": "3000"}));
    assert_eq!(beta["metadata"]["uid"], v1["metadata"]["uid"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(VAC_WARNING));
    // A v1 read is not warned about.
    let out = c.kubectl(&["get", "volumeattributesclasses.v1.storage.k8s.io", "gold"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("deprecated"));

    block_on(async {
        let list: Value = c
            .client()
            .get(format!(
                "{}/apis/storage.k8s.io/v1beta1/volumeattributesclasses",
                c.url
            ))
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        assert_eq!(list["apiVersion"], "storage.k8s.io/v1beta1");
        assert_eq!(list["kind"], "VolumeAttributesClassList");
        // Items without type meta, as kube lists built-ins.
        assert_eq!(list["items"][0]["metadata"]["name"], "gold");
        assert_eq!(list["items"][0]["parameters"], json!({"iops": "3000"}));
        assert!(list["items"][0].get("apiVersion").is_none(), "{list}");
        let r = c
            .client()
            .get(format!("{}/openapi/v3/apis/storage.k8s.io/v1beta1", c.url))
            .send()
            .await
            .expect("openapi");
        assert_eq!(r.status(), 200);
        // Protobuf, as kube: the runtime.Unknown envelope of the v1beta1 kind.
        let r = c
            .client()
            .get(format!(
                "{}/apis/storage.k8s.io/v1beta1/volumeattributesclasses/gold",
                c.url
            ))
            .header("Accept", "application/vnd.kubernetes.protobuf")
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200);
        let body = r.bytes().await.expect("body");
        assert!(body.starts_with(b"k8s\0"), "{body:?}");
        let text = String::from_utf8_lossy(&body);
        assert!(
            text.contains("storage.k8s.io/v1beta1") && text.contains("csi.example.com"),
            "{text}"
        );
    });

    // An IPAddress at v1beta1 (same schema as v1), warned about.
    let ip = "apiVersion: networking.k8s.io/v1beta1\nkind: IPAddress\nmetadata:\n  name: 10.96.0.77\nspec:\n  parentRef: {group: \"\", resource: services, namespace: default, name: kubernetes}\n";
    let out = c.kubectl_stdin(&["create", "-f", "-"], Some(ip));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Warning: networking.k8s.io/v1beta1 IPAddress is deprecated in v1.34+, unavailable in v1.37+"),
        "{stderr}"
    );

    let plain = Cluster::start(Mode::Embedded);
    let versions = plain.ok(&["api-versions"]);
    assert!(!versions.contains("v1beta1"), "{versions}");
    let err = plain.fails(&["apply", "-f", "-"], Some(V1BETA1_VAC));
    assert!(
        err.contains(
            r#"no matches for kind "VolumeAttributesClass" in version "storage.k8s.io/v1beta1""#
        ),
        "{err}"
    );
    block_on(async {
        let r = plain
            .client()
            .get(format!(
                "{}/apis/storage.k8s.io/v1beta1/volumeattributesclasses",
                plain.url
            ))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 404);
    });
}

/// `keelson` with `args`: it must refuse to start; its stderr.
fn refuses_to_start(args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_keelson"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--secure-port", "0"])
        .args(args)
        .output()
        .expect("run keelson");
    assert!(!out.status.success(), "keelson started with {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bad_flags_stop_the_start() {
    let e = refuses_to_start(&["--runtime-config", "apps/v7=true"]);
    assert!(
        e.contains("group version apps/v7 that has not been registered"),
        "{e}"
    );
    let e = refuses_to_start(&["--runtime-config", "storage.k8s.io/v1alpha1=true"]);
    assert!(
        e.contains("Keelson has no data for storage.k8s.io/v1alpha1"),
        "{e}"
    );
    let e = refuses_to_start(&["--runtime-config", "batch/v1=perhaps"]);
    assert!(
        e.contains(r#"invalid value of batch/v1: perhaps, err: strconv.ParseBool: parsing "perhaps": invalid syntax"#),
        "{e}"
    );
    let e = refuses_to_start(&["--feature-gates", "NoSuchGate=true"]);
    assert!(e.contains("unrecognized feature gate: NoSuchGate"), "{e}");
}

/// A LeaseCandidate is validated as kube 1.34 validates it, through the
/// real kubectl against a server that serves `coordination.k8s.io/v1beta1`.
#[test]
fn lease_candidates_are_validated() {
    let c = Cluster::start_with(
        Mode::Embedded,
        &["--runtime-config", "coordination.k8s.io/v1beta1=true"],
    );
    let lc = |spec: &str| {
        format!(
            "apiVersion: coordination.k8s.io/v1beta1\nkind: LeaseCandidate\nmetadata:\n  name: sched-1\n  namespace: default\nspec:\n{spec}"
        )
    };
    let bad = lc("  leaseName: kube-scheduler\n  binaryVersion: \"1.33.0\"\n  emulationVersion: \"1.34.0\"\n  strategy: Newest\n");
    let out = c.kubectl_stdin(&["create", "-f", "-"], Some(&bad));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("The LeaseCandidate \"sched-1\" is invalid: \n* spec.binaryVersion: Invalid value: \"1.33.0\": must be greater than or equal to `emulationVersion`\n* spec.strategy.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\""),
        "{stderr}"
    );
    let good = lc("  leaseName: kube-scheduler\n  binaryVersion: \"1.34.0\"\n  emulationVersion: \"1.34.0\"\n  strategy: OldestEmulationVersion\n");
    let out = c.kubectl_stdin(&["create", "-f", "-"], Some(&good));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = c.kubectl(&[
        "patch",
        "leasecandidates.v1beta1.coordination.k8s.io",
        "sched-1",
        "--type=merge",
        "-p",
        r#"{"spec":{"leaseName":"other"}}"#,
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("spec.leaseName: Invalid value: \"other\": field is immutable"),
        "{stderr}"
    );
}
