//! `keelson-watchbench`: list and watch benchmarks against a running Keelson
//! over HTTPS (issue 3's figures).
//!
//! - `fanout`: many watchers on one collection while writes land at a fixed
//!   rate: delivered events/s, delivery latency (write sent → event
//!   received), server RSS and memory per idle watcher.
//! - `list`: a large collection listed at once and in pages: latency to
//!   the last byte (the server's part) and with the client's JSON parse,
//!   bytes, the server's CPU and peak RSS growth during the list.
//! - `formats`: a LIST of many pods in each representation (JSON, JSON
//!   gzipped, Protobuf, CBOR, Table): latency, bytes, server CPU per list;
//!   `fanout --protobuf` watches in Protobuf.
//! - `cache-memory`: the watch cache's memory per object relative to the
//!   object's JSON size (run against a `keelson-watch` replica's pid).
//!
//! RSS figures read `/proc/PID/status` of the server process given with
//! `--pid`; peak growth resets the kernel's high-water mark through
//! `/proc/PID/clear_refs` first.
#![forbid(unsafe_code)]

#[path = "../connect.rs"]
mod connect;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde_json::{json, Value};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Parser)]
#[command(name = "keelson-watchbench")]
struct Flags {
    /// Server data directory (kubeconfig server URL, pki/ca.crt, admin-token).
    #[arg(long, global = true, default_value = "keelson-data")]
    data_dir: PathBuf,
    /// The server process whose memory is measured.
    #[arg(long, global = true)]
    pid: Option<u32>,
    /// Namespace to use (created if missing).
    #[arg(long, global = true, default_value = "bench")]
    namespace: String,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Watch fan-out under a steady write rate.
    Fanout {
        #[arg(long, default_value_t = 1000)]
        watchers: usize,
        /// HTTP/2 connections the watchers share.
        #[arg(long, default_value_t = 20)]
        connections: usize,
        /// Writes per second.
        #[arg(long, default_value_t = 500)]
        rate: u64,
        #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
        duration: Duration,
        /// Watch in Kubernetes Protobuf instead of JSON.
        #[arg(long)]
        protobuf: bool,
    },
    /// LIST a large collection at once and in pages.
    List {
        #[arg(long, default_value_t = 10_000)]
        objects: usize,
        /// Items per page for the paged run.
        #[arg(long, default_value_t = 500)]
        page: usize,
        /// Repetitions of each measurement.
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// LIST of many pods in each representation (JSON, JSON gzipped,
    /// Protobuf, CBOR, Table): latency, bytes and the server's CPU per list.
    Formats {
        #[arg(long, default_value_t = 10_000)]
        objects: usize,
        /// Repetitions of each measurement.
        #[arg(long, default_value_t = 10)]
        runs: usize,
    },
    /// Cache memory per object (pid = a keelson-watch replica).
    CacheMemory {
        #[arg(long, default_value_t = 10_000)]
        objects: usize,
    },
}

struct Server {
    url: String,
    ca: Vec<u8>,
    token: String,
}

impl Server {
    fn load(dir: &Path) -> Result<Server, Error> {
        let kc = std::fs::read_to_string(dir.join("kubeconfig"))?;
        let url = kc
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: ").map(str::to_string))
            .ok_or("no server in kubeconfig")?;
        Ok(Server {
            url: connect::url(url),
            ca: std::fs::read(dir.join("pki/ca.crt"))?,
            token: std::fs::read_to_string(dir.join("admin-token"))?
                .trim()
                .to_string(),
        })
    }

    /// A client on its own connection (HTTP/2 when the server offers it).
    fn client(&self) -> Result<reqwest::Client, Error> {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {}", self.token).parse()?,
        );
        Ok(connect::builder(reqwest::Client::builder())
            .add_root_certificate(reqwest::Certificate::from_pem(&self.ca)?)
            .default_headers(headers)
            .pool_max_idle_per_host(1)
            .build()?)
    }

    fn collection(&self, ns: &str) -> String {
        format!("{}/api/v1/namespaces/{ns}/configmaps", self.url)
    }
}

/// Memory of a process from `/proc/PID/status`, in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn rss(pid: Option<u32>) -> u64 {
    pid.map(|p| status_kib(p, "VmRSS:")).unwrap_or(0)
}

/// Reset the peak-RSS mark, returning the RSS now.
fn reset_peak(pid: Option<u32>) -> u64 {
    if let Some(p) = pid {
        let _ = std::fs::write(format!("/proc/{p}/clear_refs"), "5");
    }
    rss(pid)
}

