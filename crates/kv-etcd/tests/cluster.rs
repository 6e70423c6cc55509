//! [`EtcdKv`] over a real 3-member etcd cluster on loopback: with the
//! preferred member killed, reads, writes and new watches move on to the
//! members that remain; the killed member's return changes nothing.

use futures::StreamExt;
use keelson_kv::{Compare, RangeRequest, RevisionedKv, TxnOp, TxnRequest, TxnResponse};
use keelson_kv::{EventKind, WatchResponse};
use keelson_kv_etcd::testing::TestEtcdCluster;
use keelson_kv_etcd::{EtcdConfig, EtcdKv};

fn create(key: &str) -> TxnRequest {
    TxnRequest {
        key: key.as_bytes().to_vec(),
        compare: Compare::ModRevision(0),
        on_success: TxnOp::Put(b"v".to_vec()),
    }
}

#[tokio::test]
async fn calls_move_to_a_live_member_when_one_is_killed() {
    let mut cluster = TestEtcdCluster::start(3);
    let kv = EtcdKv::connect(EtcdConfig {
        endpoints: cluster.endpoints(),
        prefix: "/failover".into(),
        ..Default::default()
    })
    .await
    .expect("an etcd client");
    let first = kv.txn(create("a")).await.expect("a write");
    assert!(matches!(first, TxnResponse::Succeeded { .. }));

    // The first endpoint is the preferred member: kill it.
    cluster.kill(0);
    let read = kv
        .range(RangeRequest::key(b"a".to_vec()))
        .await
        .expect("a read with member 0 down");
    assert_eq!(read.kvs.len(), 1);
    let mut revision = 0;
    for i in 0..20 {
        match kv
            .txn(create(&format!("b{i}")))
            .await
            .expect("a write with member 0 down")
        {
            TxnResponse::Succeeded { revision: r, .. } => revision = r,
            TxnResponse::Failed { .. } => panic!("b{i} existed"),
        }
    }
    let mut watch = kv
        .watch(b"b".to_vec(), revision)
        .await
        .expect("a watch with member 0 down");
    match watch.next().await {
        Some(Ok(WatchResponse::Event(e))) => {
            assert_eq!((e.kind, e.kv.key), (EventKind::Put, b"b19".to_vec()))
        }
        other => panic!("expected the last write, got {other:?}"),
    }

    cluster.restart(0);
    let all = kv
        .range(RangeRequest::prefix(b"b".to_vec()))
        .await
        .expect("a read after the member returned");
    assert_eq!(all.kvs.len(), 20);
}
