//! The kubectl suite: the installed kubectl against a running server,
//! shared by the local modes (`tests/e2e/kubectl.rs`) and the Compose
//! fleet (`tests/e2e/compose.rs`).

use super::{block_on, Cluster};

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx:1.27
        ports:
        - containerPort: 80
"#;

const POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels: {app: p}
spec:
  containers:
  - name: c
    image: busybox:1.36
    command: ["sleep", "3600"]
"#;

const UNKNOWN_FIELD: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: strict-cm
spec:
  foo: bar
data:
  a: b
"#;

/// Objects that kube-apiserver defaults (`SetDefaults_*` per group).
const DEFAULTED: &str = r#"
apiVersion: v1
kind: Secret
metadata: {name: d-secret}
stringData: {a: b}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: d-pc}
value: 10
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: d-pv}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: d-sc}
provisioner: example.com/x
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: d-rb}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}
subjects: [{kind: User, name: bob}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: d-np}
spec: {podSelector: {}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: d-vwc}
webhooks:
- name: check.example.com
  clientConfig: {url: "https://example.com/check"}
  rules: [{operations: [CREATE], apiGroups: [example.com], apiVersions: [v1], resources: [widgets]}]
  sideEffects: None
  admissionReviewVersions: [v1]
"#;

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// `/openapi/v2` over HTTP: JSON, gnostic protobuf, ETag/304, and 406 for
/// what kube-apiserver does not serve there.
fn openapi_v2(c: &Cluster) {
    const PB: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
    let client = c.client();
    let url = format!("{}/openapi/v2", c.url);
    let get = |accept: Option<&str>, inm: Option<&str>| {
        block_on(async {
            let mut req = client.get(&url);
            if let Some(a) = accept {
                req = req.header("Accept", a);
            }
            if let Some(t) = inm {
                req = req.header("If-None-Match", t);
            }
            let r = req.send().await.expect("GET /openapi/v2");
            let status = r.status().as_u16();
            let header = |n: &str| {
                r.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let (ct, etag) = (header("content-type"), header("etag"));
            (status, ct, etag, r.bytes().await.expect("body").to_vec())
        })
    };
    let (status, ct, etag, body) = get(Some("application/json"), None);
    assert_eq!(status, 200);
    assert_eq!(ct.as_deref(), Some("application/json"));
    let doc: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(
        doc["paths"]["/api/v1/namespaces/{namespace}/pods"]["get"]["operationId"],
        "listCoreV1NamespacedPod"
    );
    assert!(doc["definitions"]["io.k8s.api.apps.v1.Deployment"].is_object());
    let etag = etag.expect("ETag");
    let (status, _, _, body) = get(Some("application/json"), Some(&etag));
    assert_eq!(status, 304);
    assert!(body.is_empty());
    // No Accept: JSON, as for */*.
    let (status, ct, _, _) = get(None, None);
    assert_eq!((status, ct.as_deref()), (200, Some("application/json")));

    let (status, ct, pb_etag, body) = get(Some(PB), None);
    // kube-openapi answers with the parseable spelling of the type.
    assert_eq!(
        (status, ct.as_deref()),
        (
            200,
            Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
        )
    );
    assert_ne!(pb_etag.as_deref(), Some(etag.as_str()));
    // Field 1 of openapi.v2.Document: swagger = "2.0".
    assert_eq!(&body[..5], b"\x0a\x032.0");

    let (status, _, _, body) = get(Some("application/vnd.kubernetes.protobuf"), None);
    assert_eq!(status, 406);
    assert!(body.is_empty());
}

/// Run the suite against `c` (a fresh server: it creates namespaces `e2e`
/// and `chunks`).
/// The issue's invalid objects through kubectl: kube's 422 causes, as
/// kubectl prints them, and nothing stored.
fn validation(c: &Cluster) {
    let cases: [(&str, &str, &[&str]); 4] = [
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: bogus}\nspec: {type: Bogus}\n",
            "service/bogus",
            &[
                "The Service \"bogus\" is invalid: ",
                "* spec.ports: Required value",
                "* spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
            ],
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: sometimes}\nspec: {restartPolicy: Sometimes}\n",
            "pod/sometimes",
            &[
                "* spec.containers: Required value",
                "* spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
            ],
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dots}\ndata: {\"..\": x}\n",
            "configmap/dots",
            &["The ConfigMap \"dots\" is invalid: data[..]: Invalid value: \"..\": must not be '..'"],
        ),
        (
            "apiVersion: v1\nkind: Secret\nmetadata: {name: half-tls}\ntype: kubernetes.io/tls\nstringData: {tls.crt: x}\n",
            "secret/half-tls",
            &["The Secret \"half-tls\" is invalid: data[tls.key]: Required value"],
        ),
    ];
    for (manifest, name, want) in cases {
        let err = c.fails(&["create", "-f", "-"], Some(manifest));
        for w in want {
            assert!(err.contains(w), "{name}: {w:?} not in:\n{err}");
        }
        let got = c.fails(&["get", name], None);
        assert!(got.contains("NotFound"), "{name} was stored: {got}");
    }
}

