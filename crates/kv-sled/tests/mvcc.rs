//! The MVCC layer: exact reads at old revisions, the change log, compaction.

use std::sync::Arc;
use std::time::Duration;

use keelson_kv_sled::engine::Engine;
use keelson_kv_sled::sled_engine::SledEngine;
use keelson_kv_sled::{ChangeOp, Expect, Mvcc, MvccError};

fn open(dir: &std::path::Path) -> Mvcc {
    let engine: Arc<dyn Engine> = Arc::new(SledEngine::open(dir, 8 << 20).unwrap());
    Mvcc::open(engine).unwrap()
}

fn vals(items: &[keelson_kv_sled::Versioned]) -> Vec<(String, u64, String)> {
    items
        .iter()
        .map(|v| {
            (
                String::from_utf8(v.key.clone()).unwrap(),
                v.revision,
                String::from_utf8(v.value.clone()).unwrap(),
            )
        })
        .collect()
}

/// r1: put a=1, r2: put b=1, r3: put a=2, r4: delete b, r5: put b=2
async fn history(m: &Mvcc) {
    assert_eq!(m.put(b"p/a", b"1", Expect::Absent).await.unwrap(), 1);
    assert_eq!(m.put(b"p/b", b"1", Expect::Absent).await.unwrap(), 2);
    assert_eq!(m.put(b"p/a", b"2", Expect::Revision(1)).await.unwrap(), 3);
    let del = m.delete(b"p/b", Expect::Any).await.unwrap();
    assert_eq!((del.revision, del.value.as_slice()), (4, &b"1"[..]));
    assert_eq!(m.put(b"p/b", b"2", Expect::Absent).await.unwrap(), 5);
}

#[tokio::test]
async fn first_write_is_revision_one_and_cas_is_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    assert_eq!(m.current_revision(), 0);
    assert_eq!(m.put(b"k", b"v", Expect::Absent).await.unwrap(), 1);
    let e = m.put(b"k", b"v", Expect::Absent).await.unwrap_err();
    assert!(
        matches!(
            e,
            MvccError::Conflict {
                expected: None,
                found: Some(1)
            }
        ),
        "{e}"
    );
    let e = m.put(b"k", b"v", Expect::Revision(7)).await.unwrap_err();
    assert!(
        matches!(
            e,
            MvccError::Conflict {
                expected: Some(7),
                found: Some(1)
            }
        ),
        "{e}"
    );
    assert!(m.delete(b"missing", Expect::Any).await.is_err());
    assert_eq!(m.current_revision(), 1, "failed writes consume no revision");
}

#[tokio::test]
async fn get_at_and_list_at_read_exact_history() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    history(&m).await;
    let get = |rev| {
        m.get_at(b"p/b", rev)
            .unwrap()
            .map(|v| (v.revision, v.value))
    };
    assert_eq!(get(1), None);
    assert_eq!(get(2), Some((2, b"1".to_vec())));
    assert_eq!(get(3), Some((2, b"1".to_vec())));
    assert_eq!(get(4), None);
    assert_eq!(get(5), Some((5, b"2".to_vec())));

    let at = |rev| vals(&m.list_at(b"p/", rev).unwrap());
    assert_eq!(at(0), vec![]);
    assert_eq!(
        at(2),
        vec![("p/a".into(), 1, "1".into()), ("p/b".into(), 2, "1".into())]
    );
    assert_eq!(at(4), vec![("p/a".into(), 3, "2".into())]);
    assert_eq!(
        at(5),
        vec![("p/a".into(), 3, "2".into()), ("p/b".into(), 5, "2".into())]
    );
    let (now, rev) = m.list(b"p/").unwrap();
    assert_eq!((vals(&now), rev), (at(5), 5));

    let e = m.get_at(b"p/a", 6).unwrap_err();
    assert!(
        matches!(
            e,
            MvccError::FutureRevision {
                requested: 6,
                current: 5
            }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn changes_since_replays_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    history(&m).await;
    let all = m.changes_since(0, usize::MAX).unwrap();
    let got: Vec<(u64, &[u8], ChangeOp, &[u8])> = all
        .iter()
        .map(|c| (c.revision, c.key.as_slice(), c.event, c.value.as_slice()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, &b"p/a"[..], ChangeOp::Added, &b"1"[..]),
            (2, b"p/b", ChangeOp::Added, b"1"),
            (3, b"p/a", ChangeOp::Modified, b"2"),
            (4, b"p/b", ChangeOp::Deleted, b"1"),
            (5, b"p/b", ChangeOp::Added, b"2"),
        ]
    );
    assert!(all.iter().all(|c| c.unix_millis > 1_600_000_000_000));
    let tail = m.changes_since(3, 1).unwrap();
    assert_eq!(tail.len(), 1);
    assert_eq!(tail[0].revision, 4);
    assert!(m.changes_since(5, 10).unwrap().is_empty());
}

