//! Object lifecycle end to end: two-phase deletion with finalizers,
//! preconditions and DeleteOptions, cascading deletion by the garbage
//! collector (`kubectl delete --cascade=background|foreground|orphan`), and
//! namespaces that terminate — with the installed kubectl and raw HTTPS, in
//! both modes.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// `kubectl get -o json` of one object, or `None` when it is not found.
fn get(c: &Cluster, args: &[&str]) -> Option<Value> {
    let mut full = vec!["get"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", "json"]);
    let out = c.kubectl(&full);
    if out.status.success() {
        return Some(json(&String::from_utf8_lossy(&out.stdout)));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("NotFound"), "kubectl {full:?}: {err}");
    None
}

/// Wait (10 s at most) until `cond` holds.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn uid(v: &Value) -> String {
    v["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn finalizers(v: &Value) -> Value {
    v["metadata"]["finalizers"].clone()
}

/// A ConfigMap owned by `owner` (blocking its foreground deletion).
fn owned_cm(ns: &str, name: &str, owner: &Value) -> String {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "ownerReferences": [{
            "apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
            "blockOwnerDeletion": true,
        }]},
    })
    .to_string()
}

/// Two-phase deletion, the finalizer rule, preconditions and options.
async fn deletion(c: &Cluster) {
    let http = c.client();
    let u = |p: &str| format!("{}{}", c.url, p);
    let cm = |n: &str| u(&format!("/api/v1/namespaces/default/configmaps/{n}"));
    c.ok(&["create", "configmap", "held"]);
    c.ok(&[
        "patch",
        "configmap",
        "held",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);

    // A delete keeps an object with finalizers: deletionTimestamp and a
    // zero deletionGracePeriodSeconds, the object in the answer.
    let r = http.delete(cm("held")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let marked: Value = r.json().await.unwrap();
    assert_eq!(marked["kind"], "ConfigMap");
    assert!(
        marked["metadata"]["deletionTimestamp"].is_string(),
        "{marked}"
    );
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    let err = c.fails(
        &[
            "patch",
            "configmap",
            "held",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}"#,
        ],
        None,
    );
    assert!(
        err.contains(r#"The ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}"#),
        "{err}"
    );
    // Removing the last finalizer deletes it.
    c.ok(&[
        "patch",
        "configmap",
        "held",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    assert!(get(c, &["configmap", "held"]).is_none());

    // Preconditions: 409 naming the kind, as kube's BeforeDelete does.
    let created = json(&c.ok(&["create", "configmap", "pre", "-o", "json"]));
    let r = http
        .delete(cm("pre"))
        .json(&json!({"preconditions": {"uid": "not-the-uid"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 409);
    let st: Value = r.json().await.unwrap();
    assert_eq!(st["reason"], "Conflict");
    assert_eq!(
        st["message"],
        format!("Operation cannot be fulfilled on ConfigMap \"pre\": the UID in the precondition (not-the-uid) does not match the UID in record ({}). The object might have been deleted and then recreated", uid(&created))
    );
    assert_eq!(st["details"], json!({"name": "pre", "kind": "ConfigMap"}));
    let r = http
        .delete(u("/apis/apps/v1/namespaces/default/deployments/nope"))
        .json(&json!({"preconditions": {"resourceVersion": "1"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let rv = created["metadata"]["resourceVersion"].as_str().unwrap();
    let r = http
        .delete(cm("pre"))
        .json(&json!({"preconditions": {"resourceVersion": "1"}}))
        .send()
        .await
        .unwrap();
    let st: Value = r.json().await.unwrap();
    assert_eq!(
        st["message"],
        format!("Operation cannot be fulfilled on ConfigMap \"pre\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified")
    );
    // DeleteOptions are validated before the lookup.
    let r = http
        .delete(cm("missing"))
        .json(&json!({"orphanDependents": true, "propagationPolicy": "Orphan"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 422);
    let st: Value = r.json().await.unwrap();
    assert_eq!(
        st["message"],
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set"#
    );
    // With the right uid: deleted, a Success Status naming the resource.
    let r = http
        .delete(cm("pre"))
        .json(&json!({"preconditions": {"uid": uid(&created)}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let st: Value = r.json().await.unwrap();
    assert_eq!(st["status"], "Success");
    assert_eq!(st["details"]["kind"], "configmaps");
    assert_eq!(st["details"]["uid"], uid(&created));

    // propagationPolicy leaves the garbage collector's finalizers.
    let owner = json(&c.ok(&["create", "configmap", "fg-owner", "-o", "json"]));
    c.ok_stdin(
        &["create", "-f", "-"],
        &owned_cm("default", "fg-child", &owner),
    );
    c.ok(&[
        "patch",
        "configmap",
        "fg-child",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    let r = http
        .delete(cm("fg-owner"))
        .json(&json!({"propagationPolicy": "Foreground"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let kept: Value = r.json().await.unwrap();
    assert_eq!(finalizers(&kept), json!(["foregroundDeletion"]));
    // The owner waits for its blocking dependent, which waits for its own finalizer.
    eventually("the dependent to be marked", || {
        get(c, &["configmap", "fg-child"])
            .is_some_and(|d| d["metadata"]["deletionTimestamp"].is_string())
    });
    assert!(get(c, &["configmap", "fg-owner"]).is_some());
    c.ok(&[
        "patch",
        "configmap",
        "fg-child",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    eventually("the foreground owner to go", || {
        get(c, &["configmap", "fg-owner"]).is_none()
    });

    // kube answers 202 when `orphanDependents: false` leaves the object
    // in place (here for its own finalizer).
    c.ok(&["create", "configmap", "accepted"]);
    c.ok(&[
        "patch",
        "configmap",
        "accepted",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    let r = http
        .delete(format!("{}?orphanDependents=false", cm("accepted")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 202);
    let kept: Value = r.json().await.unwrap();
    assert_eq!(finalizers(&kept), json!(["example.com/hold"]));
    c.ok(&[
        "patch",
        "configmap",
        "accepted",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    assert!(get(c, &["configmap", "accepted"]).is_none());
    // Orphan leaves `orphan`; the collector removes it (no dependents).
    c.ok(&["create", "configmap", "lonely"]);
    let r = http
        .delete(cm("lonely"))
        .json(&json!({"propagationPolicy": "Orphan"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let kept: Value = r.json().await.unwrap();
    assert_eq!(finalizers(&kept), json!(["orphan"]));
    eventually("the orphan finalizer to be handled", || {
        get(c, &["configmap", "lonely"]).is_none()
    });

    // deletecollection with a selector and the same options.
    for n in ["sel-a", "sel-b", "other"] {
        c.ok(&["create", "configmap", n]);
    }
    c.ok(&["label", "configmap", "sel-a", "sel-b", "pick=yes"]);
    let r = http
        .delete(format!(
            "{}?labelSelector=pick%3Dyes",
            u("/api/v1/namespaces/default/configmaps")
        ))
        .json(&json!({"propagationPolicy": "Background"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let list: Value = r.json().await.unwrap();
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
    assert!(get(c, &["configmap", "sel-a"]).is_none());
    assert!(get(c, &["configmap", "other"]).is_some());
}

/// A Deployment → ReplicaSet → Pod chain created by hand, plus a
/// ConfigMap chain, deleted with each `--cascade`.
fn cascades(c: &Cluster) {
    c.ok(&["create", "namespace", "gc"]);
    let chain = |tag: &str| -> (Value, Value, Value) {
        let deploy = json(&c.ok(&[
            "create",
            "deployment",
            &format!("web-{tag}"),
            "-n",
            "gc",
            "--image=nginx",
            "-o",
            "json",
        ]));
        let rs = json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": format!("web-{tag}-rs"), "namespace": "gc", "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": deploy["metadata"]["name"],
                "uid": deploy["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"selector": {"matchLabels": {"app": tag}},
                "template": {"metadata": {"labels": {"app": tag}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        });
        let rs = json(&c.ok_stdin(&["create", "-f", "-", "-o", "json"], &rs.to_string()));
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-{tag}-pod"), "namespace": "gc", "labels": {"app": tag},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"],
                    "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        });
        let pod = json(&c.ok_stdin(&["create", "-f", "-", "-o", "json"], &pod.to_string()));
        (deploy, rs, pod)
    };

    // Background: the owner goes at once, the chain after it.
    let (_, rs, pod) = chain("bg");
    c.ok(&[
        "delete",
        "deployment",
        "web-bg",
        "-n",
        "gc",
        "--cascade=background",
    ]);
    assert!(get(c, &["deployment", "web-bg", "-n", "gc"]).is_none());
    eventually("the background chain to go", || {
        get(
            c,
            &[
                "replicaset",
                rs["metadata"]["name"].as_str().unwrap(),
                "-n",
                "gc",
            ],
        )
        .is_none()
            && get(
                c,
                &["pod", pod["metadata"]["name"].as_str().unwrap(), "-n", "gc"],
            )
            .is_none()
    });

    // Foreground: kubectl waits until the dependents, then the owner, are gone.
    let (_, _, _) = chain("fg");
    c.ok(&[
        "delete",
        "deployment",
        "web-fg",
        "-n",
        "gc",
        "--cascade=foreground",
    ]);
    assert!(get(c, &["deployment", "web-fg", "-n", "gc"]).is_none());
    assert!(get(c, &["replicaset", "web-fg-rs", "-n", "gc"]).is_none());
    assert!(get(c, &["pod", "web-fg-pod", "-n", "gc"]).is_none());

    // Orphan: the dependents stay, without the reference to the owner.
    let (_, _, _) = chain("or");
    c.ok(&[
        "delete",
        "deployment",
        "web-or",
        "-n",
        "gc",
        "--cascade=orphan",
    ]);
    assert!(get(c, &["deployment", "web-or", "-n", "gc"]).is_none());
    let rs = get(c, &["replicaset", "web-or-rs", "-n", "gc"]).expect("orphaned replicaset");
    assert!(rs["metadata"]["ownerReferences"].is_null(), "{rs}");
    let pod = get(c, &["pod", "web-or-pod", "-n", "gc"]).expect("pod stays");
    assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");

    // ConfigMaps owning ConfigMaps; a dependent whose owner uid is gone
    // (re-created owner) is collected, one with a live second owner keeps it.
    let a = json(&c.ok(&["create", "configmap", "a", "-n", "gc", "-o", "json"]));
    let keep = json(&c.ok(&["create", "configmap", "keep", "-n", "gc", "-o", "json"]));
    let mut two = json(&owned_cm("gc", "two-owners", &a));
    two["metadata"]["ownerReferences"]
        .as_array_mut()
        .unwrap()
        .push(json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": keep["metadata"]["uid"]}));
    c.ok_stdin(&["create", "-f", "-"], &two.to_string());
    c.ok_stdin(&["create", "-f", "-"], &owned_cm("gc", "only-a", &a));
    c.ok(&["delete", "configmap", "a", "-n", "gc"]);
    c.ok(&["create", "configmap", "a", "-n", "gc"]);
    eventually("the dependent of the old uid to go", || {
        get(c, &["configmap", "only-a", "-n", "gc"]).is_none()
    });
    eventually("the dangling reference to be dropped", || {
        get(c, &["configmap", "two-owners", "-n", "gc"])
            .is_some_and(|d| d["metadata"]["ownerReferences"].as_array().map(Vec::len) == Some(1))
    });

    // A namespaced dependent of a cluster-scoped owner.
    let cr = json(&c.ok(&[
        "create",
        "clusterrole",
        "gc-owner",
        "--verb=get",
        "--resource=pods",
        "-o",
        "json",
    ]));
    c.ok_stdin(&["create", "-f", "-"], &owned_cm("gc", "of-cluster", &cr));
    std::thread::sleep(Duration::from_millis(500));
    assert!(get(c, &["configmap", "of-cluster", "-n", "gc"]).is_some());
    c.ok(&["delete", "clusterrole", "gc-owner"]);
    eventually("the dependent of the cluster-scoped owner to go", || {
        get(c, &["configmap", "of-cluster", "-n", "gc"]).is_none()
    });
}

const CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.lifecycle.example.com"},
  "spec": {"group": "lifecycle.example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}"#;

/// `kubectl delete ns` with a Deployment, ConfigMaps, a custom object and
/// a held object.
async fn namespace(c: &Cluster) {
    c.ok_stdin(&["create", "-f", "-"], CRD);
    c.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.lifecycle.example.com",
        "--timeout=20s",
    ]);
    c.ok(&["create", "namespace", "doomed"]);
    let widget = r#"{"apiVersion": "lifecycle.example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "doomed"}}"#;
    eventually("the custom resource to be served", || {
        c.kubectl_stdin(&["create", "-f", "-"], Some(widget))
            .status
            .success()
    });
    let ns = get(c, &["namespace", "doomed"]).unwrap();
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    c.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "doomed",
        "--image=nginx",
    ]);
    c.ok(&["create", "configmap", "plain", "-n", "doomed"]);
    c.ok(&["create", "configmap", "held", "-n", "doomed"]);
    c.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "doomed",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);

    let out = c.ok(&["delete", "namespace", "doomed", "--wait=false"]);
    assert_eq!(out.trim(), r#"namespace "doomed" deleted"#);
    let out = c.ok(&["get", "namespace", "doomed"]);
    assert!(out.contains("Terminating"), "{out}");
    // Everything but the held object goes; the conditions say why it stays.
    eventually("the conditions", || {
        let ns = get(c, &["namespace", "doomed"]).unwrap();
        let conds = ns["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        conds.iter().any(|c| {
            c["type"] == "NamespaceFinalizersRemaining"
                && c["status"] == "True"
                && c["reason"] == "SomeFinalizersRemain"
                && c["message"] == "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        }) && conds.iter().any(|c| {
            c["type"] == "NamespaceContentRemaining"
                && c["message"] == "Some resources are remaining: configmaps. has 1 resource instances"
        }) && conds.iter().any(|c| {
            c["type"] == "NamespaceDeletionDiscoveryFailure"
                && c["status"] == "False"
                && c["reason"] == "ResourcesDiscovered"
        })
    });
    assert!(get(c, &["deployment", "web", "-n", "doomed"]).is_none());
    assert!(get(c, &["configmap", "plain", "-n", "doomed"]).is_none());
    assert!(get(c, &["widgets", "w", "-n", "doomed"]).is_none());
    let ns = get(c, &["namespace", "doomed"]).unwrap();
    assert_eq!(ns["status"]["phase"], "Terminating");

    // No new content while terminating: kube's 403.
    let http = c.client();
    let r = http
        .post(format!("{}/api/v1/namespaces/doomed/configmaps", c.url))
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let st: Value = r.json().await.unwrap();
    assert_eq!(st["reason"], "Forbidden");
    assert_eq!(
        st["message"],
        r#"configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated"#
    );
    assert_eq!(st["details"]["causes"][0]["reason"], "NamespaceTerminating");

    // Releasing the last finalizer lets the namespace go within 2 s.
    c.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "doomed",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let released = Instant::now();
    eventually("the namespace to go", || {
        get(c, &["namespace", "doomed"]).is_none()
    });
    assert!(
        released.elapsed() < Duration::from_secs(2),
        "{:?}",
        released.elapsed()
    );

    // Re-creatable, and empty.
    c.ok(&["create", "namespace", "doomed"]);
    c.ok(&["create", "configmap", "again", "-n", "doomed"]);
    // `kubectl delete ns` (waiting) round trip.
    c.ok(&["delete", "namespace", "doomed"]);
    assert!(get(c, &["namespace", "doomed"]).is_none());

    // The finalize subresource: a namespace with a finalizer of our own
    // stays until it is removed through `PUT .../finalize`.
    c.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fin"},"spec":{"finalizers":["example.com/ours"]}}"#,
    );
    c.ok(&["delete", "namespace", "fin", "--wait=false"]);
    eventually("the kubernetes finalizer to go", || {
        get(c, &["namespace", "fin"])
            .is_some_and(|n| n["spec"]["finalizers"] == json!(["example.com/ours"]))
    });
    let mut ns = get(c, &["namespace", "fin"]).unwrap();
    ns["spec"]["finalizers"] = json!([]);
    let r = http
        .put(format!("{}/api/v1/namespaces/fin/finalize", c.url))
        .json(&ns)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    eventually("the finalized namespace to go", || {
        get(c, &["namespace", "fin"]).is_none()
    });
    let r = http
        .get(format!("{}/api/v1/namespaces/default/finalize", c.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    block_on(deletion(&c));
    cascades(&c);
    block_on(namespace(&c));
}

#[test]
fn lifecycle_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn lifecycle_distributed() {
    scenario(Mode::Distributed);
}

/// A controller-runtime-style loop: namespaces created with objects
/// inside (one held by a finalizer), deleted, and each gone within 2 s of
/// its last finalizer.
async fn churn(c: &Cluster, rounds: usize) {
    let http = c.client();
    let u = |p: &str| format!("{}{}", c.url, p);
    for i in 0..rounds {
        let ns = format!("churn-{i}");
        let r = http
            .post(u("/api/v1/namespaces"))
            .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 201);
        let cms = u(&format!("/api/v1/namespaces/{ns}/configmaps"));
        for n in ["a", "b"] {
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}});
            let r = http.post(&cms).json(&body).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 201);
        }
        let held = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "held", "finalizers": ["example.com/hold"]}});
        let r = http.post(&cms).json(&held).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 201);
        let r = http
            .delete(u(&format!("/api/v1/namespaces/{ns}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let answer: Value = r.json().await.unwrap();
        assert_eq!(answer["status"]["phase"], "Terminating");
        // Released as a client-go controller would (`RetryOnConflict`):
        // the namespace controller may be marking the object meanwhile.
        let mut tries = 0;
        loop {
            let r = http
                .patch(format!("{cms}/held"))
                .header("content-type", "application/merge-patch+json")
                .body(r#"{"metadata":{"finalizers":null}}"#)
                .send()
                .await
                .unwrap();
            let code = r.status().as_u16();
            if code == 409 && tries < 5 {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            assert_eq!(code, 200, "{}", r.text().await.unwrap());
            break;
        }
        let released = Instant::now();
        loop {
            let r = http
                .get(u(&format!("/api/v1/namespaces/{ns}")))
                .send()
                .await
                .unwrap();
            if r.status().as_u16() == 404 {
                break;
            }
            assert!(
                released.elapsed() < Duration::from_secs(2),
                "{ns} still there {:?} after its last finalizer",
                released.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[test]
fn namespace_churn_embedded() {
    let c = Cluster::start(Mode::Embedded);
    block_on(churn(&c, 100));
}
