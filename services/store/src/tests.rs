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

#[test]
fn storage_flags_are_kube_apiservers() {
    assert_eq!(parse(&[]).unwrap().storage, Storage::Sled);
    let cfg = parse(&[
        "--storage-backend=etcd3",
        "--etcd-servers",
        "http://10.0.0.1:2379,http://10.0.0.2:2379",
        "--etcd-prefix=/kube",
        "--etcd-cafile=/pki/ca.crt",
        "--etcd-certfile=/pki/c.crt",
        "--etcd-keyfile=/pki/c.key",
    ])
    .unwrap();
    let Storage::Etcd(etcd, _) = cfg.storage else {
        panic!("{:?}", cfg.storage)
    };
    assert_eq!(
        etcd.endpoints,
        ["http://10.0.0.1:2379", "http://10.0.0.2:2379"]
    );
    assert_eq!(etcd.prefix, "/kube");
    assert_eq!(etcd.ca_file, Some(PathBuf::from("/pki/ca.crt")));
    assert_eq!(etcd.cert_file, Some(PathBuf::from("/pki/c.crt")));
    assert_eq!(etcd.key_file, Some(PathBuf::from("/pki/c.key")));

    let Storage::Etcd(defaults, layout) = parse(&["--storage-backend", "etcd3"]).unwrap().storage
    else {
        panic!("etcd3")
    };
    assert_eq!(defaults.endpoints, ["http://127.0.0.1:2379"]);
    assert_eq!(defaults.prefix, "/registry");
    assert_eq!(layout, EtcdLayout::Keelson);
    let Storage::Etcd(_, kube) = parse(&["--storage-backend=etcd3", "--etcd-layout=kube"])
        .unwrap()
        .storage
    else {
        panic!("etcd3")
    };
    assert_eq!(kube, EtcdLayout::Kube);

    let err = Cli::try_parse_from(["keelson-store", "--storage-backend", "etcd2"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("invalid value 'etcd2' for '--storage-backend"),
        "{err}"
    );
}

#[test]
fn storage_flags_come_from_the_config_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.toml");
    std::fs::write(
        &path,
        "storage-backend = \"etcd3\"\netcd-servers = [\"http://a:2379\"]\netcd-prefix = \"/x\"\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let Storage::Etcd(etcd, _) = parse(&["--config", p]).unwrap().storage else {
        panic!("etcd3 from the file")
    };
    assert_eq!(
        (etcd.endpoints, etcd.prefix),
        (vec!["http://a:2379".into()], "/x".into())
    );
    let cfg = parse(&["--config", p, "--storage-backend", "sled"]).unwrap();
    assert_eq!(cfg.storage, Storage::Sled);
}

/// The store over a real etcd: kube's key layout under the prefix, and an
/// unreachable etcd answers kube's 504 quickly, then recovers.
#[tokio::test]
async fn the_store_on_etcd_uses_kubes_keys_and_times_out_with_504() {
    use keelson_api::{CreateOptions, StoreApi};
    use keelson_apimachinery::{GroupResource, ObjectKey};
    use keelson_kv::{RangeRequest, RevisionedKv};

    let mut etcd = keelson_kv_etcd::testing::TestEtcd::start();
    let config = EtcdConfig {
        endpoints: vec![etcd.endpoint()],
        request_timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let store = open_storage(
        &Storage::Etcd(config.clone(), EtcdLayout::Keelson),
        dir.path(),
        Duration::ZERO,
    )
    .await
    .unwrap();
    let key = ObjectKey::new(GroupResource::new("", "configmaps"), "default", "x");
    let cm = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"},
        "data": {"a": "b"}
    });
    let created = store
        .create(&key, cm, CreateOptions::default())
        .await
        .unwrap();
    let raw = EtcdKv::connect(EtcdConfig {
        prefix: String::new(),
        ..config
    })
    .await
    .unwrap();
    let read = raw
        .range(RangeRequest::key(
            b"/registry/configmaps/default/x".to_vec(),
        ))
        .await
        .unwrap();
    assert_eq!(read.kvs.len(), 1, "kube's key layout");
    assert_eq!(
        read.kvs[0].mod_revision.to_string(),
        created["metadata"]["resourceVersion"].as_str().unwrap()
    );
    let ns = raw
        .range(RangeRequest::key(b"/registry/namespaces/default".to_vec()))
        .await
        .unwrap();
    assert_eq!(
        ns.kvs.len(),
        1,
        "cluster-scoped objects have no namespace segment"
    );

    etcd.stop();
    let started = std::time::Instant::now();
    let err = store.get(&key).await.unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (504, "Timeout"), "{err:?}");
    assert_eq!(
        err.message,
        "Timeout: request did not complete within requested timeout - context deadline exceeded"
    );
    assert!(started.elapsed() < Duration::from_secs(5), "fails fast");
    assert!(store.ready().await.is_err());

    etcd.restart();
    let mut back = None;
    for _ in 0..50 {
        if let Ok(obj) = store.get(&key).await {
            back = Some(obj);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(back.expect("recovered")["data"]["a"], "b");
    store.ready().await.unwrap();
}

#[tokio::test]
async fn the_memory_backend_stores_nothing_on_disk() {
    use keelson_api::{CreateOptions, StoreApi as _};
    use keelson_apimachinery::{GroupResource, ObjectKey};

    assert_eq!(
        parse(&["--storage-backend", "memory"]).unwrap().storage,
        Storage::Memory
    );
    let dir = tempfile::tempdir().unwrap();
    let sled_dir = dir.path().join("store");
    let store = open_storage(&Storage::Memory, &sled_dir, Duration::from_secs(60))
        .await
        .unwrap();
    let key = ObjectKey::new(GroupResource::new("", "configmaps"), "default", "m");
    let cm = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "m", "namespace": "default"},
    });
    let created = store
        .create(&key, cm, CreateOptions::default())
        .await
        .unwrap();
    let read = store.get(&key).await.unwrap();
    assert_eq!(
        read["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert!(!sled_dir.exists(), "nothing written to the sled directory");
}
