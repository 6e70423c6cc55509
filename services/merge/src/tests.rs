use super::*;
use clap::Parser as _;
use keelson_runtime::ServiceFlags as _;

#[test]
fn defaults() {
    let cfg = Cli::try_parse_from(["keelson-merge"])
        .unwrap()
        .into_config()
        .unwrap();
    assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
}

#[test]
fn flag_beats_file_beats_default() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("merge.toml");
    std::fs::write(&path, "listen = \"127.0.0.1:9000\"\n").unwrap();
    let p = path.to_str().unwrap();
    let cfg = Cli::try_parse_from(["keelson-merge", "--config", p])
        .unwrap()
        .into_config()
        .unwrap();
    assert_eq!(cfg.listen.to_string(), "127.0.0.1:9000");
    let cfg = Cli::try_parse_from(["keelson-merge", "--config", p, "--listen", "0.0.0.0:1"])
        .unwrap()
        .into_config()
        .unwrap();
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:1");
}

#[test]
fn bad_config_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("merge.toml");
    std::fs::write(&path, "lisen = \"x\"\n").unwrap();
    let err = Cli::try_parse_from(["keelson-merge", "--config", path.to_str().unwrap()])
        .unwrap()
        .into_config()
        .unwrap_err();
    assert!(err.to_string().contains("unknown field `lisen`"), "{err}");

    std::fs::write(&path, "listen = \"nowhere\"\n").unwrap();
    let err = Cli::try_parse_from(["keelson-merge", "--config", path.to_str().unwrap()])
        .unwrap()
        .into_config()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid listen \"nowhere\": invalid socket address syntax"
    );
}
