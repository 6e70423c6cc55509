//! [`EtcdKv`]: keelson-kv's [`RevisionedKv`] over etcd's v3 API (the
//! `etcd-client` crate). Every seam call is one etcd request, as the seam
//! was cut for: a key's mod revision is the object's `resourceVersion`,
//! writes are one-compare transactions on the mod revision (0 = absent),
//! reads are ranges at a revision, watches carry `prev_kv` and progress
//! notifications, and compaction is etcd's own.
//!
//! Every key lives under a configurable prefix (`--etcd-prefix`, kube's
//! default `/registry`): the seam's key `configmaps/default/x` is etcd's
//! `/registry/configmaps/default/x`. [`Compactor`] is kube-apiserver's
//! compactor (one replica at a time through `compact_rev_key`).
//!
//! Several endpoints: each member gets its own connection and calls go to
//! one preferred member; when it cannot be reached the call moves on to the
//! next (clientv3's failover: reads on any unavailability, writes only when
//! the request was never sent), which then stays preferred.
//!
//! Unreachable etcd: every call is bounded by the request timeout and fails
//! with [`KvError::Unavailable`].
#![forbid(unsafe_code)]

mod compactor;
mod config;
mod errors;
mod watch;

#[cfg(feature = "testing")]
pub mod testing;

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use etcd_client::{
    Client, CompareOp, DeleteOptions, GetOptions, KvClient, PutOptions, Txn, TxnOp as EtcdTxnOp,
    TxnOpResponse, WatchClient,
};
use keelson_kv::{
    Compare, KeyRange, KeyValue, KvError, RangeRequest, RangeResponse, RevisionedKv, TxnOp,
    TxnRequest, TxnResponse, WatchStream,
};
use tokio::sync::OnceCell;

pub use compactor::Compactor;
pub use config::{EtcdConfig, EtcdError, DEFAULT_PREFIX};
use errors::{classify, Failure};

/// The largest answer accepted from etcd (kube's `MaxCallRecvMsgSize`).
const MAX_MESSAGE: usize = i32::MAX as usize;

/// A [`RevisionedKv`] over an etcd cluster. Cheap to clone.
#[derive(Clone)]
pub struct EtcdKv {
    inner: Arc<Inner>,
}

struct Inner {
    /// A client balanced over every endpoint (maintenance, the compactor).
    client: Client,
    /// One connection per member, in `--etcd-servers` order.
    members: Vec<Member>,
    /// The member calls go to first.
    preferred: AtomicUsize,
    /// The key prefix with its trailing `/` (empty for none).
    prefix: Vec<u8>,
    request_timeout: Duration,
    progress_interval: Duration,
    /// A lower bound of etcd's compacted revision (what this process has
    /// compacted or seen).
    compacted: AtomicU64,
    /// Whether the server answers progress requests only once its watchers
    /// are in sync (etcd ≥ 3.4.31, 3.5.13, 3.6), as kube checks before using
    /// them.
    progress_requests: OnceCell<bool>,
    /// Bumped after each current-revision read: open watches then ask etcd
    /// for progress at once (kube's watch cache requests progress when a
    /// consistent read waits for it; here the read of the current revision
    /// that precedes such a wait is the signal).
    progress_wanted: tokio::sync::watch::Sender<u64>,
}

/// One member's KV and Watch clients, which accept answers of any size (a
/// large list; kube's etcd client allows 2 GiB).
struct Member {
    endpoint: String,
    kv: KvClient,
    watch: WatchClient,
}

/// Whether a failed call surely never reached etcd (so a write may be sent
/// to another member).
fn never_sent(e: &etcd_client::Error) -> bool {
    let msg = e.to_string().to_ascii_lowercase();
    [
        "tcp connect error",
        "connection refused",
        "error trying to connect",
        "dns error",
    ]
    .iter()
    .any(|m| msg.contains(m))
}

impl std::fmt::Debug for EtcdKv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdKv")
            .field("prefix", &String::from_utf8_lossy(&self.inner.prefix))
            .finish_non_exhaustive()
    }
}

/// etcd's range end for "every key starting with `prefix`"
/// (clientv3's `GetPrefixRangeEnd`): the prefix with its last byte below
/// 0xff incremented, or `\0` (to the end of the keyspace).
pub(crate) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

fn to_i64(revision: u64) -> i64 {
    i64::try_from(revision).unwrap_or(i64::MAX)
}

fn to_u64(revision: i64) -> u64 {
    u64::try_from(revision).unwrap_or(0)
}

