//! Authentication: who sends a request (kube-apiserver's
//! `WithAuthentication` over its union of authenticators). In kube's order,
//! the first that recognises the request wins:
//!
//! 1. an x509 client certificate signed by the cluster CA (verified by the
//!    TLS layer; CN → user, O → groups), see [`PeerUser`]; one the CA
//!    does not verify completes the handshake but leaves only bearer
//!    tokens (`401` without one), see `crate::client_cert`;
//! 2. a bearer token: the admin token written on first start
//!    (`keelson-admin` in `system:masters`), the static token file
//!    (`--token-auth-file`), then ServiceAccount JWTs (valid signature,
//!    issuer, audience and expiry, and the ServiceAccount still there
//!    with the token's uid), and legacy ServiceAccount tokens of
//!    `kubernetes.io/service-account-token` Secrets (the Secret still
//!    holding the token, the ServiceAccount still there with its uid);
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
    /// The user a request authenticates as, or `None` for `401`. A
    /// connection whose client certificate the client CAs refused
    /// (`cert_rejected`) authenticates only by bearer token: kube's x509
    /// authenticator's error keeps it from being anonymous.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        peer: Option<&PeerUser>,
        cert_rejected: bool,
    ) -> Option<UserInfo> {
        if let Some(PeerUser(u)) = peer {
            return Some(u.as_ref().clone().with_authenticated());
        }
        match bearer_token(headers) {
            Some(token) => self
                .authenticate_token(token)
                .await
                .map(UserInfo::with_authenticated),
            None => (self.anonymous && !cert_rejected).then(UserInfo::anonymous),
        }
    }

    /// The user of a bearer token presented to the API server.
    pub async fn authenticate_token(&self, token: &str) -> Option<UserInfo> {
        self.authenticate_token_for(token, &[])
            .await
            .ok()
            .map(|(u, _)| u)
    }

    /// TokenReview's answer for a token and the audiences it targets
    /// (empty: the API server's own, `--api-audiences`): the user and the
    /// audiences the token is good for, or kube's error text. kube's
    /// chain: the loopback token authenticator, then the bearer token
    /// union (the admin token and `--token-auth-file`, audience agnostic:
    /// they hold for the API audiences only; then the bound and legacy
    /// ServiceAccount JWTs); a token none accepts is `invalid bearer
    /// token`, and the errors read as kube's aggregate
    /// (`[invalid bearer token, service account token has expired]`).
    pub async fn authenticate_token_for(
        &self,
        token: &str,
        audiences: &[String],
    ) -> Result<(UserInfo, Vec<String>), String> {
        let api = self.service_accounts.api_audiences();
        let targets = if audiences.is_empty() { api } else { audiences };
        let agnostic = keelson_auth::audiences::intersect(api, targets);
        if !agnostic.is_empty() {
            if constant_time_eq(token.as_bytes(), self.admin_token.as_bytes()) {
                return Ok((admin_token_user(), agnostic));
            }
            if let Some(u) = self.token_file.as_ref().and_then(|f| f.authenticate(token)) {
                return Ok((u, agnostic));
            }
        }
        let mut errors = Vec::new();
        let now = chrono::Utc::now().timestamp();
        match self.service_accounts.verify_for(token, audiences, now) {
            Ok(Some((claims, auds))) => match self.bound_user(&claims).await {
                Ok(u) => return Ok((u, auds)),
                Err(e) => errors.push(e),
            },
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        match self.service_accounts.verify_legacy_for(token, audiences) {
            Ok(Some((claims, auds))) => match self.authenticate_legacy(token, &claims).await {
                Ok(u) => return Ok((u, auds)),
                Err(e) => errors.push(e),
            },
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        // The loopback authenticator's refusal first, then the bearer
        // token authenticator's (its own when the union had no error).
        let mut all = vec![INVALID_BEARER_TOKEN.to_string()];
        if errors.is_empty() {
            all.push(INVALID_BEARER_TOKEN.to_string());
        }
        all.extend(errors);
        Err(keelson_auth::audiences::aggregate(&all))
    }

    /// The user of a verified bound ServiceAccount token, whose
    /// ServiceAccount must still exist with the token's uid (kube's
    /// validator, in its words).
    async fn bound_user(
        &self,
        claims: &keelson_auth::serviceaccount::Claims,
    ) -> Result<UserInfo, String> {
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
        let live = self.store.get(&key).await.map_err(|e| e.message)?;
        if !meta_str(&live, "deletionTimestamp").is_empty() {
            return Err(format!("service account {ns}/{} has been deleted", sa.name));
        }
        if meta_str(&live, "uid") != sa.uid {
            return Err(format!(
                "service account UID ({}) does not match claim ({})",
                meta_str(&live, "uid"),
                sa.uid
            ));
        }
        let mut user = UserInfo::service_account(ns, &sa.name, &sa.uid);
        user.extra.insert(
            keelson_auth::user::CREDENTIAL_ID.into(),
            vec![format!("JTI={}", claims.jti)],
        );
        Ok(user)
    }

    /// A legacy ServiceAccount token (kube's legacy validator): a
    /// `kubernetes/serviceaccount` JWT with its private claims, whose
    /// Secret still exists (not being deleted, not marked invalid) and
    /// holds this very token, and whose ServiceAccount exists with the
    /// token's uid (not being deleted); as kube, no credential id. The Secret's
    /// `kubernetes.io/legacy-token-last-used` label is set to today (UTC)
    /// when it is neither today nor tomorrow, in the background.
    async fn authenticate_legacy(
        &self,
        token: &str,
        claims: &keelson_auth::serviceaccount::LegacyClaims,
    ) -> Result<UserInfo, String> {
        use base64::Engine;
        const INVALIDATED: &str = "Token has been invalidated";
        let ns = &claims.namespace;
        let secret_key = ObjectKey::new(
            keelson_api::GroupResource::new("", "secrets"),
            ns,
            &claims.secret_name,
        );
        let secret = self
            .store
            .get(&secret_key)
            .await
            .map_err(|_| INVALIDATED.to_string())?;
        if !meta_str(&secret, "deletionTimestamp").is_empty() {
            return Err(INVALIDATED.into());
        }
        let stored = secret
            .pointer("/data/token")
            .and_then(serde_json::Value::as_str)
            .and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok())
            .unwrap_or_default();
        if !constant_time_eq(&stored, token.as_bytes()) {
            return Err("Token does not match server's copy".into());
        }
        let sa_key = ObjectKey::new(
            keelson_api::GroupResource::new("", "serviceaccounts"),
            ns,
            &claims.service_account_name,
        );
        let sa = self.store.get(&sa_key).await.map_err(|e| e.message)?;
        if !meta_str(&sa, "deletionTimestamp").is_empty() {
            return Err(format!(
                "ServiceAccount {ns}/{} has been deleted",
                claims.service_account_name
            ));
        }
        if meta_str(&sa, "uid") != claims.service_account_uid {
            return Err(format!(
                "ServiceAccount UID ({}) does not match claim ({})",
                meta_str(&sa, "uid"),
                claims.service_account_uid
            ));
        }
        let labels = secret.pointer("/metadata/labels");
        let label = |k: &str| {
            labels
                .and_then(|l| l.get(k))
                .and_then(serde_json::Value::as_str)
        };
        // Marked invalid (kube's legacy token cleaner): refused, but its
        // use is recorded all the same.
        let invalid = label(LEGACY_TOKEN_INVALID_SINCE).is_some_and(|v| !v.is_empty());
        let now = chrono::Utc::now();
        let today = now.format("%Y-%m-%d").to_string();
        let tomorrow = (now + chrono::Duration::days(1))
            .format("%Y-%m-%d")
            .to_string();
        let last_used = label(LEGACY_TOKEN_LAST_USED);
        if last_used != Some(today.as_str()) && last_used != Some(tomorrow.as_str()) {
            let mut updated = secret.clone();
            if !updated
                .pointer("/metadata/labels")
                .is_some_and(serde_json::Value::is_object)
            {
                updated["metadata"]["labels"] = serde_json::json!({});
            }
            updated["metadata"]["labels"][LEGACY_TOKEN_LAST_USED] = serde_json::json!(today);
            let store = self.store.clone();
            tokio::spawn(async move {
                // A conflict means someone else wrote the Secret: the next
                // use tries again.
                if let Err(e) = store
                    .update(&secret_key, updated, keelson_api::UpdateOptions::default())
                    .await
                {
                    tracing::debug!(error = %e.message, "legacy token last-used label");
                }
            });
        }
        if invalid {
            return Err(INVALIDATED.into());
        }
        Ok(UserInfo::service_account(
            ns,
            &claims.service_account_name,
            &claims.service_account_uid,
        ))
    }
}

