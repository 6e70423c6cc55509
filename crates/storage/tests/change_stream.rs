//! The change stream (`StoreApi::watch`) against real sled files.

mod common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use keelson_api::{
    ChangeEvent, ChangeStream, CreateOptions, DeleteOptions, EventType, StoreApi, UpdateOptions,
};
use keelson_apimachinery::{ApiResult, GroupResource, ObjectKey};
use keelson_storage::{LocalStore, StoreConfig};
use serde_json::{json, Value};

fn secrets() -> GroupResource {
    GroupResource::new("", "secrets")
}

/// The next item, progress events included.
async fn next_raw(s: &mut ChangeStream) -> ApiResult<ChangeEvent> {
    tokio::time::timeout(Duration::from_secs(10), s.next())
        .await
        .expect("an event within 10s")
        .expect("the stream is still open")
}

/// The next change, skipping progress events.
async fn next(s: &mut ChangeStream) -> ApiResult<ChangeEvent> {
    loop {
        match next_raw(s).await {
            Ok(ev) if ev.event_type == EventType::Bookmark => continue,
            other => return other,
        }
    }
}

/// Nothing but progress events for a while.
async fn assert_quiet(s: &mut ChangeStream) {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(150);
    loop {
        match tokio::time::timeout_at(deadline, s.next()).await {
            Err(_) => return,
            Ok(Some(Ok(ev))) if ev.event_type == EventType::Bookmark => continue,
            Ok(r) => panic!("unexpected item: {r:?}"),
        }
    }
}

async fn create(s: &LocalStore, ns: &str, name: &str, data: &str) -> Value {
    s.create(&cm_key(ns, name), cm(name, data), CreateOptions::default())
        .await
        .unwrap()
}

async fn update(s: &LocalStore, ns: &str, name: &str, data: &str) -> Value {
    s.update(&cm_key(ns, name), cm(name, data), UpdateOptions::default())
        .await
        .unwrap()
}

fn summary(e: &ChangeEvent) -> (u64, EventType, String, String) {
    (
        e.revision,
        e.event_type,
        e.object["metadata"]["namespace"].as_str().unwrap().into(),
        e.object["metadata"]["name"].as_str().unwrap().into(),
    )
}

#[tokio::test]
async fn history_replays_from_a_revision_with_prev_objects() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let a1 = create(&s, "ns", "a", "1").await;
    let a2 = update(&s, "ns", "a", "2").await;
    let b = create(&s, "ns", "b", "1").await;

    let mut w = s.watch(&cms(), None, rv(&a1)).await.unwrap();
    assert_eq!(
        next(&mut w).await.unwrap(),
        ChangeEvent {
            revision: rv(&a2),
            event_type: EventType::Modified,
            object: a2.clone(),
            prev_object: Some(a1.clone()),
        }
    );
    assert_eq!(
        next(&mut w).await.unwrap(),
        ChangeEvent {
            revision: rv(&b),
            event_type: EventType::Added,
            object: b,
            prev_object: None,
        }
    );
    assert_quiet(&mut w).await;

    // From the beginning: the create comes first.
    let mut all = s.watch(&cms(), None, 0).await.unwrap();
    let first = next(&mut all).await.unwrap();
    assert_eq!((first.event_type, first.object), (EventType::Added, a1));
}

#[tokio::test]
async fn live_events_arrive_after_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let now = s.current_revision().await.unwrap();
    let mut w = s.watch(&cms(), None, now).await.unwrap();
    assert_quiet(&mut w).await;
    let a = create(&s, "ns", "a", "1").await;
    let ev = next(&mut w).await.unwrap();
    assert_eq!((ev.revision, ev.event_type), (rv(&a), EventType::Added));
    assert_eq!(ev.object, a);
    let a2 = update(&s, "ns", "a", "2").await;
    let ev = next(&mut w).await.unwrap();
    assert_eq!(ev.event_type, EventType::Modified);
    assert_eq!((ev.object, ev.prev_object), (a2, Some(a)));
}

#[tokio::test]
async fn a_future_revision_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let now = s.current_revision().await.unwrap();
    let mut w = s.watch(&cms(), None, now + 2).await.unwrap();
    create(&s, "ns", "a", "1").await;
    create(&s, "ns", "b", "1").await;
    let c = create(&s, "ns", "c", "1").await;
    assert_eq!(next(&mut w).await.unwrap().object, c);
    assert_quiet(&mut w).await;
}

