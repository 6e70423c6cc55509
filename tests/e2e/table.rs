//! Server-side printing (`as=Table`) and metadata-only views
//! (`as=PartialObjectMetadata[List]`) in both modes: the installed
//! kubectl's table output, and the raw responses.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

const NS: &str = "tbl";

const OBJECTS: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: tbl
---
apiVersion: v1
kind: Pod
metadata:
  name: web-pod
  namespace: tbl
  labels: {app: web}
spec:
  nodeName: node1
  containers:
  - name: c
    image: busybox:1.36
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: tbl
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx:1.27
---
apiVersion: v1
kind: Service
metadata:
  name: svc
  namespace: tbl
spec:
  selector: {app: web}
  ports:
  - port: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
  namespace: tbl
data: {a: b}
---
apiVersion: v1
kind: Event
metadata:
  name: ev1
  namespace: tbl
involvedObject: {kind: Pod, name: web-pod, namespace: tbl}
reason: Scheduled
message: hello table
type: Normal
count: 3
firstTimestamp: "2020-01-01T00:00:00Z"
lastTimestamp: "2020-01-01T00:00:00Z"
source: {component: default-scheduler}
"#;

const TABLE: &str = "application/json;as=Table;g=meta.k8s.io;v=v1";

/// The whitespace-separated header of kubectl's table output.
fn header(out: &str) -> Vec<String> {
    out.lines()
        .next()
        .unwrap_or("")
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The line of `out` that starts with `name` (after optional columns).
fn row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().any(|w| w == name))
        .unwrap_or_else(|| panic!("no row {name}:\n{out}"))
}

struct Resp {
    code: u16,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

fn get(c: &Cluster, path: &str, accept: &str) -> Resp {
    let http = c.client();
    let url = format!("{}{path}", c.url);
    block_on(async move {
        let r = http
            .get(url)
            .header("accept", accept)
            .send()
            .await
            .expect("request");
        Resp {
            code: r.status().as_u16(),
            body: r.text().await.expect("body"),
        }
    })
}

/// Give the pod a running, restarted container through `/status`.
fn run_pod(c: &Cluster) {
    let http = c.client();
    let url = format!("{}/api/v1/namespaces/{NS}/pods/web-pod/status", c.url);
    let patch = json!({"status": {
        "phase": "Running",
        "podIP": "10.1.2.3",
        "podIPs": [{"ip": "10.1.2.3"}],
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [{
            "name": "c", "image": "busybox:1.36", "imageID": "", "ready": true, "started": true,
            "restartCount": 2,
            "state": {"running": {"startedAt": "2020-01-01T00:00:00Z"}},
            "lastState": {"terminated": {"exitCode": 1, "startedAt": "2020-01-01T00:00:00Z", "finishedAt": "2020-01-01T00:00:00Z"}}
        }]
    }});
    let code = block_on(async move {
        let r = http
            .patch(url)
            .header("content-type", "application/merge-patch+json")
            .body(patch.to_string())
            .send()
            .await
            .expect("request");
        let code = r.status().as_u16();
        assert_eq!(code, 200, "{}", r.text().await.unwrap_or_default());
        code
    });
    assert_eq!(code, 200);
}

fn kubectl_output(c: &Cluster) {
    // get pods: kube's columns and the pod's status.
    let out = c.ok(&["get", "pods", "-n", NS]);
    assert_eq!(
        header(&out),
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{out}"
    );
    let r = row(&out, "web-pod");
    assert!(r.contains("1/1"), "{out}");
    assert!(r.contains("Running"), "{out}");
    assert!(r.contains(" 2 (") && r.contains(" ago)"), "{out}");

    // -o wide: the priority-1 columns.
    let out = c.ok(&["get", "pods", "-n", NS, "-o", "wide"]);
    assert_eq!(
        header(&out),
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES"
        ],
        "{out}"
    );
    let r = row(&out, "web-pod");
    assert!(r.contains("10.1.2.3") && r.contains("node1"), "{out}");
    let words: Vec<&str> = r.split_whitespace().collect();
    assert_eq!(words[words.len() - 2..], ["<none>", "<none>"], "{out}");

