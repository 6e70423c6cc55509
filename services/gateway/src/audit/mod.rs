//! Audit logging (kube-apiserver's `WithAudit` and its log backend): with
//! `--audit-policy-file` and `--audit-log-path`, every request the policy
//! gives a level above `None` is written as `audit.k8s.io/v1` `Event`s,
//! one JSON object a line: at `RequestReceived` (once authenticated), at
//! `ResponseStarted` for long-running requests (watches), at
//! `ResponseComplete`, or at `Panic`. The event's `auditID` is the
//! request's [`audit_id`], which every response carries as `Audit-Id`,
//! auditing on or off (kube's `WithAuditInit`).
//!
//! As in kube the policy sees the authenticated user, before
//! impersonation; the event's `user` is that user and `impersonatedUser`
//! the one impersonated. Authorization adds the
//! `authorization.k8s.io/decision` and `/reason` annotations.
//!
//! Bodies: the request body a handler read is kept (a reference-counted
//! `Bytes`, no copy) when the request is audited; `requestObject` is that
//! body as JSON (a YAML apply configuration converted), `responseObject`
//! the JSON answer. Watch streams are never buffered.
//!
//! Without a policy file nothing here runs but [`audit_id`]: the filter
//! chain checks one `Option`.
//!
//! [`policy`] loads and matches the policy, [`event`] is the Event and
//! [`sink`] the log writer.

pub mod event;
pub mod policy;
pub mod sink;

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use chrono::Utc;
use futures::FutureExt;
use http::header::HeaderName;
use http::{HeaderMap, HeaderValue, Response};
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use keelson_apimachinery::ApiResult;
use keelson_auth::{Attributes, Authorizer, UserInfo};
use serde_json::Value;

use crate::filters::limits::RequestBody;
use crate::filters::request_info::RequestInfo;
use crate::http_util::{full, Body};
use event::{Event, ObjectRef, User};
use policy::{Decision, Level, Policy, Stage};
use sink::Sink;

/// kube-apiserver's audit flags (log backend).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AuditFlags {
    /// The audit policy (`audit.k8s.io/v1` `Policy`, YAML or JSON); without
    /// it nothing is audited.
    #[arg(long = "audit-policy-file", env = "KEELSON_AUDIT_POLICY_FILE")]
    pub audit_policy_file: Option<PathBuf>,
    /// Where audit events are written, one JSON object a line; `-` is
    /// standard output. Without it nothing is audited.
    #[arg(long = "audit-log-path", env = "KEELSON_AUDIT_LOG_PATH")]
    pub audit_log_path: Option<PathBuf>,
    /// Days to keep rotated audit logs (0: no limit).
    #[arg(
        long = "audit-log-maxage",
        env = "KEELSON_AUDIT_LOG_MAXAGE",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub audit_log_maxage: i32,
    /// Rotated audit logs to keep (0: all).
    #[arg(
        long = "audit-log-maxbackup",
        env = "KEELSON_AUDIT_LOG_MAXBACKUP",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub audit_log_maxbackup: i32,
    /// Megabytes an audit log reaches before it is rotated (0: 100).
    #[arg(
        long = "audit-log-maxsize",
        env = "KEELSON_AUDIT_LOG_MAXSIZE",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub audit_log_maxsize: i32,
    /// Gzip rotated audit logs.
    #[arg(long = "audit-log-compress", env = "KEELSON_AUDIT_LOG_COMPRESS")]
    pub audit_log_compress: bool,
    /// `json` (kube's `legacy` text format is not served).
    #[arg(
        long = "audit-log-format",
        env = "KEELSON_AUDIT_LOG_FORMAT",
        default_value = "json"
    )]
    pub audit_log_format: String,
}

