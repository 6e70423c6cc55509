//! Windows and OS rules: `validateWindowsSecurityContextOptions`,
//! `validateWindowsHostProcessPod` and `validateOS` with the fields
//! `validateLinux`/`validateWindows` forbid once `spec.os.name` is set.

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::super::super::util::{bool_of, str_of};
use super::super::super::Path;
use super::{each_container, set};

/// kube's `maxGMSACredentialSpecLengthInKiB`.
const MAX_GMSA_KIB: usize = 64;
/// kube's `maxRunAsUserNameDomainLength` and `maxRunAsUserNameUserLength`.
const MAX_DOMAIN: usize = 256;
const MAX_USER: usize = 104;

/// kube's `validateWindowsSecurityContextOptions` of optional options at
/// `path`.
pub(super) fn options(wo: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(wo) = wo.filter(|v| v.is_object()) else {
        return errs;
    };
    if set(wo, "gmsaCredentialSpecName") {
        let name = str_of(wo, "gmsaCredentialSpecName");
        for m in keelson_apimachinery::names::is_dns1123_subdomain(name) {
            errs.push(FieldError::invalid(
                path.child("gmsaCredentialSpecName").as_str(),
                name,
                &m,
            ));
        }
    }
    if set(wo, "gmsaCredentialSpec") {
        let spec = str_of(wo, "gmsaCredentialSpec");
        let p = path.child("gmsaCredentialSpec");
        if spec.is_empty() {
            errs.push(FieldError::invalid(
                p.as_str(),
                spec,
                "gmsaCredentialSpec cannot be an empty string",
            ));
        } else if spec.len() > MAX_GMSA_KIB * 1024 {
            errs.push(FieldError::invalid(
                p.as_str(),
                spec,
                &format!("gmsaCredentialSpec size must be under {MAX_GMSA_KIB} KiB"),
            ));
        }
    }
    if set(wo, "runAsUserName") {
        let name = str_of(wo, "runAsUserName");
        let p = path.child("runAsUserName");
        for m in run_as_user_name(name) {
            errs.push(FieldError::invalid(p.as_str(), name, &m));
        }
    }
    errs
}

/// The messages of kube's `runAsUserName` rules, in its order.
fn run_as_user_name(name: &str) -> Vec<String> {
    if name.is_empty() {
        return vec!["runAsUserName cannot be an empty string".into()];
    }
    if name.chars().any(|c| c.is_ascii_control()) {
        return vec!["runAsUserName cannot contain control characters".into()];
    }
    let parts: Vec<&str> = name.split('\\').collect();
    if parts.len() > 2 {
        return vec!["runAsUserName cannot contain more than one backslash".into()];
    }
    let (domain, user) = match parts.as_slice() {
        [d, u] => (Some(*d), *u),
        _ => (None, name),
    };
    let mut msgs = Vec::new();
    if domain.is_some_and(|d| d.len() >= MAX_DOMAIN) {
        msgs.push(format!(
            "runAsUserName's Domain length must be under {MAX_DOMAIN} characters"
        ));
    }
    if let Some(d) = domain {
        if !netbios_domain(d) && !dns_domain(d) {
            msgs.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format".into());
        }
    }
    if user.is_empty() {
        msgs.push("runAsUserName's User cannot be empty".into());
    } else if user.len() > MAX_USER {
        msgs.push(format!(
            "runAsUserName's User length must not be longer than {MAX_USER} characters"
        ));
    }
    if !user.is_empty() && user.chars().all(|c| c == '.' || c == ' ') {
        msgs.push("runAsUserName's User cannot contain only periods or spaces".into());
    }
    if user.chars().any(|c| "\"/\\:;|=,+*?<>@[]".contains(c)) {
        msgs.push(
            "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]"
                .into(),
        );
    }
    msgs
}

/// kube's `validNetBiosRegex`: 1 to 15 characters, none of `\/:*?"<>|`,
/// not starting with a dot.
fn netbios_domain(d: &str) -> bool {
    const BAD: &str = "\\/:*?\"<>|";
    let n = d.chars().count();
    (1..=15).contains(&n) && !d.starts_with('.') && !d.chars().any(|c| BAD.contains(c))
}

/// kube's `validWindowsUserDomainDNSRegex`: dot-separated labels of
/// ASCII letters, digits and inner dashes, each at most 63 long.
fn dns_domain(d: &str) -> bool {
    d.split('.').all(|l| {
        let b = l.as_bytes();
        (1..=63).contains(&b.len())
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    })
}

/// The `hostProcess` of a security context's Windows options, when set.
fn host_process(sc: Option<&Value>) -> Option<bool> {
    sc?.get("windowsOptions")?.get("hostProcess")?.as_bool()
}

