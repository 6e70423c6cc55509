use super::*;
use keelson_runtime::ServiceFlags as _;

fn parse(args: &[&str]) -> Result<Config, ServiceError> {
    let mut argv = vec!["keelson-controllers"];
    argv.extend_from_slice(args);
    Cli::try_parse_from(argv).unwrap().into_config()
}

#[test]
fn defaults() {
    let cfg = parse(&[]).unwrap();
    assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(cfg.store_endpoint, DEFAULT_STORE_ENDPOINT);
}

#[test]
fn flags_beat_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("controllers.toml");
    std::fs::write(
        &path,
        "listen = \"0.0.0.0:7006\"\nstore-endpoint = \"http://store:7001\"\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let cfg = parse(&["--config", p]).unwrap();
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:7006");
    assert_eq!(cfg.store_endpoint, "http://store:7001");
    let cfg = parse(&["--config", p, "--store-endpoint", "http://x:1"]).unwrap();
    assert_eq!(cfg.store_endpoint, "http://x:1");
}

#[test]
fn health_answers() {
    assert_eq!(health::answer("/healthz", false).status(), 200);
    assert_eq!(health::answer("/livez", false).status(), 200);
    assert_eq!(health::answer("/readyz", false).status(), 500);
    assert_eq!(health::answer("/readyz", true).status(), 200);
    assert_eq!(health::answer("/metrics", true).status(), 404);
}

#[tokio::test]
async fn a_bad_store_endpoint_is_a_startup_error() {
    let config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        store_endpoint: "not a url".into(),
    };
    let listener = TcpListener::bind(config.listen).await.unwrap();
    let err = serve(&config, listener, async {}).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid endpoint \"not a url\""),
        "{err}"
    );
}