fn peak(pid: Option<u32>) -> u64 {
    pid.map(|p| status_kib(p, "VmHWM:")).unwrap_or(0)
}

async fn ensure_namespace(c: &reqwest::Client, s: &Server, ns: &str) -> Result<(), Error> {
    let r = c
        .post(format!("{}/api/v1/namespaces", s.url))
        .json(&json!({"metadata": {"name": ns}}))
        .send()
        .await?;
    match r.status().as_u16() {
        201 | 409 => Ok(()),
        code => Err(format!("create namespace: {code}").into()),
    }
}

/// Create `n` ConfigMaps of about 1 KiB of JSON each, 32 at a time.
async fn seed(s: &Server, ns: &str, n: usize) -> Result<(), Error> {
    seed_with(s, s.collection(ns), n, |i| {
        json!({
            "metadata": {"name": format!("item-{i:06}"), "labels": {"bench": "list"}},
            "data": {"payload": "x".repeat(780)},
        })
    })
    .await
}

/// Create `n` objects `body(i)` in `url` from 32 concurrent tasks (an
/// object already there counts as created).
async fn seed_with(
    s: &Server,
    url: String,
    n: usize,
    body: fn(usize) -> Value,
) -> Result<(), Error> {
    let c = s.client()?;
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (c, url, next) = (c.clone(), url.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                if i >= n {
                    return Ok::<(), Error>(());
                }
                let r = c.post(&url).json(&body(i)).send().await?;
                let code = r.status().as_u16();
                // Read every body: dropping unread HTTP/2 responses resets
                // their streams, and h2 gives up after 1,024 such resets.
                let _ = r.bytes().await?;
                if code != 201 && code != 409 {
                    return Err(format!("seed: {code}").into());
                }
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0)
}

// ---------- list ----------

/// One list walk: latency (ms), bytes, pages.
/// One walk of a collection: the time until each page's last byte had
/// arrived (summed over pages), the whole walk's time including the
/// client's parse of every page, bytes, pages and items.
struct Walk {
    received_ms: f64,
    total_ms: f64,
    bytes: usize,
    pages: usize,
    items: usize,
}

async fn walk(c: &reqwest::Client, url: &str, limit: usize) -> Result<Walk, Error> {
    let start = Instant::now();
    let mut received = Duration::ZERO;
    let mut bytes = 0usize;
    let mut pages = 0usize;
    let mut items = 0usize;
    let mut cont = String::new();
    loop {
        let mut q: Vec<(&str, String)> = Vec::new();
        if limit > 0 {
            q.push(("limit", limit.to_string()));
        }
        if !cont.is_empty() {
            q.push(("continue", cont.clone()));
        }
        let sent = Instant::now();
        let body = c.get(url).query(&q).send().await?.bytes().await?;
        received += sent.elapsed();
        bytes += body.len();
        pages += 1;
        let v: Value = serde_json::from_slice(&body)?;
        items += v["items"].as_array().map(Vec::len).unwrap_or(0);
        match v["metadata"]["continue"].as_str() {
            Some(t) if !t.is_empty() => cont = t.to_string(),
            _ => break,
        }
    }
    Ok(Walk {
        received_ms: received.as_secs_f64() * 1000.0,
        total_ms: start.elapsed().as_secs_f64() * 1000.0,
        bytes,
        pages,
        items,
    })
}

async fn list_bench(
    s: &Server,
    f: &Flags,
    objects: usize,
    page: usize,
    runs: usize,
) -> Result<(), Error> {
    let c = s.client()?;
    ensure_namespace(&c, s, &f.namespace).await?;
    seed(s, &f.namespace, objects).await?;
    let url = s.collection(&f.namespace);
    // Warm up (builds the watch cache of configmaps).
    walk(&c, &url, 0).await?;
    println!("server RSS before the lists: {:.1} MiB", mib(rss(f.pid)));
    for (label, limit) in [("at once", 0usize), ("in pages", page)] {
        let mut received = Vec::new();
        let mut total = Vec::new();
        let mut cpu = Vec::new();
        let mut growth = 0u64;
        let mut last = (0, 0, 0);
        for _ in 0..runs {
            let before = reset_peak(f.pid);
            let cpu_before = cpu_ms(f.pid);
            let w = walk(&c, &url, limit).await?;
            cpu.push(cpu_ms(f.pid) - cpu_before);
            growth = growth.max(peak(f.pid).saturating_sub(before));
            received.push(w.received_ms);
            total.push(w.total_ms);
            last = (w.bytes, w.pages, w.items);
        }
        for v in [&mut received, &mut total, &mut cpu] {
            v.sort_by(|a, b| a.total_cmp(b));
        }
        let (bytes, pages, items) = last;
        println!(
            "list {label}: items={items} pages={pages} bytes={bytes} ({:.1} MiB) to last byte p50={:.1}ms min={:.1}ms; with the client's parse p50={:.1}ms max={:.1}ms; server CPU p50={:.0}ms; peak RSS growth={:.2} MiB (one page of {page} = {:.2} MiB; growth/page = {:.2})",
            bytes as f64 / 1048576.0,
            pct(&received, 0.5),
            received.first().copied().unwrap_or(0.0),
            pct(&total, 0.5),
            total.last().copied().unwrap_or(0.0),
            pct(&cpu, 0.5),
            mib(growth),
            (bytes as f64 / (items.max(1) as f64) * page as f64) / 1048576.0,
            growth as f64 * 1024.0 / ((bytes as f64 / items.max(1) as f64) * page as f64),
        );
    }
    Ok(())
}

