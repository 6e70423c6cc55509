//! Authentication: who sends a request (kube-apiserver's
//! `WithAuthentication` over its union of authenticators). In kube's order,
//! the first that recognises the request wins:
//!
//! 1. an x509 client certificate signed by the cluster CA (verified by the
//!    TLS layer; CN → user, O → groups), see [`PeerUser`];
//! 2. a bearer token: the admin token written on first start
//!    (`keelson-admin` in `system:masters`), the static token file
//!    (`--token-auth-file`), then ServiceAccount JWTs (valid signature,
//!    issuer, audience and expiry, and the ServiceAccount still there
//!    with the token's uid);
//! 3. anonymous (`--anonymous-auth`, default on): `system:anonymous` in
//!    `system:unauthenticated`.
//!
//! A presented bearer token that no authenticator accepts is `401`, as is
//! any unauthenticated request when anonymous auth is off. Every
//! authenticated user is also in `system:authenticated`.

use std::sync::Arc;

use http::HeaderMap;
use keelson_api::{ObjectKey, StoreApi};
use keelson_apimachinery::meta::meta_str;
use keelson_auth::authn::TokenFile;
use keelson_auth::serviceaccount::TokenAuthority;
pub use keelson_auth::UserInfo;

/// The user of the connection's verified client certificate, put in each
/// request's extensions by the server.
#[derive(Debug, Clone)]
pub struct PeerUser(pub Arc<UserInfo>);

/// The authenticators of one gateway.
pub struct Authenticators {
    /// The admin bearer token.
    pub admin_token: String,
    pub token_file: Option<TokenFile>,
    pub service_accounts: Arc<TokenAuthority>,
    pub anonymous: bool,
    /// ServiceAccount lookups (a token is valid only while its
    /// ServiceAccount exists with the token's uid).
    pub store: Arc<dyn StoreApi>,
}

/// The user the admin bearer token authenticates as.
pub fn admin_token_user() -> UserInfo {
    UserInfo::new("keelson-admin", vec![keelson_auth::user::MASTERS.into()])
}

impl Authenticators {
    /// The user a request authenticates as, or `None` for `401`.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        peer: Option<&PeerUser>,
    ) -> Option<UserInfo> {
        if let Some(PeerUser(u)) = peer {
            return Some(u.as_ref().clone().with_authenticated());
        }
        match bearer_token(headers) {
            Some(token) => self
                .authenticate_token(token)
                .await
                .map(UserInfo::with_authenticated),
            None => self.anonymous.then(UserInfo::anonymous),
        }
    }

    /// The user of a bearer token (also TokenReview's answer).
    pub async fn authenticate_token(&self, token: &str) -> Option<UserInfo> {
        if constant_time_eq(token.as_bytes(), self.admin_token.as_bytes()) {
            return Some(admin_token_user());
        }
        if let Some(u) = self.token_file.as_ref().and_then(|f| f.authenticate(token)) {
            return Some(u);
        }
        let claims = self.service_accounts.verify(token)?;
        let (ns, sa) = (
            &claims.kubernetes.namespace,
            &claims.kubernetes.serviceaccount,
        );
        // Bound to the ServiceAccount's uid: a deleted (or re-created)
        // ServiceAccount's tokens stop working.
        let key = ObjectKey::new(
            keelson_api::GroupResource::new("", "serviceaccounts"),
            ns,
            &sa.name,
        );
        let live = self.store.get(&key).await.ok()?;
        if meta_str(&live, "uid") != sa.uid || !meta_str(&live, "deletionTimestamp").is_empty() {
            return None;
        }
        let mut user = UserInfo::service_account(ns, &sa.name, &sa.uid);
        user.extra.insert(
            "authentication.kubernetes.io/credential-id".into(),
            vec![format!("JTI={}", claims.jti)],
        );
        Some(user)
    }
}

/// The bearer token of an `Authorization: Bearer` header (kube trims it;
/// an empty token is no token).
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let h = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = h.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Constant-time comparison: no early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
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
    fn bearer_tokens() {
        assert_eq!(bearer_token(&headers("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("Bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(&headers("bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("Basic abc")), None);
        assert_eq!(bearer_token(&headers("Bearer ")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
