//! The write paths of `kubectl apply` (client- and server-side), `edit`,
//! `diff`, `set image`, `rollout restart`, `patch`, and the managedFields
//! they leave, with the installed kubectl, in both modes.

mod support;

use serde_json::Value;
use support::{Cluster, Mode};

fn deployment(image: &str, sidecar: bool, replicas: Option<u32>) -> String {
    let replicas = replicas.map_or(String::new(), |r| format!("  replicas: {r}\n"));
    let side = if sidecar {
        "      - name: side\n        image: busybox:1.36\n        command: [\"sleep\", \"3600\"]\n"
    } else {
        ""
    };
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {{app: web}}\nspec:\n{replicas}  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: nginx\n        image: {image}\n        ports:\n        - containerPort: 80\n{side}"
    )
}

fn get(c: &Cluster, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json", "--show-managed-fields"]);
    serde_json::from_str(&c.ok(&args)).expect("kubectl get -o json")
}

/// `manager/operation[/subresource]` of every managedFields entry.
fn managers(obj: &Value) -> Vec<String> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    let mut s = format!(
                        "{}/{}",
                        e["manager"].as_str().unwrap_or(""),
                        e["operation"].as_str().unwrap_or("")
                    );
                    if let Some(sub) = e["subresource"].as_str() {
                        s = format!("{s}/{sub}");
                    }
                    s
                })
                .collect()
        })
        .unwrap_or_default()
}

