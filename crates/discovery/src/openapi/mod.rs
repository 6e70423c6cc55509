//! OpenAPI v3: the root index and one document per group version.
//!
//! The documents of one catalog generation are built together, serialised
//! and hashed once ([`OpenApiDocs`]); the caller caches them per generation
//! (see [`crate::Documents`]).

mod params;
mod paths;
mod schemas;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

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

fn build_all(c: &CatalogSnapshot) -> BTreeMap<String, Doc> {
    let mut out = BTreeMap::new();
    let mut add = |path: String, doc: Value| {
        let bytes = serde_json::to_vec(&doc).unwrap_or_default();
        let hash = sha512_hex(&bytes);
        out.insert(path, (Arc::new(bytes), hash));
    };
    add(
        "api".into(),
        small_doc(
            c,
            "/api/",
            "getCoreAPIVersions",
            "core",
            "get available API versions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions",
        ),
    );
    add(
        "apis".into(),
        small_doc(
            c,
            "/apis/",
            "getAPIVersions",
            "apis",
            "get available API versions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList",
        ),
    );
    add(
        "version".into(),
        small_doc(
            c,
            "/version/",
            "getCodeVersion",
            "version",
            "get the version information for this server",
            "io.k8s.apimachinery.pkg.version.Info",
        ),
    );
    for g in c.groups() {
        if g.name.is_empty() {
            for v in &g.versions {
                add(format!("api/{v}"), gv_doc(c, "", v));
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
        add(
            format!("apis/{}", g.name),
            small_doc(
                c,
                &format!("/apis/{}/", g.name),
                &format!("get{camel}APIGroup"),
                &tag,
                "get information of a group",
                "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup",
            ),
        );
        for v in &g.versions {
            add(format!("apis/{}/{v}", g.name), gv_doc(c, &g.name, v));
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
    c: &CatalogSnapshot,
    path: &str,
    op_id: &str,
    tag: &str,
    description: &str,
    def: &str,
) -> Value {
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
    envelope(c, paths, BTreeSet::from([def.to_owned()]))
}

fn gv_doc(c: &CatalogSnapshot, group: &str, version: &str) -> Value {
    let gp = paths::gv_paths(c, group, version);
    let paths: Map<String, Value> = gp.paths.into_iter().collect();
    envelope(c, paths, gp.refs)
}
