//! Pod and container security rules of kube 1.34's `ValidatePodSpec`:
//! `validatePodSpecSecurityContext` (ids, sysctls, policies, profiles),
//! `ValidateSecurityContext` (the last rule of `validateContainerCommon`),
//! `validatePodHostNetworkDeps` and `validateHostUsers`. The profiles,
//! Windows and OS rules live in the submodules.
//!
//! kube validates the internal pod spec, which keeps `hostNetwork`,
//! `hostPID`, `hostIPC`, `shareProcessNamespace` and `hostUsers` in the
//! pod's security context; here they are read where `v1` has them, on the
//! spec.

mod profiles;
mod windows;

pub(super) use profiles::pod_create_annotations;
pub(super) use windows::{validate_os, windows_host_process_pod};

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::super::util::{bool_of, duplicate, list_of, str_of};
use super::super::Path;

/// kube's `InclusiveRangeError(0, math.MaxInt32)` of `IsValidUserID` and
/// `IsValidGroupID`.
const ID_RANGE: &str = "must be between 0 and 2147483647, inclusive";

/// What a container's security context is checked against: the pod's
/// `hostUsers` and the server's `--allow-privileged`.
#[derive(Clone, Copy)]
pub(crate) struct ContainerCtx {
    pub host_users: bool,
    pub allow_privileged: bool,
}

impl ContainerCtx {
    /// The context of the containers of `spec` on a server allowing
    /// privileged containers or not.
    pub(crate) fn of(spec: &Value, allow_privileged: bool) -> ContainerCtx {
        ContainerCtx {
            host_users: spec
                .get("hostUsers")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            allow_privileged,
        }
    }
}

