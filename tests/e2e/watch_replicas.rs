//! Distributed mode with two watch-cache replicas: watchers spread over
//! them, one replica is killed mid-stream, and every watcher still ends with
//! exactly the sequence of changes the store committed.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::{Cluster, Mode};

const WATCHERS: usize = 10;
const NS: &str = "replicas";

/// One delivered event: type, name, resourceVersion.
type Seen = (String, String, u64);

fn rv_of(o: &Value) -> u64 {
    o["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {o}"))
}

/// Read a watch until an event at `until` or later arrived (or 60 s passed).
async fn collect(
    client: reqwest::Client,
    url: String,
    until: tokio::sync::watch::Receiver<u64>,
) -> Vec<Seen> {
    let mut r = client.get(&url).send().await.expect("watch");
    assert_eq!(r.status().as_u16(), 200);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut buf = Vec::new();
    let mut seen: Vec<Seen> = Vec::new();
    let mut until = until;
    loop {
        let target = *until.borrow_and_update();
        if target > 0 && seen.last().is_some_and(|s| s.2 >= target) {
            return seen;
        }
        let chunk = tokio::select! {
            c = tokio::time::timeout_at(deadline, r.chunk()) => c,
            // The target moved: check it again.
            Ok(()) = until.changed() => continue,
        };
        match chunk {
            Err(_) => panic!("watch timed out after {} events", seen.len()),
            Ok(Ok(Some(bytes))) => {
                buf.extend_from_slice(&bytes);
                while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    let ev: Value = serde_json::from_slice(&line).expect("event JSON");
                    let t = ev["type"].as_str().unwrap_or("").to_string();
                    assert_ne!(t, "ERROR", "error event: {ev}");
                    let o = &ev["object"];
                    // The root CA publisher's ConfigMap, in every namespace.
                    if o["metadata"]["name"] == "kube-root-ca.crt" {
                        continue;
                    }
                    seen.push((
                        t,
                        o["metadata"]["name"].as_str().unwrap_or("").to_string(),
                        rv_of(o),
                    ));
                }
            }
            Ok(Ok(None)) | Ok(Err(_)) => {
                panic!("watch ended after {} events: {seen:?}", seen.len())
            }
        }
    }
}

async fn write(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Value,
) -> Value {
    let mut req = client.request(method.clone(), &url);
    req = if method == reqwest::Method::PATCH {
        req.header("Content-Type", "application/merge-patch+json")
            .body(body.to_string())
    } else {
        req.json(&body)
    };
    let r = req.send().await.expect("write");
    assert!(r.status().is_success(), "{method} {url}: {}", r.status());
    r.json().await.expect("json")
}

