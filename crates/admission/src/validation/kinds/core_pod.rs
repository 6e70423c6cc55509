//! Pod, PodTemplate, ReplicationController and the pod spec (`pkg/apis/core/validation`: `ValidatePod*`, `ValidatePodSpec`, `ValidatePodTemplateSpec`, containers, volumes, probes, ...).

mod annotations;
mod container;
mod container_extra;
mod field_refs;
mod pod_resources;
mod resource_claims;
mod scheduling;
mod security;
mod topology;
pub(super) mod volumes;

pub(crate) use container_extra::{canonical, is_extended, quantity_value, resources, Names};
pub(crate) use scheduling::node_selector;

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::util::{dns1123_label, int_of, list_of, nonnegative, obj_of, str_of, validate_labels};
use super::{Path, Write};

/// Options of one pod spec validation (kube's `PodValidationOptions`).
#[derive(Clone, Copy, Default)]
pub(crate) struct PodOpts<'a> {
    /// The spec is a Pod's, not a template's (`ResourceIsPod`).
    pub resource_is_pod: bool,
    /// `seLinuxChangePolicy: MountOption` is allowed (the stored pod has a
    /// policy; the `SELinuxMount` gate is off in 1.34).
    pub any_selinux_change_policy: bool,
    /// The pod's labels on Pod create: kube's `PrepareForCreate` merges
    /// the `matchLabelKeys`/`mismatchLabelKeys` the pod carries into the
    /// affinity and topology spread selectors before validating, which the
    /// "exists in both" rules then see. Keelson does not store the merged
    /// selectors; it only validates as if they were there.
    pub merge_labels: Option<&'a Map<String, Value>>,
    /// The Pod's name (Pods only: kube passes the pod's metadata to
    /// `ValidateVolumes`, which names the claims of ephemeral volumes).
    pub pod_name: Option<&'a str>,
    /// `AllowNonLocalProjectedTokenPath`: the stored pod already projects
    /// a token to a non-local path.
    pub allow_non_local_token_path: bool,
}

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "Pod" => validate_pod(w, obj),
        "PodTemplate" => {
            let t = obj.get("template").unwrap_or(&Value::Null);
            validate_pod_template_spec(t, &Path::new("template"), w)
        }
        "ReplicationController" => {
            if w.is_status() {
                return Vec::new();
            }
            let spec = obj.get("spec").unwrap_or(&Value::Null);
            validate_rc_spec(spec, &Path::new("spec"), w)
        }
        _ => Vec::new(),
    }
}

/// A pod's `metadata.annotations`.
fn pod_annotations(pod: &Value) -> Option<&serde_json::Map<String, Value>> {
    pod.get("metadata").and_then(|m| obj_of(m, "annotations"))
}

fn validate_pod(w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if w.is_status() {
        return match w.old() {
            Some(old) => validate_pod_status_update(obj, old),
            None => Vec::new(),
        };
    }
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let opts = PodOpts {
        resource_is_pod: true,
        any_selinux_change_policy: w
            .old()
            .and_then(|o| o.pointer("/spec/securityContext/seLinuxChangePolicy"))
            .is_some_and(|v| !v.is_null()),
        merge_labels: None,
        pod_name: obj
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str),
        allow_non_local_token_path: w
            .old()
            .and_then(|o| o.get("spec"))
            .is_some_and(volumes::has_non_local_token_path),
    };
    if let Some(old) = w.old() {
        if !w.subresource.is_empty() {
            return Vec::new();
        }
        let ap = Path::new("metadata").child("annotations");
        let mut errs = annotations::update(obj, old, &ap);
        let stored_cost_ok = pod_annotations(old).is_none_or(annotations::deletion_cost_ok);
        errs.extend(annotations::validate(
            pod_annotations(obj),
            spec,
            &ap,
            !stored_cost_ok,
        ));
        errs.extend(validate_pod_spec(spec, &Path::new("spec"), w, opts));
        errs.extend(volumes::pod_only(spec, &Path::new("spec")));
        errs.extend(validate_pod_update(
            spec,
            old.get("spec").unwrap_or(&Value::Null),
        ));
        return errs;
    }
    let mut errs = annotations::validate(
        pod_annotations(obj),
        spec,
        &Path::new("metadata").child("annotations"),
        false,
    );
    // Without labels nothing is merged, as if not merging at all.
    let opts = PodOpts {
        merge_labels: obj.get("metadata").and_then(|m| obj_of(m, "labels")),
        ..opts
    };
    errs.extend(validate_pod_spec(spec, &Path::new("spec"), w, opts));
    errs.extend(volumes::pod_only(spec, &Path::new("spec")));
    errs.extend(scheduling::pod_create(spec));
    errs.extend(security::pod_create_annotations(obj));
    errs
}

