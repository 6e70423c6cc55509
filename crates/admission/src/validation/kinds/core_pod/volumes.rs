//! Pod volumes (`pkg/apis/core/validation`: `ValidateVolumes`,
//! `validateVolumeSource` and the per-source validators). The validators
//! kube shares with PersistentVolumes are `pub(crate)` for `core_pv`; the
//! PV-only variants take a flag.

use std::collections::HashSet;
use std::sync::OnceLock;

use keelson_apimachinery::names::{is_dns1123_label, is_dns1123_subdomain, is_qualified_name};
use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::Quantity;
use regex::Regex;
use serde_json::{Map, Value};

use super::super::util::{
    dns1123_label, go_selector, int_of, invalid_all, list_of, obj_of, str_of,
    validate_label_selector, validate_labels,
};
use super::super::{Path, Write};
use super::{field_refs, PodOpts};

/// The volume sources in the order `validateVolumeSource` checks them.
const VOLUME_SOURCES: &[&str] = &[
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

/// kube's `fileModeErrorMsg`.
const FILE_MODE_MSG: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// kube's `supportedHostPathTypes`, sorted.
pub(crate) const HOST_PATH_TYPES: &[&str] = &[
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

/// The bounds of a projected token's `expirationSeconds`
/// (`validateProjectionSources`): 10 minutes to 2^32 seconds.
const MIN_TOKEN_EXPIRATION: i64 = 10 * 60;
const MAX_TOKEN_EXPIRATION: i64 = 1 << 32;

/// `obj[key]` when it is set (not absent or `null`).
fn present<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// kube's `ValidateVolumes`: the names of the valid volumes and the errors.
/// The pod's name (`opts.pod_name`, Pods only) names the claims of
/// ephemeral volumes.
pub(super) fn validate_volumes(
    vols: &[Value],
    path: &Path,
    opts: &PodOpts<'_>,
) -> (Vec<String>, Vec<FieldError>) {
    let pod_name = opts.pod_name.filter(|n| !n.is_empty());
    let created: Vec<String> = match pod_name {
        Some(pod) => vols
            .iter()
            .filter(|v| present(v, "ephemeral").is_some())
            .map(|v| format!("{pod}-{}", str_of(v, "name")))
            .collect(),
        None => Vec::new(),
    };
    let mut names: Vec<String> = Vec::new();
    let mut errs = Vec::new();
    for (i, vol) in vols.iter().enumerate() {
        let ip = path.index(i);
        let np = ip.child("name");
        let name = str_of(vol, "name");
        let mut el = validate_volume_source(vol, &ip, name, opts);
        if name.is_empty() {
            el.push(FieldError::required(np.as_str(), ""));
        } else {
            el.extend(dns1123_label(name, &np));
        }
        if names.iter().any(|n| n == name) {
            el.push(super::super::util::duplicate(&np, name));
        }
        if el.is_empty() {
            names.push(name.to_string());
        } else {
            errs.extend(el);
        }
        if let Some(claim) = present(vol, "persistentVolumeClaim") {
            let claim_name = str_of(claim, "claimName");
            if created.iter().any(|c| c == claim_name) {
                errs.push(FieldError::invalid(
                    ip.child("persistentVolumeClaim")
                        .child("claimName")
                        .as_str(),
                    claim_name,
                    "must not reference a PVC that gets created for an ephemeral volume",
                ));
            }
        }
    }
    (names, errs)
}

/// kube's `validateVolumeSource` of the volume `vol` (named `vol_name`) at
/// `path`: exactly one source, and that source's own rules.
fn validate_volume_source(
    vol: &Value,
    path: &Path,
    vol_name: &str,
    opts: &PodOpts<'_>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    for key in VOLUME_SOURCES {
        let Some(src) = vol.get(*key).filter(|v| v.is_object()) else {
            continue;
        };
        if n > 0 {
            // kube reports these two at misspelt paths.
            let at = match *key {
                "cephfs" => "cephFS",
                "downwardAPI" => "downwarAPI",
                other => other,
            };
            errs.push(FieldError::forbidden(
                path.child(at).as_str(),
                "may not specify more than 1 volume type",
            ));
        } else {
            n += 1;
            errs.extend(source_fields(key, src, path, vol_name, opts));
        }
        // kube checks this whether or not the source was counted.
        if *key == "iscsi" && present(src, "initiatorName").is_some() {
            let joined = format!("{vol_name}:{}", str_of(src, "targetPortal"));
            if joined.len() > 64 {
                errs.push(FieldError::invalid(
                    path.child("name").as_str(),
                    vol_name,
                    ISCSI_TOO_LONG,
                ));
            }
        }
    }
    if n == 0 {
        errs.push(FieldError::required(
            path.as_str(),
            "must specify a volume type",
        ));
    }
    errs
}

const ISCSI_TOO_LONG: &str = "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.";

/// The rules of the one source `key` of a pod volume at `vp`.
fn source_fields(
    key: &str,
    src: &Value,
    vp: &Path,
    vol_name: &str,
    opts: &PodOpts<'_>,
) -> Vec<FieldError> {
    let sp = vp.child(key);
    match key {
        "emptyDir" => empty_dir(src, &sp),
        "hostPath" => host_path(src, &sp),
        "gitRepo" => git_repo(src, &sp),
        // kube validates a GCE disk at `persistentDisk`.
        "gcePersistentDisk" => gce_persistent_disk(src, &vp.child("persistentDisk")),
        "awsElasticBlockStore" => aws_elastic_block_store(src, &sp),
        "secret" => secret(src, &sp),
        "nfs" => nfs(src, &sp),
        "iscsi" => iscsi(src, &sp, None),
        "glusterfs" => glusterfs(src, &sp, false),
        "flocker" => flocker(src, &sp),
        "persistentVolumeClaim" => required_strings(src, &sp, &["claimName"]),
        "rbd" => rbd(src, &sp),
        "cinder" => cinder(src, &sp, false),
        "cephfs" => cephfs(src, &sp),
        "quobyte" => quobyte(src, &sp),
        "downwardAPI" => downward_api(src, &sp),
        "fc" => fc(src, &sp),
        "flexVolume" => flex_volume(src, &sp),
        "configMap" => config_map(src, &sp),
        "azureFile" => azure_file(src, &sp, false),
        "vsphereVolume" => vsphere_volume(src, &sp),
        "photonPersistentDisk" => photon_persistent_disk(src, &sp),
        "portworxVolume" => portworx_volume(src, &sp),
        "azureDisk" => azure_disk(src, &sp),
        "storageos" => storageos(src, &sp, false),
        "projected" => projected(src, &sp, opts.allow_non_local_token_path),
        "scaleIO" => scale_io(src, &sp),
        "csi" => csi(src, &sp),
        "ephemeral" => {
            let mut errs = ephemeral(src, &sp);
            if let Some(pod) = opts.pod_name.filter(|n| !n.is_empty()) {
                if !vol_name.is_empty() {
                    let claim = format!("{pod}-{vol_name}");
                    for msg in is_dns1123_subdomain(&claim) {
                        errs.push(FieldError::invalid(
                            vp.child("name").as_str(),
                            vol_name,
                            &format!("PVC name {claim:?}: {msg}"),
                        ));
                    }
                }
            }
            errs
        }
        "image" => image(src, &sp, opts.resource_is_pod),
        _ => Vec::new(),
    }
}

/// `Required value` at `p.<key>` for each empty string field `key`.
fn required_strings(src: &Value, p: &Path, keys: &[&str]) -> Vec<FieldError> {
    keys.iter()
        .filter(|k| str_of(src, k).is_empty())
        .map(|k| FieldError::required(p.child(k).as_str(), ""))
        .collect()
}

/// A file mode (`defaultMode`, `mode`) outside 0..=0777.
fn file_mode(v: Option<&Value>, p: &Path) -> Option<FieldError> {
    let mode = v.and_then(Value::as_i64)?;
    (!(0..=0o777).contains(&mode)).then(|| FieldError::invalid(p.as_str(), mode, FILE_MODE_MSG))
}

/// The emptyDir rule of `validateVolumeSource`: a non-negative `sizeLimit`.
fn empty_dir(src: &Value, p: &Path) -> Vec<FieldError> {
    let Some(limit) = present(src, "sizeLimit") else {
        return Vec::new();
    };
    let text = match limit {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let negative = Quantity::parse(text.trim()).is_some_and(|q| match q.nanos() {
        Some(n) => n < 0,
        None => text.trim_start().starts_with('-'),
    });
    if negative {
        vec![FieldError::forbidden(
            p.child("sizeLimit").as_str(),
            "SizeLimit field must be a valid resource quantity",
        )]
    } else {
        Vec::new()
    }
}

/// kube's `validateHostPathVolumeSource` (pods and PVs).
pub(crate) fn host_path(src: &Value, p: &Path) -> Vec<FieldError> {
    let path = str_of(src, "path");
    let pp = p.child("path");
    if path.is_empty() {
        return vec![FieldError::required(pp.as_str(), "")];
    }
    let mut errs = no_backsteps(path, &pp);
    // `validateHostPathType`.
    if let Some(t) = present(src, "type") {
        let t = t.as_str().unwrap_or("");
        if !HOST_PATH_TYPES.contains(&t) {
            errs.push(FieldError::not_supported(
                p.child("type").as_str(),
                t,
                HOST_PATH_TYPES,
            ));
        }
    }
    errs
}

/// kube's `validateGitRepoVolumeSource`.
fn git_repo(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["repository"]);
    errs.extend(local_descending_path(
        str_of(src, "directory"),
        &p.child("directory"),
    ));
    errs
}

/// kube's `validatePathNoBacksteps`: no `..` element (one error).
pub(crate) fn no_backsteps(path: &str, p: &Path) -> Vec<FieldError> {
    if path.split('/').any(|e| e == "..") {
        vec![FieldError::invalid(
            p.as_str(),
            path,
            "must not contain '..'",
        )]
    } else {
        Vec::new()
    }
}

/// kube's `validateLocalDescendingPath`: relative, without `..`.
fn local_descending_path(path: &str, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if path.starts_with('/') {
        errs.push(FieldError::invalid(
            p.as_str(),
            path,
            "must be a relative path",
        ));
    }
    errs.extend(no_backsteps(path, p));
    errs
}

/// kube's `ValidateLocalNonReservedPath`: a local descending path that
/// does not start with `..` either.
fn local_non_reserved_path(path: &str, p: &Path) -> Vec<FieldError> {
    let mut errs = local_descending_path(path, p);
    if path.starts_with("..") && !path.starts_with("../") {
        errs.push(FieldError::invalid(
            p.as_str(),
            path,
            "must not start with '..'",
        ));
    }
    errs
}

/// kube's `validateKeyToPath` (secret and configMap items).
fn key_to_path(kp: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(kp, p, &["key", "path"]);
    errs.extend(local_non_reserved_path(
        str_of(kp, "path"),
        &p.child("path"),
    ));
    errs.extend(file_mode(kp.get("mode"), &p.child("mode")));
    errs
}

/// kube's `validateSecretVolumeSource`.
fn secret(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["secretName"]);
    errs.extend(file_mode(src.get("defaultMode"), &p.child("defaultMode")));
    for (i, kp) in list_of(src, "items").iter().enumerate() {
        errs.extend(key_to_path(kp, &p.child("items").index(i)));
    }
    errs
}