#[test]
fn killing_a_watch_replica_loses_and_repeats_nothing() {
    let mut c = Cluster::start(Mode::Distributed);
    // One runtime for the whole test: the watchers run across the kill.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let client = c.client();
    let base = c.url.clone();
    let cms = format!("{base}/api/v1/namespaces/{NS}/configmaps");
    let (start, watchers, until_tx) = rt.block_on(async {
        write(
            &client,
            reqwest::Method::POST,
            format!("{base}/api/v1/namespaces"),
            json!({"metadata": {"name": NS}}),
        )
        .await;
        let list: Value = client
            .get(&cms)
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        let start = rv_of(&list);
        let (until_tx, until_rx) = tokio::sync::watch::channel(0u64);
        // The gateway spreads successive watches over the two replicas.
        let watchers: Vec<_> = (0..WATCHERS)
            .map(|_| {
                tokio::spawn(collect(
                    client.clone(),
                    format!("{cms}?watch=true&resourceVersion={start}"),
                    until_rx.clone(),
                ))
            })
            .collect();
        (start, watchers, until_tx)
    });

    // Writes: creates, updates and deletes, with replica 0 killed half way.
    let mut committed: Vec<(String, String, Option<u64>)> = Vec::new();
    for round in 0..2 {
        rt.block_on(async {
            for i in 0..20 {
                let name = format!("cm-{round}-{i}");
                let o = write(
                    &client,
                    reqwest::Method::POST,
                    cms.clone(),
                    json!({"metadata": {"name": name}, "data": {"v": "1"}}),
                )
                .await;
                committed.push(("ADDED".into(), name.clone(), Some(rv_of(&o))));
                let o = write(
                    &client,
                    reqwest::Method::PATCH,
                    format!("{cms}/{name}"),
                    json!({"data": {"v": "2"}}),
                )
                .await;
                committed.push(("MODIFIED".into(), name.clone(), Some(rv_of(&o))));
                if i % 4 == 0 {
                    write(
                        &client,
                        reqwest::Method::DELETE,
                        format!("{cms}/{name}"),
                        json!({}),
                    )
                    .await;
                    committed.push(("DELETED".into(), name, None));
                }
            }
        });
        if round == 0 {
            std::thread::sleep(Duration::from_millis(200));
            c.kill("keelson-watch-0");
        }
    }
    let last = rt.block_on(async {
        let o = write(
            &client,
            reqwest::Method::POST,
            cms.clone(),
            json!({"metadata": {"name": "last"}}),
        )
        .await;
        committed.push(("ADDED".into(), "last".into(), Some(rv_of(&o))));
        rv_of(&o)
    });
    until_tx.send_replace(last);

    let results: Vec<Vec<Seen>> = rt.block_on(async {
        let mut out = Vec::new();
        for w in watchers {
            out.push(w.await.expect("watcher"));
        }
        out
    });
    // Everyone saw the committed writes in order, each once.
    for (i, seen) in results.iter().enumerate() {
        assert_eq!(seen.len(), committed.len(), "watcher {i}: {seen:?}");
        let mut prev = start;
        for (got, want) in seen.iter().zip(&committed) {
            assert_eq!((&got.0, &got.1), (&want.0, &want.1), "watcher {i}");
            if let Some(rv) = want.2 {
                assert_eq!(got.2, rv, "watcher {i}: {}", got.1);
            }
            assert!(got.2 > prev, "watcher {i}: revisions increase");
            prev = got.2;
        }
        assert_eq!(seen, &results[0], "watcher {i} agrees with watcher 0");
    }

    // The surviving replica serves new lists and watches.
    rt.block_on(async {
        let list: Value = client
            .get(&cms)
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        let names: Vec<&str> = list["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|o| o["metadata"]["name"].as_str())
            // The root CA publisher's ConfigMap, in every namespace.
            .filter(|n| *n != "kube-root-ca.crt")
            .collect();
        assert_eq!(names.len(), 40 - 10 + 1, "{names:?}");
        let (_tx, rx) = tokio::sync::watch::channel(last);
        let replay = collect(
            client.clone(),
            format!("{cms}?watch=true&resourceVersion={start}"),
            rx,
        )
        .await;
        assert_eq!(replay, results[0]);
    });
}

/// Events of a watch until it ends or `within` passes.
async fn events_for(mut r: reqwest::Response, within: Duration) -> Vec<Seen> {
    let deadline = tokio::time::Instant::now() + within;
    let mut buf = Vec::new();
    let mut seen = Vec::new();
    while let Ok(Ok(Some(bytes))) = tokio::time::timeout_at(deadline, r.chunk()).await {
        buf.extend_from_slice(&bytes);
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            let ev: Value = serde_json::from_slice(&line).expect("event JSON");
            let o = &ev["object"];
            // The root CA publisher's ConfigMap, in every namespace.
            if o["metadata"]["name"] == "kube-root-ca.crt" {
                continue;
            }
            seen.push((
                ev["type"].as_str().unwrap_or("").to_string(),
                o["metadata"]["name"].as_str().unwrap_or("").to_string(),
                rv_of(o),
            ));
        }
    }
    seen
}

#[test]
fn a_watch_from_now_never_replays_history_after_its_replica_dies() {
    let mut c = Cluster::start(Mode::Distributed);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let client = c.client();
    let base = c.url.clone();
    let cms = format!("{base}/api/v1/namespaces/{NS}/configmaps");
    let watches = rt.block_on(async {
        write(
            &client,
            reqwest::Method::POST,
            format!("{base}/api/v1/namespaces"),
            json!({"metadata": {"name": NS}}),
        )
        .await;
        for i in 0..5 {
            let body = json!({"metadata": {"name": format!("old-{i}")}});
            write(&client, reqwest::Method::POST, cms.clone(), body).await;
        }
        // Two watches "from now" (no initial events, no revision): the
        // gateway puts one on each replica.
        let url =
            format!("{cms}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan");
        let mut watches = Vec::new();
        for _ in 0..2 {
            let r = client.get(&url).send().await.expect("watch");
            assert_eq!(r.status().as_u16(), 200);
            watches.push(r);
        }
        watches
    });
    // One replica dies before either watch has seen an event.
    c.kill("keelson-watch-0");
    let seen: Vec<Vec<Seen>> = rt.block_on(async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        for n in ["new-1", "new-2"] {
            let body = json!({"metadata": {"name": n}});
            write(&client, reqwest::Method::POST, cms.clone(), body).await;
        }
        let mut out = Vec::new();
        for r in watches {
            out.push(events_for(r, Duration::from_secs(3)).await);
        }
        out
    });
    for s in &seen {
        assert!(
            s.iter()
                .all(|(t, n, _)| t == "ADDED" && n.starts_with("new-")),
            "a watch from now replayed older changes: {s:?}"
        );
    }
    let names: Vec<Vec<&str>> = seen
        .iter()
        .map(|s| s.iter().map(|e| e.1.as_str()).collect())
        .collect();
    assert!(
        names.iter().any(|n| n == &["new-1", "new-2"]),
        "the watch on the surviving replica saw both writes: {names:?}"
    );
}
