//! OpenAPI v3: the root index and one document per group version.
//!
//! The documents of one catalog generation are built together, serialised
//! and hashed once ([`OpenApiDocs`]); the caller caches them per generation
//! (see [`crate::Documents`]).

mod params;
mod paths;
mod schemas;
pub(crate) mod v2;
mod v2_proto;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use keelson_apimachinery::json::to_vec_go;
use keelson_registry::CatalogSnapshot;
use serde_json::{json, Map, Value};

use crate::etag::sha512_hex;
use crate::version::GIT_VERSION;

pub use paths::PATCH_CONTENT_TYPES;

/// One serialised OpenAPI document and the hash of its bytes.
type Doc = (Arc<Vec<u8>>, String);

/// Every OpenAPI v3 document of one catalog generation, serialised and
/// hashed once.
#[derive(Debug, Clone)]
pub struct OpenApiDocs {
    docs: BTreeMap<String, Doc>,
}

impl OpenApiDocs {
    /// Build every document of `c`.
    pub fn build(c: &CatalogSnapshot) -> OpenApiDocs {
        OpenApiDocs { docs: build_all(c) }
    }

    /// Every document path served under `/openapi/v3/` (`api`, `api/v1`,
    /// `apis`, `apis/apps`, `apis/apps/v1`, ..., `version`).
    pub fn paths(&self) -> Vec<String> {
        self.docs.keys().cloned().collect()
    }

    /// `/openapi/v3`: `{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=…"}, …}}`.
    pub fn root(&self) -> Value {
        let paths: Map<String, Value> = self
            .docs
            .iter()
            .map(|(p, (_, hash))| {
                (
                    p.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
                )
            })
            .collect();
        json!({ "paths": paths })
    }

    /// `/openapi/v3/{path}` (`path` like `api/v1` or `apis/apps/v1`; leading
    /// or trailing slashes are ignored): the serialised JSON document and its
    /// hash.
    pub fn doc(&self, path: &str) -> Option<(Arc<Vec<u8>>, String)> {
        self.docs
            .get(path.trim_matches('/'))
            .map(|(b, h)| (Arc::clone(b), h.clone()))
    }
}

/// `/openapi/v2` of `c`: the Swagger 2.0 document as JSON and as gnostic
/// protobuf. The JSON is Go's `json.Marshal` of kube-openapi's documents:
/// `<`, `>` and `&` escaped (`\u003c`), as in every v3 document.
pub(crate) fn v2_documents(c: &CatalogSnapshot) -> (Vec<u8>, Vec<u8>) {
    let doc = v2::document(c);
    let proto = v2_proto::encode(&doc);
    (to_vec_go(&doc).unwrap_or_default(), proto)
}

fn build_all(c: &CatalogSnapshot) -> BTreeMap<String, Doc> {
    doc_parts(c)
        .into_iter()
        .map(|(path, paths, roots)| {
            let bytes = to_vec_go(&envelope(c, paths, roots)).unwrap_or_default();
            let hash = sha512_hex(&bytes);
            (path, (Arc::new(bytes), hash))
        })
        .collect()
}

/// The parts of one v3 document: its path under `/openapi/v3/`, its
/// `paths` and the definitions they reference directly.
type DocParts = (String, Map<String, Value>, BTreeSet<String>);

/// The `paths` of every v3 document of `c` (`api`, `apis`, `version`,
/// `apis/{g}` and every group version), before the envelope: shared by the
/// v3 documents and the Swagger 2.0 document ([`v2`]).
fn doc_parts(c: &CatalogSnapshot) -> Vec<DocParts> {
    let mut out = vec![
        small_doc(
            "api",
            "/api/",
            "getCoreAPIVersions",
            "core",
            "get available API versions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions",
        ),
        small_doc(
            "apis",
            "/apis/",
            "getAPIVersions",
            "apis",
            "get available API versions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList",
        ),
        small_doc(
            "version",
            "/version/",
            "getCodeVersion",
            "version",
            "get the version information for this server",
            "io.k8s.apimachinery.pkg.version.Info",
        ),
    ];
    for g in c.groups() {
        if g.name.is_empty() {
            for v in &g.versions {
                out.push(gv_doc(c, format!("api/{v}"), "", v));
            }
            continue;
        }
        let camel = paths::group_camel(&g.name);
        let tag = {
            let mut ch = camel.chars();
            ch.next()
                .map(|f| f.to_lowercase().chain(ch).collect::<String>())
                .unwrap_or_default()
        };
        out.push(small_doc(
            &format!("apis/{}", g.name),
            &format!("/apis/{}/", g.name),
            &format!("get{camel}APIGroup"),
            &tag,
            "get information of a group",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup",
        ));
        for v in &g.versions {
            out.push(gv_doc(c, format!("apis/{}/{v}", g.name), &g.name, v));
        }
    }
    out
}

fn envelope(c: &CatalogSnapshot, paths: Map<String, Value>, roots: BTreeSet<String>) -> Value {
    let schemas: Map<String, Value> = schemas::reachable(c, roots)
        .into_iter()
        .filter_map(|n| {
            c.definition(&n)
                .map(|s| (n.clone(), schemas::definition(c, &n, s)))
        })
        .collect();
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "BearerToken": {
                    "type": "apiKey",
                    "description": "Bearer Token authentication",
                    "name": "authorization",
                    "in": "header"
                }
            }
        },
        "security": [{"BearerToken": []}]
    })
}

fn small_doc(
    doc: &str,
    path: &str,
    op_id: &str,
    tag: &str,
    description: &str,
    def: &str,
) -> DocParts {
    let mut content = Map::new();
    for t in [
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
    ] {
        content.insert(t.into(), json!({"schema": schemas::ref_to(def)}));
    }
    let mut paths = Map::new();
    paths.insert(
        path.into(),
        json!({"get": {
            "tags": [tag],
            "description": description,
            "operationId": op_id,
            "responses": {
                "200": {"description": "OK", "content": content},
                "401": {"description": "Unauthorized"}
            }
        }}),
    );
    (doc.to_owned(), paths, BTreeSet::from([def.to_owned()]))
}

fn gv_doc(c: &CatalogSnapshot, doc: String, group: &str, version: &str) -> DocParts {
    let gp = paths::gv_paths(c, group, version);
    (doc, gp.paths.into_iter().collect(), gp.refs)
}