/// kube's `validateConfigMapVolumeSource`.
fn config_map(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["name"]);
    errs.extend(file_mode(src.get("defaultMode"), &p.child("defaultMode")));
    for (i, kp) in list_of(src, "items").iter().enumerate() {
        errs.extend(key_to_path(kp, &p.child("items").index(i)));
    }
    errs
}

/// kube's `validateGCEPersistentDiskVolumeSource` (pods and PVs), at
/// `persistentDisk`.
pub(crate) fn gce_persistent_disk(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["pdName"]);
    errs.extend(partition(src, p));
    errs
}

/// kube's `validateAWSElasticBlockStoreVolumeSource` (pods and PVs).
pub(crate) fn aws_elastic_block_store(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["volumeID"]);
    errs.extend(partition(src, p));
    errs
}

/// A disk `partition` outside 0..=255 (kube's message says 1).
fn partition(src: &Value, p: &Path) -> Option<FieldError> {
    let partition = int_of(src, "partition").unwrap_or(0);
    (!(0..=255).contains(&partition)).then(|| {
        FieldError::invalid(
            p.child("partition").as_str(),
            partition,
            "must be between 1 and 255, inclusive",
        )
    })
}

/// kube's `validateNFSVolumeSource` (pods and PVs).
pub(crate) fn nfs(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["server", "path"]);
    let path = str_of(src, "path");
    if !path.starts_with('/') {
        errs.push(FieldError::invalid(
            p.child("path").as_str(),
            path,
            "must be an absolute path",
        ));
    }
    errs
}

