//! List options: `limit` / `continue` paging over a consistent snapshot, and
//! the `resourceVersion` × `resourceVersionMatch` semantics of
//! kube-apiserver's "Resource versions" table.

use std::time::Duration;

use base64::Engine;
use keelson_api::{GroupResource, ListResult};
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, FieldError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http_util::Query;
use crate::Backends;

/// How long a list for a revision the store has not reached waits for it
/// (kube-apiserver's watch cache waits 3 s) before `504`.
const FRESHNESS_WAIT: Duration = Duration::from_secs(3);

/// Which snapshot a list reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Snapshot {
    /// The current state (Most Recent, Any, or NotOlderThan a reached revision).
    Current,
    /// At least this revision: wait up to 3 s for it, then the current state.
    NotOlderThan(u64),
    /// Exactly this revision.
    Exact(u64),
}

/// Parsed list options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOptions {
    pub snapshot: Snapshot,
    /// 0 = everything.
    pub limit: usize,
    /// Continue after this key (`namespace/name`).
    pub start_after: Option<String>,
}

/// The opaque continue token.
#[derive(Debug, Serialize, Deserialize)]
struct Token {
    v: String,
    /// Snapshot revision; 0 = the current state (an "inconsistent" token).
    rv: u64,
    /// Last key returned.
    start: String,
}

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

fn encode_token(rv: u64, start: &str) -> String {
    let t = Token {
        v: TOKEN_VERSION.into(),
        rv,
        start: start.into(),
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(&t).unwrap_or_default())
}

fn decode_token(s: &str) -> ApiResult<Token> {
    let bad = |why: &str| ApiError::bad_request(format!("invalid continue token: {}", why));
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .map_err(|_| bad("illegal base64 data"))?;
    let t: Token = serde_json::from_slice(&bytes).map_err(|e| bad(&e.to_string()))?;
    if t.v != TOKEN_VERSION {
        return Err(bad("continue key is not supported by this server"));
    }
    Ok(t)
}

fn invalid(errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", &errs)
}

