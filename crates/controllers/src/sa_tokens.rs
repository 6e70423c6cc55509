//! The ServiceAccount tokens controller (kube-controller-manager's
//! `serviceaccount-token-controller`, `tokens_controller.go`), for
//! Secrets of type `kubernetes.io/service-account-token`:
//!
//! - one whose ServiceAccount (annotation `kubernetes.io/service-account.name`,
//!   and `kubernetes.io/service-account.uid` when set) exists gets
//!   `data.token` (a legacy JWT, [`TokenAuthority::issue_legacy`]) when it
//!   has none, `data.ca.crt` (the cluster CA), `data.namespace` and the uid
//!   annotation;
//! - one whose ServiceAccount is missing, or has another uid, is deleted,
//!   as are a deleted ServiceAccount's token Secrets.
//!
//! It needs the ServiceAccount signing key, so the gateway (which holds
//! it) runs it, as it runs the CSR signer. Every write is an update at the
//! object's resourceVersion: several gateways running it only conflict.

use std::future::Future;
use std::sync::Arc;

use base64::Engine;
use keelson_api::{
    ApiError, ApiResult, DeleteOptions, EventType, GroupResource, ObjectKey, StoreApi,
    UpdateOptions,
};
use keelson_apimachinery::meta::meta_str;
use keelson_auth::serviceaccount::TokenAuthority;
use keelson_informer::{Event, Informer};
use serde_json::{json, Value};

/// The Secret type the controller fills.
pub const SERVICE_ACCOUNT_TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
/// The annotation naming the Secret's ServiceAccount.
pub const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";
/// The annotation with the ServiceAccount's uid.
pub const SERVICE_ACCOUNT_UID_KEY: &str = "kubernetes.io/service-account.uid";

fn secrets() -> GroupResource {
    GroupResource::new("", "secrets")
}

fn service_accounts() -> GroupResource {
    GroupResource::new("", "serviceaccounts")
}

fn annotation<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn is_token_secret(secret: &Value) -> bool {
    secret.get("type").and_then(Value::as_str) == Some(SERVICE_ACCOUNT_TOKEN_TYPE)
}

/// The tokens controller.
pub struct TokensController {
    store: Arc<dyn StoreApi>,
    authority: Arc<TokenAuthority>,
    ca_pem: String,
}

impl TokensController {
    /// A controller over `store` signing with `authority`, putting
    /// `ca_pem` in `ca.crt`.
    pub fn new(store: Arc<dyn StoreApi>, authority: Arc<TokenAuthority>, ca_pem: String) -> Self {
        TokensController {
            store,
            authority,
            ca_pem,
        }
    }

