//! Group-commit throughput: 64 concurrent creators. Run with
//! `cargo test -p keelson-storage --release --test throughput -- --ignored --nocapture`.

mod common;

use std::time::Instant;

use common::*;
use keelson_api::{CreateOptions, StoreApi};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; prints creates per second"]
async fn concurrent_creates_per_second() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    const WRITERS: usize = 64;
    const PER_WRITER: usize = 150;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..PER_WRITER {
                let name = format!("w{w}-{i}");
                s.create(
                    &cm_key("bench", &name),
                    cm(&name, "x"),
                    CreateOptions::default(),
                )
                .await
                .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    let n = WRITERS * PER_WRITER;
    eprintln!(
        "{n} creates by {WRITERS} writers in {secs:.2}s: {:.0} creates/s",
        n as f64 / secs
    );
    assert_eq!(s.list(&cms(), Some("bench")).await.unwrap().items.len(), n);
}

/// Point reads: 64 concurrent readers of 1,000 objects. Run with
/// `cargo test -p keelson-storage --release --test throughput -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; prints gets per second"]
async fn concurrent_gets_per_second() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    const OBJECTS: usize = 1_000;
    const READERS: usize = 64;
    const PER_READER: usize = 2_000;
    for i in 0..OBJECTS {
        let name = format!("o{i}");
        s.create(
            &cm_key("bench", &name),
            cm(&name, "x"),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    }
    let start = Instant::now();
    let mut tasks = Vec::new();
    for r in 0..READERS {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..PER_READER {
                let name = format!("o{}", (r * 7 + i) % OBJECTS);
                s.get(&cm_key("bench", &name)).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    let n = READERS * PER_READER;
    eprintln!(
        "{n} gets by {READERS} readers in {secs:.2}s: {:.0} gets/s",
        n as f64 / secs
    );
}
