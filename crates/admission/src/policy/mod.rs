//! Admission policies: ValidatingAdmissionPolicy
//! (`admissionregistration.k8s.io/v1`, evaluated on every create and update
//! after validation, kube's `validating` policy plugin) and
//! MutatingAdmissionPolicy (`v1beta1`, applied in the mutating phase before
//! the webhooks, kube's `mutating` policy plugin). Policies and bindings are
//! followed by a list + watch and compiled once per generation.

mod authz;
pub(crate) mod compile;
mod evaluate;
mod matching;
mod mutating;
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

/// A kind of admission policy: its resources and how one is compiled.
pub(crate) trait PolicyKind: Send + Sync + Sized + 'static {
    /// The informer's name in logs.
    const WHAT: &'static str;
    /// The policies' resource.
    const POLICIES: &'static str;
    /// The bindings' resource.
    const BINDINGS: &'static str;
    /// Policies get kube's type-checking status written.
    const WRITES_STATUS: bool;
    /// Compile a policy object (odd shapes count as absent fields).
    fn compile(obj: &Value) -> Self;
}

impl PolicyKind for Compiled {
    const WHAT: &'static str = "validating admission policies";
    const POLICIES: &'static str = "validatingadmissionpolicies";
    const BINDINGS: &'static str = "validatingadmissionpolicybindings";
    const WRITES_STATUS: bool = true;
    fn compile(obj: &Value) -> Self {
        Compiled::compile(obj)
    }
}

fn policies_of<P: PolicyKind>() -> GroupResource {
    GroupResource::new(GROUP, P::POLICIES)
}

fn bindings_of<P: PolicyKind>() -> GroupResource {
    GroupResource::new(GROUP, P::BINDINGS)
}

struct State<P> {
    /// Policy name → compiled policy.
    policies: BTreeMap<String, Arc<P>>,
    /// Binding name → binding spec.
    bindings: BTreeMap<String, Arc<matching::Binding>>,
}

impl<P> Default for State<P> {
    fn default() -> Self {
        State {
            policies: BTreeMap::new(),
            bindings: BTreeMap::new(),
        }
    }
}

impl<P: PolicyKind> State<P> {
    /// Each binding with the policy it names (a binding to a missing
    /// policy does nothing), in binding-name order.
    fn pairs(&self) -> Vec<(Arc<P>, Arc<matching::Binding>)> {
        self.bindings
            .values()
            .filter_map(|b| {
                self.policies
                    .get(&b.policy_name)
                    .map(|p| (p.clone(), b.clone()))
            })
            .collect()
    }

    fn apply(&mut self, gr: &GroupResource, obj: &Value, deleted: bool) {
        let name = name_of(obj);
        if *gr == policies_of::<P>() {
            if deleted {
                self.policies.remove(&name);
            } else {
                self.policies.insert(name, Arc::new(P::compile(obj)));
            }
        } else if deleted {
            self.bindings.remove(&name);
        } else {
            self.bindings
                .insert(name, Arc::new(matching::Binding::from_json(obj)));
        }
    }
}

/// The policies and bindings of one kind as a list + watch last saw them.
pub(crate) struct PolicySet<P> {
    state: Arc<RwLock<State<P>>>,
    synced: watch::Sender<bool>,
    follower: Mutex<Option<JoinHandle<()>>>,
    /// The parameter objects bindings read.
    params: params::ParamCache,
    /// The live catalog (the status writer's schemas).
    catalog: crate::registry::Catalog,
    /// The `authorizer` variable's authorizer (shared with the plugins).
    authz: Arc<authz::PolicyAuthz>,
}

/// ValidatingAdmissionPolicies and their bindings.
pub(crate) type Policies = PolicySet<Compiled>;

/// MutatingAdmissionPolicies and their bindings.
pub(crate) type MutatingPolicies = PolicySet<mutating::MutatingCompiled>;