/// kube's `iscsiInitiatorIqnRegex`, `...EuiRegex` and `...NaaRegex`
/// (RE2's ASCII `\d` and `\s`).
fn iscsi_regexes() -> &'static Option<[Regex; 3]> {
    static RE: OnceLock<Option<[Regex; 3]>> = OnceLock::new();
    RE.get_or_init(|| {
        Some([
            Regex::new(r"iqn\.[0-9]{4}-[0-9]{2}\.([[:alnum:]\-.]+)(:[^,;*&$|\t\n\f\r ]+)$").ok()?,
            Regex::new(r"^eui.[[:alnum:]]{16}$").ok()?,
            Regex::new(r"^naa.[[:alnum:]]{32}$").ok()?,
        ])
    })
}

/// An iSCSI name that starts with `iqn`, `eui` or `naa` but does not match
/// that form's pattern.
fn iscsi_name_malformed(name: &str) -> bool {
    let Some([iqn, eui, naa]) = iscsi_regexes() else {
        return false;
    };
    (name.starts_with("iqn") && !iqn.is_match(name))
        || (name.starts_with("eui") && !eui.is_match(name))
        || (name.starts_with("naa") && !naa.is_match(name))
}

fn iscsi_prefixed(name: &str) -> bool {
    ["iqn", "eui", "naa"].iter().any(|p| name.starts_with(p))
}

/// kube's `validateISCSIVolumeSource`, or with `pv_name` (the volume's
/// name) `validateISCSIPersistentVolumeSource`.
pub(crate) fn iscsi(src: &Value, p: &Path, pv_name: Option<&str>) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["targetPortal"]);
    let portal = str_of(src, "targetPortal");
    let initiator = present(src, "initiatorName").map(|v| v.as_str().unwrap_or(""));
    if let (Some(pv), Some(_)) = (pv_name, initiator) {
        if format!("{pv}:{portal}").len() > 64 {
            errs.push(FieldError::invalid(
                p.child("targetportal").as_str(),
                portal,
                ISCSI_TOO_LONG,
            ));
        }
    }
    let prefix_msg = if pv_name.is_some() {
        "must be valid format"
    } else {
        "must be valid format starting with iqn, eui, or naa"
    };
    let iqn = str_of(src, "iqn");
    let iqn_path = p.child("iqn");
    if iqn.is_empty() {
        errs.push(FieldError::required(iqn_path.as_str(), ""));
    } else if !iscsi_prefixed(iqn) {
        errs.push(FieldError::invalid(iqn_path.as_str(), iqn, prefix_msg));
    } else if iscsi_name_malformed(iqn) {
        errs.push(FieldError::invalid(
            iqn_path.as_str(),
            iqn,
            "must be valid format",
        ));
    }
    let lun = int_of(src, "lun").unwrap_or(0);
    if !(0..=255).contains(&lun) {
        errs.push(FieldError::invalid(
            p.child("lun").as_str(),
            lun,
            "must be between 0 and 255, inclusive",
        ));
    }
    let chap = ["chapAuthDiscovery", "chapAuthSession"]
        .iter()
        .any(|k| src.get(*k).and_then(Value::as_bool).unwrap_or(false));
    let secret_ref = present(src, "secretRef");
    if chap && secret_ref.is_none() {
        errs.push(FieldError::required(p.child("secretRef").as_str(), ""));
    }
    if let (Some(_), Some(r)) = (pv_name, secret_ref) {
        errs.extend(required_strings(r, &p.child("secretRef"), &["name"]));
    }
    if let Some(initiator) = initiator {
        let ip = p.child("initiatorname");
        if !iscsi_prefixed(initiator) {
            errs.push(FieldError::invalid(ip.as_str(), initiator, prefix_msg));
        }
        if iscsi_name_malformed(initiator) {
            errs.push(FieldError::invalid(
                ip.as_str(),
                initiator,
                "must be valid format",
            ));
        }
    }
    errs
}

