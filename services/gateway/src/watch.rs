//! `?watch=true` on collections: a chunked stream of
//! `{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":...}` lines fed
//! by the store's change stream.
//!
//! resourceVersion semantics (kube-apiserver's): unset or `"0"` → synthetic
//! ADDED events for the current state, then changes; a revision → every
//! change after it; a compacted revision → one `ERROR` event carrying a 410
//! `Expired` Status. `sendInitialEvents=true` (with
//! `resourceVersionMatch=NotOlderThan`) ends the initial events with a
//! BOOKMARK annotated `k8s.io/initial-events-end: "true"`. Selector
//! transitions become ADDED / DELETED.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use keelson_api::{ChangeEvent, EventType};
use keelson_apimachinery::meta::set_meta_str;
use keelson_apimachinery::{ApiError, ApiResult, FieldError};
use keelson_registry::ResourceInfo;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::http_util::{Body, Query};
use crate::request_info::ResourceRequest;
use crate::Backends;
use keelson_selectors::{FieldSelector, LabelSelector};

/// Events buffered per watcher before its producer waits for the client.
const BUFFER: usize = 256;
/// How often a BOOKMARK is sent when the client allows them.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// Server-side cap when the client gives no `timeoutSeconds` (kube-apiserver's
/// `--min-request-timeout` default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// Where the stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Synthetic ADDED events for the current state first.
    InitialState { end_bookmark: bool },
    /// Every change after this revision.
    After(u64),
    /// Changes after the current revision, no initial events.
    Now,
}

/// Parsed and validated watch parameters.
struct Params {
    start: Start,
    labels: LabelSelector,
    fields: FieldSelector,
    bookmarks: bool,
    timeout: Duration,
}

fn list_options_invalid(errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", &errs)
}

fn parse_params(info: &ResourceInfo, q: &Query) -> ApiResult<Params> {
    let rv = q.get("resourceVersion").unwrap_or("");
    let rv_match = q.get("resourceVersionMatch").unwrap_or("");
    let send_initial = match q.get("sendInitialEvents") {
        None => None,
        Some("true" | "1") => Some(true),
        Some("false" | "0") => Some(false),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "sendInitialEvents: invalid value {:?}",
                other
            )))
        }
    };
    if !matches!(rv_match, "" | "NotOlderThan" | "Exact") {
        return Err(list_options_invalid(vec![FieldError::not_supported(
            "resourceVersionMatch",
            rv_match,
            &["Exact", "NotOlderThan", ""],
        )]));
    }
    match send_initial {
        None if !rv_match.is_empty() => {
            return Err(list_options_invalid(vec![FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            )]))
        }
        Some(_) if rv_match != "NotOlderThan" => {
            return Err(list_options_invalid(vec![FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )]))
        }
        _ => {}
    }
    let parsed_rv = if rv.is_empty() || rv == "0" {
        None
    } else {
        Some(rv.parse::<u64>().map_err(|_| {
            list_options_invalid(vec![FieldError::invalid(
                "resourceVersion",
                rv,
                "must be a non-negative integer",
            )])
        })?)
    };
    let start = match (send_initial, parsed_rv) {
        (Some(true), _) => Start::InitialState { end_bookmark: true },
        (Some(false), Some(r)) => Start::After(r),
        (Some(false), None) => Start::Now,
        (None, Some(r)) => Start::After(r),
        (None, None) => Start::InitialState {
            end_bookmark: false,
        },
    };
    let timeout = match q.get("timeoutSeconds") {
        Some(s) => Duration::from_secs(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {:?}", s)))?,
        ),
        None => DEFAULT_TIMEOUT,
    };
    Ok(Params {
        start,
        labels: LabelSelector::parse(q.get("labelSelector").unwrap_or(""))?,
        fields: FieldSelector::parse(
            q.get("fieldSelector").unwrap_or(""),
            &info.group,
            &info.plural,
        )?,
        bookmarks: q.flag("allowWatchBookmarks"),
        timeout,
    })
}

fn line(event_type: &str, object: &Value) -> Bytes {
    let mut b =
        serde_json::to_vec(&json!({"type": event_type, "object": object})).unwrap_or_default();
    b.push(b'\n');
    Bytes::from(b)
}

fn bookmark(info: &ResourceInfo, rv: u64, initial_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line(
        "BOOKMARK",
        &json!({"kind": info.kind, "apiVersion": info.api_version(), "metadata": metadata}),
    )
}

/// The event a watcher sees for a change, after its selectors.
fn visible(p: &Params, ev: ChangeEvent) -> Option<(&'static str, Value)> {
    let matches = |o: &Value| p.labels.matches(o) && p.fields.matches(o);
    let now = matches(&ev.object);
    let before = ev.prev_object.as_ref().map(matches).unwrap_or(false);
    match ev.event_type {
        EventType::Added => now.then_some(("ADDED", ev.object)),
        EventType::Modified => match (before, now) {
            (true, true) => Some(("MODIFIED", ev.object)),
            (false, true) => Some(("ADDED", ev.object)),
            (true, false) => {
                // kube sends the last matching state, at the new revision.
                let mut prev = ev.prev_object.unwrap_or(ev.object);
                set_meta_str(&mut prev, "resourceVersion", &ev.revision.to_string());
                Some(("DELETED", prev))
            }
            (false, false) => None,
        },
        EventType::Deleted => (before || now).then_some(("DELETED", ev.object)),
        EventType::Progress => None,
    }
}

