//! Watch over raw HTTPS and through kubectl, in both modes.

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

/// Open a watch and collect events until `n` arrived, the stream ended, or
/// `within` passed.
async fn watch(c: &Cluster, path: &str, n: usize, within: Duration) -> (u16, Vec<Value>, bool) {
    let mut r = c
        .client()
        .get(format!("{}{}", c.url, path))
        .send()
        .await
        .expect("watch");
    let code = r.status().as_u16();
    if code != 200 {
        let body = r.text().await.unwrap_or_default();
        return (
            code,
            vec![serde_json::from_str(&body).unwrap_or(Value::Null)],
            true,
        );
    }
    let deadline = tokio::time::Instant::now() + within;
    let mut buf = Vec::new();
    let mut events = Vec::new();
    let mut ended = false;
    while events.len() < n {
        match tokio::time::timeout_at(deadline, r.chunk()).await {
            Err(_) => break,
            Ok(Ok(Some(bytes))) => {
                buf.extend_from_slice(&bytes);
                while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    let ev: Value = serde_json::from_slice(&line).expect("event JSON");
                    // The root CA publisher's ConfigMap, in every namespace.
                    if ev["object"]["metadata"]["name"] != "kube-root-ca.crt" {
                        events.push(ev);
                    }
                }
            }
            Ok(Ok(None)) | Ok(Err(_)) => {
                ended = true;
                break;
            }
        }
    }
    (code, events, ended)
}

