//! Warnings on writes: kube-apiserver 1.34's registry strategies'
//! `WarningsOnCreate` / `WarningsOnUpdate` (`pkg/registry/...`,
//! `pkg/api/pod/warnings.go` and its siblings), returned to the client as
//! `Warning: 299` headers after the write passed validation. Status and
//! other subresource writes have none.

mod pod;

use serde_json::Value;

use super::util::{int_of, list_of, obj_of, semantic, str_of};
use super::{Path, Write};
use keelson_api::Operation;

/// kube's `deprecatedNodeLabels` (`pkg/api/node/util.go`).
pub(super) fn node_label_deprecated(key: &str) -> Option<&'static str> {
    Some(match key {
        "beta.kubernetes.io/arch" => "deprecated since v1.14; use \"kubernetes.io/arch\" instead",
        "beta.kubernetes.io/os" => "deprecated since v1.14; use \"kubernetes.io/os\" instead",
        "failure-domain.beta.kubernetes.io/region" => {
            "deprecated since v1.17; use \"topology.kubernetes.io/region\" instead"
        }
        "failure-domain.beta.kubernetes.io/zone" => {
            "deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead"
        }
        "beta.kubernetes.io/instance-type" => {
            "deprecated since v1.17; use \"node.kubernetes.io/instance-type\" instead"
        }
        "app.kubernetes.io/created-by" => "deprecated since v1.9",
        "scheduler.alpha.kubernetes.io/preferAvoidPods" => {
            "deprecated since v1.22; use Taints and Tolerations instead"
        }
        "node-role.kubernetes.io/master" => "use \"node-role.kubernetes.io/control-plane\" instead",
        _ => return None,
    })
}

const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
const DEPRECATED_STORAGE_CLASS_MSG: &str =
    "deprecated since v1.8; use \"storageClassName\" attribute instead";

/// `pvcutil.GetWarningsForPersistentVolumeClaimSpec`: fractional storage
/// requests and limits.
pub(super) fn pvc_spec_warnings(spec: &Value, path: &Path) -> Vec<String> {
    let res = spec.get("resources").unwrap_or(&Value::Null);
    let mut w = Vec::new();
    for part in ["requests", "limits"] {
        let q = res.get(part).and_then(|m| m.get("storage"));
        w.extend(pod::fractional_bytes(
            q,
            &path.child("resources").child(part).key("storage"),
        ));
    }
    w
}

/// The warnings of a write of `obj` (a `group`/`kind` object that passed
/// validation), in kube's order.
pub(crate) fn warnings(group: &str, kind: &str, w: Write<'_>, obj: &Value) -> Vec<String> {
    if !w.subresource.is_empty() {
        return Vec::new();
    }
    let old = w.old();
    if w.op == Operation::Update && old.is_none() {
        return Vec::new();
    }
    match (group, kind) {
        ("", "Pod") => match old {
            // Pod updates carry no warnings (a high-frequency path).
            Some(_) => Vec::new(),
            None => {
                let mut out = name_warning(obj, "the Pod's hostname");
                out.extend(pod::pod_spec_and_meta(
                    &Path::new(""),
                    obj.get("spec").unwrap_or(&Value::Null),
                    obj.get("metadata").unwrap_or(&Value::Null),
                ));
                out
            }
        },
        ("", "PodTemplate") => {
            if old.is_some_and(|o| !changed(o, obj, "template")) {
                return Vec::new();
            }
            template(obj.get("template"), &Path::new("template"))
        }
        ("", "ReplicationController") | ("apps", "ReplicaSet") => {
            workload(obj, old, true, spec_changed(old, obj))
        }
        ("apps", "Deployment") => {
            let bumped =
                spec_changed(old, obj) || old.is_some_and(|o| changed_meta(o, obj, "annotations"));
            workload(obj, old, true, bumped)
        }
        ("apps", "DaemonSet") => workload(obj, old, false, spec_changed(old, obj)),
        ("apps", "StatefulSet") => stateful_set(obj, old),
        ("batch", "Job") => {
            let mut out = Vec::new();
            if old.is_none() {
                out.extend(name_warning(obj, "Pod names and hostnames"));
            } else if !spec_changed(old, obj) {
                return out;
            }
            out.extend(job_spec(
                obj.get("spec").unwrap_or(&Value::Null),
                &Path::new("spec"),
            ));
            out
        }
        ("batch", "CronJob") => cron_job(obj, old),
        ("", "Service") => service(obj),
        ("", "PersistentVolumeClaim") => persistent_volume_claim(obj),
        ("", "PersistentVolume") => persistent_volume(obj),
        ("networking.k8s.io", "Ingress") if old.is_none() => ingress(obj),
        ("storage.k8s.io", "StorageClass") => storage_class(obj),
        ("node.k8s.io", "RuntimeClass") => runtime_class(obj),
        _ => Vec::new(),
    }
}

/// Whether `obj[key]` differs from `old[key]` as `Semantic.DeepEqual`
/// sees it.
fn changed(old: &Value, obj: &Value, key: &str) -> bool {
    let norm = |v: &Value| semantic(v.get(key).unwrap_or(&Value::Null));
    norm(old) != norm(obj)
}

