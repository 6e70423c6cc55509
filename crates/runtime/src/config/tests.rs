use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;

use super::*;

#[derive(Debug, Parser, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Flags {
    #[command(flatten)]
    #[serde(flatten)]
    common: CommonFlags,
    #[arg(long, env = "KEELSON_TEST_ADDR")]
    addr: Option<SocketAddr>,
    #[arg(long)]
    store_endpoint: Option<String>,
    #[arg(long, value_parser = crate::parse_duration)]
    #[serde(default, with = "crate::duration::option")]
    retention: Option<Duration>,
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    endpoints: Vec<String>,
}

impl ServiceFlags for Flags {
    type Config = Flags;

    fn common(&self) -> &CommonFlags {
        &self.common
    }
}

fn file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("svc.toml");
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap().to_string();
    (dir, p)
}

fn parse(args: &[&str]) -> Result<Flags, ServiceError> {
    let mut argv = vec!["svc"];
    argv.extend_from_slice(args);
    layer(Flags::try_parse_from(argv).unwrap())
}

#[test]
fn without_a_file_the_flags_are_untouched() {
    let f = parse(&["--store-endpoint", "http://x:1"]).unwrap();
    assert_eq!(f.store_endpoint.as_deref(), Some("http://x:1"));
    assert_eq!(f.common.listen, None);
}

#[test]
fn flags_beat_the_file_key_by_key() {
    let (_dir, p) = file(
        "listen = \"0.0.0.0:7\"\naddr = \"0.0.0.0:8\"\nstore-endpoint = \"http://file:1\"\nretention = \"2m\"\nendpoints = [\"a\"]\n",
    );
    let f = parse(&["--config", &p]).unwrap();
    assert_eq!(f.common.listen.unwrap().to_string(), "0.0.0.0:7");
    assert_eq!(f.addr.unwrap().to_string(), "0.0.0.0:8");
    assert_eq!(f.store_endpoint.as_deref(), Some("http://file:1"));
    assert_eq!(f.retention, Some(Duration::from_secs(120)));
    assert_eq!(f.endpoints, ["a"]);
    let f = parse(&[
        "--config",
        &p,
        "--retention",
        "250ms",
        "--endpoints",
        "b,c",
        "--listen",
        "127.0.0.1:1",
    ])
    .unwrap();
    assert_eq!(f.common.listen.unwrap().to_string(), "127.0.0.1:1");
    assert_eq!(f.addr.unwrap().to_string(), "0.0.0.0:8");
    assert_eq!(f.retention, Some(Duration::from_millis(250)));
    assert_eq!(f.endpoints, ["b", "c"]);
}

#[test]
fn the_environment_beats_the_file() {
    let (_dir, p) = file("addr = \"0.0.0.0:7\"\n");
    // Only this test sets the variable.
    std::env::set_var("KEELSON_TEST_ADDR", "127.0.0.1:9");
    let f = parse(&["--config", &p]);
    std::env::remove_var("KEELSON_TEST_ADDR");
    assert_eq!(f.unwrap().addr.unwrap().to_string(), "127.0.0.1:9");
}

#[test]
fn bad_files_are_clear_errors() {
    let (_dir, p) = file("listen = \"nowhere\"\n");
    assert_eq!(
        parse(&["--config", &p]).unwrap_err().to_string(),
        "invalid listen \"nowhere\": invalid socket address syntax"
    );
    let (_dir, p) = file("retention = \"forever\"\n");
    let err = parse(&["--config", &p]).unwrap_err().to_string();
    assert!(err.starts_with("invalid retention \"forever\": "), "{err}");
    let (_dir, p) = file("lisen = 1\n");
    let err = parse(&["--config", &p]).unwrap_err().to_string();
    assert!(err.starts_with(&format!("config file {p}: ")), "{err}");
    assert!(err.contains("unknown field `lisen`"), "{err}");
    let (_dir, p) = file("config = \"other.toml\"\n");
    let err = parse(&["--config", &p]).unwrap_err().to_string();
    assert!(err.contains("unknown field `config`"), "{err}");
    let err = parse(&["--config", "/nonexistent/svc.toml"])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("config file "), "{err}");
}
