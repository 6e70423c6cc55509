//! The watch-cache service: server adapter over a `WatchCacheApi` and the
//! remote client over one or more replicas.

mod chunks;
mod convert;
mod shared;

pub use shared::{SharedWatches, SharingLimits};

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::future::{ready, select_ok};
use futures::stream::{BoxStream, StreamExt};
use keelson_api::{
    CacheEventStream, CacheList, CacheListRequest, CacheWatchRequest, WatchCacheApi,
};
use keelson_apimachinery::{ApiError, ApiResult};
use tonic::transport::Channel;
use tonic::{Code, Request, Response, Status, Streaming};

use crate::change_stream::stream_error;
use crate::channel::{lazy_channel, MAX_MESSAGE_SIZE};
use crate::convert::missing;
use crate::error::RpcError;
use crate::pb::common::{ReadyRequest, ReadyResponse};
use crate::pb::watch as pb;
use crate::pb::watch::watch_cache_client::WatchCacheClient;
use crate::pb::watch::watch_cache_server::{WatchCache, WatchCacheServer};
use crate::status::{from_grpc_status, to_grpc_status};
use chunks::{items_from_pb, ListChunks};
use convert::{
    event_from_pb, event_to_pb, list_request_from_pb, list_request_to_pb, watch_request_from_pb,
    watch_request_to_pb,
};

const SERVICE: &str = "watch cache";

fn status(e: ApiError) -> Status {
    to_grpc_status(&e)
}

/// gRPC server adapter: decodes requests, calls the local
/// [`WatchCacheApi`], streams its answers.
#[derive(Clone)]
pub struct WatchCacheGrpc {
    api: Arc<dyn WatchCacheApi>,
    draining: crate::Draining,
}

impl WatchCacheGrpc {
    /// Wrap a local watch cache.
    pub fn new(api: Arc<dyn WatchCacheApi>) -> Self {
        WatchCacheGrpc {
            api,
            draining: crate::Draining::never(),
        }
    }

    /// End open watches when `draining` fires (see
    /// [`serve_with_drain`](crate::serve_with_drain)); their clients resume
    /// on another replica.
    pub fn with_draining(mut self, draining: crate::Draining) -> Self {
        self.draining = draining;
        self
    }

    /// The tonic service, with Keelson's message size limits, gRPC server
    /// metrics and server spans.
    pub fn into_server(self) -> crate::Observed<WatchCacheServer<WatchCacheGrpc>> {
        crate::Observed::new(
            WatchCacheServer::new(self)
                .max_decoding_message_size(MAX_MESSAGE_SIZE)
                .max_encoding_message_size(MAX_MESSAGE_SIZE),
        )
    }

    /// Shorthand for `WatchCacheGrpc::new(api).into_server()`.
    pub fn server(
        api: Arc<dyn WatchCacheApi>,
    ) -> crate::Observed<WatchCacheServer<WatchCacheGrpc>> {
        Self::new(api).into_server()
    }
}

/// Server side: one message per event; an error item is sent as the call's
/// status and ends the stream.
fn events_to_pb(events: CacheEventStream) -> BoxStream<'static, Result<pb::WatchEvent, Status>> {
    events
        .scan(false, |ended, item| {
            if *ended {
                return ready(None);
            }
            *ended = item.is_err();
            ready(Some(item.map(|e| event_to_pb(&e)).map_err(status)))
        })
        .boxed()
}

/// Client side: the gRPC stream as a [`CacheEventStream`]; a failure is its
/// last item (`503` when the connection broke). Dropping it cancels the
/// call.
fn events_from_pb(service: &'static str, stream: Streaming<pb::WatchEvent>) -> CacheEventStream {
    crate::change_stream::decode_stream(service, stream, event_from_pb)
}

#[tonic::async_trait]
impl WatchCache for WatchCacheGrpc {
    type ListStream = BoxStream<'static, Result<pb::ListChunk, Status>>;

    async fn list(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<Self::ListStream>, Status> {
        let req = list_request_from_pb(SERVICE, req.into_inner()).map_err(status)?;
        let list = self.api.list(req).await.map_err(status)?;
        Ok(Response::new(ListChunks::new(list).boxed()))
    }

    type WatchStream = BoxStream<'static, Result<pb::WatchEvent, Status>>;

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let req = watch_request_from_pb(SERVICE, req.into_inner()).map_err(status)?;
        let events = self.api.watch(req).await.map_err(status)?;
        Ok(Response::new(crate::until_draining(
            &self.draining,
            events_to_pb(events),
        )))
    }

