//! The `keelson-kv` conformance suite against [`EtcdKv`] over a real etcd
//! that each test starts (one member on loopback, temporary data). Without
//! `etcd` on PATH the tests fail and say so.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use keelson_kv::conformance;
use keelson_kv::RevisionedKv;
use keelson_kv_etcd::testing::TestEtcd;
use keelson_kv_etcd::{EtcdConfig, EtcdKv};

/// A store on `etcd` under a prefix of its own, so that the stores of one
/// etcd never see each other's keys.
async fn store(etcd: &TestEtcd) -> Arc<dyn RevisionedKv> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let config = EtcdConfig {
        endpoints: vec![etcd.endpoint()],
        prefix: format!("/conformance-{}", N.fetch_add(1, Ordering::Relaxed)),
        ..Default::default()
    };
    Arc::new(EtcdKv::connect(config).await.expect("an etcd client"))
}

macro_rules! conformance_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let etcd = TestEtcd::start();
                conformance::$name(&|| store(&etcd)).await;
            }
        )*
    };
}

conformance_tests!(
    range_reads_exact_history,
    limits_report_more,
    future_revision_is_an_error,
    compare_failures_write_nothing,
    delete_returns_the_previous_kv,
    watch_replays_history_with_prev_kvs,
    progress_notifications_say_how_far_the_watch_has_read,
    compaction_keeps_reads_at_or_above,
    compaction_rejects_old_watches,
);

/// The whole suite on one etcd, each test on a fresh prefix (etcd's
/// revisions are shared: the suite counts from the store's revision).
#[tokio::test]
async fn run_all_passes_on_one_etcd() {
    let etcd = TestEtcd::start();
    conformance::run_all(&|| store(&etcd)).await;
}

/// With progress requests (what a server from etcd 3.4.31, 3.5.13 or 3.6
/// gets; forced here on whatever etcd is installed, started without
/// periodic progress notifications), reading the current revision makes
/// every open watch ask for progress at once: a watch that saw no change of
/// its own learns it has read up to that revision.
#[tokio::test]
async fn reading_the_current_revision_requests_progress() {
    use futures::StreamExt;
    use keelson_kv::{Compare, TxnOp, TxnRequest, WatchResponse};

    let etcd = TestEtcd::start_with_progress_notify(None);
    let config = EtcdConfig {
        endpoints: vec![etcd.endpoint()],
        progress_requests: Some(true),
        // Only on demand within the test's time.
        progress_interval: std::time::Duration::from_secs(3600),
        ..Default::default()
    };
    let kv = EtcdKv::connect(config).await.expect("an etcd client");
    let start = kv.current_revision().await.unwrap();
    let mut w = kv.watch(b"mine/".to_vec(), start + 1).await.unwrap();
    kv.txn(TxnRequest {
        key: b"elsewhere".to_vec(),
        compare: Compare::Always,
        on_success: TxnOp::Put(b"x".to_vec()),
    })
    .await
    .unwrap();
    let current = kv.current_revision().await.unwrap();
    assert_eq!(current, start + 1);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let item = tokio::time::timeout_at(deadline, w.next())
            .await
            .expect("progress within 2 s of the read, not etcd's 10 min")
            .expect("open")
            .expect("no error");
        match item {
            WatchResponse::Progress { revision } if revision >= current => break,
            WatchResponse::Progress { .. } => continue,
            other => panic!("no event expected: {other:?}"),
        }
    }
}

/// A range answer larger than gRPC's default 4 MiB limit is read (a big
/// list), as kube's etcd client reads it.
#[tokio::test]
async fn large_ranges_are_read() {
    use keelson_kv::{Compare, RangeRequest, TxnOp, TxnRequest};

    let etcd = TestEtcd::start();
    let kv = store(&etcd).await;
    let value = vec![b'x'; 1024 * 1024];
    for i in 0..6 {
        kv.txn(TxnRequest {
            key: format!("big/{i}").into_bytes(),
            compare: Compare::ModRevision(0),
            on_success: TxnOp::Put(value.clone()),
        })
        .await
        .unwrap();
    }
    let all = kv
        .range(RangeRequest::prefix(b"big/".to_vec()))
        .await
        .unwrap();
    assert_eq!(all.kvs.len(), 6);
    assert!(all.kvs.iter().all(|kv| kv.value.len() == value.len()));
}
