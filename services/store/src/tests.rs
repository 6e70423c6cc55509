use super::*;
use clap::Parser as _;
use keelson_runtime::ServiceFlags as _;

fn parse(args: &[&str]) -> Result<Config, ServiceError> {
    let mut argv = vec!["keelson-store"];
    argv.extend_from_slice(args);
    Cli::try_parse_from(argv)
        .unwrap()
        .into_config()
        .map_err(ServiceError::from)
}

#[test]
fn defaults() {
    let cfg = parse(&[]).unwrap();
    assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(cfg.data_dir, PathBuf::from("./keelson-data"));
    assert_eq!(cfg.retention, Duration::from_secs(300));
}

#[test]
fn the_kube_flag_name_sets_retention() {
    let cfg = parse(&["--etcd-compaction-interval", "10s"]).unwrap();
    assert_eq!(cfg.retention, Duration::from_secs(10));
    let cfg = parse(&["--retention", "90"]).unwrap();
    assert_eq!(cfg.retention, Duration::from_secs(90));
    let err = Cli::try_parse_from(["keelson-store", "--retention", "soon"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("invalid value 'soon' for '--retention"),
        "{err}"
    );
}

#[test]
fn flags_beat_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.toml");
    std::fs::write(
        &path,
        "data-dir = \"/var/lib/keelson\"\nlisten = \"0.0.0.0:7001\"\nretention = \"2m\"\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let cfg = parse(&["--config", p]).unwrap();
    assert_eq!(cfg.data_dir, PathBuf::from("/var/lib/keelson"));
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:7001");
    assert_eq!(cfg.retention, Duration::from_secs(120));
    let cfg = parse(&["--config", p, "--data-dir", "/tmp/x", "--retention", "1s"]).unwrap();
    assert_eq!(cfg.data_dir, PathBuf::from("/tmp/x"));
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:7001");
    assert_eq!(cfg.retention, Duration::from_secs(1));

    std::fs::write(&path, "retention = 45\n").unwrap();
    assert_eq!(
        parse(&["--config", p]).unwrap().retention,
        Duration::from_secs(45)
    );
}

#[test]
fn bad_config_values_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.toml");
    std::fs::write(&path, "retention = \"forever\"\n").unwrap();
    let err = parse(&["--config", path.to_str().unwrap()]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid retention \"forever\": "),
        "{err}"
    );
    let err = parse(&[
        "--config",
        dir.path().join("missing.toml").to_str().unwrap(),
    ])
    .unwrap_err();
    assert!(err.to_string().starts_with("config file "), "{err}");
}
