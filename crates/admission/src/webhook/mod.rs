//! Admission webhooks (`admissionregistration.k8s.io/v1`
//! MutatingWebhookConfiguration and ValidatingWebhookConfiguration): the
//! configurations followed by a list + watch, their webhooks called with an
//! `AdmissionReview` over HTTPS (`keelson-webhook-client`). Mutating
//! webhooks run in order after the built-in mutating steps, their JSON
//! patches applied (and reinvoked once with `reinvocationPolicy:
//! IfNeeded`); validating webhooks run in parallel after the
//! ValidatingAdmissionPolicies (kube's `mutating` and `validating`
//! webhook plugins).

mod call;
mod dispatch;
mod hook;
mod review;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use keelson_api::{AdmissionRequest, StoreApi};
use keelson_apimachinery::{ApiResult, GroupResource};
use keelson_informer::{Event, Informer};
use keelson_webhook_client::Clients;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use hook::{Hook, HookKey};

use crate::registry::{CatalogSnapshot, Schema};

/// How a patched object is decoded and defaulted again, as the write's
/// own decoding and defaulting did (kube decodes a webhook's patched JSON
/// into the type and runs the defaulter).
pub(crate) struct Redecode<'a> {
    pub catalog: &'a CatalogSnapshot,
    /// The built-in kind's schema (unknown fields dropped, wrong types refused).
    pub root: Option<(&'a Schema, &'a str)>,
    /// A custom resource's structural schema (pruned and defaulted).
    pub custom: Option<&'a keelson_apiextensions::Compiled>,
    pub group: &'a str,
    pub kind: &'a str,
    /// The object is the resource's own kind (not a `Scale`).
    pub own_kind: bool,
}

impl Redecode<'_> {
    pub(crate) fn apply(&self, req: &AdmissionRequest, obj: &mut Value) -> Result<(), String> {
        self.apply_with(req, obj, false)
    }

    /// [`Redecode::apply`]; `strict` refuses a built-in's unknown fields
    /// as Go's strict decoder does (`strict decoding error: unknown field
    /// "spec.foo"`).
    pub(crate) fn apply_with(
        &self,
        req: &AdmissionRequest,
        obj: &mut Value,
        strict: bool,
    ) -> Result<(), String> {
        if !self.own_kind {
            return Ok(());
        }
        if let Some(schema) = self.custom {
            crate::custom::prune(schema, obj);
        } else if let Some((root, def)) = self.root {
            let report = crate::decode::decode(self.catalog, root, def, obj, None);
            if let Some(e) = report.error {
                return Err(e.to_string());
            }
            if strict && !report.strict.is_empty() {
                return Err(format!(
                    "strict decoding error: {}",
                    report.strict.join(", ")
                ));
            }
        }
        crate::defaults::apply(
            self.group,
            self.kind,
            req.operation,
            &req.subresource,
            obj,
            req.old_object.as_ref(),
        );
        if let Some(schema) = self.custom {
            schema.default(obj);
        }
        Ok(())
    }
}

pub(crate) use hook::exempt;

use crate::audit::Annotations;

const GROUP: &str = "admissionregistration.k8s.io";

fn mutating_configs() -> GroupResource {
    GroupResource::new(GROUP, "mutatingwebhookconfigurations")
}

fn validating_configs() -> GroupResource {
    GroupResource::new(GROUP, "validatingwebhookconfigurations")
}

/// The configurations' webhooks, by configuration name (kube runs them
/// sorted by it, then in the configuration's order).
#[derive(Default)]
struct State {
    mutating: BTreeMap<String, Vec<Arc<Hook>>>,
    validating: BTreeMap<String, Vec<Arc<Hook>>>,
}

impl State {
    fn apply(&mut self, gr: &GroupResource, obj: &Value, deleted: bool) {
        let name = keelson_apimachinery::meta::meta_str(obj, "name").to_string();
        let map = if *gr == mutating_configs() {
            &mut self.mutating
        } else {
            &mut self.validating
        };
        if deleted {
            map.remove(&name);
        } else {
            map.insert(name, Hook::all_of(obj).into_iter().map(Arc::new).collect());
        }
    }

    fn hooks(map: &BTreeMap<String, Vec<Arc<Hook>>>) -> Vec<Arc<Hook>> {
        map.values().flatten().cloned().collect()
    }
}

/// Client cache key: the webhook and the endpoint a Service resolved to.
type ClientKey = (HookKey, Option<(String, std::net::SocketAddr)>);

/// The HTTPS clients that call webhooks (kept, so connections are
/// reused) and the credentials each plugin calls with.
pub(crate) struct Callers {
    pub(crate) clients: Clients<ClientKey>,
    pub(crate) auth: crate::plugins::WebhookAuth,
}