// ---------- cache memory ----------

async fn cache_memory(s: &Server, f: &Flags, objects: usize) -> Result<(), Error> {
    let c = s.client()?;
    ensure_namespace(&c, s, &f.namespace).await?;
    let url = s.collection(&f.namespace);
    // Build the (empty) configmaps cache, then let it fill from the change
    // stream, so its own growth is measured, not a bulk list's garbage.
    walk(&c, &url, 0).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = rss(f.pid);
    seed(s, &f.namespace, objects).await?;
    let items = walk(&c, &url, 0).await?.items;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss(f.pid);
    // The objects' JSON as the cache holds it (with kind and apiVersion).
    let body = c.get(&url).send().await?.bytes().await?;
    let v: Value = serde_json::from_slice(&body)?;
    let mut json_bytes = 0usize;
    for it in v["items"].as_array().ok_or("items")? {
        let mut o = it.clone();
        o["kind"] = json!("ConfigMap");
        o["apiVersion"] = json!("v1");
        json_bytes += serde_json::to_vec(&o)?.len();
    }
    let grew = (after.saturating_sub(before)) as f64 * 1024.0;
    println!(
        "cache: objects={items} json={:.2} MiB ({:.0} B/object) watch-replica RSS {:.1} → {:.1} MiB: +{:.0} B/object = {:.2}× the JSON size",
        json_bytes as f64 / 1048576.0,
        json_bytes as f64 / items.max(1) as f64,
        mib(before),
        mib(after),
        grew / items.max(1) as f64,
        grew / json_bytes.max(1) as f64,
    );
    Ok(())
}

// ---------- fan-out ----------

/// Latency histogram: 100 µs buckets up to 10 s.
struct Histogram {
    buckets: Vec<AtomicU64>,
}

const BUCKET_US: u64 = 100;

impl Histogram {
    fn new() -> Self {
        Histogram {
            buckets: (0..100_000).map(|_| AtomicU64::new(0)).collect(),
        }
    }
    fn add(&self, us: u64) {
        let i = ((us / BUCKET_US) as usize).min(self.buckets.len() - 1);
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
    }
    fn total(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }
    fn pct_ms(&self, p: f64) -> f64 {
        let total = self.total();
        let want = (total as f64 * p).ceil() as u64;
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b.load(Ordering::Relaxed);
            if seen >= want.max(1) {
                return ((i as u64 + 1) * BUCKET_US) as f64 / 1000.0;
            }
        }
        f64::INFINITY
    }
}

/// The `"t":"<micros>"` a fan-out write carries. Searched from the end:
/// `data` is the object's last field, so it is a few bytes from the end
/// (the load generator shares the server's cores; it must stay cheap).
fn stamp(line: &[u8]) -> Option<u64> {
    let key = br#""t":""#;
    let at = line.windows(key.len()).rposition(|w| w == key)? + key.len();
    let end = line[at..].iter().position(|b| *b == b'"')? + at;
    std::str::from_utf8(&line[at..end]).ok()?.parse().ok()
}

