//! Resource requests: resolve the URL against the catalog, check the verb
//! and subresource, and dispatch to the verb's handler.

use http::{HeaderMap, Response};
use keelson_apimachinery::{ApiError, ApiResult};
use keelson_registry::{CatalogSnapshot, ResourceInfo};

use super::{plain, Ctx, HandlerResult};
use crate::filters::limits::RequestBody;
use crate::filters::request_info::{ResourceRequest, Verb};
use crate::http_util::{add_warnings, encode_target, status_response, Body, Query};
use crate::Backends;
use keelson_codec::Format;

/// Serve one resource request.
pub(crate) async fn serve(
    b: &Backends,
    verb: Option<Verb>,
    ri: &ResourceRequest,
    query: &Query,
    headers: &HeaderMap,
    body: &mut RequestBody,
    out: Format,
) -> Response<Body> {
    // One catalog generation for the whole request.
    let mut catalog = b.catalog.snapshot();
    if catalog
        .lookup(&ri.group, &ri.version, &ri.resource)
        .is_none()
    {
        if let Some(c) = super::custom::await_served(b, &ri.group, &ri.version, &ri.resource).await
        {
            catalog = c;
        }
    }
    let info = match resolve(&catalog, ri) {
        Ok(info) => info,
        Err(_) if !super::not_found::restful_group(&catalog, &ri.group) => {
            return super::not_found::page_not_found()
        }
        Err(e) => return status_response(&e, out),
    };
    let out = match super::custom::output_format(info, headers, out) {
        Ok(out) => out,
        Err(e) => return status_response(&e, Format::JSON),
    };
    if matches!(verb, Some(Verb::Create | Verb::Update)) && ri.subresource != "scale" {
        if let Err(e) = super::custom::check_body_type(info, headers) {
            return status_response(&e, out);
        }
    }
    let mut resp = serve_resolved(b, info, verb, ri, query, headers, body, out).await;
    if let Some(w) = super::custom::deprecation_warning(info) {
        crate::http_util::prepend_warnings(&mut resp, &[w]);
        deprecated_requested(info, ri, "");
    }
    let builtin = info.custom.is_none().then(|| {
        keelson_registry::lifecycle::builtin_deprecation(&info.group, &info.version, &info.plural)
    });
    if let Some(d) = builtin.flatten() {
        crate::http_util::prepend_warnings(&mut resp, &[d.warning()]);
        deprecated_requested(info, ri, &d.removed_release());
    }
    resp
}

/// `apiserver_requested_deprecated_apis` for a request to a deprecated API.
fn deprecated_requested(info: &ResourceInfo, ri: &ResourceRequest, removed_release: &str) {
    keelson_metrics::Metrics::global().deprecated_api_requested(
        &info.group,
        &info.version,
        &info.plural,
        &ri.subresource,
        removed_release,
    );
}

#[allow(clippy::too_many_arguments)]
async fn serve_resolved(
    b: &Backends,
    info: &ResourceInfo,
    verb: Option<Verb>,
    ri: &ResourceRequest,
    query: &Query,
    headers: &HeaderMap,
    body: &mut RequestBody,
    out: Format,
) -> Response<Body> {
    // Every path but watch is boxed: a request's handler state is sized
    // for its largest path, and a burst of opening watches (a thousand at
    // once) has all of theirs allocated together; inline, the write paths
    // made every watch request as large as a write.
    if let Some(resp) = Box::pin(super::subresources::serve(
        b, info, verb, ri, query, headers, body, out,
    ))
    .await
    {
        return resp;
    }
    if let Some(verb @ (Verb::List | Verb::Watch)) = verb {
        let served = match check_collection_verb(info, verb) {
            Ok(()) if verb == Verb::Watch => super::watch::serve(b, info, ri, query, out).await,
            Ok(()) => Box::pin(super::list::serve(b, info, ri, query, out)).await,
            Err(e) => Err(e),
        };
        return served.unwrap_or_else(|e| status_response(&e, out));
    }
    let cx = Ctx {
        b,
        ri,
        info,
        query,
        headers,
    };
    match Box::pin(dispatch(&cx, verb, body)).await {
        Ok(mut r) => {
            // Boxed: a conversion webhook's call, which a watch never makes.
            let served = Box::pin(super::custom::to_served_version(b, info, &mut r.object));
            if let Err(e) = served.await {
                return status_response(&e, out);
            }
            if let Err(e) = super::versions::to_served(info, &mut r.object) {
                return status_response(&e, out);
            }
            let mut resp = encode_target(r.code, out, query, &r.object);
            add_warnings(&mut resp, &r.warnings);
            resp
        }
        Err((e, warnings)) => {
            let mut resp = status_response(&e, out);
            add_warnings(&mut resp, &warnings);
            resp
        }
    }
}

