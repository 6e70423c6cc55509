//! kube-apiserver's `resourceVersion` × `resourceVersionMatch` tables for
//! get, list and watch — the one place they are written down.
//!
//! | verb  | `resourceVersion` unset | `"0"`                  | `N`                    |
//! |-------|-------------------------|------------------------|------------------------|
//! | get   | most recent             | any                    | not older than N       |
//! | list  | most recent (consistent)| any                    | not older than N, or exactly N with `resourceVersionMatch=Exact` |
//! | watch | initial state, then changes | initial state (any), then changes | changes after N |
//!
//! A `continue` token fixes a list's snapshot (or continues from the
//! current state when the token says so); `sendInitialEvents` on a watch
//! (which requires `resourceVersionMatch=NotOlderThan`) starts with the
//! consistent state and marks its end, or with `false` skips it.
//! Everything here is pure: the outputs say which state to read, the
//! callers do the reading.

use crate::field::FieldError;
use crate::options::continue_token::ContinueToken;
use crate::options::invalid_options;
use crate::status::{ApiError, ApiResult};

/// Which state a list (or a get) reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRevision {
    /// The store's current revision (a consistent read, KEP-2340): the cache
    /// first catches up with the store's current revision.
    Consistent,
    /// Whatever the cache holds (`resourceVersion=0`).
    Any,
    /// At least this revision: wait up to 3 s for it, then `504 Timeout`
    /// (`Too large resource version`).
    NotOlderThan(u64),
    /// Exactly this revision (`resourceVersionMatch=Exact`, continue tokens):
    /// a revision no longer retained fails with `410 Expired`.
    Exact(u64),
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchStart {
    /// Synthetic `Added` events for the current consistent state, then every
    /// change after it. With `initial_events_end`, an initial-events-end
    /// marker separates the two (`sendInitialEvents=true`).
    InitialState { initial_events_end: bool },
    /// Synthetic `Added` events for whatever state the cache holds
    /// (`resourceVersion=0`), then every change after it.
    InitialStateAny,
    /// Every change after this revision. A revision the cache has not
    /// reached waits up to 3 s (then `504`); one older than the cache's and
    /// the store's history fails with `410 Expired`.
    After(u64),
    /// Every change after the current revision, no initial events.
    Now,
}

/// `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// `NotOlderThan`.
    NotOlderThan,
    /// `Exact`.
    Exact,
}

impl ResourceVersionMatch {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
            ResourceVersionMatch::Exact => "Exact",
        }
    }

    /// `""` is `None`; an unknown value is `Err(())`.
    fn parse(s: &str) -> Result<Option<Self>, ()> {
        match s {
            "" => Ok(None),
            "NotOlderThan" => Ok(Some(ResourceVersionMatch::NotOlderThan)),
            "Exact" => Ok(Some(ResourceVersionMatch::Exact)),
            _ => Err(()),
        }
    }
}

const MATCH_VALUES: &[&str] = &["Exact", "NotOlderThan", ""];

fn list_options_invalid(errs: Vec<FieldError>) -> ApiError {
    invalid_options("ListOptions", &errs)
}

/// A get's or a list's `resourceVersion` as a revision: `""` and `"0"` are
/// none; anything else must be a revision (`400` otherwise).
pub fn parse_revision(rv: &str) -> ApiResult<Option<u64>> {
    match rv {
        "" | "0" => Ok(None),
        s => {
            // etcd3's `ParseResourceVersion` (Go's `strconv.ParseUint`, as a
            // `resourceVersion` field error) under the storage's
            // `invalid resource version: %v`.
            let why = if !s.bytes().all(|b| b.is_ascii_digit()) {
                "invalid syntax"
            } else if let Ok(n) = s.parse::<u64>() {
                return Ok(Some(n));
            } else {
                "value out of range"
            };
            Err(ApiError::bad_request(format!(
                "invalid resource version: resourceVersion: Invalid value: {s:?}: strconv.ParseUint: parsing {s:?}: {why}"
            )))
        }
    }
}

