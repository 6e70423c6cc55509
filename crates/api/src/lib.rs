//! Keelson's internal service contracts.
//!
//! Each service is a trait with two implementations: the local one (the real
//! logic, in its own crate) and the remote one (a tonic client in
//! `keelson-rpc`). The gRPC servers are thin adapters over the local ones, so
//! the embedded binary and the distributed services run the same code.
#![forbid(unsafe_code)]

mod admission;
mod merge;
mod store;
mod watch_cache;

pub use admission::{
    AdmissionApi, AdmissionRequest, AdmissionResponse, AdmitPhase, FieldValidation, Operation,
    UserInfo,
};
pub use merge::{FieldOwner, ManagedFieldsRequest, MergeApi, PatchRequest, PatchType};
pub use store::{
    ChangeEvent, ChangeStream, CreateOptions, DeleteOptions, DeleteOutcome, EventType, ListResult,
    ListStream, StoreApi, UpdateOptions,
};
pub use watch_cache::{
    CacheEvent, CacheEventStream, CacheList, CacheListRequest, CacheWatchRequest, IncludeObject,
    ListRevision, WatchCacheApi, WatchStart,
};

pub use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey, StatusReason};
pub use keelson_codec::Format;
