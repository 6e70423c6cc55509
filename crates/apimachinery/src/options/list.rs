//! `ListOptions`: the options of a list or (with `watch=true`) a watch.

use crate::options::continue_token::ContinueToken;
use crate::options::query::Query;
use crate::options::resource_version::{
    resolve_list, validate_list, watch_table, ListRevision, ResourceVersionMatch, WatchStart,
};
use crate::status::{ApiError, ApiResult};

/// What a list or a watch reads, from the resourceVersion tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    /// A list (`watch` unset) reads this state.
    List(ListRevision),
    /// A watch starts here.
    Watch(WatchStart),
}

/// Parsed and validated `ListOptions`.
///
/// A list ignores the watch-only parameters (`timeoutSeconds`,
/// `allowWatchBookmarks`) and a watch the list-only ones (`limit`,
/// `continue`), as kube-apiserver does. Selectors are kept as given: they
/// need the resource to be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOptions {
    /// `labelSelector` ("" selects everything).
    pub label_selector: String,
    /// `fieldSelector` ("" selects everything).
    pub field_selector: String,
    /// `resourceVersion` as given ("" when unset).
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `limit`: at most this many items; 0 is all (negative counts as 0).
    pub limit: usize,
    /// `continue`, decoded.
    pub continue_token: Option<ContinueToken>,
    /// `watch`.
    pub watch: bool,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents` (watch only; any value is `422` on a list).
    pub send_initial_events: Option<bool>,
    /// `timeoutSeconds` (watch only).
    pub timeout_seconds: Option<u64>,
    /// Which state is read, from the resourceVersion tables.
    pub read_from: ReadFrom,
}

impl ListOptions {
    /// Parse and validate as kube-apiserver does; `watch` decides which
    /// table applies.
    pub fn from_query(q: &Query) -> ApiResult<ListOptions> {
        // kube decodes every parameter before it validates any.
        limit_of(q)?;
        if q.flag("watch") {
            Self::watch_from_query(q)
        } else {
            Self::list_from_query(q)
        }
    }

    fn list_from_query(q: &Query) -> ApiResult<ListOptions> {
        let rv = q.get("resourceVersion").unwrap_or("");
        let cont = q.get("continue").unwrap_or("");
        let rv_match = validate_list(
            rv,
            q.get("resourceVersionMatch").unwrap_or(""),
            cont,
            q.has("sendInitialEvents"),
        )?;
        let limit = limit_of(q)?;
        let (revision, continue_token) = resolve_list(rv, rv_match, cont)?;
        Ok(ListOptions {
            label_selector: selector(q, "labelSelector"),
            field_selector: selector(q, "fieldSelector"),
            resource_version: rv.to_string(),
            resource_version_match: rv_match,
            limit,
            continue_token,
            watch: false,
            allow_watch_bookmarks: q.flag("allowWatchBookmarks"),
            send_initial_events: None,
            timeout_seconds: None,
            read_from: ReadFrom::List(revision),
        })
    }

    fn watch_from_query(q: &Query) -> ApiResult<ListOptions> {
        let rv = q.get("resourceVersion").unwrap_or("");
        let table = watch_table(
            rv,
            q.get("resourceVersionMatch").unwrap_or(""),
            q.get("sendInitialEvents"),
        )?;
        let timeout_seconds =
            match q.get("timeoutSeconds") {
                None => None,
                Some(s) => Some(s.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("invalid timeoutSeconds {:?}", s))
                })?),
            };
        Ok(ListOptions {
            label_selector: selector(q, "labelSelector"),
            field_selector: selector(q, "fieldSelector"),
            resource_version: rv.to_string(),
            resource_version_match: table.rv_match,
            limit: 0,
            continue_token: None,
            watch: true,
            allow_watch_bookmarks: q.flag("allowWatchBookmarks"),
            send_initial_events: table.send_initial_events,
            timeout_seconds,
            read_from: ReadFrom::Watch(table.start),
        })
    }

    /// The state a list reads; `None` for a watch.
    pub fn list_revision(&self) -> Option<ListRevision> {
        match self.read_from {
            ReadFrom::List(r) => Some(r),
            ReadFrom::Watch(_) => None,
        }
    }

    /// Where a watch starts; `None` for a list.
    pub fn watch_start(&self) -> Option<WatchStart> {
        match self.read_from {
            ReadFrom::Watch(s) => Some(s),
            ReadFrom::List(_) => None,
        }
    }

    /// The key a continued list resumes after.
    pub fn start_after(&self) -> Option<&str> {
        self.continue_token.as_ref().map(|t| t.start_after.as_str())
    }
}

fn selector(q: &Query, key: &str) -> String {
    q.get(key).unwrap_or("").to_string()
}

/// `limit` as kube's parameter codec reads it (Go's `strconv.ParseInt`,
/// whose error is the `400` message); a negative limit is no limit.
fn limit_of(q: &Query) -> ApiResult<usize> {
    let s = match q.get("limit") {
        None | Some("") => return Ok(0),
        Some(s) => s,
    };
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::bad_request(format!(
            "strconv.ParseInt: parsing {s:?}: invalid syntax"
        )));
    }
    let n = s.parse::<i64>().map_err(|_| {
        ApiError::bad_request(format!(
            "strconv.ParseInt: parsing {s:?}: value out of range"
        ))
    })?;
    Ok(usize::try_from(n.max(0)).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_limit_is_go_parse_int_wording() {
        let err = opts("limit=abc").unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (400, "strconv.ParseInt: parsing \"abc\": invalid syntax")
        );
        assert_eq!(
            opts("limit=99999999999999999999").unwrap_err().message,
            "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"
        );
        assert_eq!(
            opts("watch=true&limit=1.5").unwrap_err().message,
            "strconv.ParseInt: parsing \"1.5\": invalid syntax"
        );
        assert_eq!(opts("limit=%2B3").unwrap().limit, 3);
        assert_eq!(opts("limit=-3").unwrap().limit, 0);
    }

    fn opts(q: &str) -> ApiResult<ListOptions> {
        ListOptions::from_query(&Query::parse(Some(q)))
    }

    fn snapshot(q: &str) -> ListRevision {
        opts(q).unwrap().list_revision().unwrap()
    }

    // Moved from the gateway's list.rs with its assertions unchanged.
    #[test]
    fn the_resource_version_table() {
        assert_eq!(snapshot(""), ListRevision::Consistent);
        assert_eq!(snapshot("resourceVersion=0"), ListRevision::Any);
        assert_eq!(snapshot("resourceVersion=5"), ListRevision::NotOlderThan(5));
        assert_eq!(
            snapshot("resourceVersion=5&resourceVersionMatch=NotOlderThan"),
            ListRevision::NotOlderThan(5)
        );
        assert_eq!(
            snapshot("resourceVersion=5&resourceVersionMatch=Exact"),
            ListRevision::Exact(5)
        );
        let msg = |q: &str| opts(q).unwrap_err().message;
        assert_eq!(msg("resourceVersionMatch=Exact"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
        assert_eq!(msg("resourceVersion=0&resourceVersionMatch=Exact"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
        assert_eq!(msg("resourceVersion=1&resourceVersionMatch=foo"), "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"");
        assert_eq!(msg("sendInitialEvents=true"), "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
        let tok = ContinueToken::new(9, "ns/a").encode();
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
            (o.list_revision().unwrap(), o.limit, o.start_after()),
            (ListRevision::Exact(9), 2, Some("ns/a"))
        );
        assert_eq!(opts("continue=%%%").unwrap_err().code, 400);
    }

    #[test]
    fn list_fields() {
        let o = opts("labelSelector=a%3Db&fieldSelector=metadata.name%3Dx&limit=7&allowWatchBookmarks=true&timeoutSeconds=bad").unwrap();
        assert_eq!(o.label_selector, "a=b");
        assert_eq!(o.field_selector, "metadata.name=x");
        assert_eq!(o.limit, 7);
        assert!(!o.watch);
        assert_eq!(o.timeout_seconds, None);
        assert_eq!(o.watch_start(), None);
        assert_eq!(o.start_after(), None);
        assert_eq!(opts("limit=-3").unwrap().limit, 0);
        assert_eq!(opts("limit=").unwrap().limit, 0);
        let e = opts("limit=ten").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "strconv.ParseInt: parsing \"ten\": invalid syntax")
        );
        // kube decodes the parameters (400) before it validates them (422).
        assert_eq!(
            opts("limit=ten&resourceVersionMatch=foo").unwrap_err().code,
            400
        );
        assert_eq!(
            opts("limit=10&resourceVersionMatch=foo").unwrap_err().code,
            422
        );
    }

    #[test]
    fn watch_fields() {
        let o = opts("watch=true&resourceVersion=4&allowWatchBookmarks=1&timeoutSeconds=30&limit=2&continue=%%%&labelSelector=x").unwrap();
        assert!(o.watch && o.allow_watch_bookmarks);
        assert_eq!(o.timeout_seconds, Some(30));
        assert_eq!((o.limit, o.continue_token.as_ref()), (0, None));
        assert_eq!(o.label_selector, "x");
        assert_eq!(o.watch_start(), Some(WatchStart::After(4)));
        assert_eq!(o.list_revision(), None);
        assert_eq!(
            opts("watch=1").unwrap().read_from,
            ReadFrom::Watch(WatchStart::InitialState {
                initial_events_end: false
            })
        );
        assert_eq!(opts("watch=True").unwrap().timeout_seconds, None);
        assert!(!opts("watch=false").unwrap().watch);
        let e = opts("watch=true&timeoutSeconds=-1").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "invalid timeoutSeconds \"-1\"")
        );
        let o =
            opts("watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan").unwrap();
        assert_eq!(o.send_initial_events, Some(false));
        assert_eq!(
            o.resource_version_match,
            Some(ResourceVersionMatch::NotOlderThan)
        );
    }
}