    // -A, --show-labels, -L: from the rows' PartialObjectMetadata.
    let out = c.ok(&["get", "pods", "-A", "--show-labels", "-L", "app"]);
    assert_eq!(
        header(&out),
        [
            "NAMESPACE",
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "APP",
            "LABELS"
        ],
        "{out}"
    );
    let r = row(&out, "web-pod");
    assert!(r.starts_with("tbl "), "{out}");
    assert!(
        r.contains(" web ") && r.trim_end().ends_with("app=web"),
        "{out}"
    );

    // Several types at once.
    let out = c.ok(&["get", "deploy,svc,cm", "-n", NS]);
    assert!(
        out.contains("NAME") && out.contains("UP-TO-DATE") && out.contains("AVAILABLE"),
        "{out}"
    );
    let dep = row(&out, "deployment.apps/web");
    assert!(dep.contains("0/2"), "{out}");
    let svc = row(&out, "service/svc");
    assert!(svc.contains("ClusterIP") && svc.contains("80/TCP"), "{out}");
    assert!(out.contains("TYPE") && out.contains("CLUSTER-IP") && out.contains("PORT(S)"));
    let cm = row(&out, "configmap/cm1");
    assert!(cm.split_whitespace().nth(1) == Some("1"), "{out}");
    assert!(out.contains("DATA"), "{out}");

    // get all: the "all" category, each with its printer.
    let out = c.ok(&["get", "all", "-n", NS]);
    row(&out, "pod/web-pod");
    row(&out, "service/svc");
    row(&out, "deployment.apps/web");

    // Namespaces and events.
    let out = c.ok(&["get", "ns"]);
    assert_eq!(header(&out), ["NAME", "STATUS", "AGE"], "{out}");
    assert!(row(&out, "tbl").contains("Active"), "{out}");
    let out = c.ok(&["get", "events", "-n", NS]);
    assert_eq!(
        header(&out),
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{out}"
    );
    let r = row(&out, "pod/web-pod");
    assert!(
        r.contains("Normal") && r.contains("Scheduled") && r.trim_end().ends_with("hello table"),
        "{out}"
    );
    let out = c.ok(&["get", "events", "-n", NS, "-o", "wide"]);
    assert!(
        header(&out).contains(&"COUNT".to_string())
            && row(&out, "ev1").contains("default-scheduler"),
        "{out}"
    );

    // Roles have kube's default table.
    c.ok_stdin(
        &["create", "-f", "-"],
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader, namespace: tbl}\nrules: []\n",
    );
    let out = c.ok(&["get", "roles", "-n", NS]);
    assert_eq!(header(&out), ["NAME", "CREATED AT"], "{out}");
    assert!(row(&out, "reader").contains('T'), "{out}");

    // Cluster-scoped kinds with printers of their own.
    c.ok_stdin(
        &["create", "-f", "-"],
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: tbl-runc}\nhandler: runc\n---\n\
         apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: tbl-high}\nvalue: 1000\npreemptionPolicy: Never\n---\n\
         apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: tbl-hooks}\nwebhooks: []\n",
    );
    let out = c.ok(&["get", "runtimeclass", "tbl-runc"]);
    assert_eq!(header(&out), ["NAME", "HANDLER", "AGE"], "{out}");
    assert_eq!(
        row(&out, "tbl-runc").split_whitespace().nth(1),
        Some("runc")
    );
    let out = c.ok(&["get", "priorityclass", "tbl-high"]);
    assert_eq!(
        header(&out),
        ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
        "{out}"
    );
    let words: Vec<&str> = row(&out, "tbl-high").split_whitespace().collect();
    assert_eq!(
        (words[1], words[2], words[4]),
        ("1000", "false", "Never"),
        "{out}"
    );
    let out = c.ok(&["get", "validatingwebhookconfigurations", "tbl-hooks"]);
    assert_eq!(header(&out), ["NAME", "WEBHOOKS", "AGE"], "{out}");
    assert_eq!(row(&out, "tbl-hooks").split_whitespace().nth(1), Some("0"));
    // ServiceAccounts: kube's SECRETS count.
    c.ok_stdin(
        &["apply", "-f", "-"],
        &format!("apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: tbl-sa, namespace: {NS}}}\nsecrets: [{{name: a}}]\n"),
    );
    let out = c.ok(&["get", "sa", "tbl-sa", "-n", NS]);
    assert_eq!(header(&out), ["NAME", "SECRETS", "AGE"], "{out}");
    assert_eq!(row(&out, "tbl-sa").split_whitespace().nth(1), Some("1"));
    let out = c.ok(&["get", "componentstatuses"]);
    assert_eq!(
        header(&out),
        ["NAME", "STATUS", "MESSAGE", "ERROR"],
        "{out}"
    );
    let words: Vec<&str> = row(&out, "etcd-0").split_whitespace().collect();
    assert_eq!(words[1..], ["Healthy", "ok"], "{out}");
}

