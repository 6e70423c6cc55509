//! What the adapters of every service share: the `Ready` call on both
//! sides, and the generated tonic servers and clients built with Keelson's
//! message size limits.
//!
//! tonic generates one server and one client type per service with no trait
//! in common, so the shared construction is a macro over the generated
//! names.

use keelson_apimachinery::ApiResult;
use tonic::{Response, Status};

use crate::pb::common::ReadyResponse;
use crate::status::{from_grpc_status, to_grpc_status};

/// Server side of `Ready`: the local implementation's readiness, as the
/// answer or as its Status.
pub(crate) fn ready_reply(ready: ApiResult<()>) -> Result<Response<ReadyResponse>, Status> {
    match ready {
        Ok(()) => Ok(Response::new(ReadyResponse {})),
        Err(e) => Err(to_grpc_status(&e)),
    }
}

/// Client side of `Ready`: the peer's answer; a peer that cannot be reached
/// is a `503`.
pub(crate) fn ready_result(
    service: &'static str,
    answer: Result<Response<ReadyResponse>, Status>,
) -> ApiResult<()> {
    answer
        .map(|_| ())
        .map_err(|s| from_grpc_status(service, &s))
}

/// A generated tonic server or client with [`MAX_MESSAGE_SIZE`] both ways.
///
/// [`MAX_MESSAGE_SIZE`]: crate::MAX_MESSAGE_SIZE
macro_rules! with_message_limits {
    ($generated:expr) => {
        $generated
            .max_decoding_message_size($crate::MAX_MESSAGE_SIZE)
            .max_encoding_message_size($crate::MAX_MESSAGE_SIZE)
    };
}
pub(crate) use with_message_limits;

/// `into_server` and `server` for a server adapter `$grpc` of the trait
/// `$api`, whose generated tonic service is `$server`.
macro_rules! grpc_server {
    ($grpc:ident: $api:ident => $server:ident) => {
        impl $grpc {
            /// The tonic service, with Keelson's message size limits, gRPC
            /// server metrics and server spans.
            pub fn into_server(self) -> $crate::Observed<$server<$grpc>> {
                $crate::Observed::new($crate::service::with_message_limits!($server::new(self)))
            }

            #[doc = concat!("Shorthand for `", stringify!($grpc), "::new(api).into_server()`.")]
            pub fn server(api: std::sync::Arc<dyn $api>) -> $crate::Observed<$server<$grpc>> {
                Self::new(api).into_server()
            }
        }
    };
}
pub(crate) use grpc_server;

/// The channel every remote client of `remote_client!` calls through.
pub(crate) type ClientChannel = crate::observe::Traced<crate::ReplicaChannel>;

/// A remote client `$name` over the generated tonic client `$client`,
/// connected lazily (see [`lazy_channel`](crate::lazy_channel)).
macro_rules! remote_client {
    ($(#[$doc:meta])* $name:ident($client:ident)) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            client: $client<$crate::service::ClientChannel>,
        }

        impl $name {
            /// A client for `endpoint` (`http://host:port`), connected on first use
            /// and reconnected after the peer restarts. Needs a Tokio runtime.
            pub fn connect_lazy(endpoint: &str) -> Result<Self, $crate::RpcError> {
                Ok(Self::from_channel($crate::lazy_channel(endpoint)?))
            }

            /// A client spreading its calls over every replica the
            /// endpoints (comma-separated) resolve to, asked again every few
            /// seconds, and skipping a replica that is down (see
            /// [`resolving_channel`](crate::resolving_channel)).
            pub fn connect_resolving(endpoints: &str) -> Result<Self, $crate::RpcError> {
                Ok(Self::from_channel($crate::resolving_channel(endpoints)?))
            }

            /// A client over an existing channel (one `Channel`, or a
            /// [`ReplicaChannel`](crate::ReplicaChannel)).
            pub fn from_channel(channel: impl Into<$crate::ReplicaChannel>) -> Self {
                $name {
                    client: $crate::service::with_message_limits!($client::new(
                        $crate::observe::Traced::new(channel.into())
                    )),
                }
            }
        }
    };
}
pub(crate) use remote_client;
