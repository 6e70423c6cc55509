//! Keelson's store: [`LocalStore`], the generic registry store — kube's
//! rules every resource shares (uid, generateName, generation,
//! preconditions, finalizers, graceful deletion) — implementing
//! [`keelson_api::StoreApi`] over any [`keelson_kv::RevisionedKv`].
//!
//! Layers, bottom up:
//! - `keelson-kv`: the seam, a revisioned key/value store in etcd's terms.
//! - `keelson-kv-sled`: our MVCC on sled implementing it (the default).
//! - [`keys`]: object keys to key bytes; [`codec`]: objects to stored values.
//! - [`local`]: kube-apiserver's create/update/delete rules over the seam,
//!   and the change stream.
#![forbid(unsafe_code)]

pub mod codec;
pub mod config;
pub mod error;
pub mod keys;
pub mod local;
pub mod metered;

pub use codec::ValueCodec;
pub use config::StoreConfig;
pub use error::StorageError;
pub use local::LocalStore;
pub use metered::MeteredStore;
