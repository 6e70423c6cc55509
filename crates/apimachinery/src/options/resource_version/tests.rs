//! Every cell of the get, list and watch tables, through the typed options.

use super::*;
use crate::options::{GetOptions, ListOptions, Query};

const PREFIX: &str = "ListOptions.meta.k8s.io \"\" is invalid: ";
const UNLESS: &str = "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided";
const WITH_CONTINUE: &str =
    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided";
const EXACT_ZERO: &str = "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"";
const UNSUPPORTED: &str = "resourceVersionMatch: Unsupported value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\"";
const LIST_SEND: &str = "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list";
const WATCH_UNLESS_SEND: &str = "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided";
const SEND_REQUIRES: &str = "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan";
const WATCH_BAD_RV: &str = "resourceVersion: Invalid value: \"x\": must be a non-negative integer";
const BAD_RV: &str = "invalid resource version: resourceVersion: Invalid value: \"x\": strconv.ParseUint: parsing \"x\": invalid syntax";
const RV_WITH_CONTINUE: &str = "specifying resource version is not allowed when using continue";

/// What one cell answers.
#[derive(Debug, PartialEq)]
enum Want<T> {
    Ok(T),
    /// `422 Invalid` with these field errors (aggregated when several).
    Invalid(&'static [&'static str]),
    /// `400 BadRequest` with this message.
    Bad(&'static str),
}
use Want::*;

/// A cell's answer as (code, reason, message), to compare with [`Want`].
type Got<T> = Result<T, (u16, String, String)>;

fn outcome<T>(r: ApiResult<T>) -> Got<T> {
    r.map_err(|e| (e.code, e.reason.as_str().to_string(), e.message))
}

impl<T> Want<T> {
    fn got(self) -> Got<T> {
        match self {
            Ok(v) => Result::Ok(v),
            Invalid(errs) => {
                let body = match errs {
                    [one] => one.to_string(),
                    many => format!("[{}]", many.join(", ")),
                };
                Err((422, "Invalid".into(), format!("{PREFIX}{body}")))
            }
            Bad(m) => Err((400, "BadRequest".into(), m.to_string())),
        }
    }
}

fn query(pairs: &[(&str, &str)]) -> Query {
    let s: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    Query::parse(Some(&s.join("&")))
}

#[test]
fn get_table() {
    let rows: [(&str, Want<ListRevision>); 4] = [
        ("", Ok(ListRevision::Consistent)),
        ("0", Ok(ListRevision::Any)),
        ("5", Ok(ListRevision::NotOlderThan(5))),
        ("x", Bad(BAD_RV)),
    ];
    for (rv, want) in rows {
        let got =
            outcome(GetOptions::from_query(&query(&[("resourceVersion", rv)])).map(|o| o.revision));
        assert_eq!(got, want.got(), "get resourceVersion={rv:?}");
    }
}

type ListCell = (ListRevision, Option<String>);

fn list(rv: &str, rv_match: &str, cont: &str) -> Got<ListCell> {
    let q = query(&[
        ("resourceVersion", rv),
        ("resourceVersionMatch", rv_match),
        ("continue", cont),
    ]);
    outcome(ListOptions::from_query(&q).map(|o| {
        (
            o.list_revision().unwrap(),
            o.start_after().map(str::to_string),
        )
    }))
}

#[test]
fn list_table_without_continue() {
    use ListRevision::*;
    let rows: [(&str, &str, Want<ListCell>); 16] = [
        ("", "", Ok((Consistent, None))),
        ("", "Exact", Invalid(&[UNLESS])),
        ("", "NotOlderThan", Invalid(&[UNLESS])),
        ("", "foo", Invalid(&[UNSUPPORTED])),
        ("0", "", Ok((Any, None))),
        ("0", "Exact", Invalid(&[EXACT_ZERO])),
        ("0", "NotOlderThan", Ok((Any, None))),
        ("0", "foo", Invalid(&[UNSUPPORTED])),
        ("5", "", Ok((NotOlderThan(5), None))),
        ("5", "Exact", Ok((Exact(5), None))),
        ("5", "NotOlderThan", Ok((NotOlderThan(5), None))),
        ("5", "foo", Invalid(&[UNSUPPORTED])),
        ("x", "", Bad(BAD_RV)),
        ("x", "Exact", Bad(BAD_RV)),
        ("x", "NotOlderThan", Bad(BAD_RV)),
        ("x", "foo", Invalid(&[UNSUPPORTED])),
    ];
    for (rv, m, want) in rows {
        assert_eq!(list(rv, m, ""), want.got(), "list rv={rv:?} match={m:?}");
    }
}