    /// Run until `shutdown` completes.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut informer = Informer::new(
            "serviceaccount-token",
            self.store.clone(),
            vec![secrets(), service_accounts()],
        )
        .retry_after(crate::namespace::RETRY_AFTER);
        let follow = async {
            loop {
                let event = informer.next().await;
                if let Err(e) = self.handle(event).await {
                    informer.failed(&e);
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = follow => {}
        }
    }

    async fn handle(&self, event: Event) -> ApiResult<()> {
        match event {
            Event::Listed(listings) => {
                let listed = listings.iter().filter(|l| l.resource == secrets());
                for secret in listed.flat_map(|l| &l.items) {
                    self.sync_secret(secret).await?;
                }
            }
            Event::Changed(gr, change) => match change.event_type {
                EventType::Added | EventType::Modified if gr == secrets() => {
                    self.sync_secret(&change.object).await?
                }
                EventType::Deleted if gr == service_accounts() => {
                    self.delete_tokens(&change.object).await?
                }
                _ => {}
            },
            Event::Resync => {}
        }
        Ok(())
    }

    /// Fill a token Secret, or delete it when its ServiceAccount is gone.
    pub async fn sync_secret(&self, secret: &Value) -> ApiResult<()> {
        if !is_token_secret(secret) || !meta_str(secret, "deletionTimestamp").is_empty() {
            return Ok(());
        }
        let ns = meta_str(secret, "namespace");
        let sa_name = annotation(secret, SERVICE_ACCOUNT_NAME_KEY);
        if sa_name.is_empty() {
            return Ok(());
        }
        let sa_uid = annotation(secret, SERVICE_ACCOUNT_UID_KEY);
        let sa_key = ObjectKey::new(service_accounts(), ns, sa_name);
        let sa = match self.store.get(&sa_key).await {
            Ok(sa) if sa_uid.is_empty() || meta_str(&sa, "uid") == sa_uid => Some(sa),
            Ok(_) => None,
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e),
        };
        let Some(sa) = sa else {
            tracing::debug!(
                namespace = ns,
                secret = meta_str(secret, "name"),
                "deleting the token of a missing ServiceAccount"
            );
            return self.delete_secret(secret).await;
        };
        let Some(updated) = self.filled(secret, &sa)? else {
            return Ok(());
        };
        let key = ObjectKey::new(secrets(), ns, meta_str(secret, "name"));
        match self
            .store
            .update(&key, updated, UpdateOptions::default())
            .await
        {
            Ok(_) => Ok(()),
            // Changed or gone meanwhile: its next event brings it again.
            Err(e) if e.is_conflict() || e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The Secret with what it lacks (kube's `generateTokenIfNeeded`):
    /// `None` when nothing is missing.
    fn filled(&self, secret: &Value, sa: &Value) -> ApiResult<Option<Value>> {
        let b64 = base64::engine::general_purpose::STANDARD;
        let data = |k: &str| {
            secret
                .pointer("/data")
                .and_then(|d| d.get(k))
                .and_then(Value::as_str)
                .and_then(|v| b64.decode(v).ok())
                .unwrap_or_default()
        };
        let ns = meta_str(secret, "namespace");
        let sa_uid = meta_str(sa, "uid");
        let ca_ok = self.ca_pem.is_empty() || data("ca.crt") == self.ca_pem.as_bytes();
        let ns_ok = !data("namespace").is_empty();
        let token_ok = !data("token").is_empty();
        let uid_ok = annotation(secret, SERVICE_ACCOUNT_UID_KEY) == sa_uid;
        if ca_ok && ns_ok && token_ok && uid_ok {
            return Ok(None);
        }
        let mut out = secret.clone();
        if !out.get("data").is_some_and(Value::is_object) {
            out["data"] = json!({});
        }
        if !self.ca_pem.is_empty() {
            out["data"]["ca.crt"] = json!(b64.encode(self.ca_pem.as_bytes()));
        }
        out["data"]["namespace"] = json!(b64.encode(ns.as_bytes()));
        if !token_ok {
            let token = self
                .authority
                .issue_legacy(ns, meta_str(sa, "name"), sa_uid, meta_str(secret, "name"))
                .map_err(|e| ApiError::internal(format!("generating token: {e}")))?;
            out["data"]["token"] = json!(b64.encode(token.as_bytes()));
        }
        if !out
            .pointer("/metadata/annotations")
            .is_some_and(Value::is_object)
        {
            out["metadata"]["annotations"] = json!({});
        }
        out["metadata"]["annotations"][SERVICE_ACCOUNT_UID_KEY] = json!(sa_uid);
        Ok(Some(out))
    }

    /// Delete the token Secrets of a deleted ServiceAccount (those naming
    /// it, with its uid or none).
    async fn delete_tokens(&self, sa: &Value) -> ApiResult<()> {
        let (ns, name, uid) = (
            meta_str(sa, "namespace"),
            meta_str(sa, "name"),
            meta_str(sa, "uid"),
        );
        let listed = self.store.list(&secrets(), Some(ns)).await?;
        for secret in listed.items.iter().filter(|s| is_token_secret(s)) {
            let sa_uid = annotation(secret, SERVICE_ACCOUNT_UID_KEY);
            if annotation(secret, SERVICE_ACCOUNT_NAME_KEY) == name
                && (sa_uid.is_empty() || sa_uid == uid)
            {
                // A ServiceAccount of that name may be back already.
                self.sync_secret(secret).await?;
            }
        }
        Ok(())
    }

    async fn delete_secret(&self, secret: &Value) -> ApiResult<()> {
        let key = ObjectKey::new(
            secrets(),
            meta_str(secret, "namespace"),
            meta_str(secret, "name"),
        );
        let opts = DeleteOptions {
            precondition_uid: Some(meta_str(secret, "uid").to_string()),
            ..Default::default()
        };
        match self.store.delete(&key, opts).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() || e.is_conflict() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use keelson_api::CreateOptions;
    use keelson_auth::serviceaccount::{generate_signing_key, DEFAULT_ISSUER};

    use super::*;

    async fn eventually<F: Fn(Option<&Value>) -> bool>(
        store: &dyn StoreApi,
        key: &ObjectKey,
        what: &str,
        f: F,
    ) -> Option<Value> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let got = store.get(key).await.ok();
            if f(got.as_ref()) {
                return got;
            }
            assert!(Instant::now() < deadline, "{key:?}: {what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn token_secret(name: &str, sa: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": "default",
                "annotations": {SERVICE_ACCOUNT_NAME_KEY: sa}},
            "type": SERVICE_ACCOUNT_TOKEN_TYPE,
        })
    }

    #[tokio::test]
    async fn fills_and_deletes_token_secrets() {
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
        let ca = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
        let task = tokio::spawn(
            TokensController::new(store.clone(), authority.clone(), ca.into())
                .run(std::future::pending()),
        );
        let sa_key = ObjectKey::new(service_accounts(), "default", "robot");
        let sa = store
            .create(
                &sa_key,
                json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "robot", "namespace": "default"}}),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        let sa_uid = meta_str(&sa, "uid").to_string();
        let key = ObjectKey::new(secrets(), "default", "robot-token");
        store
            .create(
                &key,
                token_secret("robot-token", "robot"),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        // An Opaque Secret with the annotation is left alone.
        let opaque_key = ObjectKey::new(secrets(), "default", "opaque");
        let mut opaque = token_secret("opaque", "robot");
        opaque["type"] = json!("Opaque");
        store
            .create(&opaque_key, opaque, CreateOptions::default())
            .await
            .unwrap();
        let filled = eventually(store.as_ref(), &key, "filled", |s| {
            s.and_then(|s| s.pointer("/data/token")).is_some()
        })
        .await
        .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD;
        let data = |k: &str| {
            String::from_utf8(b64.decode(filled["data"][k].as_str().unwrap()).unwrap()).unwrap()
        };
        assert_eq!(data("ca.crt"), ca);
        assert_eq!(data("namespace"), "default");
        assert_eq!(annotation(&filled, SERVICE_ACCOUNT_UID_KEY), sa_uid);
        let claims = authority.verify_legacy(&data("token")).unwrap();
        assert_eq!(claims.secret_name, "robot-token");
        assert_eq!(claims.service_account_uid, sa_uid);
        // A token Secret for a missing ServiceAccount, or another uid, is
        // deleted.
        let ghost = ObjectKey::new(secrets(), "default", "ghost-token");
        store
            .create(
                &ghost,
                token_secret("ghost-token", "ghost"),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        eventually(store.as_ref(), &ghost, "ghost deleted", |s| s.is_none()).await;
        let stale = ObjectKey::new(secrets(), "default", "stale-token");
        let mut s = token_secret("stale-token", "robot");
        s["metadata"]["annotations"][SERVICE_ACCOUNT_UID_KEY] = json!("other-uid");
        store
            .create(&stale, s, CreateOptions::default())
            .await
            .unwrap();
        eventually(store.as_ref(), &stale, "stale deleted", |s| s.is_none()).await;
        // Deleting the ServiceAccount deletes its token Secrets.
        store
            .delete(&sa_key, DeleteOptions::default())
            .await
            .unwrap();
        eventually(store.as_ref(), &key, "deleted with its SA", |s| s.is_none()).await;
        assert!(store.get(&opaque_key).await.is_ok());
        task.abort();
    }
}