/// The webhook configurations as a list + watch last saw them, and their
/// callers.
pub(crate) struct Webhooks {
    state: Arc<RwLock<State>>,
    synced: watch::Sender<bool>,
    follower: Mutex<Option<JoinHandle<()>>>,
    clients: Callers,
}

impl Webhooks {
    /// Empty; the follower starts with the first write. `auth` is the
    /// plugins' `kubeConfigFile` credentials.
    pub(crate) fn new(auth: crate::plugins::WebhookAuth) -> Webhooks {
        Webhooks {
            state: Arc::new(RwLock::new(State::default())),
            synced: watch::channel(false).0,
            follower: Mutex::new(None),
            clients: Callers {
                clients: Clients::new(),
                auth,
            },
        }
    }

    fn ensure_following(&self, store: &Arc<dyn StoreApi>) {
        let Ok(mut follower) = self.follower.lock() else {
            return;
        };
        if follower.is_none() {
            let informer = Informer::new(
                "admission webhook configurations",
                store.clone(),
                vec![mutating_configs(), validating_configs()],
            )
            .report_synced(self.synced.clone());
            let state = Arc::downgrade(&self.state);
            *follower = Some(tokio::spawn(follow(informer, state)));
        }
    }

    /// The webhooks of one kind, in kube's order.
    async fn hooks(&self, store: &Arc<dyn StoreApi>, mutating: bool) -> ApiResult<Vec<Arc<Hook>>> {
        self.ensure_following(store);
        let pick = |st: &State| {
            State::hooks(if mutating {
                &st.mutating
            } else {
                &st.validating
            })
        };
        if *self.synced.borrow() {
            let Ok(st) = self.state.read() else {
                return Ok(Vec::new());
            };
            return Ok(pick(&st));
        }
        // Not following yet (or re-listing): read the store this once.
        let gr = if mutating {
            mutating_configs()
        } else {
            validating_configs()
        };
        let mut st = State::default();
        for item in store.list(&gr, None).await?.items {
            st.apply(&gr, &item, false);
        }
        Ok(pick(&st))
    }

    /// Run the mutating webhooks that apply to `req` on `object` (`None`
    /// for a delete); a patched object is decoded and defaulted again by
    /// `redecode`. Returns the warnings.
    pub(crate) async fn mutate(
        &self,
        store: &Arc<dyn StoreApi>,
        req: &AdmissionRequest,
        object: &mut Option<Value>,
        redecode: Option<&Redecode<'_>>,
        ann: &mut Annotations,
    ) -> ApiResult<Vec<String>> {
        if hook::exempt(&req.gr.group, &req.kind) {
            return Ok(Vec::new());
        }
        let hooks = self.hooks(store, true).await?;
        if hooks.is_empty() {
            return Ok(Vec::new());
        }
        dispatch::mutate(store, &self.clients, &hooks, req, object, redecode, ann).await
    }

    /// Run the validating webhooks that apply to `req` (its admitted
    /// `object`) in parallel; the warnings, or the first refusal.
    pub(crate) async fn validate(
        &self,
        store: &Arc<dyn StoreApi>,
        req: &AdmissionRequest,
        object: Option<&Value>,
        ann: &mut Annotations,
    ) -> ApiResult<Vec<String>> {
        if hook::exempt(&req.gr.group, &req.kind) {
            return Ok(Vec::new());
        }
        let hooks = self.hooks(store, false).await?;
        if hooks.is_empty() {
            return Ok(Vec::new());
        }
        dispatch::validate(store, &self.clients, &hooks, req, object, ann).await
    }
}

impl Webhooks {
    /// A delete (`object` none, `oldObject` the stored object) through the
    /// mutating then the validating webhooks that `plugins` enables.
    pub(crate) async fn on_delete(
        &self,
        store: &Arc<dyn StoreApi>,
        req: &AdmissionRequest,
        plugins: &crate::PluginConfig,
        ann: &mut Annotations,
    ) -> ApiResult<Vec<String>> {
        let mut warnings = Vec::new();
        if plugins.enabled("MutatingAdmissionWebhook") {
            warnings.extend(self.mutate(store, req, &mut None, None, ann).await?);
        }
        if plugins.enabled("ValidatingAdmissionWebhook") {
            warnings.extend(self.validate(store, req, None, ann).await?);
        }
        Ok(warnings)
    }
}

impl Drop for Webhooks {
    fn drop(&mut self) {
        if let Ok(mut h) = self.follower.lock() {
            if let Some(h) = h.take() {
                h.abort();
            }
        }
    }
}

async fn follow(mut informer: Informer, state: std::sync::Weak<RwLock<State>>) {
    loop {
        let event = informer.next().await;
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