impl EtcdKv {
    /// Connect to the cluster of `config` (lazily: an unreachable etcd makes
    /// the calls fail, not the connect).
    pub async fn connect(config: EtcdConfig) -> Result<EtcdKv, EtcdError> {
        let options = config.connect_options()?;
        let client = Client::connect(&config.endpoints, Some(options.clone())).await?;
        let mut members = Vec::new();
        for endpoint in config.endpoints.iter().filter(|e| !e.trim().is_empty()) {
            // One endpoint: connected lazily, so a member that is down now
            // does not fail the start.
            let one = Client::connect([endpoint.trim()], Some(options.clone())).await?;
            members.push(Member {
                endpoint: endpoint.trim().to_string(),
                kv: one.kv_client().max_decoding_message_size(MAX_MESSAGE),
                watch: one.watch_client().max_decoding_message_size(MAX_MESSAGE),
            });
        }
        Ok(EtcdKv {
            inner: Arc::new(Inner {
                members,
                preferred: AtomicUsize::new(0),
                client,
                prefix: config::normalize_prefix(&config.prefix).into_bytes(),
                request_timeout: config.request_timeout,
                progress_interval: config.progress_interval,
                compacted: AtomicU64::new(0),
                progress_requests: match config.progress_requests {
                    Some(forced) => OnceCell::new_with(Some(forced)),
                    None => OnceCell::new(),
                },
                progress_wanted: tokio::sync::watch::Sender::new(0),
            }),
        })
    }

    /// The etcd client (shared; for the compactor and tools).
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The prefix every key is stored under, with its trailing `/`.
    pub fn prefix(&self) -> &[u8] {
        &self.inner.prefix
    }

    /// The request timeout every call is bounded by.
    pub fn request_timeout(&self) -> Duration {
        self.inner.request_timeout
    }

