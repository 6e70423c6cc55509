//! Pod-level `resources` (kube's `validatePodResources`; PodLevelResources
//! is beta and on in 1.34): names, quantities, no claims, the pod's requests
//! against its containers' and each container's limits against the pod's.

use std::collections::BTreeMap;

use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::{Format, Quantity};
use serde_json::Value;

use super::super::util::{list_of, obj_of, str_of};
use super::super::Path;
use super::container_extra::{canonical, quantity, resources, sorted, Names};

/// Summed quantities: nano-units and the format the sum is written in (the
/// first quantity's, as Go's `Quantity.Add` keeps the receiver's).
type Sums = BTreeMap<String, (i128, Format)>;

/// `addResourceList`: adds a container's requests to `into`.
fn add(into: &mut Sums, reqs: &Sums) {
    for (k, (n, f)) in reqs {
        into.entry(k.clone())
            .and_modify(|e| e.0 = e.0.saturating_add(*n))
            .or_insert((*n, *f));
    }
}

/// `maxResourceList`: keeps the larger of each entry.
fn max(into: &mut Sums, other: &Sums) {
    for (k, v) in other {
        match into.get(k) {
            Some(e) if e.0 >= v.0 => {}
            _ => {
                into.insert(k.clone(), *v);
            }
        }
    }
}

/// A container's `resources.requests` as [`Sums`].
fn requests(c: &Value) -> Sums {
    let reqs = c.get("resources").and_then(|r| obj_of(r, "requests"));
    sorted(reqs)
        .into_iter()
        .filter_map(|(k, v)| {
            let q = quantity(v)?;
            Some((k.clone(), (q.nanos()?, q.format())))
        })
        .collect()
}

/// kube's `AggregateContainerRequests`: regular containers and sidecars
/// summed, each init container with the sidecars started before it, the
/// larger of the two.
fn aggregate(spec: &Value) -> Sums {
    let mut reqs = Sums::new();
    for c in list_of(spec, "containers") {
        add(&mut reqs, &requests(c));
    }
    let (mut sidecars, mut inits) = (Sums::new(), Sums::new());
    for c in list_of(spec, "initContainers") {
        let own = requests(c);
        let running = if str_of(c, "restartPolicy") == "Always" {
            add(&mut reqs, &own);
            add(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut tmp = own;
            add(&mut tmp, &sidecars);
            tmp
        };
        max(&mut inits, &running);
    }
    max(&mut reqs, &inits);
    reqs
}

/// kube's `validatePodResources` of `spec` at `path` (`spec.resources`).
/// The aggregate-requests rule is checked for the resources the pod
/// requests itself (kube also defaults missing pod-level requests).
pub(super) fn pod_resources(spec: &Value, path: &Path) -> Vec<FieldError> {
    let Some(r) = spec.get("resources").filter(|v| v.is_object()) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if r.get("claims").is_some_and(|v| !v.is_null()) {
        errs.push(FieldError::forbidden(
            path.child("claims").as_str(),
            "claims cannot be set for Resources at pod-level",
        ));
    }
    errs.extend(resources(
        r,
        Names::Pod,
        &super::resource_claims::pod_claim_names(spec),
        path,
    ));
    let pod_reqs = obj_of(r, "requests");
    for (k, (n, f)) in aggregate(spec) {
        let Some(pr) = pod_reqs.and_then(|m| m.get(&k)) else {
            continue;
        };
        let Some(pn) = quantity(pr).and_then(|q| q.nanos()) else {
            continue;
        };
        if n > pn {
            errs.push(FieldError::invalid(
                path.child("requests").key(&k).as_str(),
                canonical(pr).as_str(),
                &format!(
                    "must be greater than or equal to aggregate container requests of {}",
                    Quantity::canonical(n, f)
                ),
            ));
        }
    }
    let pod_limits = obj_of(r, "limits");
    for (i, c) in list_of(spec, "containers").iter().enumerate() {
        let limits = c.get("resources").and_then(|r| obj_of(r, "limits"));
        for (k, v) in sorted(limits) {
            let Some(pl) = pod_limits.and_then(|l| l.get(k)) else {
                continue;
            };
            if quantity(v)
                .zip(quantity(pl))
                .is_some_and(|(a, b)| a.cmp_to(&b).is_gt())
            {
                errs.push(FieldError::invalid(
                    path.child("containers")
                        .index(i)
                        .key(k)
                        .child("limits")
                        .as_str(),
                    canonical(v).as_str(),
                    &format!(
                        "must be less than or equal to pod limits of {}",
                        canonical(pl)
                    ),
                ));
            }
        }
    }
    errs
}