#[test]
fn list_table_with_continue() {
    use ListRevision::*;
    let tok = ContinueToken::new(9, "ns/a").encode();
    let at = |r| Ok((r, Some("ns/a".to_string())));
    let rows: [(&str, &str, Want<ListCell>); 16] = [
        ("", "", at(Exact(9))),
        ("", "Exact", Invalid(&[UNLESS, WITH_CONTINUE])),
        ("", "NotOlderThan", Invalid(&[UNLESS, WITH_CONTINUE])),
        ("", "foo", Invalid(&[UNSUPPORTED])),
        ("0", "", at(Exact(9))),
        ("0", "Exact", Invalid(&[WITH_CONTINUE, EXACT_ZERO])),
        ("0", "NotOlderThan", Invalid(&[WITH_CONTINUE])),
        ("0", "foo", Invalid(&[UNSUPPORTED])),
        ("5", "", Bad(RV_WITH_CONTINUE)),
        ("5", "Exact", Invalid(&[WITH_CONTINUE])),
        ("5", "NotOlderThan", Invalid(&[WITH_CONTINUE])),
        ("5", "foo", Invalid(&[UNSUPPORTED])),
        ("x", "", Bad(BAD_RV)),
        ("x", "Exact", Invalid(&[WITH_CONTINUE])),
        ("x", "NotOlderThan", Invalid(&[WITH_CONTINUE])),
        ("x", "foo", Invalid(&[UNSUPPORTED])),
    ];
    for (rv, m, want) in rows {
        assert_eq!(
            list(rv, m, &tok),
            want.got(),
            "continued list rv={rv:?} match={m:?}"
        );
    }
    // The token handed out with a 410 continues from the current state.
    let inconsistent = ContinueToken::new(0, "ns/b").encode();
    assert_eq!(
        list("", "", &inconsistent),
        Ok((Consistent, Some("ns/b".into()))).got()
    );
    assert_eq!(
        list("", "", "%%%"),
        Bad("invalid continue token: illegal base64 data").got()
    );
}

#[test]
fn list_forbids_send_initial_events() {
    for v in ["true", "false", "1", "bogus", ""] {
        let q = Query::parse(Some(&format!("sendInitialEvents={v}")));
        assert_eq!(
            outcome(ListOptions::from_query(&q).map(|_| ())),
            Invalid(&[LIST_SEND]).got(),
            "{v:?}"
        );
    }
    let q = Query::parse(Some("sendInitialEvents=true&resourceVersionMatch=foo"));
    assert_eq!(
        outcome(ListOptions::from_query(&q).map(|_| ())),
        Invalid(&[LIST_SEND, UNSUPPORTED]).got()
    );
}

fn watch(rv: &str, rv_match: &str, send: &str) -> Got<WatchStart> {
    let mut s = String::from("watch=true");
    for (k, v) in [("resourceVersion", rv), ("resourceVersionMatch", rv_match)] {
        if !v.is_empty() {
            s.push_str(&format!("&{k}={v}"));
        }
    }
    if send != "unset" {
        s.push_str(&format!("&sendInitialEvents={send}"));
    }
    outcome(ListOptions::from_query(&Query::parse(Some(&s))).map(|o| o.watch_start().unwrap()))
}

const RVS: [&str; 4] = ["", "0", "5", "x"];

