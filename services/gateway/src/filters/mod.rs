//! The filter chain every request passes before a handler, in
//! kube-apiserver's order (`k8s.io/apiserver` `endpoints/filters` and
//! `server/filters`):
//!
//! 1. [`recovery`] — a panicking handler answers `500` instead of dropping
//!    the connection;
//! 2. [`request_info`] — URL and method → what is asked for, with the
//!    Kubernetes verb;
//! 3. [`authentication`] — who is asking: client certificate, bearer token
//!    (admin, token file, ServiceAccount JWT) or anonymous; `401` else;
//!    then [`crate::audit`] (with a policy) evaluates the audit policy for
//!    the authenticated user and writes `RequestReceived`;
//! 4. [`impersonation`] — `Impersonate-*` headers, each part authorized by
//!    the `impersonate` verb;
//! 5. [`authorization`] — RBAC (or AlwaysAllow) on the request's
//!    attributes; `403` with kube's wording;
//! 6. [`limits`] — the request body, read at most 3 MiB (`413` beyond), and
//!    drained before the answer when a handler did not read it, so an early
//!    answer ends an HTTP/2 stream cleanly.
//!
//! Around them all, as kube's outermost `WithAuditInit`, every request gets
//! its audit ID ([`crate::audit::audit_id`]), logged in its audit events
//! and sent back on every answer as `Audit-Id` (health, discovery, `401`,
//! `403`, a panic's `500` alike), auditing on or off.
//!
//! Then [`crate::handlers::route`] picks the handler; it runs with the
//! request's user in [`CURRENT`] (the review APIs and the escalation
//! checks read it).

pub mod authentication;
pub mod authorization;
pub mod impersonation;
pub mod limits;
pub mod pretty;
pub mod recovery;
pub mod request_info;

use std::sync::Arc;

use http::{Request, Response};
use keelson_apimachinery::ApiError;
use keelson_auth::serviceaccount::TokenAuthority;
use keelson_auth::{Authorizer, UserInfo};

use crate::http_util::{status_response, Body, Query};
use crate::Backends;
use keelson_codec::Format;

/// The request being handled: its (possibly impersonated) user and the
/// server's state.
#[derive(Clone)]
pub struct Current {
    pub user: Arc<UserInfo>,
    pub state: Arc<State>,
    /// The audit annotations the handler records (admission's), when the
    /// request is audited.
    pub audit_annotations: Option<crate::audit::Annotations>,
}

tokio::task_local! {
    /// Set around the handler of every request that passed the chain.
    pub static CURRENT: Current;
}

