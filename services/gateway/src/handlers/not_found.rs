//! kube-apiserver's two 404s: paths its go-restful container routes (the
//! `/api` web service and one per built-in group, `/apis/<group>`) answer
//! go-restful's `404` Status; everything else falls through the
//! aggregator and apiextensions delegates to the final `NotFound` handler,
//! Go's plain-text `404 page not found`.

use http::Response;
use keelson_apimachinery::ApiError;
use keelson_codec::Format;
use keelson_registry::CatalogSnapshot;

use crate::http_util::{bytes_response, status_response, Body};

/// Whether `group` has a go-restful web service: the core group, or a
/// group with a built-in resource in the live catalog (custom resource
/// groups are served by the apiextensions handler, outside go-restful).
pub(crate) fn restful_group(catalog: &CatalogSnapshot, group: &str) -> bool {
    group.is_empty()
        || catalog
            .resources()
            .iter()
            .any(|r| r.group == group && r.custom.is_none())
}

/// Whether go-restful routes `path`: `/api...`, `/apis`, or
/// `/apis/<group>...` of a [`restful_group`].
fn restful_path(catalog: &CatalogSnapshot, path: &str) -> bool {
    let seg = |p: &str, root: &str| p == root || p.starts_with(&format!("{root}/"));
    if seg(path, "/api") || path == "/apis" || path == "/apis/" {
        return true;
    }
    match path.strip_prefix("/apis/") {
        Some(rest) => {
            let group = rest.split('/').next().unwrap_or("");
            !group.is_empty() && restful_group(catalog, group)
        }
        None => false,
    }
}

/// Go's `http.NotFound`.
pub(crate) fn page_not_found() -> Response<Body> {
    let mut r = bytes_response(404, "text/plain; charset=utf-8", "404 page not found\n");
    r.headers_mut().insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    r
}

/// The 404 kube answers for `path`.
pub(crate) fn for_path(catalog: &CatalogSnapshot, path: &str) -> Response<Body> {
    if restful_path(catalog, path) {
        status_response(&ApiError::path_not_found(), Format::JSON)
    } else {
        page_not_found()
    }
}

/// The 404 for a missing group (or group version) `group`.
pub(crate) fn for_group(catalog: &CatalogSnapshot, group: &str) -> Response<Body> {
    if restful_group(catalog, group) {
        status_response(&ApiError::path_not_found(), Format::JSON)
    } else {
        page_not_found()
    }
}