fn changed_meta(old: &Value, obj: &Value, key: &str) -> bool {
    let meta = |v: &Value| v.get("metadata").cloned().unwrap_or(Value::Null);
    changed(&meta(old), &meta(obj), key)
}

/// On create always; on update whether the strategy bumps `generation`
/// (the spec changed).
fn spec_changed(old: Option<&Value>, obj: &Value) -> bool {
    old.is_none_or(|o| changed(o, obj, "spec"))
}

/// The name the object is stored under: its name, else what kube's
/// `SimpleNameGenerator` makes of `generateName` (at most 58 bytes of it
/// and five random characters, which are always DNS-label characters).
fn stored_name(obj: &Value) -> String {
    let meta = obj.get("metadata").unwrap_or(&Value::Null);
    let name = str_of(meta, "name");
    if !name.is_empty() {
        return name.to_string();
    }
    let base = str_of(meta, "generateName");
    if base.is_empty() {
        return String::new();
    }
    let mut cut = base.len().min(58);
    while !base.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}bcdfg", &base[..cut])
}

/// `metadata.name: this is used in <what>, ...` when the name is not a
/// DNS-1123 label (Go's `%v` of the messages).
fn name_warning(obj: &Value, what: &str) -> Vec<String> {
    let name = stored_name(obj);
    let msgs = keelson_apimachinery::names::is_dns1123_label(&name);
    if msgs.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "metadata.name: this is used in {what}, which can result in surprising behavior; a DNS label is recommended: [{}]",
        msgs.join(" ")
    )]
}

/// `GetWarningsForPodTemplate` at `path`.
fn template(t: Option<&Value>, path: &Path) -> Vec<String> {
    let Some(t) = t.filter(|t| t.is_object()) else {
        return Vec::new();
    };
    pod::pod_spec_and_meta(
        path,
        t.get("spec").unwrap_or(&Value::Null),
        t.get("metadata").unwrap_or(&Value::Null),
    )
}

/// Deployment, ReplicaSet, ReplicationController, DaemonSet: the name
/// (create, `named` kinds) and the `spec.template` warnings (create, and
/// updates that bump the generation).
fn workload(obj: &Value, old: Option<&Value>, named: bool, bumped: bool) -> Vec<String> {
    let mut out = Vec::new();
    if old.is_none() && named {
        out.extend(name_warning(obj, "Pod names and hostnames"));
    }
    if bumped {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        out.extend(template(
            spec.get("template"),
            &Path::new("spec").child("template"),
        ));
    }
    out
}

fn stateful_set(obj: &Value, old: Option<&Value>) -> Vec<String> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut out = Vec::new();
    if spec_changed(old, obj) {
        out.extend(template(
            spec.get("template"),
            &Path::new("spec").child("template"),
        ));
    }
    let claims = Path::new("spec").child("volumeClaimTemplates");
    for (i, pvc) in list_of(spec, "volumeClaimTemplates").iter().enumerate() {
        // kube's update path names the field `Spec` (sic).
        let p = match old {
            None => claims.index(i),
            Some(_) => claims.index(i).child("Spec"),
        };
        out.extend(pvc_spec_warnings(
            pvc.get("spec").unwrap_or(&Value::Null),
            &p,
        ));
    }
    if int_of(spec, "revisionHistoryLimit").is_some_and(|l| l < 0) {
        out.push(
            "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"
                .to_string(),
        );
    }
    out
}

/// `job.WarningsForJobSpec` at `path`.
fn job_spec(spec: &Value, path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if str_of(spec, "completionMode") == "Indexed" {
        let completions = int_of(spec, "completions").unwrap_or(0);
        let parallelism = int_of(spec, "parallelism").unwrap_or(0);
        if completions > 100_000 && parallelism > 10_000 {
            out.push(format!(
                "{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
            ));
        }
    }
    out.extend(template(spec.get("template"), &path.child("template")));
    out
}

fn cron_job(obj: &Value, old: Option<&Value>) -> Vec<String> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let job = spec
        .get("jobTemplate")
        .and_then(|t| t.get("spec"))
        .unwrap_or(&Value::Null);
    let job_path = Path::new("spec").child("jobTemplate").child("spec");
    let mut out = Vec::new();
    match old {
        None => {
            out.extend(name_warning(obj, "Pod names and hostnames"));
            out.extend(job_spec(job, &job_path));
        }
        Some(_) => {
            if spec_changed(old, obj) {
                out.extend(job_spec(job, &job_path));
            }
            // Only updates warn about TZ (creates refuse it); kube names
            // the path `spec.spec.schedule`.
            if str_of(spec, "schedule").contains("TZ") {
                out.push("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details".to_string());
            }
        }
    }
    out
}

