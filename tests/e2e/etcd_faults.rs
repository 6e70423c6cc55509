//! Keelson on a 3-member etcd cluster on loopback, under faults: one
//! member killed (SIGKILL) under a steady write load, then the whole
//! cluster stopped and restarted. What is checked is what a client sees:
//! no acknowledged write is lost, and a watch followed the way client-go's
//! reflector follows it (re-watch from the last resourceVersion seen when
//! the stream ends, re-list on `410 Gone`) sees every object exactly once.
//! Then two `keelson-store` replicas over one etcd, every client of the
//! store given both endpoints, and one replica killed under the load: only
//! the requests in flight on it fail.
//! The test starts `etcd` itself (Debian's `etcd-server` on PATH).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keelson_kv_etcd::testing::TestEtcdCluster;
use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

fn start(cluster: &TestEtcdCluster) -> Cluster {
    let servers = format!("--etcd-servers={}", cluster.endpoints().join(","));
    Cluster::start_with(Mode::Embedded, &["--storage-backend=etcd3", &servers])
}

/// GET `path` with the admin token: (status, body).
fn get(c: &Cluster, path: &str) -> (u16, String) {
    let client = c.client();
    let url = format!("{}{}", c.url, path);
    block_on(async move {
        match client.get(&url).send().await {
            Ok(r) => {
                let code = r.status().as_u16();
                (code, r.text().await.unwrap_or_default())
            }
            Err(e) => (0, e.to_string()),
        }
    })
}

fn list_names(c: &Cluster, ns: &str) -> (BTreeSet<String>, String) {
    let (code, body) = get(c, &format!("/api/v1/namespaces/{ns}/configmaps"));
    assert_eq!(code, 200, "{body}");
    let list: Value = serde_json::from_str(&body).expect("a list");
    let names = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .filter(|n| *n != "kube-root-ca.crt")
        .map(str::to_string)
        .collect();
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    (names, rv)
}

/// What a client-go reflector following the ConfigMaps of one namespace
/// saw: every watch event's type and name, the names a re-list delivered,
/// how often the watch was re-opened and re-listed.
#[derive(Debug, Default)]
struct Seen {
    events: Vec<(String, String)>,
    relisted: BTreeSet<String>,
    rewatches: usize,
    relists: usize,
}

impl Seen {
    fn added(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|(t, _)| t == "ADDED")
            .map(|(_, n)| n.clone())
            .collect()
    }

    /// Every name the reflector's store holds.
    fn known(&self) -> BTreeSet<String> {
        self.added()
            .into_iter()
            .chain(self.relisted.iter().cloned())
            .collect()
    }
}

