//! Client channels and the limits shared by clients and servers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::{BodyExt, Full};
use tonic::body::Body;
use tonic::transport::{Channel, Endpoint};
use tower_service::Service;

use crate::error::RpcError;

/// Maximum gRPC message size, both directions (tonic's default is 4 MiB;
/// request bodies may be 3 MiB plus encoding overhead).
pub const MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// How long a client waits for a TCP connection before reporting the peer
/// unavailable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a call may wait for its answer (the response headers of a
/// streaming call) before it fails as unavailable: a peer cut off without
/// a reset (a dropped network) answers kube's `503` in bounded time, as
/// kube-apiserver's request timeout bounds its calls. Streams, once
/// answered, are not limited.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// Largest header block a client accepts. Errors travel in the
/// `grpc-status-details-bin` trailer, and a `422` with many causes can pass
/// hyper's 16 KiB default.
const MAX_HEADER_LIST_SIZE: u32 = 4 * 1024 * 1024;

/// A lazily connected channel to `endpoint` (`http://host:port`).
///
/// Nothing is dialled until the first call, and the channel reconnects on
/// its own after the peer restarts, so a service may start before its
/// dependency. Must be called inside a Tokio runtime.
pub fn lazy_channel(endpoint: &str) -> Result<Channel, RpcError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(RpcError::NoRuntime);
    }
    Ok(endpoint_of(endpoint)?.connect_lazy())
}

/// The endpoint settings every client shares.
fn endpoint_of(endpoint: &str) -> Result<Endpoint, RpcError> {
    let ep = Endpoint::from_shared(endpoint.to_string()).map_err(|source| {
        RpcError::InvalidEndpoint {
            endpoint: endpoint.to_string(),
            source,
        }
    })?;
    Ok(ep
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(CALL_TIMEOUT)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(10))
        .http2_max_header_list_size(MAX_HEADER_LIST_SIZE))
}

/// How often a resolving client asks DNS again.
pub const RESOLVE_EVERY: Duration = Duration::from_secs(5);

/// How long a replica that refused a connection is passed over, at first;
/// each further refusal doubles it, up to [`DOWN_AT_MOST`].
const DOWN_AT_FIRST: Duration = Duration::from_millis(500);

/// The longest a refusing replica is passed over before it is tried again.
const DOWN_AT_MOST: Duration = Duration::from_secs(8);

/// A channel over every replica of a service: the union of the addresses
/// each entry of `endpoints` (`http://host:port`, comma-separated for
/// several: `http://127.0.0.1:7001,http://127.0.0.1:7011`) resolves to.
/// Several replicas behind one name (`docker compose --scale store=2`, a
/// Kubernetes Service) are found by asking DNS again every
/// [`RESOLVE_EVERY`]; replicas that appear are added and those that go are
/// removed, the others keep their connections. An IP address, or a name
/// that does not resolve yet, is used as given. A malformed entry (an empty
/// one too) is an error here, at start-up.
///
/// Calls go to the replicas in turn, and a replica that cannot be reached
/// is skipped (see [`ReplicaChannel`]).
pub fn resolving_channel(endpoints: &str) -> Result<ReplicaChannel, RpcError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(RpcError::NoRuntime);
    }
    let entries: Vec<String> = endpoints.split(',').map(|e| e.trim().to_string()).collect();
    // Fail now on a malformed entry, not in the resolver; until the first
    // answer of DNS, the entries are the replicas.
    let replicas = entries
        .iter()
        .map(|e| Replica::new(e))
        .collect::<Result<Vec<_>, _>>()?;
    let shared = Arc::new(Replicas {
        set: RwLock::new(Arc::new(replicas)),
        next: AtomicUsize::new(0),
    });
    let weak = Arc::downgrade(&shared);
    tokio::spawn(async move {
        loop {
            let resolved = resolve_all(&entries).await;
            let Some(shared) = weak.upgrade() else { return };
            shared.set_endpoints(&resolved, &entries);
            drop(shared);
            tokio::time::sleep(RESOLVE_EVERY).await;
        }
    });
    Ok(ReplicaChannel { shared })
}

