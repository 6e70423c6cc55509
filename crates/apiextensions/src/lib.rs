//! CustomResourceDefinitions (`apiextensions.k8s.io/v1`), as
//! kube-apiserver's apiextensions-apiserver serves them:
//!
//! - [`crd`]: the CRD fields Keelson reads;
//! - [`validation`]: kube's CRD validation on create and update, with the
//!   structural-schema rules;
//! - [`resources`]: a CRD as catalog entries (one `ResourceInfo` per served
//!   version, kind and list definitions);
//! - [`values`]: what a version's schema does to custom objects — pruning,
//!   defaulting, validation with kube's field errors; [`formats`] the
//!   string formats; [`cel`] the call site of `x-kubernetes-validations`;
//! - [`conversion`]: calls to a CRD's conversion webhook;
//! - [`follower`]: keeps a process's `Catalog` in step with the stored CRDs.
#![forbid(unsafe_code)]

pub mod cache;
pub mod cel;
pub mod conversion;
pub mod crd;
pub mod follower;
pub mod formats;
pub mod props;
pub mod resources;
pub mod validation;
pub mod values;

pub use cache::SchemaCache;
pub use crd::{Crd, CLEANUP_FINALIZER};
pub use follower::CatalogFollower;
pub use values::Compiled;

use keelson_apimachinery::GroupResource;

/// The CRD resource itself.
pub fn crd_resource() -> GroupResource {
    GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions")
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A stored CRD does not decode.
    #[error("CustomResourceDefinition does not decode: {0}")]
    Decode(#[source] serde_json::Error),
}

#[cfg(test)]
mod tests;
