//! Every discovery document kubectl reads, as pure functions over one
//! catalog generation ([`keelson_registry::CatalogSnapshot`]): `/version`,
//! legacy discovery (`/api`, `/apis`, `/apis/{g}`, `/api/v1`,
//! `/apis/{g}/{v}`), aggregated discovery (`apidiscovery.k8s.io/v2`), OpenAPI v3 (`/openapi/v3` and one document per group
//! version) and OpenAPI v2 (`/openapi/v2`: one Swagger 2.0 document derived
//! from the v3 generation, as JSON and as gnostic protobuf). [`DiscoveryCache`] keeps them serialised, with their ETags, per
//! generation. No IO.
#![forbid(unsafe_code)]

mod aggregated;
mod documents;
mod etag;
mod legacy;
mod openapi;
mod version;

pub use aggregated::{aggregated, AggVersion};
pub use documents::{DiscoveryCache, Doc, Documents, OpenApiDoc, OpenApiV2};
pub use etag::{etag, sha512_hex};
pub use legacy::{api_group, api_group_list, api_resource_list, api_versions_with_address};
pub use openapi::{OpenApiDocs, PATCH_CONTENT_TYPES};
pub use version::{version_info, GIT_VERSION};

#[cfg(test)]
mod tests;
