//! Start a real Keelson (embedded, or seven processes over gRPC) and drive it
//! with the installed kubectl and raw HTTPS.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod fleet;
pub mod kubectl_suite;

/// Watch-cache replicas in distributed mode.
pub const WATCH_REPLICAS: usize = 2;

/// How the server under test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One `keelson` process.
    Embedded,
    /// `keelson-store`, `keelson-admission`, `keelson-merge`, two
    /// `keelson-watch` replicas, `keelson-controllers` and
    /// `keelson-gateway`, talking gRPC on loopback.
    Distributed,
}

/// A running server and a scratch directory for clients.
pub struct Cluster {
    pub mode: Mode,
    children: Vec<(String, Child)>,
    pub data_dir: PathBuf,
    pub kubeconfig: PathBuf,
    /// `https://127.0.0.1:PORT`
    pub url: String,
    pub token: String,
    pub ca_pem: Vec<u8>,
    pub home: tempfile::TempDir,
    _dir: Option<tempfile::TempDir>,
}

/// Where the distributed gateway finds the other services (`http://` URLs;
/// `store` may be several, comma-separated).
struct GatewayEndpoints {
    store: String,
    admission: String,
    merge: String,
    watch: Vec<String>,
}

/// Spawn a binary, forward its stderr to ours, and return the first stdout
/// line for which `want` returns a value (waits up to 60 s).
fn spawn_and_wait<T: Send + 'static>(
    name: &str,
    cmd: &mut Command,
    want: fn(&str) -> Option<T>,
) -> (Child, T) {
    START_ENV.with(|env| {
        cmd.envs(env.borrow().iter().cloned());
    });
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("metrics listening on ") {
                if let Ok(mut m) = METRICS_ADDRS.lock() {
                    m.insert(pid, addr.trim().to_string());
                }
            }
            if !sent {
                if let Some(v) = want(&line) {
                    let _ = tx.send(v);
                    sent = true;
                }
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(v) => (child, v),
        Err(_) => {
            let _ = child.kill();
            panic!("{name} did not report readiness within 60s");
        }
    }
}