/// kube's `ValidatePodTemplateSpec` at `path` (`spec.template`): the
/// template's metadata labels and annotations and its pod spec. Called by
/// the workloads (apps, batch, ReplicationController, PodTemplate).
pub(crate) fn validate_pod_template_spec(
    template: &Value,
    path: &Path,
    w: Write<'_>,
) -> Vec<FieldError> {
    let meta = template.get("metadata").unwrap_or(&Value::Null);
    let mut errs = validate_labels(obj_of(meta, "labels"), &path.child("labels"));
    for k in obj_of(meta, "annotations")
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        for msg in keelson_apimachinery::names::is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(
                path.child("annotations").as_str(),
                k.as_str(),
                &msg,
            ));
        }
    }
    let spec = template.get("spec").unwrap_or(&Value::Null);
    errs.extend(annotations::validate(
        obj_of(meta, "annotations"),
        spec,
        &path.child("annotations"),
        false,
    ));
    errs.extend(validate_pod_spec(
        spec,
        &path.child("spec"),
        w,
        PodOpts::default(),
    ));
    errs.extend(scheduling::template_ephemeral(spec, &path.child("spec")));
    errs
}

/// kube's `ValidatePodSpec` of `spec` at `path`, in kube's order.
pub(crate) fn validate_pod_spec(
    spec: &Value,
    path: &Path,
    w: Write<'_>,
    opts: PodOpts<'_>,
) -> Vec<FieldError> {
    let (vols, mut errs) =
        volumes::validate_volumes(list_of(spec, "volumes"), &path.child("volumes"), &opts);
    errs.extend(resource_claims::pod_resource_claims(
        spec,
        &path.child("resourceClaims"),
    ));
    let ctx = container_extra::SpecCtx::of(spec, w.allow_privileged);
    errs.extend(container::validate_containers(
        list_of(spec, "containers"),
        &vols,
        &ctx,
        &path.child("containers"),
    ));
    errs.extend(container::validate_init_containers(
        list_of(spec, "initContainers"),
        list_of(spec, "containers"),
        &vols,
        &ctx,
        &path.child("initContainers"),
    ));
    errs.extend(scheduling::after_init_containers(spec, &vols, &ctx, path));
    errs.extend(security::host_network_deps(
        spec,
        path,
        opts.resource_is_pod,
    ));
    errs.extend(one_of(
        spec.get("restartPolicy"),
        &path.child("restartPolicy"),
        &["Always", "OnFailure", "Never"],
    ));
    errs.extend(one_of(
        spec.get("dnsPolicy"),
        &path.child("dnsPolicy"),
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    ));
    errs.extend(validate_labels(
        obj_of(spec, "nodeSelector"),
        &path.child("nodeSelector"),
    ));
    errs.extend(security::pod_security_context(
        spec,
        path,
        opts.any_selinux_change_policy,
    ));
    errs.extend(scheduling::affinity_to_gates(spec, path, opts.merge_labels));
    errs.extend(topology::topology_spread(
        list_of(spec, "topologySpreadConstraints"),
        &path.child("topologySpreadConstraints"),
        opts.merge_labels,
    ));
    errs.extend(security::windows_host_process_pod(
        spec,
        path,
        w.allow_privileged,
    ));
    errs.extend(security::host_users(spec, path));
    let sa = str_of(spec, "serviceAccountName");
    if !sa.is_empty() {
        errs.extend(super::util::dns1123_subdomain(
            sa,
            &path.child("serviceAccountName"),
        ));
    }
    let node = str_of(spec, "nodeName");
    if !node.is_empty() {
        errs.extend(super::util::dns1123_subdomain(
            node,
            &path.child("nodeName"),
        ));
    }
    if let Some(v) = int_of(spec, "activeDeadlineSeconds") {
        if !(1..=i64::from(i32::MAX)).contains(&v) {
            errs.push(FieldError::invalid(
                path.child("activeDeadlineSeconds").as_str(),
                v,
                "must be between 1 and 2147483647, inclusive",
            ));
        }
    }
    for key in ["hostname", "subdomain"] {
        let v = str_of(spec, key);
        if !v.is_empty() {
            errs.extend(dns1123_label(v, &path.child(key)));
        }
    }
    errs.extend(validate_tolerations(
        list_of(spec, "tolerations"),
        &path.child("tolerations"),
    ));
    errs.extend(scheduling::after_tolerations(spec, path));
    errs.extend(security::validate_os(spec, path));
    errs
}