/// The catalog entry a URL addresses: `404` for an unknown resource or a
/// namespace on a cluster-scoped one.
fn resolve<'a>(catalog: &'a CatalogSnapshot, ri: &ResourceRequest) -> ApiResult<&'a ResourceInfo> {
    let info = catalog
        .lookup(&ri.group, &ri.version, &ri.resource)
        .ok_or_else(ApiError::path_not_found)?;
    if !info.namespaced && !ri.namespace.is_empty() {
        return Err(ApiError::path_not_found());
    }
    Ok(info)
}

/// Whether a collection list or watch is served for the resource.
fn check_collection_verb(info: &ResourceInfo, verb: Verb) -> ApiResult<()> {
    if info.has_verb(verb.as_str()) {
        return Ok(());
    }
    Err(if verb == Verb::Watch {
        ApiError::method_not_supported(&info.gr(), "watch")
    } else {
        ApiError::method_not_allowed()
    })
}

async fn dispatch(cx: &Ctx<'_>, verb: Option<Verb>, body: &mut RequestBody) -> HandlerResult {
    let (ri, info) = (cx.ri, cx.info);
    let Some(verb) = verb else {
        return Err(plain(ApiError::method_not_allowed()));
    };
    // The review APIs and TokenRequest are answered, never stored.
    if super::review::handles(ri) {
        let body = body.read().await.map_err(plain)?;
        if let Some(r) = super::review::intercept(cx, verb, &body).await {
            return r;
        }
    }
    if !ri.subresource.is_empty() {
        if !info.has_subresource(&ri.subresource) {
            return Err(plain(ApiError::path_not_found()));
        }
        // `finalize` (namespaces) is an update of the whole object but its status.
        let finalize = ri.subresource == "finalize";
        let generic = ["status", "scale", "ephemeralcontainers", "resize"];
        if !generic.contains(&ri.subresource.as_str()) && !finalize {
            return Err(plain(ApiError::new(
                405,
                "MethodNotAllowed",
                format!(
                    "the {:?} subresource of {} is not implemented by Keelson yet",
                    ri.subresource,
                    info.gr()
                ),
            )));
        }
        if !matches!(verb, Verb::Get | Verb::Update | Verb::Patch)
            || (finalize && verb != Verb::Update)
        {
            return Err(plain(ApiError::method_not_allowed()));
        }
    } else if !info.has_verb(verb.as_str()) {
        return Err(plain(ApiError::method_not_allowed()));
    }
    match (verb, ri.subresource.as_str()) {
        (Verb::Get, "scale") => super::scale::get(cx).await.map_err(plain),
        (Verb::Update, "scale") => {
            let body = body.read().await.map_err(plain)?;
            super::scale::update(cx, &body).await.map_err(plain)
        }
        (Verb::Patch, "scale") => {
            let body = body.read().await.map_err(plain)?;
            super::scale::patch(cx, &body).await.map_err(plain)
        }
        (Verb::Get, _) => super::get::get(cx).await.map_err(plain),
        (Verb::Create, _) => {
            let body = body.read().await.map_err(plain)?;
            super::create::create(cx, &body).await
        }
        (Verb::Update, _) => {
            let body = body.read().await.map_err(plain)?;
            super::update::update(cx, &body).await
        }
        (Verb::Patch, _) => {
            let body = body.read().await.map_err(plain)?;
            super::patch::patch(cx, &body).await
        }
        (Verb::Delete, _) => {
            let body = body.read().await.map_err(plain)?;
            super::delete::delete(cx, &body).await.map_err(plain)
        }
        (Verb::DeleteCollection, _) => {
            let body = body.read().await.map_err(plain)?;
            super::deletecollection::delete_collection(cx, &body)
                .await
                .map_err(plain)
        }
        _ => Err(plain(ApiError::method_not_allowed())),
    }
}
