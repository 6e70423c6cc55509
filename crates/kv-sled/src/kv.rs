//! [`SledKv`]: the [`RevisionedKv`] calls over [`Mvcc`]. Reads and writes
//! run on the caller's task (sled answers from memory; a write waits for
//! its group-committed flush); only opening and compaction, which scan,
//! go to the blocking pool.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use keelson_kv::{
    Compare, KeyRange, KeyValue, KvError, RangeRequest, RangeResponse, RevisionedKv, TxnOp,
    TxnRequest, TxnResponse, WatchStream,
};

use crate::engine::{prefix_end, Engine};
use crate::error::MvccError;
use crate::mvcc::{Expect, Mvcc, Versioned, WriteOutcome};
use crate::sled_engine::SledEngine;

/// The MVCC store on sled as a [`RevisionedKv`].
pub struct SledKv {
    mvcc: Arc<Mvcc>,
}

impl From<Versioned> for KeyValue {
    fn from(v: Versioned) -> Self {
        KeyValue {
            key: v.key,
            value: v.value,
            create_revision: v.create_revision,
            mod_revision: v.revision,
        }
    }
}

async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<T, MvccError> + Send + 'static,
) -> Result<T, KvError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| KvError::Backend(format!("{what} task failed: {e}")))?
        .map_err(KvError::from)
}

impl SledKv {
    /// Open (or create) the sled database in `dir`, recovering the counters.
    pub async fn open(dir: &Path, cache_capacity: u64) -> Result<SledKv, KvError> {
        let dir = dir.to_path_buf();
        let mvcc = blocking("open", move || {
            let engine: Arc<dyn Engine> = Arc::new(SledEngine::open(&dir, cache_capacity)?);
            Mvcc::open(engine)
        })
        .await?;
        Ok(SledKv::new(mvcc))
    }

    /// A store in a temporary directory, removed when dropped (tests).
    pub fn temporary() -> Result<SledKv, KvError> {
        let engine: Arc<dyn Engine> = Arc::new(SledEngine::temporary(8 << 20)?);
        Ok(SledKv::new(Mvcc::open(engine)?))
    }

    /// A store in memory ([`crate::memory_engine`]): sled's MVCC, watch
    /// and compaction semantics, nothing on disk, gone when dropped.
    pub fn in_memory() -> Result<SledKv, KvError> {
        let engine: Arc<dyn Engine> = Arc::new(crate::memory_engine::MemoryEngine::new());
        Ok(SledKv::new(Mvcc::open(engine)?))
    }

    /// The seam over an opened MVCC store.
    pub fn new(mvcc: Mvcc) -> SledKv {
        SledKv {
            mvcc: Arc::new(mvcc),
        }
    }

    /// The MVCC layer underneath (history and compaction by wall-clock time).
    pub fn mvcc(&self) -> &Mvcc {
        &self.mvcc
    }
}

fn kvs(items: Vec<Versioned>) -> Vec<KeyValue> {
    items.into_iter().map(KeyValue::from).collect()
}

#[async_trait]
impl RevisionedKv for SledKv {
    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, KvError> {
        let m = &self.mvcc;
        let (start, end) = match request.range {
            KeyRange::Key(key) => {
                // A point read, without a scan.
                let (item, revision) = match request.revision {
                    None => {
                        let rev = m.current_revision();
                        (m.get_unchecked(&key, rev)?, rev)
                    }
                    Some(rev) => (m.get_at(&key, rev)?, rev),
                };
                return Ok(RangeResponse {
                    kvs: item.map(KeyValue::from).into_iter().collect(),
                    revision,
                    more: false,
                });
            }
            KeyRange::Prefix(p) => {
                let end = prefix_end(&p);
                (p, end)
            }
            KeyRange::Between { start, end } => (start, end),
        };
        let (items, revision, more) =
            m.range(&start, end.as_deref(), request.revision, request.limit)?;
        Ok(RangeResponse {
            kvs: kvs(items),
            revision,
            more,
        })
    }

    async fn txn(&self, request: TxnRequest) -> Result<TxnResponse, KvError> {
        let expect = match request.compare {
            Compare::Always => Expect::Any,
            Compare::ModRevision(0) => Expect::Absent,
            Compare::ModRevision(r) => Expect::Revision(r),
        };
        let value = match &request.on_success {
            TxnOp::Put(v) => Some(v.as_slice()),
            TxnOp::Delete => None,
        };
        Ok(match self.mvcc.write(&request.key, value, expect).await? {
            WriteOutcome::Written { revision, prev } => TxnResponse::Succeeded {
                revision,
                prev_kv: prev.map(KeyValue::from),
            },
            WriteOutcome::Unchanged => TxnResponse::Succeeded {
                revision: self.mvcc.current_revision(),
                prev_kv: None,
            },
            WriteOutcome::Failed { current } => TxnResponse::Failed {
                current: current.map(KeyValue::from),
            },
        })
    }

    async fn watch(&self, prefix: Vec<u8>, start_revision: u64) -> Result<WatchStream, KvError> {
        crate::watch::watch(&self.mvcc, prefix, start_revision)
    }

    async fn compact(&self, revision: u64) -> Result<u64, KvError> {
        let mvcc = self.mvcc.clone();
        blocking("compaction", move || mvcc.compact_to(revision)).await
    }

    async fn revision_older_than(&self, age: Duration) -> Result<Option<u64>, KvError> {
        let mvcc = self.mvcc.clone();
        blocking("compaction", move || {
            mvcc.revision_older_than(age).map(Some)
        })
        .await
    }

    async fn current_revision(&self) -> Result<u64, KvError> {
        Ok(self.mvcc.current_revision())
    }

    async fn compacted_revision(&self) -> Result<u64, KvError> {
        Ok(self.mvcc.compacted_revision())
    }
}
