//! An in-process Keelson for Rust integration tests.
//!
//! ```no_run
//! # async fn demo() -> Result<(), keelson_testserver::TestServerError> {
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::api::{Api, ListParams};
//!
//! let server = keelson_testserver::TestServer::start().await?;
//! let pods: Api<Pod> = Api::namespaced(server.client().await?, "default");
//! assert!(pods.list(&ListParams::default()).await?.items.is_empty());
//! # Ok(()) }
//! ```
//!
//! Each [`TestServer`] is a whole Keelson (gateway, admission, controllers,
//! RBAC) on a free port of 127.0.0.1 with its objects in memory (Keelson's
//! MVCC on the in-memory engine: sled's semantics, nothing stored on disk),
//! served by a runtime and thread of its own, so it works from any test
//! runtime and any number run at once, each seeing only its own objects.
//! Dropping it stops it: its port, tasks and thread are released.
//!
//! Each server makes its own CA, as `keelson` does on a fresh data
//! directory (a fraction of a millisecond: sharing one CA per process was
//! measured and saved nothing, see BENCHMARKS.md). [`TestServer::client`]
//! is the kubeadm-style admin (client certificate, `system:masters`);
//! [`TestServer::client_as`] acts as any user and groups, authorized by
//! RBAC as on kube-apiserver. The PKI and the kubeconfig are written to a
//! temporary directory, removed on drop.
#![forbid(unsafe_code)]

mod error;
mod preload;
mod server;

pub use error::TestServerError;
pub use keelson::Phase;
pub use server::{Builder, TestServer};