/// kube's `validateWindowsHostProcessPod` of `spec` at `path`.
pub(in super::super) fn windows_host_process_pod(
    spec: &Value,
    path: &Path,
    allow_privileged: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let pod_hp = host_process(spec.get("securityContext"));
    let (mut count, mut hp_count) = (0, 0);
    for (cp, c) in each_container(spec, path) {
        count += 1;
        let c_hp = host_process(c.get("securityContext"));
        if let (Some(p), Some(c)) = (pod_hp, c_hp) {
            if p != c {
                errs.push(FieldError::invalid(
                    cp.child("securityContext")
                        .child("windowsOptions")
                        .child("hostProcess")
                        .as_str(),
                    c,
                    &format!(
                        "pod hostProcess value must be identical if both are specified, was {p}"
                    ),
                ));
            }
        }
        if c_hp.or(pod_hp) == Some(true) {
            hp_count += 1;
        }
    }
    if hp_count == 0 {
        return errs;
    }
    if hp_count != count {
        errs.push(FieldError::invalid(
            path.as_str(),
            "",
            "If pod contains any hostProcess containers then all containers must be HostProcess containers",
        ));
    }
    if !bool_of(spec, "hostNetwork") {
        errs.push(FieldError::invalid(
            path.child("hostNetwork").as_str(),
            false,
            "hostNetwork must be true if pod contains any hostProcess containers",
        ));
    }
    if !allow_privileged {
        errs.push(FieldError::forbidden(
            path.as_str(),
            "hostProcess containers are disallowed by cluster policy",
        ));
    }
    errs
}

/// The last block of kube's `ValidatePodSpec`: with `spec.os` set,
/// `validateOS`, then the fields a Linux or Windows pod may not set.
pub(in super::super) fn validate_os(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(os) = spec.get("os").filter(|v| v.is_object()) else {
        return errs;
    };
    let op = path.child("os");
    match str_of(os, "name") {
        "" => errs.push(FieldError::required(
            op.child("name").as_str(),
            "cannot be empty",
        )),
        "linux" => errs.extend(linux(spec, path)),
        "windows" => errs.extend(windows(spec, path)),
        other => errs.push(FieldError::not_supported(
            op.as_str(),
            other,
            &["linux", "windows"],
        )),
    }
    errs
}

/// kube's `validateLinux`: no Windows options anywhere.
fn linux(spec: &Value, path: &Path) -> Vec<FieldError> {
    const MSG: &str = "windows options cannot be set for a linux pod";
    let mut errs = Vec::new();
    let sc = spec.get("securityContext").unwrap_or(&Value::Null);
    if set(sc, "windowsOptions") {
        errs.push(FieldError::forbidden(
            path.child("securityContext")
                .child("windowsOptions")
                .as_str(),
            MSG,
        ));
    }
    for (cp, c) in each_container(spec, path) {
        let sc = c.get("securityContext").unwrap_or(&Value::Null);
        if set(sc, "windowsOptions") {
            errs.push(FieldError::forbidden(
                cp.child("securityContext").child("windowsOptions").as_str(),
                MSG,
            ));
        }
    }
    errs
}

/// The pod security context fields kube's `validateWindows` forbids, in
/// its order: (field, whether it sits on the spec rather than in the
/// security context).
const WINDOWS_POD: &[(&str, bool)] = &[
    ("appArmorProfile", false),
    ("seLinuxOptions", false),
    ("hostUsers", true),
    ("hostPID", true),
    ("hostIPC", true),
    ("seccompProfile", false),
    ("fsGroup", false),
    ("fsGroupChangePolicy", false),
    ("sysctls", false),
    ("shareProcessNamespace", true),
    ("runAsUser", false),
    ("runAsGroup", false),
    ("supplementalGroups", false),
    ("supplementalGroupsPolicy", false),
    ("seLinuxChangePolicy", false),
];

/// The container security context fields `validateWindows` forbids.
const WINDOWS_CONTAINER: &[&str] = &[
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
];

/// kube's `validateWindows`: the Linux-only fields of the pod and its
/// containers.
fn windows(spec: &Value, path: &Path) -> Vec<FieldError> {
    const MSG: &str = "cannot be set for a windows pod";
    let mut errs = Vec::new();
    let sc = spec.get("securityContext").unwrap_or(&Value::Null);
    let scp = path.child("securityContext");
    for (key, on_spec) in WINDOWS_POD {
        let present = match *key {
            "hostPID" | "hostIPC" => bool_of(spec, key),
            "sysctls" => sc
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty()),
            _ if *on_spec => set(spec, key),
            _ => set(sc, key),
        };
        if present {
            let p = if *on_spec {
                path.child(key)
            } else {
                scp.child(key)
            };
            errs.push(FieldError::forbidden(p.as_str(), MSG));
        }
    }
    for (cp, c) in each_container(spec, path) {
        let sc = c.get("securityContext").unwrap_or(&Value::Null);
        let p = cp.child("securityContext");
        for key in WINDOWS_CONTAINER {
            if set(sc, key) {
                errs.push(FieldError::forbidden(p.child(key).as_str(), MSG));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::run_as_user_name;

    #[test]
    fn run_as_user_names() {
        assert!(run_as_user_name("NT AUTHORITY\\NETWORK SERVICE").is_empty());
        assert!(run_as_user_name("ContainerUser").is_empty());
        assert!(run_as_user_name("example.com\\user").is_empty());
        assert_eq!(
            run_as_user_name("a\\b\\c"),
            ["runAsUserName cannot contain more than one backslash"]
        );
        assert_eq!(
            run_as_user_name("dom\\..."),
            ["runAsUserName's User cannot contain only periods or spaces"]
        );
        assert_eq!(
            run_as_user_name(".bad:\\u"),
            ["runAsUserName's Domain doesn't match the NetBios nor the DNS format"]
        );
    }
}