/// A required enum field: `Required value` when empty, `Unsupported value`
/// (with `supported` in kube's order) when unknown.
pub(super) fn one_of(v: Option<&Value>, path: &Path, supported: &[&str]) -> Vec<FieldError> {
    let s = v.and_then(Value::as_str).unwrap_or("");
    if s.is_empty() {
        vec![FieldError::required(path.as_str(), "")]
    } else if supported.contains(&s) {
        Vec::new()
    } else {
        vec![FieldError::not_supported(path.as_str(), s, supported)]
    }
}

/// kube's `ValidateTolerations`.
pub(crate) fn validate_tolerations(tols: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, t) in tols.iter().enumerate() {
        let ip = path.index(i);
        let key = str_of(t, "key");
        let op = str_of(t, "operator");
        let effect = str_of(t, "effect");
        if !key.is_empty() {
            errs.extend(super::util::invalid_all(
                keelson_apimachinery::names::is_qualified_name(key),
                &ip.child("key"),
                key,
            ));
        }
        if key.is_empty() && op != "Exists" {
            errs.push(FieldError::invalid(
                ip.child("operator").as_str(),
                op,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.get("tolerationSeconds").is_some_and(|v| !v.is_null()) && effect != "NoExecute" {
            errs.push(FieldError::invalid(
                ip.child("effect").as_str(),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match op {
            "Equal" | "" => {
                let v = str_of(t, "value");
                let msgs = keelson_apimachinery::names::is_valid_label_value(v);
                if !msgs.is_empty() {
                    errs.push(FieldError::invalid(
                        ip.child("operator").as_str(),
                        v,
                        &msgs.join(";"),
                    ));
                }
            }
            "Exists" if !str_of(t, "value").is_empty() => {
                // The value is the internal `core.Toleration` (no JSON
                // tags: Go field names, in declaration order).
                let mut shown = Map::new();
                for (json, go) in [
                    ("key", "Key"),
                    ("operator", "Operator"),
                    ("value", "Value"),
                    ("effect", "Effect"),
                ] {
                    shown.insert(go.into(), str_of(t, json).into());
                }
                let secs = t.get("tolerationSeconds").filter(|v| v.is_i64()).cloned();
                shown.insert("TolerationSeconds".into(), secs.unwrap_or(Value::Null));
                errs.push(FieldError::invalid(
                    ip.child("operator").as_str(),
                    Value::Object(shown),
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
            "Exists" => {}
            _ => errs.push(FieldError::not_supported(
                ip.child("operator").as_str(),
                op,
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            errs.push(FieldError::not_supported(
                ip.child("effect").as_str(),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
    errs
}

/// The leading sentence of kube's `ValidatePodUpdate` spec error.
const POD_UPDATE_MSG: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// kube's `ValidatePodUpdate` (spec part): everything but the mutable
/// fields must equal the stored spec. The printed diff is simplified to the
/// names of the changed top-level fields.
fn validate_pod_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sp = Path::new("spec");
    for key in ["containers", "initContainers"] {
        if list_of(new, key).len() != list_of(old, key).len() {
            errs.push(FieldError::forbidden(
                sp.child(key).as_str(),
                "pod updates may not add or remove containers",
            ));
            return errs;
        }
    }
    if let (Some(o), n) = (
        int_of(old, "activeDeadlineSeconds"),
        int_of(new, "activeDeadlineSeconds"),
    ) {
        match n {
            None => errs.push(FieldError::invalid(
                sp.child("activeDeadlineSeconds").as_str(),
                Value::Null,
                "must not update from a positive integer to nil value",
            )),
            Some(n) if n > o => errs.push(FieldError::invalid(
                sp.child("activeDeadlineSeconds").as_str(),
                n,
                "must be less than or equal to previous value",
            )),
            _ => {}
        }
    }
    let munge = |spec: &Value, from: &Value| -> Value {
        let mut m: Map<String, Value> = spec.as_object().cloned().unwrap_or_default();
        for key in ["containers", "initContainers"] {
            let olds = list_of(from, key);
            if let Some(Value::Array(cs)) = m.get_mut(key) {
                for (i, c) in cs.iter_mut().enumerate() {
                    if let (Some(c), Some(o)) = (c.as_object_mut(), olds.get(i)) {
                        match o.get("image") {
                            Some(img) => c.insert("image".into(), img.clone()),
                            None => c.remove("image"),
                        };
                    }
                }
            }
        }
        for key in [
            "activeDeadlineSeconds",
            "tolerations",
            "terminationGracePeriodSeconds",
            "schedulingGates",
        ] {
            match from.get(key) {
                Some(v) => m.insert(key.into(), v.clone()),
                None => m.remove(key),
            };
        }
        Value::Object(m)
    };
    let munged = munge(new, old);
    if &munged != old {
        let mut changed: Vec<&str> = Vec::new();
        let empty = Map::new();
        let (mo, oo) = (
            munged.as_object().unwrap_or(&empty),
            old.as_object().unwrap_or(&empty),
        );
        for k in mo.keys().chain(oo.keys()) {
            if mo.get(k) != oo.get(k) && !changed.contains(&k.as_str()) {
                changed.push(k);
            }
        }
        let diff: Vec<String> = changed
            .iter()
            .map(|k| format!("  core.PodSpec{{{k}: ...}}"))
            .collect();
        errs.push(FieldError::forbidden(
            sp.as_str(),
            &format!("{POD_UPDATE_MSG}\n{}", diff.join("\n")),
        ));
    }
    errs
}

/// kube's `ValidateReplicationControllerSpec`.
fn validate_rc_spec(spec: &Value, path: &Path, w: Write<'_>) -> Vec<FieldError> {
    let mut errs = nonnegative(
        int_of(spec, "minReadySeconds").unwrap_or(0),
        &path.child("minReadySeconds"),
    );
    let selector = obj_of(spec, "selector").filter(|s| !s.is_empty());
    match selector {
        None => errs.push(FieldError::required(path.child("selector").as_str(), "")),
        Some(s) => errs.extend(validate_labels(Some(s), &path.child("selector"))),
    }
    errs.extend(nonnegative(
        int_of(spec, "replicas").unwrap_or(0),
        &path.child("replicas"),
    ));
    let tp = path.child("template");
    let Some(template) = spec.get("template").filter(|t| t.is_object()) else {
        errs.push(FieldError::required(tp.as_str(), ""));
        return errs;
    };
    let meta = template.get("metadata").unwrap_or(&Value::Null);
    let labels = obj_of(meta, "labels");
    if let Some(sel) = selector {
        let matches = sel
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
        if !matches {
            errs.push(FieldError::invalid(
                tp.child("metadata").child("labels").as_str(),
                labels.map_or(Value::Null, |l| {
                    super::util::go_map(&Value::Object(l.clone()))
                }),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errs.extend(validate_pod_template_spec(template, &tp, w));
    let tspec = template.get("spec").unwrap_or(&Value::Null);
    let rp = str_of(tspec, "restartPolicy");
    if rp != "Always" {
        errs.push(FieldError::not_supported(
            tp.child("spec").child("restartPolicy").as_str(),
            rp,
            &["Always"],
        ));
    }
    if tspec
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(FieldError::forbidden(
            tp.child("spec").child("activeDeadlineSeconds").as_str(),
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    errs
}

/// `template` with one `persistentVolumeClaim` volume per StatefulSet
/// `volumeClaimTemplates` entry of `sts_spec`, so mounts of claims resolve.
pub(crate) fn with_claim_volumes(template: &Value, sts_spec: &Value) -> Value {
    let claims = list_of(sts_spec, "volumeClaimTemplates");
    let mut t = template.clone();
    if claims.is_empty() {
        return t;
    }
    let Some(spec) = t.get_mut("spec").and_then(Value::as_object_mut) else {
        return t;
    };
    let mut vols = spec
        .get("volumes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in claims {
        let name = c.get("metadata").map(|m| str_of(m, "name")).unwrap_or("");
        if !name.is_empty() && !vols.iter().any(|v| str_of(v, "name") == name) {
            vols.push(
                serde_json::json!({"name": name, "persistentVolumeClaim": {"claimName": name}}),
            );
        }
    }
    spec.insert("volumes".into(), Value::Array(vols));
    t
}

/// kube's `ValidatePodStatusUpdate` (after the strategy kept the stored
/// spec and, when the new one is empty, the stored `qosClass`): custom
/// condition types (reported under `metadata.conditions[i].Type`, as kube
/// does), `nominatedNodeName`, `qosClass` immutability and no terminated
/// container back to running under a restart policy that forbids it. Pod
/// IPs, host IPs, resource claim statuses, users and allocated resources
/// are not checked (docs/compatibility.md).
fn validate_pod_status_update(new: &Value, old: &Value) -> Vec<FieldError> {
    const SYSTEM_CONDITIONS: &[&str] = &["PodScheduled", "Ready", "Initialized"];
    let mut errs = Vec::new();
    let status = new.get("status").unwrap_or(&Value::Null);
    let old_status = old.get("status").unwrap_or(&Value::Null);
    let conditions = Path::new("metadata").child("conditions");
    for (i, c) in list_of(status, "conditions").iter().enumerate() {
        let t = str_of(c, "type");
        if SYSTEM_CONDITIONS.contains(&t) {
            continue;
        }
        for m in keelson_apimachinery::names::is_qualified_name(t) {
            errs.push(FieldError::invalid(
                conditions.index(i).child("Type").as_str(),
                t,
                &m,
            ));
        }
    }
    let sp = Path::new("status");
    let nominated = str_of(status, "nominatedNodeName");
    if !nominated.is_empty() && nominated != str_of(old_status, "nominatedNodeName") {
        for m in keelson_apimachinery::names::is_dns1123_subdomain(nominated) {
            errs.push(FieldError::invalid(
                sp.child("nominatedNodeName").as_str(),
                nominated,
                &m,
            ));
        }
    }
    let qos = str_of(status, "qosClass");
    let old_qos = str_of(old_status, "qosClass");
    if !qos.is_empty() && qos != old_qos {
        errs.push(FieldError::invalid(
            sp.child("qosClass").as_str(),
            qos,
            "field is immutable",
        ));
    }
    let old_spec = old.get("spec").unwrap_or(&Value::Null);
    let policy = match str_of(old_spec, "restartPolicy") {
        "" => "Always",
        p => p,
    };
    errs.extend(container_state_transition(
        list_of(status, "containerStatuses"),
        list_of(old_status, "containerStatuses"),
        &sp.child("containerStatuses"),
        policy,
        &[],
    ));
    let restartable: Vec<&str> = list_of(old_spec, "initContainers")
        .iter()
        .filter(|c| str_of(c, "restartPolicy") == "Always")
        .map(|c| str_of(c, "name"))
        .collect();
    errs.extend(container_state_transition(
        list_of(status, "initContainerStatuses"),
        list_of(old_status, "initContainerStatuses"),
        &sp.child("initContainerStatuses"),
        policy,
        &restartable,
    ));
    errs.extend(container_state_transition(
        list_of(status, "ephemeralContainerStatuses"),
        list_of(old_status, "ephemeralContainerStatuses"),
        &sp.child("ephemeralContainerStatuses"),
        "Never",
        &[],
    ));
    errs
}

/// kube's `ValidateContainerStateTransition` and
/// `ValidateInitContainerStateTransition` (`restartable`: the names of
/// sidecar init containers, which may restart).
fn container_state_transition(
    new: &[Value],
    old: &[Value],
    path: &Path,
    restart_policy: &str,
    restartable: &[&str],
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if restart_policy == "Always" {
        return errs;
    }
    let terminated = |s: &Value| {
        s.get("state")
            .and_then(|st| st.get("terminated"))
            .is_some_and(|t| !t.is_null())
    };
    for (i, o) in old.iter().enumerate() {
        if !terminated(o) {
            continue;
        }
        let exit = o
            .pointer("/state/terminated/exitCode")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if exit != 0 && restart_policy == "OnFailure" {
            continue;
        }
        let name = str_of(o, "name");
        if restartable.contains(&name) {
            continue;
        }
        for n in new {
            if str_of(n, "name") == name && !terminated(n) {
                errs.push(FieldError::forbidden(
                    path.index(i).child("state").as_str(),
                    "may not be transitioned to non-terminated state",
                ));
            }
        }
    }
    errs
}