/// kube's `validateGlusterfsVolumeSource`, or with `pv` the
/// PersistentVolume variant (`endpointsNamespace`).
pub(crate) fn glusterfs(src: &Value, p: &Path, pv: bool) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["endpoints", "path"]);
    if !pv {
        return errs;
    }
    if let Some(ns) = present(src, "endpointsNamespace") {
        let ns = ns.as_str().unwrap_or("");
        let np = p.child("endpointsNamespace");
        if ns.is_empty() {
            errs.push(FieldError::invalid(
                np.as_str(),
                ns,
                "if the endpointnamespace is set, it must be a valid namespace name",
            ));
        } else {
            errs.extend(invalid_all(is_dns1123_label(ns), &np, ns));
        }
    }
    errs
}

/// kube's `validateFlockerVolumeSource` (pods and PVs).
pub(crate) fn flocker(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(src, "datasetName");
    let uuid = str_of(src, "datasetUUID");
    if name.is_empty() && uuid.is_empty() {
        errs.push(FieldError::required(
            p.as_str(),
            "one of datasetName and datasetUUID is required",
        ));
    }
    if !name.is_empty() && !uuid.is_empty() {
        errs.push(FieldError::invalid(
            p.as_str(),
            "resource",
            "datasetName and datasetUUID can not be specified simultaneously",
        ));
    }
    if name.contains('/') {
        errs.push(FieldError::invalid(
            p.child("datasetName").as_str(),
            name,
            "must not contain '/'",
        ));
    }
    errs
}

/// kube's `validateRBDVolumeSource` (the PV variant has the same rules).
pub(crate) fn rbd(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if list_of(src, "monitors").is_empty() {
        errs.push(FieldError::required(p.child("monitors").as_str(), ""));
    }
    errs.extend(required_strings(src, p, &["image"]));
    errs
}

/// kube's `validateCinderVolumeSource`, or with `pv` the PersistentVolume
/// variant (the secret's namespace is required too).
pub(crate) fn cinder(src: &Value, p: &Path, pv: bool) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["volumeID"]);
    errs.extend(secret_ref(src, p, pv));
    errs
}

/// A set `secretRef` needs its name, and in a PersistentVolume (`pv`) its
/// namespace too (the Cinder and StorageOS sources).
fn secret_ref(src: &Value, p: &Path, pv: bool) -> Vec<FieldError> {
    let Some(r) = present(src, "secretRef") else {
        return Vec::new();
    };
    let keys: &[&str] = if pv {
        &["name", "namespace"]
    } else {
        &["name"]
    };
    required_strings(r, &p.child("secretRef"), keys)
}

/// kube's `validateCephFSVolumeSource` (the PV variant has the same rules).
pub(crate) fn cephfs(src: &Value, p: &Path) -> Vec<FieldError> {
    if list_of(src, "monitors").is_empty() {
        vec![FieldError::required(p.child("monitors").as_str(), "")]
    } else {
        Vec::new()
    }
}

/// Go's `net.SplitHostPort` succeeds on `s`.
fn split_host_port_ok(s: &str) -> bool {
    let Some(i) = s.rfind(':') else {
        return false;
    };
    let (mut j, mut k) = (0, 0);
    if s.starts_with('[') {
        let Some(end) = s.find(']') else {
            return false;
        };
        if end + 1 != i {
            return false;
        }
        j = 1;
        k = end + 1;
    } else if s[..i].contains(':') {
        return false;
    }
    !s[j..].contains('[') && !s[k..].contains(']')
}

/// kube's `validateQuobyteVolumeSource` (pods and PVs).
pub(crate) fn quobyte(src: &Value, p: &Path) -> Vec<FieldError> {
    const REGISTRY_MSG: &str = "must be a host:port pair or multiple pairs separated by commas";
    let mut errs = Vec::new();
    let registry = str_of(src, "registry");
    let rp = p.child("registry");
    if registry.is_empty() {
        errs.push(FieldError::required(rp.as_str(), REGISTRY_MSG));
    } else if str_of(src, "tenant").len() >= 65 {
        errs.push(FieldError::required(
            p.child("tenant").as_str(),
            "must be a UUID and may not exceed a length of 64 characters",
        ));
    } else {
        for pair in registry.split(',') {
            if !split_host_port_ok(pair) {
                errs.push(FieldError::invalid(rp.as_str(), registry, REGISTRY_MSG));
            }
        }
    }
    errs.extend(required_strings(src, p, &["volume"]));
    errs
}

/// kube's `validateDownwardAPIVolumeSource`.
fn downward_api(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = file_mode(src.get("defaultMode"), &p.child("defaultMode"))
        .into_iter()
        .collect();
    for file in list_of(src, "items") {
        // kube reports the items at the source's path, without an index.
        errs.extend(downward_api_file(file, p));
    }
    errs
}