/// Follow `ns`'s ConfigMaps from `rv` as a reflector does, until `stop`.
fn reflector(
    c: &Cluster,
    ns: &str,
    rv: String,
    stop: Arc<AtomicBool>,
) -> (std::thread::JoinHandle<()>, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = c.client();
    let base = format!("{}/api/v1/namespaces/{ns}/configmaps", c.url);
    let out = seen.clone();
    let handle = std::thread::spawn(move || {
        block_on(async move {
            let mut rv = rv;
            let mut first = true;
            while !stop.load(Ordering::SeqCst) {
                if !first {
                    out.lock().expect("seen").rewatches += 1;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                first = false;
                let url = format!(
                    "{base}?watch=1&allowWatchBookmarks=true&timeoutSeconds=60&resourceVersion={rv}"
                );
                let Ok(mut r) = client.get(&url).send().await else {
                    continue;
                };
                if r.status().as_u16() != 200 {
                    continue;
                }
                let mut buf = Vec::new();
                let mut gone = false;
                loop {
                    let chunk = tokio::select! {
                        c = r.chunk() => c,
                        _ = tokio::time::sleep(Duration::from_millis(200)) => {
                            if stop.load(Ordering::SeqCst) { break; }
                            continue;
                        }
                    };
                    let Ok(Some(bytes)) = chunk else { break };
                    buf.extend_from_slice(&bytes);
                    while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = buf.drain(..=pos).collect();
                        let Ok(ev) = serde_json::from_slice::<Value>(&line) else {
                            continue;
                        };
                        let t = ev["type"].as_str().unwrap_or("").to_string();
                        if t == "ERROR" {
                            // 410 Gone: the reflector re-lists.
                            gone = ev["object"]["code"] == 410;
                            continue;
                        }
                        let obj = &ev["object"];
                        if let Some(v) = obj["metadata"]["resourceVersion"].as_str() {
                            rv = v.to_string();
                        }
                        let name = obj["metadata"]["name"].as_str().unwrap_or("");
                        if t != "BOOKMARK" && name != "kube-root-ca.crt" {
                            out.lock().expect("seen").events.push((t, name.to_string()));
                        }
                    }
                    if gone {
                        break;
                    }
                }
                if gone {
                    let Ok(r) = client.get(&base).send().await else {
                        continue;
                    };
                    let Ok(list) = r.json::<Value>().await else {
                        continue;
                    };
                    let mut s = out.lock().expect("seen");
                    s.relists += 1;
                    for item in list["items"].as_array().into_iter().flatten() {
                        if let Some(n) = item["metadata"]["name"].as_str() {
                            if n != "kube-root-ca.crt" {
                                s.relisted.insert(n.to_string());
                            }
                        }
                    }
                    rv = list["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or("")
                        .to_string();
                }
            }
        })
    });
    (handle, seen)
}

/// One create of a write load: the answer's code (`0`: no HTTP answer),
/// its Status reason (or the client's error) when not `201`, and when it
/// was sent.
#[derive(Debug, Clone)]
struct Outcome {
    code: u16,
    reason: String,
    sent: Instant,
}

/// Outcome of each create of a write load, by name.
type Outcomes = Arc<Mutex<BTreeMap<String, Outcome>>>;

/// `writers` loops creating ConfigMaps in `ns` until `stop`.
fn write_load(
    c: &Cluster,
    ns: &str,
    writers: usize,
    stop: Arc<AtomicBool>,
) -> (std::thread::JoinHandle<()>, Outcomes) {
    let outcomes: Outcomes = Arc::default();
    let client = c.client();
    let url = format!("{}/api/v1/namespaces/{ns}/configmaps", c.url);
    let out = outcomes.clone();
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let mut tasks = Vec::new();
            for w in 0..writers {
                let (client, url, out, stop) =
                    (client.clone(), url.clone(), out.clone(), stop.clone());
                tasks.push(tokio::spawn(async move {
                    let mut i = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let name = format!("w{w}-{i}");
                        i += 1;
                        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": name}, "data": {"i": i.to_string()}});
                        let sent = Instant::now();
                        let (code, reason) = match client.post(&url).json(&body).send().await {
                            Ok(r) if r.status().as_u16() == 201 => (201, String::new()),
                            Ok(r) => {
                                let code = r.status().as_u16();
                                let status: Value = r.json().await.unwrap_or_default();
                                (code, status["reason"].as_str().unwrap_or("").to_string())
                            }
                            Err(e) => (0, e.to_string()),
                        };
                        out.lock()
                            .expect("outcomes")
                            .insert(name, Outcome { code, reason, sent });
                        if code != 201 {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }));
            }
            for t in tasks {
                let _ = t.await;
            }
        });
    });
    (handle, outcomes)
}

/// The acknowledged (`201`) and the failed creates of a write load.
fn acked_and_failed(outcomes: &BTreeMap<String, Outcome>) -> (BTreeSet<String>, BTreeSet<String>) {
    let (acked, failed): (Vec<_>, Vec<_>) = outcomes.iter().partition(|(_, o)| o.code == 201);
    (
        acked.into_iter().map(|(n, _)| n.clone()).collect(),
        failed.into_iter().map(|(n, _)| n.clone()).collect(),
    )
}

