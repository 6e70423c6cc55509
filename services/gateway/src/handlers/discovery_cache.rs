//! Discovery documents, serialised once with their ETags.

use std::sync::OnceLock;

use bytes::Bytes;
use keelson_discovery::AggVersion;
use serde_json::Value;

/// A serialised document and its ETag.
#[derive(Clone)]
pub struct Doc {
    pub bytes: Bytes,
    pub etag: String,
}

impl Doc {
    fn of(v: &Value) -> Doc {
        let bytes = Bytes::from(serde_json::to_vec(v).unwrap_or_default());
        let etag = keelson_discovery::etag(&bytes);
        Doc { bytes, etag }
    }
}

/// All static discovery documents.
pub struct Docs {
    pub api_legacy: Doc,
    pub apis_legacy: Doc,
    pub api_v2: Doc,
    pub apis_v2: Doc,
    pub api_v2beta1: Doc,
    pub apis_v2beta1: Doc,
    pub version: Doc,
    pub openapi_root: Doc,
}

/// The documents, built on first use.
pub fn docs() -> &'static Docs {
    static DOCS: OnceLock<Docs> = OnceLock::new();
    DOCS.get_or_init(|| Docs {
        api_legacy: Doc::of(&keelson_discovery::api_versions()),
        apis_legacy: Doc::of(&keelson_discovery::api_group_list()),
        api_v2: Doc::of(&keelson_discovery::aggregated(true, AggVersion::V2)),
        apis_v2: Doc::of(&keelson_discovery::aggregated(false, AggVersion::V2)),
        api_v2beta1: Doc::of(&keelson_discovery::aggregated(true, AggVersion::V2Beta1)),
        apis_v2beta1: Doc::of(&keelson_discovery::aggregated(false, AggVersion::V2Beta1)),
        version: Doc::of(&keelson_discovery::version_info()),
        openapi_root: Doc::of(&keelson_discovery::openapi_v3_root()),
    })
}
