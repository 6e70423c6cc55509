//! The conformance suite every [`RevisionedKv`] must pass (feature
//! `conformance`). Each test takes a [`KvFactory`] making a fresh store and
//! panics on a violation; run them from the backend's own `tests/`, one
//! `#[tokio::test]` each, or all at once with [`run_all`].
//!
//! The tests work under the prefix `conformance/` and count revisions from
//! the store's revision when they start, so a shared store (an etcd used
//! only for tests) works as well as an empty one; the compaction tests do
//! compact the whole store.

mod compaction;
mod reads;
mod txn;
mod watch;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use crate::{
    Compare, KeyValue, RangeRequest, RevisionedKv, TxnOp, TxnRequest, TxnResponse, WatchResponse,
    WatchStream,
};

pub use compaction::{compaction_keeps_reads_at_or_above, compaction_rejects_old_watches};
pub use reads::{future_revision_is_an_error, limits_report_more, range_reads_exact_history};
pub use txn::{compare_failures_write_nothing, delete_returns_the_previous_kv};
pub use watch::{
    progress_notifications_say_how_far_the_watch_has_read, watch_replays_history_with_prev_kvs,
};

/// Makes a fresh store for one test.
pub trait KvFactory {
    /// A new store (or a new handle on a shared one).
    fn fresh(&self) -> impl Future<Output = Arc<dyn RevisionedKv>>;
}

impl<F, Fut> KvFactory for F
where
    F: Fn() -> Fut,
    Fut: Future<Output = Arc<dyn RevisionedKv>>,
{
    fn fresh(&self) -> impl Future<Output = Arc<dyn RevisionedKv>> {
        self()
    }
}

/// Every test of the suite, one after the other, each on a fresh store.
pub async fn run_all(factory: &impl KvFactory) {
    range_reads_exact_history(factory).await;
    limits_report_more(factory).await;
    future_revision_is_an_error(factory).await;
    compare_failures_write_nothing(factory).await;
    delete_returns_the_previous_kv(factory).await;
    watch_replays_history_with_prev_kvs(factory).await;
    progress_notifications_say_how_far_the_watch_has_read(factory).await;
    compaction_keeps_reads_at_or_above(factory).await;
    compaction_rejects_old_watches(factory).await;
}

/// The suite's key prefix.
const PREFIX: &str = "conformance/";

/// `conformance/<name>` as bytes.
fn key(name: &str) -> Vec<u8> {
    format!("{PREFIX}{name}").into_bytes()
}

/// How long a watch may take to deliver what is expected.
const WAIT: Duration = Duration::from_secs(10);

async fn txn(kv: &dyn RevisionedKv, name: &str, compare: Compare, op: TxnOp) -> TxnResponse {
    kv.txn(TxnRequest {
        key: key(name),
        compare,
        on_success: op,
    })
    .await
    .expect("txn")
}

/// Put `value` with a compare; the write's revision.
async fn put(kv: &dyn RevisionedKv, name: &str, value: &str, compare: Compare) -> u64 {
    match txn(kv, name, compare, TxnOp::Put(value.as_bytes().to_vec())).await {
        TxnResponse::Succeeded { revision, .. } => revision,
        failed => panic!("put {name}={value} with {compare:?}: {failed:?}"),
    }
}

/// Delete with a compare; the delete's revision and the previous kv.
async fn delete(kv: &dyn RevisionedKv, name: &str, compare: Compare) -> (u64, Option<KeyValue>) {
    match txn(kv, name, compare, TxnOp::Delete).await {
        TxnResponse::Succeeded { revision, prev_kv } => (revision, prev_kv),
        failed => panic!("delete {name} with {compare:?}: {failed:?}"),
    }
}

/// The revisions of a scripted history, counted from the store's revision
/// before it.
struct History {
    /// `a` created = 1.
    r1: u64,
    /// `b` created = 1.
    r2: u64,
    /// `a` = 2.
    r3: u64,
    /// `b` deleted.
    r4: u64,
    /// `b` created again = 2.
    r5: u64,
}

/// r1: a=1, r2: b=1, r3: a=2, r4: delete b, r5: b=2 (each with a compare).
async fn history(kv: &dyn RevisionedKv) -> History {
    let base = kv.current_revision().await.expect("current revision");
    let r1 = put(kv, "a", "1", Compare::ModRevision(0)).await;
    assert_eq!(r1, base + 1, "a write takes the next revision");
    let r2 = put(kv, "b", "1", Compare::ModRevision(0)).await;
    let r3 = put(kv, "a", "2", Compare::ModRevision(r1)).await;
    let (r4, _) = delete(kv, "b", Compare::ModRevision(r2)).await;
    let r5 = put(kv, "b", "2", Compare::ModRevision(0)).await;
    assert_eq!(
        [r2, r3, r4, r5],
        [r1 + 1, r1 + 2, r1 + 3, r1 + 4],
        "every write takes the next revision"
    );
    History { r1, r2, r3, r4, r5 }
}

/// `(name, value, create_revision, mod_revision)` of each kv.
fn summary(kvs: &[KeyValue]) -> Vec<(String, String, u64, u64)> {
    kvs.iter()
        .map(|kv| {
            let key = String::from_utf8_lossy(&kv.key);
            (
                key.strip_prefix(PREFIX).unwrap_or(&key).to_string(),
                String::from_utf8_lossy(&kv.value).into_owned(),
                kv.create_revision,
                kv.mod_revision,
            )
        })
        .collect()
}

/// The suite's keys at `revision` (`None`: current).
async fn read_all(kv: &dyn RevisionedKv, revision: Option<u64>) -> Vec<(String, String, u64, u64)> {
    let mut request = RangeRequest::prefix(PREFIX);
    request.revision = revision;
    summary(&kv.range(request).await.expect("range").kvs)
}

fn row(name: &str, value: &str, create: u64, modified: u64) -> (String, String, u64, u64) {
    (name.to_string(), value.to_string(), create, modified)
}

/// The next watch item, progress notifications included.
async fn next_raw(w: &mut WatchStream) -> WatchResponse {
    tokio::time::timeout(WAIT, w.next())
        .await
        .expect("a watch item in time")
        .expect("the watch is still open")
        .expect("a watch item, not an error")
}

/// The next event, skipping progress notifications.
async fn next_event(w: &mut WatchStream) -> crate::Event {
    loop {
        if let WatchResponse::Event(ev) = next_raw(w).await {
            return ev;
        }
    }
}