#[tokio::test]
async fn namespaces_and_other_resources_are_filtered_out() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let start = s.current_revision().await.unwrap();
    let mut in_a = s.watch(&cms(), Some("a"), start).await.unwrap();
    let mut all = s.watch(&cms(), None, start).await.unwrap();
    create(&s, "ab", "x", "1").await;
    create(&s, "b", "y", "1").await;
    let secret = ObjectKey::new(secrets(), "a", "s");
    s.create(
        &secret,
        json!({"metadata": {"name": "s"}}),
        CreateOptions::default(),
    )
    .await
    .unwrap();
    let z = create(&s, "a", "z", "1").await;

    let ev = next(&mut in_a).await.unwrap();
    assert_eq!(ev.object, z);
    assert_quiet(&mut in_a).await;

    let mut names = Vec::new();
    for _ in 0..3 {
        names.push(summary(&next(&mut all).await.unwrap()).3);
    }
    assert_eq!(names, ["x", "y", "z"]);
    assert_quiet(&mut all).await;
}

#[tokio::test]
async fn deleted_carries_the_last_state_at_the_delete_revision() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    create(&s, "ns", "a", "1").await;
    let last = update(&s, "ns", "a", "2").await;
    let from = rv(&last);
    let outcome = s
        .delete(&cm_key("ns", "a"), DeleteOptions::default())
        .await
        .unwrap();
    assert!(matches!(outcome, keelson_api::DeleteOutcome::Deleted(_)));
    let del_rev = s.current_revision().await.unwrap();

    let mut w = s.watch(&cms(), None, from).await.unwrap();
    let ev = next(&mut w).await.unwrap();
    let mut expected = last.clone();
    expected["metadata"]["resourceVersion"] = json!(del_rev.to_string());
    assert_eq!(
        ev,
        ChangeEvent {
            revision: del_rev,
            event_type: EventType::Deleted,
            object: expected,
            prev_object: Some(last),
        }
    );
    // Re-created after the delete: Added again, with no previous object.
    let again = create(&s, "ns", "a", "3").await;
    let ev = next(&mut w).await.unwrap();
    assert_eq!(
        (ev.event_type, ev.object, ev.prev_object),
        (EventType::Added, again, None)
    );
}

#[tokio::test]
async fn many_concurrent_writers_are_seen_once_each_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let start = s.current_revision().await.unwrap();
    let mut w = s.watch(&cms(), None, start).await.unwrap();
    let expected = write_concurrently(&s, 8, 20).await;
    let seen = collect_until(&mut w, *expected.last().unwrap()).await;
    assert_eq!(seen, expected);
    assert_quiet(&mut w).await;
}

#[tokio::test]
async fn no_gap_or_duplicate_when_writes_race_the_catch_up() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    // Enough history that the watch is still replaying (several batches,
    // other resources interleaved) while the writers keep committing.
    let writers = {
        let s = s.clone();
        tokio::spawn(async move { write_concurrently(&s, 6, 80).await })
    };
    tokio::time::sleep(Duration::from_millis(30)).await;
    let after = s.current_revision().await.unwrap();
    let mut w = s.watch(&cms(), None, after).await.unwrap();
    let all = writers.await.unwrap();
    let expected: Vec<u64> = all.into_iter().filter(|r| *r > after).collect();
    assert!(
        !expected.is_empty(),
        "the writers finished before the watch"
    );
    let seen = collect_until(&mut w, *expected.last().unwrap()).await;
    assert_eq!(seen, expected);
    assert_quiet(&mut w).await;
}

/// `tasks` writers each creating and updating configmaps, interleaved with
/// secrets; returns the configmap revisions, sorted.
async fn write_concurrently(s: &LocalStore, tasks: usize, per_task: usize) -> Vec<u64> {
    let mut handles = Vec::new();
    for t in 0..tasks {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            let mut revs = Vec::new();
            let name = format!("cm-{t}");
            revs.push(rv(&create(&s, "ns", &name, "0").await));
            for i in 1..per_task {
                revs.push(rv(&update(&s, "ns", &name, &i.to_string()).await));
                let secret = ObjectKey::new(secrets(), "ns", &format!("s-{t}-{i}"));
                s.create(&secret, json!({"metadata": {}}), CreateOptions::default())
                    .await
                    .unwrap();
            }
            revs
        }));
    }
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.unwrap());
    }
    all.sort_unstable();
    all
}