    async fn ready(&self, _req: Request<ReadyRequest>) -> Result<Response<ReadyResponse>, Status> {
        self.api.ready().await.map_err(status)?;
        Ok(Response::new(ReadyResponse {}))
    }
}

/// A [`WatchCacheApi`] served by one or more remote watch-cache replicas.
///
/// Calls go to the replicas in turn. A call that fails before any answer
/// because its replica cannot be reached moves on to the next replica (each
/// at most once per call); every other error, and any failure once a stream
/// has started, is the caller's.
#[derive(Debug)]
pub struct RemoteWatchCache {
    /// The current replicas; replaced as a whole when DNS answers change
    /// (see [`RemoteWatchCache::connect_resolving`]).
    replicas: std::sync::RwLock<Replicas>,
    next: AtomicUsize,
}

/// One generation of replicas: `(endpoint, client)` pairs.
type Replicas = Arc<Vec<(String, WatchCacheClient<crate::observe::TracedChannel>)>>;

use crate::channel::{resolve_all, RESOLVE_EVERY};

fn client_of(ch: Channel) -> WatchCacheClient<crate::observe::TracedChannel> {
    WatchCacheClient::new(crate::observe::Traced::new(ch))
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE)
}

impl RemoteWatchCache {
    /// A client for `endpoints` (`http://host:port` each), every one
    /// connected on first use and reconnected after the peer restarts.
    /// Needs a Tokio runtime and at least one endpoint.
    pub fn connect_lazy(endpoints: &[String]) -> Result<Self, RpcError> {
        if endpoints.is_empty() {
            return Err(RpcError::NoEndpoints { service: SERVICE });
        }
        let replicas = endpoints
            .iter()
            .map(|e| Ok((e.clone(), client_of(lazy_channel(e)?))))
            .collect::<Result<Vec<_>, RpcError>>()?;
        Ok(RemoteWatchCache {
            replicas: std::sync::RwLock::new(Arc::new(replicas)),
            next: AtomicUsize::new(0),
        })
    }

    /// A client over existing channels, one per replica (at least one).
    pub fn from_channels(channels: impl IntoIterator<Item = Channel>) -> Result<Self, RpcError> {
        let replicas: Vec<_> = channels
            .into_iter()
            .enumerate()
            .map(|(i, ch)| (format!("channel-{i}"), client_of(ch)))
            .collect();
        if replicas.is_empty() {
            return Err(RpcError::NoEndpoints { service: SERVICE });
        }
        Ok(RemoteWatchCache {
            replicas: std::sync::RwLock::new(Arc::new(replicas)),
            next: AtomicUsize::new(0),
        })
    }

    /// A client whose replicas are every address the endpoints' host names
    /// resolve to (`http://watch:7003` behind `docker compose --scale
    /// watch=3`, or a Kubernetes headless Service), asked again every
    /// [`RESOLVE_EVERY`]: replicas that appear are used, replicas that go
    /// are dropped, the others keep their connections. Endpoints given as
    /// IP addresses stay as they are. Until a name first resolves, it is
    /// used as given (calls to it fail over as for a replica that is down).
    pub fn connect_resolving(endpoints: &[String]) -> Result<Arc<Self>, RpcError> {
        let this = Arc::new(Self::connect_lazy(endpoints)?);
        let weak = Arc::downgrade(&this);
        let endpoints = endpoints.to_vec();
        tokio::spawn(async move {
            loop {
                let resolved = resolve_all(&endpoints).await;
                let Some(this) = weak.upgrade() else { return };
                if !resolved.is_empty() {
                    this.set_endpoints(&resolved);
                }
                drop(this);
                tokio::time::sleep(RESOLVE_EVERY).await;
            }
        });
        Ok(this)
    }

    /// Replace the replicas by `endpoints`, keeping the clients of those
    /// that stay.
    fn set_endpoints(&self, endpoints: &[String]) {
        let current = self.snapshot();
        if current.iter().map(|(e, _)| e).eq(endpoints.iter()) {
            return;
        }
        let mut next = Vec::with_capacity(endpoints.len());
        for e in endpoints {
            if let Some((_, c)) = current.iter().find(|(have, _)| have == e) {
                next.push((e.clone(), c.clone()));
            } else if let Ok(ch) = lazy_channel(e) {
                next.push((e.clone(), client_of(ch)));
            }
        }
        if next.is_empty() {
            return;
        }
        tracing::info!(replicas = ?endpoints, "watch cache replicas changed");
        *self.replicas.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
    }