#[tokio::test]
async fn compaction_keeps_exact_reads_at_or_above_and_rejects_below() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    history(&m).await;
    let expected_at_4 = vals(&m.list_at(b"p/", 4).unwrap());
    let expected_at_5 = vals(&m.list_at(b"p/", 5).unwrap());
    assert_eq!(m.compact_to(4).unwrap(), 4);
    assert_eq!(m.compacted_revision(), 4);

    let e = m.list_at(b"p/", 3).unwrap_err();
    assert!(
        matches!(
            e,
            MvccError::Compacted {
                requested: 3,
                compacted: 4
            }
        ),
        "{e}"
    );
    assert!(matches!(
        m.get_at(b"p/a", 1),
        Err(MvccError::Compacted { .. })
    ));
    assert!(matches!(
        m.changes_since(2, 10),
        Err(MvccError::Compacted { .. })
    ));
    assert_eq!(vals(&m.list_at(b"p/", 4).unwrap()), expected_at_4);
    assert_eq!(vals(&m.list_at(b"p/", 5).unwrap()), expected_at_5);
    let tail = m.changes_since(4, 10).unwrap();
    assert_eq!(tail.iter().map(|c| c.revision).collect::<Vec<_>>(), vec![5]);

    // Compaction never goes backwards, and is capped at the current revision.
    assert_eq!(m.compact_to(2).unwrap(), 4);
    assert_eq!(m.compact_to(100).unwrap(), 5);
    assert_eq!(vals(&m.list(b"p/").unwrap().0), expected_at_5);
}

#[tokio::test]
async fn retention_compaction_spares_recent_history_and_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let m = open(dir.path());
        history(&m).await;
        assert_eq!(m.compact_retention(Duration::from_secs(300)).unwrap(), 0);
        assert_eq!(m.changes_since(0, 100).unwrap().len(), 5);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(m.compact_retention(Duration::ZERO).unwrap(), 5);
        assert!(m.changes_since(5, 100).unwrap().is_empty());
        assert_eq!(m.put(b"p/c", b"1", Expect::Absent).await.unwrap(), 6);
    }
    let m = open(dir.path());
    assert_eq!(m.compacted_revision(), 5);
    assert_eq!(m.current_revision(), 6);
    assert!(matches!(
        m.get_at(b"p/a", 4),
        Err(MvccError::Compacted { .. })
    ));
    let (items, _) = m.list(b"p/").unwrap();
    assert_eq!(
        vals(&items),
        vec![
            ("p/a".into(), 3, "2".into()),
            ("p/b".into(), 5, "2".into()),
            ("p/c".into(), 6, "1".into())
        ]
    );
    // A key deleted before the compacted revision is gone entirely, and can
    // be created again.
    m.delete(b"p/c", Expect::Any).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    m.compact_retention(Duration::ZERO).unwrap();
    assert_eq!(m.put(b"p/c", b"again", Expect::Absent).await.unwrap(), 8);
}
