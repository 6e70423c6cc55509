//! Starting and stopping the service binaries in their tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Start a binary and read its `listening on ADDR` line; returns the child
/// and `http://ADDR`.
pub fn start(exe: &str, args: &[&str], envs: &[(&str, &str)]) -> (Child, String) {
    let mut child = Command::new(exe)
        .args(args)
        .envs(envs.iter().copied())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    // Keep draining so a later print never hits a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, format!("http://{addr}"))
}

/// SIGTERM the binary and wait for its exit without blocking the test's
/// runtime (its gRPC clients must still answer the server's goaway).
pub async fn stop(mut child: Child) -> std::process::ExitStatus {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap()
}
