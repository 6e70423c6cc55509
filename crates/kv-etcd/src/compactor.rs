//! kube-apiserver's etcd compactor (`storage/etcd3/compact.go`): every
//! interval, compact to the revision seen one interval before. Replicas
//! take turns through the version of the unprefixed key `compact_rev_key`:
//! a compare-and-put on its version elects the one replica that compacts in
//! each interval, and the others learn the version to compare with next
//! time (the same key kube-apiserver uses, so the two coordinate).

use std::time::Duration;

use etcd_client::{Compare, CompareOp, Txn, TxnOp, TxnOpResponse};
use tokio::task::JoinHandle;

use crate::errors::Failure;
use crate::{to_i64, to_u64, EtcdKv};

/// kube's coordination key (outside any `--etcd-prefix`).
const COMPACT_REV_KEY: &str = "compact_rev_key";

/// The background compactor; stops when dropped (unless detached).
#[derive(Debug)]
pub struct Compactor {
    task: Option<JoinHandle<()>>,
}

impl Drop for Compactor {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl Compactor {
    /// Start compacting `kv`'s etcd every `interval` (kube's
    /// `--etcd-compaction-interval`; zero disables it and returns `None`).
    pub fn start(kv: EtcdKv, interval: Duration) -> Option<Compactor> {
        if interval.is_zero() {
            return None;
        }
        Some(Compactor {
            task: Some(tokio::spawn(run(kv, interval))),
        })
    }

    /// Let the compactor run for as long as the runtime does.
    pub fn detach(mut self) {
        self.task = None;
    }
}

async fn run(kv: EtcdKv, interval: Duration) {
    // (the key's version this replica expects, the revision to compact to)
    let mut version = 0i64;
    let mut revision = 0u64;
    loop {
        tokio::time::sleep(interval).await;
        match compact_once(&kv, version, revision).await {
            Ok((v, r)) => {
                version = v;
                revision = r;
            }
            Err(e) => tracing::warn!(error = %e, "etcd compaction failed"),
        }
    }
}

/// One round: claim the interval with a compare on the key's version; the
/// winner compacts to `revision` (the one seen last round). Returns the
/// version to expect next and the revision seen now.
async fn compact_once(
    kv: &EtcdKv,
    version: i64,
    revision: u64,
) -> Result<(i64, u64), keelson_kv::KvError> {
    let txn = Txn::new()
        .when([Compare::version(COMPACT_REV_KEY, CompareOp::Equal, version)])
        .and_then([TxnOp::put(COMPACT_REV_KEY, revision.to_string(), None)])
        .or_else([TxnOp::get(COMPACT_REV_KEY, None)]);
    let mut client = kv.client().kv_client();
    let resp = kv.timed(client.txn(txn)).await.map_err(Failure::into_kv)?;
    let now = resp.header().map(|h| to_u64(h.revision())).unwrap_or(0);
    if !resp.succeeded() {
        // Another replica compacted this round: follow its version.
        let seen = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.version()),
            _ => None,
        });
        return Ok((seen.unwrap_or(version), now));
    }
    let next = version + 1;
    if revision == 0 {
        return Ok((next, now));
    }
    match kv.timed(client.compact(to_i64(revision), None)).await {
        Ok(_) => {
            kv.saw_compacted(revision);
            tracing::debug!(revision, "compacted etcd");
            Ok((next, now))
        }
        Err(Failure::Compacted) => Ok((next, now)),
        Err(f) => Err(f.into_kv()),
    }
}