/// The stamp of a Protobuf watch event: the `data` map entry `t` →
/// `<micros>` (`0a 01 't' 12 <len> <digits>`), searched from the end.
fn stamp_pb(frame: &[u8]) -> Option<u64> {
    let key = [0x0a, 0x01, b't', 0x12];
    let at = frame.windows(key.len()).rposition(|w| w == key)? + key.len();
    let len = *frame.get(at)? as usize;
    let digits = frame.get(at + 1..at + 1 + len)?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

// ---------- formats ----------

/// CPU time (user + system) of a process, in milliseconds.
fn cpu_ms(pid: Option<u32>) -> f64 {
    let Some(pid) = pid else { return 0.0 };
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command's closing parenthesis; utime and stime are
    // the 12th and 13th of them, in clock ticks (100 per second here).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| f.get(i).and_then(|v| v.parse::<f64>().ok()))
        .sum();
    ticks * 10.0
}

async fn seed_pods(s: &Server, ns: &str, n: usize) -> Result<(), Error> {
    let url = format!("{}/api/v1/namespaces/{ns}/pods", s.url);
    seed_with(s, url, n, |i| {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("pod-{i:06}"), "labels": {"app": "bench", "tier": format!("t{}", i % 10)}},
            "spec": {"containers": [{
                "name": "app", "image": "registry.example/app:v1",
                "ports": [{"containerPort": 8080, "name": "http"}],
                "env": [{"name": "MODE", "value": "bench"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }]},
        })
    })
    .await
}

async fn formats(s: &Server, f: &Flags, objects: usize, runs: usize) -> Result<(), Error> {
    let c = s.client()?;
    ensure_namespace(&c, s, &f.namespace).await?;
    seed_pods(s, &f.namespace, objects).await?;
    let url = format!("{}/api/v1/namespaces/{}/pods", s.url, f.namespace);
    let kinds: [(&str, &str, bool); 5] = [
        ("JSON", "application/json", false),
        ("JSON, gzip", "application/json", true),
        ("Protobuf", "application/vnd.kubernetes.protobuf", false),
        ("CBOR", "application/cbor", false),
        (
            "Table",
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            false,
        ),
    ];
    println!("LIST of {objects} pods, {runs} runs each (server CPU from --pid)");
    for (label, accept, gzip) in kinds {
        let get = || {
            let mut r = c.get(&url).header("Accept", accept);
            if gzip {
                r = r.header("Accept-Encoding", "gzip");
            }
            r
        };
        // Warm up (the cache's memoized encodings of this format).
        let warm = get().send().await?;
        let code = warm.status().as_u16();
        let _ = warm.bytes().await?;
        if code != 200 {
            println!("{label:<12} answered {code}: skipped");
            continue;
        }
        let mut lat = Vec::new();
        let mut bytes = 0usize;
        let cpu_before = cpu_ms(f.pid);
        for _ in 0..runs {
            let start = Instant::now();
            let body = get().send().await?.bytes().await?;
            lat.push(start.elapsed().as_secs_f64() * 1000.0);
            bytes = body.len();
        }
        let cpu = (cpu_ms(f.pid) - cpu_before) / runs.max(1) as f64;
        lat.sort_by(|a, b| a.total_cmp(b));
        println!(
            "{label:<12} bytes={bytes:>10} ({:>6.2} MiB) latency p50={:>7.1}ms min={:>7.1}ms server CPU/list={cpu:>6.1}ms",
            bytes as f64 / 1048576.0,
            pct(&lat, 0.5),
            lat.first().copied().unwrap_or(0.0),
        );
    }
    Ok(())
}

