//! CustomResourceDefinitions with the installed kubectl, in both modes: a
//! CRD is served once Established, its objects are pruned, defaulted and
//! validated by its schema, printed with its columns, patched, scaled,
//! watched, and deleted with the CRD.

mod support;

use std::time::{Duration, Instant};

use support::{block_on, Cluster, Mode};

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    listKind: CronTabList
    shortNames: [ct]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec:
                type: string
                description: The schedule in cron format.
              image: {type: string, default: nginx}
              replicas: {type: integer, minimum: 1, maximum: 10}
              color: {type: string, enum: [red, blue]}
              port: {x-kubernetes-int-or-string: true}
              note: {type: string, nullable: true}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              replicas: {type: integer}
              labelSelector: {type: string}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.labelSelector
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
"#;

const CRONTAB: &str = r#"apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-cron
spec:
  cronSpec: "* * * * */5"
  replicas: 2
  port: http
  note: null
"#;

const TWO_VERSIONS: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Cluster
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    deprecationWarning: "example.com/v1beta1 Widget is going away"
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn establish(c: &Cluster, crd: &str, name: &str) {
    c.ok_stdin(&["apply", "-f", "-"], crd);
    let started = Instant::now();
    c.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/{name}"),
        "--timeout=10s",
    ]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "Established took {:?}",
        started.elapsed()
    );
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    establish(&c, CRD, "crontabs.stable.example.com");

    // Conditions and status set by the controller.
    let crd = json(&c.ok(&["get", "crd", "crontabs.stable.example.com", "-o", "json"]));
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "CronTab");
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));
    let conds = crd["status"]["conditions"].as_array().expect("conditions");
    for (t, reason) in [
        ("NamesAccepted", "NoConflicts"),
        ("Established", "InitialNamesAccepted"),
    ] {
        assert!(
            conds
                .iter()
                .any(|x| x["type"] == t && x["status"] == "True" && x["reason"] == reason),
            "{conds:?}"
        );
    }

    // Discovery: short names and categories.
    let res = c.ok(&["api-resources", "--api-group=stable.example.com"]);
    assert!(
        res.contains("crontabs") && res.contains(" ct ") && res.contains("CronTab"),
        "{res}"
    );
    let res = c.ok(&["api-resources", "--categories=all", "-o", "name"]);
    assert!(res.contains("crontabs.stable.example.com"), "{res}");

    // Unknown fields: rejected with Strict (kubectl's default), pruned with Ignore.
    let with_unknown = CRONTAB.replace("  replicas: 2\n", "  replicas: 2\n  bogus: 1\n");
    let err = c.fails(&["apply", "-f", "-"], Some(&with_unknown));
    assert!(
        err.contains(r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.bogus""#),
        "{err}"
    );
    c.ok_stdin(&["create", "--validate=false", "-f", "-"], &with_unknown);
    let got = json(&c.ok(&["get", "ct", "my-cron", "-o", "json"]));
    assert!(got["spec"].get("bogus").is_none(), "pruned: {got}");
    assert_eq!(got["spec"]["image"], "nginx", "defaulted: {got}");
    assert_eq!(got["spec"]["port"], "http");
    assert!(got["spec"]["note"].is_null());
    assert!(got.get("status").is_none(), "a create drops status: {got}");
    assert_eq!(got["metadata"]["generation"], 1);
    c.ok(&["delete", "ct", "my-cron"]);
    c.ok_stdin(&["apply", "-f", "-"], CRONTAB);

    // Printer columns.
    let table = c.ok(&["get", "crontabs"]);
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(head, ["NAME", "SPEC", "REPLICAS", "AGE"], "{table}");
    let row = lines.next().unwrap_or("");
    assert!(
        row.starts_with("my-cron") && row.contains("* * * * */5") && row.contains(" 2 "),
        "{table}"
    );

    // Schema errors: 422 with kube's messages.
    let err = c.fails(
        &[
            "patch",
            "ct",
            "my-cron",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":50,"color":"pink","port":true}}"#,
        ],
        None,
    );
    for want in [
        r#"The CronTab "my-cron" is invalid: "#,
        "spec.replicas: Invalid value: 50: spec.replicas in body should be less than or equal to 10",
        r#"spec.color: Unsupported value: "pink": supported values: "red", "blue""#,
        r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
    ] {
        assert!(err.contains(want), "missing {want}:\n{err}");
    }

    // Patches: merge and JSON; strategic is kube's 415.
    c.ok(&[
        "patch",
        "ct",
        "my-cron",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    c.ok(&[
        "patch",
        "ct",
        "my-cron",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/cronSpec","value":"1 * * * *"}]"#,
    ]);
    let err = c.fails(
        &["patch", "ct", "my-cron", "-p", r#"{"spec":{"replicas":4}}"#],
        None,
    );
    assert!(
        err.contains("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"),
        "{err}"
    );
    // Server-side apply uses the schema too.
    c.ok_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=e2e",
            "--force-conflicts",
            "-f",
            "-",
        ],
        &CRONTAB.replace("replicas: 2", "replicas: 4"),
    );
    let got = json(&c.ok(&["get", "ct", "my-cron", "-o", "json"]));
    assert_eq!(got["spec"]["replicas"], 4);
    assert_eq!(got["metadata"]["generation"], 4, "{got}");

    // Scale and status subresources.
    c.ok(&["scale", "ct", "my-cron", "--replicas=5"]);
    let got = json(&c.ok(&["get", "ct", "my-cron", "-o", "json"]));
    assert_eq!(got["spec"]["replicas"], 5);
    c.ok(&[
        "patch",
        "ct",
        "my-cron",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":5,"labelSelector":"app=cron"},"spec":{"replicas":1}}"#,
    ]);
    let got = json(&c.ok(&["get", "ct", "my-cron", "-o", "json"]));
    assert_eq!(got["status"]["replicas"], 5);
    assert_eq!(got["spec"]["replicas"], 5, "a status write keeps spec");
    let scale = json(&c.ok(&[
        "get",
        "--raw",
        "/apis/stable.example.com/v1/namespaces/default/crontabs/my-cron/scale",
    ]));
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["selector"], "app=cron");

    // Explain reads the OpenAPI v3 the catalog serves.
    let explain = c.ok(&["explain", "crontab.spec.cronSpec"]);
    assert!(
        explain.contains("The schedule in cron format."),
        "{explain}"
    );

    // A default added to the CRD later shows on read.
    c.ok_stdin(
        &["apply", "-f", "-"],
        &CRD.replace(
            "color: {type: string, enum: [red, blue]}",
            "color: {type: string, enum: [red, blue], default: blue}",
        ),
    );
    let mut color = serde_json::Value::Null;
    for _ in 0..50 {
        color = json(&c.ok(&["get", "ct", "my-cron", "-o", "json"]))["spec"]["color"].clone();
        if color == "blue" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(color, "blue", "defaulted on read");

    // Custom resources have no Protobuf: skipped in Accept, 406 alone, 415 as a body.
    block_on(async {
        let http = c.client();
        let item = format!(
            "{}/apis/stable.example.com/v1/namespaces/default/crontabs/my-cron",
            c.url
        );
        let r = http
            .get(&item)
            .header("Accept", "application/vnd.kubernetes.protobuf")
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 406);
        let body: serde_json::Value = r.json().await.expect("status");
        assert_eq!(body["message"], "only the following media types are accepted: application/json, application/yaml, application/cbor");
        let r = http
            .get(&item)
            .header(
                "Accept",
                "application/vnd.kubernetes.protobuf, application/json",
            )
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200);
        let obj: serde_json::Value = r.json().await.expect("json");
        assert_eq!(obj["kind"], "CronTab");
        let r = http
            .post(format!(
                "{}/apis/stable.example.com/v1/namespaces/default/crontabs",
                c.url
            ))
            .header("Content-Type", "application/vnd.kubernetes.protobuf")
            .body(b"k8s\0".to_vec())
            .send()
            .await
            .expect("post");
        assert_eq!(r.status(), 415);
    });

    // A watch sees the CRD's deletion delete its objects.
    let mut watch = std::process::Command::new("kubectl")
        .args(["get", "ct", "--watch-only", "-o", "name"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kubectl watch");
    std::thread::sleep(Duration::from_millis(700));
    c.ok(&["delete", "crd", "crontabs.stable.example.com"]);
    std::thread::sleep(Duration::from_millis(500));
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("watch output");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("crontab.stable.example.com/my-cron"),
        "watch: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let res = c.ok(&["api-resources"]);
    assert!(!res.contains("crontabs"), "{res}");
    let raw = c.fails(
        &[
            "get",
            "--raw",
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
        ],
        None,
    );
    assert!(
        raw.contains("NotFound") || raw.contains("not found"),
        "{raw}"
    );

    // Re-creating serves it again, empty.
    establish(&c, CRD, "crontabs.stable.example.com");
    let list = c.ok(&["get", "crontabs.stable.example.com", "-o", "name"]);
    assert!(list.trim().is_empty(), "{list}");

    // Two versions (conversion None), a deprecated one with its warning.
    establish(&c, TWO_VERSIONS, "widgets.example.com");
    let out = c.kubectl_stdin(
        &["apply", "-f", "-"],
        Some("apiVersion: example.com/v1beta1\nkind: Widget\nmetadata: {name: w1}\nspec: {a: 1}\n"),
    );
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("Warning: example.com/v1beta1 Widget is going away"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v1 = json(&c.ok(&["get", "widgets.v1.example.com", "w1", "-o", "json"]));
    assert_eq!(v1["apiVersion"], "example.com/v1");
    let beta = json(&c.ok(&["get", "widgets.v1beta1.example.com", "w1", "-o", "json"]));
    assert_eq!(beta["apiVersion"], "example.com/v1beta1");
    assert_eq!(beta["spec"]["a"], 1);
    let list = json(&c.ok(&["get", "widgets.v1beta1.example.com", "-o", "json"]));
    assert_eq!(
        list["items"][0]["apiVersion"], "example.com/v1beta1",
        "{list}"
    );
    assert_eq!(list["items"][0]["kind"], "Widget", "{list}");
    let events = block_on(async {
        c.client()
            .get(format!(
                "{}/apis/example.com/v1beta1/widgets?watch=true&timeoutSeconds=1",
                c.url
            ))
            .send()
            .await
            .expect("watch")
            .text()
            .await
            .expect("events")
    });
    let first = json(events.lines().next().unwrap_or(""));
    assert_eq!(first["type"], "ADDED");
    assert_eq!(
        first["object"]["apiVersion"], "example.com/v1beta1",
        "{events}"
    );

    // CRD validation: kube's 422.
    let bad = CRD
        .replace(
            "name: crontabs.stable.example.com",
            "name: wrong.stable.example.com",
        )
        .replace("storage: true", "storage: false");
    let err = c.fails(&["apply", "-f", "-"], Some(&bad));
    for want in [
        r#"The CustomResourceDefinition "wrong.stable.example.com" is invalid"#,
        r#"metadata.name: Invalid value: "wrong.stable.example.com": must be spec.names.plural+"."+spec.group"#,
        "must have exactly one version marked as storage version",
    ] {
        assert!(err.contains(want), "missing {want}:\n{err}");
    }
    let no_schema = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}\n  versions: [{name: v1, served: true, storage: true}]\n";
    let err = c.fails(&["apply", "-f", "-"], Some(no_schema));
    assert!(
        err.contains(
            "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"
        ),
        "{err}"
    );
}

#[test]
fn crds_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn crds_distributed() {
    scenario(Mode::Distributed);
}

/// Server-Side Apply on a custom resource whose schema only preserves
/// unknown fields: the fields are deduced, owned and pruned as kube's
/// structured-merge-diff does (no "field not declared in schema").
#[test]
fn server_side_apply_on_preserved_unknown_fields() {
    let c = Cluster::start(Mode::Embedded);
    establish(&c, FREEFORM, "things.free.example.com");
    let thing = |spec: &str| {
        format!(
            "apiVersion: free.example.com/v1\nkind: Thing\nmetadata: {{name: t1}}\nspec: {spec}\n"
        )
    };
    c.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &thing("{a: 1, b: [x, y]}"),
    );
    c.ok_stdin(&["apply", "--server-side", "-f", "-"], &thing("{a: 2}"));
    let got = json(&c.ok(&["get", "thing", "t1", "-o", "json", "--show-managed-fields"]));
    assert_eq!(got["spec"], serde_json::json!({"a": 2}));
    assert_eq!(
        got["metadata"]["managedFields"][0]["fieldsV1"],
        serde_json::json!({"f:spec": {".": {}, "f:a": {}}})
    );
}