/// `kubectl get -w` prints the list, then a row per event.
fn kubectl_watch(c: &Cluster) {
    let mut child = Command::new("kubectl")
        .args(["get", "configmaps", "-n", NS, "-w"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kubectl");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(20))
            .expect("a line from kubectl get -w")
    };
    let first = next();
    assert!(
        first.starts_with("NAME") && first.contains("DATA"),
        "{first}"
    );
    let listed = next();
    assert!(listed.starts_with("cm1 "), "{listed}");
    c.ok_stdin(
        &["create", "-f", "-"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched, namespace: tbl}\ndata: {k1: \"v1\", k2: \"v2\"}\n",
    );
    let mut seen = Vec::new();
    let found = loop {
        let line = next();
        if line.starts_with("watched ") {
            break line;
        }
        seen.push(line);
    };
    // One header only, and the new row's cells.
    assert!(seen.iter().all(|l| !l.starts_with("NAME")), "{seen:?}");
    assert_eq!(found.split_whitespace().nth(1), Some("2"), "{found}");
    let _ = child.kill();
    let _ = child.wait();
}

fn raw_tables(c: &Cluster) {
    let pods = format!("/api/v1/namespaces/{NS}/pods");
    // includeObject: Metadata (default), None, Object.
    let t = get(c, &format!("{pods}/web-pod"), TABLE).json();
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    assert!(t["metadata"]["resourceVersion"].is_string(), "{t}");
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        cols,
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    assert_eq!(t["columnDefinitions"][0]["format"], "name");
    assert_eq!(t["columnDefinitions"][5]["priority"], 1);
    let row = &t["rows"][0];
    assert_eq!(row["cells"][0], "web-pod");
    assert_eq!(row["cells"][1], "1/1");
    assert_eq!(row["cells"][2], "Running");
    assert_eq!(row["cells"][5], "10.1.2.3");
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(row["object"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(row["object"]["metadata"]["labels"]["app"], "web");
    assert!(row["object"].get("spec").is_none());
    let t = get(c, &format!("{pods}?includeObject=None"), TABLE).json();
    assert_eq!(t["rows"][0]["object"], Value::Null);
    let t = get(c, &format!("{pods}?includeObject=Object"), TABLE).json();
    assert_eq!(t["rows"][0]["object"]["kind"], "Pod");
    assert_eq!(t["rows"][0]["object"]["apiVersion"], "v1");
    assert_eq!(t["rows"][0]["object"]["spec"]["nodeName"], "node1");
    let t = get(
        c,
        &format!("{pods}?includeObject=Metadata"),
        "application/json;as=Table;g=meta.k8s.io;v=v1beta1",
    )
    .json();
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(t["rows"][0]["object"]["apiVersion"], "meta.k8s.io/v1beta1");
    let r = get(c, &format!("{pods}?includeObject=Everything"), TABLE);
    assert_eq!(r.code, 400, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"Everything\": must be 'Metadata', 'Object', 'None', or empty"
    );
    // YAML Tables; Protobuf ones are not acceptable.
    let r = get(c, &pods, "application/yaml;as=Table;g=meta.k8s.io;v=v1");
    assert_eq!(r.code, 200);
    let y: Value = serde_yaml::from_str(&r.body).expect("yaml");
    assert_eq!(y["kind"], "Table");
    let r = get(
        c,
        &pods,
        "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
    );
    assert_eq!(r.code, 406, "{}", r.body);

    // A chunked Table list: continue and remainingItemCount.
    for i in 0..3 {
        c.ok_stdin(
            &["create", "-f", "-"],
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: page{i}, namespace: tbl}}\n"
            ),
        );
    }
    let cms = format!("/api/v1/namespaces/{NS}/configmaps");
    let t = get(c, &format!("{cms}?limit=2"), TABLE).json();
    assert_eq!(t["rows"].as_array().unwrap().len(), 2, "{t}");
    let cont = t["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    assert!(
        t["metadata"]["remainingItemCount"].as_u64().unwrap() >= 2,
        "{t}"
    );
    let rv = t["metadata"]["resourceVersion"].clone();
    let mut names: Vec<String> = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cells"][0].as_str().unwrap().to_string())
        .collect();
    let mut next = cont;
    while !next.is_empty() {
        let t = get(c, &format!("{cms}?limit=2&continue={next}"), TABLE).json();
        assert_eq!(t["metadata"]["resourceVersion"], rv, "{t}");
        for r in t["rows"].as_array().unwrap() {
            names.push(r["cells"][0].as_str().unwrap().to_string());
        }
        next = t["metadata"]["continue"].as_str().unwrap_or("").to_string();
    }
    for want in ["cm1", "page0", "page1", "page2"] {
        assert!(names.iter().any(|n| n == want), "{names:?}");
    }

    // A Table watch: column definitions in the first event only.
    let r = get(
        c,
        &format!("{cms}?watch=1&resourceVersion=0&timeoutSeconds=1"),
        TABLE,
    );
    let events: Vec<Value> = r
        .body
        .lines()
        .map(|l| serde_json::from_str(l).expect("event"))
        .collect();
    assert!(events.len() >= 4, "{}", r.body);
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["kind"], "Table");
    assert_eq!(events[0]["object"]["columnDefinitions"][1]["name"], "Data");
    for e in &events[1..] {
        assert_eq!(e["object"]["kind"], "Table", "{e}");
        assert_eq!(e["object"]["columnDefinitions"], Value::Null, "{e}");
        assert_eq!(e["object"]["rows"].as_array().unwrap().len(), 1);
    }
}