/// Bad audit flags or policy: the server does not start.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("{0}")]
    Policy(String),
    #[error("{0}")]
    Flags(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The loaded policy and the log: one per server.
pub struct Auditor {
    policy: Policy,
    sink: Sink,
}

impl Auditor {
    /// The auditor of the flags, or `None` when auditing is off (no policy
    /// file, or no log path). A bad flag or policy is an error.
    pub fn from_flags(flags: &AuditFlags) -> Result<Option<Arc<Auditor>>, AuditError> {
        let mut errors = Vec::new();
        if flags.audit_log_path.is_some() {
            match flags.audit_log_format.as_str() {
                "json" => {}
                "legacy" => errors.push(
                    "--audit-log-format=legacy is not supported by Keelson; use json".to_string(),
                ),
                f => errors.push(format!(
                    "invalid audit log format {f}, allowed formats are \"legacy,json\""
                )),
            }
            for (flag, v) in [
                ("maxage", flags.audit_log_maxage),
                ("maxbackup", flags.audit_log_maxbackup),
                ("maxsize", flags.audit_log_maxsize),
            ] {
                if v < 0 {
                    errors.push(format!("--audit-log-{flag} {v} can't be a negative number"));
                }
            }
        }
        if !errors.is_empty() {
            return Err(AuditError::Flags(errors.join("; ")));
        }
        let Some(policy_file) = &flags.audit_policy_file else {
            return Ok(None);
        };
        let policy = Policy::load(policy_file)?;
        if flags.audit_log_path.is_none() {
            tracing::warn!(
                "--audit-policy-file without --audit-log-path: no audit events are written"
            );
            return Ok(None);
        }
        let sink = Sink::open(flags)?;
        Ok(Some(Arc::new(Auditor { policy, sink })))
    }
}

/// The connection's peer address, put in each request's extensions while
/// auditing is on (`sourceIPs`).
#[derive(Debug, Clone, Copy)]
pub struct RemoteAddr(pub std::net::IpAddr);

/// One request's audit state: `None` when auditing is off.
pub type Audit = Option<Box<Record>>;

/// An audited request: the event so far and what the policy decided.
pub struct Record {
    sink: Sink,
    policy_decision: Option<Decision>,
    event: Event,
    long_running: bool,
    /// Emitted all it will (a failed authentication).
    done: bool,
    request_content_type: String,
}

impl Record {
    fn level(&self) -> Level {
        self.policy_decision.map_or(Level::None, |d| d.level)
    }

    fn active(&self) -> bool {
        self.level() > Level::None && !self.done
    }

    fn omit_managed_fields(&self) -> bool {
        self.policy_decision.is_some_and(|d| d.omit_managed_fields)
    }

    /// The event at `stage` as a log line, or `None` when the policy
    /// omits the stage.
    fn line(&mut self, stage: Stage) -> Option<Vec<u8>> {
        let d = self.policy_decision?;
        if d.level == Level::None || d.omit_stages.contains(stage) {
            return None;
        }
        self.event.stage = stage;
        self.event.stage_timestamp = Utc::now();
        let mut line = match serde_json::to_vec(&self.event) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(error = %e, "encoding an audit event");
                return None;
            }
        };
        line.push(b'\n');
        Some(line)
    }

    async fn emit(&mut self, stage: Stage) {
        if let Some(line) = self.line(stage) {
            self.sink.send(line).await;
        }
    }

    fn emit_later(&mut self, stage: Stage) {
        if let Some(line) = self.line(stage) {
            self.sink.send_later(line);
        }
    }

    /// kube's policy attributes, user and object reference of the request.
    fn evaluate(&mut self, auditor: &Auditor, attrs: &Attributes, authenticated: bool) {
        let d = auditor.policy.evaluate(attrs, authenticated);
        self.policy_decision = Some(d);
        if d.level == Level::None {
            return;
        }
        self.event.level = d.level;
        self.event.verb = attrs.verb.clone();
        if authenticated {
            self.event.user = User::from(&attrs.user);
        }
        self.event.object_ref = ObjectRef::of(attrs);
        self.long_running = attrs.verb == "watch"
            || attrs.verb == "proxy"
            || matches!(
                attrs.subresource.as_str(),
                "attach" | "exec" | "proxy" | "log" | "portforward"
            ) && attrs.resource_request;
    }
}

/// kube's `HeaderAuditID`: the client's request ID, echoed on every
/// response.
pub const AUDIT_ID: HeaderName = HeaderName::from_static("audit-id");