    /// The current replicas.
    fn snapshot(&self) -> Replicas {
        Arc::clone(&self.replicas.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Start one call on the next replica in turn, failing over as
    /// [`try_replicas`] describes.
    async fn call<T, F, Fut>(&self, mut f: F) -> ApiResult<T>
    where
        F: FnMut(WatchCacheClient<crate::observe::TracedChannel>) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        let replicas = self.snapshot();
        try_replicas(replicas.len(), first, |i| f(replicas[i].1.clone()))
            .await
            .map_err(|s| from_grpc_status(SERVICE, &s))
    }
}

/// The peer could not be reached: a gRPC failure without a Kubernetes
/// `Status` in its details (which every answer of our servers carries).
/// The code does not matter: a connection that just died fails calls with
/// `Unavailable`, `Unknown`, `Cancelled` or `Internal` depending on when the
/// call met it.
fn peer_down(s: &Status) -> bool {
    s.details().is_empty() && s.code() != Code::Ok
}

/// Call replica `first % n`, then the following ones while the replica
/// called is down, each at most once; the answer is the first one that is
/// not [`peer_down`], or the failure of the last replica tried.
async fn try_replicas<T, F, Fut>(n: usize, first: usize, mut call: F) -> Result<T, Status>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, Status>>,
{
    let mut last = Status::unavailable("no replicas");
    for i in 0..n {
        let replica = (first % n + i) % n;
        match call(replica).await {
            Err(s) if peer_down(&s) => {
                tracing::debug!(replica, error = %s, "watch cache replica unavailable, trying the next");
                last = s;
            }
            answer => return answer,
        }
    }
    Err(last)
}

#[async_trait::async_trait]
impl WatchCacheApi for RemoteWatchCache {
    /// Errors before the first chunk (e.g. `410`, `504`) are returned here;
    /// a failure while items stream is the item stream's last item (`503`
    /// when the connection broke).
    async fn list(&self, req: CacheListRequest) -> ApiResult<CacheList> {
        let req = list_request_to_pb(&req);
        let mut stream = self
            .call(|mut c| {
                let req = req.clone();
                async move { c.list(req).await }
            })
            .await?
            .into_inner();
        let first = stream
            .message()
            .await
            .map_err(|s| stream_error(SERVICE, &s))?
            .ok_or_else(|| missing(SERVICE, "list chunk"))?;
        let meta = first
            .meta
            .ok_or_else(|| missing(SERVICE, "list metadata"))?;
        Ok(CacheList {
            resource_version: meta.resource_version,
            continue_after: meta.continue_after,
            remaining: meta.remaining,
            items: items_from_pb(SERVICE, first.items, stream),
        })
    }

    /// Errors before the stream starts (e.g. `410`) are returned here; a
    /// failure mid-stream is the stream's last item (`503` when the
    /// connection broke).
    async fn watch(&self, req: CacheWatchRequest) -> ApiResult<CacheEventStream> {
        let req = watch_request_to_pb(&req);
        let stream = self
            .call(|mut c| {
                let req = req.clone();
                async move { c.watch(req).await }
            })
            .await?
            .into_inner();
        Ok(events_from_pb(SERVICE, stream))
    }

