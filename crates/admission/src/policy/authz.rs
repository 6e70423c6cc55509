//! The authorizer behind policies' `authorizer` variable: Keelson's
//! `--authorization-mode` authorizer (`system:masters`, then RBAC or
//! AlwaysAllow), its RBAC index followed from the store from the first
//! policy that uses it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use keelson_api::StoreApi;
use keelson_auth::{Attributes, Authorizer, Mode, Rbac};
use keelson_cel::library::authz::{Authorize, Check, Decision, User};
use tokio::task::JoinHandle;

/// How long a write waits for the RBAC index's first listing.
const SYNC_WAIT: Duration = Duration::from_secs(10);

/// The policies' authorizer, started on first use.
pub(crate) struct PolicyAuthz {
    authorizer: Authorizer,
    followers: Mutex<Option<Vec<JoinHandle<()>>>>,
    /// A write waited for the first listing in vain (later ones do not).
    waited: AtomicBool,
}

impl PolicyAuthz {
    /// An authorizer for `mode`; nothing is followed yet.
    pub(crate) fn new(mode: Mode) -> PolicyAuthz {
        PolicyAuthz {
            authorizer: Authorizer {
                mode,
                rbac: Rbac::new(),
            },
            followers: Mutex::new(None),
            waited: AtomicBool::new(false),
        }
    }

    /// The authorizer, once its RBAC index has listed (the first write
    /// waits up to [`SYNC_WAIT`]; after that it answers from what it has).
    pub(crate) async fn ready(&self, store: &Arc<dyn StoreApi>) -> Arc<dyn Authorize> {
        self.synced(store).await;
        Arc::new(Adapter(self.authorizer.clone()))
    }

    /// Whether the authorizer allows `check`, once its RBAC index has
    /// listed (as [`PolicyAuthz::ready`]); the built-in plugins ask this.
    pub(crate) async fn allows(&self, store: &Arc<dyn StoreApi>, check: &Check) -> bool {
        self.synced(store).await;
        Adapter(self.authorizer.clone()).authorize(check).allowed
    }

    /// Start following RBAC and wait for its first listing.
    async fn synced(&self, store: &Arc<dyn StoreApi>) {
        if self.authorizer.mode != Mode::Rbac {
            return;
        }
        let mut synced = self.authorizer.rbac.synced();
        if let Ok(mut f) = self.followers.lock() {
            if f.is_none() {
                *f = Some(keelson_auth::rbac::follow(
                    self.authorizer.rbac.clone(),
                    store.clone(),
                ));
            }
        }
        if !self.waited.load(Ordering::SeqCst) {
            let wait = tokio::time::timeout(SYNC_WAIT, synced.wait_for(|s| *s)).await;
            if wait.is_err() {
                self.waited.store(true, Ordering::SeqCst);
            }
        }
    }
}

impl Drop for PolicyAuthz {
    fn drop(&mut self) {
        if let Ok(mut f) = self.followers.lock() {
            for h in f.take().into_iter().flatten() {
                h.abort();
            }
        }
    }
}

/// kube's `AttributesRecord` from a CEL check, answered by the authorizer.
struct Adapter(Authorizer);

impl Authorize for Adapter {
    fn authorize(&self, c: &Check) -> Decision {
        let attrs = Attributes {
            user: keelson_auth::UserInfo {
                name: c.user.name.clone(),
                uid: c.user.uid.clone(),
                groups: c.user.groups.clone(),
                extra: c.user.extra.clone(),
            },
            verb: c.verb.clone(),
            resource_request: c.resource_request,
            path: c.path.clone(),
            namespace: c.namespace.clone(),
            api_group: c.group.clone(),
            api_version: c.version.clone(),
            resource: c.resource.clone(),
            subresource: c.subresource.clone(),
            name: c.name.clone(),
        };
        let d = self.0.authorize(&attrs);
        Decision {
            allowed: d.allowed,
            reason: d.reason,
            error: None,
        }
    }
}

/// The CEL user of an admission request's user.
pub(crate) fn user_of(u: Option<&keelson_api::UserInfo>) -> User {
    match u {
        Some(u) => User {
            name: u.username.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        },
        None => User::default(),
    }
}
