//! `keelson-lifecycle`: how long deletion takes end to end (issue 14).
//!
//! - `namespace`: a namespace holding N ConfigMaps (or, `--mixed`, a mix
//!   of ConfigMaps, Secrets, Services and ServiceAccounts) is deleted; the
//!   time until the namespace is gone (404), which includes the namespace
//!   controller deleting every object in it.
//! - `gc`: an owner (a ReplicaSet with no replicas) with N ConfigMaps
//!   naming it in `ownerReferences` (`blockOwnerDeletion: true`) is
//!   deleted with `propagationPolicy` Background or Foreground; the time
//!   until the owner and every dependent are gone.
//!
//! Objects are created by 32 concurrent clients; only the deletion is
//! timed. Reads the server URL, CA and admin token from `--data-dir`.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde_json::{json, Value};

#[derive(Debug, Parser)]
#[command(name = "keelson-lifecycle")]
struct Flags {
    /// Server data directory (kubeconfig, pki/ca.crt, admin-token).
    #[arg(long)]
    data_dir: PathBuf,
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Delete a namespace of N objects; time until it is gone.
    Namespace {
        /// Objects in the namespace (comma-separated sizes run in turn).
        #[arg(long, value_delimiter = ',', default_value = "10,100,1000,10000")]
        objects: Vec<usize>,
        /// ConfigMaps, Secrets, Services and ServiceAccounts in turn.
        #[arg(long)]
        mixed: bool,
    },
    /// Delete an owner of N dependents; time until all are gone.
    Gc {
        /// Dependents of the owner.
        #[arg(long, default_value_t = 1000)]
        dependents: usize,
    },
}

const CREATORS: usize = 32;
const POLL: Duration = Duration::from_millis(20);
const LIMIT: Duration = Duration::from_secs(600);

type Error = Box<dyn std::error::Error + Send + Sync>;

struct Api {
    http: reqwest::Client,
    url: String,
}

impl Api {
    fn open(dir: &Path) -> Result<Api, Error> {
        let kc = std::fs::read_to_string(dir.join("kubeconfig"))?;
        let url = kc
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: ").map(str::to_string))
            .ok_or("no server in kubeconfig")?;
        let ca = std::fs::read(dir.join("pki/ca.crt"))?;
        let token = std::fs::read_to_string(dir.join("admin-token"))?;
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {}", token.trim()).parse()?,
        );
        let http = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&ca)?)
            .default_headers(headers)
            .build()?;
        Ok(Api { http, url })
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, Error> {
        let r = self
            .http
            .post(format!("{}{path}", self.url))
            .json(body)
            .send()
            .await?;
        let status = r.status();
        let v: Value = r.json().await?;
        if !status.is_success() {
            return Err(format!("POST {path}: {status}: {v}").into());
        }
        Ok(v)
    }

    async fn delete(&self, path: &str, body: &Value) -> Result<(), Error> {
        let r = self
            .http
            .delete(format!("{}{path}", self.url))
            .json(body)
            .send()
            .await?;
        if !r.status().is_success() {
            return Err(format!("DELETE {path}: {}", r.status()).into());
        }
        Ok(())
    }

    async fn exists(&self, path: &str) -> Result<bool, Error> {
        let r = self.http.get(format!("{}{path}", self.url)).send().await?;
        match r.status().as_u16() {
            200 => Ok(true),
            404 => Ok(false),
            s => Err(format!("GET {path}: {s}").into()),
        }
    }

    /// Items of a list (`limit=1` with the remaining count).
    async fn count(&self, path: &str) -> Result<u64, Error> {
        let v: Value = self
            .http
            .get(format!("{}{path}", self.url))
            .query(&[("limit", "1")])
            .send()
            .await?
            .json()
            .await?;
        let items = v["items"].as_array().map_or(0, Vec::len) as u64;
        Ok(items + v["metadata"]["remainingItemCount"].as_u64().unwrap_or(0))
    }
}

/// The i-th object of a namespace: (collection path, body).
fn object(ns: &str, i: usize, mixed: bool, owner: Option<&Value>) -> (String, Value) {
    let name = format!("o-{i}");
    let mut meta = json!({"name": name, "labels": {"bench": "lifecycle"}});
    if let Some(o) = owner {
        meta["ownerReferences"] = json!([o]);
    }
    match if mixed { i % 4 } else { 0 } {
        0 => (
            format!("/api/v1/namespaces/{ns}/configmaps"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "x".repeat(256)}}),
        ),
        1 => (
            format!("/api/v1/namespaces/{ns}/secrets"),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta, "stringData": {"k": "x".repeat(256)}}),
        ),
        2 => (
            format!("/api/v1/namespaces/{ns}/services"),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": meta,
                   "spec": {"clusterIP": "None", "ports": [{"port": 80}], "selector": {"app": "x"}}}),
        ),
        _ => (
            format!("/api/v1/namespaces/{ns}/serviceaccounts"),
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}),
        ),
    }
}

