//! ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`): the
//! policies and their bindings, followed by a list + watch and compiled once
//! per generation, evaluated on every create and update after validation
//! (kube's `validating` policy plugin).

mod authz;
pub(crate) mod compile;
mod evaluate;
mod matching;
mod params;
mod status;
mod typecheck;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use keelson_api::{AdmissionRequest, StoreApi};
use keelson_apimachinery::{ApiResult, GroupResource};
use keelson_informer::{Event, Informer};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub(crate) use authz::{user_of, PolicyAuthz};
pub(crate) use evaluate::Compiled;

const GROUP: &str = "admissionregistration.k8s.io";

fn policies() -> GroupResource {
    GroupResource::new(GROUP, "validatingadmissionpolicies")
}

fn bindings() -> GroupResource {
    GroupResource::new(GROUP, "validatingadmissionpolicybindings")
}

#[derive(Default)]
struct State {
    /// Policy name → compiled policy.
    policies: BTreeMap<String, Arc<Compiled>>,
    /// Binding name → binding spec.
    bindings: BTreeMap<String, Arc<matching::Binding>>,
}

impl State {
    /// Each binding with the policy it names (a binding to a missing
    /// policy does nothing), in binding-name order.
    fn pairs(&self) -> Vec<(Arc<Compiled>, Arc<matching::Binding>)> {
        self.bindings
            .values()
            .filter_map(|b| {
                self.policies
                    .get(&b.policy_name)
                    .map(|p| (p.clone(), b.clone()))
            })
            .collect()
    }
}

/// The policies and bindings as a list + watch last saw them.
pub(crate) struct Policies {
    state: Arc<RwLock<State>>,
    synced: watch::Sender<bool>,
    follower: Mutex<Option<JoinHandle<()>>>,
    /// The parameter objects bindings read.
    params: params::ParamCache,
    /// The live catalog (the status writer's schemas).
    catalog: crate::registry::Catalog,
    /// The `authorizer` variable's authorizer (shared with the plugins).
    authz: Arc<authz::PolicyAuthz>,
}

impl Policies {
    /// Empty; the follower starts with the first write. `authz` is the
    /// authorizer policies' `authorizer` checks with.
    pub(crate) fn new(
        catalog: crate::registry::Catalog,
        authz: Arc<authz::PolicyAuthz>,
    ) -> Policies {
        Policies {
            state: Arc::new(RwLock::new(State::default())),
            synced: watch::channel(false).0,
            follower: Mutex::new(None),
            params: params::ParamCache::default(),
            catalog,
            authz,
        }
    }

    fn ensure_following(&self, store: &Arc<dyn StoreApi>) {
        let Ok(mut follower) = self.follower.lock() else {
            return;
        };
        if follower.is_none() {
            let informer = Informer::new(
                "validating admission policies",
                store.clone(),
                vec![policies(), bindings()],
            )
            .report_synced(self.synced.clone());
            let state = Arc::downgrade(&self.state);
            let status = status::StatusWriter::new(store.clone(), self.catalog.clone());
            *follower = Some(tokio::spawn(follow(informer, state, status)));
        }
    }

    /// Evaluate every binding that applies to `req` (its `object` is the
    /// admitted object); returns the warnings, or the first denial.
    pub(crate) async fn admit(
        &self,
        store: &Arc<dyn StoreApi>,
        catalog: &crate::registry::CatalogSnapshot,
        req: &AdmissionRequest,
        object: &Value,
        display_name: &str,
    ) -> ApiResult<Vec<String>> {
        self.ensure_following(store);
        let synced = *self.synced.borrow();
        let pairs = if synced {
            let Ok(st) = self.state.read() else {
                return Ok(Vec::new());
            };
            st.pairs()
        } else {
            // Not following yet (or re-listing): read the store this once.
            let mut st = State::default();
            for gr in [policies(), bindings()] {
                for item in store.list(&gr, None).await?.items {
                    apply(&mut st, &gr, &item, false);
                }
            }
            st.pairs()
        };
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let authorizer = if pairs.iter().any(|(p, _)| p.uses_authorizer) {
            Some(self.authz.ready(store).await)
        } else {
            None
        };
        let cx = evaluate::Context {
            authorizer,
            store,
            catalog,
            params: &self.params,
            req,
            object,
            display_name,
        };
        evaluate::run(cx, &pairs).await
    }
}

impl Drop for Policies {
    fn drop(&mut self) {
        if let Ok(mut h) = self.follower.lock() {
            if let Some(h) = h.take() {
                h.abort();
            }
        }
    }
}

fn name_of(obj: &Value) -> String {
    keelson_apimachinery::meta::meta_str(obj, "name").to_string()
}

fn apply(st: &mut State, gr: &GroupResource, obj: &Value, deleted: bool) {
    let name = name_of(obj);
    if *gr == policies() {
        if deleted {
            st.policies.remove(&name);
        } else {
            st.policies.insert(name, Arc::new(Compiled::compile(obj)));
        }
    } else if deleted {
        st.bindings.remove(&name);
    } else {
        st.bindings
            .insert(name, Arc::new(matching::Binding::from_json(obj)));
    }
}

async fn follow(
    mut informer: Informer,
    state: std::sync::Weak<RwLock<State>>,
    status: status::StatusWriter,
) {
    loop {
        let event = informer.next().await;
        // Policies whose status lags their generation (kube's
        // ValidatingAdmissionPolicy status controller).
        match &event {
            Event::Listed(listings) => {
                for l in listings.iter().filter(|l| l.resource == policies()) {
                    for item in &l.items {
                        status.observe(item);
                    }
                }
            }
            Event::Changed(gr, change)
                if *gr == policies()
                    && !matches!(change.event_type, keelson_api::EventType::Deleted) =>
            {
                status.observe(&change.object);
            }
            _ => {}
        }
        let Some(st) = state.upgrade() else { return };
        let Ok(mut st) = st.write() else { return };
        match event {
            Event::Listed(listings) => {
                *st = State::default();
                for l in listings {
                    for item in &l.items {
                        apply(&mut st, &l.resource, item, false);
                    }
                }
            }
            Event::Changed(gr, change) => {
                let deleted = matches!(change.event_type, keelson_api::EventType::Deleted);
                if matches!(
                    change.event_type,
                    keelson_api::EventType::Added
                        | keelson_api::EventType::Modified
                        | keelson_api::EventType::Deleted
                ) {
                    apply(&mut st, &gr, &change.object, deleted);
                }
            }
            Event::Resync => {}
        }
    }
}
