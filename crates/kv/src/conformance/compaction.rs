//! Compact: reads at or above the compacted revision stay exact, older
//! reads and watches fail with `Compacted`.

use crate::{KvError, RangeRequest, RevisionedKv};

use super::{history, next_event, read_all, KvFactory, PREFIX};

/// After compacting to `C`, reads at `C` and above are exact and reads
/// below fail with `Compacted {requested, compacted: C}`; compaction never
/// moves backwards and stops at the current revision.
pub async fn compaction_keeps_reads_at_or_above(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv: &dyn RevisionedKv = kv.as_ref();
    let h = history(kv).await;
    let at_r3 = read_all(kv, Some(h.r3)).await;
    let at_r4 = read_all(kv, Some(h.r4)).await;
    let now = read_all(kv, None).await;

    assert_eq!(kv.compact(h.r3).await.unwrap(), h.r3);
    assert_eq!(kv.compacted_revision().await.unwrap(), h.r3);
    let e = kv
        .range(RangeRequest::prefix(PREFIX).at(h.r2))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        KvError::Compacted {
            requested: h.r2,
            compacted: h.r3
        }
    );
    let e = kv
        .range(RangeRequest::key(super::key("a")).at(h.r1))
        .await
        .unwrap_err();
    assert!(matches!(e, KvError::Compacted { .. }), "{e}");
    assert_eq!(read_all(kv, Some(h.r3)).await, at_r3);
    assert_eq!(read_all(kv, Some(h.r4)).await, at_r4);
    assert_eq!(read_all(kv, None).await, now);

    assert_eq!(kv.compact(h.r1).await.unwrap(), h.r3, "never backwards");
    assert_eq!(
        kv.compact(h.r5 + 100).await.unwrap(),
        h.r5,
        "capped at current"
    );
    assert_eq!(read_all(kv, None).await, now, "live keys survive");
}

/// A watch starting below the compacted revision fails the call with
/// `Compacted`; one starting after it replays what is left.
pub async fn compaction_rejects_old_watches(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv: &dyn RevisionedKv = kv.as_ref();
    let h = history(kv).await;
    kv.compact(h.r3).await.unwrap();
    let e = kv
        .watch(PREFIX.as_bytes().to_vec(), h.r2)
        .await
        .err()
        .expect("a compacted start revision fails the watch");
    assert_eq!(
        e,
        KvError::Compacted {
            requested: h.r2,
            compacted: h.r3
        }
    );
    let mut w = kv.watch(PREFIX.as_bytes().to_vec(), h.r4).await.unwrap();
    let revs = [
        next_event(&mut w).await.kv.mod_revision,
        next_event(&mut w).await.kv.mod_revision,
    ];
    assert_eq!(revs, [h.r4, h.r5]);
}