/// kube's bearer token authenticator's refusal of a token no
/// authenticator knows.
pub const INVALID_BEARER_TOKEN: &str = "invalid bearer token";

/// The label kube sets to the day (UTC) a legacy token was last used.
pub const LEGACY_TOKEN_LAST_USED: &str = "kubernetes.io/legacy-token-last-used";
/// The label that marks a legacy token invalid (kube's legacy token
/// cleaner sets it; Keelson only honours it).
pub const LEGACY_TOKEN_INVALID_SINCE: &str = "kubernetes.io/legacy-token-invalid-since";

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

    #[tokio::test]
    async fn legacy_tokens() {
        use base64::Engine;
        use keelson_api::{CreateOptions, GroupResource, UpdateOptions};
        use keelson_auth::serviceaccount::{generate_signing_key, DEFAULT_ISSUER};
        use serde_json::json;
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn StoreApi> = Arc::new(
            keelson_storage::LocalStore::open(dir.path(), Default::default())
                .await
                .unwrap(),
        );
        let authority = Arc::new(
            TokenAuthority::from_pem(&generate_signing_key().unwrap(), &[], DEFAULT_ISSUER, &[])
                .unwrap(),
        );
        let authn = Authenticators {
            admin_token: "admin".into(),
            token_file: None,
            service_accounts: authority.clone(),
            anonymous: false,
            store: store.clone(),
        };
        let sa_key = ObjectKey::new(GroupResource::new("", "serviceaccounts"), "ns", "robot");
        let sa = store
            .create(
                &sa_key,
                json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "robot", "namespace": "ns"}}),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        let uid = meta_str(&sa, "uid").to_string();
        let token = authority
            .issue_legacy("ns", "robot", &uid, "robot-token")
            .unwrap();
        // No Secret yet.
        assert!(authn.authenticate_token(&token).await.is_none());
        let b64 = base64::engine::general_purpose::STANDARD;
        let secret_key = ObjectKey::new(GroupResource::new("", "secrets"), "ns", "robot-token");
        let secret = |t: &str| {
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "robot-token", "namespace": "ns"},
                "type": "kubernetes.io/service-account-token",
                "data": {"token": b64.encode(t)}})
        };
        // The Secret holds another token: "does not match server's copy".
        store
            .create(&secret_key, secret("other"), CreateOptions::default())
            .await
            .unwrap();
        assert!(authn.authenticate_token(&token).await.is_none());
        store
            .update(&secret_key, secret(&token), UpdateOptions::default())
            .await
            .unwrap();
        let u = authn.authenticate_token(&token).await.unwrap();
        assert_eq!(u.name, "system:serviceaccount:ns:robot");
        assert_eq!(u.uid, uid);
        assert_eq!(
            u.groups,
            vec!["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        // The last-used label is set (in the background).
        let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
        let mut labelled = false;
        for _ in 0..200 {
            let s = store.get(&secret_key).await.unwrap();
            if s.pointer("/metadata/labels")
                .and_then(|l| l.get(LEGACY_TOKEN_LAST_USED))
                .is_some()
            {
                let l = &s["metadata"]["labels"][LEGACY_TOKEN_LAST_USED];
                let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1))
                    .format("%Y-%m-%d")
                    .to_string();
                assert!(l == &json!(today) || l == &json!(tomorrow), "{l}");
                labelled = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(labelled);
        // Marked invalid: refused.
        let mut invalid = store.get(&secret_key).await.unwrap();
        invalid["metadata"]["labels"][LEGACY_TOKEN_INVALID_SINCE] = json!("2026-01-01");
        store
            .update(&secret_key, invalid, UpdateOptions::default())
            .await
            .unwrap();
        assert!(authn.authenticate_token(&token).await.is_none());
        store
            .update(&secret_key, secret(&token), UpdateOptions::default())
            .await
            .unwrap();
        assert!(authn.authenticate_token(&token).await.is_some());
        // A token for another uid (a re-created ServiceAccount) is refused.
        let stale = authority
            .issue_legacy("ns", "robot", "old-uid", "robot-token")
            .unwrap();
        store
            .update(&secret_key, secret(&stale), UpdateOptions::default())
            .await
            .unwrap();
        assert!(authn.authenticate_token(&stale).await.is_none());
        // Not a token of this cluster's key.
        let other =
            TokenAuthority::from_pem(&generate_signing_key().unwrap(), &[], DEFAULT_ISSUER, &[])
                .unwrap();
        let forged = other
            .issue_legacy("ns", "robot", &uid, "robot-token")
            .unwrap();
        store
            .update(&secret_key, secret(&forged), UpdateOptions::default())
            .await
            .unwrap();
        assert!(authn.authenticate_token(&forged).await.is_none());
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