    /// Ready when at least one replica answers `Ready`; otherwise the error
    /// of the last replica to fail.
    async fn ready(&self) -> ApiResult<()> {
        let replicas = self.snapshot();
        if replicas.is_empty() {
            return Err(ApiError::unavailable(format!("no {SERVICE} replicas")));
        }
        let calls = replicas.iter().map(|(_, c)| {
            let mut c = c.clone();
            Box::pin(async move { c.ready(ReadyRequest {}).await })
        });
        select_ok(calls)
            .await
            .map(|_| ())
            .map_err(|s| from_grpc_status(SERVICE, &s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn run<T>(
        n: usize,
        first: usize,
        answers: &[Result<T, Status>],
    ) -> (Result<T, Status>, Vec<usize>)
    where
        T: Clone,
    {
        let tried = Mutex::new(Vec::new());
        let out = futures::executor::block_on(try_replicas(n, first, |i| {
            let k = {
                let mut t = tried.lock().unwrap();
                t.push(i);
                t.len() - 1
            };
            let answer = answers[k].clone();
            async move { answer }
        }));
        (out, tried.into_inner().unwrap())
    }

    fn k8s(e: &ApiError) -> Status {
        to_grpc_status(e)
    }

    #[test]
    fn calls_start_at_the_replica_in_turn() {
        let (out, tried) = run(3, 4, &[Ok(1)]);
        assert_eq!(out.unwrap(), 1);
        assert_eq!(tried, [1]);
    }

    #[test]
    fn a_down_replica_fails_over_to_the_next_each_once() {
        let down = Status::unavailable("tcp connect error");
        let (out, tried) = run(
            3,
            2,
            &[Err(down.clone()), Err(Status::unknown("reset")), Ok(7)],
        );
        assert_eq!(out.unwrap(), 7);
        assert_eq!(tried, [2, 0, 1]);

        let (out, tried) = run::<u8>(
            3,
            0,
            &[
                Err(down.clone()),
                Err(down.clone()),
                Err(Status::unavailable("last")),
            ],
        );
        let e = from_grpc_status(SERVICE, &out.unwrap_err());
        assert_eq!(
            (e.code, e.message.as_str()),
            (503, "the watch cache service is unavailable: last")
        );
        assert_eq!(tried, [0, 1, 2]);
    }

    #[test]
    fn kubernetes_errors_are_never_retried() {
        for err in [
            ApiError::new(410, "Expired", "too old resource version: 1 (5)"),
            ApiError::new(504, "Timeout", "Too large resource version"),
            ApiError::bad_request("bad selector"),
            ApiError::unavailable("cache not ready"),
        ] {
            let (out, tried) = run::<u8>(2, 0, &[Err(k8s(&err))]);
            assert_eq!(from_grpc_status(SERVICE, &out.unwrap_err()), err);
            assert_eq!(tried, [0]);
        }
    }

    #[test]
    fn any_failure_without_a_kubernetes_status_tries_the_next_replica() {
        // A dying connection fails calls with whichever code it meets.
        for s in [
            Status::internal("h2 protocol error"),
            Status::cancelled("operation was canceled"),
            Status::unavailable("connection refused"),
            Status::unknown("missing grpc-status trailer"),
        ] {
            let (out, tried) = run::<u8>(2, 0, &[Err(s.clone()), Ok(7)]);
            assert_eq!(out.unwrap(), 7, "{s:?}");
            assert_eq!(tried, [0, 1]);
        }
    }

    #[tokio::test]
    async fn connect_lazy_needs_an_endpoint() {
        let err = RemoteWatchCache::connect_lazy(&[]).unwrap_err();
        assert!(matches!(err, RpcError::NoEndpoints { .. }), "{err}");
        assert_eq!(err.to_string(), "no watch cache endpoints given");
        assert!(RemoteWatchCache::connect_lazy(&["not a uri".to_string()]).is_err());
        let ok = RemoteWatchCache::connect_lazy(&[
            "http://127.0.0.1:1".to_string(),
            "http://127.0.0.1:2".to_string(),
        ])
        .unwrap();
        assert_eq!(ok.snapshot().len(), 2);
    }

    #[tokio::test]
    async fn names_resolve_to_every_address_and_replicas_follow() {
        let got = resolve_all(&[
            "http://localhost:7003".to_string(),
            "http://127.0.0.1:9".to_string(),
            "http://no-such-host.invalid:1".to_string(),
        ])
        .await;
        assert!(
            got.contains(&"http://127.0.0.1:7003".to_string()),
            "{got:?}"
        );
        assert!(got.contains(&"http://127.0.0.1:9".to_string()), "{got:?}");
        assert!(
            got.contains(&"http://no-such-host.invalid:1".to_string()),
            "{got:?}"
        );
        let remote = RemoteWatchCache::connect_lazy(&["http://127.0.0.1:1".to_string()]).unwrap();
        let kept = remote.snapshot()[0].1.clone();
        remote.set_endpoints(&[
            "http://127.0.0.1:1".to_string(),
            "http://127.0.0.1:2".to_string(),
        ]);
        let now = remote.snapshot();
        assert_eq!(now.len(), 2);
        assert_eq!(now[0].0, "http://127.0.0.1:1");
        // The replica that stays keeps its client (and connection).
        assert_eq!(format!("{:?}", now[0].1), format!("{kept:?}"));
        remote.set_endpoints(&["http://127.0.0.1:2".to_string()]);
        assert_eq!(remote.snapshot().len(), 1);
    }
}
