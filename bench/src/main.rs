//! `keelson-loadgen`: drives create / get / list of ConfigMaps against a
//! running Keelson over HTTPS (HTTP/1.1 keep-alive, one connection per
//! client) and prints throughput and p50/p99 latency.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Op {
    Create,
    Get,
    List,
}

#[derive(Debug, Parser)]
#[command(name = "keelson-loadgen")]
struct Flags {
    /// Server data directory (reads kubeconfig server URL, pki/ca.crt, admin-token).
    #[arg(long)]
    data_dir: PathBuf,
    /// Operation to measure.
    #[arg(long, value_enum)]
    op: Op,
    /// Concurrent clients (one keep-alive connection each).
    #[arg(long, default_value_t = 1)]
    clients: usize,
    /// How long to run.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Namespace to use.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Objects pre-created for `list` (and the pool `get` reads from).
    #[arg(long, default_value_t = 100)]
    objects: usize,
}

fn server_url(data_dir: &std::path::Path) -> Result<String, Box<dyn std::error::Error>> {
    let kc = std::fs::read_to_string(data_dir.join("kubeconfig"))?;
    kc.lines()
        .find_map(|l| l.trim().strip_prefix("server: ").map(str::to_string))
        .ok_or_else(|| "no server in kubeconfig".into())
}

fn client(ca: &[u8], token: &str) -> Result<reqwest::Client, Box<dyn std::error::Error>> {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse()?,
    );
    Ok(reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca)?)
        .default_headers(headers)
        .http1_only()
        .pool_max_idle_per_host(1)
        .build()?)
}

fn payload(name: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"bench": "loadgen"}},
        "data": {"key": "x".repeat(512)},
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let f = Flags::parse();
    let url = server_url(&f.data_dir)?;
    let ca = std::fs::read(f.data_dir.join("pki/ca.crt"))?;
    let token = std::fs::read_to_string(f.data_dir.join("admin-token"))?
        .trim()
        .to_string();
    let base = format!("{url}/api/v1/namespaces/{}/configmaps", f.namespace);
    let run_id = std::process::id();

    // Seed objects for get/list.
    if f.op != Op::Create {
        let c = client(&ca, &token)?;
        for i in 0..f.objects {
            let r = c
                .post(&base)
                .json(&payload(&format!("seed-{run_id}-{i}")))
                .send()
                .await?;
            if r.status().as_u16() != 201 {
                return Err(format!("seed failed: {}", r.status()).into());
            }
        }
    }

    let counter = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + f.duration;
    let mut tasks = Vec::new();
    for w in 0..f.clients {
        let c = client(&ca, &token)?;
        let base = base.clone();
        let counter = counter.clone();
        let errors = errors.clone();
        let objects = f.objects;
        let op = f.op;
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(100_000);
            let mut i = 0usize;
            while Instant::now() < deadline {
                let start = Instant::now();
                let res = match op {
                    Op::Create => {
                        let n = counter.fetch_add(1, Ordering::Relaxed);
                        c.post(&base)
                            .json(&payload(&format!("lg-{run_id}-{w}-{n}")))
                            .send()
                            .await
                    }
                    Op::Get => {
                        let name = format!("seed-{run_id}-{}", (w + i) % objects);
                        c.get(format!("{base}/{name}")).send().await
                    }
                    Op::List => {
                        c.get(&base)
                            .query(&[("labelSelector", "bench=loadgen")])
                            .send()
                            .await
                    }
                };
                i += 1;
                match res {
                    Ok(r) if r.status().is_success() => {
                        let _ = r.bytes().await;
                        lat.push(start.elapsed());
                    }
                    _ => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            lat
        }));
    }
    let started = Instant::now();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await?);
    }
    let secs = started
        .elapsed()
        .as_secs_f64()
        .max(f.duration.as_secs_f64());
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    };
    println!(
        "op={:?} clients={} requests={} errors={} throughput={:.0}/s p50={:.2}ms p99={:.2}ms",
        f.op,
        f.clients,
        all.len(),
        errors.load(Ordering::Relaxed),
        all.len() as f64 / secs,
        pct(0.50),
        pct(0.99)
    );
    Ok(())
}