/// kube's `validateDownwardAPIVolumeFile`, at `p` (not indexed, as kube).
fn downward_api_file(file: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(file, p, &["path"]);
    errs.extend(local_non_reserved_path(
        str_of(file, "path"),
        &p.child("path"),
    ));
    let resource_ref = present(file, "resourceFieldRef");
    if let Some(field_ref) = present(file, "fieldRef") {
        // `SetDefaults_ObjectFieldSelector`: `apiVersion` defaults to v1.
        let mut field_ref = field_ref.clone();
        if let Some(m) = field_ref.as_object_mut() {
            if m.get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                m.insert("apiVersion".into(), "v1".into());
            }
        }
        errs.extend(field_refs::object_field_selector(
            &field_ref,
            &p.child("fieldRef"),
            field_refs::VOLUME_FIELD_PATHS,
        ));
        if resource_ref.is_some() {
            errs.push(FieldError::invalid(
                p.as_str(),
                "resource",
                "fieldRef and resourceFieldRef can not be specified simultaneously",
            ));
        }
    } else if let Some(r) = resource_ref {
        errs.extend(field_refs::resource_field_selector(
            r,
            &p.child("resourceFieldRef"),
            true,
        ));
    } else {
        errs.push(FieldError::required(
            p.as_str(),
            "one of fieldRef and resourceFieldRef is required",
        ));
    }
    errs.extend(file_mode(file.get("mode"), &p.child("mode")));
    errs
}

/// kube's `validateFCVolumeSource` (pods and PVs).
pub(crate) fn fc(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let wwns = list_of(src, "targetWWNs");
    let wwids = list_of(src, "wwids");
    let tp = p.child("targetWWNs");
    if wwns.is_empty() && wwids.is_empty() {
        errs.push(FieldError::required(
            tp.as_str(),
            "must specify either targetWWNs or wwids, but not both",
        ));
    }
    if !wwns.is_empty() && !wwids.is_empty() {
        errs.push(FieldError::invalid(
            tp.as_str(),
            Value::Array(wwns.to_vec()),
            "targetWWNs and wwids can not be specified simultaneously",
        ));
    }
    if !wwns.is_empty() {
        let lp = p.child("lun");
        match present(src, "lun") {
            None => errs.push(FieldError::required(
                lp.as_str(),
                "lun is required if targetWWNs is specified",
            )),
            Some(lun) => {
                let n = lun.as_i64().unwrap_or(0);
                if !(0..=255).contains(&n) {
                    errs.push(FieldError::invalid(
                        lp.as_str(),
                        n,
                        "must be between 0 and 255, inclusive",
                    ));
                }
            }
        }
    }
    errs
}

/// kube's `validateFlexVolumeSource` (the PV variant has the same rules):
/// the driver, and no option in the `kubernetes.io`/`k8s.io` namespaces.
pub(crate) fn flex_volume(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["driver"]);
    for k in obj_of(src, "options").into_iter().flatten().map(|(k, _)| k) {
        let namespace = match k.split_once('/') {
            Some((ns, _)) => ns,
            None => k.as_str(),
        };
        let normalized = format!(".{}", namespace.to_lowercase());
        if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
            errs.push(FieldError::invalid(
                p.child("options").key(k).as_str(),
                k.as_str(),
                "kubernetes.io and k8s.io namespaces are reserved",
            ));
        }
    }
    errs
}

/// kube's `validateAzureFile`, or with `pv` `validateAzureFilePV` (a set
/// `secretNamespace` must not be empty).
pub(crate) fn azure_file(src: &Value, p: &Path, pv: bool) -> Vec<FieldError> {
    let mut errs = required_strings(src, p, &["secretName", "shareName"]);
    if pv {
        if let Some(ns) = present(src, "secretNamespace") {
            if ns.as_str().unwrap_or("").is_empty() {
                errs.push(FieldError::required(
                    p.child("secretNamespace").as_str(),
                    "",
                ));
            }
        }
    }
    errs
}

/// kube's `validateVsphereVolumeSource` (pods and PVs).
pub(crate) fn vsphere_volume(src: &Value, p: &Path) -> Vec<FieldError> {
    required_strings(src, p, &["volumePath"])
}

/// kube's `validatePhotonPersistentDiskVolumeSource` (pods and PVs).
pub(crate) fn photon_persistent_disk(src: &Value, p: &Path) -> Vec<FieldError> {
    required_strings(src, p, &["pdID"])
}

/// kube's `validatePortworxVolumeSource` (pods and PVs).
pub(crate) fn portworx_volume(src: &Value, p: &Path) -> Vec<FieldError> {
    required_strings(src, p, &["volumeID"])
}

/// kube's `validateAzureDisk` (pods and PVs).
pub(crate) fn azure_disk(src: &Value, p: &Path) -> Vec<FieldError> {
    const CACHING_MODES: &[&str] = &["None", "ReadOnly", "ReadWrite"];
    const KINDS: &[&str] = &["Dedicated", "Managed", "Shared"];
    let mut errs = required_strings(src, p, &["diskName", "diskURI"]);
    if let Some(mode) = present(src, "cachingMode") {
        let mode = mode.as_str().unwrap_or("");
        if !CACHING_MODES.contains(&mode) {
            errs.push(FieldError::not_supported(
                p.child("cachingMode").as_str(),
                mode,
                CACHING_MODES,
            ));
        }
    }
    let kind = present(src, "kind").map(|k| k.as_str().unwrap_or(""));
    if let Some(kind) = kind {
        if !KINDS.contains(&kind) {
            errs.push(FieldError::not_supported(
                p.child("kind").as_str(),
                kind,
                KINDS,
            ));
        }
        let uri = str_of(src, "diskURI");
        let up = p.child("diskURI");
        if kind == "Managed" && !uri.starts_with("/subscriptions/") {
            errs.push(FieldError::not_supported(
                up.as_str(),
                uri,
                &["/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"],
            ));
        }
        if kind != "Managed" && !uri.starts_with("https://") {
            errs.push(FieldError::not_supported(
                up.as_str(),
                uri,
                &["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"],
            ));
        }
    }
    errs
}

/// kube's `validateScaleIOVolumeSource` (the PV variant has the same
/// rules).
pub(crate) fn scale_io(src: &Value, p: &Path) -> Vec<FieldError> {
    required_strings(src, p, &["gateway", "system", "volumeName"])
}

