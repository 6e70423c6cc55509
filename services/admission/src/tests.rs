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

#[test]
fn the_admission_control_config_file_comes_from_flag_or_config_key() {
    let dir = tempfile::tempdir().unwrap();
    let admission = dir.path().join("admission.yaml");
    std::fs::write(
        &admission,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults: {enforce: restricted}\n",
    )
    .unwrap();
    let a = admission.to_str().unwrap();
    let cfg = parse(&["--admission-control-config-file", a]).unwrap();
    let plugins = cfg.plugins.plugins().unwrap();
    assert_eq!(plugins.pod_security.defaults["enforce"], "restricted");
    let toml = dir.path().join("admission.toml");
    std::fs::write(&toml, format!("admission-control-config-file = {a:?}\n")).unwrap();
    let cfg = parse(&["--config", toml.to_str().unwrap()]).unwrap();
    assert_eq!(
        cfg.plugins.admission_control_config_file.as_deref(),
        Some(admission.as_path())
    );
    let missing = dir.path().join("none.yaml");
    let cfg = parse(&["--admission-control-config-file", missing.to_str().unwrap()]).unwrap();
    assert!(cfg
        .plugins
        .plugins()
        .unwrap_err()
        .starts_with("failed to apply admission: failed to read plugin config: unable to read admission control configuration from"));
}
