//! Authentication: who sends a request. The first authenticator that
//! recognises the request wins; a request none recognises is anonymous,
//! and anonymous requests may reach only the public paths (kube-apiserver's
//! `system:public-info-viewer`: version and health).
//!
//! Today there is one authenticator, the admin bearer token written on
//! first start.

use http::HeaderMap;

use super::request_info::{RequestInfo, Target};
use super::State;

/// An authenticated user (kube's `user.Info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    /// The holder of the admin token.
    fn admin() -> Self {
        UserInfo {
            name: "keelson-admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        }
    }

    /// An unauthenticated client.
    fn anonymous() -> Self {
        UserInfo {
            name: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
        }
    }
}

/// The user a request authenticates as, or `None` for `401 Unauthorized`.
pub fn authenticate(state: &State, info: &RequestInfo, headers: &HeaderMap) -> Option<UserInfo> {
    if bearer_token_matches(&state.token, headers) {
        return Some(UserInfo::admin());
    }
    is_public(&info.target).then(UserInfo::anonymous)
}

/// Paths kube-apiserver serves to unauthenticated clients by default
/// (`system:public-info-viewer`).
fn is_public(t: &Target) -> bool {
    matches!(t, Target::Version | Target::Health { .. })
}

fn bearer_token_matches(expected: &str, headers: &HeaderMap) -> bool {
    let Some(h) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(token) = h.strip_prefix("Bearer ").map(str::trim) else {
        return false;
    };
    // Constant-time comparison: no early exit on the first differing byte.
    let (a, b) = (token.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(auth: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::AUTHORIZATION, auth.parse().unwrap());
        h
    }

    #[test]
    fn bearer_token() {
        assert!(bearer_token_matches("abc", &headers("Bearer abc")));
        assert!(bearer_token_matches("abc", &headers("Bearer  abc ")));
        assert!(!bearer_token_matches("abc", &headers("Bearer abd")));
        assert!(!bearer_token_matches("abc", &headers("Basic abc")));
        assert!(!bearer_token_matches("abc", &HeaderMap::new()));
    }

    #[test]
    fn public_paths() {
        assert!(is_public(&Target::Version));
        assert!(is_public(&Target::Health {
            endpoint: "readyz".into(),
            check: None
        }));
        assert!(!is_public(&Target::CoreGroup));
    }
}