/// Wait until the reflector knows every name in `want` (or 60 s passed),
/// then a little longer for stragglers (duplicates would show then).
fn wait_seen(seen: &Mutex<Seen>, want: &BTreeSet<String>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if want.is_subset(&seen.lock().expect("seen").known()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
}

fn assert_no_duplicates(seen: &Seen) {
    let added = seen.added();
    let unique: BTreeSet<&String> = added.iter().collect();
    assert_eq!(
        unique.len(),
        added.len(),
        "a watch event was delivered twice: {:?}",
        seen.events
    );
}

#[test]
fn a_killed_member_loses_no_acknowledged_write() {
    let mut etcd = TestEtcdCluster::start(3);
    let c = start(&etcd);
    c.ok(&["create", "namespace", "load"]);
    let (_, rv) = list_names(&c, "load");
    let stop_watch = Arc::new(AtomicBool::new(false));
    let (watcher, seen) = reflector(&c, "load", rv, stop_watch.clone());

    let stop_load = Arc::new(AtomicBool::new(false));
    let (load, outcomes) = write_load(&c, "load", 4, stop_load.clone());
    std::thread::sleep(Duration::from_secs(2));
    let acked_before_kill = outcomes
        .lock()
        .expect("outcomes")
        .values()
        .filter(|o| o.code == 201)
        .count();
    etcd.kill(0);
    assert!(!etcd.is_running(0));
    std::thread::sleep(Duration::from_secs(4));
    stop_load.store(true, Ordering::SeqCst);
    load.join().expect("load");

    let outcomes = outcomes.lock().expect("outcomes").clone();
    let (acked, in_doubt) = acked_and_failed(&outcomes);
    assert!(acked_before_kill > 0, "the load ran before the kill");
    assert!(
        acked.len() > acked_before_kill,
        "writes went on with a member down: {acked_before_kill} acknowledged before the kill, \
         {} in all, {} failed",
        acked.len(),
        in_doubt.len()
    );

    // Every acknowledged write is stored.
    let (stored, _) = list_names(&c, "load");
    let lost: Vec<&String> = acked.difference(&stored).collect();
    assert!(lost.is_empty(), "acknowledged writes lost: {lost:?}");
    // Anything else stored was a request that failed in flight.
    let extra: Vec<&String> = stored.difference(&acked).collect();
    assert!(
        extra.iter().all(|n| in_doubt.contains(*n)),
        "stored but never written: {extra:?}"
    );
    for n in &stored {
        let (code, body) = get(&c, &format!("/api/v1/namespaces/load/configmaps/{n}"));
        assert_eq!(code, 200, "{n}: {body}");
    }

    // The watch saw each stored object once, and nothing else.
    wait_seen(&seen, &stored);
    stop_watch.store(true, Ordering::SeqCst);
    watcher.join().expect("watcher");
    let seen = seen.lock().expect("seen");
    assert_no_duplicates(&seen);
    assert_eq!(seen.known(), stored, "the reflector's view: {seen:?}");
    eprintln!(
        "{} creates, {} acknowledged, {} failed; watch re-opened {} times, re-listed {} times",
        outcomes.len(),
        acked.len(),
        in_doubt.len(),
        seen.rewatches,
        seen.relists
    );
}

#[test]
fn a_stopped_cluster_answers_504_and_recovers_with_the_watch() {
    let mut etcd = TestEtcdCluster::start(3);
    let c = start(&etcd);
    c.ok(&["create", "namespace", "outage"]);
    let (_, rv) = list_names(&c, "outage");
    let stop_watch = Arc::new(AtomicBool::new(false));
    let (watcher, seen) = reflector(&c, "outage", rv, stop_watch.clone());
    let mut created = BTreeSet::new();
    for i in 0..5 {
        let name = format!("before-{i}");
        c.ok(&["create", "configmap", &name, "-n", "outage"]);
        created.insert(name);
    }

    // The whole cluster goes away: kube's 504 Status, /readyz fails.
    etcd.stop_all();
    let (code, body) = get(&c, "/api/v1/namespaces/outage/configmaps/before-0");
    assert!(code == 504 || code == 503, "{code}: {body}");
    let status: Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!(status["kind"], "Status", "{body}");
    assert!(
        matches!(
            status["reason"].as_str(),
            Some("Timeout") | Some("ServiceUnavailable")
        ),
        "{body}"
    );
    let err = c.fails(&["create", "configmap", "during", "-n", "outage"], None);
    assert!(
        err.contains("Timeout") || err.contains("ServiceUnavailable"),
        "kubectl: {err}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, body) = get(&c, "/readyz?verbose");
        if code != 200 {
            assert!(body.contains("[-]etcd failed"), "{body}");
            break;
        }
        assert!(Instant::now() < deadline, "/readyz never failed");
        std::thread::sleep(Duration::from_millis(200));
    }

    // It comes back: full recovery.
    etcd.restart_all();
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(&c, "/readyz").0 != 200 {
        assert!(Instant::now() < deadline, "never ready again");
        std::thread::sleep(Duration::from_millis(200));
    }
    for i in 0..5 {
        let name = format!("after-{i}");
        c.ok(&["create", "configmap", &name, "-n", "outage"]);
        created.insert(name);
    }
    let (stored, _) = list_names(&c, "outage");
    assert_eq!(stored, created);
    assert!(
        !stored.contains("during"),
        "the refused create was not stored"
    );

    // The watch that was open went on (or was resumed from its last
    // resourceVersion, as a reflector does): every object once.
    wait_seen(&seen, &created);
    stop_watch.store(true, Ordering::SeqCst);
    watcher.join().expect("watcher");
    let seen = seen.lock().expect("seen");
    assert_no_duplicates(&seen);
    assert_eq!(seen.known(), created, "the reflector's view: {seen:?}");
    eprintln!(
        "watch re-opened {} times, re-listed {} times",
        seen.rewatches, seen.relists
    );
}

#[test]
fn a_killed_store_replica_fails_only_the_requests_in_flight_on_it() {
    const WRITERS: usize = 4;
    let etcd = TestEtcdCluster::start(1);
    let servers = format!("--etcd-servers={}", etcd.endpoints().join(","));
    let mut c = Cluster::start_store_replicas(2, &["--storage-backend=etcd3", &servers]);
    c.ok(&["create", "namespace", "replicas"]);

    let stop = Arc::new(AtomicBool::new(false));
    let (load, outcomes) = write_load(&c, "replicas", WRITERS, stop.clone());
    std::thread::sleep(Duration::from_secs(2));
    let killed_at = Instant::now();
    c.kill("keelson-store-0");
    std::thread::sleep(Duration::from_secs(4));
    stop.store(true, Ordering::SeqCst);
    load.join().expect("load");

    let outcomes = outcomes.lock().expect("outcomes").clone();
    let (acked, failed) = acked_and_failed(&outcomes);
    let before = outcomes.values().filter(|o| o.sent < killed_at).count();
    // Sent once the kill is known to every client of the store.
    let settled = killed_at + Duration::from_secs(1);
    let after: Vec<&Outcome> = outcomes.values().filter(|o| o.sent > settled).collect();
    let failures: Vec<(&String, &Outcome)> =
        outcomes.iter().filter(|(_, o)| o.code != 201).collect();
    eprintln!(
        "{} creates ({before} before the kill, {} a second after it), {} acknowledged, failed: {failures:?}",
        outcomes.len(),
        after.len(),
        acked.len()
    );
    assert!(before > 0, "the load ran before the kill");
    // At most one request per writer was in flight on the killed replica.
    assert!(
        failures.len() <= WRITERS,
        "{} failed, more than the {WRITERS} in flight: {failures:?}",
        failures.len()
    );
    // A request cut off by the kill is kube's 503 (or 504), not a reset
    // connection.
    for (name, o) in &failures {
        assert!(
            matches!(o.code, 503 | 504)
                && matches!(o.reason.as_str(), "ServiceUnavailable" | "Timeout"),
            "{name}: {o:?}"
        );
    }
    // Later requests went to the live replica.
    assert!(after.len() > WRITERS, "the load went on: {after:?}");
    let late: Vec<&&Outcome> = after.iter().filter(|o| o.code != 201).collect();
    assert!(late.is_empty(), "failed after the kill: {late:?}");

    // Every acknowledged create is readable; anything else stored was a
    // request that failed in flight.
    let (stored, _) = list_names(&c, "replicas");
    let lost: Vec<&String> = acked.difference(&stored).collect();
    assert!(lost.is_empty(), "acknowledged creates lost: {lost:?}");
    let extra: Vec<&String> = stored.difference(&acked).collect();
    assert!(
        extra.iter().all(|n| failed.contains(*n)),
        "stored but never written: {extra:?}"
    );
    for n in &acked {
        let (code, body) = get(&c, &format!("/api/v1/namespaces/replicas/configmaps/{n}"));
        assert_eq!(code, 200, "{n}: {body}");
    }
}
