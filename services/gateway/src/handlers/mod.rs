//! The handlers behind the filter chain, kube-apiserver's
//! `endpoints/handlers`: one module per verb (`get`, `list`, `watch`,
//! `create`, `update`, `patch`, `delete`, `deletecollection`), per
//! subresource (`status`, `scale`; pods' `eviction`, `binding`,
//! `ephemeralcontainers`, `resize` and the kubelet family, routed by
//! [`subresources`]), and the non-resource endpoints
//! (discovery, OpenAPI, health). [`resource`] resolves a resource request
//! against the catalog and dispatches it to its verb.
//!
//! Shared by the verb modules: [`Ctx`] (what a handler knows about the
//! request), [`Reply`] (what it answers), [`object`] (body decoding and
//! type-meta checks) and [`write`] (the admission + store write path).

mod binding;
mod create;
mod custom;
mod delete;
mod deletecollection;
mod discovery;
mod ephemeral;
mod eviction;
mod get;
mod health;
mod kubelet;
mod list;
mod not_acceptable;
mod not_found;
mod object;
mod patch;
mod resize;
pub(crate) mod resource;
pub(crate) mod review;
mod scale;
mod service_alloc;
mod status;
mod subresources;
mod update;
mod versions;
mod watch;
mod write;

use std::sync::Arc;

use http::{HeaderMap, Response};
use keelson_api::ObjectKey;
use keelson_apimachinery::{ApiError, GroupResource};
use keelson_registry::ResourceInfo;
use serde_json::Value;

use crate::filters::limits::RequestBody;
use crate::filters::request_info::{ResourceRequest, Target, Verb};
use crate::filters::State;
use crate::http_util::{status_response, Body, Query};
use crate::Backends;
use keelson_codec::{negotiate_output, Format};

/// A successful handler result: status code, object, warnings.
pub(crate) struct Reply {
    pub code: u16,
    pub object: Value,
    pub warnings: Vec<String>,
}

impl Reply {
    pub fn ok(object: Value) -> Self {
        Reply {
            code: 200,
            object,
            warnings: Vec::new(),
        }
    }
}

/// A failed handler result: the error and the warnings gathered before it.
pub(crate) type HandlerResult = Result<Reply, (ApiError, Vec<String>)>;

/// An error with no warnings.
pub(crate) fn plain(e: ApiError) -> (ApiError, Vec<String>) {
    (e, Vec::new())
}

/// Everything a verb handler needs about the request.
pub(crate) struct Ctx<'a> {
    pub b: &'a Backends,
    pub ri: &'a ResourceRequest,
    /// The resource, from the catalog snapshot the request resolved against.
    pub info: &'a ResourceInfo,
    pub query: &'a Query,
    pub headers: &'a HeaderMap,
}

impl Ctx<'_> {
    pub fn key(&self, name: &str) -> ObjectKey {
        ObjectKey::new(self.info.gr(), &self.ri.namespace, name)
    }
    pub fn gr(&self) -> GroupResource {
        self.info.gr()
    }
    pub fn header(&self, name: http::header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Who writes, for managedFields: `fieldManager`, else the User-Agent's
    /// product (kube's `managerOrUserAgent`).
    pub fn owner(&self, field_manager: &str) -> keelson_api::FieldOwner {
        let manager = if field_manager.is_empty() {
            manager_from_user_agent(self.header(http::header::USER_AGENT).unwrap_or(""))
        } else {
            field_manager.to_string()
        };
        keelson_api::FieldOwner {
            manager,
            api_version: self.info.api_version(),
            subresource: self.ri.subresource.clone(),
        }
    }
}

/// kube's `prefixFromUserAgent`: what precedes the first `/`, without
/// unprintable characters, cut at 128 bytes.
fn manager_from_user_agent(ua: &str) -> String {
    let prefix = ua.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > keelson_apimachinery::options::write::FIELD_MANAGER_MAX_LENGTH
        {
            break;
        }
        out.push(c);
    }
    out
}

/// Route an authenticated request to its handler.
pub(crate) async fn route(
    state: &Arc<State>,
    target: Target,
    path: &str,
    verb: Option<Verb>,
    query: &Query,
    headers: &HeaderMap,
    body: &mut RequestBody,
) -> Response<Body> {
    let header = |name| {
        headers
            .get(name)
            .and_then(|v: &http::HeaderValue| v.to_str().ok())
    };
    let accept = header(http::header::ACCEPT);
    let inm = header(http::header::IF_NONE_MATCH);
    match target {
        Target::Version
        | Target::CoreGroup
        | Target::Groups
        | Target::Group(_)
        | Target::GroupVersion { .. }
        | Target::OpenApiV2
        | Target::OpenApiRoot
        | Target::OpenApiDoc(_) => discovery::serve(state, target, query, accept, inm),
        Target::Health { endpoint, check } => {
            let etcd = state.etcd_health_check;
            health::serve(&state.backends, etcd, &endpoint, check.as_deref(), query).await
        }
        Target::Resource(ri) => {
            let out = match negotiate_output(accept) {
                Ok(o) => o,
                Err(e) => return status_response(&e, Format::JSON),
            };
            resource::serve(&state.backends, verb, &ri, query, headers, body, out).await
        }
        Target::Metrics => crate::metrics::serve().await,
        Target::Unknown => not_found::for_path(&state.backends.catalog.snapshot(), path),
    }
}
