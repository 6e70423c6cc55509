//! The fleet in real containers: `docker-compose.yml` with the image `make
//! image` builds (`keelson:dev`), the watch tier scaled to three replicas
//! that the gateway finds through DNS, driven by the real kubectl.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The image under test: `KEELSON_IMAGE`, else `keelson:dev` (what `make
/// image` builds).
fn image() -> String {
    std::env::var("KEELSON_IMAGE").unwrap_or_else(|_| "keelson:dev".to_string())
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A compose project of its own (name, data directory, port), taken down
/// with its volumes when dropped.
struct Project {
    name: String,
    data: tempfile::TempDir,
    port: u16,
    /// Override files after `docker-compose.yml`.
    overrides: Vec<&'static str>,
}

impl Project {
    fn new(overrides: &[&'static str]) -> Project {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        Project {
            name: {
                static NEXT: std::sync::atomic::AtomicUsize =
                    std::sync::atomic::AtomicUsize::new(0);
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                format!("keelson-e2e-{}-{n}", std::process::id())
            },
            data: tempfile::tempdir().expect("tempdir"),
            port,
            overrides: overrides.to_vec(),
        }
    }

    fn compose(&self, args: &[&str]) -> Output {
        let uid = String::from_utf8(Command::new("id").arg("-u").output().expect("id").stdout)
            .unwrap_or_default();
        let gid = String::from_utf8(Command::new("id").arg("-g").output().expect("id").stdout)
            .unwrap_or_default();
        let mut cmd = Command::new("docker-compose");
        cmd.arg("-f").arg(repo().join("docker-compose.yml"));
        for o in &self.overrides {
            cmd.arg("-f").arg(repo().join(o));
        }
        cmd.args(["-p", &self.name])
            .args(args)
            .env("KEELSON_DATA", self.data.path())
            .env("KEELSON_PORT", self.port.to_string())
            .env("KEELSON_UID", uid.trim())
            .env("KEELSON_GID", gid.trim())
            .env("KEELSON_IMAGE", image())
            .output()
            .expect("docker-compose runs")
    }

    fn compose_ok(&self, args: &[&str]) -> String {
        let out = self.compose(args);
        assert!(
            out.status.success(),
            "docker-compose {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The kubeconfig the gateway writes into the bind-mounted data
    /// directory: used as it is, it names the published port.
    fn kubeconfig(&self) -> PathBuf {
        let written = self.data.path().join("kubeconfig");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !written.exists() {
            assert!(Instant::now() < deadline, "no kubeconfig written");
            std::thread::sleep(Duration::from_millis(200));
        }
        let text = std::fs::read_to_string(&written).expect("kubeconfig");
        let server = format!("server: https://127.0.0.1:{}\n", self.port);
        assert!(text.contains(&server), "{server:?} not in:\n{text}");
        written
    }

    fn kubectl(&self, kc: &Path, args: &[&str]) -> Output {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kc)
            .args(args)
            .output()
            .expect("kubectl runs")
    }

    fn kubectl_ok(&self, kc: &Path, args: &[&str]) -> String {
        let out = self.kubectl(kc, args);
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

fn require_image(image: &str) {
    let have = Command::new("docker")
        .args(["image", "inspect", image])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(have, "the image {image} is missing: run `make image` first");
}

impl Project {
    /// Wait until the gateway answers (once every service it needs is
    /// healthy).
    fn wait_serving(&self, kc: &Path) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !self.kubectl(kc, &["get", "ns", "default"]).status.success() {
            assert!(
                Instant::now() < deadline,
                "the gateway never answered: {}",
                self.compose_ok(&["logs", "--tail", "30"])
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// `kubectl` until it succeeds (at most 20 s): a replica that was just
    /// stopped may still take a call or two.
    fn kubectl_eventually(&self, kc: &Path, args: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let out = self.kubectl(kc, args);
            if out.status.success() {
                return String::from_utf8_lossy(&out.stdout).into_owned();
            }
            assert!(
                Instant::now() < deadline,
                "kubectl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn stop(&self, service: &str) {
        let ids = self.compose_ok(&["ps", "-q", service]);
        let first = ids.lines().next().expect("a container").trim().to_string();
        let out = Command::new("docker")
            .args(["stop", "-t", "2", &first])
            .output()
            .expect("docker stop");
        assert!(out.status.success());
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = self.compose(&["down", "-v", "--remove-orphans", "-t", "2"]);
    }
}

#[test]
fn compose_fleet_with_three_watch_replicas() {
    require_image(&image());
    let p = Project::new(&[]);
    p.compose_ok(&["up", "-d", "--scale", "watch=3"]);
    let kc = p.kubeconfig();
    p.wait_serving(&kc);
    let ps = p.compose_ok(&["ps"]);
    let watch_lines = ps
        .lines()
        .filter(|l| l.contains("_watch_") || l.contains("-watch-"))
        .count();
    assert_eq!(watch_lines, 3, "{ps}");

    // The kubectl suite of the local modes, against the published port.
    support::kubectl_suite::run(&support::Cluster::attach(p.data.path()));

    p.kubectl_ok(&kc, &["create", "configmap", "c1", "--from-literal=k=v"]);
    assert_eq!(
        p.kubectl_ok(&kc, &["get", "cm", "c1", "-o", "jsonpath={.data.k}"]),
        "v"
    );
    p.kubectl_ok(&kc, &["create", "deployment", "web", "--image=nginx"]);
    let got = p.kubectl_ok(
        &kc,
        &[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ],
    );
    assert_eq!(got, "nginx");

    // Lists and watches go to the watch replicas; with one of them stopped
    // the others serve (the gateway drops it from DNS or fails over).
    let replicas = p.compose_ok(&["ps", "-q", "watch"]);
    let first = replicas
        .lines()
        .next()
        .expect("a replica")
        .trim()
        .to_string();
    let out = Command::new("docker")
        .args(["stop", "-t", "2", &first])
        .output()
        .expect("docker stop");
    assert!(out.status.success());
    for i in 0..6 {
        let names = p.kubectl_ok(&kc, &["get", "cm", "-o", "name"]);
        assert!(names.contains("configmap/c1"), "round {i}: {names}");
    }
    let watched = p.kubectl(
        &kc,
        &["get", "cm", "--watch", "--request-timeout=2s", "-o", "name"],
    );
    assert!(
        String::from_utf8_lossy(&watched.stdout).contains("configmap/c1"),
        "{}",
        String::from_utf8_lossy(&watched.stderr)
    );

    // Every container runs as a non-root user.
    let gw = p.compose_ok(&["ps", "-q", "store"]);
    let user = Command::new("docker")
        .args(["inspect", "-f", "{{.Config.User}}", gw.trim()])
        .output()
        .expect("docker inspect");
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "65532:65532");
}

/// The etcd variant: three etcd members, two store replicas holding no
/// state; the fleet keeps serving with one store replica stopped, and
/// with one etcd member killed under a write load loses nothing
/// acknowledged.
#[test]
fn compose_etcd_variant_survives_a_store_replica_and_an_etcd_member() {
    require_image(&image());
    require_image("keelson-etcd:dev");
    let p = Project::new(&["docker-compose.etcd.yml"]);
    p.compose_ok(&["up", "-d", "--scale", "store=2", "--scale", "watch=2"]);
    let kc = p.kubeconfig();
    p.wait_serving(&kc);
    let ps = p.compose_ok(&["ps"]);
    let stores = ps
        .lines()
        .filter(|l| l.contains("_store_") || l.contains("-store-"))
        .count();
    assert_eq!(stores, 2, "{ps}");

    p.kubectl_ok(&kc, &["create", "configmap", "e1", "--from-literal=k=v"]);
    p.stop("store");
    p.kubectl_eventually(&kc, &["create", "configmap", "e2", "--from-literal=k=v"]);

    // One etcd member killed under a steady write load: nothing
    // acknowledged is lost.
    let load = WriteLoad::start(&kc, "under-kill");
    std::thread::sleep(Duration::from_secs(2));
    let member = p.compose_ok(&["ps", "-q", "etcd2"]);
    assert!(Command::new("docker")
        .args(["kill", member.trim()])
        .status()
        .expect("docker kill")
        .success());
    std::thread::sleep(Duration::from_secs(3));
    load.stop_and_check(&p, &kc);

    p.kubectl_eventually(&kc, &["create", "configmap", "e3", "--from-literal=k=v"]);
    let names = p.kubectl_eventually(&kc, &["get", "cm", "-o", "name"]);
    for n in ["configmap/e1", "configmap/e2", "configmap/e3"] {
        assert!(names.contains(n), "{n} missing: {names}");
    }
}

/// `kubectl create cm <prefix>-N` in a loop on a thread, remembering what
/// was acknowledged.
struct WriteLoad {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Writes acknowledged so far.
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    writer: std::thread::JoinHandle<Vec<String>>,
}

impl WriteLoad {
    fn start(kc: &Path, prefix: &str) -> WriteLoad {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (kc, flag, prefix) = (kc.to_path_buf(), stop.clone(), prefix.to_string());
        let counter = count.clone();
        let writer = std::thread::spawn(move || {
            let mut acked = Vec::new();
            let mut i = 0;
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let name = format!("{prefix}-{i}");
                let out = Command::new("kubectl")
                    .arg("--kubeconfig")
                    .arg(&kc)
                    .args(["create", "cm", &name, "--request-timeout=10s"])
                    .output()
                    .expect("kubectl");
                if out.status.success() {
                    acked.push(name);
                    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                i += 1;
            }
            acked
        });
        WriteLoad {
            stop,
            count,
            writer,
        }
    }

    /// Once writes are acknowledged again after the fault (at least one
    /// more than when called, and more than 5 in all; 60 s at most, so a
    /// slow machine is not taken for a dead fleet), stop writing, then find
    /// every acknowledged ConfigMap.
    fn stop_and_check(self, p: &Project, kc: &Path) {
        let acked_now = || self.count.load(std::sync::atomic::Ordering::Relaxed);
        let floor = acked_now().max(5);
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while acked_now() <= floor && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let acked = self.writer.join().expect("writer");
        assert!(acked.len() > 5, "too few writes acknowledged: {acked:?}");
        let names = p.kubectl_eventually(kc, &["get", "cm", "-o", "name"]);
        for n in &acked {
            assert!(
                names.lines().any(|l| l == format!("configmap/{n}")),
                "acknowledged {n} is missing"
            );
        }
    }
}

/// The sled fleet's faults across containers: the store container killed
/// under a steady write load keeps every acknowledged write; a watch
/// replica killed mid-watch loses and repeats no event; the gateway cut
/// off from admission answers writes with a 5xx Status within the timeout
/// and recovers when reconnected.
#[test]
fn compose_fleet_survives_faults_across_containers() {
    require_image(&image());
    let p = Project::new(&[]);
    p.compose_ok(&["up", "-d", "--scale", "watch=2"]);
    let kc = p.kubeconfig();
    p.wait_serving(&kc);

    // Writes in a loop while the store is killed and started again.
    let load = WriteLoad::start(&kc, "w");
    std::thread::sleep(Duration::from_secs(2));
    let store = p.compose_ok(&["ps", "-q", "store"]);
    let store = store.trim().to_string();
    assert!(Command::new("docker")
        .args(["kill", &store])
        .status()
        .expect("docker kill")
        .success());
    std::thread::sleep(Duration::from_secs(1));
    assert!(Command::new("docker")
        .args(["start", &store])
        .status()
        .expect("docker start")
        .success());
    std::thread::sleep(Duration::from_secs(3));
    load.stop_and_check(&p, &kc);

    // A watch that outlives its watch replica: every event exactly once.
    let mut watch = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kc)
        .args(["get", "cm", "-w", "-o", "name", "--request-timeout=0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl watch");
    std::thread::sleep(Duration::from_secs(1));
    let mut written = Vec::new();
    for i in 0..10 {
        if i == 5 {
            // The gateway resumes the watch on the other replica.
            let replicas = p.compose_ok(&["ps", "-q", "watch"]);
            if let Some(victim) = replicas.lines().map(str::trim).find(|l| !l.is_empty()) {
                let _ = Command::new("docker").args(["kill", victim]).status();
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        let name = format!("x-{i}");
        p.kubectl_eventually(&kc, &["create", "cm", &name]);
        written.push(name);
    }
    std::thread::sleep(Duration::from_secs(2));
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("watch output");
    let seen = String::from_utf8_lossy(&out.stdout);
    for n in &written {
        let line = format!("configmap/{n}");
        let count = seen.lines().filter(|l| l.trim() == line).count();
        assert_eq!(count, 1, "{line} seen {count} times:\n{seen}");
    }

    // The gateway cut off from admission: a write fails fast with a 5xx
    // Status, then works again once reconnected.
    let admission = p.compose_ok(&["ps", "-q", "admission"]);
    let admission = admission.trim().to_string();
    let network = format!("{}_default", p.name);
    assert!(Command::new("docker")
        .args(["network", "disconnect", &network, &admission])
        .status()
        .expect("docker network disconnect")
        .success());
    // Answered within the gateway's call timeout (keelson_rpc::CALL_TIMEOUT).
    let started = Instant::now();
    let out = p.kubectl(&kc, &["create", "cm", "cut-off", "--request-timeout=60s"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ServiceUnavailable")
            || err.contains("Timeout")
            || err.contains("unavailable"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(Command::new("docker")
        .args([
            "network",
            "connect",
            "--alias",
            "admission",
            &network,
            &admission
        ])
        .status()
        .expect("docker network connect")
        .success());
    p.kubectl_eventually(&kc, &["create", "cm", "reconnected"]);
}