/// The error of a client channel, as tonic's generated clients take it.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A client channel over one or more replicas of a service (made by
/// [`resolving_channel`], or from one [`Channel`]).
///
/// Why not tonic's balanced channel: its balancer (tower's p2c over
/// connections whose load is always 0) keeps a replica whose connection is
/// refused in its ready set (a lazy connection reports the failure as
/// "ready", then fails the call), so after a replica dies about every other
/// call fails until DNS drops it, and with fixed addresses never stops.
///
/// Here calls go to the replicas in turn. A call whose replica refuses the
/// connection (a [`tonic::ConnectError`]: no byte of the request left this
/// process) is sent again to the next replica, each replica at most once,
/// and the refusing replica is passed over by later calls for a while
/// (from [`DOWN_AT_FIRST`], doubling up to [`DOWN_AT_MOST`]; tried last,
/// not never, while every replica is down). Any other failure — the
/// connection broke with the call on it, the call timed out, the server
/// answered an error — is the caller's: the request may have reached the
/// server, and a create or update must not be applied twice. So a replica
/// killed mid-load fails only the calls in flight on it.
///
/// To be sent again the request is kept: its body is read into memory
/// first (every call of Keelson's services sends one message; the answers
/// still stream). With one replica the request passes through as is.
#[derive(Clone, Debug)]
pub struct ReplicaChannel {
    shared: Arc<Replicas>,
}

#[derive(Debug)]
struct Replicas {
    /// The current replicas, replaced as a whole when DNS answers change.
    set: RwLock<Arc<Vec<Arc<Replica>>>>,
    /// The next call's first replica (round robin).
    next: AtomicUsize,
}

#[derive(Debug)]
struct Replica {
    endpoint: String,
    channel: Channel,
    down: Mutex<Down>,
}

/// A replica's recent refusals.
#[derive(Debug, Default)]
struct Down {
    /// Passed over until then.
    until: Option<Instant>,
    /// Refusals in a row.
    refusals: u32,
}

impl Replica {
    fn new(endpoint: &str) -> Result<Arc<Replica>, RpcError> {
        Ok(Replica::of(endpoint, endpoint_of(endpoint)?.connect_lazy()))
    }

    fn of(endpoint: &str, channel: Channel) -> Arc<Replica> {
        Arc::new(Replica {
            endpoint: endpoint.to_string(),
            channel,
            down: Mutex::default(),
        })
    }

    fn down(&self) -> std::sync::MutexGuard<'_, Down> {
        self.down.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_down(&self, now: Instant) -> bool {
        self.down().until.is_some_and(|t| t > now)
    }

    fn refused(&self) {
        let mut d = self.down();
        let shift = d.refusals.min(8);
        let wait = DOWN_AT_FIRST.saturating_mul(1 << shift).min(DOWN_AT_MOST);
        d.refusals = d.refusals.saturating_add(1);
        d.until = Some(Instant::now() + wait);
        if d.refusals == 1 {
            tracing::warn!(replica = %self.endpoint, "replica refused the connection; passed over while down");
        }
    }

    fn answered(&self) {
        let mut d = self.down();
        if d.refusals > 0 {
            tracing::info!(replica = %self.endpoint, "replica reachable again");
        }
        *d = Down::default();
    }

    async fn send(
        &self,
        req: http::Request<Body>,
    ) -> Result<http::Response<Body>, tonic::transport::Error> {
        let mut channel = self.channel.clone();
        futures::future::poll_fn(|cx| channel.poll_ready(cx)).await?;
        channel.call(req).await
    }
}