/// Parse and validate list options as kube-apiserver does.
pub fn parse(q: &Query) -> ApiResult<ListOptions> {
    let rv = q.get("resourceVersion").unwrap_or("");
    let rv_match = q.get("resourceVersionMatch").unwrap_or("");
    let cont = q.get("continue").unwrap_or("");
    let mut errs = Vec::new();
    if q.has("sendInitialEvents") {
        errs.push(FieldError::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    match rv_match {
        "" => {}
        "Exact" | "NotOlderThan" => {
            if rv.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !cont.is_empty() {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if rv_match == "Exact" && rv == "0" {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            "resourceVersionMatch",
            other,
            &["Exact", "NotOlderThan", ""],
        )),
    }
    if !errs.is_empty() {
        return Err(invalid(errs));
    }
    let limit = match q.get("limit") {
        None | Some("") => 0,
        Some(s) => s
            .parse::<i64>()
            .map(|n| n.max(0) as usize)
            .map_err(|_| ApiError::bad_request(format!("invalid limit {:?}", s)))?,
    };
    let parsed_rv = match rv {
        "" | "0" => None,
        s => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {:?}", s)))?,
        ),
    };
    if !cont.is_empty() {
        if parsed_rv.is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let t = decode_token(cont)?;
        return Ok(ListOptions {
            snapshot: if t.rv == 0 {
                Snapshot::Current
            } else {
                Snapshot::Exact(t.rv)
            },
            limit,
            start_after: Some(t.start),
        });
    }
    let snapshot = match (parsed_rv, rv_match) {
        (None, _) => Snapshot::Current,
        (Some(r), "Exact") => Snapshot::Exact(r),
        (Some(r), _) => Snapshot::NotOlderThan(r),
    };
    Ok(ListOptions {
        snapshot,
        limit,
        start_after: None,
    })
}

/// Read the snapshot the options ask for.
pub async fn read(
    b: &Backends,
    gr: &GroupResource,
    ns: Option<&str>,
    opts: &ListOptions,
) -> ApiResult<ListResult> {
    match opts.snapshot {
        Snapshot::Current => b.store.list(gr, ns).await,
        Snapshot::NotOlderThan(r) => {
            require_revision(b, r).await?;
            b.store.list(gr, ns).await
        }
        Snapshot::Exact(r) => {
            require_revision(b, r).await?;
            match b.store.list_at(gr, ns, r).await {
                Err(e) if e.code == 410 && opts.start_after.is_some() => {
                    Err(expired_continue(opts.start_after.as_deref().unwrap_or("")))
                }
                other => other,
            }
        }
    }
}

/// Wait (up to 3 s) until the store has reached `rev`; the current revision.
async fn wait_for(b: &Backends, rev: u64) -> ApiResult<u64> {
    let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
    loop {
        let current = b.store.current_revision().await?;
        if current >= rev || tokio::time::Instant::now() >= deadline {
            return Ok(current);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait (up to 3 s) for `rev`, then `504 Too large resource version` if the
/// store is still behind it (reads "not older than" a revision: get, list,
/// watch).
pub async fn require_revision(b: &Backends, rev: u64) -> ApiResult<()> {
    let current = wait_for(b, rev).await?;
    if current < rev {
        return Err(ApiError::too_large_resource_version(rev, current));
    }
    Ok(())
}

/// A `resourceVersion` query value as a revision; "" and "0" mean none.
pub fn parse_resource_version(q: &Query) -> ApiResult<Option<u64>> {
    match q.get("resourceVersion").unwrap_or("") {
        "" | "0" => Ok(None),
        s => s
            .parse::<u64>()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {:?}", s))),
    }
}

/// kube's 410 for a continue token older than the retention window, with a
/// fresh token that continues inconsistently from the current state.
fn expired_continue(start: &str) -> ApiError {
    let mut e = ApiError::new(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    e.continue_token = Some(encode_token(0, start));
    e
}

fn key_of(o: &Value) -> String {
    format!("{}/{}", meta_str(o, "namespace"), meta_str(o, "name"))
}

/// One page of a filtered snapshot.
pub struct Page {
    pub items: Vec<Value>,
    pub continue_token: Option<String>,
    pub remaining: Option<u64>,
}

/// Cut one page out of the filtered items (in key order).
pub fn page(items: Vec<Value>, snapshot_rv: u64, opts: &ListOptions, selectors_set: bool) -> Page {
    let mut items: Vec<Value> = match &opts.start_after {
        Some(start) => items.into_iter().filter(|o| key_of(o) > *start).collect(),
        None => items,
    };
    items.sort_by_key(key_of);
    if opts.limit == 0 || items.len() <= opts.limit {
        return Page {
            items,
            continue_token: None,
            remaining: None,
        };
    }
    let rest = items.split_off(opts.limit);
    let last = items.last().map(key_of).unwrap_or_default();
    Page {
        items,
        continue_token: Some(encode_token(snapshot_rv, &last)),
        remaining: (!selectors_set).then_some(rest.len() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(q: &str) -> ApiResult<ListOptions> {
        parse(&Query::parse(Some(q)))
    }

    #[test]
    fn the_resource_version_table() {
        assert_eq!(opts("").unwrap().snapshot, Snapshot::Current);
        assert_eq!(
            opts("resourceVersion=0").unwrap().snapshot,
            Snapshot::Current
        );
        assert_eq!(
            opts("resourceVersion=5").unwrap().snapshot,
            Snapshot::NotOlderThan(5)
        );
        assert_eq!(
            opts("resourceVersion=5&resourceVersionMatch=NotOlderThan")
                .unwrap()
                .snapshot,
            Snapshot::NotOlderThan(5)
        );
        assert_eq!(
            opts("resourceVersion=5&resourceVersionMatch=Exact")
                .unwrap()
                .snapshot,
            Snapshot::Exact(5)
        );
        let msg = |q: &str| opts(q).unwrap_err().message;
        assert_eq!(msg("resourceVersionMatch=Exact"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
        assert_eq!(msg("resourceVersion=0&resourceVersionMatch=Exact"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
        assert_eq!(msg("resourceVersion=1&resourceVersionMatch=foo"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"");
        assert_eq!(msg("sendInitialEvents=true"), "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
        let tok = encode_token(9, "ns/a");
        assert_eq!(
            opts(&format!("continue={tok}&resourceVersion=3"))
                .unwrap_err()
                .message,
            "specifying resource version is not allowed when using continue"
        );
        assert!(opts(&format!(
            "continue={tok}&resourceVersionMatch=Exact&resourceVersion=3"
        ))
        .unwrap_err()
        .message
        .ends_with("resourceVersionMatch is forbidden when continue is provided"));
        let o = opts(&format!("continue={tok}&limit=2")).unwrap();
        assert_eq!(
            (o.snapshot, o.limit, o.start_after.as_deref()),
            (Snapshot::Exact(9), 2, Some("ns/a"))
        );
        assert_eq!(opts("continue=%%%").unwrap_err().code, 400);
    }

    #[test]
    fn pages() {
        let items: Vec<Value> = (0..5)
            .map(|i| json!({"metadata": {"namespace": "n", "name": format!("c{i}")}}))
            .collect();
        let o = ListOptions {
            snapshot: Snapshot::Current,
            limit: 2,
            start_after: None,
        };
        let p = page(items.clone(), 7, &o, false);
        assert_eq!(p.items.len(), 2);
        assert_eq!(p.remaining, Some(3));
        let t = decode_token(p.continue_token.as_deref().unwrap()).unwrap();
        assert_eq!((t.rv, t.start.as_str()), (7, "n/c1"));
        let o2 = ListOptions {
            snapshot: Snapshot::Exact(7),
            limit: 2,
            start_after: Some(t.start),
        };
        let p2 = page(items.clone(), 7, &o2, true);
        assert_eq!(p2.items[0]["metadata"]["name"], "c2");
        assert_eq!(p2.remaining, None);
        let o3 = ListOptions {
            snapshot: Snapshot::Exact(7),
            limit: 10,
            start_after: Some("n/c3".into()),
        };
        let p3 = page(items, 7, &o3, false);
        assert_eq!(
            (p3.items.len(), p3.continue_token.is_none(), p3.remaining),
            (1, true, None)
        );
    }
}