    fn full_key(&self, key: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.inner.prefix.len() + key.len());
        k.extend_from_slice(&self.inner.prefix);
        k.extend_from_slice(key);
        k
    }

    fn strip(&self, key: &[u8]) -> Vec<u8> {
        key.strip_prefix(self.inner.prefix.as_slice())
            .unwrap_or(key)
            .to_vec()
    }

    fn kv(&self, kv: &etcd_client::KeyValue) -> KeyValue {
        KeyValue {
            key: self.strip(kv.key()),
            value: kv.value().to_vec(),
            create_revision: to_u64(kv.create_revision()),
            mod_revision: to_u64(kv.mod_revision()),
        }
    }

    /// The etcd key and range end of a seam range (never leaving the prefix).
    fn bounds(&self, range: &KeyRange) -> (Vec<u8>, Option<Vec<u8>>) {
        match range {
            KeyRange::Key(k) => (self.full_key(k), None),
            KeyRange::Prefix(p) => {
                let start = self.full_key(p);
                let end = prefix_end(&start);
                (start, Some(end))
            }
            KeyRange::Between { start, end } => {
                let end = match end {
                    Some(e) => self.full_key(e),
                    None if self.inner.prefix.is_empty() => vec![0],
                    None => prefix_end(&self.inner.prefix),
                };
                (self.full_key(start), Some(end))
            }
        }
    }

    /// The members in the order a call tries them: the preferred one first.
    pub(crate) fn member_order(&self) -> impl Iterator<Item = usize> + '_ {
        let n = self.inner.members.len();
        let first = self.inner.preferred.load(Ordering::Relaxed);
        (0..n).map(move |i| (first + i) % n)
    }

    /// Member `at`'s watch client.
    pub(crate) fn watch_client(&self, at: usize) -> WatchClient {
        self.inner.members[at].watch.clone()
    }

    /// Prefer member `at` from now on (it answered when another did not).
    pub(crate) fn prefer(&self, at: usize) {
        if self.inner.preferred.swap(at, Ordering::Relaxed) != at {
            tracing::info!(endpoint = %self.inner.members[at].endpoint, "etcd: calls move to another member");
        }
    }

    /// Run `call` on the preferred member within the request timeout; when
    /// that member cannot be reached, on the next ones. A write
    /// (`write = true`) moves on only when the request was never sent.
    async fn on_member<T, F, Fut>(&self, write: bool, mut call: F) -> Result<T, Failure>
    where
        F: FnMut(KvClient) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let deadline = tokio::time::Instant::now() + self.inner.request_timeout;
        let order: Vec<usize> = self.member_order().collect();
        let last = order.len().saturating_sub(1);
        for (i, at) in order.into_iter().enumerate() {
            let client = self.inner.members[at].kv.clone();
            let result = match tokio::time::timeout_at(deadline, call(client)).await {
                Ok(r) => r,
                Err(_) => break,
            };
            match result {
                Ok(v) => {
                    if i > 0 {
                        self.prefer(at);
                    }
                    return Ok(v);
                }
                Err(e) => {
                    let sent = !never_sent(&e);
                    let failure = classify(e);
                    let unavailable = matches!(failure, Failure::Other(KvError::Unavailable(_)));
                    if i == last || !unavailable || (write && sent) {
                        return Err(failure);
                    }
                    tracing::debug!(endpoint = %self.inner.members[at].endpoint, "etcd member unreachable; trying the next");
                }
            }
        }
        Err(Failure::Other(KvError::Unavailable(format!(
            "etcd did not answer within {:?}",
            self.inner.request_timeout
        ))))
    }

    /// Run one etcd call within the request timeout.
    async fn timed<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
    ) -> Result<T, Failure> {
        match tokio::time::timeout(self.inner.request_timeout, call).await {
            Ok(r) => r.map_err(classify),
            Err(_) => Err(Failure::Other(KvError::Unavailable(format!(
                "etcd did not answer within {:?}",
                self.inner.request_timeout
            )))),
        }
    }

    /// A one-key count read at `revision` (0: current): the header revision,
    /// or why it failed.
    async fn probe(&self, revision: u64) -> Result<u64, Failure> {
        let mut opts = GetOptions::new().with_count_only();
        if revision > 0 {
            opts = opts.with_revision(to_i64(revision));
        }
        let key = self.inner.prefix.clone();
        let resp = self
            .on_member(false, |mut kv| {
                let (key, opts) = (key.clone(), opts.clone());
                async move { kv.get(key, Some(opts)).await }
            })
            .await?;
        Ok(resp.header().map(|h| to_u64(h.revision())).unwrap_or(0))
    }

    async fn compacted_error(&self, requested: u64) -> KvError {
        match self.compacted_revision().await {
            Ok(compacted) => KvError::Compacted {
                requested,
                compacted,
            },
            Err(e) => e,
        }
    }

    async fn future_error(&self, requested: u64) -> KvError {
        match self.current_revision().await {
            Ok(current) => KvError::FutureRevision { requested, current },
            Err(e) => e,
        }
    }

    /// Record a compacted revision seen (by this process or from etcd).
    fn saw_compacted(&self, revision: u64) {
        self.inner.compacted.fetch_max(revision, Ordering::Relaxed);
    }

    /// Whether progress may be requested on demand (decided once, from the
    /// server's version).
    async fn progress_requests(&self) -> bool {
        let decided = self
            .inner
            .progress_requests
            .get_or_try_init(|| async {
                let mut m = self.inner.client.maintenance_client();
                let status = self.timed(m.status()).await?;
                Ok::<bool, Failure>(config::safe_progress_requests(status.version()))
            })
            .await;
        decided.copied().unwrap_or(false)
    }
}

#[async_trait]
impl RevisionedKv for EtcdKv {
    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, KvError> {
        let (key, end) = self.bounds(&request.range);
        let mut opts = GetOptions::new();
        if let Some(end) = end {
            opts = opts.with_range(end);
        }
        let asked = request.revision.filter(|r| *r > 0);
        if let Some(r) = asked {
            opts = opts.with_revision(to_i64(r));
        }
        if request.limit > 0 {
            opts = opts.with_limit(i64::try_from(request.limit).unwrap_or(i64::MAX));
        }
        let read = self
            .on_member(false, |mut kv| {
                let (key, opts) = (key.clone(), opts.clone());
                async move { kv.get(key, Some(opts)).await }
            })
            .await;
        match read {
            Ok(resp) => Ok(RangeResponse {
                kvs: resp.kvs().iter().map(|kv| self.kv(kv)).collect(),
                revision: asked
                    .unwrap_or_else(|| resp.header().map(|h| to_u64(h.revision())).unwrap_or(0)),
                more: resp.more(),
            }),
            Err(Failure::Compacted) => Err(self.compacted_error(asked.unwrap_or(0)).await),
            Err(Failure::Future) => Err(self.future_error(asked.unwrap_or(0)).await),
            Err(Failure::Other(e)) => Err(e),
        }
    }