impl Replicas {
    fn snapshot(&self) -> Arc<Vec<Arc<Replica>>> {
        Arc::clone(&self.set.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Replace the replicas by `endpoints` (the entries themselves when
    /// nothing resolved), keeping those that stay.
    fn set_endpoints(&self, endpoints: &[String], entries: &[String]) {
        let endpoints = if endpoints.is_empty() {
            entries
        } else {
            endpoints
        };
        let current = self.snapshot();
        if current.iter().map(|r| &r.endpoint).eq(endpoints.iter()) {
            return;
        }
        let next: Vec<Arc<Replica>> = endpoints
            .iter()
            .filter_map(|e| match current.iter().find(|r| &r.endpoint == e) {
                Some(r) => Some(Arc::clone(r)),
                None => Replica::new(e).ok(),
            })
            .collect();
        if next.is_empty() {
            return;
        }
        tracing::info!(endpoints = ?entries, replicas = ?endpoints, "replicas changed");
        *self.set.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
    }

    /// The order in which one call tries the replicas: round robin from
    /// the next one, those passed over after the others.
    fn order(&self, replicas: &[Arc<Replica>]) -> Vec<usize> {
        let n = replicas.len();
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let (up, down): (Vec<usize>, Vec<usize>) = (0..n)
            .map(|i| (first + i) % n)
            .partition(|i| !replicas[*i].is_down(now));
        up.into_iter().chain(down).collect()
    }

    async fn call(&self, req: http::Request<Body>) -> Result<http::Response<Body>, BoxError> {
        let replicas = self.snapshot();
        let order = self.order(&replicas);
        if let [only] = order.as_slice() {
            let replica = &replicas[*only];
            return match replica.send(req).await {
                Err(e) if is_refused(&e) => {
                    replica.refused();
                    Err(e.into())
                }
                Err(e) => Err(e.into()),
                Ok(answer) => {
                    replica.answered();
                    Ok(answer)
                }
            };
        }
        let (parts, body) = req.into_parts();
        let body = body.collect().await?.to_bytes();
        let mut last = None;
        for i in order {
            let replica = &replicas[i];
            match replica.send(copy_request(&parts, body.clone())).await {
                Err(e) if is_refused(&e) => {
                    tracing::debug!(replica = %replica.endpoint, error = %e, "replica refused the connection, trying the next");
                    replica.refused();
                    last = Some(e);
                }
                Err(e) => return Err(e.into()),
                Ok(answer) => {
                    replica.answered();
                    return Ok(answer);
                }
            }
        }
        Err(match last {
            Some(e) => e.into(),
            None => "no replicas".into(),
        })
    }
}

/// The failure happened before the request was sent: the connection to the
/// replica could not be made.
fn is_refused(e: &tonic::transport::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<tonic::ConnectError>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// A request like the one `parts` describe, with `body`.
fn copy_request(parts: &http::request::Parts, body: Bytes) -> http::Request<Body> {
    let mut req = http::Request::new(Body::new(Full::new(body)));
    *req.method_mut() = parts.method.clone();
    *req.uri_mut() = parts.uri.clone();
    *req.version_mut() = parts.version;
    *req.headers_mut() = parts.headers.clone();
    *req.extensions_mut() = parts.extensions.clone();
    req
}

impl From<Channel> for ReplicaChannel {
    /// One replica behind `channel`.
    fn from(channel: Channel) -> Self {
        ReplicaChannel {
            shared: Arc::new(Replicas {
                set: RwLock::new(Arc::new(vec![Replica::of("channel", channel)])),
                next: AtomicUsize::new(0),
            }),
        }
    }
}

impl ReplicaChannel {
    /// The replicas' endpoints now, in order.
    pub fn replicas(&self) -> Vec<String> {
        self.shared
            .snapshot()
            .iter()
            .map(|r| r.endpoint.clone())
            .collect()
    }
}

impl Service<http::Request<Body>> for ReplicaChannel {
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<http::Response<Body>, BoxError>>;

    /// Always ready: each replica's channel queues its calls.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move { shared.call(req).await })
    }
}

/// Every `scheme://addr:port` the endpoints resolve to, sorted; an
/// endpoint whose host is an IP address, or does not resolve (yet), is kept
/// as given.
pub(crate) async fn resolve_all(endpoints: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for e in endpoints {
        let Ok(uri) = e.parse::<tonic::codegen::http::Uri>() else {
            out.push(e.clone());
            continue;
        };
        let scheme = uri.scheme_str().unwrap_or("http").to_string();
        let port = uri.port_u16().unwrap_or(80);
        let Some(host) = uri.host() else {
            out.push(e.clone());
            continue;
        };
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        if bare.parse::<std::net::IpAddr>().is_ok() {
            out.push(e.clone());
            continue;
        }
        let target = format!("{bare}:{port}");
        let found: Vec<String> = match tokio::net::lookup_host(target).await {
            Ok(addrs) => addrs.map(|a| format!("{scheme}://{a}")).collect(),
            Err(_) => Vec::new(),
        };
        if found.is_empty() {
            out.push(e.clone());
        }
        out.extend(found);
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
#[path = "channel_tests.rs"]
mod tests;
