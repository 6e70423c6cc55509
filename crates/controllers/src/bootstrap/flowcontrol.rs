//! API Priority and Fairness bootstrap configuration, as kube-apiserver's
//! `priority-and-fairness-config-producer` post-start hook and its APF
//! config controller keep it:
//!
//! - kube's mandatory PriorityLevelConfigurations (`exempt`, `catch-all`)
//!   and FlowSchemas (`exempt`, `catch-all`) and its suggested ones
//!   (`data/flowcontrol-bootstrap.json`: the objects of kube 1.34's
//!   `apiserver/pkg/apis/flowcontrol/bootstrap`, in `flowcontrol/v1` with
//!   the defaults kube stores them with), each annotated
//!   `apf.kubernetes.io/autoupdate-spec: "true"`;
//! - [`ensure_configuration`]: a missing object is created; a mandatory
//!   one always gets its spec back (and the annotation `"true"`; the
//!   `exempt` level's `exempt` shares and lendable percent are the
//!   operator's, as kube's `specEqualish` has it); a
//!   suggested one gets its spec back when the annotation parses as true
//!   (or is missing or malformed and the object is at generation 1), and
//!   the annotation is rewritten to what was decided; an object that has
//!   the annotation, is no longer in the configuration and whose
//!   annotation parses as true is deleted;
//! - [`sync_dangling`]: every FlowSchema's `Dangling` condition
//!   (`False`/`Found` when the PriorityLevelConfiguration it names exists,
//!   `True`/`NotFound` when it does not), as kube's APF controller writes
//!   it;
//! - [`FlowControlController`]: both, following FlowSchemas and
//!   PriorityLevelConfigurations (the conditions on every change, the
//!   configuration on every listing and every [`ENSURE_INTERVAL`]).
//!
//! Keelson classifies no request by these objects: nothing is queued or
//! rejected by them.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use keelson_api::{
    ApiResult, CreateOptions, DeleteOptions, GroupResource, ObjectKey, StoreApi, UpdateOptions,
};
use keelson_apimachinery::meta::{meta_str, now_rfc3339};
use keelson_informer::{Event, Informer};
use serde_json::{json, Value};

/// The API group of FlowSchemas and PriorityLevelConfigurations.
pub const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// The annotation that lets the API server keep an object's spec.
pub const AUTOUPDATE_SPEC: &str = "apf.kubernetes.io/autoupdate-spec";

/// How often the configuration is ensured again (kube: every minute).
pub const ENSURE_INTERVAL: Duration = Duration::from_secs(60);

/// The condition type kube's APF controller writes on FlowSchemas.
pub const DANGLING: &str = "Dangling";

const DATA: &str = include_str!("../../data/flowcontrol-bootstrap.json");

/// FlowSchemas.
pub fn flow_schemas() -> GroupResource {
    GroupResource::new(GROUP, "flowschemas")
}

/// PriorityLevelConfigurations.
pub fn priority_levels() -> GroupResource {
    GroupResource::new(GROUP, "prioritylevelconfigurations")
}

/// One set of bootstrap objects.
#[derive(Debug, Clone, PartialEq)]
pub struct Objects {
    /// PriorityLevelConfigurations, in kube's order.
    pub priority_levels: Vec<Value>,
    /// FlowSchemas, in kube's order.
    pub flow_schemas: Vec<Value>,
}

/// kube's bootstrap APF configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    /// Always kept in kube's form.
    pub mandatory: Objects,
    /// Created when missing; kept while the annotation says so.
    pub suggested: Objects,
}

impl Configuration {
    /// Every name of `resource` in the configuration.
    fn names(&self, resource: &str) -> BTreeSet<&str> {
        let schemas = resource == "flowschemas";
        [&self.mandatory, &self.suggested]
            .into_iter()
            .flat_map(|o| {
                if schemas {
                    &o.flow_schemas
                } else {
                    &o.priority_levels
                }
            })
            .map(|o| meta_str(o, "name"))
            .collect()
    }
}

