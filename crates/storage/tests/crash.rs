//! `kill -9` a writer at random moments; every acknowledged write must
//! survive, intact, and the revision counter must never go backwards.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use keelson_api::{CreateOptions, StoreApi, UpdateOptions};
use rand::Rng;
use serde_json::json;

const CHILD_ENV: &str = "KEELSON_CRASH_CHILD_DIR";

/// The child: 8 concurrent writers creating then updating objects forever,
/// printing `ack <name> <rev> <data>` after each acknowledged write.
#[test]
#[ignore = "run by crash_recovery_keeps_every_acknowledged_write as a child process"]
fn crash_child_writer() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let s = open(std::path::Path::new(&dir)).await;
        let run: u64 = rand::thread_rng().gen();
        let mut tasks = Vec::new();
        for w in 0..8 {
            let s = s.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0u64.. {
                    let name = format!("r{run:x}-w{w}-{i}");
                    let key = cm_key("crash", &name);
                    let c = s
                        .create(&key, cm(&name, "created"), CreateOptions::default())
                        .await
                        .unwrap();
                    println!("ack {name} {} created", rv(&c));
                    let mut m = c.clone();
                    m["data"]["k"] = json!("updated");
                    let u = s.update(&key, m, UpdateOptions::default()).await.unwrap();
                    println!("ack {name} {} updated", rv(&u));
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_recovery_keeps_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut floor = 0u64;
    for round in 0..4 {
        let mut child = Command::new(&exe)
            .args([
                "crash_child_writer",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Start the random clock only once the child is writing, so a slow
        // start on a loaded machine cannot make a round acknowledge nothing.
        let first = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the child never acknowledged a write");
        let wait = Duration::from_millis(rand::thread_rng().gen_range(300..1500));
        let start = Instant::now();
        while start.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(10));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let lines: Vec<String> = std::iter::once(first).chain(rx.try_iter()).collect();

        // The latest acknowledged state per object.
        let mut acked = std::collections::BTreeMap::new();
        for line in &lines {
            let parts: Vec<&str> = line.split(' ').collect();
            if let ["ack", name, rev, data] = parts.as_slice() {
                let rev: u64 = rev.parse().unwrap();
                assert!(
                    rev > floor,
                    "round {round}: revision {rev} reused (floor {floor})"
                );
                let e = acked.entry(name.to_string()).or_insert((0, String::new()));
                if rev > e.0 {
                    *e = (rev, data.to_string());
                }
            }
        }
        assert!(
            !acked.is_empty(),
            "round {round}: the child acknowledged nothing"
        );
        eprintln!(
            "round {round}: killed after {wait:?}, {} acks over {} objects",
            lines.len(),
            acked.len()
        );

        let s = open(dir.path()).await;
        let current = s.current_revision().await.unwrap();
        for (name, (rev, data)) in &acked {
            let got = s
                .get(&cm_key("crash", name))
                .await
                .unwrap_or_else(|e| panic!("round {round}: {name} lost: {e}"));
            // An unacknowledged later write may also have survived.
            assert!(
                rv(&got) >= *rev,
                "round {round}: {name} went back from {rev} to {}",
                rv(&got)
            );
            if rv(&got) == *rev {
                assert_eq!(got["data"]["k"], data.as_str());
            }
            assert_eq!(got["kind"], "ConfigMap");
            assert!(current >= *rev);
        }
        floor = current;
        drop(s);
    }
}