/// kube's `validateStorageOSVolumeSource`, or with `pv` the
/// PersistentVolume variant (the secret's namespace is required too).
pub(crate) fn storageos(src: &Value, p: &Path, pv: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(src, "volumeName");
    let np = p.child("volumeName");
    if name.is_empty() {
        errs.push(FieldError::required(np.as_str(), ""));
    } else {
        errs.extend(dns1123_label(name, &np));
    }
    let ns = str_of(src, "volumeNamespace");
    if !ns.is_empty() {
        errs.extend(dns1123_label(ns, &p.child("volumeNamespace")));
    }
    errs.extend(secret_ref(src, p, pv));
    errs
}

/// core's `ValidateCSIDriverName`: required, at most 63 bytes, a DNS
/// subdomain once lower-cased (the value as sent is reported).
pub(crate) fn csi_driver_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(path.as_str(), ""));
    }
    if name.len() > 63 {
        errs.push(FieldError::too_long(
            path.as_str(),
            "may not be more than 63 bytes",
        ));
    }
    errs.extend(invalid_all(
        is_dns1123_subdomain(&name.to_lowercase()),
        path,
        name,
    ));
    errs
}

/// kube's `validateCSIVolumeSource` (an invalid secret name is reported at
/// `csi.name`, as kube does).
fn csi(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = csi_driver_name(str_of(src, "driver"), &p.child("driver"));
    if let Some(r) = present(src, "nodePublishSecretRef") {
        let name = str_of(r, "name");
        if name.is_empty() {
            errs.push(FieldError::required(
                p.child("nodePublishSecretRef").child("name").as_str(),
                "",
            ));
        } else {
            errs.extend(invalid_all(
                is_dns1123_subdomain(name),
                &p.child("name"),
                name,
            ));
        }
    }
    errs
}

/// kube's `validateImageVolumeSource`: a Pod's image volume needs a
/// `reference` (templates may leave it to be filled in), and the pull
/// policy is one of kube's.
fn image(src: &Value, p: &Path, resource_is_pod: bool) -> Vec<FieldError> {
    const POLICIES: &[&str] = &["Always", "IfNotPresent", "Never"];
    let mut errs = Vec::new();
    if resource_is_pod && str_of(src, "reference").is_empty() {
        errs.push(FieldError::required(p.child("reference").as_str(), ""));
    }
    // An empty policy reads as defaulted (`SetDefaults_ImageVolumeSource`
    // always sets one).
    let policy = str_of(src, "pullPolicy");
    if !policy.is_empty() && !POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported(
            p.child("pullPolicy").as_str(),
            policy,
            POLICIES,
        ));
    }
    errs
}

/// kube's `validateProjectedVolumeSource` and `validateProjectionSources`;
/// `allow_non_local_token_path` is `AllowNonLocalProjectedTokenPath`.
fn projected(src: &Value, p: &Path, allow_non_local_token_path: bool) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = file_mode(src.get("defaultMode"), &p.child("defaultMode"))
        .into_iter()
        .collect();
    let mut all_paths: HashSet<String> = HashSet::new();
    let mut seen = |path: &str, value: &str, errs: &mut Vec<FieldError>| {
        if !all_paths.insert(path.to_string()) {
            errs.push(FieldError::invalid(
                p.as_str(),
                value,
                "conflicting duplicate paths",
            ));
        }
    };
    for (i, source) in list_of(src, "sources").iter().enumerate() {
        let sp = p.child("sources").index(i);
        let mut n = 0;
        for key in ["secret", "configMap"] {
            let Some(s) = present(source, key) else {
                continue;
            };
            n += 1;
            let kp = sp.child(key);
            errs.extend(required_strings(s, &kp, &["name"]));
            for (j, item) in list_of(s, "items").iter().enumerate() {
                errs.extend(key_to_path(item, &kp.child("items").index(j)));
                let path = str_of(item, "path");
                if !path.is_empty() {
                    seen(path, str_of(s, "name"), &mut errs);
                }
            }
        }
        if let Some(d) = present(source, "downwardAPI") {
            n += 1;
            let dp = sp.child("downwardAPI");
            for file in list_of(d, "items") {
                errs.extend(downward_api_file(file, &dp));
                let path = str_of(file, "path");
                if !path.is_empty() {
                    seen(path, path, &mut errs);
                }
            }
        }
        if let Some(t) = present(source, "serviceAccountToken") {
            n += 1;
            let tp = sp.child("serviceAccountToken");
            // `SetDefaults_ServiceAccountTokenProjection`: one hour.
            let exp = int_of(t, "expirationSeconds").unwrap_or(3600);
            let ep = tp.child("expirationSeconds");
            if exp < MIN_TOKEN_EXPIRATION {
                errs.push(FieldError::invalid(
                    ep.as_str(),
                    exp,
                    "may not specify a duration less than 10 minutes",
                ));
            }
            if exp > MAX_TOKEN_EXPIRATION {
                errs.push(FieldError::invalid(
                    ep.as_str(),
                    exp,
                    "may not specify a duration larger than 2^32 seconds",
                ));
            }
            // kube reports the token's path at the volume's `projected.path`.
            let path = str_of(t, "path");
            if path.is_empty() {
                errs.push(FieldError::required(p.child("path").as_str(), ""));
            } else if !allow_non_local_token_path {
                errs.extend(local_non_reserved_path(path, &p.child("path")));
            }
        }
        if let Some(b) = present(source, "clusterTrustBundle") {
            n += 1;
            errs.extend(cluster_trust_bundle(b, &sp.child("clusterTrustBundle")));
            // Unlike the others, an empty path counts too.
            let path = str_of(b, "path");
            seen(path, path, &mut errs);
        }
        if n > 1 {
            errs.push(FieldError::forbidden(
                sp.as_str(),
                "may not specify more than 1 volume type per source",
            ));
        }
    }
    errs
}

