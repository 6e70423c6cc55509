//! The discovery and OpenAPI documents of one catalog generation,
//! serialised once with their ETags, and the cache that keeps the current
//! generation's documents.
//!
//! An ETag is the hash of the document's bytes, so it changes exactly when
//! a new generation changes the document; the built-in generation's bytes
//! and ETags are what they always were.

use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use keelson_codec::Format;
use keelson_registry::CatalogSnapshot;
use serde_json::Value;

use crate::aggregated::{aggregated, AggVersion};
use crate::etag::etag;
use crate::legacy::{api_group_list, api_versions_with_address};
use crate::openapi::OpenApiDocs;
use crate::version::version_info;

/// A serialised document and its (quoted) ETag.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The JSON bytes.
    pub bytes: Bytes,
    /// `"…"`: the upper-case hex SHA-512 of the bytes, quoted.
    pub etag: String,
}

impl Doc {
    /// Serialise `v` and hash it (compact, as Go's `json.Marshal`: the
    /// OpenAPI documents).
    pub fn of(v: &Value) -> Doc {
        Doc::from_bytes(keelson_codec::encode(Format::JSON, v).unwrap_or_default())
    }

    /// An API object as kube's JSON serializer writes it: compact, with a
    /// final newline (the discovery documents).
    pub fn object(v: &Value) -> Doc {
        let mut bytes = keelson_codec::encode(Format::JSON, v)
            .unwrap_or_default()
            .to_vec();
        bytes.push(b'\n');
        Doc::from_bytes(Bytes::from(bytes))
    }

    /// A non-API value as kube's `WriteRawJSON` writes it: indented by two
    /// spaces, no final newline (`/version`).
    pub fn raw_indented(v: &Value) -> Doc {
        Doc::from_bytes(Bytes::from(
            serde_json::to_vec_pretty(v).unwrap_or_default(),
        ))
    }

    fn from_bytes(bytes: Bytes) -> Doc {
        let etag = etag(&bytes);
        Doc { bytes, etag }
    }
}

/// An OpenAPI v3 group-version document: its bytes, ETag and `?hash=`.
#[derive(Debug, Clone)]
pub struct OpenApiDoc {
    /// The document and its ETag (the quoted hash).
    pub doc: Doc,
    /// The hash the root advertises in `serverRelativeURL`.
    pub hash: String,
}

/// Every document kubectl reads for one catalog generation. The discovery
/// documents are built at once; OpenAPI v3 and v2 (larger) on first use.
#[derive(Debug)]
pub struct Documents {
    snapshot: Arc<CatalogSnapshot>,
    /// `/api`, `APIVersions`.
    pub api_legacy: Doc,
    /// `/apis`, `APIGroupList`.
    pub apis_legacy: Doc,
    /// `/api` as aggregated discovery v2.
    pub api_v2: Doc,
    /// `/apis` as aggregated discovery v2.
    pub apis_v2: Doc,
    /// `/version`.
    pub version: Doc,
    openapi: OnceLock<(OpenApiDocs, Doc)>,
    openapi_v2: OnceLock<OpenApiV2>,
}

/// `/openapi/v2`: the Swagger 2.0 document in both forms kube-apiserver
/// serves.
#[derive(Debug, Clone)]
pub struct OpenApiV2 {
    /// `application/json`.
    pub json: Doc,
    /// `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
    /// (gnostic `openapi.v2.Document`).
    pub proto: Doc,
}

impl Documents {
    /// The documents of `snapshot`; `/api` advertises `server_address`
    /// (`host:port`).
    pub fn build(snapshot: Arc<CatalogSnapshot>, server_address: &str) -> Documents {
        let c = &*snapshot;
        Documents {
            api_legacy: Doc::object(&api_versions_with_address(c, server_address)),
            apis_legacy: Doc::object(&api_group_list(c)),
            api_v2: Doc::object(&aggregated(c, true, AggVersion::V2)),
            apis_v2: Doc::object(&aggregated(c, false, AggVersion::V2)),
            version: Doc::raw_indented(&version_info()),
            openapi: OnceLock::new(),
            openapi_v2: OnceLock::new(),
            snapshot,
        }
    }

    /// The catalog generation these documents describe.
    pub fn snapshot(&self) -> &Arc<CatalogSnapshot> {
        &self.snapshot
    }

    fn openapi(&self) -> &(OpenApiDocs, Doc) {
        self.openapi.get_or_init(|| {
            let docs = OpenApiDocs::build(&self.snapshot);
            let root = Doc::of(&docs.root());
            (docs, root)
        })
    }

    /// `/openapi/v3`.
    pub fn openapi_root(&self) -> &Doc {
        &self.openapi().1
    }

    /// `/openapi/v2`, built on first use.
    pub fn openapi_v2(&self) -> &OpenApiV2 {
        self.openapi_v2.get_or_init(|| {
            let (json, proto) = crate::openapi::v2_documents(&self.snapshot);
            OpenApiV2 {
                json: Doc::from_bytes(Bytes::from(json)),
                proto: Doc::from_bytes(Bytes::from(proto)),
            }
        })
    }

    /// `/openapi/v3/{path}`, e.g. `apis/apps/v1`.
    pub fn openapi_doc(&self, path: &str) -> Option<OpenApiDoc> {
        let (bytes, hash) = self.openapi().0.doc(path)?;
        Some(OpenApiDoc {
            doc: Doc {
                // Shares the built document; no copy per request.
                bytes: Bytes::from_owner(SharedBytes(bytes)),
                etag: format!("\"{hash}\""),
            },
            hash,
        })
    }
}

/// A built document's bytes, shared into a [`Bytes`].
struct SharedBytes(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The documents of the newest catalog generation seen; a new generation
/// replaces them on first request.
#[derive(Debug, Default)]
pub struct DiscoveryCache {
    current: Mutex<Option<Arc<Documents>>>,
    /// What `/api` advertises in `serverAddressByClientCIDRs`.
    server_address: String,
}

impl DiscoveryCache {
    /// An empty cache for a server advertised at `server_address`
    /// (`host:port`, kube's `ExternalAddress`).
    pub fn new(server_address: String) -> DiscoveryCache {
        DiscoveryCache {
            current: Mutex::new(None),
            server_address,
        }
    }

    /// The documents of `snapshot`, built once per generation.
    pub fn documents(&self, snapshot: &Arc<CatalogSnapshot>) -> Arc<Documents> {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        match &*current {
            Some(d) if Arc::ptr_eq(d.snapshot(), snapshot) => Arc::clone(d),
            // A request still holding an older generation gets its own
            // documents without displacing the newer ones.
            Some(d) if d.snapshot().generation() > snapshot.generation() => {
                Arc::new(Documents::build(Arc::clone(snapshot), &self.server_address))
            }
            _ => {
                let d = Arc::new(Documents::build(Arc::clone(snapshot), &self.server_address));
                *current = Some(Arc::clone(&d));
                d
            }
        }
    }
}
