//! Start-up benchmark (BENCHMARKS.md): how long a fresh Keelson takes to
//! its first successful request, in-process (`TestServer::start`) and as a
//! process (`keelson --storage-backend memory` / sled), p50/p99 over N
//! starts; where an in-process start spends its time; the idle RSS of a
//! process; and creates/s of the store in memory against sled.
//!
//! `cargo run --release -p keelson-testserver --example startbench -- [N]`
//! (the process runs use `target/release/keelson`, or `$KEELSON_BIN`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use keelson_api::{CreateOptions, GroupResource, ObjectKey, StoreApi};
use keelson_testserver::TestServer;
use kube::api::Api;

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what:<58} p50 {:>7.1} ms  p99 {:>7.1} ms  (n={})",
        pct(&samples, 0.5).as_secs_f64() * 1e3,
        pct(&samples, 0.99).as_secs_f64() * 1e3,
        samples.len()
    );
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

async fn in_process(n: usize) {
    let mut total = Vec::new();
    let mut phases: Vec<(&'static str, Vec<Duration>)> = Vec::new();
    for _ in 0..n {
        let t0 = Instant::now();
        let server = TestServer::start().await.expect("server");
        let api: Api<Namespace> = Api::all(server.client().await.expect("client"));
        api.get("default").await.expect("first request");
        total.push(t0.elapsed());
        for (i, p) in server.startup_phases().iter().enumerate() {
            if phases.len() <= i {
                phases.push((p.name, Vec::new()));
            }
            phases[i].1.push(p.took);
        }
    }
    println!(
        "in-process: the first start in this process (lazy statics): {:.1} ms",
        total[0].as_secs_f64() * 1e3
    );
    report(
        "in-process: TestServer::start -> first GET (admin client)",
        total,
    );
    for (name, samples) in phases {
        report(&format!("  phase: {name}"), samples);
    }
}

/// The gateway's parts, timed alone on a fresh in-memory store.
async fn gateway_parts(n: usize) {
    let (mut fresh_pki, mut reused_pki, mut rbac, mut apf) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let sans = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    let reused = tempfile::tempdir().expect("dir");
    keelson_gateway::pki::load_or_create(reused.path(), &sans).expect("pki");
    for _ in 0..n {
        let dir = tempfile::tempdir().expect("dir");
        let t = Instant::now();
        keelson_gateway::pki::load_or_create(dir.path(), &sans).expect("pki");
        keelson_gateway::pki::service_account_key(dir.path()).expect("sa key");
        fresh_pki.push(t.elapsed());
        let t = Instant::now();
        keelson_gateway::pki::load_or_create(reused.path(), &sans).expect("pki");
        reused_pki.push(t.elapsed());
        let store = memory_store().await;
        let t = Instant::now();
        keelson_controllers::bootstrap::reconcile_policy(store.as_ref())
            .await
            .expect("rbac");
        rbac.push(t.elapsed());
        let t = Instant::now();
        keelson_controllers::bootstrap::flowcontrol::reconcile_flowcontrol(store.as_ref())
            .await
            .expect("apf");
        apf.push(t.elapsed());
    }
    report(
        "  part: PKI, fresh data dir (4 keys, 3 certificates)",
        fresh_pki,
    );
    report(
        "  part: PKI, keys present (serving key and certificates)",
        reused_pki,
    );
    report("  part: bootstrap RBAC policy on a fresh store", rbac);
    report("  part: APF bootstrap configuration on a fresh store", apf);
}

async fn memory_store() -> Arc<dyn StoreApi> {
    let kv = keelson_kv_sled::SledKv::in_memory().expect("memory");
    Arc::new(
        keelson_storage::LocalStore::with_kv(Arc::new(kv), Default::default())
            .await
            .expect("store"),
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port")
}

fn keelson_bin() -> PathBuf {
    std::env::var_os("KEELSON_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/keelson")
        })
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Spawn `keelson` and time spawn -> first `200` from `/readyz`.
async fn process_start(
    http: &reqwest::Client,
    backend: &str,
    dir: &Path,
    idle_rss: bool,
) -> (Duration, Option<u64>) {
    let port = free_port();
    let t0 = Instant::now();
    let mut child = Command::new(keelson_bin())
        .args([
            "--storage-backend",
            backend,
            "--data-dir",
            &dir.display().to_string(),
            "--secure-port",
            &port.to_string(),
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn keelson");
    let url = format!("https://127.0.0.1:{port}/readyz");
    let took = loop {
        if let Ok(r) = http.get(&url).send().await {
            if r.status().is_success() {
                break t0.elapsed();
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no /readyz in 30 s");
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let rss = if idle_rss {
        tokio::time::sleep(Duration::from_secs(2)).await;
        rss_kib(child.id())
    } else {
        None
    };
    let _ = child.kill();
    let _ = child.wait();
    (took, rss)
}

async fn processes(n: usize) {
    if !keelson_bin().exists() {
        println!("process runs skipped: no {}", keelson_bin().display());
        return;
    }
    // The serving certificate is not known before the process writes it;
    // the probe still does the full TLS handshake.
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .expect("http");
    for backend in ["memory", "sled"] {
        let mut fresh = Vec::new();
        let mut existing = Vec::new();
        let kept = tempfile::tempdir().expect("dir");
        process_start(&http, backend, kept.path(), false).await;
        for _ in 0..n {
            let dir = tempfile::tempdir().expect("dir");
            fresh.push(process_start(&http, backend, dir.path(), false).await.0);
            existing.push(process_start(&http, backend, kept.path(), false).await.0);
        }
        report(
            &format!("process --storage-backend {backend}: fresh data dir -> /readyz 200"),
            fresh,
        );
        report(
            &format!("process --storage-backend {backend}: existing data dir -> /readyz 200"),
            existing,
        );
        let dir = tempfile::tempdir().expect("dir");
        if let (_, Some(kib)) = process_start(&http, backend, dir.path(), true).await {
            println!(
                "process --storage-backend {backend}: idle RSS 2 s after ready: {:.1} MiB",
                kib as f64 / 1024.0
            );
        }
    }
}

/// ConfigMap creates through the store (admission and HTTP excluded), 16
/// at a time.
async fn creates(backend: &str, store: Arc<dyn StoreApi>, total: usize) {
    let t = Instant::now();
    let per = total / 16;
    let workers = (0..16).map(|w| {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..per {
                let name = format!("cm-{w}-{i}");
                let key = ObjectKey::new(GroupResource::new("", "configmaps"), "default", &name);
                let obj = serde_json::json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default"},
                    "data": {"k": "v"},
                });
                store
                    .create(&key, obj, CreateOptions::default())
                    .await
                    .expect("create");
            }
        })
    });
    for w in futures::future::join_all(workers).await {
        w.expect("worker");
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "store creates/s, {backend:<6} (16 concurrent, {}): {:>8.0}",
        per * 16,
        (per * 16) as f64 / secs
    );
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    println!("load average before: {}", loadavg());
    in_process(n).await;
    gateway_parts(n).await;
    processes(n).await;
    creates("memory", memory_store().await, 8000).await;
    let dir = tempfile::tempdir().expect("dir");
    let sled = keelson_storage::LocalStore::open(&dir.path().join("store"), Default::default())
        .await
        .expect("sled");
    creates("sled", Arc::new(sled), 8000).await;
    println!("load average after: {}", loadavg());
}
