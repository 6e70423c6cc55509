//! Client channels and the limits shared by clients and servers.

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

use crate::error::RpcError;

/// Maximum gRPC message size, both directions (tonic's default is 4 MiB;
/// request bodies may be 3 MiB plus encoding overhead).
pub const MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// How long a client waits for a TCP connection before reporting the peer
/// unavailable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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
    let ep = Endpoint::from_shared(endpoint.to_string()).map_err(|source| {
        RpcError::InvalidEndpoint {
            endpoint: endpoint.to_string(),
            source,
        }
    })?;
    Ok(ep
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(10))
        .http2_max_header_list_size(MAX_HEADER_LIST_SIZE)
        .connect_lazy())
}