fn kinds(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

fn ev(t: &str, name: &str) -> (String, String) {
    (t.to_string(), name.to_string())
}

async fn post(c: &Cluster, path: &str, body: Value) -> Value {
    let r = c
        .client()
        .post(format!("{}{}", c.url, path))
        .json(&body)
        .send()
        .await
        .expect("post");
    assert!(r.status().is_success(), "{}", r.status());
    r.json().await.expect("json")
}

async fn merge_patch(c: &Cluster, path: &str, body: &str) {
    let r = c
        .client()
        .patch(format!("{}{}", c.url, path))
        .header("content-type", "application/merge-patch+json")
        .body(body.to_string())
        .send()
        .await
        .expect("patch");
    assert_eq!(r.status().as_u16(), 200);
}

async fn raw_checks(c: &Cluster) {
    let http = c.client();
    post(c, "/api/v1/namespaces", json!({"metadata": {"name": "w"}})).await;
    let cms = "/api/v1/namespaces/w/configmaps";
    post(c, cms, json!({"metadata": {"name": "a"}})).await;
    post(c, cms, json!({"metadata": {"name": "b"}})).await;

    // No resourceVersion: synthetic ADDED for the current state, then live changes.
    let live = {
        let c2 = c;
        async move { watch(c2, &format!("{cms}?watch=true"), 5, Duration::from_secs(20)).await }
    };
    let writes = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        post(c, cms, json!({"metadata": {"name": "c"}})).await;
        merge_patch(c, &format!("{cms}/a"), r#"{"data":{"x":"1"}}"#).await;
        let r = http
            .delete(format!("{}{cms}/b", c.url))
            .send()
            .await
            .expect("delete");
        assert_eq!(r.status().as_u16(), 200);
    };
    let ((code, events, _), ()) = tokio::join!(live, writes);
    assert_eq!(code, 200);
    assert_eq!(
        kinds(&events),
        vec![
            ev("ADDED", "a"),
            ev("ADDED", "b"),
            ev("ADDED", "c"),
            ev("MODIFIED", "a"),
            ev("DELETED", "b")
        ]
    );
    assert_eq!(events[3]["object"]["data"]["x"], "1");
    assert_eq!(events[0]["object"]["kind"], "ConfigMap");

    // From a list's resourceVersion: only later changes, no synthetic events.
    let list: Value = http
        .get(format!("{}{cms}", c.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    post(c, cms, json!({"metadata": {"name": "d"}})).await;
    let (_, events, _) = watch(
        c,
        &format!("{cms}?watch=1&resourceVersion={rv}"),
        1,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(kinds(&events), vec![ev("ADDED", "d")]);
    let d_rv: u64 = events[0]["object"]["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(d_rv > rv.parse::<u64>().unwrap());

    // timeoutSeconds ends the stream cleanly, after a final BOOKMARK.
    let (_, events, ended) = watch(
        c,
        &format!(
            "{cms}?watch=true&resourceVersion={d_rv}&allowWatchBookmarks=true&timeoutSeconds=1"
        ),
        10,
        Duration::from_secs(10),
    )
    .await;
    assert!(ended, "stream did not end");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "BOOKMARK");
    assert_eq!(
        events[0]["object"]["metadata"]["resourceVersion"],
        d_rv.to_string()
    );
    assert_eq!(events[0]["object"]["kind"], "ConfigMap");

    // Streaming list: initial state, then the initial-events-end bookmark.
    let (_, events, _) = watch(
        c,
        &format!("{cms}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"),
        4,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(
        kinds(&events)[..3],
        [ev("ADDED", "a"), ev("ADDED", "c"), ev("ADDED", "d")]
    );
    assert_eq!(events[3]["type"], "BOOKMARK");
    assert_eq!(
        events[3]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    let (code, body, _) = watch(
        c,
        &format!("{cms}?watch=true&sendInitialEvents=true"),
        1,
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body[0]["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    );

    // Selector transitions: starts matching → ADDED, stops → DELETED.
    let now: Value = http
        .get(format!("{}{cms}", c.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rv = now["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let sel_path = format!("{cms}?watch=true&resourceVersion={rv}&labelSelector=app%3Dx");
    let sel = watch(c, &sel_path, 2, Duration::from_secs(20));
    let relabel = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        merge_patch(
            c,
            &format!("{cms}/c"),
            r#"{"metadata":{"labels":{"app":"x"}}}"#,
        )
        .await;
        merge_patch(c, &format!("{cms}/d"), r#"{"data":{"ignored":"1"}}"#).await;
        merge_patch(
            c,
            &format!("{cms}/c"),
            r#"{"metadata":{"labels":{"app":"y"}}}"#,
        )
        .await;
    };
    let ((_, events, _), ()) = tokio::join!(sel, relabel);
    assert_eq!(kinds(&events), vec![ev("ADDED", "c"), ev("DELETED", "c")]);
    assert_eq!(events[1]["object"]["metadata"]["labels"]["app"], "x");
}

fn watch_suite(mode: Mode) {
    let c = Cluster::start(mode);
    block_on(raw_checks(&c));
    kubectl_checks(&c);
}

/// kubectl's watch users: `get -w`, `delete` waiting on a finalizer, `wait --for=delete`.
fn kubectl_checks(c: &Cluster) {
    c.ok(&["create", "namespace", "kw"]);
    let mut get_w = Command::new("kubectl")
        .args([
            "get",
            "configmaps",
            "-n",
            "kw",
            "-w",
            "--output-watch-events",
        ])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    std::thread::sleep(Duration::from_millis(1500));
    c.ok(&[
        "create",
        "configmap",
        "one",
        "-n",
        "kw",
        "--from-literal=a=b",
    ]);
    c.ok(&["label", "configmap", "one", "-n", "kw", "k=v"]);
    c.ok(&["delete", "configmap", "one", "-n", "kw"]);
    std::thread::sleep(Duration::from_millis(1500));
    let _ = get_w.kill();
    let mut out = String::new();
    get_w
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    let _ = get_w.wait();
    let rows: Vec<&str> = out.lines().filter(|l| l.contains("one")).collect();
    assert_eq!(rows.len(), 3, "kubectl get -w printed:\n{out}");
    for (row, t) in rows.iter().zip(["ADDED", "MODIFIED", "DELETED"]) {
        assert!(row.starts_with(t), "{row:?} should be {t}:\n{out}");
    }

    // delete waits for the finalizer, and returns once a PATCH removes it.
    c.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fin","namespace":"kw","finalizers":["example.com/hold"]}}"#,
    );
    let mut del = Command::new("kubectl")
        .args(["delete", "configmap", "fin", "-n", "kw", "--timeout=60s"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl delete");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        del.try_wait().expect("try_wait").is_none(),
        "delete returned while the finalizer was still there"
    );
    let held = c.ok(&[
        "get",
        "configmap",
        "fin",
        "-n",
        "kw",
        "-o",
        "jsonpath={.metadata.deletionTimestamp}",
    ]);
    assert!(!held.trim().is_empty(), "no deletionTimestamp");
    let wait = Command::new("kubectl")
        .args([
            "wait",
            "--for=delete",
            "configmap/fin",
            "-n",
            "kw",
            "--timeout=60s",
        ])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl wait");
    c.ok(&[
        "patch",
        "configmap",
        "fin",
        "-n",
        "kw",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    let started = Instant::now();
    let out = del.wait_with_output().expect("delete output");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("deleted"));
    let out = wait.wait_with_output().expect("wait output");
    assert!(
        out.status.success(),
        "kubectl wait: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(50));
    let err = c.fails(&["get", "configmap", "fin", "-n", "kw"], None);
    assert!(err.contains("NotFound"), "{err}");
}

#[test]
fn watch_embedded() {
    watch_suite(Mode::Embedded);
}

#[test]
fn watch_distributed() {
    watch_suite(Mode::Distributed);
}

/// A watch from a compacted revision answers 200 and one ERROR event with a
/// 410 Expired Status.
#[test]
fn watch_from_compacted_revision_is_expired() {
    let c = Cluster::start_with(Mode::Embedded, &["--etcd-compaction-interval", "1s"]);
    block_on(async {
        // Names before `kube-root-ca.crt` (in every namespace), so that a
        // one-item page is one of them.
        let cms = "/api/v1/namespaces/default/configmaps";
        let first = post(&c, cms, json!({"metadata": {"name": "a-old"}})).await;
        let old_rv: u64 = first["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        post(&c, cms, json!({"metadata": {"name": "b-other"}})).await;
        let page: Value = c
            .client()
            .get(format!("{}{cms}?limit=1", c.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let token = page["metadata"]["continue"]
            .as_str()
            .expect("continue")
            .to_string();
        // Supersede it and wait for compaction to pass it by.
        merge_patch(&c, &format!("{cms}/a-old"), r#"{"data":{"v":"2"}}"#).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (code, events, _) = watch(
                &c,
                &format!("{cms}?watch=true&resourceVersion={}", old_rv - 1),
                1,
                Duration::from_secs(2),
            )
            .await;
            assert_eq!(code, 200);
            if events
                .first()
                .map(|e| e["type"] == "ERROR")
                .unwrap_or(false)
            {
                let status = &events[0]["object"];
                assert_eq!(status["kind"], "Status");
                assert_eq!(status["code"], 410);
                assert_eq!(status["reason"], "Expired");
                assert!(
                    status["message"]
                        .as_str()
                        .unwrap()
                        .starts_with(&format!("too old resource version: {}", old_rv - 1)),
                    "{status}"
                );
                // The same revision is gone for exact lists and continue tokens.
                let get = |q: String| {
                    let client = c.client();
                    let url = format!("{}{cms}?{q}", c.url);
                    async move {
                        let r = client.get(url).send().await.unwrap();
                        (r.status().as_u16(), r.json::<Value>().await.unwrap())
                    }
                };
                let (code, s) = get(format!(
                    "resourceVersion={old_rv}&resourceVersionMatch=Exact"
                ))
                .await;
                assert_eq!(code, 410);
                assert_eq!(s["reason"], "Expired");
                assert_eq!(
                    s["message"],
                    "The resourceVersion for the provided list is too old."
                );
                let (code, s) = get(format!("limit=1&continue={token}")).await;
                assert_eq!(code, 410, "{s}");
                assert!(
                    s["message"]
                        .as_str()
                        .unwrap()
                        .starts_with("The provided continue parameter is too old"),
                    "{s}"
                );
                let fresh = s["metadata"]["continue"]
                    .as_str()
                    .expect("fresh continue token");
                let (code, rest) = get(format!("limit=1&continue={fresh}")).await;
                assert_eq!(code, 200);
                assert_eq!(rest["items"][0]["metadata"]["name"], "b-other");
                break;
            }
            assert!(Instant::now() < deadline, "never compacted: {events:?}");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
}
