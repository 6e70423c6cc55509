//! The `keelson-kv` conformance suite against [`SledKv`] on the in-memory
//! engine (`--storage-backend memory`, the test server).
//!
//! The memory backend claims sled's semantics exactly because it is the
//! same MVCC layer over another [`keelson_kv_sled::engine::Engine`]; this
//! suite is what holds it to that claim, the same cases
//! `tests/conformance.rs` runs on sled and the etcd crate runs on etcd.

use std::sync::Arc;

use keelson_kv::conformance;
use keelson_kv::RevisionedKv;
use keelson_kv_sled::SledKv;

async fn fresh() -> Arc<dyn RevisionedKv> {
    Arc::new(SledKv::in_memory().expect("an in-memory store"))
}

macro_rules! conformance_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                conformance::$name(&fresh).await;
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

#[tokio::test]
async fn run_all_passes() {
    conformance::run_all(&fresh).await;
}