/// The get table: unset reads the most recent state, `"0"` any, `N` a state
/// not older than N.
pub fn get_revision(rv: &str) -> ApiResult<ListRevision> {
    Ok(match parse_revision(rv)? {
        Some(n) => ListRevision::NotOlderThan(n),
        None if rv == "0" => ListRevision::Any,
        None => ListRevision::Consistent,
    })
}

/// The list table's validation (kube's `ValidateListOptions`, `422` with
/// every problem at once); `send_initial_events` is whether that parameter
/// was given at all.
pub(crate) fn validate_list(
    rv: &str,
    rv_match: &str,
    cont: &str,
    send_initial_events: bool,
) -> ApiResult<Option<ResourceVersionMatch>> {
    let mut errs = Vec::new();
    if send_initial_events {
        errs.push(FieldError::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    let parsed = ResourceVersionMatch::parse(rv_match);
    match parsed {
        Ok(None) => {}
        Ok(Some(m)) => {
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
            if m == ResourceVersionMatch::Exact && rv == "0" {
                errs.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        Err(()) => errs.push(FieldError::not_supported(
            "resourceVersionMatch",
            rv_match,
            MATCH_VALUES,
        )),
    }
    if !errs.is_empty() {
        return Err(list_options_invalid(errs));
    }
    Ok(parsed.unwrap_or_default())
}

/// The list table's answer for options that passed [`validate_list`]: the
/// state to read and, for a continued list, the token.
pub(crate) fn resolve_list(
    rv: &str,
    rv_match: Option<ResourceVersionMatch>,
    cont: &str,
) -> ApiResult<(ListRevision, Option<ContinueToken>)> {
    let parsed = parse_revision(rv)?;
    if !cont.is_empty() {
        if parsed.is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let t = ContinueToken::decode(cont)?;
        let revision = match t.revision {
            0 => ListRevision::Consistent,
            r => ListRevision::Exact(r),
        };
        return Ok((revision, Some(t)));
    }
    let revision = match (parsed, rv_match) {
        (None, _) if rv == "0" => ListRevision::Any,
        (None, _) => ListRevision::Consistent,
        (Some(r), Some(ResourceVersionMatch::Exact)) => ListRevision::Exact(r),
        (Some(r), _) => ListRevision::NotOlderThan(r),
    };
    Ok((revision, None))
}

/// A validated watch start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WatchTable {
    pub start: WatchStart,
    pub send_initial_events: Option<bool>,
    pub rv_match: Option<ResourceVersionMatch>,
}

/// The watch table, validated: `sendInitialEvents` must be a boolean
/// (`400`), `resourceVersionMatch` is only allowed with it and must then be
/// `NotOlderThan`, `resourceVersion` must be a revision (`422`).
pub(crate) fn watch_table(
    rv: &str,
    rv_match: &str,
    send_initial_events: Option<&str>,
) -> ApiResult<WatchTable> {
    let send = match send_initial_events {
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
    let Ok(parsed_match) = ResourceVersionMatch::parse(rv_match) else {
        return Err(list_options_invalid(vec![FieldError::not_supported(
            "resourceVersionMatch",
            rv_match,
            MATCH_VALUES,
        )]));
    };
    match (send, parsed_match) {
        (None, Some(_)) => {
            return Err(list_options_invalid(vec![FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            )]))
        }
        (Some(_), m) if m != Some(ResourceVersionMatch::NotOlderThan) => {
            return Err(list_options_invalid(vec![FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )]))
        }
        _ => {}
    }
    let parsed_rv = match rv {
        "" | "0" => None,
        s => Some(s.parse::<u64>().map_err(|_| {
            list_options_invalid(vec![FieldError::invalid(
                "resourceVersion",
                s,
                "must be a non-negative integer",
            )])
        })?),
    };
    let start = match (send, parsed_rv) {
        (Some(true), _) => WatchStart::InitialState {
            initial_events_end: true,
        },
        (Some(false), Some(r)) | (None, Some(r)) => WatchStart::After(r),
        (Some(false), None) => WatchStart::Now,
        (None, None) if rv == "0" => WatchStart::InitialStateAny,
        (None, None) => WatchStart::InitialState {
            initial_events_end: false,
        },
    };
    Ok(WatchTable {
        start,
        send_initial_events: send,
        rv_match: parsed_match,
    })
}

#[cfg(test)]
mod tests;
