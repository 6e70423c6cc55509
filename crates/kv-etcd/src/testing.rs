//! A real `etcd` for tests (feature `testing`): one member on free
//! loopback ports with its data in a temporary directory, killed on drop.
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
        let client = self.endpoint();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let log = std::fs::File::create(self.dir.path().join("etcd.log")).expect("etcd log file");
        let log2 = log.try_clone().expect("etcd log file");
        let mut command = Command::new(etcd_binary());
        if let Some(interval) = self.progress_notify {
            command.args(["--experimental-watch-progress-notify-interval", interval]);
        }
        let child = command
            .args(["--name", "keelson-test"])
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("keelson-test={peer}")])
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log2))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", etcd_binary().display()));
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if self.healthy() {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!(
                    "etcd exited with {status}: {}",
                    std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "etcd did not become healthy within {START_TIMEOUT:?}: {}",
            std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default()
        );
    }

    /// etcd's `/health` says `true` (one plain HTTP/1.0 request; no client
    /// crate is needed for it).
    fn healthy(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.client_port)) else {
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
}

impl Drop for TestEtcd {
    fn drop(&mut self) {
        self.stop();
    }
}