const FREEFORM: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.free.example.com
spec:
  group: free.example.com
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing, listKind: ThingList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;

/// CRD group discovery lists versions in kube's priority order, whatever
/// the CRD's order, and prefers the first (`v1` over `v1beta1`).
#[test]
fn crd_group_versions_in_kube_priority_order() {
    let c = Cluster::start(Mode::Embedded);
    let crd = FREEFORM
        .replace("things.free", "gadgets.order")
        .replace("free.example.com", "order.example.com")
        .replace(
            "{plural: things, singular: thing, kind: Thing, listKind: ThingList}",
            "{plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}",
        )
        .replace(
            "  - name: v1\n    served: true\n    storage: true\n",
            "  - name: v1beta1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n  - name: v1\n    served: true\n    storage: false\n",
        );
    establish(&c, &crd, "gadgets.order.example.com");
    let group = json(&c.ok(&["get", "--raw", "/apis/order.example.com"]));
    assert_eq!(group["versions"][0]["version"], "v1", "{group}");
    assert_eq!(group["versions"][1]["version"], "v1beta1", "{group}");
    assert_eq!(group["preferredVersion"]["version"], "v1", "{group}");
}

/// A scale subresource without `labelSelectorPath`: kube's Scale has no
/// `status.selector`, and `kubectl scale` works.
#[test]
fn scale_without_label_selector_path() {
    let c = Cluster::start(Mode::Embedded);
    let crd = FREEFORM
        .replace("things.free", "pumps.scale")
        .replace("free.example.com", "scale.example.com")
        .replace(
            "{plural: things, singular: thing, kind: Thing, listKind: ThingList}",
            "{plural: pumps, singular: pump, kind: Pump, listKind: PumpList}",
        )
        .replace(
            "    storage: true\n",
            "    storage: true\n    subresources:\n      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}\n",
        );
    establish(&c, &crd, "pumps.scale.example.com");
    c.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: scale.example.com/v1\nkind: Pump\nmetadata: {name: p1, namespace: default}\nspec: {replicas: 1}\n",
    );
    c.ok(&["scale", "pump", "p1", "--replicas=3"]);
    let scale = json(&c.ok(&[
        "get",
        "--raw",
        "/apis/scale.example.com/v1/namespaces/default/pumps/p1/scale",
    ]));
    assert_eq!(scale["spec"]["replicas"], 3, "{scale}");
    assert!(scale["status"].get("selector").is_none(), "{scale}");
}