fn objects(data: &Value, part: &str) -> Objects {
    let list = |field: &str| {
        data.pointer(&format!("/{part}/{field}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    Objects {
        priority_levels: list("priorityLevelConfigurations"),
        flow_schemas: list("flowSchemas"),
    }
}

/// The bootstrap configuration (parsed once).
pub fn configuration() -> &'static Configuration {
    static CONFIG: OnceLock<Configuration> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let data: Value =
            serde_json::from_str(DATA).expect("flowcontrol-bootstrap.json is valid JSON");
        Configuration {
            mandatory: objects(&data, "mandatory"),
            suggested: objects(&data, "suggested"),
        }
    })
}

/// Go's `strconv.ParseBool`.
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn autoupdate_annotation(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(AUTOUPDATE_SPEC))
        .and_then(Value::as_str)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Mandatory,
    Suggested,
}

/// kube's `specEqualish`: the specs are equal, except that the `exempt`
/// level's `exempt.nominalConcurrencyShares` and `lendablePercent` are the
/// operator's to set (`exempt_level`).
fn spec_equalish(want: &Value, have: &Value, exempt_level: bool) -> bool {
    let (Some(w), Some(h)) = (want.get("spec"), have.get("spec")) else {
        return want.get("spec") == have.get("spec");
    };
    if !exempt_level {
        return w == h;
    }
    let Some(theirs) = h.get("exempt").filter(|e| e.is_object()) else {
        return false;
    };
    let mut w = w.clone();
    if let Some(ours) = w.get_mut("exempt").and_then(Value::as_object_mut) {
        for field in ["nominalConcurrencyShares", "lendablePercent"] {
            match theirs.get(field) {
                Some(v) => ours.insert(field.to_string(), v.clone()),
                None => ours.remove(field),
            };
        }
    }
    &w == h
}

/// What `have` becomes under `strategy` to match `want`, or `None` when
/// it is up to date (kube's `ReviseIfNeeded`); `exempt_level` for the
/// `exempt` PriorityLevelConfiguration.
fn updated(have: &Value, want: &Value, strategy: Strategy, exempt_level: bool) -> Option<Value> {
    let annotation = autoupdate_annotation(have);
    let autoupdate = match strategy {
        Strategy::Mandatory => true,
        Strategy::Suggested => match annotation.and_then(parse_bool) {
            Some(b) => b,
            // Missing or malformed: the operator has not touched a spec
            // still at its first generation.
            None => have.pointer("/metadata/generation").and_then(Value::as_i64) == Some(1),
        },
    };
    let fix_annotation = annotation.and_then(parse_bool) != Some(autoupdate);
    let fix_spec = autoupdate && !spec_equalish(want, have, exempt_level);
    if !fix_annotation && !fix_spec {
        return None;
    }
    let mut new = have.clone();
    if fix_annotation {
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if !annotations.is_object() {
                *annotations = json!({});
            }
            annotations[AUTOUPDATE_SPEC] = json!(autoupdate.to_string());
        }
    }
    if fix_spec {
        new["spec"] = want["spec"].clone();
    }
    Some(new)
}