/// Whether `v[key]` is set (present and not `null`): a non-nil Go pointer.
fn set(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// kube's `IsValidUserID`/`IsValidGroupID` of `v[key]`, when set.
fn id_range(v: &Value, key: &str, path: &Path, errs: &mut Vec<FieldError>) {
    if let Some(n) = v.get(key).and_then(Value::as_i64) {
        if !(0..=i64::from(i32::MAX)).contains(&n) {
            errs.push(FieldError::invalid(path.child(key).as_str(), n, ID_RANGE));
        }
    }
}

/// An optional enum `v[key]`: `Unsupported value` when set to a value
/// outside `supported` (kube's sorted list).
fn enum_of(v: &Value, key: &str, path: &Path, supported: &[&str], errs: &mut Vec<FieldError>) {
    if !set(v, key) {
        return;
    }
    let s = str_of(v, key);
    if !supported.contains(&s) {
        errs.push(FieldError::not_supported(
            path.child(key).as_str(),
            s,
            supported,
        ));
    }
}

/// kube's `validatePodSpecSecurityContext` of `spec` (at `path`, the
/// spec); `any_selinux_change_policy`: whether `MountOption` is allowed
/// (the `SELinuxMount` gate, off in 1.34, or a stored pod with a policy).
pub(super) fn pod_security_context(
    spec: &Value,
    path: &Path,
    any_selinux_change_policy: bool,
) -> Vec<FieldError> {
    let empty = Value::Object(Map::new());
    let sc = spec
        .get("securityContext")
        .filter(|v| v.is_object())
        .unwrap_or(&empty);
    let p = path.child("securityContext");
    let mut errs = Vec::new();
    id_range(sc, "fsGroup", &p, &mut errs);
    id_range(sc, "runAsUser", &p, &mut errs);
    id_range(sc, "runAsGroup", &p, &mut errs);
    for (i, g) in list_of(sc, "supplementalGroups").iter().enumerate() {
        if let Some(n) = g
            .as_i64()
            .filter(|n| !(0..=i64::from(i32::MAX)).contains(n))
        {
            errs.push(FieldError::invalid(
                p.child("supplementalGroups").index(i).as_str(),
                n,
                ID_RANGE,
            ));
        }
    }
    if bool_of(spec, "shareProcessNamespace") && bool_of(spec, "hostPID") {
        errs.push(FieldError::invalid(
            p.child("shareProcessNamespace").as_str(),
            true,
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    errs.extend(sysctls(spec, sc, &p.child("sysctls")));
    enum_of(
        sc,
        "fsGroupChangePolicy",
        &p,
        &["Always", "OnRootMismatch"],
        &mut errs,
    );
    errs.extend(profiles::seccomp(
        sc.get("seccompProfile"),
        &p.child("seccompProfile"),
    ));
    errs.extend(windows::options(
        sc.get("windowsOptions"),
        &p.child("windowsOptions"),
    ));
    errs.extend(profiles::apparmor(
        sc.get("appArmorProfile"),
        &p.child("appArmorProfile"),
    ));
    enum_of(
        sc,
        "supplementalGroupsPolicy",
        &p,
        &["Merge", "Strict"],
        &mut errs,
    );
    let selinux: &[&str] = if any_selinux_change_policy {
        &["MountOption", "Recursive"]
    } else {
        &["Recursive"]
    };
    enum_of(sc, "seLinuxChangePolicy", &p, selinux, &mut errs);
    errs
}

/// kube's `SysctlContainSlashFmt` anchored, as its message prints it.
const SYSCTL_REGEX: &str =
    r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";

/// kube's `IsValidSysctlName`: at most 253 characters, segments of
/// lowercase alphanumerics (`-` and `_` inside) joined by `.` or `/`.
fn valid_sysctl_name(name: &str) -> bool {
    name.len() <= 253
        && name.split(['.', '/']).all(|seg| {
            let b = seg.as_bytes();
            let edge = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
            b.first().is_some_and(edge)
                && b.last().is_some_and(edge)
                && b.iter().all(|c| edge(c) || *c == b'-' || *c == b'_')
        })
}

/// The kernel namespace of a sysctl (`component-helpers`' sysctl
/// namespaces after `NormalizeName`): `Some(true)` net, `Some(false)` ipc.
fn sysctl_namespace(name: &str) -> Option<bool> {
    let normalized: String = match name.find(['.', '/']) {
        Some(i) if name.as_bytes()[i] == b'/' => name
            .chars()
            .map(|c| match c {
                '.' => '/',
                '/' => '.',
                c => c,
            })
            .collect(),
        _ => name.to_string(),
    };
    let n = normalized.as_str();
    if n == "kernel.sem"
        || ["kernel.shm", "kernel.msg", "fs.mqueue."]
            .iter()
            .any(|p| n.starts_with(p))
    {
        Some(false)
    } else if n.starts_with("net.") {
        Some(true)
    } else {
        None
    }
}

/// kube's `validateSysctls` with `ValidateHostSysctl` (namespaced sysctls
/// refused in pods sharing the host's network or IPC namespace).
fn sysctls(spec: &Value, sc: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, s) in list_of(sc, "sysctls").iter().enumerate() {
        let np = path.index(i).child("name");
        let name = str_of(s, "name");
        if name.is_empty() {
            errs.push(FieldError::required(np.as_str(), ""));
        } else if !valid_sysctl_name(name) {
            errs.push(FieldError::invalid(
                np.as_str(),
                name,
                &format!("must have at most 253 characters and match regex {SYSCTL_REGEX}"),
            ));
        } else if names.contains(&name) {
            errs.push(duplicate(&np, name));
        }
        match sysctl_namespace(name) {
            Some(true) if bool_of(spec, "hostNetwork") => errs.push(FieldError::invalid(
                np.as_str(),
                name,
                "may not be specified when 'hostNetwork' is true",
            )),
            Some(false) if bool_of(spec, "hostIPC") => errs.push(FieldError::invalid(
                np.as_str(),
                name,
                "may not be specified when 'hostIPC' is true",
            )),
            _ => {}
        }
        names.push(name);
    }
    errs
}

/// kube's `ValidateSecurityContext` of container `c` at `path` (the
/// container).
pub(super) fn container_security_context(
    c: &Value,
    path: &Path,
    ctx: ContainerCtx,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(sc) = c.get("securityContext").filter(|v| v.is_object()) else {
        return errs;
    };
    let p = path.child("securityContext");
    let privileged = sc.get("privileged").and_then(Value::as_bool);
    if privileged == Some(true) && !ctx.allow_privileged {
        errs.push(FieldError::forbidden(
            p.child("privileged").as_str(),
            "disallowed by cluster policy",
        ));
    }
    id_range(sc, "runAsUser", &p, &mut errs);
    id_range(sc, "runAsGroup", &p, &mut errs);
    if set(sc, "procMount") {
        enum_of(sc, "procMount", &p, &["Default", "Unmasked"], &mut errs);
        if ctx.host_users && str_of(sc, "procMount") == "Unmasked" {
            errs.push(FieldError::invalid(
                p.child("procMount").as_str(),
                "Unmasked",
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    errs.extend(profiles::seccomp(
        sc.get("seccompProfile"),
        &p.child("seccompProfile"),
    ));
    if sc.get("allowPrivilegeEscalation").and_then(Value::as_bool) == Some(false) {
        if privileged == Some(true) {
            errs.push(FieldError::invalid(
                p.as_str(),
                profiles::go_security_context(sc),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        let adds = sc
            .get("capabilities")
            .map_or(&[][..], |c| list_of(c, "add"));
        for cap in adds {
            if cap.as_str() == Some("CAP_SYS_ADMIN") {
                errs.push(FieldError::invalid(
                    p.as_str(),
                    profiles::go_security_context(sc),
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                ));
            }
        }
    }
    errs.extend(windows::options(
        sc.get("windowsOptions"),
        &p.child("windowsOptions"),
    ));
    errs.extend(profiles::apparmor(
        sc.get("appArmorProfile"),
        &p.child("appArmorProfile"),
    ));
    errs
}

/// kube's `validatePodHostNetworkDeps`: with `hostNetwork`, each regular
/// container port's `hostPort` equals its `containerPort` (in a pod
/// template an unset `hostPort` is allowed; a Pod has it defaulted).
pub(super) fn host_network_deps(
    spec: &Value,
    path: &Path,
    resource_is_pod: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !bool_of(spec, "hostNetwork") {
        return errs;
    }
    let cp = path.child("containers");
    for (i, c) in list_of(spec, "containers").iter().enumerate() {
        for (j, port) in list_of(c, "ports").iter().enumerate() {
            let hp = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            let cport = port
                .get("containerPort")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if (resource_is_pod || hp != 0) && hp != cport {
                errs.push(FieldError::invalid(
                    cp.index(i)
                        .child("ports")
                        .index(j)
                        .child("hostPort")
                        .as_str(),
                    hp,
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
    errs
}

/// kube's `validateHostUsers`: a pod in its own user namespace
/// (`hostUsers: false`) shares no other namespace with the host (the
/// `HostPID`/`HostIPC` paths are kube's, capitalized).
pub(super) fn host_users(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec.get("hostUsers").and_then(Value::as_bool) != Some(false) {
        return errs;
    }
    for (key, field) in [
        ("hostNetwork", "hostNetwork"),
        ("hostPID", "HostPID"),
        ("hostIPC", "HostIPC"),
    ] {
        if bool_of(spec, key) {
            errs.push(FieldError::forbidden(
                path.child(field).as_str(),
                "when `pod.Spec.HostUsers` is false",
            ));
        }
    }
    errs
}

/// The containers of `spec` as kube's `VisitContainersWithPath` walks
/// them: init containers, regular containers, ephemeral containers.
fn each_container<'a>(spec: &'a Value, path: &'a Path) -> impl Iterator<Item = (Path, &'a Value)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |key| {
            list_of(spec, key)
                .iter()
                .enumerate()
                .map(move |(i, c)| (path.child(key).index(i), c))
        })
}

#[cfg(test)]
mod tests {
    use super::{sysctl_namespace, valid_sysctl_name};

    #[test]
    fn sysctl_names_and_namespaces() {
        assert!(valid_sysctl_name("net.ipv4.ip_forward"));
        assert!(valid_sysctl_name("net/ipv4/conf/eno2.100/rp_filter"));
        assert!(!valid_sysctl_name("net..ipv4"));
        assert!(!valid_sysctl_name("Net.ipv4"));
        assert!(!valid_sysctl_name("net.ipv4-"));
        assert_eq!(sysctl_namespace("net.core.somaxconn"), Some(true));
        assert_eq!(
            sysctl_namespace("net/ipv4/conf/eno2.100/rp_filter"),
            Some(true)
        );
        assert_eq!(sysctl_namespace("kernel.shm_rmid_forced"), Some(false));
        assert_eq!(sysctl_namespace("kernel.sem"), Some(false));
        assert_eq!(sysctl_namespace("fs.mqueue.msg_max"), Some(false));
        assert_eq!(sysctl_namespace("kernel.domainname"), None);
        assert_eq!(sysctl_namespace("vm.max_map_count"), None);
    }
}
