//! Client channels and the limits shared by clients and servers.

use std::collections::BTreeSet;
use std::time::Duration;

use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};

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

/// A channel that spreads calls over every address `endpoint`'s host name
/// resolves to (several store, admission or merge replicas behind one
/// name: `docker compose --scale store=2`, a Kubernetes Service), asked
/// again every [`RESOLVE_EVERY`]; replicas that appear are added and those
/// that go are removed (tonic's balanced channel). An IP address, or a
/// name that does not resolve yet, is used as given.
pub fn resolving_channel(endpoint: &str) -> Result<Channel, RpcError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(RpcError::NoRuntime);
    }
    // Fail now on a malformed endpoint, not in the resolver.
    endpoint_of(endpoint)?;
    let (channel, tx) = Channel::balance_channel::<String>(16);
    let endpoint = endpoint.to_string();
    tokio::spawn(async move {
        let mut current: BTreeSet<String> = BTreeSet::new();
        loop {
            let resolved: BTreeSet<String> = resolve_all(std::slice::from_ref(&endpoint))
                .await
                .into_iter()
                .collect();
            for added in resolved.difference(&current) {
                let Ok(ep) = endpoint_of(added) else { continue };
                if tx.send(Change::Insert(added.clone(), ep)).await.is_err() {
                    return;
                }
            }
            for removed in current.difference(&resolved) {
                if tx.send(Change::Remove(removed.clone())).await.is_err() {
                    return;
                }
            }
            if resolved != current {
                tracing::info!(endpoint = %endpoint, replicas = ?resolved, "replicas changed");
            }
            current = resolved;
            tokio::time::sleep(RESOLVE_EVERY).await;
        }
    });
    Ok(channel)
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
