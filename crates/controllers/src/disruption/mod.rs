//! The disruption controller (kube-controller-manager's `disruption`
//! controller): keeps every PodDisruptionBudget's status — `expectedPods`,
//! `desiredHealthy`, `currentHealthy`, `disruptionsAllowed`,
//! `observedGeneration`, the `DisruptionAllowed` condition — in step with
//! the pods it selects, and drops `disruptedPods` entries (written by the
//! eviction subresource) whose pods were not deleted within
//! [`budget::DELETION_TIMEOUT`].
//!
//! It follows the change streams of budgets and pods and recomputes every
//! budget after a change (changes arriving together are handled in one
//! pass), when a `disruptedPods` entry runs out, and every [`RESYNC`]
//! (workload scales are read, not followed). The arithmetic is in
//! [`budget`].

pub mod budget;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use futures::FutureExt as _;
use keelson_api::{ApiResult, GroupResource, ObjectKey, StoreApi, UpdateOptions};
use keelson_apimachinery::meta::meta_str;
use keelson_informer::Informer;
use serde_json::Value;

use budget::{Counts, PodController};

/// How often every budget is recomputed without a change (a workload's
/// `spec.replicas` is read, not followed).
pub const RESYNC: Duration = Duration::from_secs(5);

/// `policy/v1` PodDisruptionBudgets.
pub fn pdbs() -> GroupResource {
    GroupResource::new("policy", "poddisruptionbudgets")
}

fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

/// The disruption controller.
pub struct DisruptionController {
    store: Arc<dyn StoreApi>,
}

