//! LimitRanger (`plugin/pkg/admission/limitranger`): on pod creates, the
//! namespace's LimitRanges' `Container` `default` / `defaultRequest` fill
//! the containers' and init containers' missing limits and requests (noted
//! in the `kubernetes.io/limit-ranger` annotation); then `min`, `max` and
//! `maxLimitRequestRatio` are enforced per container, per pod, and on
//! PersistentVolumeClaims' storage requests (create and update), with
//! kube's `403` messages.
//!
//! kube walks each item's resources in Go map order (random); here they go
//! in name order, so several violations are listed in that order.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use keelson_api::Operation;
use keelson_apimachinery::ApiResult;
use serde_json::{Map, Value};

use super::cache::{limit_ranges, live_list};
use super::util::{aggregate, canonical, child, nanos, objects, sort_keys, text};
use super::Attrs;

const ANNOTATION: &str = "kubernetes.io/limit-ranger";
/// kube's `liveTTL`: how long a live lookup of an empty namespace is kept.
const LIVE_TTL: Duration = Duration::from_secs(30);
/// `resource.MaxMilliValue`.
const MAX_MILLI: i128 = (i64::MAX / 1000) as i128;

/// kube's live-lookup cache: the LimitRanges listed from the store for a
/// namespace the informer showed none in.
#[derive(Default)]
pub(crate) struct LiveLookups {
    entries: Mutex<HashMap<String, (Instant, Vec<Value>)>>,
}

/// `SupportsAttributes`: pod creates, claim creates and updates.
fn supports(a: &Attrs<'_>) -> bool {
    match a.req.operation {
        Operation::Create => a.is("", "pods") || a.is("", "persistentvolumeclaims"),
        Operation::Update => a.is("", "persistentvolumeclaims"),
        Operation::Delete => false,
    }
}

/// The LimitRanges that apply, or `None` when the plugin has nothing to do.
async fn ranges(a: &Attrs<'_>, live: &LiveLookups) -> ApiResult<Option<Vec<Value>>> {
    if !supports(a) {
        return Ok(None);
    }
    let deleting = a
        .req
        .old_object
        .as_ref()
        .and_then(|o| o.get("metadata"))
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|v| !v.is_null());
    if deleting {
        return Ok(None);
    }
    let ns = a.req.namespace.as_str();
    let items = a
        .cache
        .list(a.store, &limit_ranges(), Some(ns))
        .await
        .map_err(|_| {
            a.forbidden(&format!(
                "unable to {} {} at this time because there was an error enforcing limit ranges",
                operation_name(a.req.operation),
                a.req.gr
            ))
        })?;
    if !items.is_empty() {
        return Ok(Some(items));
    }
    if let Ok(entries) = live.entries.lock() {
        if let Some((at, items)) = entries.get(ns) {
            if at.elapsed() < LIVE_TTL {
                return Ok(Some(items.clone()));
            }
        }
    }
    let items = live_list(a.store, &limit_ranges(), Some(ns))
        .await
        .map_err(|e| a.forbidden(&e.message))?;
    if let Ok(mut entries) = live.entries.lock() {
        let now = Instant::now();
        entries.retain(|_, (at, _)| now.duration_since(*at) < LIVE_TTL);
        entries.insert(ns.to_string(), (now, items.clone()));
    }
    Ok(Some(items))
}

fn operation_name(op: Operation) -> &'static str {
    match op {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

fn items_of(lr: &Value) -> Vec<&Map<String, Value>> {
    objects(lr, &["spec", "limits"])
}

fn list_of<'a>(item: &'a Map<String, Value>, key: &str) -> Vec<(&'a String, &'a Value)> {
    let mut out: Vec<(&String, &Value)> = item
        .get(key)
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    out.sort_by(|a, b| a.0.cmp(b.0));
    out
}

