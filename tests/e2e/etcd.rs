//! Keelson over a real etcd (`--storage-backend=etcd3`): kubectl create,
//! get, list, watch and delete; kube's key layout seen with `etcdctl`; the
//! data survives a Keelson restart; an etcd outage answers 504 and fails
//! `/readyz` with kube's `[-]etcd failed`, and everything recovers when
//! etcd returns. Two `keelson-store` replicas over one etcd serve the same
//! data. The test starts `etcd` itself (it must be on PATH; `.ci/run`
//! installs Debian's `etcd-server`).

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use keelson_kv_etcd::testing::TestEtcd;
use support::{block_on, Cluster, Mode};

fn etcd_flags(etcd: &TestEtcd) -> Vec<String> {
    vec![
        "--storage-backend=etcd3".into(),
        format!("--etcd-servers={}", etcd.endpoint()),
        // A short interval, so the compactor runs during the test.
        "--etcd-compaction-interval=2s".into(),
    ]
}

fn start(mode: Mode, flags: &[String]) -> Cluster {
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    Cluster::start_with(mode, &args)
}

/// `etcdctl get --prefix PREFIX --keys-only` against the test etcd.
fn etcd_keys(etcd: &TestEtcd, prefix: &str) -> Vec<String> {
    let out = Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", &etcd.endpoint()])
        .args(["get", "--prefix", prefix, "--keys-only"])
        .output()
        .expect("etcdctl (Debian's etcd-client) on PATH");
    assert!(
        out.status.success(),
        "etcdctl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// GET `path` with the admin token: (status, body).
fn get(c: &Cluster, path: &str) -> (u16, String) {
    let client = c.client();
    let url = format!("{}{}", c.url, path);
    block_on(async move {
        let r = client.get(&url).send().await.expect("request");
        let code = r.status().as_u16();
        (code, r.text().await.unwrap_or_default())
    })
}

fn create_get_list_watch_delete(c: &Cluster) {
    let mut watch = Command::new("kubectl")
        .args(["get", "configmaps", "-w", "--output-watch-events"])
        .env("KUBECONFIG", &c.kubeconfig)
        .env("HOME", c.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl get -w");
    std::thread::sleep(Duration::from_millis(1500));
    c.ok(&["create", "configmap", "demo", "--from-literal=a=b"]);
    assert_eq!(
        c.ok(&["get", "configmap", "demo", "-o", "jsonpath={.data.a}"]),
        "b"
    );
    c.ok(&["label", "configmap", "demo", "k=v"]);
    let list = c.ok(&["get", "configmaps", "-o", "name"]);
    assert!(list.lines().any(|l| l == "configmap/demo"), "{list}");
    c.ok(&["create", "configmap", "gone", "--from-literal=x=y"]);
    c.ok(&["delete", "configmap", "gone"]);
    let err = c.fails(&["get", "configmap", "gone"], None);
    assert!(
        err.contains(r#"configmaps "gone" not found"#),
        "kube's NotFound: {err}"
    );
    std::thread::sleep(Duration::from_millis(1500));
    let _ = watch.kill();
    let mut out = String::new();
    watch
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    let _ = watch.wait();
    let rows: Vec<(&str, &str)> = out
        .lines()
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            Some((cols.next()?, cols.next()?))
        })
        .filter(|(_, name)| *name == "demo" || *name == "gone")
        .collect();
    assert_eq!(
        rows,
        [
            ("ADDED", "demo"),
            ("MODIFIED", "demo"),
            ("ADDED", "gone"),
            ("DELETED", "gone"),
        ],
        "kubectl get -w printed:\n{out}"
    );
}

#[test]
fn kubectl_over_etcd_survives_restarts_and_outages() {
    let mut etcd = TestEtcd::start();
    let flags = etcd_flags(&etcd);
    let mut c = start(Mode::Embedded, &flags);
    create_get_list_watch_delete(&c);

    // kube-apiserver's layout: /registry/<resource>/<namespace>/<name>,
    // cluster-scoped objects without the namespace segment.
    let keys = etcd_keys(&etcd, "/registry/configmaps/default/");
    assert!(
        keys.contains(&"/registry/configmaps/default/demo".to_string()),
        "{keys:?}"
    );
    assert!(!keys.iter().any(|k| k.ends_with("/gone")), "{keys:?}");
    let namespaces = etcd_keys(&etcd, "/registry/namespaces/");
    assert!(
        namespaces.contains(&"/registry/namespaces/default".to_string()),
        "{namespaces:?}"
    );

    // The kube names of the health checks.
    let (code, body) = get(&c, "/readyz?verbose");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("[+]etcd ok\n"), "{body}");
    assert_eq!(get(&c, "/livez/etcd"), (200, "ok".to_string()));
    assert_eq!(get(&c, "/readyz/etcd"), (200, "ok".to_string()));

    // A restarted Keelson (a fresh data directory: all state is in etcd)
    // serves the same objects.
    c.stop();
    let c = start(Mode::Embedded, &flags);
    assert_eq!(
        c.ok(&["get", "configmap", "demo", "-o", "jsonpath={.data.a}"]),
        "b"
    );

    // etcd goes away: requests fail fast with kube's 504, /readyz fails.
    etcd.stop();
    let started = Instant::now();
    let (code, body) = get(&c, "/api/v1/namespaces/default/configmaps/demo");
    assert_eq!(code, 504, "{body}");
    assert!(body.contains(r#""reason":"Timeout""#), "{body}");
    assert!(
        body.contains("request did not complete within requested timeout"),
        "{body}"
    );
    assert!(started.elapsed() < Duration::from_secs(15), "fails fast");
    let out = c.kubectl(&["create", "configmap", "down", "--from-literal=a=b"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Timeout"), "kubectl: {err}");
    let (code, body) = get(&c, "/readyz?verbose");
    assert_eq!(code, 500, "{body}");
    assert!(body.contains("[-]etcd failed: reason withheld\n"), "{body}");
    assert!(body.ends_with("readyz check failed\n"), "{body}");
    assert_eq!(get(&c, "/livez/etcd").0, 500);

    // etcd returns: everything recovers.
    etcd.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    while get(&c, "/readyz").0 != 200 {
        assert!(Instant::now() < deadline, "never ready again");
        std::thread::sleep(Duration::from_millis(200));
    }
    c.ok(&["create", "configmap", "after", "--from-literal=a=b"]);
    let list = c.ok(&["get", "configmaps", "-o", "name"]);
    assert!(
        list.contains("configmap/demo") && list.contains("configmap/after"),
        "{list}"
    );
    c.ok(&["delete", "configmap", "demo"]);
    let keys = etcd_keys(&etcd, "/registry/configmaps/default/");
    assert!(
        keys.contains(&"/registry/configmaps/default/after".to_string())
            && !keys.contains(&"/registry/configmaps/default/demo".to_string()),
        "{keys:?}"
    );
}

/// Two `keelson-store` processes over one etcd: what one writes, the other
/// reads, and the distributed mode works on either.
#[test]
fn two_store_replicas_share_one_etcd() {
    let etcd = TestEtcd::start();
    let flags = etcd_flags(&etcd);
    let a = start(Mode::Distributed, &flags);
    let b = start(Mode::Distributed, &flags);
    a.ok(&["create", "configmap", "shared", "--from-literal=a=b"]);
    assert_eq!(
        b.ok(&["get", "configmap", "shared", "-o", "jsonpath={.data.a}"]),
        "b"
    );
    b.ok(&["label", "configmap", "shared", "from=b"]);
    // a's watch cache follows etcd through its own store replica.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let labels = a.ok(&[
            "get",
            "configmaps",
            "-o",
            "jsonpath={.items[*].metadata.labels.from}",
        ]);
        if labels.trim() == "b" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a never saw b's write: {labels:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let keys = etcd_keys(&etcd, "/registry/configmaps/default/");
    assert!(
        keys.contains(&"/registry/configmaps/default/shared".to_string()),
        "{keys:?}"
    );
}
