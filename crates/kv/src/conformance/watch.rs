//! Watch: history from a start revision with previous kvs, in order, then
//! live changes, and progress notifications.

use futures::StreamExt;

use crate::{Compare, EventKind, RevisionedKv, TxnOp, TxnRequest, WatchResponse};

use super::{history, next_event, next_raw, put, summary, KvFactory, PREFIX, WAIT};

fn prefix() -> Vec<u8> {
    PREFIX.as_bytes().to_vec()
}

/// A watch from a past revision replays every change under its prefix in
/// revision order, each with the key's previous kv, then follows live
/// writes; a watch from a later revision starts there.
pub async fn watch_replays_history_with_prev_kvs(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv: &dyn RevisionedKv = kv.as_ref();
    let h = history(kv).await;
    let mut w = kv.watch(prefix(), h.r1).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(next_event(&mut w).await);
    }
    let kinds: Vec<(EventKind, u64)> = seen.iter().map(|e| (e.kind, e.kv.mod_revision)).collect();
    assert_eq!(
        kinds,
        vec![
            (EventKind::Put, h.r1),
            (EventKind::Put, h.r2),
            (EventKind::Put, h.r3),
            (EventKind::Delete, h.r4),
            (EventKind::Put, h.r5),
        ]
    );
    let row = super::row;
    // Creates: no previous kv, create revision = mod revision.
    for e in [&seen[0], &seen[1], &seen[4]] {
        assert!(e.prev_kv.is_none(), "{e:?}");
        assert_eq!(e.kv.create_revision, e.kv.mod_revision);
    }
    assert_eq!(
        summary(&[seen[2].kv.clone()]),
        vec![row("a", "2", h.r1, h.r3)]
    );
    assert_eq!(
        summary(&seen[2].prev_kv.iter().cloned().collect::<Vec<_>>()),
        vec![row("a", "1", h.r1, h.r1)]
    );
    // A delete: the key and its revision; the deleted state is prev_kv.
    assert_eq!(seen[3].kv.key, super::key("b"));
    assert_eq!(
        summary(&seen[3].prev_kv.iter().cloned().collect::<Vec<_>>()),
        vec![row("b", "1", h.r2, h.r2)]
    );

    // Live: the next write under the prefix arrives, others do not.
    kv.txn(TxnRequest {
        key: b"elsewhere".to_vec(),
        compare: Compare::Always,
        on_success: TxnOp::Put(b"x".to_vec()),
    })
    .await
    .unwrap();
    let r = put(kv, "c", "1", Compare::ModRevision(0)).await;
    let live = next_event(&mut w).await;
    assert_eq!(summary(&[live.kv]), vec![row("c", "1", r, r)]);

    let mut later = kv.watch(prefix(), h.r4).await.unwrap();
    let revs = [
        next_event(&mut later).await.kv.mod_revision,
        next_event(&mut later).await.kv.mod_revision,
        next_event(&mut later).await.kv.mod_revision,
    ];
    assert_eq!(revs, [h.r4, h.r5, r]);
}

/// After writes outside its prefix, a watch sends a progress notification
/// at (or past) the last of them without an event; a change of its own is
/// an event.
pub async fn progress_notifications_say_how_far_the_watch_has_read(factory: &impl KvFactory) {
    let kv = factory.fresh().await;
    let kv: &dyn RevisionedKv = kv.as_ref();
    let start = kv.current_revision().await.unwrap();
    let mut w = kv.watch(prefix(), start + 1).await.unwrap();
    let mut other = 0;
    for i in 0..3 {
        other = kv
            .txn(TxnRequest {
                key: format!("elsewhere/{i}").into_bytes(),
                compare: Compare::Always,
                on_success: TxnOp::Put(b"x".to_vec()),
            })
            .await
            .map(|r| match r {
                crate::TxnResponse::Succeeded { revision, .. } => revision,
                failed => panic!("{failed:?}"),
            })
            .unwrap();
    }
    loop {
        match next_raw(&mut w).await {
            WatchResponse::Progress { revision } if revision >= other => break,
            WatchResponse::Progress { .. } => continue,
            WatchResponse::Event(ev) => panic!("no event expected: {ev:?}"),
        }
    }
    let r = put(kv, "mine", "1", Compare::ModRevision(0)).await;
    let ev = next_event(&mut w).await;
    assert_eq!(ev.kv.mod_revision, r);
    // Nothing else: the stream stays open and quiet apart from progress.
    let deadline = tokio::time::Instant::now() + WAIT / 50;
    loop {
        match tokio::time::timeout_at(deadline, w.next()).await {
            Err(_) => break,
            Ok(Some(Ok(WatchResponse::Progress { .. }))) => continue,
            Ok(item) => panic!("unexpected watch item: {item:?}"),
        }
    }
}