/// The clusterTrustBundle rules of `validateProjectionSources` (the
/// duplicate-path check aside).
fn cluster_trust_bundle(b: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = present(b, "name").map(|v| v.as_str().unwrap_or(""));
    let signer = present(b, "signerName").map(|v| v.as_str().unwrap_or(""));
    let selector = present(b, "labelSelector");
    match (name, signer) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            p.as_str(),
            go_trust_bundle_projection(b),
            "only one of name and signerName may be used",
        )),
        (Some(name), None) => {
            let np = p.child("name");
            if name.is_empty() {
                errs.push(FieldError::required(
                    np.as_str(),
                    "must be a valid object name",
                ));
            }
            // `extractSignerNameFromClusterTrustBundleName`.
            let signer = name
                .rfind(':')
                .map(|i| name[..i].replace(':', "/"))
                .unwrap_or_default();
            for msg in crate::validation::objectmeta::trust_bundle_name_errors(&signer, name, false)
            {
                errs.push(FieldError::invalid(
                    np.as_str(),
                    name,
                    &format!("not a valid clustertrustbundlename: {msg}"),
                ));
            }
            if let Some(sel) = selector {
                errs.push(FieldError::invalid(
                    p.child("labelSelector").as_str(),
                    go_selector(sel),
                    "labelSelector must be unset if name is specified",
                ));
            }
        }
        (None, Some(signer)) => {
            let sp = p.child("signerName");
            if signer.is_empty() {
                errs.push(FieldError::required(
                    sp.as_str(),
                    "must be a valid signer name",
                ));
            }
            errs.extend(super::super::certificates::validate_signer_name(
                signer, &sp,
            ));
            errs.extend(validate_label_selector(
                selector,
                false,
                &p.child("labelSelector"),
            ));
        }
        (None, None) => errs.push(FieldError::required(
            p.as_str(),
            "either name or signerName must be specified",
        )),
    }
    let path = str_of(b, "path");
    if path.is_empty() {
        errs.push(FieldError::required(p.child("path").as_str(), ""));
    }
    errs.extend(local_non_reserved_path(path, &p.child("path")));
    errs
}

/// The internal `ClusterTrustBundleProjection` as `encoding/json` prints it
/// (Go field names; the selector with its JSON names).
fn go_trust_bundle_projection(b: &Value) -> Value {
    let mut m = Map::new();
    let or_null = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
    m.insert("Name".into(), or_null(present(b, "name")));
    m.insert("SignerName".into(), or_null(present(b, "signerName")));
    m.insert(
        "LabelSelector".into(),
        present(b, "labelSelector").map_or(Value::Null, go_selector),
    );
    m.insert("Optional".into(), or_null(present(b, "optional")));
    m.insert("Path".into(), Value::String(str_of(b, "path").into()));
    Value::Object(m)
}

/// `ObjectMeta` fields a template may not set, in the struct's order, with
/// the name `validateFieldAllowList` reports (the Go name, first letter
/// lowered).
const TEMPLATE_META_FORBIDDEN: &[(&str, &str)] = &[
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
];

/// kube's `ValidateTemplateObjectMeta`: annotations, labels, and nothing
/// else set.
fn template_object_meta(meta: Option<&Value>, p: &Path) -> Vec<FieldError> {
    let empty = Value::Null;
    let meta = meta.unwrap_or(&empty);
    let ap = p.child("annotations");
    let mut errs = Vec::new();
    let mut size = 0usize;
    for (k, v) in obj_of(meta, "annotations").into_iter().flatten() {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(ap.as_str(), k.as_str(), &msg));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            ap.as_str(),
            &format!("may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
    errs.extend(validate_labels(obj_of(meta, "labels"), &p.child("labels")));
    for (key, go_name) in TEMPLATE_META_FORBIDDEN {
        let set = match meta.get(*key) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Number(n)) => {
                *key == "deletionGracePeriodSeconds" || n.as_f64() != Some(0.0)
            }
            Some(_) => true,
        };
        if set {
            errs.push(FieldError::forbidden(
                p.child(go_name).as_str(),
                "cannot be set",
            ));
        }
    }
    errs
}

/// kube's `validateEphemeralVolumeSource`: the claim template's metadata
/// (`ValidateTemplateObjectMeta`) and its spec as a claim's
/// (`ValidatePersistentVolumeClaimSpec`, a create's options).
fn ephemeral(src: &Value, p: &Path) -> Vec<FieldError> {
    let tp = p.child("volumeClaimTemplate");
    let Some(template) = present(src, "volumeClaimTemplate") else {
        return vec![FieldError::required(tp.as_str(), "")];
    };
    let mut errs = template_object_meta(template.get("metadata"), &tp.child("metadata"));
    // A missing spec is Go's zero PersistentVolumeClaimSpec.
    let spec = template
        .get("spec")
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut claim = Map::new();
    claim.insert("spec".into(), spec);
    let claim_write = Write {
        op: keelson_api::Operation::Create,
        subresource: "",
        old: None,
        allow_privileged: false,
    };
    let at = tp.child("spec");
    for mut e in super::super::core_other::validate(
        "PersistentVolumeClaim",
        claim_write,
        &Value::Object(claim),
    ) {
        // The claim's errors are rooted at its `spec`.
        if let Some(rest) = e.field.strip_prefix("spec") {
            e.field = format!("{}{rest}", at.as_str());
            errs.push(e);
        }
    }
    errs
}