fn containers(obj: &Value) -> Vec<(String, String)> {
    obj["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or("").to_string(),
                c["image"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn client_side(c: &Cluster) {
    // Create, then change the image, then drop a container.
    c.ok_stdin(&["apply", "-f", "-"], &deployment("nginx:1.26", true, None));
    let d = get(c, &["deploy", "web"]);
    assert_eq!(managers(&d), ["kubectl-client-side-apply/Update"]);
    let rv = d["metadata"]["resourceVersion"].clone();
    // Applying the same manifest again changes nothing.
    let out = c.ok_stdin(&["apply", "-f", "-"], &deployment("nginx:1.26", true, None));
    assert!(out.contains("unchanged"), "{out}");
    assert_eq!(
        get(c, &["deploy", "web"])["metadata"]["resourceVersion"],
        rv
    );

    let out = c.ok_stdin(&["apply", "-f", "-"], &deployment("nginx:1.27", true, None));
    assert!(out.contains("configured"), "{out}");
    let d = get(c, &["deploy", "web"]);
    assert_eq!(
        containers(&d),
        [
            ("nginx".to_string(), "nginx:1.27".to_string()),
            ("side".to_string(), "busybox:1.36".to_string())
        ]
    );
    c.ok_stdin(
        &["apply", "-f", "-"],
        &deployment("nginx:1.27", false, None),
    );
    let d = get(c, &["deploy", "web"]);
    assert_eq!(
        containers(&d),
        [("nginx".to_string(), "nginx:1.27".to_string())]
    );
    let last = c.ok(&["apply", "view-last-applied", "deploy/web"]);
    assert!(last.contains("image: nginx:1.27"), "{last}");
    assert!(!last.contains("side"), "{last}");

    // diff shows a change and exits 1; no change exits 0.
    let out = c.kubectl_stdin(
        &["diff", "-f", "-"],
        Some(&deployment("nginx:1.28", false, None)),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let changed = |sign: char, image: &str| {
        text.lines()
            .any(|l| l.starts_with(sign) && l.ends_with(&format!("image: {image}")))
    };
    assert!(changed('-', "nginx:1.27"), "{text}");
    assert!(changed('+', "nginx:1.28"), "{text}");
    let out = c.kubectl_stdin(
        &["diff", "-f", "-"],
        Some(&deployment("nginx:1.27", false, None)),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // set image, rollout restart, edit.
    c.ok(&["set", "image", "deploy/web", "nginx=nginx:1.29"]);
    let d = get(c, &["deploy", "web"]);
    assert_eq!(containers(&d)[0].1, "nginx:1.29");
    assert!(
        managers(&d).contains(&"kubectl-set/Update".to_string()),
        "{:?}",
        managers(&d)
    );
    c.ok(&["rollout", "restart", "deploy/web"]);
    let d = get(c, &["deploy", "web"]);
    let restarted =
        &d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"];
    assert!(restarted.is_string(), "{d}");
    assert!(
        managers(&d).contains(&"kubectl-rollout/Update".to_string()),
        "{:?}",
        managers(&d)
    );
    let editor = "sed -i s/nginx:1.29/nginx:1.30/";
    let out = c.kubectl_env(&["edit", "deploy/web"], None, &[("KUBE_EDITOR", editor)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = get(c, &["deploy", "web"]);
    assert_eq!(containers(&d)[0].1, "nginx:1.30");
    assert!(
        managers(&d).contains(&"kubectl-edit/Update".to_string()),
        "{:?}",
        managers(&d)
    );

    // Strategic merge patches: Service ports merge on `port`, ConfigMap
    // data merges keys, labels by `kubectl label`.
    // (`kubectl create service`, which sends Protobuf, is in protobuf.rs.)
    c.ok_stdin(
        &["create", "-f", "-"],
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - {name: http, port: 80, targetPort: 8080}\n",
    );
    c.ok(&[
        "patch",
        "service",
        "svc",
        "-p",
        r#"{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}"#,
    ]);
    let s = get(c, &["service", "svc"]);
    let ports: Vec<i64> = s["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["port"].as_i64().unwrap())
        .collect();
    assert_eq!(ports, [443, 80], "{s}");
    c.ok(&["create", "configmap", "cm", "--from-literal=a=1"]);
    c.ok(&["patch", "configmap", "cm", "-p", r#"{"data":{"b":"2"}}"#]);
    c.ok(&["label", "configmap", "cm", "team=x"]);
    let cm = get(c, &["configmap", "cm"]);
    assert_eq!(cm["data"], serde_json::json!({"a": "1", "b": "2"}));
    assert_eq!(cm["metadata"]["labels"]["team"], "x");
    // Entries of one second sort by manager name (kube's order).
    let mut owners = managers(&cm);
    owners.sort();
    assert_eq!(
        owners,
        [
            "kubectl-create/Update",
            "kubectl-label/Update",
            "kubectl-patch/Update"
        ]
    );

    // Migration to server-side apply: kubectl upgrades the client-side
    // entries, so the fields it applied do not conflict.
    let out = c.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &deployment("nginx:1.30", false, None),
    );
    assert!(out.contains("serverside-applied"), "{out}");
    let d = get(c, &["deploy", "web"]);
    assert!(
        managers(&d).contains(&"kubectl/Apply".to_string()),
        "{:?}",
        managers(&d)
    );
    c.ok(&["delete", "deploy", "web"]);
}

fn server_side(c: &Cluster) {
    let apply = |manager: &str, manifest: &str, extra: &[&str]| {
        let mut args = vec!["apply", "--server-side", "--field-manager", manager];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-f", "-"]);
        c.kubectl_stdin(&args, Some(manifest))
    };
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A missing object is created by apply.
    ok(apply(
        "team-a",
        &deployment("nginx:1.27", false, Some(2)),
        &[],
    ));
    let d = get(c, &["deploy", "web"]);
    assert_eq!(managers(&d), ["team-a/Apply"]);
    assert!(d["metadata"]["uid"].is_string());
    let fields = &d["metadata"]["managedFields"][0]["fieldsV1"];
    assert_eq!(fields["f:spec"]["f:replicas"], serde_json::json!({}));
    assert!(
        fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"nginx\"}"]["."]
            .is_object()
    );

    // Same value from a second manager: shared, no conflict.
    ok(apply(
        "team-b",
        &deployment("nginx:1.27", false, Some(2)),
        &[],
    ));
    // A different value conflicts with both owners.
    let out = apply("team-c", &deployment("nginx:1.27", false, Some(3)), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Apply failed with 2 conflicts: conflicts with \"team-a\":\n- .spec.replicas\nconflicts with \"team-b\":\n- .spec.replicas"),
        "{err}"
    );
    // Dry run with force changes nothing stored.
    let rv = get(c, &["deploy", "web"])["metadata"]["resourceVersion"].clone();
    let out = ok(apply(
        "team-c",
        &deployment("nginx:1.27", false, Some(3)),
        &["--force-conflicts", "--dry-run=server", "-o", "json"],
    ));
    let dry: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(dry["spec"]["replicas"], 3);
    let d = get(c, &["deploy", "web"]);
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["metadata"]["resourceVersion"], rv);
    // Force takes the field.
    ok(apply(
        "team-c",
        &deployment("nginx:1.27", false, Some(3)),
        &["--force-conflicts"],
    ));
    let d = get(c, &["deploy", "web"]);
    assert_eq!(d["spec"]["replicas"], 3);
    // team-b's apply changed nothing, so its entry has no time and sorts
    // first among the appliers (kube orders by operation, then time).
    let mut owners = managers(&d);
    owners.sort();
    assert_eq!(owners, ["team-a/Apply", "team-b/Apply", "team-c/Apply"]);
    let entries = d["metadata"]["managedFields"].as_array().unwrap();
    let team_a = entries.iter().find(|e| e["manager"] == "team-a").unwrap();
    assert!(team_a["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    let team_b = entries.iter().find(|e| e["manager"] == "team-b").unwrap();
    assert!(team_b.get("time").is_none(), "{team_b}");
    assert_eq!(entries[0]["manager"], "team-b");

    // The HPA hand-over: a controller scales (Update on /scale), the
    // appliers drop replicas, the value stays with the controller.
    c.ok(&["scale", "deploy", "web", "--replicas=5"]);
    for m in ["team-a", "team-b", "team-c"] {
        ok(apply(m, &deployment("nginx:1.27", false, None), &[]));
    }
    let d = get(c, &["deploy", "web"]);
    assert_eq!(d["spec"]["replicas"], 5);
    assert!(
        managers(&d).contains(&"kubectl/Update/scale".to_string()),
        "{:?}",
        managers(&d)
    );

    // A no-op apply does not change resourceVersion.
    let rv = d["metadata"]["resourceVersion"].clone();
    ok(apply("team-a", &deployment("nginx:1.27", false, None), &[]));
    assert_eq!(
        get(c, &["deploy", "web"])["metadata"]["resourceVersion"],
        rv
    );
    c.ok(&["delete", "deploy", "web"]);
}

#[test]
fn embedded_apply_paths() {
    let c = Cluster::start(Mode::Embedded);
    client_side(&c);
    server_side(&c);
}

#[test]
fn distributed_apply_paths() {
    let c = Cluster::start(Mode::Distributed);
    client_side(&c);
    server_side(&c);
}

/// What a client sees on the wire: kube's Status answers of apply and
/// strategic merge patch, apply on `/status`, and no event for a no-op.
async fn wire(c: &Cluster) {
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    let apply = |name: &str, query: &str, body: &str| {
        http.patch(format!("{cms}/{name}?{query}"))
            .header("content-type", "application/apply-patch+yaml")
            .body(body.to_string())
            .send()
    };
    let status = |r: reqwest::Response| async move {
        let code = r.status().as_u16();
        let v: Value = r.json().await.expect("json");
        assert_eq!(v["kind"], "Status", "{v}");
        assert_eq!(v["code"], code, "{v}");
        v
    };
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w\ndata:\n  a: \"1\"\n";

    // Create by apply: 201 with uid and one Apply entry.
    let r = apply("w", "fieldManager=wire", cm).await.expect("apply");
    assert_eq!(r.status().as_u16(), 201);
    let created: Value = r.json().await.expect("json");
    assert!(created["metadata"]["uid"].is_string());
    assert_eq!(
        created["metadata"]["managedFields"][0]["operation"],
        "Apply"
    );

    // Kube's refusals.
    let v = status(apply("w", "", cm).await.expect("apply")).await;
    assert_eq!(v["code"], 422);
    assert_eq!(
        v["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let with_mf = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w\n  managedFields: []\n";
    let v = status(
        apply("w", "fieldManager=wire", with_mf)
            .await
            .expect("apply"),
    )
    .await;
    assert_eq!(
        (v["code"].as_u64(), v["reason"].as_str()),
        (Some(400), Some("BadRequest"))
    );
    assert_eq!(v["message"], "metadata.managedFields must be nil");
    let wrong = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: w\n";
    let v = status(apply("w", "fieldManager=wire", wrong).await.expect("apply")).await;
    assert_eq!(v["message"], "invalid object type: /v1, Kind=Secret");
    let unknown = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w\nspec: {}\n";
    let v = status(
        apply("w", "fieldManager=wire", unknown)
            .await
            .expect("apply"),
    )
    .await;
    assert_eq!(v["code"], 500);
    assert_eq!(
        v["message"],
        "failed to create typed patch object (/w; /v1, Kind=ConfigMap): .spec: field not declared in schema"
    );
    let v = status(
        apply("w", "fieldManager=wire", "a: [")
            .await
            .expect("apply"),
    )
    .await;
    assert_eq!(v["code"], 400);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("error decoding YAML: "),
        "{v}"
    );

    // A resourceVersion in a strategic merge patch is a precondition.
    let r = http
        .patch(format!("{cms}/w"))
        .header("content-type", "application/strategic-merge-patch+json")
        .body(r#"{"metadata":{"resourceVersion":"1"},"data":{"b":"2"}}"#)
        .send()
        .await
        .expect("patch");
    let v = status(r).await;
    assert_eq!(v["code"], 409);
    assert_eq!(
        v["message"],
        "Operation cannot be fulfilled on configmaps \"w\": the object has been modified; please apply your changes to the latest version and try again"
    );

    // A no-op apply answers 200, keeps resourceVersion, and sends no event.
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let r = apply("w", "fieldManager=wire", cm).await.expect("apply");
    assert_eq!(r.status().as_u16(), 200);
    let same: Value = r.json().await.expect("json");
    assert_eq!(same["metadata"]["resourceVersion"], rv.as_str());
    assert_eq!(
        same["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );
    let events = http
        .get(format!(
            "{cms}?watch=true&resourceVersion={rv}&timeoutSeconds=1"
        ))
        .send()
        .await
        .expect("watch")
        .text()
        .await
        .expect("body");
    assert_eq!(events, "", "a no-op apply must not emit an event");

    // Bodies end with the newline kube's JSON encoder writes (clients
    // compare them byte for byte): an object, a list, a Status.
    for url in [format!("{cms}/w"), cms.clone(), format!("{cms}/missing")] {
        let text = http
            .get(&url)
            .send()
            .await
            .expect("get")
            .text()
            .await
            .expect("body");
        assert!(
            text.ends_with("}\n") && !text.ends_with("}\n\n"),
            "{url}: {text:?}"
        );
    }

    // Apply on /status: the status applier owns only status.
    let pods = format!("{}/api/v1/namespaces/default/pods", c.url);
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"sp"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    let r = http
        .post(&pods)
        .header("content-type", "application/json")
        .body(pod)
        .send()
        .await
        .expect("create");
    assert_eq!(r.status().as_u16(), 201);
    let status_apply = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"sp"},"status":{"phase":"Running","message":"up"}}"#;
    let r = http
        .patch(format!("{pods}/sp/status?fieldManager=kubelet-ish"))
        .header("content-type", "application/apply-patch+yaml")
        .body(status_apply)
        .send()
        .await
        .expect("apply status");
    assert_eq!(r.status().as_u16(), 200);
    let p: Value = r.json().await.expect("json");
    assert_eq!(p["status"]["phase"], "Running");
    let entry = p["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubelet-ish")
        .expect("status entry")
        .clone();
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["subresource"], "status");
    assert_eq!(
        entry["fieldsV1"],
        serde_json::json!({"f:status": {"f:message": {}, "f:phase": {}}})
    );
}

/// Server-Side Apply on `/scale`, as kube's scale subresource handles
/// managedFields: the workload's owners of `spec.replicas` own the Scale's
/// `.spec.replicas`, so an apply of the Scale conflicts with them, and the
/// Scale's entries are folded back into the workload's at its version.
async fn scale_apply(c: &Cluster) {
    let http = c.client();
    let deploy = format!(
        "{}/apis/apps/v1/namespaces/default/deployments/scaled",
        c.url
    );
    let apply = |url: String, manager: &str, force: bool, body: String| {
        let force = if force { "&force=true" } else { "" };
        http.patch(format!("{url}?fieldManager={manager}{force}"))
            .header("content-type", "application/apply-patch+yaml")
            .body(body)
            .send()
    };
    let workload = |replicas: u32| {
        deployment("nginx:1.27", false, Some(replicas))
            .replace("name: web\n  labels", "name: scaled\n  labels")
    };
    let scale = |replicas: u32| {
        format!("{{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{{\"name\":\"scaled\"}},\"spec\":{{\"replicas\":{replicas}}}}}")
    };
    let r = apply(deploy.clone(), "team-a", false, workload(2))
        .await
        .expect("apply");
    assert_eq!(r.status().as_u16(), 201);

    // The Scale's replicas belong to team-a: a different value conflicts.
    let r = apply(format!("{deploy}/scale"), "hpa", false, scale(4))
        .await
        .expect("apply");
    assert_eq!(r.status().as_u16(), 409);
    let v: Value = r.json().await.expect("json");
    assert_eq!(
        v["message"],
        "Apply failed with 1 conflict: conflict with \"team-a\": .spec.replicas"
    );
    assert_eq!(v["details"]["causes"][0]["field"], ".spec.replicas");

    // Forced, the field moves: the workload records hpa's Apply of the
    // scale subresource at apps/v1, and team-a keeps its other fields.
    let r = apply(format!("{deploy}/scale"), "hpa", true, scale(4))
        .await
        .expect("apply");
    assert_eq!(r.status().as_u16(), 200);
    let s: Value = r.json().await.expect("json");
    assert_eq!(s["spec"]["replicas"], 4);
    assert!(s["metadata"].get("managedFields").is_none(), "{s}");
    let d = get(c, &["deploy", "scaled"]);
    assert_eq!(d["spec"]["replicas"], 4);
    let mut owners = managers(&d);
    owners.sort();
    assert_eq!(owners, ["hpa/Apply/scale", "team-a/Apply"]);
    let entries = d["metadata"]["managedFields"].as_array().expect("entries");
    let hpa = entries.iter().find(|e| e["manager"] == "hpa").expect("hpa");
    assert_eq!(hpa["apiVersion"], "apps/v1");
    assert_eq!(
        hpa["fieldsV1"],
        serde_json::json!({"f:spec": {"f:replicas": {}}})
    );
    let team_a = entries
        .iter()
        .find(|e| e["manager"] == "team-a")
        .expect("team-a");
    assert!(
        team_a["fieldsV1"]["f:spec"].get("f:replicas").is_none(),
        "{team_a}"
    );
    assert!(
        team_a["fieldsV1"]["f:spec"].get("f:template").is_some(),
        "{team_a}"
    );

    // Now the main resource's apply conflicts with the scale's manager.
    let r = apply(deploy.clone(), "team-a", false, workload(2))
        .await
        .expect("apply");
    assert_eq!(r.status().as_u16(), 409);
    let v: Value = r.json().await.expect("json");
    assert_eq!(
        v["message"],
        "Apply failed with 1 conflict: conflict with \"hpa\" with subresource \"scale\": .spec.replicas"
    );

    // An update of the scale (kubectl scale) takes the field from hpa.
    c.ok(&["scale", "deploy", "scaled", "--replicas=6"]);
    let d = get(c, &["deploy", "scaled"]);
    let mut owners = managers(&d);
    owners.sort();
    assert_eq!(owners, ["kubectl/Update/scale", "team-a/Apply"]);
    // The scale is applied again without conflict, the same value shared.
    let r = apply(format!("{deploy}/scale"), "hpa", false, scale(6))
        .await
        .expect("apply");
    assert_eq!(r.status().as_u16(), 200);
    c.ok(&["delete", "deploy", "scaled"]);
}

#[test]
fn embedded_apply_on_the_wire() {
    let c = Cluster::start(Mode::Embedded);
    support::block_on(wire(&c));
    support::block_on(scale_apply(&c));
}

#[test]
fn distributed_apply_on_the_wire() {
    let c = Cluster::start(Mode::Distributed);
    support::block_on(wire(&c));
    support::block_on(scale_apply(&c));
}

/// A strategic merge patch whose result does not convert back into the
/// kind's types is kube's `422` from its unstructured converter, quoting
/// the patch; a patch body naming another kind patches the object as its
/// own kind (kube's typed round trip keeps no kind from the patch).
#[test]
fn strategic_merge_typed_round_trip() {
    let c = Cluster::start(Mode::Embedded);
    c.ok(&["create", "configmap", "x", "--from-literal=a=1"]);
    let err = c.fails(
        &[
            "patch",
            "cm",
            "x",
            "-p",
            r#"{"metadata":{"labels":"invalid"}}"#,
        ],
        None,
    );
    assert!(
        err.contains(r#"patch: Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map from string"#),
        "{err}"
    );
    support::block_on(async {
        let http = c.client();
        let url = format!("{}/api/v1/namespaces/default/configmaps/x", c.url);
        let smp = |body: &'static str| {
            http.patch(&url)
                .header("content-type", "application/strategic-merge-patch+json")
                .body(body)
                .send()
        };
        let r = smp(r#"{"metadata":{"labels":"invalid"}}"#)
            .await
            .expect("patch");
        assert_eq!(r.status().as_u16(), 422);
        assert_eq!(
            r.text().await.expect("body"),
            concat!(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
                r#""message":" \"\" is invalid: patch: Invalid value: \"map[metadata:map[labels:invalid]]\": cannot restore map from string","#,
                r#""reason":"Invalid","details":{"causes":[{"reason":"FieldValueInvalid","#,
                r#""message":"Invalid value: \"map[metadata:map[labels:invalid]]\": cannot restore map from string","field":"patch"}]},"code":422}"#,
                "\n"
            )
        );
        let r = smp(r#"{"data":{"n":5}}"#).await.expect("patch");
        assert_eq!(r.status().as_u16(), 422);
        let v: Value = r.json().await.expect("json");
        assert_eq!(
            v["message"],
            r#" "" is invalid: patch: Invalid value: "map[data:map[n:5]]": cannot convert int64 to string"#
        );
        let r = smp(r#"{"apiVersion":"apps/v1","kind":"Secret","data":{"b":"2"}}"#)
            .await
            .expect("patch");
        assert_eq!(r.status().as_u16(), 200);
        let v: Value = r.json().await.expect("json");
        assert_eq!(v["kind"], "ConfigMap", "{v}");
        assert_eq!(v["apiVersion"], "v1", "{v}");
        assert_eq!(v["data"]["b"], "2", "{v}");
    });
}
