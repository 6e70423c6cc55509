use super::*;
use clap::Parser as _;
use keelson_runtime::ServiceFlags as _;

fn parse(args: &[&str]) -> Result<Config, ServiceError> {
    let mut argv = vec!["keelson-watch"];
    argv.extend_from_slice(args);
    Cli::try_parse_from(argv).unwrap().into_config()
}

#[test]
fn defaults() {
    let cfg = parse(&[]).unwrap();
    assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(cfg.store_endpoint, DEFAULT_STORE_ENDPOINT);
    assert_eq!(cfg.cache, WatchCacheConfig::default());
}

#[test]
fn flags_beat_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("watch.toml");
    std::fs::write(
        &path,
        "listen = \"0.0.0.0:7004\"\nstore-endpoint = \"http://store:7001\"\nhistory = 50\nhistory-bytes = 1000\nwatcher-buffer = 7\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let cfg = parse(&["--config", p]).unwrap();
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:7004");
    assert_eq!(cfg.store_endpoint, "http://store:7001");
    assert_eq!(
        (
            cfg.cache.history,
            cfg.cache.history_bytes,
            cfg.cache.watcher_buffer
        ),
        (50, 1000, 7)
    );
    let cfg = parse(&[
        "--config",
        p,
        "--history",
        "9",
        "--store-endpoint",
        "http://x:1",
    ])
    .unwrap();
    assert_eq!(
        (cfg.cache.history, cfg.store_endpoint.as_str()),
        (9, "http://x:1")
    );
}

#[test]
fn unknown_config_keys_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("watch.toml");
    std::fs::write(&path, "histroy = 1\n").unwrap();
    let err = parse(&["--config", path.to_str().unwrap()]).unwrap_err();
    assert!(err.to_string().contains("unknown field `histroy`"), "{err}");
}
