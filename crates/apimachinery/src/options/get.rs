//! `GetOptions`.

use crate::options::query::Query;
use crate::options::resource_version::{get_revision, ListRevision};
use crate::status::ApiResult;

/// Parsed and validated `GetOptions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetOptions {
    /// Which state the get reads (`Consistent`, `Any` or `NotOlderThan`).
    pub revision: ListRevision,
}

impl GetOptions {
    /// Parse `resourceVersion` (`400` for one that is not a revision);
    /// `resourceVersionMatch` is not an option of get and is ignored.
    pub fn from_query(q: &Query) -> ApiResult<GetOptions> {
        Ok(GetOptions {
            revision: get_revision(q.get("resourceVersion").unwrap_or(""))?,
        })
    }

    /// The revision the store must have reached before the read, if any.
    pub fn min_revision(&self) -> Option<u64> {
        match self.revision {
            ListRevision::NotOlderThan(n) | ListRevision::Exact(n) => Some(n),
            ListRevision::Consistent | ListRevision::Any => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(q: &str) -> ApiResult<GetOptions> {
        GetOptions::from_query(&Query::parse(Some(q)))
    }

    #[test]
    fn the_get_table() {
        let rev = |q: &str| get(q).unwrap().revision;
        assert_eq!(rev(""), ListRevision::Consistent);
        assert_eq!(rev("resourceVersion="), ListRevision::Consistent);
        assert_eq!(rev("resourceVersion=0"), ListRevision::Any);
        assert_eq!(rev("resourceVersion=12"), ListRevision::NotOlderThan(12));
        // resourceVersionMatch is not a get option.
        assert_eq!(
            rev("resourceVersion=12&resourceVersionMatch=Exact"),
            ListRevision::NotOlderThan(12)
        );
        assert_eq!(rev("resourceVersionMatch=bogus"), ListRevision::Consistent);
        assert_eq!(get("resourceVersion=12").unwrap().min_revision(), Some(12));
        assert_eq!(get("resourceVersion=0").unwrap().min_revision(), None);
        assert_eq!(get("").unwrap().min_revision(), None);
        let e = get("resourceVersion=99999999999999999999").unwrap_err();
        assert_eq!(e.message, "invalid resource version: resourceVersion: Invalid value: \"99999999999999999999\": strconv.ParseUint: parsing \"99999999999999999999\": value out of range");
        for bad in ["x", "-1", "1.5"] {
            let e = get(&format!("resourceVersion={bad}")).unwrap_err();
            assert_eq!(
                (e.code, e.reason.as_str(), e.message),
                (
                    400,
                    "BadRequest",
                    format!("invalid resource version: resourceVersion: Invalid value: {bad:?}: strconv.ParseUint: parsing {bad:?}: invalid syntax")
                )
            );
        }
    }
}
