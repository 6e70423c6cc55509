//! The filter chain every request passes before a handler, in
//! kube-apiserver's order (`k8s.io/apiserver` `endpoints/filters` and
//! `server/filters`):
//!
//! 1. [`recovery`] — a panicking handler answers `500` instead of dropping
//!    the connection;
//! 2. [`request_info`] — URL and method → what is asked for, with the
//!    Kubernetes verb;
//! 3. [`authentication`] — who is asking (today: the admin token; public
//!    paths for anyone);
//! 4. authorization — not yet: every authenticated user may do everything;
//! 5. [`limits`] — the request body, read at most 3 MiB (`413` beyond), and
//!    drained before the answer when a handler did not read it, so an early
//!    answer ends an HTTP/2 stream cleanly.
//!
//! Then [`crate::handlers::route`] picks the handler.

pub mod authentication;
pub mod limits;
pub mod recovery;
pub mod request_info;

use std::sync::Arc;

use http::{Request, Response};
use keelson_apimachinery::ApiError;

use crate::http_util::{status_response, Body, Query};
use crate::Backends;
use keelson_codec::Format;

/// Per-server state shared by all connections.
pub struct State {
    pub backends: Backends,
    /// The admin bearer token.
    pub token: String,
    /// Discovery and OpenAPI documents of the catalog's current generation.
    pub discovery: keelson_discovery::DiscoveryCache,
}

/// Handle one HTTP request through the whole chain.
pub async fn handle(state: Arc<State>, req: Request<hyper::body::Incoming>) -> Response<Body> {
    recovery::guard(chain(state, req)).await
}

async fn chain(state: Arc<State>, req: Request<hyper::body::Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let mut body = limits::RequestBody::new(body);
    let query = Query::parse(parts.uri.query());
    let info = request_info::RequestInfo::new(&parts.method, parts.uri.path(), &query);
    let resp = match authentication::authenticate(&state, &info, &parts.headers) {
        Some(_user) => {
            crate::handlers::route(
                &state,
                info.target,
                info.verb,
                &query,
                &parts.headers,
                &mut body,
            )
            .await
        }
        None => status_response(&ApiError::unauthorized(), Format::JSON),
    };
    // Whatever the handler did not read is read before the answer goes out.
    body.drain().await;
    resp
}