/// The mutating phase: defaults for pods.
pub(crate) async fn mutate(a: &Attrs<'_>, live: &LiveLookups, pod: &mut Value) -> ApiResult<()> {
    if !a.is("", "pods") {
        return Ok(());
    }
    let Some(items) = ranges(a, live).await? else {
        return Ok(());
    };
    for lr in &items {
        let mut requests = Map::new();
        let mut limits = Map::new();
        for item in items_of(lr) {
            if item.get("type").and_then(Value::as_str) != Some("Container") {
                continue;
            }
            for (k, v) in list_of(item, "defaultRequest") {
                requests.insert(k.clone(), Value::from(canonical(&text(v))));
            }
            for (k, v) in list_of(item, "default") {
                limits.insert(k.clone(), Value::from(canonical(&text(v))));
            }
        }
        merge_pod(pod, &requests, &limits);
    }
    Ok(())
}

/// `mergePodResourceRequirements`.
fn merge_pod(pod: &mut Value, requests: &Map<String, Value>, limits: &Map<String, Value>) {
    if requests.is_empty() && limits.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        for (kind, label) in [
            ("containers", "container"),
            ("initContainers", "init container"),
        ] {
            let Some(list) = spec.get_mut(kind).and_then(Value::as_array_mut) else {
                continue;
            };
            for c in list.iter_mut().filter_map(Value::as_object_mut) {
                let name = c
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let Some(resources) = child(c, "resources") else {
                    continue;
                };
                let set_limits = fill(resources, "limits", limits);
                let set_requests = fill(resources, "requests", requests);
                if !set_requests.is_empty() {
                    notes.push(format!(
                        "{} request for {label} {name}",
                        set_requests.join(", ")
                    ));
                }
                if !set_limits.is_empty() {
                    notes.push(format!(
                        "{} limit for {label} {name}",
                        set_limits.join(", ")
                    ));
                }
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    let Some(root) = pod.as_object_mut() else {
        return;
    };
    let Some(meta) = child(root, "metadata") else {
        return;
    };
    let Some(annotations) = child(meta, "annotations") else {
        return;
    };
    annotations.insert(
        ANNOTATION.into(),
        Value::from(format!("LimitRanger plugin set: {}", notes.join("; "))),
    );
}

/// Add each of `defaults` missing from `resources[key]`; the names set,
/// sorted.
fn fill(
    resources: &mut Map<String, Value>,
    key: &str,
    defaults: &Map<String, Value>,
) -> Vec<String> {
    let mut set = Vec::new();
    if defaults.is_empty() {
        return set;
    }
    let Some(list) = child(resources, key) else {
        return set;
    };
    for (k, v) in defaults {
        if !list.contains_key(k) {
            list.insert(k.clone(), v.clone());
            set.push(k.clone());
        }
    }
    if list.is_empty() {
        resources.remove(key);
    } else {
        sort_keys(list);
    }
    set.sort();
    set
}

/// One quantity: its exact value and how it is shown.
#[derive(Clone)]
struct Qty {
    nanos: i128,
    shown: String,
}

type Resources = BTreeMap<String, Qty>;

fn resources_of(v: Option<&Value>) -> Resources {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, q)| {
                    (
                        k.clone(),
                        Qty {
                            nanos: nanos(q).unwrap_or(0),
                            shown: canonical(&text(q)),
                        },
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `a + b`, shown in the format of `a` (kube's `Quantity.Add`).
fn add(a: &Qty, b: &Qty) -> Qty {
    let n = a.nanos + b.nanos;
    let binary = a.shown.ends_with('i');
    let shown = if binary && n % 1_000_000_000 == 0 {
        let v = n / 1_000_000_000;
        if v % 1024 == 0 && v != 0 {
            canonical(&format!("{}Ki", v / 1024))
        } else {
            canonical(&v.to_string())
        }
    } else {
        canonical(&format!("{n}n"))
    };
    Qty { nanos: n, shown }
}

fn add_list(list: &mut Resources, more: &Resources) {
    for (k, q) in more {
        let sum = match list.get(k) {
            Some(cur) => add(cur, q),
            None => q.clone(),
        };
        list.insert(k.clone(), sum);
    }
}

fn max_list(list: &mut Resources, more: &Resources) {
    for (k, q) in more {
        if list.get(k).is_none_or(|cur| q.nanos > cur.nanos) {
            list.insert(k.clone(), q.clone());
        }
    }
}

fn ceil_div(n: i128, d: i128) -> i128 {
    n.div_euclid(d) + i128::from(n.rem_euclid(d) != 0)
}

/// `requestLimitEnforcedValues`: milli-units when all fit, else units.
fn comparable(values: [i128; 3]) -> [i128; 3] {
    let units = values.map(|n| ceil_div(n, 1_000_000_000));
    if units.iter().all(|u| *u <= MAX_MILLI) {
        values.map(|n| ceil_div(n, 1_000_000))
    } else {
        units
    }
}

fn nanos_or_zero(q: Option<&Qty>) -> i128 {
    q.map_or(0, |q| q.nanos)
}

fn min_constraint(
    kind: &str,
    res: &str,
    enforced: &Qty,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let (r, l) = (req.get(res), lim.get(res));
    let [rv, lv, ev] = comparable([nanos_or_zero(r), nanos_or_zero(l), enforced.nanos]);
    let e = &enforced.shown;
    let Some(r) = r else {
        return Some(format!(
            "minimum {res} usage per {kind} is {e}.  No request is specified"
        ));
    };
    if rv < ev {
        return Some(format!(
            "minimum {res} usage per {kind} is {e}, but request is {}",
            r.shown
        ));
    }
    match l {
        Some(l) if lv < ev => Some(format!(
            "minimum {res} usage per {kind} is {e}, but limit is {}",
            l.shown
        )),
        _ => None,
    }
}

fn max_constraint(
    kind: &str,
    res: &str,
    enforced: &Qty,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let (r, l) = (req.get(res), lim.get(res));
    let [rv, lv, ev] = comparable([nanos_or_zero(r), nanos_or_zero(l), enforced.nanos]);
    let e = &enforced.shown;
    let Some(l) = l else {
        return Some(format!(
            "maximum {res} usage per {kind} is {e}.  No limit is specified"
        ));
    };
    if lv > ev {
        return Some(format!(
            "maximum {res} usage per {kind} is {e}, but limit is {}",
            l.shown
        ));
    }
    match r {
        Some(r) if rv > ev => Some(format!(
            "maximum {res} usage per {kind} is {e}, but request is {}",
            r.shown
        )),
        _ => None,
    }
}

/// `maxRequestConstraint` (claims: only requests count).
fn max_request_constraint(
    kind: &str,
    res: &str,
    enforced: &Qty,
    req: &Resources,
) -> Option<String> {
    let r = req.get(res);
    let [rv, _, ev] = comparable([nanos_or_zero(r), 0, enforced.nanos]);
    let e = &enforced.shown;
    let Some(r) = r else {
        return Some(format!(
            "maximum {res} usage per {kind} is {e}.  No request is specified"
        ));
    };
    (rv > ev).then(|| {
        format!(
            "maximum {res} usage per {kind} is {e}, but request is {}",
            r.shown
        )
    })
}

fn ratio_constraint(
    kind: &str,
    res: &str,
    enforced: &Qty,
    req: &Resources,
    lim: &Resources,
) -> Option<String> {
    let (r, l) = (req.get(res), lim.get(res));
    let [rv, lv, _] = comparable([nanos_or_zero(r), nanos_or_zero(l), enforced.nanos]);
    let e = &enforced.shown;
    if r.is_none() || rv == 0 {
        return Some(format!(
            "{res} max limit to request ratio per {kind} is {e}, but no request is specified or request is 0"
        ));
    }
    if l.is_none() || lv == 0 {
        return Some(format!(
            "{res} max limit to request ratio per {kind} is {e}, but no limit is specified or limit is 0"
        ));
    }
    let shown_ratio = lv as f64 / rv as f64;
    let enforced_units = ceil_div(enforced.nanos, 1_000_000_000);
    let (observed, max) = if enforced_units <= MAX_MILLI {
        (
            shown_ratio * 1000.0,
            ceil_div(enforced.nanos, 1_000_000) as f64,
        )
    } else {
        (shown_ratio, enforced_units as f64)
    };
    (observed > max).then(|| {
        format!("{res} max limit to request ratio per {kind} is {e}, but provided ratio is {shown_ratio:.6}")
    })
}

/// The `min`, `max`, `maxLimitRequestRatio` checks of one item against
/// one set of requests and limits.
fn check(
    kind: &str,
    item: &Map<String, Value>,
    req: &Resources,
    lim: &Resources,
    errs: &mut Vec<String>,
) {
    for (res, q) in resources_of(item.get("min")) {
        errs.extend(min_constraint(kind, &res, &q, req, lim));
    }
    for (res, q) in resources_of(item.get("max")) {
        errs.extend(max_constraint(kind, &res, &q, req, lim));
    }
    for (res, q) in resources_of(item.get("maxLimitRequestRatio")) {
        errs.extend(ratio_constraint(kind, &res, &q, req, lim));
    }
}

fn container_resources(c: &Map<String, Value>) -> (Resources, Resources) {
    let r = c.get("resources");
    (
        resources_of(r.and_then(|r| r.get("requests"))),
        resources_of(r.and_then(|r| r.get("limits"))),
    )
}

/// `podRequests` / `podLimits` (`which` is `requests` or `limits`).
fn pod_total(pod: &Value, which: usize) -> Resources {
    let pick = |c: &Map<String, Value>| {
        let (r, l) = container_resources(c);
        if which == 0 {
            r
        } else {
            l
        }
    };
    let mut total = Resources::new();
    for c in objects(pod, &["spec", "containers"]) {
        add_list(&mut total, &pick(c));
    }
    let mut sidecars = Resources::new();
    let mut init = Resources::new();
    for c in objects(pod, &["spec", "initContainers"]) {
        let own = pick(c);
        let this = if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add_list(&mut total, &own);
            add_list(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut tmp = Resources::new();
            add_list(&mut tmp, &own);
            add_list(&mut tmp, &sidecars);
            tmp
        };
        max_list(&mut init, &this);
    }
    max_list(&mut total, &init);
    total
}

/// The validating phase.
pub(crate) async fn validate(a: &Attrs<'_>, live: &LiveLookups, object: &Value) -> ApiResult<()> {
    let Some(items) = ranges(a, live).await? else {
        return Ok(());
    };
    let pod = a.is("", "pods");
    for lr in &items {
        let mut errs = Vec::new();
        for item in items_of(lr) {
            let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
            match (pod, kind) {
                (true, "Container") => {
                    for list in ["containers", "initContainers"] {
                        for c in objects(object, &["spec", list]) {
                            let (req, lim) = container_resources(c);
                            check(kind, item, &req, &lim, &mut errs);
                        }
                    }
                }
                (true, "Pod") => {
                    let (req, lim) = (pod_total(object, 0), pod_total(object, 1));
                    check(kind, item, &req, &lim, &mut errs);
                }
                (false, "PersistentVolumeClaim") => {
                    let req = resources_of(
                        object
                            .get("spec")
                            .and_then(|s| s.get("resources"))
                            .and_then(|r| r.get("requests")),
                    );
                    for (res, q) in resources_of(item.get("min")) {
                        errs.extend(min_constraint(kind, &res, &q, &req, &Resources::new()));
                    }
                    for (res, q) in resources_of(item.get("max")) {
                        errs.extend(max_request_constraint(kind, &res, &q, &req));
                    }
                }
                _ => {}
            }
        }
        if !errs.is_empty() {
            return Err(a.forbidden(&aggregate(&errs)));
        }
    }
    Ok(())
}