/// Serve one watch request.
pub async fn serve(
    b: &Backends,
    info: &'static ResourceInfo,
    ri: &ResourceRequest,
    q: &Query,
) -> Result<Response<Body>, ApiError> {
    let p = parse_params(info, q)?;
    let ns = (!ri.namespace.is_empty()).then(|| ri.namespace.clone());
    let gr = info.gr();

    let (initial, after) = match p.start {
        Start::InitialState { .. } => {
            let list = b.store.list(&gr, ns.as_deref()).await?;
            (Some(list.items), list.resource_version)
        }
        Start::After(r) => {
            crate::list::require_revision(b, r).await?;
            (None, r)
        }
        Start::Now => (None, b.store.current_revision().await?),
    };
    let (tx, rx) = mpsc::channel::<Bytes>(BUFFER);
    match b.store.watch(&gr, ns.as_deref(), after).await {
        Ok(changes) => {
            tokio::spawn(pump(info, p, initial, after, changes, tx));
        }
        Err(e) if e.code == 410 => {
            // kube answers 200 and one ERROR event for a too-old revision.
            let _ = tx.try_send(line("ERROR", &e.to_status_json()));
        }
        Err(e) => return Err(e),
    }
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx)
        .map(|bytes| Ok::<_, Infallible>(Frame::data(bytes)));
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(resp)
}

/// Feed one watcher until the timeout, an error, or the client leaves.
async fn pump(
    info: &'static ResourceInfo,
    p: Params,
    initial: Option<Vec<Value>>,
    start_rv: u64,
    mut changes: keelson_api::ChangeStream,
    tx: mpsc::Sender<Bytes>,
) {
    let mut last_rv = start_rv;
    if let Some(items) = initial {
        for item in items {
            if p.labels.matches(&item)
                && p.fields.matches(&item)
                && tx.send(line("ADDED", &item)).await.is_err()
            {
                return;
            }
        }
        if let Start::InitialState { end_bookmark: true } = p.start {
            if tx.send(bookmark(info, last_rv, true)).await.is_err() {
                return;
            }
        }
    }
    let deadline = tokio::time::sleep(p.timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(BOOKMARK_INTERVAL);
    ticker.tick().await;
    loop {
        tokio::select! {
            _ = &mut deadline => {
                if p.bookmarks {
                    let _ = tx.send(bookmark(info, last_rv, false)).await;
                }
                return;
            }
            _ = ticker.tick(), if p.bookmarks => {
                if tx.send(bookmark(info, last_rv, false)).await.is_err() {
                    return;
                }
            }
            _ = tx.closed() => return,
            next = changes.next() => match next {
                None => return,
                Some(Err(e)) => {
                    let _ = tx.send(line("ERROR", &e.to_status_json())).await;
                    return;
                }
                Some(Ok(ev)) => {
                    last_rv = ev.revision;
                    if let Some((t, obj)) = visible(&p, ev) {
                        if tx.send(line(t, &obj)).await.is_err() {
                            return;
                        }
                    }
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(q: &str) -> ApiResult<Params> {
        let info = keelson_registry::catalog()
            .lookup("", "v1", "pods")
            .expect("pods");
        parse_params(info, &Query::parse(Some(q)))
    }

    #[test]
    fn resource_version_semantics() {
        assert_eq!(
            params("").unwrap().start,
            Start::InitialState {
                end_bookmark: false
            }
        );
        assert_eq!(
            params("resourceVersion=0").unwrap().start,
            Start::InitialState {
                end_bookmark: false
            }
        );
        assert_eq!(
            params("resourceVersion=12").unwrap().start,
            Start::After(12)
        );
        assert_eq!(
            params("sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
                .unwrap()
                .start,
            Start::InitialState { end_bookmark: true }
        );
        let e = params("sendInitialEvents=true").err().unwrap();
        assert_eq!(e.code, 422);
        assert_eq!(e.message, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
        let e = params("resourceVersionMatch=NotOlderThan&resourceVersion=1")
            .err()
            .unwrap();
        assert!(
            e.message.ends_with(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
            ),
            "{}",
            e.message
        );
    }

    #[test]
    fn selector_transitions() {
        let p = params("labelSelector=app%3Dx").unwrap();
        let obj = |app: &str| json!({"metadata": {"name": "p", "resourceVersion": "5", "labels": {"app": app}}});
        let ev = |t, o: Value, prev: Option<Value>| ChangeEvent {
            revision: 7,
            event_type: t,
            object: o,
            prev_object: prev,
        };
        assert_eq!(
            visible(&p, ev(EventType::Modified, obj("x"), Some(obj("y"))))
                .unwrap()
                .0,
            "ADDED"
        );
        let (t, o) = visible(&p, ev(EventType::Modified, obj("y"), Some(obj("x")))).unwrap();
        assert_eq!(
            (
                t,
                o["metadata"]["labels"]["app"].as_str(),
                o["metadata"]["resourceVersion"].as_str()
            ),
            ("DELETED", Some("x"), Some("7"))
        );
        assert!(visible(&p, ev(EventType::Modified, obj("y"), Some(obj("z")))).is_none());
        assert_eq!(
            visible(&p, ev(EventType::Modified, obj("x"), Some(obj("x"))))
                .unwrap()
                .0,
            "MODIFIED"
        );
    }
}