async fn collect_until(w: &mut ChangeStream, last: u64) -> Vec<u64> {
    let mut seen = Vec::new();
    while seen.last().is_none_or(|r| *r < last) {
        seen.push(next(w).await.unwrap().revision);
    }
    seen
}

fn compacting_config() -> StoreConfig {
    StoreConfig {
        retention: Duration::ZERO,
        ..config()
    }
}

#[tokio::test]
async fn a_compacted_revision_is_410_expired() {
    let dir = tempfile::tempdir().unwrap();
    let s = LocalStore::open(dir.path(), compacting_config())
        .await
        .unwrap();
    create(&s, "ns", "a", "1").await;
    let b = create(&s, "ns", "b", "1").await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let compacted = s.compact_now().await.unwrap();
    assert_eq!(compacted, rv(&b));

    let err = s.watch(&cms(), None, 1).await.err().expect("410");
    assert_eq!((err.code, err.reason.as_str()), (410, "Expired"));
    assert_eq!(
        err.message,
        format!("too old resource version: 1 ({compacted})")
    );
    // The compacted revision itself is still watchable.
    let mut w = s.watch(&cms(), None, compacted).await.unwrap();
    let c = create(&s, "ns", "c", "1").await;
    assert_eq!(next(&mut w).await.unwrap().object, c);
}

#[tokio::test]
async fn compaction_overtaking_a_slow_reader_ends_the_stream_with_410() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let start = s.current_revision().await.unwrap();
    let a = create(&s, "ns", "a", "1").await;
    // More history than one read: the watch holds only the first part.
    let mut writes = Vec::new();
    for i in 0..300 {
        let s = s.clone();
        writes.push(tokio::spawn(async move {
            let key = ObjectKey::new(secrets(), "ns", &format!("s{i}"));
            s.create(&key, json!({"metadata": {}}), CreateOptions::default())
                .await
                .unwrap();
        }));
    }
    for w in writes {
        w.await.unwrap();
    }
    let mut w = s.watch(&cms(), None, start).await.unwrap();
    let current = s.current_revision().await.unwrap();
    assert_eq!(s.kv().compact(current).await.unwrap(), current);

    assert_eq!(next(&mut w).await.unwrap().object, a);
    let err = next(&mut w).await.unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (410, "Expired"));
    assert!(
        err.message.starts_with("too old resource version: ")
            && err.message.ends_with(&format!(" ({current})")),
        "{}",
        err.message
    );
    let end = tokio::time::timeout(Duration::from_secs(5), w.next()).await;
    assert!(matches!(end, Ok(None)), "the stream ends after the error");
}

#[tokio::test]
async fn an_open_watch_does_not_keep_a_dropped_store_alive() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let now = s.current_revision().await.unwrap();
    let mut w = s.watch(&cms(), None, now).await.unwrap();
    drop(s);
    let end = tokio::time::timeout(Duration::from_secs(5), w.next()).await;
    assert!(matches!(end, Ok(None)), "{end:?}");
    // The sled files are released: the store opens again.
    let s = open(dir.path()).await;
    assert_eq!(s.current_revision().await.unwrap(), now);
}

#[tokio::test]
async fn progress_tells_how_far_the_stream_has_read() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let start = s.current_revision().await.unwrap();
    let mut w = s.watch(&cms(), Some("a"), start).await.unwrap();
    let secret = s
        .create(
            &ObjectKey::new(secrets(), "a", "s"),
            json!({"metadata": {"name": "s"}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let ev = next_raw(&mut w).await.unwrap();
    assert_eq!(
        (ev.event_type, ev.revision, ev.object.clone()),
        (EventType::Bookmark, rv(&secret), Value::Null)
    );
    let quiet = tokio::time::timeout(Duration::from_millis(150), w.next()).await;
    assert!(quiet.is_err(), "one progress per advance: {quiet:?}");
    // A change of the watched resource is an event, not a progress.
    let z = create(&s, "a", "z", "1").await;
    let ev = next_raw(&mut w).await.unwrap();
    assert_eq!((ev.event_type, ev.object), (EventType::Added, z));
    let quiet = tokio::time::timeout(Duration::from_millis(150), w.next()).await;
    assert!(quiet.is_err(), "nothing after the event: {quiet:?}");
}