#[test]
fn watch_table_without_send_initial_events() {
    use WatchStart::*;
    let rows: [(&str, Want<WatchStart>); 4] = [
        (
            "",
            Ok(InitialState {
                initial_events_end: false,
            }),
        ),
        ("0", Ok(InitialStateAny)),
        ("5", Ok(After(5))),
        ("x", Invalid(&[WATCH_BAD_RV])),
    ];
    for (rv, want) in rows {
        assert_eq!(watch(rv, "", "unset"), want.got(), "watch rv={rv:?}");
    }
    for rv in RVS {
        for m in ["Exact", "NotOlderThan"] {
            assert_eq!(
                watch(rv, m, "unset"),
                Invalid(&[WATCH_UNLESS_SEND]).got(),
                "watch rv={rv:?} match={m}"
            );
        }
        assert_eq!(
            watch(rv, "foo", "unset"),
            Invalid(&[UNSUPPORTED]).got(),
            "watch rv={rv:?}"
        );
    }
}

#[test]
fn watch_table_with_send_initial_events() {
    use WatchStart::*;
    let end = InitialState {
        initial_events_end: true,
    };
    let rows: [(&str, &str, Want<WatchStart>); 8] = [
        ("", "true", Ok(end)),
        ("0", "true", Ok(end)),
        ("5", "true", Ok(end)),
        ("x", "true", Invalid(&[WATCH_BAD_RV])),
        ("", "false", Ok(Now)),
        ("0", "false", Ok(Now)),
        ("5", "false", Ok(After(5))),
        ("x", "false", Invalid(&[WATCH_BAD_RV])),
    ];
    for (rv, send, want) in rows {
        assert_eq!(
            watch(rv, "NotOlderThan", send),
            want.got(),
            "watch rv={rv:?} send={send}"
        );
    }
    // `1` and `0` are booleans too.
    assert_eq!(watch("5", "NotOlderThan", "1"), Ok(end).got());
    assert_eq!(watch("5", "NotOlderThan", "0"), Ok(After(5)).got());
    for rv in RVS {
        for send in ["true", "false"] {
            for m in ["", "Exact"] {
                assert_eq!(
                    watch(rv, m, send),
                    Invalid(&[SEND_REQUIRES]).got(),
                    "watch rv={rv:?} match={m:?} send={send}"
                );
            }
            assert_eq!(
                watch(rv, "foo", send),
                Invalid(&[UNSUPPORTED]).got(),
                "watch rv={rv:?} send={send}"
            );
        }
    }
}

#[test]
fn watch_table_with_a_bad_send_initial_events() {
    for rv in RVS {
        for m in ["", "Exact", "NotOlderThan", "foo"] {
            assert_eq!(
                watch(rv, m, "maybe"),
                Bad("sendInitialEvents: invalid value \"maybe\"").got(),
                "watch rv={rv:?} match={m:?}"
            );
        }
    }
}

// Moved from the gateway's watch.rs: its internal start enum became
// `WatchStart` (resourceVersion=0 without sendInitialEvents is
// `InitialStateAny`, which the gateway derived from the same query).
#[test]
fn resource_version_semantics() {
    let start = |q: &str| {
        ListOptions::from_query(&Query::parse(Some(&format!("watch=true&{q}"))))
            .map(|o| o.watch_start().unwrap())
    };
    assert_eq!(
        start("").unwrap(),
        WatchStart::InitialState {
            initial_events_end: false
        }
    );
    assert_eq!(
        start("resourceVersion=0").unwrap(),
        WatchStart::InitialStateAny
    );
    assert_eq!(start("resourceVersion=12").unwrap(), WatchStart::After(12));
    assert_eq!(
        start("sendInitialEvents=true&resourceVersionMatch=NotOlderThan").unwrap(),
        WatchStart::InitialState {
            initial_events_end: true
        }
    );
    let e = start("sendInitialEvents=true").err().unwrap();
    assert_eq!(e.code, 422);
    assert_eq!(e.message, "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
    let e = start("resourceVersionMatch=NotOlderThan&resourceVersion=1")
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
fn match_names() {
    assert_eq!(ResourceVersionMatch::Exact.as_str(), "Exact");
    assert_eq!(ResourceVersionMatch::NotOlderThan.as_str(), "NotOlderThan");
    assert_eq!(parse_revision("7").unwrap(), Some(7));
    assert_eq!(parse_revision("0").unwrap(), None);
}