/// The request's audit ID (kube's `WithAuditInit`): the client's `Audit-ID`
/// header as sent when it is not empty (kube neither validates nor
/// truncates it), else a new random UUID. Costs no syscall: the UUID's
/// bytes come from the thread's RNG, and the client's value is shared, not
/// copied.
pub fn audit_id(headers: &HeaderMap) -> HeaderValue {
    if let Some(v) = headers.get(&AUDIT_ID).filter(|v| !v.is_empty()) {
        return v.clone();
    }
    let id = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    let id = id.hyphenated().encode_lower(&mut buf);
    HeaderValue::from_str(id).expect("hex digits and hyphens are a header value")
}

/// Start auditing a request with its [`audit_id`]: `None` (one check) when
/// auditing is off.
pub fn begin(
    auditor: Option<&Arc<Auditor>>,
    parts: &http::request::Parts,
    audit_id: &HeaderValue,
) -> Audit {
    let auditor = auditor?;
    let h = &parts.headers;
    // Go's JSON encoding, as kube's, replaces bytes that are not UTF-8.
    let audit_id = String::from_utf8_lossy(audit_id.as_bytes()).into_owned();
    let now = Utc::now();
    let peer = parts.extensions.get::<RemoteAddr>().map(|r| r.0);
    Some(Box::new(Record {
        sink: auditor.sink.clone(),
        policy_decision: None,
        event: Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: Level::None,
            audit_id,
            stage: Stage::RequestReceived,
            request_uri: parts
                .uri
                .path_and_query()
                .map(|p| p.as_str().to_string())
                .unwrap_or_else(|| parts.uri.path().to_string()),
            verb: String::new(),
            user: User::default(),
            impersonated_user: None,
            source_ips: event::source_ips(h, peer),
            user_agent: event::user_agent(h),
            object_ref: None,
            response_status: None,
            request_object: None,
            response_object: None,
            request_received_timestamp: now,
            stage_timestamp: now,
            annotations: BTreeMap::new(),
        },
        long_running: false,
        done: false,
        request_content_type: h
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| crate::http_util::media_type(Some(v)).to_string())
            .unwrap_or_default(),
    }))
}

/// The request is authenticated as `user`: evaluate the policy and write
/// the `RequestReceived` event.
pub async fn authenticated(
    audit: &mut Audit,
    auditor: Option<&Arc<Auditor>>,
    user: &UserInfo,
    parts: &http::request::Parts,
    info: &RequestInfo,
) {
    let (Some(rec), Some(auditor)) = (audit.as_mut(), auditor) else {
        return;
    };
    let attrs =
        crate::filters::authorization::attributes(user, &parts.method, parts.uri.path(), info);
    rec.evaluate(auditor, &attrs, true);
    rec.emit(Stage::RequestReceived).await;
}

/// Authentication failed (`401`): kube writes one `ResponseStarted`
/// event, with no user, saying which credentials were tried.
pub async fn unauthenticated(
    audit: &mut Audit,
    auditor: Option<&Arc<Auditor>>,
    parts: &http::request::Parts,
    info: &RequestInfo,
    query: &crate::http_util::Query,
) {
    let (Some(rec), Some(auditor)) = (audit.as_mut(), auditor) else {
        return;
    };
    let nobody = UserInfo::new("", Vec::new());
    let attrs =
        crate::filters::authorization::attributes(&nobody, &parts.method, parts.uri.path(), info);
    rec.evaluate(auditor, &attrs, false);
    let mut methods = Vec::new();
    let auth = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim();
    let scheme = auth.split(' ').next().unwrap_or("");
    if scheme.eq_ignore_ascii_case("basic") {
        methods.push("basic");
    }
    if auth.split(' ').count() > 1 && scheme.eq_ignore_ascii_case("bearer") {
        methods.push("bearer");
    }
    if query
        .get("access_token")
        .is_some_and(|t| !t.trim().is_empty())
    {
        methods.push("access_token");
    }
    let message = if methods.is_empty() {
        "Authentication failed, no credentials provided".to_string()
    } else {
        format!("Authentication failed, attempted: {}", methods.join(", "))
    };
    rec.event.response_status = Some(event::status_with(401, "", "", &message));
    rec.emit(Stage::ResponseStarted).await;
    rec.done = true;
}

