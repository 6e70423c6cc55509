//! `pods/eviction` (POST a `policy/v1` Eviction): kube-apiserver's
//! `EvictionREST`. A pod that cannot disrupt anything (terminal, pending or
//! already being deleted) is deleted at once; otherwise the
//! PodDisruptionBudget selecting it (more than one → kube's `500` Status)
//! must allow a disruption: the budget's `disruptionsAllowed` is
//! decremented and the pod recorded in `status.disruptedPods` (one
//! compare-and-swap on the budget's resourceVersion, retried on conflict),
//! or the answer is `429 TooManyRequests` with kube's `DisruptionBudget`
//! cause. The pod then gets the `DisruptionTarget` condition and is deleted
//! with the Eviction's `deleteOptions`; the answer is a `201` Success
//! Status. The budgets' status itself is the disruption controller's
//! (`keelson_controllers::disruption`).

use std::time::Duration;

use bytes::Bytes;
use keelson_api::{ObjectKey, Operation, UpdateOptions as StoreUpdateOptions};
use keelson_apimachinery::meta::{meta_str, now_rfc3339};
use keelson_apimachinery::options::{CreateOptions, DeleteOptions, Query};
use keelson_apimachinery::status::{StatusCause, StatusDetails};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use keelson_controllers::disruption::budget;
use serde_json::{json, Value};

use super::{Ctx, Reply};

/// kube's `EvictionsRetry`: attempts and pause of the conflict retries.
const RETRY_STEPS: usize = 20;
const RETRY_PAUSE: Duration = Duration::from_millis(500);

/// The pause before re-reading a pod another write moved.
const CONFLICT_PAUSE: Duration = Duration::from_millis(20);

/// kube's `MaxDisruptedPodSize`.
const MAX_DISRUPTED_PODS: usize = 2000;

const TOO_MANY_MESSAGE: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

fn pdbs() -> GroupResource {
    GroupResource::new("policy", "poddisruptionbudgets")
}

/// A `Status` object answered as a result (not an error), as kube's
/// create handler writes one: `code` is the HTTP code.
pub(crate) fn status_object(code: u16, failure_message: Option<&str>) -> Reply {
    let mut s = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}});
    match failure_message {
        None => s["status"] = json!("Success"),
        Some(m) => {
            s["status"] = json!("Failure");
            s["message"] = json!(m);
        }
    }
    s["code"] = json!(code);
    Reply {
        code,
        object: s,
        warnings: Vec::new(),
    }
}

/// kube's `NewTooManyRequests` with a `DisruptionBudget` cause.
fn too_many_requests(cause: String) -> ApiError {
    let mut e = ApiError::new(429, "TooManyRequests", TOO_MANY_MESSAGE);
    e.details = Some(Box::new(StatusDetails {
        causes: vec![StatusCause {
            reason: "DisruptionBudget".into(),
            message: cause,
            field: String::new(),
        }],
        ..Default::default()
    }));
    e
}

/// kube's `createTooManyRequestsError`: the budget is not up to date yet.
fn still_processing(pdb: &str) -> ApiError {
    too_many_requests(format!(
        "The disruption budget {} is still being processed by the server.",
        pdb
    ))
}

/// An error kube returns as a plain Go error: `500` with no reason.
fn plain_error(msg: impl Into<String>) -> ApiError {
    ApiError::new(500, "", msg)
}