pub fn run(c: &Cluster) {
    validation(c);
    // Discovery and OpenAPI.
    let res = c.ok(&["api-resources"]);
    for want in [
        "pods",
        " po ",
        "deployments",
        "deploy",
        "apps/v1",
        "configmaps",
        " cm ",
    ] {
        assert!(res.contains(want), "api-resources lacks {want:?}:\n{res}");
    }
    let versions = c.ok(&["api-versions"]);
    assert!(versions.lines().any(|l| l == "v1"), "{versions}");
    assert!(versions.lines().any(|l| l == "apps/v1"), "{versions}");
    let explain = c.ok(&["explain", "pods.spec.containers"]);
    assert!(
        explain.contains("KIND:") && explain.contains("Pod"),
        "{explain}"
    );
    assert!(explain.contains("image"), "{explain}");
    assert!(
        explain.contains("List of containers belonging to the pod"),
        "{explain}"
    );
    // OpenAPI v2: client-go's OpenAPISchema() reads the protobuf form.
    let explain = c.ok(&["explain", "pods.spec", "--output=plaintext-openapiv2"]);
    assert!(
        explain.contains("KIND:") && explain.contains("Pod"),
        "{explain}"
    );
    assert!(explain.contains("containers"), "{explain}");
    assert!(explain.contains("<[]Object>"), "{explain}");
    openapi_v2(c);

    // Namespaces and configmaps.
    c.ok(&["create", "namespace", "e2e"]);
    let ns = json(&c.ok(&["get", "namespace", "e2e", "-o", "json"]));
    assert_eq!(ns["status"]["phase"], "Active");
    c.ok(&[
        "create",
        "configmap",
        "cm1",
        "--from-literal=a=b",
        "-n",
        "e2e",
    ]);
    let cm = json(&c.ok(&["get", "configmap", "cm1", "-n", "e2e", "-o", "json"]));
    assert_eq!(cm["data"]["a"], "b");
    let rv: u64 = cm["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv > 0);
    assert!(!cm["metadata"]["uid"].as_str().unwrap().is_empty());

    // kube's defaults, as `kubectl get -o json` shows them.
    c.ok_stdin(&["create", "-n", "e2e", "-f", "-"], DEFAULTED);
    let get = |args: &[&str]| json(&c.ok(&[args, &["-n", "e2e", "-o", "json"]].concat()));
    let secret = get(&["get", "secret", "d-secret"]);
    assert_eq!(secret["type"], "Opaque");
    // stringData is written into data (base64) and never stored.
    assert_eq!(secret["data"], serde_json::json!({"a": "Yg=="}), "{secret}");
    assert!(secret.get("stringData").is_none(), "{secret}");
    for (value, encoded) in [("one", "b25l"), ("two", "dHdv")] {
        let manifest = format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: applied-secret}}\n\
             data: {{kept: dg==}}\nstringData: {{x: {value}}}\n"
        );
        c.ok_stdin(&["apply", "-n", "e2e", "-f", "-"], &manifest);
        let secret = get(&["get", "secret", "applied-secret"]);
        assert_eq!(
            secret["data"],
            serde_json::json!({"kept": "dg==", "x": encoded}),
            "{secret}"
        );
        assert!(secret.get("stringData").is_none(), "{secret}");
        // Server-side apply too.
        let manifest = manifest.replace("applied-secret", "ssa-secret");
        c.ok_stdin(
            &["apply", "--server-side", "-n", "e2e", "-f", "-"],
            &manifest,
        );
        let secret = get(&["get", "secret", "ssa-secret"]);
        assert_eq!(
            secret["data"],
            serde_json::json!({"kept": "dg==", "x": encoded}),
            "{secret}"
        );
        assert!(secret.get("stringData").is_none(), "{secret}");
    }
    let pc = get(&["get", "priorityclass", "d-pc"]);
    assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
    let pv = get(&["get", "pv", "d-pv"]);
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pv["spec"]["hostPath"]["type"], "");
    assert_eq!(pv["status"]["phase"], "Pending");
    assert!(pv["status"]["lastPhaseTransitionTime"].is_string(), "{pv}");
    let sc = get(&["get", "storageclass", "d-sc"]);
    assert_eq!(
        (&sc["reclaimPolicy"], &sc["volumeBindingMode"]),
        (&"Delete".into(), &"Immediate".into())
    );
    let rb = get(&["get", "rolebinding", "d-rb"]);
    assert_eq!(
        rb["subjects"],
        serde_json::json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}])
    );
    let np = get(&["get", "networkpolicy", "d-np"]);
    assert_eq!(np["spec"]["policyTypes"], serde_json::json!(["Ingress"]));
    let vwc = get(&["get", "validatingwebhookconfiguration", "d-vwc"]);
    let hook = &vwc["webhooks"][0];
    assert_eq!(
        (
            &hook["failurePolicy"],
            &hook["matchPolicy"],
            &hook["timeoutSeconds"]
        ),
        (&"Fail".into(), &"Equivalent".into(), &10.into()),
        "{vwc}"
    );
    assert_eq!(hook["rules"][0]["scope"], "*");

    // create -f with kubectl's default strict validation.
    c.ok_stdin(&["create", "-n", "e2e", "-f", "-"], DEPLOYMENT);
    c.ok_stdin(&["create", "-n", "e2e", "-f", "-"], POD);
    let pod = json(&c.ok(&["get", "pod", "p1", "-n", "e2e", "-o", "json"]));
    assert_eq!(pod["spec"]["containers"][0]["image"], "busybox:1.36");
    let dep = json(&c.ok(&["get", "deployment", "web", "-n", "e2e", "-o", "json"]));
    assert_eq!(dep["metadata"]["generation"], 1);

    // Unknown fields: Strict fails, Warn warns and creates.
    let err = c.fails(&["create", "-n", "e2e", "-f", "-"], Some(UNKNOWN_FIELD));
    assert!(
        err.contains(r#"strict decoding error: unknown field "spec""#),
        "{err}"
    );
    let out = c.kubectl_stdin(
        &["create", "-n", "e2e", "--validate=warn", "-f", "-"],
        Some(UNKNOWN_FIELD),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(r#"unknown field "spec""#), "{stderr}");
    let stored = json(&c.ok(&["get", "cm", "strict-cm", "-n", "e2e", "-o", "json"]));
    assert!(
        stored.get("spec").is_none(),
        "unknown field was stored: {stored}"
    );

    // get in every output.
    let yaml = c.ok(&["get", "pods", "-n", "e2e", "-o", "yaml"]);
    let list: serde_json::Value = serde_yaml::from_str(&yaml).expect("yaml");
    assert_eq!(list["items"][0]["metadata"]["name"], "p1");
    let all = c.ok(&["get", "configmaps", "-A"]);
    assert!(
        all.lines()
            .any(|l| l.starts_with("e2e") && l.contains("cm1")),
        "{all}"
    );
    let table = c.ok(&["get", "pods", "-n", "e2e"]);
    assert!(table.contains("p1"), "{table}");

    // replace with a stale resourceVersion → Conflict.
    let stale = c.ok(&["get", "configmap", "cm1", "-n", "e2e", "-o", "json"]);
    c.ok(&["label", "configmap", "cm1", "-n", "e2e", "touched=yes"]);
    let err = c.fails(&["replace", "-f", "-"], Some(&stale));
    assert!(err.contains("Conflict"), "{err}");
    assert!(
        err.contains("the object has been modified; please apply your changes to the latest version and try again"),
        "{err}"
    );

    // Patches, labels, annotations.
    c.ok(&[
        "patch",
        "configmap",
        "cm1",
        "-n",
        "e2e",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/data/j","value":"1"}]"#,
    ]);
    c.ok(&[
        "patch",
        "configmap",
        "cm1",
        "-n",
        "e2e",
        "--type=merge",
        "-p",
        r#"{"data":{"m":"2","a":null}}"#,
    ]);
    c.ok(&["annotate", "configmap", "cm1", "-n", "e2e", "note=hello"]);
    let cm = json(&c.ok(&["get", "configmap", "cm1", "-n", "e2e", "-o", "json"]));
    assert_eq!(cm["data"]["j"], "1");
    assert_eq!(cm["data"]["m"], "2");
    assert!(cm["data"].get("a").is_none());
    assert_eq!(cm["metadata"]["labels"]["touched"], "yes");
    assert_eq!(cm["metadata"]["annotations"]["note"], "hello");
    let err = c.fails(
        &[
            "patch",
            "configmap",
            "cm1",
            "-n",
            "e2e",
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/data/j","value":"nope"}]"#,
        ],
        None,
    );
    assert!(err.contains("Invalid") || err.contains("rejected"), "{err}");
    let labelled = c.ok(&[
        "get",
        "configmaps",
        "-n",
        "e2e",
        "-l",
        "touched=yes",
        "-o",
        "name",
    ]);
    assert_eq!(labelled.trim(), "configmap/cm1");

    // scale.
    c.ok(&["scale", "deployment", "web", "-n", "e2e", "--replicas=3"]);
    let replicas = c.ok(&[
        "get",
        "deployment",
        "web",
        "-n",
        "e2e",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(replicas.trim(), "3");
    let dep = json(&c.ok(&["get", "deployment", "web", "-n", "e2e", "-o", "json"]));
    assert_eq!(dep["metadata"]["generation"], 2);

    // delete.
    let out = c.ok(&["delete", "pod", "p1", "-n", "e2e"]);
    assert!(out.contains("deleted"), "{out}");
    let err = c.fails(&["get", "pod", "p1", "-n", "e2e"], None);
    assert!(err.contains(r#"pods "p1" not found"#), "{err}");

    // --dry-run=server leaves nothing behind.
    let out = c.ok(&[
        "create",
        "configmap",
        "dry",
        "-n",
        "e2e",
        "--from-literal=x=y",
        "--dry-run=server",
    ]);
    assert!(out.contains("created (server dry run)"), "{out}");
    let err = c.fails(&["get", "configmap", "dry", "-n", "e2e"], None);
    assert!(err.contains("NotFound"), "{err}");

    // Missing namespace and bad names.
    let err = c.fails(
        &[
            "create",
            "configmap",
            "x",
            "-n",
            "nope",
            "--from-literal=a=b",
        ],
        None,
    );
    assert!(err.contains(r#"namespaces "nope" not found"#), "{err}");
    let err = c.fails(
        &[
            "create",
            "configmap",
            "Bad_Name",
            "-n",
            "e2e",
            "--from-literal=a=b",
        ],
        None,
    );
    assert!(err.contains("Invalid"), "{err}");
    assert!(
        err.contains(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
        ),
        "{err}"
    );
    let err = c.fails(&["delete", "namespace", "kube-system"], None);
    assert!(err.contains("this namespace may not be deleted"), "{err}");

    // Chunked lists: kubectl follows metadata.continue.
    c.ok(&["create", "namespace", "chunks"]);
    for i in 0..7 {
        c.ok(&["create", "configmap", &format!("c{i}"), "-n", "chunks"]);
    }
    let out = c.kubectl(&[
        "get",
        "configmaps",
        "-n",
        "chunks",
        "--chunk-size=2",
        "-o",
        "name",
        "-v=6",
    ]);
    assert!(out.status.success());
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        // The root CA publisher's ConfigMap, in every namespace.
        .filter(|l| *l != "configmap/kube-root-ca.crt")
        .map(str::to_string)
        .collect();
    assert_eq!(
        names,
        (0..7)
            .map(|i| format!("configmap/c{i}"))
            .collect::<Vec<_>>()
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        log.matches("continue=").count(),
        3,
        "expected 4 pages:\n{log}"
    );

    // Namespaces created at first start.
    let nss = c.ok(&["get", "namespaces", "-o", "name"]);
    for n in [
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "e2e",
    ] {
        assert!(nss.contains(&format!("namespace/{n}")), "{nss}");
    }
}
