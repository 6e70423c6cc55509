//! Txn: compares on the mod revision, create-if-absent, deletes with their
//! previous kv.

use crate::{Compare, KvError, RangeRequest, TxnOp, TxnResponse};

use super::{delete, key, put, read_all, row, summary, txn, KvFactory};

/// A failed compare writes nothing, consumes no revision and returns the
/// current kv; create-if-absent is a compare on mod revision 0.
pub async fn compare_failures_write_nothing(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv = kv.as_ref();
    let r1 = put(kv, "k", "1", Compare::ModRevision(0)).await;
    let current = |name: &str, value: &str, rev: u64| row(name, value, r1, rev);

    for compare in [Compare::ModRevision(0), Compare::ModRevision(r1 + 7)] {
        match txn(kv, "k", compare, TxnOp::Put(b"2".to_vec())).await {
            TxnResponse::Failed { current: Some(now) } => {
                assert_eq!(summary(&[now]), vec![current("k", "1", r1)], "{compare:?}");
            }
            other => panic!("{compare:?}: {other:?}"),
        }
        match txn(kv, "k", compare, TxnOp::Delete).await {
            TxnResponse::Failed { current: Some(_) } => {}
            other => panic!("delete with {compare:?}: {other:?}"),
        }
    }
    match txn(
        kv,
        "absent",
        Compare::ModRevision(r1),
        TxnOp::Put(b"x".to_vec()),
    )
    .await
    {
        TxnResponse::Failed { current: None } => {}
        other => panic!("compare on an absent key: {other:?}"),
    }
    assert_eq!(
        kv.current_revision().await.unwrap(),
        r1,
        "failed compares consume no revision"
    );
    assert_eq!(read_all(kv, None).await, vec![current("k", "1", r1)]);

    // The right compare, and no compare at all, write; the previous kv comes
    // back and the create revision stays.
    let r2 = match txn(kv, "k", Compare::ModRevision(r1), TxnOp::Put(b"2".to_vec())).await {
        TxnResponse::Succeeded { revision, prev_kv } => {
            assert_eq!(
                summary(&prev_kv.into_iter().collect::<Vec<_>>()),
                vec![current("k", "1", r1)]
            );
            revision
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(r2, r1 + 1);
    let r3 = put(kv, "k", "3", Compare::Always).await;
    assert_eq!(read_all(kv, None).await, vec![current("k", "3", r3)]);
}

/// A delete returns the deleted kv; the key is gone at its revision and a
/// new create starts a new create revision. Deleting an absent key writes
/// nothing.
pub async fn delete_returns_the_previous_kv(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv = kv.as_ref();
    let r1 = put(kv, "d", "1", Compare::ModRevision(0)).await;
    let r2 = put(kv, "d", "2", Compare::ModRevision(r1)).await;
    let (r3, prev) = delete(kv, "d", Compare::ModRevision(r2)).await;
    assert_eq!(r3, r2 + 1);
    assert_eq!(
        summary(&prev.into_iter().collect::<Vec<_>>()),
        vec![row("d", "2", r1, r2)]
    );
    let gone = kv.range(RangeRequest::key(key("d"))).await.unwrap();
    assert!(gone.kvs.is_empty());
    assert_eq!(gone.revision, r3);
    assert_eq!(
        read_all(kv, Some(r2)).await,
        vec![row("d", "2", r1, r2)],
        "history keeps the deleted value"
    );

    let (rev, prev) = delete(kv, "d", Compare::Always).await;
    assert_eq!(
        (rev, prev),
        (r3, None),
        "deleting an absent key writes nothing"
    );
    assert_eq!(kv.current_revision().await.unwrap(), r3);

    let r4 = put(kv, "d", "again", Compare::ModRevision(0)).await;
    assert_eq!(read_all(kv, None).await, vec![row("d", "again", r4, r4)]);
    let e = kv.range(RangeRequest::key(key("d")).at(r4 + 1)).await;
    assert!(matches!(e, Err(KvError::FutureRevision { .. })), "{e:?}");
}
