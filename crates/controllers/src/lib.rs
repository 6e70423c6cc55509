//! Keelson's controllers: loops that watch the store's change stream and
//! write through [`keelson_api::StoreApi`] until the world matches what the
//! objects ask for, as kube-controller-manager's do.
//!
//! They hold a `StoreApi` and nothing else, so the same code runs inside
//! the embedded `keelson` binary (the local store) and in the
//! `keelson-controllers` process (a gRPC client of `keelson-store`).
//!
//! - [`NamespaceController`]: deleting a namespace deletes every object in
//!   it.
#![forbid(unsafe_code)]

pub mod namespace;

pub use namespace::NamespaceController;
