//! Code generated from `proto/*.proto` by `tonic-prost-build`.
//!
//! The module nesting mirrors the proto packages so the generated
//! cross-package paths resolve; the short aliases below are what the rest of
//! the project uses.
#![allow(missing_docs, clippy::all, clippy::pedantic)]

/// Generated packages under `keelson.*`.
pub mod keelson {
    /// `keelson.common.*`
    pub mod common {
        /// `keelson.common.v1`: shared messages.
        pub mod v1 {
            tonic::include_proto!("keelson.common.v1");
        }
    }
    /// `keelson.store.*`
    pub mod store {
        /// `keelson.store.v1`: the store service.
        pub mod v1 {
            tonic::include_proto!("keelson.store.v1");
        }
    }
    /// `keelson.admission.*`
    pub mod admission {
        /// `keelson.admission.v1`: the admission service.
        pub mod v1 {
            tonic::include_proto!("keelson.admission.v1");
        }
    }
    /// `keelson.merge.*`
    pub mod merge {
        /// `keelson.merge.v1`: the merge service.
        pub mod v1 {
            tonic::include_proto!("keelson.merge.v1");
        }
    }
    /// `keelson.watch.*`
    pub mod watch {
        /// `keelson.watch.v1`: the watch-cache service.
        pub mod v1 {
            tonic::include_proto!("keelson.watch.v1");
        }
    }
}

pub use keelson::admission::v1 as admission;
pub use keelson::common::v1 as common;
pub use keelson::merge::v1 as merge;
pub use keelson::store::v1 as store;
pub use keelson::watch::v1 as watch;
