//! `keelson-loadgen`: drives create / get / list of ConfigMaps, creates of a
//! custom resource, or update / apply of a Deployment, against a running
//! Keelson over HTTPS (HTTP/1.1 keep-alive, one connection per client) and
//! prints throughput and p50/p99 latency.
#![forbid(unsafe_code)]

mod connect;
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
    /// PUT of the client's own Deployment with a changed image each time.
    Update,
    /// Server-Side Apply (`apply-patch+yaml`) of the same change.
    Apply,
    /// POST of a custom resource (`widgets.bench.keelson.dev`, see
    /// `bench/custom.sh`) whose body has the byte size of `create`'s
    /// ConfigMap.
    CreateCustom,
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
    /// Containers in the Deployment of `update` and `apply`.
    #[arg(long, default_value_t = 1)]
    containers: usize,
    /// Bearer token to send (default: the admin token, whose user is in
    /// `system:masters` and so allowed before RBAC is consulted).
    #[arg(long)]
    token: Option<String>,
    /// The server process whose CPU time (user + system, from
    /// `/proc/PID/stat`) is divided among the run's requests.
    #[arg(long)]
    pid: Option<u32>,
}

/// CPU time (user + system) of a process in milliseconds, from
/// `/proc/PID/stat` (clock ticks of 10 ms).
fn cpu_ms(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0)
}

/// A Deployment with `containers` containers; `round` changes every image.
fn deployment(name: &str, containers: usize, round: usize) -> serde_json::Value {
    let cs: Vec<serde_json::Value> = (0..containers)
        .map(|i| {
            serde_json::json!({
                "name": format!("c{i}"), "image": format!("registry.example/app-{i}:v{round}"),
                "ports": [{"containerPort": 8000 + i, "name": format!("p{i}")}],
                "env": [{"name": "MODE", "value": "bench"}],
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
            })
        })
        .collect();
    serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": cs}}},
    })
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
    Ok(connect::builder(reqwest::Client::builder())
        .add_root_certificate(reqwest::Certificate::from_pem(ca)?)
        .default_headers(headers)
        .http1_only()
        .pool_max_idle_per_host(1)
        .build()?)
}

/// A Widget (the CRD of `bench/custom.sh`) whose JSON is exactly as long
/// as [`payload`]'s ConfigMap of the same name.
fn custom_payload(name: &str) -> serde_json::Value {
    let mut w = serde_json::json!({
        "apiVersion": "bench.keelson.dev/v1", "kind": "Widget",
        "metadata": {"name": name, "labels": {"bench": "loadgen"}},
        "spec": {"image": "registry.example/app:v1", "replicas": 3, "mode": "a", "note": ""},
    });
    let pad = payload(name)
        .to_string()
        .len()
        .saturating_sub(w.to_string().len());
    w["spec"]["note"] = serde_json::Value::String("x".repeat(pad));
    w
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
    let url = connect::url(server_url(&f.data_dir)?);
    let ca = std::fs::read(f.data_dir.join("pki/ca.crt"))?;
    let token = match &f.token {
        Some(t) => t.clone(),
        None => std::fs::read_to_string(f.data_dir.join("admin-token"))?
            .trim()
            .to_string(),
    };
    let base = match f.op {
        Op::Update | Op::Apply => {
            format!("{url}/apis/apps/v1/namespaces/{}/deployments", f.namespace)
        }
        Op::CreateCustom => format!(
            "{url}/apis/bench.keelson.dev/v1/namespaces/{}/widgets",
            f.namespace
        ),
        _ => format!("{url}/api/v1/namespaces/{}/configmaps", f.namespace),
    };
    let run_id = std::process::id();

    // Each writer's Deployment, created by the way it is then written.
    if matches!(f.op, Op::Update | Op::Apply) {
        let c = client(&ca, &token)?;
        for w in 0..f.clients {
            let name = format!("lg-{run_id}-{w}");
            let r = c
                .patch(format!("{base}/{name}?fieldManager=loadgen"))
                .header("Content-Type", "application/apply-patch+yaml")
                .body(deployment(&name, f.containers, 0).to_string())
                .send()
                .await?;
            if !r.status().is_success() {
                return Err(format!("seed failed: {}", r.status()).into());
            }
        }
    }

    // Seed objects for get/list.
    if matches!(f.op, Op::Get | Op::List) {
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
        let containers = f.containers;
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
                    Op::CreateCustom => {
                        let n = counter.fetch_add(1, Ordering::Relaxed);
                        c.post(&base)
                            .json(&custom_payload(&format!("lg-{run_id}-{w}-{n}")))
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
                    Op::Update => {
                        let name = format!("lg-{run_id}-{w}");
                        // PUT needs the stored object's managedFields kept
                        // out of the way: an update without them keeps the
                        // stored ones, as kube does.
                        c.put(format!("{base}/{name}"))
                            .json(&deployment(&name, containers, i + 1))
                            .send()
                            .await
                    }
                    Op::Apply => {
                        let name = format!("lg-{run_id}-{w}");
                        c.patch(format!("{base}/{name}?fieldManager=loadgen"))
                            .header("Content-Type", "application/apply-patch+yaml")
                            .body(deployment(&name, containers, i + 1).to_string())
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
    let cpu_before = f.pid.and_then(cpu_ms);
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await?);
    }
    let server_cpu = match (f.pid.and_then(cpu_ms), cpu_before) {
        (Some(after), Some(before)) if !all.is_empty() => format!(
            " server_cpu={:.0}us/request",
            (after - before) * 1000.0 / all.len() as f64
        ),
        _ => String::new(),
    };
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
        "op={:?} clients={} requests={} errors={} throughput={:.0}/s p50={:.2}ms p99={:.2}ms{server_cpu}",
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