    async fn txn(&self, request: TxnRequest) -> Result<TxnResponse, KvError> {
        let key = self.full_key(&request.key);
        let mut txn = Txn::new();
        if let Compare::ModRevision(r) = request.compare {
            txn = txn.when([etcd_client::Compare::mod_revision(
                key.clone(),
                CompareOp::Equal,
                to_i64(r),
            )]);
        }
        // A create (compare on mod revision 0) has no previous value to ask
        // for; etcd would look for one all the same.
        let creates = matches!(request.compare, Compare::ModRevision(0));
        let op = match request.on_success {
            TxnOp::Put(value) if creates => EtcdTxnOp::put(key.clone(), value, None),
            TxnOp::Put(value) => {
                EtcdTxnOp::put(key.clone(), value, Some(PutOptions::new().with_prev_key()))
            }
            TxnOp::Delete => {
                EtcdTxnOp::delete(key.clone(), Some(DeleteOptions::new().with_prev_key()))
            }
        };
        let txn = txn.and_then([op]).or_else([EtcdTxnOp::get(key, None)]);
        let resp = self
            .on_member(true, |mut kv| {
                let txn = txn.clone();
                async move { kv.txn(txn).await }
            })
            .await
            .map_err(Failure::into_kv)?;
        let revision = resp.header().map(|h| to_u64(h.revision())).unwrap_or(0);
        let first = resp.op_responses().into_iter().next();
        if resp.succeeded() {
            let prev_kv = match first {
                Some(TxnOpResponse::Put(p)) => p.prev_key().map(|kv| self.kv(kv)),
                Some(TxnOpResponse::Delete(d)) => d.prev_kvs().first().map(|kv| self.kv(kv)),
                _ => None,
            };
            Ok(TxnResponse::Succeeded { revision, prev_kv })
        } else {
            let current = match first {
                Some(TxnOpResponse::Get(g)) => g.kvs().first().map(|kv| self.kv(kv)),
                _ => None,
            };
            Ok(TxnResponse::Failed { current })
        }
    }

    async fn watch(&self, prefix: Vec<u8>, start_revision: u64) -> Result<WatchStream, KvError> {
        let compacted = self.compacted_revision().await?;
        if start_revision < compacted {
            return Err(KvError::Compacted {
                requested: start_revision,
                compacted,
            });
        }
        watch::open(self.clone(), prefix, start_revision.max(1)).await
    }

    async fn compact(&self, revision: u64) -> Result<u64, KvError> {
        let current = self.current_revision().await?;
        let compacted = self.compacted_revision().await?;
        let target = revision.min(current);
        if target <= compacted {
            return Ok(compacted);
        }
        let compact = self
            .on_member(true, |mut kv| async move {
                kv.compact(to_i64(target), None).await
            })
            .await;
        match compact {
            Ok(_) => {
                self.saw_compacted(target);
                Ok(target)
            }
            // Another replica compacted further meanwhile.
            Err(Failure::Compacted) => self.compacted_revision().await,
            Err(f) => Err(f.into_kv()),
        }
    }

    async fn current_revision(&self) -> Result<u64, KvError> {
        let revision = self.probe(0).await.map_err(Failure::into_kv)?;
        // A reader may now wait for the watches to reach `revision`.
        self.inner
            .progress_wanted
            .send_modify(|n| *n = n.wrapping_add(1));
        Ok(revision)
    }

    /// etcd does not report its compacted revision: it is the lowest
    /// revision a read still succeeds at. Confirmed with one read at the
    /// known lower bound; when another replica compacted since, found by
    /// bisection over reads (a few dozen cheap count-only reads).
    async fn compacted_revision(&self) -> Result<u64, KvError> {
        let known = self.inner.compacted.load(Ordering::Relaxed);
        let current = match self.probe(known.max(1)).await {
            Ok(_) => return Ok(known),
            Err(Failure::Compacted) => self.current_revision().await?,
            // Nothing written yet beyond the bound.
            Err(Failure::Future) => return Ok(known),
            Err(Failure::Other(e)) => return Err(e),
        };
        let (mut lo, mut hi) = (known.max(1) + 1, current.max(known.max(1) + 1));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.probe(mid).await {
                Ok(_) => hi = mid,
                Err(Failure::Compacted) => lo = mid + 1,
                Err(Failure::Future) => hi = mid,
                Err(Failure::Other(e)) => return Err(e),
            }
        }
        self.saw_compacted(lo);
        Ok(lo)
    }
}