/// Per-server state shared by all connections.
pub struct State {
    pub backends: Backends,
    /// Discovery and OpenAPI documents of the catalog's current generation.
    pub discovery: keelson_discovery::DiscoveryCache,
    pub authn: authentication::Authenticators,
    pub authz: Authorizer,
    /// ServiceAccount token issuing and verification.
    pub service_accounts: Arc<TokenAuthority>,
    /// Serve kube's `etcd` health check (the store runs on etcd).
    pub etcd_health_check: bool,
    /// Audit policy and log (`--audit-policy-file`); `None`: no auditing.
    pub audit: Option<Arc<crate::audit::Auditor>>,
    /// The RBAC index's followers of the store (stopped with the state).
    pub followers: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for State {
    fn drop(&mut self) {
        for f in &self.followers {
            f.abort();
        }
    }
}

/// Handle one HTTP request through the whole chain.
pub async fn handle(state: Arc<State>, req: Request<hyper::body::Incoming>) -> Response<Body> {
    let audit_id = crate::audit::audit_id(req.headers());
    // Response compression wraps the whole chain (kube's deferred
    // response writer): see `crate::compression`.
    let gzip = crate::compression::accepts_gzip(req.headers());
    // Request metrics with kube's labels (`crate::metrics`).
    let started = std::time::Instant::now();
    // The query and what the URL asks for are parsed once, here.
    let query = Query::parse(req.uri().query());
    let info = request_info::RequestInfo::new(req.method(), req.uri().path(), &query);
    let labels = crate::metrics::labels(&info, req.method(), &query, req.headers());
    // kube's pretty-printed JSON (`pretty`), never for a watch stream.
    let pretty = req.uri().path().starts_with("/api")
        && info.verb != Some(request_info::Verb::Watch)
        && !query.flag("watch")
        && pretty::requested(&query, req.headers());
    // kube's request span (`crate::metrics::request_span`; none when
    // tracing is off).
    let span = crate::metrics::request_span(&req, &info);
    // Boxed: a future passed by value to an async fn (`recovery::guard`)
    // is kept twice in the caller's state (rust-lang/rust#62958), and this
    // state is allocated for every request, a burst of opening watches
    // all at once.
    let chained = Box::pin(chain(state, req, query, info, &audit_id));
    let mut resp = tracing::Instrument::instrument(recovery::guard(chained), span.clone()).await;
    // kube keeps an ID already set (an aggregated server's answer).
    resp.headers_mut()
        .entry(crate::audit::AUDIT_ID)
        .or_insert(audit_id);
    crate::metrics::end_span(&span, resp.status().as_u16());
    let resp = crate::metrics::record(labels, started, resp);
    let resp = if pretty {
        pretty::apply(resp).await
    } else {
        resp
    };
    crate::compression::compress(resp, gzip).await
}

async fn chain(
    state: Arc<State>,
    req: Request<hyper::body::Incoming>,
    query: Query,
    info: request_info::RequestInfo,
    audit_id: &http::HeaderValue,
) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let mut body = limits::RequestBody::new(body);
    let peer = parts.extensions.get::<authentication::PeerUser>();
    let mut audit = crate::audit::begin(state.audit.as_ref(), &parts, audit_id);
    // Boxed: its state (token review, audit) is not needed once the
    // handler runs, and a watch's handler state lives in the same
    // allocation.
    let authn = Box::pin(authentication_and_authorization(
        &state, &parts, &info, &query, peer, &mut audit,
    ));
    let resp = match authn.await {
        Ok(user) => {
            crate::audit::keep_body(&audit, &mut body);
            let handled = async {
                if let Some(r) = crate::handlers::review::well_known(&state, parts.uri.path()) {
                    return r;
                }
                crate::handlers::route(
                    &state,
                    info.target,
                    parts.uri.path(),
                    info.verb,
                    &query,
                    &parts.headers,
                    &mut body,
                )
                .await
            };
            let annotations = crate::audit::annotations_for(&audit);
            let current = Current {
                user: Arc::new(user),
                state: state.clone(),
                audit_annotations: annotations.clone(),
            };
            // Boxed, as the chain in `handle`: `audit::guard` takes it
            // by value.
            let resp =
                crate::audit::guard(&mut audit, Box::pin(CURRENT.scope(current, handled))).await;
            crate::audit::annotate(&mut audit, annotations);
            resp
        }
        Err(e) => status_response(&e, Format::JSON),
    };
    // Whatever the handler did not read is read before the answer goes out.
    body.drain().await;
    crate::audit::complete(audit, &body, resp).await
}

/// Authenticate, impersonate and authorize: the user the request acts as.
async fn authentication_and_authorization(
    state: &State,
    parts: &http::request::Parts,
    info: &request_info::RequestInfo,
    query: &Query,
    peer: Option<&authentication::PeerUser>,
    audit: &mut crate::audit::Audit,
) -> Result<UserInfo, ApiError> {
    let auditor = state.audit.as_ref();
    let cert_rejected = parts
        .extensions
        .get::<crate::client_cert::PeerRejected>()
        .is_some();
    let authenticated = state
        .authn
        .authenticate(&parts.headers, peer, cert_rejected);
    let Some(user) = authenticated.await else {
        crate::audit::unauthenticated(audit, auditor, parts, info, query).await;
        return Err(ApiError::unauthorized());
    };
    crate::audit::authenticated(audit, auditor, &user, parts, info).await;
    let user = impersonation::impersonate(&state.authz, user, &parts.headers)?;
    crate::audit::impersonated(audit, &user, &parts.headers);
    let attrs = authorization::attributes(&user, &parts.method, parts.uri.path(), info);
    crate::audit::authorize(&state.authz, &attrs, audit)?;
    Ok(user)
}

/// Record audit annotations for the request being handled (admission's;
/// a key's first value stays). Nothing when the request is not audited.
pub fn add_audit_annotations(annotations: &std::collections::BTreeMap<String, String>) {
    if annotations.is_empty() {
        return;
    }
    let _ = CURRENT.try_with(|c| {
        if let Some(a) = &c.audit_annotations {
            a.add_all(annotations);
        }
    });
}

/// The user of the request being handled (anonymous outside a request).
pub fn current_user() -> Arc<UserInfo> {
    CURRENT
        .try_with(|c| c.user.clone())
        .unwrap_or_else(|_| Arc::new(UserInfo::anonymous()))
}

/// The server state, inside a request's handler.
pub fn current_state() -> Option<Arc<State>> {
    CURRENT.try_with(|c| c.state.clone()).ok()
}
