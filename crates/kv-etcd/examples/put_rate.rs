//! etcd's own write rate, the anchor of `bench/etcd.sh`: `CLIENTS`
//! concurrent loops putting `VALUE_BYTES`-byte values under fresh keys for
//! `SECONDS`, over one etcd-client connection (as Keelson's store uses).
//!
//! `cargo run --release -p keelson-kv-etcd --example put_rate -- ENDPOINT CLIENTS SECONDS [VALUE_BYTES] [txn]`
//!
//! With `txn`, each write is Keelson's create: a transaction comparing the
//! key's mod revision with 0, then a put returning the previous value.

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
    let txn = args.get(5).is_some_and(|s| s == "txn");
    let client = Client::connect([endpoint], None).await?;
    let value = vec![b'x'; size];
    let until = Instant::now() + Duration::from_secs(seconds);
    let run = format!("{}", std::process::id());
    let mut tasks = Vec::new();
    for w in 0..clients {
        let mut kv = client.kv_client();
        let (value, run) = (value.clone(), run.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut errors = 0usize;
            let mut i = 0u64;
            while Instant::now() < until {
                let key = format!("/put-rate/{run}/{w}/{i}");
                i += 1;
                let t = Instant::now();
                let ok = if txn {
                    let t = Txn::new()
                        .when([Compare::mod_revision(key.clone(), CompareOp::Equal, 0)])
                        .and_then([TxnOp::put(
                            key.clone(),
                            value.clone(),
                            Some(PutOptions::new().with_prev_key()),
                        )])
                        .or_else([TxnOp::get(key, None)]);
                    kv.txn(t).await.is_ok()
                } else {
                    kv.put(key, value.clone(), None).await.is_ok()
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
        if txn { "txn" } else { "put" },
        lat.len(),
        lat.len() as f64 / seconds as f64,
        pct(0.5),
        pct(0.99)
    );
    Ok(())
}