/// Create `n` objects with [`CREATORS`] concurrent clients.
async fn fill(
    api: &Arc<Api>,
    ns: &str,
    n: usize,
    mixed: bool,
    owner: Option<Value>,
) -> Result<(), Error> {
    let owner = Arc::new(owner);
    let mut tasks = Vec::new();
    for c in 0..CREATORS {
        let (api, ns, owner) = (api.clone(), ns.to_string(), owner.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = c;
            while i < n {
                let (path, body) = object(&ns, i, mixed, owner.as_ref().as_ref());
                api.post(&path, &body).await?;
                i += CREATORS;
            }
            Ok::<(), Error>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}

async fn wait_until<F, Fut>(what: &str, mut done: F) -> Result<Duration, Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, Error>>,
{
    let start = Instant::now();
    while !done().await? {
        if start.elapsed() > LIMIT {
            return Err(format!("{what}: not done after {LIMIT:?}").into());
        }
        tokio::time::sleep(POLL).await;
    }
    Ok(start.elapsed())
}

async fn namespace(api: Arc<Api>, sizes: &[usize], mixed: bool) -> Result<(), Error> {
    println!(
        "namespace deletion ({}):",
        if mixed {
            "mixed ConfigMaps/Secrets/Services/ServiceAccounts"
        } else {
            "ConfigMaps"
        }
    );
    println!(
        "{:>8}  {:>10}  {:>12}",
        "objects", "delete→gone", "objects/s"
    );
    for &n in sizes {
        let ns = format!("lc-{n}-{}", if mixed { "mixed" } else { "cm" });
        api.post(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await?;
        fill(&api, &ns, n, mixed, None).await?;
        let start = Instant::now();
        api.delete(&format!("/api/v1/namespaces/{ns}"), &json!({}))
            .await?;
        let path = format!("/api/v1/namespaces/{ns}");
        wait_until(&ns, || {
            let (api, path) = (api.clone(), path.clone());
            async move { Ok(!api.exists(&path).await?) }
        })
        .await?;
        let t = start.elapsed();
        println!(
            "{n:>8}  {:>9.3}s  {:>12.0}",
            t.as_secs_f64(),
            n as f64 / t.as_secs_f64()
        );
    }
    Ok(())
}

async fn gc(api: Arc<Api>, n: usize) -> Result<(), Error> {
    println!("garbage collection of {n} ConfigMaps owned by a ReplicaSet:");
    println!("{:>11}  {:>12}  {:>14}", "policy", "owner gone", "all gone");
    for policy in ["Background", "Foreground"] {
        let ns = format!("gc-{}", policy.to_lowercase());
        api.post(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await?;
        let rs = api
            .post(
                &format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
                &json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "owner"},
                        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "owner"}},
                                 "template": {"metadata": {"labels": {"app": "owner"}},
                                              "spec": {"containers": [{"name": "c", "image": "registry.example/app:v1"}]}}}}),
            )
            .await?;
        let owner = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "owner",
                           "uid": rs["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true});
        fill(&api, &ns, n, false, Some(owner)).await?;
        let owner_path = format!("/apis/apps/v1/namespaces/{ns}/replicasets/owner");
        let list = format!("/api/v1/namespaces/{ns}/configmaps?labelSelector=bench%3Dlifecycle");
        let start = Instant::now();
        api.delete(
            &owner_path,
            &json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy}),
        )
        .await?;
        let mut owner_gone = None;
        loop {
            if owner_gone.is_none() && !api.exists(&owner_path).await? {
                owner_gone = Some(start.elapsed());
            }
            if owner_gone.is_some() && api.count(&list).await? == 0 {
                break;
            }
            if start.elapsed() > LIMIT {
                return Err(format!("{policy}: not done after {LIMIT:?}").into());
            }
            tokio::time::sleep(POLL).await;
        }
        let all = start.elapsed();
        let owner_t = owner_gone.unwrap_or(all);
        println!(
            "{policy:>11}  {:>11.3}s  {:>13.3}s",
            owner_t.as_secs_f64(),
            all.as_secs_f64()
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let f = Flags::parse();
    let api = Arc::new(Api::open(&f.data_dir)?);
    match f.what {
        What::Namespace { objects, mixed } => namespace(api, &objects, mixed).await,
        What::Gc { dependents } => gc(api, dependents).await,
    }
}