impl DisruptionController {
    /// A controller over `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        DisruptionController { store }
    }

    /// Run until `shutdown` completes, listing again after failures.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut informer = Informer::new(
            "disruption controller",
            self.store.clone(),
            vec![pdbs(), pods()],
        )
        .retry_after(crate::namespace::RETRY_AFTER);
        let follow = async {
            // Nothing is due before the first listing, nor after a failure
            // (tokio takes an overlong sleep as "never").
            let mut wait = Duration::MAX;
            loop {
                tokio::select! {
                    _ = informer.next() => {
                        // Whatever else has arrived is covered by the same pass.
                        while informer.next().now_or_never().is_some() {}
                    }
                    () = tokio::time::sleep(wait) => {}
                }
                wait = match self.sync_all().await {
                    Ok(wait) => wait,
                    Err(e) => {
                        informer.failed(&e);
                        Duration::MAX
                    }
                };
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = follow => {}
        }
    }

    /// Recompute every budget; how long until the next pass is due.
    async fn sync_all(&self) -> ApiResult<Duration> {
        let budgets = self.store.list(&pdbs(), None).await?.items;
        if budgets.is_empty() {
            return Ok(RESYNC);
        }
        let all_pods = self.store.list(&pods(), None).await?.items;
        let mut wait = RESYNC;
        let mut owners = OwnerCache::default();
        for pdb in &budgets {
            match self.sync_one(pdb, &all_pods, &mut owners).await {
                Ok(Some(recheck)) => wait = wait.min(recheck),
                Ok(None) => {}
                // Changed or gone meanwhile: the next event brings it again.
                Err(e) if e.is_conflict() || e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(wait)
    }

    /// kube's `trySync` (with `failSafe` on errors) for one budget.
    async fn sync_one(
        &self,
        pdb: &Value,
        all_pods: &[Value],
        owners: &mut OwnerCache,
    ) -> ApiResult<Option<Duration>> {
        let now = Utc::now();
        let ns = meta_str(pdb, "namespace");
        let selector = pdb.pointer("/spec/selector");
        let mut selected = Vec::new();
        for p in all_pods.iter().filter(|p| meta_str(p, "namespace") == ns) {
            match budget::selector_matches(selector, &budget::labels_of(p)) {
                Some(true) => selected.push(p),
                Some(false) => {}
                None => {
                    return self
                        .write_status(
                            pdb,
                            budget::fail_safe_status(pdb, "invalid label selector", now),
                        )
                        .await
                        .map(|()| None)
                }
            }
        }
        let mut controllers = HashMap::new();
        if needs_scale(pdb) {
            for p in &selected {
                let c = owners.controller_of(self.store.as_ref(), p).await?;
                controllers.insert(meta_str(p, "name").to_string(), c);
            }
        }
        let lookup = |p: &Value| {
            controllers
                .get(meta_str(p, "name"))
                .cloned()
                .unwrap_or(PodController::Unmanaged)
        };
        let (expected, desired, unmanaged) =
            match budget::expected_and_desired(pdb, &selected, &lookup) {
                Ok(v) => v,
                Err(msg) => {
                    let status = budget::fail_safe_status(pdb, &msg, now);
                    return self.write_status(pdb, status).await.map(|()| None);
                }
            };
        if !unmanaged.is_empty() {
            tracing::debug!(pdb = meta_str(pdb, "name"), ?unmanaged, "unmanaged pods");
        }
        let (disrupted, recheck) = budget::live_disrupted_pods(pdb, &selected, now);
        let counts = Counts {
            current_healthy: budget::count_healthy(&selected, &disrupted, now),
            desired_healthy: desired,
            expected_pods: expected,
        };
        if let Some(status) = budget::new_status(pdb, &counts, disrupted, now) {
            self.write_status(pdb, status).await?;
        }
        Ok(recheck.map(|t| {
            (t - now)
                .to_std()
                .unwrap_or(Duration::ZERO)
                .saturating_add(Duration::from_secs(1))
        }))
    }

    /// Store `status` on the budget, with the listed resourceVersion as
    /// precondition.
    async fn write_status(&self, pdb: &Value, status: Value) -> ApiResult<()> {
        if pdb.get("status") == Some(&status) {
            return Ok(());
        }
        let mut updated = pdb.clone();
        updated["status"] = status;
        let key = ObjectKey::new(pdbs(), meta_str(pdb, "namespace"), meta_str(pdb, "name"));
        self.store
            .update(
                &key,
                updated,
                UpdateOptions {
                    track_generation: true,
                    ..Default::default()
                },
            )
            .await
            .map(|_| ())
    }
}

/// Whether the budget's desired count depends on the pods' controllers'
/// scale (`maxUnavailable`, or a percentage `minAvailable`).
fn needs_scale(pdb: &Value) -> bool {
    pdb.pointer("/spec/maxUnavailable")
        .is_some_and(|v| !v.is_null())
        || pdb
            .pointer("/spec/minAvailable")
            .is_some_and(Value::is_string)
}

/// Controllers read during one pass, by namespace, resource and name.
#[derive(Default)]
struct OwnerCache {
    objects: HashMap<(String, &'static str, String), Option<Value>>,
}

impl OwnerCache {
    async fn get(
        &mut self,
        store: &dyn StoreApi,
        ns: &str,
        resource: &'static str,
        name: &str,
    ) -> ApiResult<Option<Value>> {
        let k = (ns.to_string(), resource, name.to_string());
        if let Some(v) = self.objects.get(&k) {
            return Ok(v.clone());
        }
        let group = if resource == "replicationcontrollers" {
            ""
        } else {
            "apps"
        };
        let key = ObjectKey::new(GroupResource::new(group, resource), ns, name);
        let v = match store.get(&key).await {
            Ok(v) => Some(v),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e),
        };
        self.objects.insert(k, v.clone());
        Ok(v)
    }

    /// kube's finders: the pod's ReplicationController, ReplicaSet (or
    /// the Deployment controlling it) or StatefulSet and its
    /// `spec.replicas`, matched by uid.
    async fn controller_of(
        &mut self,
        store: &dyn StoreApi,
        pod: &Value,
    ) -> ApiResult<PodController> {
        let Some(r) = budget::controller_ref(pod) else {
            return Ok(PodController::Unmanaged);
        };
        let ns = meta_str(pod, "namespace");
        let field = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or("").to_string();
        let (api_version, kind, name, uid) = (
            field(r, "apiVersion"),
            field(r, "kind"),
            field(r, "name"),
            field(r, "uid"),
        );
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let resource = match (group, kind.as_str()) {
            ("", "ReplicationController") => "replicationcontrollers",
            ("apps", "ReplicaSet") => "replicasets",
            ("apps", "StatefulSet") => "statefulsets",
            _ => return Ok(PodController::NotFound),
        };
        let Some(owner) = self.get(store, ns, resource, &name).await? else {
            return Ok(PodController::NotFound);
        };
        if meta_str(&owner, "uid") != uid {
            return Ok(PodController::NotFound);
        }
        if resource == "replicasets" {
            if let Some(d) = budget::controller_ref(&owner).filter(|d| {
                d.get("kind").and_then(Value::as_str) == Some("Deployment")
                    && d.get("apiVersion")
                        .and_then(Value::as_str)
                        .is_some_and(|v| v.starts_with("apps/"))
            }) {
                let (dname, duid) = (field(d, "name"), field(d, "uid"));
                return Ok(match self.get(store, ns, "deployments", &dname).await? {
                    Some(dep) if meta_str(&dep, "uid") == duid => scale_of(&dep),
                    _ => PodController::NotFound,
                });
            }
        }
        Ok(scale_of(&owner))
    }
}

fn scale_of(owner: &Value) -> PodController {
    PodController::Scale {
        uid: meta_str(owner, "uid").to_string(),
        replicas: owner
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1),
    }
}