/// Impersonation succeeded: record the user the request acts as.
pub fn impersonated(audit: &mut Audit, user: &UserInfo, headers: &http::HeaderMap) {
    if let Some(rec) = audit.as_mut().filter(|r| r.active()) {
        if headers.contains_key("impersonate-user") {
            rec.event.impersonated_user = Some(User::from(user));
        }
    }
}

/// Authorize (as [`crate::filters::authorization::authorize`]) and record
/// the decision and its reason as kube's annotations.
pub fn authorize(authz: &Authorizer, attrs: &Attributes, audit: &mut Audit) -> ApiResult<()> {
    let d = authz.authorize(attrs);
    if let Some(rec) = audit.as_mut().filter(|r| r.active()) {
        let decision = if d.allowed { "allow" } else { "forbid" };
        rec.event
            .annotations
            .insert("authorization.k8s.io/decision".into(), decision.to_string());
        rec.event
            .annotations
            .insert("authorization.k8s.io/reason".into(), d.reason.clone());
    }
    if d.allowed {
        Ok(())
    } else {
        Err(attrs.forbidden(&d.reason))
    }
}

/// The audit annotations a handler records (admission's), shared with
/// the handler's task.
#[derive(Clone, Default)]
pub struct Annotations(Arc<std::sync::Mutex<BTreeMap<String, String>>>);

