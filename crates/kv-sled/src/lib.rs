//! Keelson's MVCC on sled, implementing [`keelson_kv::RevisionedKv`].
//!
//! Layers, bottom up:
//! - [`engine`]: atomic batches, point reads, ordered scans, durable flush.
//!   Knows nothing of revisions or sled.
//! - [`sled_engine`]: the sled implementation of [`engine::Engine`].
//! - [`memory_engine`]: an in-memory one (`--storage-backend memory`,
//!   tests): the same MVCC on ordered maps, nothing on disk.
//! - [`mvcc`]: one global revision counter, every version of every key, a
//!   change log, group-committed durable writes, reads at any retained
//!   revision and compaction.
//! - [`SledKv`] (`kv`, `watch`): the seam's calls on top of [`mvcc::Mvcc`].
#![forbid(unsafe_code)]

pub mod engine;
pub mod error;
mod kv;
pub mod memory_engine;
pub mod mvcc;
pub mod sled_engine;
mod watch;

pub use error::MvccError;
pub use kv::SledKv;
pub use mvcc::{
    Change, ChangeBatch, ChangeOp, Expect, Mvcc, PrefixChange, Versioned, WriteOutcome,
};
