//! A distributed Keelson with several `keelson-store` replicas over one
//! etcd: every client of the store (admission, merge, the watch replicas,
//! the controllers and the gateway) is given the replicas' endpoints
//! comma-separated in `--store-endpoint`.

use std::path::Path;
use std::process::Command;

use super::{listening, spawn_and_wait, Cluster, GatewayEndpoints, WATCH_REPLICAS};

impl Cluster {
    /// Start `stores` `keelson-store` processes (`keelson-store-0`, ...)
    /// with `store_args` (e.g. `--storage-backend=etcd3` and
    /// `--etcd-servers=...`), then the other services and the gateway,
    /// all pointed at every store replica.
    pub fn start_store_replicas(stores: usize, store_args: &[&str]) -> Cluster {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        let mut c = Cluster::start_store_replicas_in(&data, stores, store_args);
        c._dir = Some(dir);
        c
    }

    fn start_store_replicas_in(data_dir: &Path, stores: usize, store_args: &[&str]) -> Cluster {
        let mut children = Vec::new();
        let mut store_eps = Vec::new();
        for i in 0..stores {
            let (store, addr) = spawn_and_wait(
                "keelson-store",
                Command::new(env!("CARGO_BIN_EXE_keelson-store"))
                    .arg("--data-dir")
                    .arg(data_dir.join(format!("store-{i}")))
                    .args(["--listen", "127.0.0.1:0"])
                    .args(store_args),
                listening,
            );
            children.push((format!("keelson-store-{i}"), store));
            store_eps.push(format!("http://{addr}"));
        }
        let store_ep = store_eps.join(",");
        // A service of the fleet that calls the store: (name, binary).
        let mut spawn = |name: String, bin: &str| {
            let (child, addr) = spawn_and_wait(
                &name,
                Command::new(bin).args(["--listen", "127.0.0.1:0", "--store-endpoint", &store_ep]),
                listening,
            );
            children.push((name, child));
            format!("http://{addr}")
        };
        let adm = spawn(
            "keelson-admission".into(),
            env!("CARGO_BIN_EXE_keelson-admission"),
        );
        let merge = spawn("keelson-merge".into(), env!("CARGO_BIN_EXE_keelson-merge"));
        let watch_eps: Vec<String> = (0..WATCH_REPLICAS)
            .map(|i| {
                spawn(
                    format!("keelson-watch-{i}"),
                    env!("CARGO_BIN_EXE_keelson-watch"),
                )
            })
            .collect();
        spawn(
            "keelson-controllers".into(),
            env!("CARGO_BIN_EXE_keelson-controllers"),
        );
        let endpoints = GatewayEndpoints {
            store: store_ep,
            admission: adm,
            merge,
            watch: watch_eps,
        };
        Cluster::with_gateway(children, data_dir, &endpoints)
    }
}
