//! A real `etcd` for tests (feature `testing`): one member
//! ([`TestEtcd`]) or a cluster of several ([`TestEtcdCluster`]) on free
//! loopback ports with the data in a temporary directory, killed on drop.
//! `etcd` must be on `PATH` (Debian's `etcd-server`; `.ci/run` installs
//! it): without it [`TestEtcd::start`] panics with a message saying so,
//! so a suite never passes without having run.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long etcd may take to become healthy.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running (or stopped) single-member etcd.
#[derive(Debug)]
pub struct TestEtcd {
    child: Option<Child>,
    dir: tempfile::TempDir,
    client_port: u16,
    peer_port: u16,
    /// `--experimental-watch-progress-notify-interval`, if set.
    progress_notify: Option<&'static str>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The `etcd` binary on `PATH`, or a panic that says how to get it.
pub fn etcd_binary() -> PathBuf {
    which("etcd").unwrap_or_else(|| {
        panic!(
            "the etcd tests need the `etcd` binary on PATH (Debian: `apt-get install -y \
             etcd-server etcd-client`; .ci/run installs it)"
        )
    })
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

impl TestEtcd {
    /// Start etcd and wait until it answers `/health`. Idle watches get a
    /// progress notification every 500 ms (etcd 3.4 before 3.4.31 answers
    /// progress requests unsafely, so the client relies on these there).
    pub fn start() -> TestEtcd {
        TestEtcd::start_with_progress_notify(Some("500ms"))
    }

    /// Start etcd with `--experimental-watch-progress-notify-interval`
    /// set to `interval`, or at etcd's default (10 min) for `None`.
    pub fn start_with_progress_notify(interval: Option<&'static str>) -> TestEtcd {
        let mut etcd = TestEtcd {
            child: None,
            dir: tempfile::tempdir().expect("a temporary directory for etcd"),
            client_port: free_port(),
            peer_port: free_port(),
            progress_notify: interval,
        };
        etcd.restart();
        etcd
    }

    /// The client URL (`http://127.0.0.1:PORT`), for `--etcd-servers`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Whether the process is running.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Kill etcd (SIGKILL) and wait for it to exit; its data stays.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start etcd (again) on the same ports and data and wait until healthy.
    pub fn restart(&mut self) {
        self.stop();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let member = Member {
            name: "keelson-test".into(),
            client_port: self.client_port,
            peer_port: self.peer_port,
            child: None,
        };
        let child = member.spawn(
            self.dir.path(),
            &format!("keelson-test={peer}"),
            self.progress_notify,
        );
        self.child = Some(child);
        wait_healthy(
            self.client_port,
            &mut self.child,
            self.dir.path(),
            "etcd.log",
        );
    }
}

/// One member of a [`TestEtcdCluster`] (or the single [`TestEtcd`]).
#[derive(Debug)]
struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

impl Member {
    fn log_name(&self) -> String {
        format!("{}.log", self.name)
    }

    /// Spawn `etcd` for this member with its data in `dir/<name>` (or
    /// `dir/data` for the single member) and its log in `dir/<name>.log`.
    fn spawn(&self, dir: &Path, initial_cluster: &str, progress: Option<&str>) -> Child {
        let client = format!("http://127.0.0.1:{}", self.client_port);
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let (data, log) = if self.name == "keelson-test" {
            (dir.join("data"), dir.join("etcd.log"))
        } else {
            (dir.join(&self.name), dir.join(self.log_name()))
        };
        let log = std::fs::File::create(log).expect("etcd log file");
        let log2 = log.try_clone().expect("etcd log file");
        let mut command = Command::new(etcd_binary());
        if let Some(interval) = progress {
            command.args(["--experimental-watch-progress-notify-interval", interval]);
        }
        command
            .args(["--name", &self.name])
            .arg("--data-dir")
            .arg(data)
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", initial_cluster])
            .args(["--initial-cluster-token", "keelson-test-cluster"])
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log2))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", etcd_binary().display()))
    }

    /// SIGKILL and reap.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Wait until the member on `client_port` says it is healthy (it has a
/// leader), or panic with its log.
fn wait_healthy(client_port: u16, child: &mut Option<Child>, dir: &Path, log: &str) {
    let deadline = Instant::now() + START_TIMEOUT;
    while Instant::now() < deadline {
        if healthy(client_port) {
            return;
        }
        if let Some(Ok(Some(status))) = child.as_mut().map(|c| c.try_wait()) {
            panic!(
                "etcd exited with {status}: {}",
                std::fs::read_to_string(dir.join(log)).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "etcd did not become healthy within {START_TIMEOUT:?}: {}",
        std::fs::read_to_string(dir.join(log)).unwrap_or_default()
    );
}

/// etcd's `/health` says `true` (one plain HTTP/1.0 request; no client
/// crate is needed for it).
fn healthy(client_port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", client_port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body.contains("\"health\":\"true\"")
}

/// A real etcd cluster of several members on loopback (`--initial-cluster`
/// naming them all), for fault tests: kill members, stop and restart the
/// whole cluster. Every member keeps its data across restarts; all are
/// killed on drop.
#[derive(Debug)]
pub struct TestEtcdCluster {
    members: Vec<Member>,
    dir: tempfile::TempDir,
    progress_notify: Option<&'static str>,
}

impl TestEtcdCluster {
    /// Start `size` members (progress notifications every 100 ms) and wait
    /// until every one is healthy.
    pub fn start(size: usize) -> TestEtcdCluster {
        let members = (0..size)
            .map(|i| Member {
                name: format!("member-{i}"),
                client_port: free_port(),
                peer_port: free_port(),
                child: None,
            })
            .collect();
        let mut cluster = TestEtcdCluster {
            members,
            dir: tempfile::tempdir().expect("a temporary directory for etcd"),
            progress_notify: Some("100ms"),
        };
        cluster.restart_all();
        cluster
    }

    fn initial_cluster(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every member's client URL, for `--etcd-servers`.
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| format!("http://127.0.0.1:{}", m.client_port))
            .collect()
    }

    /// Kill member `i` with SIGKILL (its data stays).
    pub fn kill(&mut self, i: usize) {
        self.members[i].kill();
    }

    /// Whether member `i` runs.
    pub fn is_running(&self, i: usize) -> bool {
        self.members[i].child.is_some()
    }

    /// Start member `i` again and wait until it is healthy.
    pub fn restart(&mut self, i: usize) {
        self.members[i].kill();
        let initial = self.initial_cluster();
        let child = self.members[i].spawn(self.dir.path(), &initial, self.progress_notify);
        self.members[i].child = Some(child);
        let log = self.members[i].log_name();
        let port = self.members[i].client_port;
        wait_healthy(port, &mut self.members[i].child, self.dir.path(), &log);
    }

    /// Kill every member.
    pub fn stop_all(&mut self) {
        for m in &mut self.members {
            m.kill();
        }
    }

    /// (Re)start every member at once (a member waits for a quorum) and
    /// wait until all are healthy.
    pub fn restart_all(&mut self) {
        self.stop_all();
        let initial = self.initial_cluster();
        for m in &mut self.members {
            let child = m.spawn(self.dir.path(), &initial, self.progress_notify);
            m.child = Some(child);
        }
        for m in &mut self.members {
            let log = m.log_name();
            wait_healthy(m.client_port, &mut m.child, self.dir.path(), &log);
        }
    }
}

impl Drop for TestEtcdCluster {
    fn drop(&mut self) {
        self.stop_all();
    }
}

impl Drop for TestEtcd {
    fn drop(&mut self) {
        self.stop();
    }
}