impl Annotations {
    /// Add each annotation whose key has no value yet (kube's
    /// `AddAuditAnnotation`).
    pub fn add_all(&self, annotations: &BTreeMap<String, String>) {
        if let Ok(mut m) = self.0.lock() {
            for (k, v) in annotations {
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

/// A collector for the handler's audit annotations when the request is
/// audited.
pub fn annotations_for(audit: &Audit) -> Option<Annotations> {
    audit
        .as_ref()
        .filter(|r| r.active())
        .map(|_| Annotations::default())
}

/// The handler is done: its audit annotations join the event's.
pub fn annotate(audit: &mut Audit, annotations: Option<Annotations>) {
    let (Some(rec), Some(a)) = (audit.as_mut(), annotations) else {
        return;
    };
    let recorded = match a.0.lock() {
        Ok(mut m) => std::mem::take(&mut *m),
        Err(_) => return,
    };
    for (k, v) in recorded {
        rec.event.annotations.entry(k).or_insert(v);
    }
}

/// Keep the request body a handler reads, for `requestObject` (and the
/// name of a created object).
pub fn keep_body(audit: &Audit, body: &mut RequestBody) {
    if audit.as_ref().is_some_and(|r| r.active()) {
        body.keep();
    }
}

/// Run the handler; a panic writes the `Panic` event, then goes on to
/// the recovery filter.
pub async fn guard<F>(audit: &mut Audit, handler: F) -> Response<Body>
where
    F: Future<Output = Response<Body>>,
{
    let Some(rec) = audit.as_mut().filter(|r| r.active()) else {
        return handler.await;
    };
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            rec.event.response_status = Some(event::status_with(
                500,
                "Failure",
                "InternalError",
                &format!("APIServer panic'd: {what}"),
            ));
            rec.emit(Stage::Panic).await;
            rec.done = true;
            std::panic::resume_unwind(panic)
        }
    }
}

/// The answer is ready: record the request and response objects and
/// status, and write `ResponseComplete` (for a long-running request
/// `ResponseStarted` now and `ResponseComplete` when its stream ends).
pub async fn complete(audit: Audit, body: &RequestBody, resp: Response<Body>) -> Response<Body> {
    let Some(mut rec) = audit else {
        return resp;
    };
    if !rec.active() {
        return resp;
    }
    rec.request_object(body.kept());
    let code = resp.status().as_u16();
    rec.event.response_status = Some(event::status_code_only(code));
    // A whole answer is read here (it is in memory already, or a list
    // kube would hold whole too); a stream passes through. A long-running
    // request's answer is whole only when it failed before streaming.
    let exact = resp.body().size_hint().exact().is_some();
    let whole = if rec.long_running {
        exact && code >= 300
    } else {
        exact || rec.level() == Level::RequestResponse
    };
    if !whole {
        if rec.long_running {
            rec.emit(Stage::ResponseStarted).await;
        }
        let (parts, b) = resp.into_parts();
        let wrapped = Completing {
            inner: b,
            rec: Some(rec),
        };
        return Response::from_parts(parts, wrapped.boxed_unsync());
    }
    let (parts, b) = resp.into_parts();
    let bytes = match b.collect().await {
        Ok(c) => c.to_bytes(),
        Err(never) => match never {},
    };
    let media_type = crate::http_util::media_type(
        parts
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
    );
    rec.response_object(code, &media_type, &bytes);
    if rec.long_running {
        rec.emit(Stage::ResponseStarted).await;
    }
    rec.emit(Stage::ResponseComplete).await;
    Response::from_parts(parts, full(bytes))
}

/// Verbs whose request body is an object or patch kube logs.
fn writes(verb: &str) -> bool {
    matches!(
        verb,
        "create" | "update" | "patch" | "delete" | "deletecollection"
    )
}

impl Record {
    /// `requestObject` from the body read (Request level and above), and
    /// the object reference completed from a created or updated object
    /// (every level, as kube's `LogRequestObject`).
    fn request_object(&mut self, kept: Option<&Bytes>) {
        let Some(bytes) = kept.filter(|b| !b.is_empty()) else {
            return;
        };
        let resource = self.event.object_ref.is_some();
        let verb = self.event.verb.as_str();
        if !resource || !writes(verb) {
            return;
        }
        let object_body = matches!(verb, "create" | "update");
        if self.level() < Level::Request && !object_body {
            return;
        }
        let Some(mut value) = decode(&self.request_content_type, bytes) else {
            return;
        };
        if object_body {
            if let Some(r) = self.event.object_ref.as_mut() {
                r.complete_from(&value);
            }
            if self.omit_managed_fields() {
                event::omit_managed_fields(&mut value);
            }
        }
        if self.level() >= Level::Request {
            self.event.request_object = Some(value);
        }
    }

    /// `responseStatus` from a `Status` answer, and `responseObject` at
    /// RequestResponse level for resource requests.
    fn response_object(&mut self, code: u16, media_type: &str, bytes: &Bytes) {
        let want_object = self.level() == Level::RequestResponse && self.event.object_ref.is_some();
        // Below RequestResponse only a Status answer is decoded (errors,
        // and the Status some deletes answer).
        let maybe_status = bytes.starts_with(br#"{"kind":"Status""#)
            || (media_type != "application/json"
                && (code >= 300 || self.event.verb.starts_with("delete")));
        if bytes.is_empty() || (!want_object && !maybe_status) {
            return;
        }
        let Some(mut value) = decode(media_type, bytes) else {
            return;
        };
        if value.get("kind").and_then(Value::as_str) == Some("Status") {
            self.event.response_status = Some(event::status_of(&value, code));
        }
        if want_object {
            if self.omit_managed_fields() {
                event::omit_managed_fields(&mut value);
            }
            self.event.response_object = Some(value);
        }
    }
}

/// A request or response body as JSON, by its media type: JSON (and the
/// JSON patch types), YAML (and YAML apply configurations), Kubernetes
/// Protobuf and CBOR; `None` for anything else or what does not decode.
fn decode(media_type: &str, bytes: &[u8]) -> Option<Value> {
    match media_type {
        ""
        | "application/json"
        | "application/merge-patch+json"
        | "application/json-patch+json"
        | "application/strategic-merge-patch+json" => serde_json::from_slice(bytes).ok(),
        "application/yaml" | "application/apply-patch+yaml" => serde_yaml::from_slice(bytes).ok(),
        "application/vnd.kubernetes.protobuf" => keelson_codec::protobuf::decode_object(bytes).ok(),
        "application/cbor" | "application/apply-patch+cbor" => {
            keelson_codec::cbor::decode(bytes).ok()
        }
        _ => None,
    }
}

/// A response body that writes `ResponseComplete` once it ends or is
/// dropped (a watch the client closed).
struct Completing {
    inner: Body,
    rec: Option<Box<Record>>,
}

impl Completing {
    fn finish(&mut self) {
        if let Some(mut rec) = self.rec.take() {
            rec.emit_later(Stage::ResponseComplete);
        }
    }
}

impl HttpBody for Completing {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.finish();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Completing {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An auditor logging everything at `level` to a file in `dir`.
    fn auditor(dir: &std::path::Path, level: &str) -> (Arc<Auditor>, PathBuf) {
        let policy = dir.join("policy.yaml");
        std::fs::write(
            &policy,
            format!("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: {level}\n"),
        )
        .unwrap();
        let log = dir.join("audit.log");
        let flags = AuditFlags {
            audit_policy_file: Some(policy),
            audit_log_path: Some(log.clone()),
            audit_log_format: "json".into(),
            ..Default::default()
        };
        (Auditor::from_flags(&flags).unwrap().unwrap(), log)
    }

    fn lines(log: &std::path::Path, n: usize) -> Vec<Value> {
        for _ in 0..200 {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if text.lines().count() >= n {
                return text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("fewer than {n} events in {}", log.display());
    }

    #[tokio::test]
    async fn a_panic_writes_the_panic_stage() {
        let dir = tempfile::tempdir().unwrap();
        let (a, log) = auditor(dir.path(), "Metadata");
        let (parts, ()) = http::Request::get("/api/v1/namespaces/d/pods?limit=1")
            .header("audit-id", "abc")
            .body(())
            .unwrap()
            .into_parts();
        let q = crate::http_util::Query::parse(parts.uri.query());
        let info = RequestInfo::new(&parts.method, parts.uri.path(), &q);
        let mut audit = begin(Some(&a), &parts, &audit_id(&parts.headers));
        let user = UserInfo::new("u", vec!["g".into()]);
        authenticated(&mut audit, Some(&a), &user, &parts, &info).await;
        let handler = async { panic!("boom") };
        let caught = AssertUnwindSafe(guard(&mut audit, handler))
            .catch_unwind()
            .await;
        assert!(caught.is_err(), "the panic goes on to the recovery filter");
        let evs = lines(&log, 2);
        assert_eq!(evs[0]["stage"], "RequestReceived");
        assert_eq!(evs[1]["stage"], "Panic");
        assert_eq!(evs[1]["auditID"], "abc");
        assert_eq!(evs[1]["verb"], "list");
        assert_eq!(
            evs[1]["responseStatus"],
            serde_json::json!({"metadata": {}, "status": "Failure", "message": "APIServer panic'd: boom", "reason": "InternalError", "code": 500})
        );
    }

    #[test]
    fn the_audit_id_is_the_clients_else_a_new_uuid() {
        let mut h = HeaderMap::new();
        let a = audit_id(&h);
        let b = audit_id(&h);
        let parsed = uuid::Uuid::parse_str(a.to_str().unwrap()).unwrap();
        assert_eq!(parsed.get_version(), Some(uuid::Version::Random));
        assert_eq!(a.len(), 36);
        assert_ne!(a, b, "a new ID each request");
        // An empty header is no ID (kube: `len(auditID) == 0`).
        h.insert("Audit-ID", HeaderValue::from_static(""));
        assert!(uuid::Uuid::parse_str(audit_id(&h).to_str().unwrap()).is_ok());
        // Anything else is kept as sent, not validated nor truncated.
        h.insert("Audit-ID", HeaderValue::from_static("my-id"));
        assert_eq!(audit_id(&h), "my-id");
        h.insert("Audit-ID", HeaderValue::from_bytes(b"caf\xe9").unwrap());
        assert_eq!(audit_id(&h).as_bytes(), b"caf\xe9");
    }

    #[test]
    fn flags_are_checked() {
        let flags = AuditFlags {
            audit_log_path: Some("x.log".into()),
            audit_log_format: "legacy".into(),
            audit_log_maxage: -1,
            ..Default::default()
        };
        let e = Auditor::from_flags(&flags).err().unwrap().to_string();
        assert_eq!(
            e,
            "--audit-log-format=legacy is not supported by Keelson; use json; --audit-log-maxage -1 can't be a negative number"
        );
        let off = AuditFlags {
            audit_log_format: "json".into(),
            ..Default::default()
        };
        assert!(Auditor::from_flags(&off).unwrap().is_none());
    }
}
