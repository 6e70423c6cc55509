//! The seam's watch over one etcd watch: `prev_kv`, progress notifications
//! (etcd's periodic `progress_notify`; on servers that answer progress
//! requests safely, also a request after every read of the current revision
//! and whenever the watch has been idle for the progress interval),
//! compaction as [`KvError::Compacted`].

use futures::StreamExt;
use keelson_kv::{Event, EventKind, KvError, WatchResponse, WatchStream};
use tokio::sync::mpsc;

use crate::errors::{classify, Failure};
use crate::{prefix_end, to_i64, to_u64, EtcdKv};

/// Items buffered between etcd and a slow reader.
const BUFFER: usize = 256;

/// Open the watch: the call returns once etcd has created it (or refused a
/// compacted start revision).
pub(crate) async fn open(kv: EtcdKv, prefix: Vec<u8>, start: u64) -> Result<WatchStream, KvError> {
    let key = kv.full_key(&prefix);
    let end = prefix_end(&key);
    let options = etcd_client::WatchOptions::new()
        .with_range(end)
        .with_start_revision(to_i64(start))
        .with_prev_key()
        .with_progress_notify();
    // The preferred member first; one that cannot be reached, the next.
    let order: Vec<usize> = kv.member_order().collect();
    let mut opened = None;
    let mut last_error = KvError::Unavailable("etcd has no members".into());
    for at in order {
        match open_on(&kv, at, &key, &options).await {
            Ok(o) => {
                kv.prefer(at);
                opened = Some(o);
                break;
            }
            Err(e @ KvError::Unavailable(_)) => last_error = e,
            Err(e) => return Err(e),
        }
    }
    let Some((sender, responses, first)) = opened else {
        return Err(last_error);
    };
    if first.compact_revision() > 0 {
        let compacted = to_u64(first.compact_revision());
        kv.saw_compacted(compacted);
        return Err(KvError::Compacted {
            requested: start,
            compacted,
        });
    }
    if first.canceled() {
        return Err(KvError::Backend(format!(
            "etcd refused the watch: {}",
            first.cancel_reason()
        )));
    }
    let request_progress = kv.progress_requests().await;
    let (tx, rx) = mpsc::channel(BUFFER);
    tokio::spawn(pump(kv, sender, responses, tx, start, request_progress));
    Ok(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
    .boxed())
}

/// The watch created on member `at`, with etcd's first answer.
async fn open_on(
    kv: &EtcdKv,
    at: usize,
    key: &[u8],
    options: &etcd_client::WatchOptions,
) -> Result<
    (
        etcd_client::WatchRequestSender,
        etcd_client::WatchResponseStream,
        etcd_client::WatchResponse,
    ),
    KvError,
> {
    let mut client = kv.watch_client(at);
    let stream = kv
        .timed(client.watch(key.to_vec(), Some(options.clone())))
        .await
        .map_err(Failure::into_kv)?;
    let (sender, mut responses) = stream.split();
    // The first answer says whether the watch was created.
    let first = match tokio::time::timeout(kv.inner.request_timeout, responses.next()).await {
        Err(_) => {
            return Err(KvError::Unavailable(
                "etcd did not create the watch in time".into(),
            ))
        }
        Ok(None) => return Err(KvError::Unavailable("etcd closed the watch".into())),
        Ok(Some(Err(e))) => return Err(classify(e).into_kv()),
        Ok(Some(Ok(r))) => r,
    };
    Ok((sender, responses, first))
}

/// Forward etcd's responses until the reader goes away or the watch fails.
async fn pump(
    kv: EtcdKv,
    mut sender: etcd_client::WatchRequestSender,
    mut responses: etcd_client::WatchResponseStream,
    tx: mpsc::Sender<Result<WatchResponse, KvError>>,
    start: u64,
    request_progress: bool,
) {
    let mut next_needed = start;
    let period = kv.inner.progress_interval;
    let mut idle = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    idle.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut wanted = kv.inner.progress_wanted.subscribe();
    loop {
        let ask = tokio::select! {
            _ = tx.closed() => return,
            _ = idle.tick(), if request_progress => true,
            r = wanted.changed(), if request_progress => r.is_ok(),
            m = responses.next() => {
                if !forward(&kv, m, &tx, &mut next_needed, &mut idle).await {
                    return;
                }
                false
            }
        };
        if ask {
            if let Err(e) = sender.request_progress().await {
                let _ = tx.send(Err(classify(e).into_kv())).await;
                return;
            }
        }
    }
}

/// Forward one etcd response; false when the watch is over.
async fn forward(
    kv: &EtcdKv,
    message: Option<Result<etcd_client::WatchResponse, etcd_client::Error>>,
    tx: &mpsc::Sender<Result<WatchResponse, KvError>>,
    next_needed: &mut u64,
    idle: &mut tokio::time::Interval,
) -> bool {
    let response = match message {
        None => {
            let _ = tx
                .send(Err(KvError::Unavailable("etcd closed the watch".into())))
                .await;
            return false;
        }
        Some(Err(e)) => {
            let _ = tx.send(Err(classify(e).into_kv())).await;
            return false;
        }
        Some(Ok(r)) => r,
    };
    if response.compact_revision() > 0 {
        let compacted = to_u64(response.compact_revision());
        kv.saw_compacted(compacted);
        let _ = tx
            .send(Err(KvError::Compacted {
                requested: *next_needed,
                compacted,
            }))
            .await;
        return false;
    }
    if response.canceled() {
        let _ = tx
            .send(Err(KvError::Unavailable(format!(
                "etcd canceled the watch: {}",
                response.cancel_reason()
            ))))
            .await;
        return false;
    }
    if response.created() {
        return true;
    }
    if response.events().is_empty() {
        // A progress notification: everything up to the header's revision
        // has been sent.
        let revision = response.header().map(|h| to_u64(h.revision())).unwrap_or(0);
        return revision == 0
            || tx
                .send(Ok(WatchResponse::Progress { revision }))
                .await
                .is_ok();
    }
    idle.reset();
    for ev in response.events() {
        let Some(item) = event(kv, ev) else { continue };
        *next_needed = item.kv.mod_revision + 1;
        if tx.send(Ok(WatchResponse::Event(item))).await.is_err() {
            return false;
        }
    }
    true
}

fn event(kv: &EtcdKv, ev: &etcd_client::Event) -> Option<Event> {
    let current = ev.kv()?;
    let kind = match ev.event_type() {
        etcd_client::EventType::Put => EventKind::Put,
        etcd_client::EventType::Delete => EventKind::Delete,
    };
    Some(Event {
        kind,
        kv: kv.kv(current),
        prev_kv: ev.prev_kv().map(|p| kv.kv(p)),
    })
}
