//! Keelson's store: a revisioned MVCC key/value layer over a small engine
//! trait (sled today, etcd later) and [`LocalStore`], the local
//! implementation of [`keelson_api::StoreApi`].
//!
//! Layers, bottom up:
//! - [`engine`]: atomic batches, point reads, ordered scans, durable flush.
//!   Knows nothing of revisions or sled.
//! - [`sled_engine`]: the sled implementation of [`engine::Engine`].
//! - [`mvcc`]: one global revision counter, every version of every key, a
//!   change log, group-committed durable writes, reads at any retained
//!   revision and compaction.
//! - [`keys`]: object keys to engine key bytes.
//! - [`local`]: kube-apiserver's create/update/delete rules on top of mvcc.
#![forbid(unsafe_code)]

pub mod config;
pub mod engine;
pub mod error;
pub mod keys;
pub mod local;
pub mod mvcc;
pub mod sled_engine;

pub use config::StoreConfig;
pub use error::StorageError;
pub use local::LocalStore;
pub use mvcc::{Change, ChangeBatch, EventType, Expect, Mvcc, PrefixChange, Versioned};
