//! Answers given before a request body is read, over HTTP/2 with curl:
//! the client gets the Status and a clean end of stream, never a reset
//! (curl's error 92) while it is still sending.

mod support;

use std::io::Write;
use std::process::Command;

use serde_json::Value;
use support::{Cluster, Mode};

/// `curl --http2` a body to `path`; the HTTP code, the body and curl's exit code.
fn curl(
    c: &Cluster,
    method: &str,
    path: &str,
    token: bool,
    ct: &str,
    body: &[u8],
) -> (u16, Value, i32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = dir.path().join("ca.crt");
    std::fs::write(&ca, &c.ca_pem).expect("ca");
    let data = dir.path().join("body");
    std::fs::File::create(&data)
        .and_then(|mut f| f.write_all(body))
        .expect("body");
    let out_file = dir.path().join("out");
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--http2", "--cacert"])
        .arg(&ca)
        .args(["-X", method, "-H", &format!("content-type: {ct}")])
        .args(["-o"])
        .arg(&out_file)
        .args(["-w", "%{http_code} %{http_version}"])
        .arg("--data-binary")
        .arg(format!("@{}", data.display()));
    if token {
        cmd.args(["-H", &format!("authorization: Bearer {}", c.token)]);
    }
    let out = cmd
        .arg(format!("{}{}", c.url, path))
        .output()
        .expect("curl runs");
    let written = String::from_utf8_lossy(&out.stdout).to_string();
    let mut parts = written.split_whitespace();
    let code: u16 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    assert_eq!(parts.next(), Some("2"), "not HTTP/2: {written}");
    let body = std::fs::read(&out_file).unwrap_or_default();
    let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
    (code, v, out.status.code().unwrap_or(-1))
}

#[test]
fn early_answers_end_http2_streams_cleanly() {
    let c = Cluster::start(Mode::Embedded);
    let cms = "/api/v1/namespaces/default/configmaps";
    let big = vec![b'x'; 10 * 1024 * 1024];
    let small = br#"{"metadata":{"name":"a"}}"#.repeat(40_000);
    // Several rounds: a reset races with the client's upload.
    for _ in 0..3 {
        let (code, v, exit) = curl(&c, "POST", cms, true, "application/json", &big);
        assert_eq!((code, exit), (413, 0), "{v}");
        assert_eq!(v["reason"], "RequestEntityTooLarge");
        assert_eq!(v["message"], "Request entity too large: limit is 3145728");

        let (code, v, exit) = curl(&c, "POST", cms, false, "application/json", &small);
        // Anonymous: RBAC's 403 (kube-apiserver's default anonymous auth).
        assert_eq!((code, exit), (403, 0), "{v}");
        assert_eq!(v["reason"], "Forbidden");

        let (code, v, exit) = curl(
            &c,
            "POST",
            "/api/v1/namespaces/default/foos",
            true,
            "application/json",
            &small,
        );
        assert_eq!((code, exit), (404, 0), "{v}");
        assert_eq!(v["reason"], "NotFound");

        let (code, v, exit) = curl(&c, "PATCH", &format!("{cms}/a"), true, "text/plain", &small);
        assert_eq!((code, exit), (415, 0), "{v}");
        assert_eq!(v["reason"], "UnsupportedMediaType");
    }
}