fn raw_metadata(c: &Cluster) {
    let pods = format!("/api/v1/namespaces/{NS}/pods");
    let list = get(
        c,
        &pods,
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .json();
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    assert!(list["metadata"]["resourceVersion"].is_string());
    let item = &list["items"][0];
    assert_eq!(item["kind"], "PartialObjectMetadata");
    assert_eq!(item["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(item["metadata"]["name"], "web-pod");
    assert!(item.get("spec").is_none() && item.get("status").is_none());
    let list = get(
        c,
        &pods,
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1",
    )
    .json();
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(list["items"][0]["apiVersion"], "meta.k8s.io/v1beta1");
    let r = get(
        c,
        "/api/v1/namespaces/empty-ns/pods",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    );
    assert_eq!(r.json()["items"], Value::Null, "{}", r.body);
    let r = get(
        c,
        &pods,
        "application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    );
    let y: Value = serde_yaml::from_str(&r.body).expect("yaml");
    assert_eq!(y["items"][0]["kind"], "PartialObjectMetadata");

    // One object.
    let one = get(
        c,
        &format!("{pods}/web-pod"),
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .json();
    assert_eq!(one["kind"], "PartialObjectMetadata");
    assert_eq!(one["metadata"]["name"], "web-pod");
    assert!(one.get("spec").is_none());

    // The wrong shape is kube's 406.
    let r = get(
        c,
        &pods,
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    );
    assert_eq!(r.code, 406, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"
    );
    let r = get(
        c,
        &format!("{pods}/web-pod"),
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    );
    assert_eq!(r.code, 406, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)"
    );

    // A watch cannot show an object as a list: kube's stream ends at the
    // first event without sending it.
    let r = get(
        c,
        &format!("{pods}?watch=1&resourceVersion=0&timeoutSeconds=5"),
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    );
    assert_eq!((r.code, r.body.as_str()), (200, ""));

    // A metadata watch.
    let r = get(
        c,
        &format!("{pods}?watch=1&resourceVersion=0&timeoutSeconds=1"),
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    );
    let first: Value = serde_json::from_str(r.body.lines().next().expect("an event")).unwrap();
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(first["object"]["metadata"]["name"], "web-pod");
}

/// kube's API Priority and Fairness bootstrap objects, as `kubectl get`
/// prints them: FlowSchemas by matching precedence (then name), each
/// with its level and `MISSINGPL` `False`; the PriorityLevelConfigurations
/// by name.
fn flowcontrol_output(c: &Cluster) {
    let out = c.ok(&["get", "flowschemas"]);
    assert_eq!(
        header(&out),
        [
            "NAME",
            "PRIORITYLEVEL",
            "MATCHINGPRECEDENCE",
            "DISTINGUISHERMETHOD",
            "AGE",
            "MISSINGPL"
        ],
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let summary: Vec<String> = rows.iter().map(|r| r[..4].join(" ")).collect();
    assert_eq!(
        summary,
        [
            "exempt exempt 1 <none>",
            "probes exempt 2 <none>",
            "system-leader-election leader-election 100 ByUser",
            "endpoint-controller workload-high 150 ByUser",
            "workload-leader-election leader-election 200 ByUser",
            "system-node-high node-high 400 ByUser",
            "system-nodes system 500 ByUser",
            "kube-controller-manager workload-high 800 ByNamespace",
            "kube-scheduler workload-high 800 ByNamespace",
            "kube-system-service-accounts workload-high 900 ByNamespace",
            "service-accounts workload-low 9000 ByUser",
            "global-default global-default 9900 ByUser",
            "catch-all catch-all 10000 ByUser",
        ],
        "{out}"
    );
    for r in &rows {
        assert_eq!(r.last(), Some(&"False"), "{out}");
    }

    let out = c.ok(&["get", "prioritylevelconfigurations"]);
    assert_eq!(
        header(&out),
        [
            "NAME",
            "TYPE",
            "NOMINALCONCURRENCYSHARES",
            "QUEUES",
            "HANDSIZE",
            "QUEUELENGTHLIMIT",
            "AGE"
        ],
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let summary: Vec<String> = rows.iter().map(|r| r[..6].join(" ")).collect();
    assert_eq!(
        summary,
        [
            "catch-all Limited 5 <none> <none> <none>",
            "exempt Exempt <none> <none> <none> <none>",
            "global-default Limited 20 128 6 50",
            "leader-election Limited 10 16 4 50",
            "node-high Limited 40 64 6 50",
            "system Limited 30 64 6 50",
            "workload-high Limited 40 128 6 50",
            "workload-low Limited 100 128 6 50",
        ],
        "{out}"
    );

    // The conditions kube's APF controller writes.
    let fs = c.ok(&["get", "flowschema", "global-default", "-o", "json"]);
    let fs: Value = serde_json::from_str(&fs).expect("flowschema JSON");
    let cond = &fs["status"]["conditions"][0];
    assert_eq!(cond["type"], "Dangling", "{fs}");
    assert_eq!(cond["reason"], "Found", "{fs}");
    assert_eq!(
        cond["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"global-default\" and it exists"
    );
    assert_eq!(
        fs["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    c.ok_stdin(&["create", "-f", "-"], OBJECTS);
    run_pod(&c);
    kubectl_output(&c);
    flowcontrol_output(&c);
    kubectl_watch(&c);
    raw_tables(&c);
    raw_metadata(&c);
}

#[test]
fn table_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn table_distributed() {
    scenario(Mode::Distributed);
}
