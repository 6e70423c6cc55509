//! Keelson's internal gRPC layer.
//!
//! The contracts live in `proto/` and are compiled by `build.rs` into [`pb`].
//! For each service trait of `keelson-api` this crate has:
//!
//! - a **server adapter** ([`StoreGrpc`], [`AdmissionGrpc`], [`MergeGrpc`],
//!   [`WatchCacheGrpc`]) that decodes a request, calls the local
//!   implementation and encodes the answer;
//! - a **remote client** ([`RemoteStore`], [`RemoteAdmission`],
//!   [`RemoteMerge`], [`RemoteWatchCache`]) implementing the same trait over
//!   a lazily connected tonic channel, so callers cannot tell local from
//!   remote.
//!
//! [`RemoteWatchCache`] spreads calls round-robin over several watch-cache
//! replicas and fails over to the next one when a replica cannot be
//! reached; lists and watch events stream through without being collected,
//! and objects stay the cache's shared `Bytes`.
//!
//! Errors cross the wire one way only (see [`status`]): an `ApiError`
//! travels as a gRPC status whose details hold the Kubernetes `Status` JSON
//! and comes back identical; a transport failure becomes `503`.
#![forbid(unsafe_code)]

mod admission;
mod change_stream;
mod channel;
mod convert;
mod error;
mod flags;
mod merge;
pub mod observe;
pub mod pb;
mod serve;
mod service;
pub mod status;
mod store;
mod watch_cache;

pub use admission::{AdmissionGrpc, RemoteAdmission};
pub use channel::{
    lazy_channel, resolving_channel, ReplicaChannel, CALL_TIMEOUT, CONNECT_TIMEOUT,
    MAX_MESSAGE_SIZE, RESOLVE_EVERY,
};
pub use error::RpcError;
pub use flags::{StoreEndpointFlags, DEFAULT_STORE_ENDPOINT};
pub use keelson_runtime::{draining, DrainTrigger, Draining, SHUTDOWN_GRACE};
pub use merge::{MergeGrpc, RemoteMerge};
pub use observe::{Observed, Traced, TracedChannel};
pub use serve::{serve, serve_service, serve_with_drain, serve_with_grace, until_draining};
pub use store::{RemoteStore, StoreGrpc};
pub use watch_cache::{RemoteWatchCache, SharedWatches, SharingLimits, WatchCacheGrpc};