/// The pod-only volume rule of kube's `validatePodMetadataAndSpec`: a pod
/// without a service account may not project its token.
pub(super) fn pod_only(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !str_of(spec, "serviceAccountName").is_empty() {
        return errs;
    }
    for (i, vol) in list_of(spec, "volumes").iter().enumerate() {
        let Some(projected) = present(vol, "projected") else {
            continue;
        };
        for (j, source) in list_of(projected, "sources").iter().enumerate() {
            if present(source, "serviceAccountToken").is_some() {
                errs.push(FieldError::forbidden(
                    path.child("volumes")
                        .index(i)
                        .child("projected")
                        .child("sources")
                        .index(j)
                        .child("serviceAccountToken")
                        .as_str(),
                    "must not be specified when serviceAccountName is not set",
                ));
            }
        }
    }
    errs
}

/// `hasNonLocalProjectedTokenPath` of the stored pod's spec: a token path
/// kube's `ValidateLocalNonReservedPath` rejects, which stays allowed.
pub(super) fn has_non_local_token_path(spec: &Value) -> bool {
    list_of(spec, "volumes").iter().any(|vol| {
        present(vol, "projected").is_some_and(|pr| {
            list_of(pr, "sources").iter().any(|s| {
                present(s, "serviceAccountToken").is_some_and(|t| {
                    !local_non_reserved_path(str_of(t, "path"), &Path::new("")).is_empty()
                })
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The errors of `vols` at `spec.volumes`, one per line.
    fn errors(vols: Value, resource_is_pod: bool) -> Vec<String> {
        let opts = PodOpts {
            resource_is_pod,
            ..PodOpts::default()
        };
        let vols = vols.as_array().cloned().unwrap_or_default();
        validate_volumes(&vols, &Path::new("spec").child("volumes"), &opts)
            .1
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    // ClusterTrustBundle projections and image volumes are behind gates
    // that are off in 1.34 (kube drops the fields before validating), so
    // their rules are checked here rather than through admission.
    #[test]
    fn cluster_trust_bundle_projection() {
        let got = errors(
            json!([{"name": "p", "projected": {"sources": [
                {"clusterTrustBundle": {"name": "a", "signerName": "b", "path": "p"}},
                {"clusterTrustBundle": {"name": "example.com:signer:x",
                    "labelSelector": {"matchLabels": {"a": "b"}}, "path": "q"}},
                {"clusterTrustBundle": {"signerName": "", "path": ""}},
                {"clusterTrustBundle": {"name": "Bad_Name", "path": ""}},
                {"clusterTrustBundle": {"path": "../r"}},
            ]}}]),
            true,
        );
        let s = "spec.volumes[0].projected.sources";
        let subdomain = is_dns1123_subdomain("Bad_Name").join("");
        assert_eq!(
            got,
            vec![
                format!("{s}[0].clusterTrustBundle: Invalid value: {{\"Name\":\"a\",\"SignerName\":\"b\",\"LabelSelector\":null,\"Optional\":null,\"Path\":\"p\"}}: only one of name and signerName may be used"),
                format!("{s}[1].clusterTrustBundle.labelSelector: Invalid value: {{\"matchLabels\":{{\"a\":\"b\"}}}}: labelSelector must be unset if name is specified"),
                format!("{s}[2].clusterTrustBundle.signerName: Required value: must be a valid signer name"),
                format!("{s}[2].clusterTrustBundle.signerName: Required value"),
                format!("{s}[2].clusterTrustBundle.path: Required value"),
                format!("{s}[3].clusterTrustBundle.name: Invalid value: \"Bad_Name\": not a valid clustertrustbundlename: {subdomain}"),
                format!("{s}[3].clusterTrustBundle.path: Required value"),
                "spec.volumes[0].projected: Invalid value: \"\": conflicting duplicate paths".to_string(),
                format!("{s}[4].clusterTrustBundle: Required value: either name or signerName must be specified"),
                format!("{s}[4].clusterTrustBundle.path: Invalid value: \"../r\": must not contain '..'"),
            ]
        );
    }

    #[test]
    fn image_volume() {
        let vols = json!([
            {"name": "a", "image": {}},
            {"name": "b", "image": {"reference": "x", "pullPolicy": "Sometimes"}},
        ]);
        let policy = "spec.volumes[1].image.pullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\"";
        assert_eq!(
            errors(vols.clone(), true),
            vec![
                "spec.volumes[0].image.reference: Required value".to_string(),
                policy.to_string()
            ]
        );
        // A template may leave the reference to be filled in.
        assert_eq!(errors(vols, false), vec![policy.to_string()]);
    }

    #[test]
    fn split_host_port_like_go() {
        for ok in ["a:1", "[::1]:80", ":80", "a:"] {
            assert!(split_host_port_ok(ok), "{ok}");
        }
        for bad in ["a", "a:b:c", "[::1]", "[::1]x:1", "a]:1", "[a:1"] {
            assert!(!split_host_port_ok(bad), "{bad}");
        }
    }

    #[test]
    fn iscsi_names() {
        assert!(!iscsi_name_malformed("iqn.2015-02.example.com:test"));
        assert!(iscsi_name_malformed("iqn.2015-02.example.com"));
        assert!(!iscsi_name_malformed("eui.02004567A425678D"));
        assert!(iscsi_name_malformed("eui.0200"));
        assert!(!iscsi_name_malformed(
            "naa.62004567BA64678D0123456789ABCDEF"
        ));
    }
}