/// Create or bring up to date one object; true if it was written.
async fn ensure_one(
    store: &dyn StoreApi,
    gr: &GroupResource,
    want: &Value,
    strategy: Strategy,
) -> ApiResult<bool> {
    let key = ObjectKey::new(gr.clone(), "", meta_str(want, "name"));
    let have = match store.get(&key).await {
        Ok(h) => h,
        Err(e) if e.is_not_found() => {
            let opts = CreateOptions {
                track_generation: true,
                ..Default::default()
            };
            return match store.create(&key, want.clone(), opts).await {
                Ok(_) => Ok(true),
                // Another API server was first; the next pass looks again.
                Err(e) if e.is_already_exists() => Ok(false),
                Err(e) => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let exempt_level = gr.resource == "prioritylevelconfigurations" && key.name == "exempt";
    let Some(new) = updated(&have, want, strategy, exempt_level) else {
        return Ok(false);
    };
    let opts = UpdateOptions {
        track_generation: true,
        ..Default::default()
    };
    match store.update(&key, new, opts).await {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Delete the objects of `gr` that carry the annotation, are no longer in
/// the configuration, and whose annotation parses as true; returns how
/// many were deleted.
async fn remove_stale(store: &dyn StoreApi, gr: &GroupResource) -> ApiResult<usize> {
    let keep = configuration().names(&gr.resource);
    let mut removed = 0;
    for obj in store.list(gr, None).await?.items {
        let name = meta_str(&obj, "name");
        if keep.contains(name) || autoupdate_annotation(&obj).and_then(parse_bool) != Some(true) {
            continue;
        }
        let key = ObjectKey::new(gr.clone(), "", name);
        match store.delete(&key, DeleteOptions::default()).await {
            Ok(_) => removed += 1,
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(removed)
}

/// Ensure kube's bootstrap configuration (suggested, then mandatory, then
/// the removal of objects no longer suggested, as kube does); returns how
/// many objects were written.
pub async fn ensure_configuration(store: &dyn StoreApi) -> ApiResult<usize> {
    let config = configuration();
    let mut written = 0;
    for (objects, strategy) in [
        (&config.suggested, Strategy::Suggested),
        (&config.mandatory, Strategy::Mandatory),
    ] {
        for want in &objects.priority_levels {
            written += usize::from(ensure_one(store, &priority_levels(), want, strategy).await?);
        }
        for want in &objects.flow_schemas {
            written += usize::from(ensure_one(store, &flow_schemas(), want, strategy).await?);
        }
    }
    written += remove_stale(store, &flow_schemas()).await?;
    written += remove_stale(store, &priority_levels()).await?;
    Ok(written)
}

/// The `Dangling` condition kube's APF controller gives a FlowSchema
/// naming `level` (without `lastTransitionTime`).
pub fn dangling_condition(level: &str, exists: bool) -> Value {
    if exists {
        json!({
            "type": DANGLING,
            "status": "False",
            "reason": "Found",
            "message": format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists"
            ),
        })
    } else {
        json!({
            "type": DANGLING,
            "status": "True",
            "reason": "NotFound",
            "message": format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object"
            ),
        })
    }
}

/// `fs` with its `Dangling` condition set for `levels`, or `None` when
/// the condition is already right (same status, reason and message).
pub fn with_dangling(fs: &Value, levels: &BTreeSet<String>) -> Option<Value> {
    let level = fs
        .pointer("/spec/priorityLevelConfiguration/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let want = dangling_condition(level, levels.contains(level));
    let conditions = fs
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let current = conditions
        .iter()
        .position(|c| c.get("type").and_then(Value::as_str) == Some(DANGLING));
    if let Some(i) = current {
        let c = &conditions[i];
        if ["status", "reason", "message"]
            .iter()
            .all(|f| c.get(*f) == want.get(*f))
        {
            return None;
        }
    }
    let condition = json!({
        "type": DANGLING,
        "status": want["status"],
        "lastTransitionTime": now_rfc3339(),
        "reason": want["reason"],
        "message": want["message"],
    });
    let mut conditions = conditions;
    match current {
        Some(i) => conditions[i] = condition,
        None => conditions.push(condition),
    }
    let mut new = fs.clone();
    if !new.get("status").is_some_and(Value::is_object) {
        new["status"] = json!({});
    }
    new["status"]["conditions"] = Value::Array(conditions);
    Some(new)
}

/// Bring every FlowSchema's `Dangling` condition up to date; returns how
/// many FlowSchemas were written. A FlowSchema changed meanwhile is left
/// to the next pass (its change brings one).
pub async fn sync_dangling(store: &dyn StoreApi) -> ApiResult<usize> {
    let levels: BTreeSet<String> = store
        .list(&priority_levels(), None)
        .await?
        .items
        .iter()
        .map(|o| meta_str(o, "name").to_string())
        .collect();
    let mut written = 0;
    for fs in store.list(&flow_schemas(), None).await?.items {
        let Some(new) = with_dangling(&fs, &levels) else {
            continue;
        };
        let key = ObjectKey::new(flow_schemas(), "", meta_str(&fs, "name"));
        match store.update(&key, new, UpdateOptions::default()).await {
            Ok(_) => written += 1,
            Err(e) if e.is_conflict() || e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

/// [`ensure_configuration`] then [`sync_dangling`]: what the API server
/// makes sure of as it starts; returns how many objects were written.
pub async fn reconcile_flowcontrol(store: &dyn StoreApi) -> ApiResult<usize> {
    let written = ensure_configuration(store).await?;
    Ok(written + sync_dangling(store).await?)
}

/// Keeps the bootstrap configuration and the FlowSchemas' `Dangling`
/// conditions: the whole configuration on every listing and every
/// [`ENSURE_INTERVAL`], the conditions on every change of a FlowSchema or
/// a PriorityLevelConfiguration.
pub struct FlowControlController {
    store: Arc<dyn StoreApi>,
}

impl FlowControlController {
    /// A controller over `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        FlowControlController { store }
    }

    /// Run until `shutdown` completes, listing again after failures.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut informer = Informer::new(
            "apf configuration",
            self.store.clone(),
            vec![flow_schemas(), priority_levels()],
        )
        .retry_after(crate::namespace::RETRY_AFTER)
        .resync_every(ENSURE_INTERVAL);
        let follow = async {
            loop {
                let result = match informer.next().await {
                    Event::Listed(_) | Event::Resync => {
                        reconcile_flowcontrol(self.store.as_ref()).await
                    }
                    Event::Changed(..) => sync_dangling(self.store.as_ref()).await,
                };
                match result {
                    Ok(0) => {}
                    Ok(written) => tracing::debug!(written, "apf configuration reconciled"),
                    Err(e) => informer.failed(&e),
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = follow => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(objects: &[Value]) -> Vec<&str> {
        objects.iter().map(|o| meta_str(o, "name")).collect()
    }

    #[test]
    fn the_data_is_kubes_configuration() {
        let c = configuration();
        assert_eq!(names(&c.mandatory.priority_levels), ["catch-all", "exempt"]);
        assert_eq!(names(&c.mandatory.flow_schemas), ["exempt", "catch-all"]);
        assert_eq!(
            names(&c.suggested.priority_levels),
            [
                "system",
                "node-high",
                "leader-election",
                "workload-high",
                "workload-low",
                "global-default"
            ]
        );
        assert_eq!(
            names(&c.suggested.flow_schemas),
            [
                "system-nodes",
                "system-node-high",
                "probes",
                "system-leader-election",
                "workload-leader-election",
                "endpoint-controller",
                "kube-controller-manager",
                "kube-scheduler",
                "kube-system-service-accounts",
                "service-accounts",
                "global-default"
            ]
        );
        assert_eq!(c.names("prioritylevelconfigurations").len(), 8);
        assert_eq!(c.names("flowschemas").len(), 13);
    }

    #[test]
    fn every_object_is_annotated_and_typed() {
        let c = configuration();
        for (objects, kind) in [
            (&c.mandatory.priority_levels, "PriorityLevelConfiguration"),
            (&c.suggested.priority_levels, "PriorityLevelConfiguration"),
            (&c.mandatory.flow_schemas, "FlowSchema"),
            (&c.suggested.flow_schemas, "FlowSchema"),
        ] {
            for o in objects {
                assert_eq!(o["apiVersion"], "flowcontrol.apiserver.k8s.io/v1", "{o}");
                assert_eq!(o["kind"], kind, "{o}");
                assert_eq!(autoupdate_annotation(o), Some("true"), "{o}");
                assert!(o["spec"].is_object(), "{o}");
            }
        }
    }

    #[test]
    fn every_flow_schema_names_a_bootstrap_level() {
        let c = configuration();
        let levels = c.names("prioritylevelconfigurations");
        for fs in c
            .mandatory
            .flow_schemas
            .iter()
            .chain(&c.suggested.flow_schemas)
        {
            let level = fs["spec"]["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap();
            assert!(levels.contains(level), "{fs}");
            let precedence = fs["spec"]["matchingPrecedence"].as_i64().unwrap();
            assert!((1..=10000).contains(&precedence), "{fs}");
            let rules = fs["spec"]["rules"].as_array().unwrap();
            assert!(!rules.is_empty(), "{fs}");
            for r in rules {
                assert!(!r["subjects"].as_array().unwrap().is_empty(), "{fs}");
            }
        }
        // Only the mandatory schemas take the lowest and highest places.
        let precedence = |name: &str| {
            c.mandatory
                .flow_schemas
                .iter()
                .chain(&c.suggested.flow_schemas)
                .find(|f| meta_str(f, "name") == name)
                .unwrap()["spec"]["matchingPrecedence"]
                .as_i64()
                .unwrap()
        };
        assert_eq!(precedence("exempt"), 1);
        assert_eq!(precedence("catch-all"), 10000);
    }

    #[test]
    fn levels_are_stored_with_kubes_defaults() {
        let c = configuration();
        let level = |name: &str| {
            c.mandatory
                .priority_levels
                .iter()
                .chain(&c.suggested.priority_levels)
                .find(|l| meta_str(l, "name") == name)
                .unwrap()["spec"]
                .clone()
        };
        assert_eq!(
            level("exempt"),
            json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}})
        );
        assert_eq!(
            level("catch-all"),
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                   "limitResponse": {"type": "Reject"}, "lendablePercent": 0}})
        );
        let shares: Vec<(&str, i64, i64)> = [
            "system",
            "node-high",
            "leader-election",
            "workload-high",
            "workload-low",
            "global-default",
        ]
        .iter()
        .map(|n| {
            let l = level(n);
            assert_eq!(l["limited"]["limitResponse"]["type"], "Queue");
            assert_eq!(
                l["limited"]["limitResponse"]["queuing"]["queueLengthLimit"],
                50
            );
            (
                *n,
                l["limited"]["nominalConcurrencyShares"].as_i64().unwrap(),
                l["limited"]["lendablePercent"].as_i64().unwrap(),
            )
        })
        .collect();
        assert_eq!(
            shares,
            [
                ("system", 30, 33),
                ("node-high", 40, 25),
                ("leader-election", 10, 0),
                ("workload-high", 40, 50),
                ("workload-low", 100, 90),
                ("global-default", 20, 50)
            ]
        );
    }

    #[test]
    fn the_strategies_follow_the_annotation() {
        let want = json!({"metadata": {"name": "x", "annotations": {AUTOUPDATE_SPEC: "true"}},
                          "spec": {"a": 1}});
        let have = |annotation: Option<&str>, generation: i64, spec: Value| {
            let mut o = json!({"metadata": {"name": "x", "generation": generation}, "spec": spec});
            if let Some(a) = annotation {
                o["metadata"]["annotations"] = json!({AUTOUPDATE_SPEC: a});
            }
            o
        };
        let suggested = |annotation, generation, spec| {
            updated(
                &have(annotation, generation, spec),
                &want,
                Strategy::Suggested,
                false,
            )
        };
        // Up to date.
        assert!(suggested(Some("true"), 3, json!({"a": 1})).is_none());
        // Auto-update on: the spec comes back.
        let u = suggested(Some("true"), 3, json!({"a": 2})).unwrap();
        assert_eq!(u["spec"], json!({"a": 1}));
        // Off: the operator's spec stays.
        assert!(suggested(Some("false"), 3, json!({"a": 2})).is_none());
        // Mandatory: the spec and the annotation come back.
        let mandatory = have(Some("false"), 3, json!({"a": 2}));
        let u = updated(&mandatory, &want, Strategy::Mandatory, false).unwrap();
        assert_eq!(u["spec"], json!({"a": 1}));
        assert_eq!(autoupdate_annotation(&u), Some("true"));
        // Missing annotation at generation 1: auto-update, annotated.
        let u = suggested(None, 1, json!({"a": 2})).unwrap();
        assert_eq!(u["spec"], json!({"a": 1}));
        assert_eq!(autoupdate_annotation(&u), Some("true"));
        // Malformed at a later generation: left alone, annotated false.
        let u = suggested(Some("yes"), 2, json!({"a": 2})).unwrap();
        assert_eq!(u["spec"], json!({"a": 2}));
        assert_eq!(autoupdate_annotation(&u), Some("false"));
        // Go's ParseBool spellings.
        assert!(suggested(Some("T"), 3, json!({"a": 1})).is_none());
    }

    #[test]
    fn the_exempt_levels_shares_are_the_operators() {
        let want = json!({"metadata": {"name": "exempt"}, "spec": {"type": "Exempt",
            "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}});
        let mut have = want.clone();
        have["metadata"]["annotations"] = json!({AUTOUPDATE_SPEC: "true"});
        have["spec"]["exempt"] = json!({"nominalConcurrencyShares": 10, "lendablePercent": 20});
        assert!(updated(&have, &want, Strategy::Mandatory, true).is_none());
        // Not for other levels, nor once the type is changed.
        assert!(updated(&have, &want, Strategy::Mandatory, false).is_some());
        have["spec"] = json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 1}});
        let u = updated(&have, &want, Strategy::Mandatory, true).unwrap();
        assert_eq!(u["spec"], want["spec"]);
    }

    #[test]
    fn dangling_conditions() {
        let fs = json!({"metadata": {"name": "f"},
                        "spec": {"priorityLevelConfiguration": {"name": "pl"}}});
        let levels: BTreeSet<String> = ["pl".to_string()].into();
        let found = with_dangling(&fs, &levels).unwrap();
        let c = &found["status"]["conditions"][0];
        assert_eq!(c["type"], "Dangling");
        assert_eq!(c["status"], "False");
        assert_eq!(c["reason"], "Found");
        assert_eq!(
            c["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"pl\" and it exists"
        );
        assert!(c["lastTransitionTime"].is_string());
        assert!(with_dangling(&found, &levels).is_none());
        let missing = with_dangling(&found, &BTreeSet::new()).unwrap();
        let conditions = missing["status"]["conditions"].as_array().unwrap();
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0]["status"], "True");
        assert_eq!(conditions[0]["reason"], "NotFound");
        assert_eq!(
            conditions[0]["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"pl\" but there is no such object"
        );
    }

    async fn local_store(dir: &std::path::Path) -> Arc<dyn StoreApi> {
        Arc::new(
            keelson_storage::LocalStore::open(dir, Default::default())
                .await
                .unwrap(),
        )
    }

    fn key(gr: GroupResource, name: &str) -> ObjectKey {
        ObjectKey::new(gr, "", name)
    }

    #[tokio::test]
    async fn ensure_creates_then_keeps_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let store = local_store(dir.path()).await;
        let s = store.as_ref();
        // 8 levels + 13 schemas created, then 13 conditions written.
        assert_eq!(reconcile_flowcontrol(s).await.unwrap(), 8 + 13 + 13);
        // The stored form is the data's: a second pass writes nothing.
        assert_eq!(reconcile_flowcontrol(s).await.unwrap(), 0);
        let schemas = s.list(&flow_schemas(), None).await.unwrap().items;
        assert_eq!(schemas.len(), 13);
        for fs in &schemas {
            assert_eq!(fs["metadata"]["generation"], 1, "{fs}");
            let c = &fs["status"]["conditions"][0];
            assert_eq!(
                (c["type"].as_str(), c["status"].as_str()),
                (Some("Dangling"), Some("False")),
                "{fs}"
            );
        }

        // A suggested level edited with auto-update on gets its spec back;
        // with it off, keeps the operator's.
        let k = key(priority_levels(), "workload-low");
        let mut wl = s.get(&k).await.unwrap();
        wl["spec"]["limited"]["nominalConcurrencyShares"] = json!(7);
        s.update(&k, wl.clone(), UpdateOptions::default())
            .await
            .unwrap();
        assert_eq!(ensure_configuration(s).await.unwrap(), 1);
        let back = s.get(&k).await.unwrap();
        assert_eq!(back["spec"]["limited"]["nominalConcurrencyShares"], 100);
        let mut wl = back;
        wl["spec"]["limited"]["nominalConcurrencyShares"] = json!(7);
        wl["metadata"]["annotations"][AUTOUPDATE_SPEC] = json!("false");
        s.update(&k, wl, UpdateOptions::default()).await.unwrap();
        assert_eq!(ensure_configuration(s).await.unwrap(), 0);
        let kept = s.get(&k).await.unwrap();
        assert_eq!(kept["spec"]["limited"]["nominalConcurrencyShares"], 7);

        // A mandatory schema is always put back.
        let k = key(flow_schemas(), "catch-all");
        let mut ca = s.get(&k).await.unwrap();
        ca["spec"]["matchingPrecedence"] = json!(5000);
        ca["metadata"]["annotations"][AUTOUPDATE_SPEC] = json!("false");
        s.update(&k, ca, UpdateOptions::default()).await.unwrap();
        assert_eq!(ensure_configuration(s).await.unwrap(), 1);
        let ca = s.get(&k).await.unwrap();
        assert_eq!(ca["spec"]["matchingPrecedence"], 10000);
        assert_eq!(autoupdate_annotation(&ca), Some("true"));

        // A deleted one comes back.
        s.delete(&key(flow_schemas(), "probes"), DeleteOptions::default())
            .await
            .unwrap();
        assert_eq!(ensure_configuration(s).await.unwrap(), 1);

        // An auto-updated object kube no longer suggests is removed; an
        // operator's own (no annotation, or "false") is kept.
        let extra = |name: &str, annotation: Option<&str>| {
            let mut o = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                "kind": "PriorityLevelConfiguration", "metadata": {"name": name},
                "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}});
            if let Some(a) = annotation {
                o["metadata"]["annotations"] = json!({AUTOUPDATE_SPEC: a});
            }
            o
        };
        for (name, a) in [
            ("old", Some("true")),
            ("mine", None),
            ("pinned", Some("false")),
        ] {
            s.create(
                &key(priority_levels(), name),
                extra(name, a),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        }
        assert_eq!(ensure_configuration(s).await.unwrap(), 1);
        assert!(s
            .get(&key(priority_levels(), "old"))
            .await
            .unwrap_err()
            .is_not_found());
        assert!(s.get(&key(priority_levels(), "mine")).await.is_ok());
        assert!(s.get(&key(priority_levels(), "pinned")).await.is_ok());
    }

    #[tokio::test]
    async fn the_controller_follows_levels() {
        let dir = tempfile::tempdir().unwrap();
        let store = local_store(dir.path()).await;
        let task =
            tokio::spawn(FlowControlController::new(store.clone()).run(std::future::pending()));
        let s = store.as_ref();
        let status_of = |fs: Value| {
            fs.pointer("/status/conditions/0/status")
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let wait_for = |name: &'static str, want: &'static str| async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(fs) = s.get(&key(flow_schemas(), name)).await {
                    if status_of(fs).as_deref() == Some(want) {
                        return;
                    }
                }
                assert!(tokio::time::Instant::now() < deadline, "{name}: {want}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        wait_for("global-default", "False").await;
        // An operator's schema naming a level that does not exist yet.
        let fs = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "mine"},
            "spec": {"priorityLevelConfiguration": {"name": "later"}, "matchingPrecedence": 300,
                     "rules": []}});
        s.create(&key(flow_schemas(), "mine"), fs, CreateOptions::default())
            .await
            .unwrap();
        wait_for("mine", "True").await;
        let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": "later"},
            "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}});
        s.create(
            &key(priority_levels(), "later"),
            level,
            CreateOptions::default(),
        )
        .await
        .unwrap();
        wait_for("mine", "False").await;
        s.delete(&key(priority_levels(), "later"), DeleteOptions::default())
            .await
            .unwrap();
        wait_for("mine", "True").await;
        task.abort();
    }
}