/// Creating a custom object while its CRD is terminating (held by an
/// object's finalizer) is kube 1.34's `403` from `forbidCreateAdmission`,
/// for a POST and for an apply that would create; existing objects can
/// still be updated.
#[test]
fn create_while_crd_terminating() {
    let c = Cluster::start(Mode::Embedded);
    let crd = FREEFORM
        .replace("things.free", "holds.term")
        .replace("free.example.com", "term.example.com")
        .replace(
            "{plural: things, singular: thing, kind: Thing, listKind: ThingList}",
            "{plural: holds, singular: hold, kind: Hold, listKind: HoldList}",
        );
    establish(&c, &crd, "holds.term.example.com");
    c.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: term.example.com/v1\nkind: Hold\nmetadata: {name: kept, namespace: default, finalizers: [example.com/hold]}\nspec: {a: 1}\n",
    );
    c.ok(&["delete", "crd", "holds.term.example.com", "--wait=false"]);
    c.ok(&[
        "wait",
        "--for=condition=Terminating",
        "crd/holds.term.example.com",
        "--timeout=10s",
    ]);
    let base = format!(
        "{}/apis/term.example.com/v1/namespaces/default/holds",
        c.url
    );
    let send = |req: reqwest::RequestBuilder| {
        block_on(async {
            let r = req.send().await.expect("send");
            let code = r.status().as_u16();
            (code, r.json::<serde_json::Value>().await.expect("json"))
        })
    };
    let forbidden = |name: &str| {
        serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("holds.term.example.com \"{name}\" is forbidden: create not allowed while custom resource definition is terminating"),
            "reason": "Forbidden",
            "details": {"name": name, "group": "term.example.com", "kind": "holds"},
            "code": 403,
        })
    };
    // The object may still be served a moment after the condition.
    let deadline = Instant::now() + Duration::from_secs(5);
    let (code, answer) = loop {
        let (code, answer) = send(c.client().post(&base).json(&serde_json::json!({
            "apiVersion": "term.example.com/v1", "kind": "Hold",
            "metadata": {"name": "new"}, "spec": {"a": 2},
        })));
        if code == 403 || Instant::now() > deadline {
            break (code, answer);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(code, 403, "{answer}");
    assert_eq!(answer, forbidden("new"));
    let (code, answer) = send(
        c.client()
            .patch(format!("{base}/applied?fieldManager=test"))
            .header("Content-Type", "application/apply-patch+yaml")
            .body("apiVersion: term.example.com/v1\nkind: Hold\nmetadata: {name: applied}\nspec: {a: 3}\n"),
    );
    assert_eq!(code, 403, "{answer}");
    assert_eq!(answer, forbidden("applied"));
    // kubectl shows kube's words.
    let err = c.fails(
        &["create", "-f", "-"],
        Some("apiVersion: term.example.com/v1\nkind: Hold\nmetadata: {name: by-kubectl, namespace: default}\n"),
    );
    assert!(
        err.contains(r#"holds.term.example.com "by-kubectl" is forbidden: create not allowed while custom resource definition is terminating"#),
        "{err}"
    );
    // An existing object is still written.
    c.ok(&[
        "patch",
        "hold",
        "kept",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
}

/// A CRD whose root preserves unknown fields is published in
/// `/openapi/v2` as kube's apiextensions builder publishes it (only
/// `type: object` and the GVK), so kubectl's client-side validation of a
/// `v1` `List` accepts an item with arbitrary fields, with the default
/// validation and `--validate=strict` alike.
#[test]
fn list_apply_of_preserve_unknown_root() {
    let c = Cluster::start(Mode::Embedded);
    establish(&c, FREEFORM, "things.free.example.com");
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: free.example.com/v1\n  kind: Thing\n  metadata: {name: listed, namespace: default}\n  spec: {anything: [1, 2]}\n  extra: {deep: true}\n";
    c.ok_stdin(&["apply", "-f", "-"], list);
    c.ok_stdin(
        &["apply", "--validate=strict", "-f", "-"],
        &list.replace("listed", "strict"),
    );
    let got = json(&c.ok(&["get", "thing", "strict", "-o", "json"]));
    assert_eq!(got["extra"], serde_json::json!({"deep": true}), "{got}");
    let v2 = json(&c.ok(&["get", "--raw", "/openapi/v2"]));
    assert_eq!(
        v2["definitions"]["com.example.free.v1.Thing"],
        serde_json::json!({
            "type": "object",
            "x-kubernetes-group-version-kind": [
                {"group": "free.example.com", "kind": "Thing", "version": "v1"}
            ]
        })
    );
}