async fn fanout(
    s: &Server,
    f: &Flags,
    watchers: usize,
    connections: usize,
    rate: u64,
    duration: Duration,
    protobuf: bool,
) -> Result<(), Error> {
    let admin = s.client()?;
    ensure_namespace(&admin, s, &f.namespace).await?;
    let url = s.collection(&f.namespace);
    let list: Value = admin.get(&url).send().await?.json().await?;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .ok_or("no resourceVersion")?
        .to_string();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_before = rss(f.pid);

    let base = Instant::now();
    let hist = Arc::new(Histogram::new());
    let opened = Arc::new(AtomicU64::new(0));
    let closed = Arc::new(AtomicU64::new(0));
    let clients: Vec<reqwest::Client> = (0..connections.max(1))
        .map(|_| s.client())
        .collect::<Result<_, _>>()?;
    let watch_url = format!("{url}?watch=true&resourceVersion={rv}&timeoutSeconds=3600");
    let mut tasks = Vec::new();
    for w in 0..watchers {
        let c = clients[w % clients.len()].clone();
        let (u, hist, opened, closed) = (
            watch_url.clone(),
            hist.clone(),
            opened.clone(),
            closed.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut req = c.get(&u);
            if protobuf {
                req = req.header("Accept", "application/vnd.kubernetes.protobuf;stream=watch");
            }
            let Ok(mut r) = req.send().await else {
                closed.fetch_add(1, Ordering::Relaxed);
                return;
            };
            opened.fetch_add(1, Ordering::Relaxed);
            let mut buf: Vec<u8> = Vec::new();
            while let Ok(Some(chunk)) = r.chunk().await {
                buf.extend_from_slice(&chunk);
                let now = base.elapsed().as_micros() as u64;
                let mut start = 0;
                if protobuf {
                    // Length-delimited frames (4-byte big-endian length).
                    while buf.len() - start >= 4 {
                        let mut len = [0u8; 4];
                        len.copy_from_slice(&buf[start..start + 4]);
                        let len = u32::from_be_bytes(len) as usize;
                        if buf.len() - start - 4 < len {
                            break;
                        }
                        if let Some(t) = stamp_pb(&buf[start + 4..start + 4 + len]) {
                            hist.add(now.saturating_sub(t));
                        }
                        start += 4 + len;
                    }
                    buf.drain(..start);
                    continue;
                }
                while let Some(pos) = buf[start..].iter().position(|b| *b == b'\n') {
                    if let Some(t) = stamp(&buf[start..start + pos]) {
                        hist.add(now.saturating_sub(t));
                    }
                    start += pos + 1;
                }
                buf.drain(..start);
            }
            closed.fetch_add(1, Ordering::Relaxed);
        }));
    }
    while (opened.load(Ordering::Relaxed) + closed.load(Ordering::Relaxed)) < watchers as u64 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle_after = rss(f.pid);
    println!(
        "watchers open={} server RSS idle {:.1} → {:.1} MiB: {:.1} KiB per idle watcher",
        opened.load(Ordering::Relaxed),
        mib(idle_before),
        mib(idle_after),
        (idle_after.saturating_sub(idle_before)) as f64 / watchers.max(1) as f64
    );

    // Writes at a fixed rate, each stamped with its send time.
    let peak_before = reset_peak(f.pid);
    let writer = s.client()?;
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / rate.max(1)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut writes = Vec::new();
    let mut n = 0u64;
    // How long each create took to be acknowledged: the part of the
    // delivery latency spent before the event exists.
    let acked = Arc::new(Histogram::new());
    while started.elapsed() < duration {
        ticker.tick().await;
        let (c, u, acked) = (writer.clone(), url.clone(), acked.clone());
        let t = base.elapsed().as_micros() as u64;
        n += 1;
        let name = format!("fan-{}-{n}", std::process::id());
        writes.push(tokio::spawn(async move {
            let body = json!({"metadata": {"name": name}, "data": {"t": t.to_string()}});
            match c.post(&u).json(&body).send().await {
                Ok(r) => {
                    let created = r.status().as_u16() == 201;
                    let ok = r.bytes().await.is_ok() && created;
                    if ok {
                        acked.add((base.elapsed().as_micros() as u64).saturating_sub(t));
                    }
                    ok
                }
                Err(_) => false,
            }
        }));
    }
    let wrote_for = started.elapsed();
    let mut ok = 0u64;
    for w in writes {
        if w.await.unwrap_or(false) {
            ok += 1;
        }
    }
    // Let the last events arrive.
    let expected = ok * watchers as u64;
    let drain = Instant::now();
    while hist.total() < expected && drain.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let delivered = hist.total();
    let secs = wrote_for.as_secs_f64();
    println!(
        "writes={ok} in {secs:.1}s ({:.0}/s) delivered={delivered} of {expected} ({:.0} events/s) latency p50={:.1}ms p99={:.1}ms max-bucket p99.9={:.1}ms watchers closed={} server RSS {:.1} MiB (peak {:.1} MiB)",
        ok as f64 / secs,
        delivered as f64 / drain.duration_since(started).as_secs_f64().max(secs),
        hist.pct_ms(0.50),
        hist.pct_ms(0.99),
        hist.pct_ms(0.999),
        closed.load(Ordering::Relaxed),
        mib(rss(f.pid)),
        mib(peak(f.pid).max(peak_before)),
    );
    println!(
        "create acknowledged after p50={:.1}ms p99={:.1}ms",
        acked.pct_ms(0.50),
        acked.pct_ms(0.99)
    );
    for t in tasks {
        t.abort();
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let f = Flags::parse();
    let s = Server::load(&f.data_dir)?;
    match f.cmd {
        Cmd::Fanout {
            watchers,
            connections,
            rate,
            duration,
            protobuf,
        } => fanout(&s, &f, watchers, connections, rate, duration, protobuf).await,
        Cmd::Formats { objects, runs } => formats(&s, &f, objects, runs).await,
        Cmd::List {
            objects,
            page,
            runs,
        } => list_bench(&s, &f, objects, page, runs).await,
        Cmd::CacheMemory { objects } => cache_memory(&s, &f, objects).await,
    }
}