/// Decode and check the Eviction body: its type meta, name and namespace.
fn decode_eviction(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Value> {
    let ev =
        super::object::decode_typed_body(cx, body, "Eviction", &["policy/v1", "policy/v1beta1"])?;
    if meta_str(&ev, "name") != cx.ri.name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    Ok(ev)
}

/// kube's `propagateDryRun`: the Eviction's `deleteOptions` with the
/// request's `dryRun` when they name none.
fn delete_options(ev: &Value, create_dry_run: &[&str]) -> ApiResult<DeleteOptions> {
    let mut raw = ev
        .get("deleteOptions")
        .filter(|d| !d.is_null())
        .cloned()
        .unwrap_or_else(|| json!({}));
    let listed: Vec<String> = raw
        .get("dryRun")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if listed.is_empty() {
        if !create_dry_run.is_empty() {
            raw["dryRun"] = json!(create_dry_run);
        }
    } else if !create_dry_run.is_empty() && listed != create_dry_run {
        return Err(plain_error(format!(
            "Non-matching dry-run options in request and content: [{}] and [{}]",
            create_dry_run.join(" "),
            listed.join(" ")
        )));
    }
    let bytes = serde_json::to_vec(&raw).map_err(ApiError::internal)?;
    DeleteOptions::from_request(&Query::parse(None), &bytes)
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn being_deleted(pod: &Value) -> bool {
    !meta_str(pod, "deletionTimestamp").is_empty()
}

/// kube's `canIgnorePDB`: evicting the pod disrupts nothing.
fn can_ignore_pdb(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed" | "Pending") || being_deleted(pod)
}

/// kube's `shouldEnforceResourceVersion`.
fn should_enforce_resource_version(pod: &Value) -> bool {
    !(matches!(phase(pod), "Succeeded" | "Failed") || being_deleted(pod))
}

/// `POST .../pods/{name}/eviction`.
pub(crate) async fn create(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let copts = CreateOptions::from_query(cx.query)?;
    let mut ev = decode_eviction(cx, body)?;
    // Admission sees the Eviction as kube's subresource declares it
    // (`policy/v1`, whichever version was sent), then deletes as admitted.
    if let Some(m) = ev.as_object_mut() {
        m.insert("apiVersion".into(), "policy/v1".into());
    }
    let (ev, warnings) = super::write::admit_subresource(
        cx,
        super::write::SubresourceKind {
            api_version: "policy/v1",
            kind: "Eviction",
        },
        Operation::Create,
        ev,
        None,
        super::write::WriteOpts {
            fv: copts.field_validation,
            dry: copts.dry_run,
        },
    )
    .await?;
    let reply = |r: Reply| Reply {
        warnings: warnings.clone(),
        ..r
    };
    let original = delete_options(&ev, &cx.query.all("dryRun"))?;
    let dry = original.dry_run;
    let name = cx.ri.name.as_str();
    let rv_unset = original
        .preconditions
        .resource_version
        .as_deref()
        .is_none_or(str::is_empty);

    // Pods that disrupt nothing are deleted right away.
    let mut attempt = 0;
    let pod = loop {
        attempt += 1;
        let pod = cx.b.store.get(&cx.key(name)).await?;
        if !can_ignore_pdb(&pod) {
            break pod;
        }
        let mut opts = original.clone();
        if should_enforce_resource_version(&pod) && rv_unset {
            opts.preconditions.resource_version = Some(meta_str(&pod, "resourceVersion").into());
        }
        match add_condition_and_delete(cx, name, opts).await {
            Ok(()) => return Ok(reply(status_object(201, None))),
            Err(e) if e.is_conflict() && rv_unset && attempt < RETRY_STEPS => {
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Err(e) => return Err(e),
        }
    };

    let budgets = matching_budgets(cx, &pod).await?;
    if budgets.len() > 1 {
        return Ok(reply(status_object(
            500,
            Some("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."),
        )));
    }
    let mut enforce_rv = false;
    let mut pdb_name = String::new();
    if let Some(pdb) = budgets.into_iter().next() {
        pdb_name = meta_str(&pdb, "name").to_string();
        let int = |f: &str| {
            pdb.pointer(&format!("/status/{}", f))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        if !budget::is_pod_ready(&pod) {
            let policy = pdb
                .pointer("/spec/unhealthyPodEvictionPolicy")
                .and_then(Value::as_str);
            if policy == Some("AlwaysAllow")
                || (int("currentHealthy") >= int("desiredHealthy") && int("desiredHealthy") > 0)
            {
                // An unready pod may go without spending the budget.
                enforce_rv = true;
            }
        }
        if !enforce_rv {
            decrement_budget(cx, pdb, name, dry).await?;
        }
    }

    let mut opts = original.clone();
    if enforce_rv {
        opts.preconditions.resource_version = Some(meta_str(&pod, "resourceVersion").into());
    }
    match add_condition_and_delete(cx, name, opts).await {
        Err(e) if e.is_conflict() && enforce_rv && rv_unset => Err(still_processing(&pdb_name)),
        Err(e) => Err(e),
        Ok(()) => Ok(reply(status_object(201, None))),
    }
}

/// kube's `getPodDisruptionBudgets`: the budgets of the pod's namespace
/// whose selector is valid, not empty, and matches the pod's labels.
async fn matching_budgets(cx: &Ctx<'_>, pod: &Value) -> ApiResult<Vec<Value>> {
    let listed = cx.b.store.list(&pdbs(), Some(&cx.ri.namespace)).await?;
    let labels = budget::labels_of(pod);
    Ok(listed
        .items
        .into_iter()
        .filter(|pdb| {
            let sel = pdb.pointer("/spec/selector");
            !budget::selector_is_empty(sel) && budget::selector_matches(sel, &labels) == Some(true)
        })
        .collect())
}

/// kube's `checkAndDecrement`, retried on conflicts with a fresh read of
/// the budget.
async fn decrement_budget(cx: &Ctx<'_>, mut pdb: Value, pod: &str, dry: bool) -> ApiResult<()> {
    let name = meta_str(&pdb, "name").to_string();
    let key = ObjectKey::new(pdbs(), &cx.ri.namespace, &name);
    for attempt in 1..=RETRY_STEPS {
        if attempt > 1 {
            // The store reads durable revisions only: give the winning
            // write a moment, as kube's backoff does.
            tokio::time::sleep(RETRY_PAUSE).await;
            pdb = cx.b.store.get(&key).await?;
        }
        let status = pdb.get("status").cloned().unwrap_or(Value::Null);
        let int = |f: &str| status.get(f).and_then(Value::as_i64).unwrap_or(0);
        let generation = pdb
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if int("observedGeneration") < generation {
            return Err(still_processing(&name));
        }
        let gr = GroupResource::new("policy", "poddisruptionbudget");
        if int("disruptionsAllowed") < 0 {
            return Err(ApiError::forbidden(
                &gr,
                &name,
                "pdb disruptions allowed is negative",
            ));
        }
        let disrupted = status
            .get("disruptedPods")
            .and_then(Value::as_object)
            .map_or(0, |m| m.len());
        if disrupted > MAX_DISRUPTED_PODS {
            return Err(ApiError::forbidden(
                &gr,
                &name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if int("disruptionsAllowed") == 0 {
            return Err(too_many_requests(format!(
                "The disruption budget {} needs {} healthy pods and has {} currently",
                name,
                int("desiredHealthy"),
                int("currentHealthy")
            )));
        }
        let mut new_status = status.clone();
        new_status["disruptionsAllowed"] = json!(int("disruptionsAllowed") - 1);
        if int("disruptionsAllowed") == 1 {
            budget::update_disruption_allowed_condition(&mut new_status, chrono::Utc::now());
        }
        if dry {
            return Ok(());
        }
        if !new_status
            .get("disruptedPods")
            .is_some_and(Value::is_object)
        {
            new_status["disruptedPods"] = json!({});
        }
        new_status["disruptedPods"][pod] = json!(now_rfc3339());
        let mut updated = pdb.clone();
        updated["status"] = new_status;
        match cx
            .b
            .store
            .update(
                &key,
                updated,
                StoreUpdateOptions {
                    track_generation: true,
                    ..Default::default()
                },
            )
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if e.is_conflict() => continue,
            Err(e) => return Err(e),
        }
    }
    Err(ApiError::new(
        504,
        "Timeout",
        format!(
            "Timeout: couldn't update PodDisruptionBudget {:?} due to conflicts",
            name
        ),
    ))
}

/// kube's `addConditionAndDeletePod`: the `DisruptionTarget` condition
/// (`EvictionByEvictionAPI`), then the delete with `opts`.
async fn add_condition_and_delete(
    cx: &Ctx<'_>,
    name: &str,
    mut opts: DeleteOptions,
) -> ApiResult<()> {
    if !opts.dry_run {
        let key = cx.key(name);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut pod = cx.b.store.get(&key).await?;
            let pods = GroupResource::new("", "Pod");
            if let Some(uid) = opts.preconditions.uid.as_deref().filter(|u| !u.is_empty()) {
                if uid != meta_str(&pod, "uid") {
                    return Err(ApiError::conflict(&pods, name, &format!(
                        "the UID in the precondition ({}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                        uid, meta_str(&pod, "uid")
                    )));
                }
            }
            if let Some(rv) = opts
                .preconditions
                .resource_version
                .as_deref()
                .filter(|r| !r.is_empty())
            {
                if rv != meta_str(&pod, "resourceVersion") {
                    return Err(ApiError::conflict(&pods, name, &format!(
                        "the ResourceVersion in the precondition ({}) does not match the ResourceVersion in record ({}). The object might have been modified",
                        rv, meta_str(&pod, "resourceVersion")
                    )));
                }
            }
            set_disruption_target(&mut pod);
            let stored =
                cx.b.store
                    .update(
                        &key,
                        pod,
                        StoreUpdateOptions {
                            track_generation: cx.info.tracks_generation(),
                            ..Default::default()
                        },
                    )
                    .await;
            match stored {
                Ok(stored) => {
                    if opts.preconditions.resource_version.is_some() {
                        opts.preconditions.resource_version =
                            Some(meta_str(&stored, "resourceVersion").into());
                    }
                    break;
                }
                Err(e) if e.is_conflict() && attempt < RETRY_STEPS => {
                    tokio::time::sleep(CONFLICT_PAUSE).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
    super::delete::delete_one(cx, name, &opts).await.map(|_| ())
}

/// kube's `UpdatePodCondition` with the eviction's `DisruptionTarget`.
fn set_disruption_target(pod: &mut Value) {
    super::binding::update_pod_condition(
        pod,
        json!({"type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
            "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}),
    );
}
