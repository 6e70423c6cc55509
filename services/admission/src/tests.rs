use super::*;
use clap::Parser as _;
use keelson_runtime::ServiceFlags as _;

fn parse(args: &[&str]) -> Result<Config, ServiceError> {
    let mut argv = vec!["keelson-admission"];
    argv.extend_from_slice(args);
    Cli::try_parse_from(argv).unwrap().into_config()
}

#[test]
fn defaults() {
    let cfg = parse(&[]).unwrap();
    assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(cfg.store_endpoint, "http://127.0.0.1:7001");
}

#[test]
fn flags_beat_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("admission.toml");
    std::fs::write(
        &path,
        "listen = \"0.0.0.0:7002\"\nstore-endpoint = \"http://store:7001\"\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let cfg = parse(&["--config", p]).unwrap();
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:7002");
    assert_eq!(cfg.store_endpoint, "http://store:7001");
    let cfg = parse(&["--config", p, "--store-endpoint", "http://10.0.0.1:1"]).unwrap();
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:7002");
    assert_eq!(cfg.store_endpoint, "http://10.0.0.1:1");
}

#[tokio::test]
async fn a_bad_store_endpoint_is_a_startup_error() {
    let config = Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        store_endpoint: "not a url".into(),
        plugins: Default::default(),
        authorization_mode: "RBAC".into(),
    };
    let listener = TcpListener::bind(config.listen).await.unwrap();
    let err = serve(&config, listener, async {}).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid endpoint \"not a url\""),
        "{err}"
    );
}

#[test]
fn admission_plugin_flags_as_kube_takes_them() {
    let cfg = parse(&[
        "--disable-admission-plugins=ServiceAccount,Priority",
        "--enable-admission-plugins",
        "AlwaysPullImages",
    ])
    .unwrap();
    let plugins = cfg.plugins.plugins().unwrap();
    assert!(!plugins.enabled("ServiceAccount") && !plugins.enabled("Priority"));
    assert!(plugins.enabled("AlwaysPullImages") && plugins.enabled("LimitRanger"));
    assert_eq!(plugins.not_implemented(), ["AlwaysPullImages"]);
    let cfg = parse(&["--enable-admission-plugins=Nope"]).unwrap();
    assert_eq!(
        cfg.plugins.plugins().unwrap_err(),
        "enable-admission-plugins plugin \"Nope\" is unknown"
    );
}
