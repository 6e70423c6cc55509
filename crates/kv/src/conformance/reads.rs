//! Range: exact reads at any retained revision, limits, future revisions.

use crate::{KeyRange, KvError, RangeRequest};

use super::{history, key, put, read_all, row, summary, KvFactory, PREFIX};
use crate::{Compare, TxnOp, TxnRequest};

/// Range of a key and a prefix at the current revision and at each
/// revision of a history reads exactly the state then, with create and mod
/// revisions.
pub async fn range_reads_exact_history(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv = kv.as_ref();
    // A key beside the prefix, which no read below may see.
    kv.txn(TxnRequest {
        key: b"conformance0".to_vec(),
        compare: Compare::Always,
        on_success: TxnOp::Put(b"x".to_vec()),
    })
    .await
    .unwrap();
    let h = history(kv).await;
    assert_eq!(kv.current_revision().await.unwrap(), h.r5);

    let now = kv.range(RangeRequest::prefix(PREFIX)).await.unwrap();
    assert_eq!(now.revision, h.r5, "a current read says its revision");
    assert!(!now.more);
    assert_eq!(
        summary(&now.kvs),
        vec![row("a", "2", h.r1, h.r3), row("b", "2", h.r5, h.r5)]
    );
    assert_eq!(read_all(kv, Some(h.r1 - 1)).await, vec![]);
    assert_eq!(
        read_all(kv, Some(h.r2)).await,
        vec![row("a", "1", h.r1, h.r1), row("b", "1", h.r2, h.r2)]
    );
    assert_eq!(
        read_all(kv, Some(h.r3)).await,
        vec![row("a", "2", h.r1, h.r3), row("b", "1", h.r2, h.r2)]
    );
    assert_eq!(
        read_all(kv, Some(h.r4)).await,
        vec![row("a", "2", h.r1, h.r3)]
    );
    let at = kv
        .range(RangeRequest::prefix(PREFIX).at(h.r4))
        .await
        .unwrap();
    assert_eq!(at.revision, h.r4, "a read at a revision says that revision");

    let get = |rev: Option<u64>| {
        let mut request = RangeRequest::key(key("b"));
        request.revision = rev;
        async move { summary(&kv.range(request).await.unwrap().kvs) }
    };
    assert_eq!(get(Some(h.r1)).await, vec![]);
    assert_eq!(get(Some(h.r3)).await, vec![row("b", "1", h.r2, h.r2)]);
    assert_eq!(get(Some(h.r4)).await, vec![], "deleted then");
    assert_eq!(get(None).await, vec![row("b", "2", h.r5, h.r5)]);
    let missing = kv.range(RangeRequest::key(key("zz"))).await.unwrap();
    assert!(missing.kvs.is_empty() && !missing.more);

    // A half-open range.
    let between = RangeRequest::new(KeyRange::Between {
        start: key("a\0"),
        end: Some(key("c")),
    });
    assert_eq!(
        summary(&kv.range(between).await.unwrap().kvs),
        vec![row("b", "2", h.r5, h.r5)]
    );
}

/// A limit cuts a range short and says so; continuing after the last key
/// with [`KeyRange::Between`] reads the rest at the same revision.
pub async fn limits_report_more(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv = kv.as_ref();
    for name in ["k1", "k2", "k3", "k4", "k5"] {
        put(kv, name, name, Compare::ModRevision(0)).await;
    }
    let rev = kv.current_revision().await.unwrap();
    put(kv, "k0", "late", Compare::ModRevision(0)).await;

    let page = kv
        .range(RangeRequest::prefix(PREFIX).at(rev).limit(2))
        .await
        .unwrap();
    assert!(page.more);
    let names: Vec<String> = summary(&page.kvs).into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["k1", "k2"]);
    let mut start = page.kvs[1].key.clone();
    start.push(0);
    let rest = kv
        .range(
            RangeRequest::new(KeyRange::Between {
                start,
                end: Some(key("l")),
            })
            .at(rev)
            .limit(3),
        )
        .await
        .unwrap();
    let names: Vec<String> = summary(&rest.kvs).into_iter().map(|r| r.0).collect();
    assert_eq!(names, ["k3", "k4", "k5"]);
    assert!(!rest.more, "exactly the limit left is not more");

    let all = kv.range(RangeRequest::prefix(PREFIX)).await.unwrap();
    assert_eq!((all.kvs.len(), all.more), (6, false), "0 is no limit");
}

/// A read above the current revision fails with `FutureRevision`.
pub async fn future_revision_is_an_error(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv = kv.as_ref();
    let rev = put(kv, "a", "1", Compare::Always).await;
    let e = kv
        .range(RangeRequest::prefix(PREFIX).at(rev + 1))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        KvError::FutureRevision {
            requested: rev + 1,
            current: rev
        }
    );
    let e = kv
        .range(RangeRequest::key(key("a")).at(rev + 5))
        .await
        .unwrap_err();
    assert!(matches!(e, KvError::FutureRevision { .. }), "{e}");
}
