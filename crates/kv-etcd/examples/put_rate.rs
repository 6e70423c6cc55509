//! etcd's own write rate, the anchor of `bench/etcd.sh`: `CLIENTS`
//! concurrent loops putting `VALUE_BYTES`-byte values under fresh keys for
//! `SECONDS`, over one etcd-client connection (as Keelson's store uses).
//!
//! `cargo run --release -p keelson-kv-etcd --example put_rate -- ENDPOINT CLIENTS SECONDS [VALUE_BYTES] [put|txn|create|kube]`
//!
//! The last argument picks the write:
//! - `put` (the default): a plain put;
//! - `txn`: a transaction comparing the key's mod revision with 0, then a
//!   put returning the previous value, else a get (Keelson's create before
//!   it stopped asking for `prev_kv`);
//! - `create`: the same without `prev_kv` (Keelson's create today);
//! - `kube`: compare and put only, no else branch (kube-apiserver's create).

use std::time::{Duration, Instant};

use etcd_client::{Client, Compare, CompareOp, PutOptions, Txn, TxnOp};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let endpoint = args
        .get(1)
        .cloned()
        .unwrap_or("http://127.0.0.1:2379".into());
    let clients: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let seconds: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let size: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(400);
    let mode = args.get(5).cloned().unwrap_or_else(|| "put".into());
    if !["put", "txn", "create", "kube"].contains(&mode.as_str()) {
        return Err(format!("unknown write {mode:?}: put, txn, create or kube").into());
    }
    let client = Client::connect([endpoint], None).await?;
    let value = vec![b'x'; size];
    let until = Instant::now() + Duration::from_secs(seconds);
    let run = format!("{}", std::process::id());
    let mut tasks = Vec::new();
    for w in 0..clients {
        let mut kv = client.kv_client();
        let (value, run, mode) = (value.clone(), run.clone(), mode.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut errors = 0usize;
            let mut i = 0u64;
            while Instant::now() < until {
                let key = format!("/put-rate/{run}/{w}/{i}");
                i += 1;
                let t = Instant::now();
                let when = [Compare::mod_revision(key.clone(), CompareOp::Equal, 0)];
                let ok = match mode.as_str() {
                    "put" => kv.put(key, value.clone(), None).await.is_ok(),
                    "kube" => {
                        let t =
                            Txn::new()
                                .when(when)
                                .and_then([TxnOp::put(key, value.clone(), None)]);
                        kv.txn(t).await.is_ok()
                    }
                    m => {
                        let opts = (m == "txn").then(|| PutOptions::new().with_prev_key());
                        let t = Txn::new()
                            .when(when)
                            .and_then([TxnOp::put(key.clone(), value.clone(), opts)])
                            .or_else([TxnOp::get(key, None)]);
                        kv.txn(t).await.is_ok()
                    }
                };
                if ok {
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            (lat, errors)
        }));
    }
    let mut lat = Vec::new();
    let mut errors = 0;
    for t in tasks {
        let (l, e) = t.await?;
        lat.extend(l);
        errors += e;
    }
    lat.sort();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "op={} clients={clients} requests={} errors={errors} throughput={:.0}/s p50={:.2}ms p99={:.2}ms",
        mode,
        lat.len(),
        lat.len() as f64 / seconds as f64,
        pct(0.5),
        pct(0.99)
    );
    Ok(())
}