/// `service.GetWarningsForService` (without the IP and CIDR form
/// warnings).
fn service(obj: &Value) -> Vec<String> {
    let meta = obj.get("metadata").unwrap_or(&Value::Null);
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut out = Vec::new();
    if obj_of(meta, "annotations")
        .is_some_and(|a| a.contains_key("service.kubernetes.io/topology-aware-hints"))
    {
        out.push("annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead".to_string());
    }
    let ty = str_of(spec, "type");
    let headless = ty == "ClusterIP" && str_of(spec, "clusterIP") == "None";
    let external_ips = !list_of(spec, "externalIPs").is_empty();
    if headless {
        if !str_of(spec, "loadBalancerIP").is_empty() {
            out.push("spec.loadBalancerIP is ignored for headless services".to_string());
        }
        if external_ips {
            out.push("spec.externalIPs is ignored for headless services".to_string());
        }
        if str_of(spec, "sessionAffinity") != "None" {
            out.push("spec.SessionAffinity is ignored for headless services".to_string());
        }
    }
    if ty == "ExternalName" && external_ips {
        out.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".to_string());
    }
    if ty != "ExternalName" && !str_of(spec, "externalName").is_empty() {
        out.push("spec.externalName is ignored when spec.type is not \"ExternalName\"".to_string());
    }
    out
}

fn beta_storage_class(obj: &Value) -> Vec<String> {
    let meta = obj.get("metadata").unwrap_or(&Value::Null);
    if obj_of(meta, "annotations").is_some_and(|a| a.contains_key(BETA_STORAGE_CLASS_ANNOTATION)) {
        let p = Path::new("metadata")
            .child("annotations")
            .key(BETA_STORAGE_CLASS_ANNOTATION);
        vec![format!("{p}: {DEPRECATED_STORAGE_CLASS_MSG}")]
    } else {
        Vec::new()
    }
}

/// `pvcutil.GetWarningsForPersistentVolumeClaim`.
fn persistent_volume_claim(obj: &Value) -> Vec<String> {
    let mut out = beta_storage_class(obj);
    out.extend(pvc_spec_warnings(
        obj.get("spec").unwrap_or(&Value::Null),
        &Path::new("spec"),
    ));
    out
}

/// `pvutil.GetWarningsForPersistentVolume`.
fn persistent_volume(obj: &Value) -> Vec<String> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let sp = Path::new("spec");
    let mut out = beta_storage_class(obj);
    if str_of(spec, "persistentVolumeReclaimPolicy") == "Recycle" {
        out.push(format!("{}: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.", sp.child("persistentVolumeReclaimPolicy")));
    }
    if let Some(req) = spec
        .get("nodeAffinity")
        .and_then(|a| a.get("required"))
        .filter(|r| r.is_object())
    {
        let terms = sp
            .child("nodeAffinity")
            .child("required")
            .child("nodeSelectorTerms");
        for (i, t) in list_of(req, "nodeSelectorTerms").iter().enumerate() {
            for (j, e) in list_of(t, "matchExpressions").iter().enumerate() {
                let key = str_of(e, "key");
                if let Some(msg) = node_label_deprecated(key) {
                    let p = terms
                        .index(i)
                        .child("matchExpressions")
                        .index(j)
                        .child("key");
                    out.push(format!("{p}: {key} is {msg}"));
                }
            }
        }
    }
    for (f, msg) in [
        ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
        (
            "photonPersistentDisk",
            "deprecated in v1.11, non-functional in v1.16+",
        ),
        ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
        ("storageOS", "deprecated in v1.22, non-functional in v1.25+"),
        ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
        ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
    ] {
        if spec.get(f).is_some_and(|v| !v.is_null()) {
            out.push(format!("{}: {msg}", sp.child(f)));
        }
    }
    out
}

/// The Ingress strategy's create warning for the class annotation.
fn ingress(obj: &Value) -> Vec<String> {
    let meta = obj.get("metadata").unwrap_or(&Value::Null);
    if obj_of(meta, "annotations").is_some_and(|a| a.contains_key("kubernetes.io/ingress.class")) {
        vec!["annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead".to_string()]
    } else {
        Vec::new()
    }
}

/// `storageutil.GetWarningsForStorageClass`: deprecated node labels in
/// `allowedTopologies`.
fn storage_class(obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let base = Path::new("allowedTopologies");
    for (i, t) in list_of(obj, "allowedTopologies").iter().enumerate() {
        for (j, e) in list_of(t, "matchLabelExpressions").iter().enumerate() {
            if let Some(msg) = node_label_deprecated(str_of(e, "key")) {
                let p = base
                    .index(i)
                    .child("matchLabelExpressions")
                    .index(j)
                    .child("key");
                out.push(format!("{p}: {msg}"));
            }
        }
    }
    out
}

/// `nodeapi.GetWarningsForRuntimeClass`: deprecated node labels in
/// `scheduling.nodeSelector` (kube names the map, not the key).
fn runtime_class(obj: &Value) -> Vec<String> {
    let sel = obj
        .get("scheduling")
        .and_then(|s| obj_of(s, "nodeSelector"));
    let mut keys: Vec<&String> = sel.into_iter().flatten().map(|(k, _)| k).collect();
    keys.sort();
    keys.into_iter()
        .filter_map(|k| node_label_deprecated(k))
        .map(|msg| format!("scheduling.nodeSelector: {msg}"))
        .collect()
}