thread_local! {
    /// Environment given to every process a start on this thread spawns
    /// (see [`Cluster::start_with_env`]).
    static START_ENV: std::cell::RefCell<Vec<(String, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `metrics listening on ADDR` of each spawned process, by pid.
static METRICS_ADDRS: std::sync::Mutex<std::collections::BTreeMap<u32, String>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn listening(line: &str) -> Option<String> {
    line.strip_prefix("listening on ")
        .map(|s| s.trim().to_string())
}

fn serving(line: &str) -> Option<String> {
    line.strip_prefix("serving on ")
        .map(|s| s.trim().to_string())
}

impl Cluster {
    /// Start a fresh server in `mode`.
    pub fn start(mode: Mode) -> Cluster {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        let mut c = Cluster::start_in(mode, &data);
        c._dir = Some(dir);
        c
    }

    /// Start a fresh server in `mode` with extra flags for the process that
    /// owns the store (`keelson` or `keelson-store`).
    pub fn start_with(mode: Mode, store_args: &[&str]) -> Cluster {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        let mut c = Cluster::start_in_with(mode, &data, store_args);
        c._dir = Some(dir);
        c
    }

    /// Start a fresh server in `mode` whose every process gets `env` too
    /// (e.g. `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn start_with_env(mode: Mode, env: &[(&str, &str)]) -> Cluster {
        START_ENV.with(|e| {
            *e.borrow_mut() = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        });
        let c = Cluster::start(mode);
        START_ENV.with(|e| e.borrow_mut().clear());
        c
    }

    /// `http://ADDR/metrics` of the process named `name` (`keelson-store`,
    /// `keelson-watch-0`, ...), as it announced it.
    pub fn metrics_url(&self, name: &str) -> Option<String> {
        let (_, child) = self.children.iter().find(|(n, _)| n == name)?;
        let addrs = METRICS_ADDRS.lock().ok()?;
        // Printed right after `listening on`, so read by the time the
        // cluster is ready.
        addrs
            .get(&child.id())
            .map(|a| format!("http://{a}/metrics"))
    }

    /// Start a server on an existing data directory.
    pub fn start_in(mode: Mode, data_dir: &Path) -> Cluster {
        Cluster::start_in_with(mode, data_dir, &[])
    }

    /// Start a server on an existing data directory with extra flags for
    /// the process that owns the store.
    pub fn start_in_with(mode: Mode, data_dir: &Path, store_args: &[&str]) -> Cluster {
        let mut children = Vec::new();
        match mode {
            Mode::Embedded => {
                let (child, url) = spawn_and_wait(
                    "keelson",
                    Command::new(env!("CARGO_BIN_EXE_keelson"))
                        .arg("--data-dir")
                        .arg(data_dir)
                        .args(["--secure-port", "0"])
                        .args(store_args),
                    serving,
                );
                children.push(("keelson".to_string(), child));
                Cluster::served_from(mode, children, data_dir, &url)
            }
            Mode::Distributed => {
                let (store, store_addr) = spawn_and_wait(
                    "keelson-store",
                    Command::new(env!("CARGO_BIN_EXE_keelson-store"))
                        .arg("--data-dir")
                        .arg(data_dir.join("store"))
                        .args(["--listen", "127.0.0.1:0"])
                        .args(store_args),
                    listening,
                );
                children.push(("keelson-store".to_string(), store));
                let store_ep = format!("http://{store_addr}");
                let (adm, adm_addr) = spawn_and_wait(
                    "keelson-admission",
                    Command::new(env!("CARGO_BIN_EXE_keelson-admission")).args([
                        "--listen",
                        "127.0.0.1:0",
                        "--store-endpoint",
                        &store_ep,
                    ]),
                    listening,
                );
                children.push(("keelson-admission".to_string(), adm));
                let (merge, merge_addr) = spawn_and_wait(
                    "keelson-merge",
                    Command::new(env!("CARGO_BIN_EXE_keelson-merge")).args([
                        "--listen",
                        "127.0.0.1:0",
                        "--store-endpoint",
                        &store_ep,
                    ]),
                    listening,
                );
                children.push(("keelson-merge".to_string(), merge));
                // Two watch-cache replicas; the gateway spreads lists and
                // watches over them.
                let mut watch_eps = Vec::new();
                for i in 0..WATCH_REPLICAS {
                    let (w, addr) = spawn_and_wait(
                        "keelson-watch",
                        Command::new(env!("CARGO_BIN_EXE_keelson-watch")).args([
                            "--listen",
                            "127.0.0.1:0",
                            "--store-endpoint",
                            &store_ep,
                        ]),
                        listening,
                    );
                    children.push((format!("keelson-watch-{i}"), w));
                    watch_eps.push(format!("http://{addr}"));
                }
                let (ctl, _) = spawn_and_wait(
                    "keelson-controllers",
                    Command::new(env!("CARGO_BIN_EXE_keelson-controllers")).args([
                        "--listen",
                        "127.0.0.1:0",
                        "--store-endpoint",
                        &store_ep,
                    ]),
                    listening,
                );
                children.push(("keelson-controllers".to_string(), ctl));
                let endpoints = GatewayEndpoints {
                    store: store_ep,
                    admission: format!("http://{adm_addr}"),
                    merge: format!("http://{merge_addr}"),
                    watch: watch_eps,
                };
                Cluster::with_gateway(children, data_dir, &endpoints)
            }
        }
    }

    /// Start `keelson-gateway` on `data_dir` over the services at
    /// `endpoints`, after the fleet's other `children`.
    fn with_gateway(
        mut children: Vec<(String, Child)>,
        data_dir: &Path,
        endpoints: &GatewayEndpoints,
    ) -> Cluster {
        let (gw, url) = spawn_and_wait(
            "keelson-gateway",
            Command::new(env!("CARGO_BIN_EXE_keelson-gateway"))
                .arg("--data-dir")
                .arg(data_dir)
                .args(["--secure-port", "0"])
                .args(["--store-endpoint", &endpoints.store])
                .args(["--admission-endpoint", &endpoints.admission])
                .args(["--merge-endpoint", &endpoints.merge])
                .args(["--watch-endpoints", &endpoints.watch.join(",")]),
            serving,
        );
        children.push(("keelson-gateway".to_string(), gw));
        Cluster::served_from(Mode::Distributed, children, data_dir, &url)
    }

    /// A server started elsewhere (by Compose) that wrote its kubeconfig,
    /// token and CA to `data_dir`: reached through that kubeconfig as it
    /// is; no process of its own to stop.
    pub fn attach(data_dir: &Path) -> Cluster {
        let kubeconfig = data_dir.join("kubeconfig");
        let text = std::fs::read_to_string(&kubeconfig).expect("kubeconfig");
        let url = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: "))
            .expect("a server in the kubeconfig")
            .to_string();
        Cluster::served_from(Mode::Distributed, Vec::new(), data_dir, &url)
    }

    /// The cluster of `children` whose gateway serves `url` (with or
    /// without its `https://`) and wrote the kubeconfig, the admin token
    /// and the CA into `data_dir`; returned once `/readyz` answers.
    fn served_from(
        mode: Mode,
        children: Vec<(String, Child)>,
        data_dir: &Path,
        url: &str,
    ) -> Cluster {
        let token = std::fs::read_to_string(data_dir.join("admin-token"))
            .expect("admin-token")
            .trim()
            .to_string();
        let c = Cluster {
            mode,
            children,
            data_dir: data_dir.to_path_buf(),
            kubeconfig: data_dir.join("kubeconfig"),
            url: format!("https://{}", url.trim_start_matches("https://")),
            token,
            ca_pem: std::fs::read(data_dir.join("pki/ca.crt")).expect("ca.crt"),
            home: tempfile::tempdir().expect("home"),
            _dir: None,
        };
        c.wait_ready();
        c
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let client = self.client();
        let url = format!("{}/readyz", self.url);
        loop {
            let ok = block_on(async {
                client
                    .get(&url)
                    .send()
                    .await
                    .map(|r| r.status().as_u16() == 200)
                    .unwrap_or(false)
            });
            if ok {
                return;
            }
            assert!(Instant::now() < deadline, "server never became ready");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stop every process (SIGTERM, then kill) and wait for them.
    pub fn stop(&mut self) {
        for (_, child) in self.children.iter_mut().rev() {
            let pid = child.id() as i32;
            let _ = sigterm(pid);
        }
        for (_, child) in self.children.iter_mut() {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    _ if Instant::now() > deadline => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    _ => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
        self.children.clear();
    }

    /// Kill one process (SIGKILL) by its name: `keelson-watch-0`, ...
    pub fn kill(&mut self, name: &str) {
        let at = self
            .children
            .iter()
            .position(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no process named {name}"));
        let (_, mut child) = self.children.remove(at);
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Run the installed kubectl against this server.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_stdin(args, None)
    }

    /// Run kubectl with `stdin` piped in (for `-f -`).
    pub fn kubectl_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.kubectl_env(args, stdin, &[])
    }

    /// Run kubectl with `stdin` and extra environment (e.g. `KUBE_EDITOR`).
    pub fn kubectl_env(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new("kubectl");
        cmd.envs(env.iter().copied());
        cmd.args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn kubectl");
        if let Some(input) = stdin {
            use std::io::Write;
            let mut s = child.stdin.take().expect("stdin");
            s.write_all(input.as_bytes()).expect("write stdin");
        }
        child.wait_with_output().expect("kubectl output")
    }

    /// Run kubectl, assert success, return stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {:?} failed ({:?}):\nstdout: {}\nstderr: {}",
            args,
            self.mode,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run kubectl with stdin, assert success, return stdout.
    pub fn ok_stdin(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl_stdin(args, Some(stdin));
        assert!(
            out.status.success(),
            "kubectl {:?} failed ({:?}):\nstdout: {}\nstderr: {}",
            args,
            self.mode,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run kubectl, assert failure, return stderr.
    pub fn fails(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.kubectl_stdin(args, stdin);
        assert!(
            !out.status.success(),
            "kubectl {:?} unexpectedly succeeded: {}",
            args,
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// An HTTPS client trusting the server's CA, without credentials.
    pub fn anonymous_client(&self) -> reqwest::Client {
        let ca = reqwest::Certificate::from_pem(&self.ca_pem).expect("ca");
        reqwest::Client::builder()
            .add_root_certificate(ca)
            .build()
            .expect("client")
    }

    /// An HTTPS client with the admin token.
    pub fn client(&self) -> reqwest::Client {
        let ca = reqwest::Certificate::from_pem(&self.ca_pem).expect("ca");
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {}", self.token).parse().expect("header"),
        );
        reqwest::Client::builder()
            .add_root_certificate(ca)
            .default_headers(headers)
            .build()
            .expect("client")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, child) in self.children.iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn sigterm(pid: i32) -> std::io::Result<()> {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other("kill failed"))
    }
}

/// Run a future to completion on a fresh current-thread runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}