impl<P: PolicyKind> PolicySet<P> {
    /// Empty; the follower starts with the first write. `authz` is the
    /// authorizer policies' `authorizer` checks with.
    pub(crate) fn new(
        catalog: crate::registry::Catalog,
        authz: Arc<authz::PolicyAuthz>,
    ) -> PolicySet<P> {
        PolicySet {
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
                P::WHAT,
                store.clone(),
                vec![policies_of::<P>(), bindings_of::<P>()],
            )
            .report_synced(self.synced.clone());
            let state = Arc::downgrade(&self.state);
            let status = P::WRITES_STATUS
                .then(|| status::StatusWriter::new(store.clone(), self.catalog.clone()));
            *follower = Some(tokio::spawn(follow::<P>(informer, state, status)));
        }
    }

    /// The (policy, binding) pairs now: from the follower once it has
    /// synced, else read from the store this once.
    async fn pairs(
        &self,
        store: &Arc<dyn StoreApi>,
    ) -> ApiResult<Vec<(Arc<P>, Arc<matching::Binding>)>> {
        self.ensure_following(store);
        if *self.synced.borrow() {
            let Ok(st) = self.state.read() else {
                return Ok(Vec::new());
            };
            return Ok(st.pairs());
        }
        let mut st = State::<P>::default();
        for gr in [policies_of::<P>(), bindings_of::<P>()] {
            for item in store.list(&gr, None).await?.items {
                st.apply(&gr, &item, false);
            }
        }
        Ok(st.pairs())
    }

    /// The authorizer, when one of `pairs` uses it.
    async fn authorizer(
        &self,
        store: &Arc<dyn StoreApi>,
        uses: bool,
    ) -> Option<Arc<dyn keelson_cel::library::authz::Authorize>> {
        if uses {
            Some(self.authz.ready(store).await)
        } else {
            None
        }
    }
}

impl Policies {
    /// Evaluate every binding that applies to `req` (its `object` is the
    /// admitted object); returns the warnings, or the first denial.
    pub(crate) async fn admit(
        &self,
        store: &Arc<dyn StoreApi>,
        catalog: &crate::registry::CatalogSnapshot,
        req: &AdmissionRequest,
        object: &Value,
        display_name: &str,
        ann: &mut crate::audit::Annotations,
    ) -> ApiResult<Vec<String>> {
        let pairs = self.pairs(store).await?;
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let uses = pairs.iter().any(|(p, _)| p.uses_authorizer);
        let cx = evaluate::Context {
            authorizer: self.authorizer(store, uses).await,
            store,
            catalog,
            params: &self.params,
            req,
            object,
            display_name,
        };
        evaluate::run(cx, &pairs, ann).await
    }
}

impl MutatingPolicies {
    /// Apply every binding's mutations that apply to `req` to `object`
    /// (kube's mutating policy dispatcher); `only` limits a reinvocation
    /// to the invocations named. What was invoked, or the denial.
    pub(crate) async fn mutate(
        &self,
        w: &MutatingWrite<'_>,
        object: &mut Value,
        only: Option<&mutating::Reinvoke>,
    ) -> ApiResult<mutating::Reinvoke> {
        let MutatingWrite {
            store,
            catalog,
            req,
            display_name,
            redecode,
        } = *w;
        let pairs = self.pairs(store).await?;
        if pairs.is_empty() {
            return Ok(mutating::Reinvoke::default());
        }
        let uses = pairs.iter().any(|(p, _)| p.uses_authorizer);
        let authorizer = self.authorizer(store, uses).await;
        let original = object.clone();
        let cx = evaluate::Context {
            authorizer,
            store,
            catalog,
            params: &self.params,
            req,
            object: &original,
            display_name,
        };
        mutating::run(cx, &pairs, object, redecode, only).await
    }
}

/// The write a MutatingAdmissionPolicy dispatch mutates.
#[derive(Clone, Copy)]
pub(crate) struct MutatingWrite<'a> {
    pub(crate) store: &'a Arc<dyn StoreApi>,
    pub(crate) catalog: &'a crate::registry::CatalogSnapshot,
    pub(crate) req: &'a AdmissionRequest,
    pub(crate) display_name: &'a str,
    /// Re-decodes and defaults the object after each mutation.
    pub(crate) redecode: &'a crate::webhook::Redecode<'a>,
}

impl<P> Drop for PolicySet<P> {
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

async fn follow<P: PolicyKind>(
    mut informer: Informer,
    state: std::sync::Weak<RwLock<State<P>>>,
    status: Option<status::StatusWriter>,
) {
    let policies = policies_of::<P>();
    loop {
        let event = informer.next().await;
        // Policies whose status lags their generation (kube's
        // ValidatingAdmissionPolicy status controller).
        if let Some(status) = &status {
            match &event {
                Event::Listed(listings) => {
                    for l in listings.iter().filter(|l| l.resource == policies) {
                        for item in &l.items {
                            status.observe(item);
                        }
                    }
                }
                Event::Changed(gr, change)
                    if *gr == policies
                        && !matches!(change.event_type, keelson_api::EventType::Deleted) =>
                {
                    status.observe(&change.object);
                }
                _ => {}
            }
        }
        let Some(st) = state.upgrade() else { return };
        let Ok(mut st) = st.write() else { return };
        match event {
            Event::Listed(listings) => {
                *st = State::default();
                for l in listings {
                    for item in &l.items {
                        st.apply(&l.resource, item, false);
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
                    st.apply(&gr, &change.object, deleted);
                }
            }
            Event::Resync => {}
        }
    }
}
