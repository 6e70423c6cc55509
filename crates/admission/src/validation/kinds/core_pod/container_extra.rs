//! The container rules beyond names, ports, env and probes (kube's
//! `ValidateEnvFrom`, `validateLifecycle`, `ValidateVolumeDevices`,
//! `ValidateContainerResourceRequirements`, `validateResizePolicy`) and the
//! ephemeral containers (`validateEphemeralContainers`).

use keelson_apimachinery::names::{is_dns1123_subdomain, is_qualified_name};
use keelson_apimachinery::{FieldError, FieldErrorKind};
use keelson_cel::library::quantity::Quantity;
use serde_json::{Map, Value};

use super::super::util::{duplicate, int_of, invalid_all, list_of, obj_of, str_of};
use super::super::Path;

/// What the container rules need from the pod spec around them.
pub(crate) struct SpecCtx<'a> {
    /// `terminationGracePeriodSeconds` (the bound of a `sleep` action).
    pub grace: Option<i64>,
    /// The pod's `restartPolicy`.
    pub restart_policy: &'a str,
    /// The pod's `volumes` (a block device needs a claim or an ephemeral volume).
    pub volumes: &'a [Value],
    /// The pod's `hostUsers` and the server's `--allow-privileged`.
    pub sec: super::security::ContainerCtx,
    /// The non-empty names of the pod's `resourceClaims`, sorted (kube's
    /// `gatherPodResourceClaimNames`).
    pub claims: Vec<String>,
}

impl<'a> SpecCtx<'a> {
    /// The context of `spec` on a server allowing privileged containers
    /// or not.
    pub(crate) fn of(spec: &'a Value, allow_privileged: bool) -> SpecCtx<'a> {
        SpecCtx {
            sec: super::security::ContainerCtx::of(spec, allow_privileged),
            grace: int_of(spec, "terminationGracePeriodSeconds"),
            restart_policy: str_of(spec, "restartPolicy"),
            volumes: list_of(spec, "volumes"),
            claims: super::resource_claims::pod_claim_names(spec),
        }
    }
}

/// Whether `obj[key]` is set (present and not `null`).
fn set(obj: &Value, key: &str) -> bool {
    obj.get(key).is_some_and(|v| !v.is_null())
}

/// kube's `NotFound` error.
fn not_found(path: &Path, value: &str, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::NotFound,
        field: path.as_str().to_string(),
        value: Some(Value::String(value.to_string())),
        detail: detail.to_string(),
    }
}

/// An error whose value is a `core.ResourceName`. apimachinery 1.34's
/// `ErrorBody` prints a named string type through `json.Marshal`, quoted
/// like a plain string (`Invalid value: "gpu": ...`); the unquoted
/// `String()` form was 1.33's.
fn bare(kind: FieldErrorKind, path: &Path, name: &str, detail: &str) -> FieldError {
    FieldError {
        kind,
        field: path.as_str().to_string(),
        value: Some(Value::String(name.to_string())),
        detail: detail.to_string(),
    }
}

/// `Unsupported value` of a `core.ResourceName` (quoted, see [`bare`]).
fn bare_not_supported(path: &Path, name: &str, supported: &[&str]) -> FieldError {
    FieldError::not_supported(path.as_str(), name, supported)
}

/// kube's `NameIsDNSSubdomain(name, prefix=true)`: a trailing `-` is allowed.
fn subdomain_prefix_errors(name: &str) -> Vec<String> {
    is_dns1123_subdomain(&crate::validation::objectmeta::mask_trailing_dash(name))
}

/// kube's `ValidateEnvFrom` (relaxed variable names, as 1.34 has them).
pub(super) fn env_from(list: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, ev) in list.iter().enumerate() {
        let ip = path.index(i);
        let prefix = str_of(ev, "prefix");
        if !prefix.is_empty() && !prefix.bytes().all(|b| (32..=126).contains(&b) && b != b'=') {
            errs.push(FieldError::invalid(
                ip.child("prefix").as_str(),
                prefix,
                super::container::ENV_NAME,
            ));
        }
        let mut n = 0;
        for key in ["configMapRef", "secretRef"] {
            let Some(src) = ev.get(key).filter(|v| v.is_object()) else {
                continue;
            };
            n += 1;
            let np = ip.child(key).child("name");
            let name = str_of(src, "name");
            if name.is_empty() {
                errs.push(FieldError::required(np.as_str(), ""));
            } else {
                errs.extend(invalid_all(subdomain_prefix_errors(name), &np, name));
            }
        }
        if n == 0 {
            errs.push(FieldError::invalid(
                path.as_str(),
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if n > 1 {
            errs.push(FieldError::invalid(
                path.as_str(),
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

/// The per-mount half of kube's mount/device overlap rules (inside
/// `ValidateVolumeMounts`): `m` against the container's `volumeDevices`.
pub(super) fn mount_device_conflicts(m: &Value, c: &Value, ip: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let devices = list_of(c, "volumeDevices");
    let name = str_of(m, "name");
    if devices.iter().any(|d| str_of(d, "name") == name) {
        errs.push(FieldError::invalid(
            ip.child("name").as_str(),
            name,
            "must not already exist in volumeDevices",
        ));
    }
    let mp = str_of(m, "mountPath");
    if devices.iter().any(|d| str_of(d, "devicePath") == mp) {
        errs.push(FieldError::invalid(
            ip.child("mountPath").as_str(),
            mp,
            "must not already exist as a path in volumeDevices",
        ));
    }
    errs
}

/// kube's `validateLocalDescendingPath`: relative, without a `..` element.
pub(super) fn local_descending_path(p: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if p.starts_with('/') {
        errs.push(FieldError::invalid(
            path.as_str(),
            p,
            "must be a relative path",
        ));
    }
    if p.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(
            path.as_str(),
            p,
            "must not contain '..'",
        ));
    }
    errs
}

/// The rest of kube's `ValidateVolumeMounts` for mount `m` (at `ip`) of
/// container `c`: `subPath`/`subPathExpr` (exclusive, local descending
/// paths), `validateMountPropagation` and `validateMountRecursiveReadOnly`.
/// kube reports the path, propagation and read-only errors at the
/// `volumeMounts` list's path (`mounts`), not the mount's.
pub(super) fn mount_paths_and_propagation(
    m: &Value,
    c: &Value,
    mounts: &Path,
    ip: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sub = str_of(m, "subPath");
    if !sub.is_empty() {
        errs.extend(local_descending_path(sub, &mounts.child("subPath")));
    }
    let expr = str_of(m, "subPathExpr");
    if !expr.is_empty() {
        if !sub.is_empty() {
            errs.push(FieldError::invalid(
                ip.child("subPathExpr").as_str(),
                expr,
                "subPathExpr and subPath are mutually exclusive",
            ));
        }
        errs.extend(local_descending_path(expr, &mounts.child("subPathExpr")));
    }
    let propagation = m
        .get("mountPropagation")
        .filter(|v| !v.is_null())
        .map(|v| v.as_str().unwrap_or(""));
    if let Some(mode) = propagation {
        let pp = mounts.child("mountPropagation");
        if !["Bidirectional", "HostToContainer", "None"].contains(&mode) {
            errs.push(FieldError::not_supported(
                pp.as_str(),
                mode,
                &["Bidirectional", "HostToContainer", "None"],
            ));
        }
        let privileged = c
            .get("securityContext")
            .and_then(|sc| sc.get("privileged"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if mode == "Bidirectional" && !privileged {
            errs.push(FieldError::forbidden(
                pp.as_str(),
                "Bidirectional mount propagation is available only to privileged containers",
            ));
        }
    }
    if let Some(rro) = m.get("recursiveReadOnly").filter(|v| !v.is_null()) {
        let rp = mounts.child("recursiveReadOnly");
        match rro.as_str().unwrap_or("") {
            "Disabled" => {}
            "Enabled" | "IfPossible" => {
                if !m.get("readOnly").and_then(Value::as_bool).unwrap_or(false) {
                    errs.push(FieldError::forbidden(
                        rp.as_str(),
                        "may only be specified when readOnly is true",
                    ));
                }
                if propagation.is_some_and(|p| p != "None") {
                    errs.push(FieldError::forbidden(
                        rp.as_str(),
                        "may only be specified when mountPropagation is None or not specified",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                rp.as_str(),
                other,
                &["Disabled", "Enabled", "IfPossible"],
            )),
        }
    }
    errs
}

/// kube's `ValidateVolumeDevices` of container `c` (`vols`: the valid
/// volume names).
pub(super) fn volume_devices(
    c: &Value,
    vols: &[String],
    ctx: &SpecCtx<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mounts = list_of(c, "volumeMounts");
    let mut paths: Vec<&str> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, dev) in list_of(c, "volumeDevices").iter().enumerate() {
        let ip = path.index(i);
        let (np, dp) = (ip.child("name"), ip.child("devicePath"));
        let name = str_of(dev, "name");
        let dev_path = str_of(dev, "devicePath");
        let matched = vols.iter().any(|v| v == name);
        let is_claim = ctx
            .volumes
            .iter()
            .find(|v| str_of(v, "name") == name)
            .is_some_and(|v| set(v, "persistentVolumeClaim") || set(v, "ephemeral"));
        if name.is_empty() {
            errs.push(FieldError::required(np.as_str(), ""));
        }
        if names.contains(&name) {
            errs.push(FieldError::invalid(np.as_str(), name, "must be unique"));
        }
        if matched && !is_claim {
            errs.push(FieldError::invalid(
                np.as_str(),
                name,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            ));
        }
        if !matched {
            errs.push(not_found(&np, name, ""));
        }
        if dev_path.is_empty() {
            errs.push(FieldError::required(dp.as_str(), ""));
        }
        if paths.contains(&dev_path) {
            errs.push(FieldError::invalid(dp.as_str(), dev_path, "must be unique"));
        }
        if !dev_path.is_empty() && dev_path.split('/').any(|p| p == "..") {
            errs.push(FieldError::invalid(
                dp.as_str(),
                dev_path,
                "can not contain backsteps ('..')",
            ));
        } else {
            paths.push(dev_path);
        }
        if mounts.iter().any(|m| str_of(m, "name") == name) {
            errs.push(FieldError::invalid(
                np.as_str(),
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.iter().any(|m| str_of(m, "mountPath") == dev_path) {
            errs.push(FieldError::invalid(
                dp.as_str(),
                dev_path,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            names.push(name);
        }
    }
    errs
}

/// kube's `validateLifecycle` of container `c` (called where kube calls it:
/// regular containers and sidecars).
pub(super) fn lifecycle(c: &Value, ctx: &SpecCtx<'_>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(lc) = c.get("lifecycle").filter(|v| v.is_object()) else {
        return errs;
    };
    let lp = path.child("lifecycle");
    for hook in ["postStart", "preStop"] {
        if let Some(h) = lc.get(hook).filter(|v| v.is_object()) {
            errs.extend(lifecycle_handler(h, ctx, &lp.child(hook)));
        }
    }
    errs
}

/// kube's `validateHandler` of a `LifecycleHandler` (exec, httpGet,
/// tcpSocket, sleep: one of them).
fn lifecycle_handler(h: &Value, ctx: &SpecCtx<'_>, p: &Path) -> Vec<FieldError> {
    one_handler(h, p, "sleep", |v, hp| {
        let secs = int_of(v, "seconds").unwrap_or(0);
        match ctx.grace {
            Some(grace) if secs < 0 || secs > grace => vec![FieldError::invalid(
                hp.as_str(),
                secs,
                &format!(
                    "must be non-negative and less than terminationGracePeriodSeconds ({grace})"
                ),
            )],
            _ => Vec::new(),
        }
    })
}

/// kube's handler rule shared by probes and lifecycle hooks: exactly one
/// of `exec`, `httpGet`, `tcpSocket` and `last` (`grpc` for probes,
/// `sleep` for hooks, checked by `check_last`).
pub(super) fn one_handler(
    h: &Value,
    p: &Path,
    last: &str,
    check_last: impl Fn(&Value, &Path) -> Vec<FieldError>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut n = 0;
    for key in ["exec", "httpGet", "tcpSocket", last] {
        let Some(v) = h.get(key).filter(|v| v.is_object()) else {
            continue;
        };
        let hp = p.child(key);
        if n > 0 {
            errs.push(FieldError::forbidden(
                hp.as_str(),
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        n += 1;
        match key {
            "exec" => {
                if list_of(v, "command").is_empty() {
                    errs.push(FieldError::required(hp.child("command").as_str(), ""));
                }
            }
            "httpGet" => errs.extend(http_get(v, &hp)),
            "tcpSocket" => errs.extend(super::super::util::port_num_or_name(
                v.get("port"),
                &hp.child("port"),
            )),
            _ => errs.extend(check_last(v, &hp)),
        }
    }
    if n == 0 {
        errs.push(FieldError::required(
            p.as_str(),
            "must specify a handler type",
        ));
    }
    errs
}

/// kube's `validateHTTPGetAction`.
fn http_get(v: &Value, hp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(v, "path").is_empty() {
        errs.push(FieldError::required(hp.child("path").as_str(), ""));
    }
    errs.extend(super::super::util::port_num_or_name(
        v.get("port"),
        &hp.child("port"),
    ));
    let scheme = str_of(v, "scheme");
    if scheme != "HTTP" && scheme != "HTTPS" {
        errs.push(FieldError::not_supported(
            hp.child("scheme").as_str(),
            scheme,
            &["HTTP", "HTTPS"],
        ));
    }
    for hdr in list_of(v, "httpHeaders") {
        let name = str_of(hdr, "name");
        let ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !ok {
            errs.push(FieldError::invalid(
                hp.child("httpHeaders").as_str(),
                name,
                &super::super::util::regex_error(
                    "a valid HTTP header must consist of alphanumeric characters or '-'",
                    "[-A-Za-z0-9]+",
                    &["X-Header-Name"],
                ),
            ));
        }
    }
    errs
}

/// kube's `validateResizePolicy` (its errors name the list, not the entry,
/// as kube's do).
pub(super) fn resize_policy(c: &Value, ctx: &SpecCtx<'_>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, p) in list_of(c, "resizePolicy").iter().enumerate() {
        let name = str_of(p, "resourceName");
        if seen.contains(&name) {
            errs.push(bare(FieldErrorKind::Duplicate, &path.index(i), name, ""));
        }
        seen.push(name);
        match name {
            "cpu" | "memory" => {}
            "" => errs.push(FieldError::required(path.as_str(), "")),
            other => errs.push(bare_not_supported(path, other, &["cpu", "memory"])),
        }
        let policy = str_of(p, "restartPolicy");
        match policy {
            "NotRequired" | "RestartContainer" => {}
            "" => errs.push(FieldError::required(path.as_str(), "")),
            other => errs.push(FieldError::not_supported(
                path.as_str(),
                other,
                &["NotRequired", "RestartContainer"],
            )),
        }
        if ctx.restart_policy == "Never" && policy != "NotRequired" {
            errs.push(FieldError::invalid(
                path.as_str(),
                policy,
                "must be 'NotRequired' when `restartPolicy` is 'Never'",
            ));
        }
    }
    errs
}

/// Which resource names a requirements block accepts.
#[derive(Clone, Copy)]
pub(crate) enum Names {
    /// kube's `validateContainerResourceName` (containers, overhead).
    Container,
    /// kube's `validatePodResourceName` (pod-level `resources`).
    Pod,
}

fn is_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// `helper.IsNativeResource`.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `helper.IsOvercommitAllowed`.
fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_huge_pages(name)
}

/// kube's `validateResourceName`.
fn resource_name(name: &str, path: &Path) -> Vec<FieldError> {
    let errs: Vec<FieldError> = is_qualified_name(name)
        .iter()
        .map(|m| bare(FieldErrorKind::Invalid, path, name, m))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    let standard = super::super::util::STANDARD_RESOURCES.contains(&name)
        || is_huge_pages(name)
        || name.starts_with("requests.hugepages-");
    if !name.contains('/') && !standard {
        return vec![bare(
            FieldErrorKind::Invalid,
            path,
            name,
            "must be a standard resource type or fully qualified",
        )];
    }
    errs
}

/// kube's resource name rules for `names`.
fn check_name(names: Names, name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = resource_name(name, path);
    match names {
        Names::Container => {
            if !name.contains('/') {
                let ok =
                    matches!(name, "cpu" | "memory" | "ephemeral-storage") || is_huge_pages(name);
                if !ok {
                    errs.push(bare(
                        FieldErrorKind::Invalid,
                        path,
                        name,
                        "must be a standard resource for containers",
                    ));
                }
            } else if !is_native(name) && !is_extended(name) {
                errs.push(bare(
                    FieldErrorKind::Invalid,
                    path,
                    name,
                    "doesn't follow extended resource name standard",
                ));
            }
        }
        Names::Pod => {
            if errs.is_empty() && !matches!(name, "cpu" | "memory") && !is_huge_pages(name) {
                errs.push(bare_not_supported(
                    path,
                    name,
                    &["cpu", "hugepages-", "memory"],
                ));
            }
        }
    }
    errs
}

/// A quantity's text as kube's `Quantity.String()` writes it.
pub(crate) fn canonical(v: &Value) -> String {
    let raw = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match Quantity::parse(&raw).and_then(|q| q.nanos().map(|n| (n, q.format()))) {
        Some((n, f)) => Quantity::canonical(n, f),
        None => raw,
    }
}

/// `v` parsed as a quantity.
pub(super) fn quantity(v: &Value) -> Option<Quantity> {
    match v {
        Value::String(s) => Quantity::parse(s),
        other => Quantity::parse(&other.to_string()),
    }
}

/// kube's `validateResourceQuantityHugePageValue`: a hugepage quantity is a
/// whole number of pages.
fn huge_page_value(name: &str, v: &Value, path: &Path) -> Option<FieldError> {
    let page = Quantity::parse(name.trim_start_matches("hugepages-"))
        .and_then(|q| q.nanos())
        .map(|n| (n + 999_999_999).div_euclid(1_000_000_000));
    let value = quantity(v)
        .and_then(|q| q.nanos())
        .map(|n| (n + 999_999_999).div_euclid(1_000_000_000));
    let divisible = match (page, value) {
        (Some(p), Some(v)) if p > 0 => v % p == 0,
        _ => false,
    };
    (!divisible).then(|| {
        let q = canonical(v);
        FieldError::invalid(
            path.as_str(),
            q.as_str(),
            &format!("{q} is not positive integer multiple of {name}"),
        )
    })
}

/// A resource list's entries in name order.
pub(super) fn sorted(m: Option<&Map<String, Value>>) -> Vec<(&String, &Value)> {
    let mut v: Vec<(&String, &Value)> = m.into_iter().flatten().collect();
    v.sort_by(|a, b| a.0.cmp(b.0));
    v
}

/// kube's `integerResources` (`helper.IsIntegerResourceName`, with the
/// extended resources).
const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// `helper.IsExtendedResourceName`: outside `kubernetes.io/`, not
/// `requests.`-prefixed, and a qualified name once `requests.` is prepended.
pub(crate) fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// kube's `ValidateResourceQuantityValue` of `v` for resource `name` at
/// `path`: not negative, and a whole number for integer resources
/// (`MilliValue() % 1000 == 0`). The integer error's value is the
/// `resource.Quantity` itself, which 1.34 prints as its JSON: the
/// canonical string, quoted.
pub(crate) fn quantity_value(name: &str, v: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let q = quantity(v);
    if q.as_ref().is_some_and(|q| q.is_negative()) {
        errs.push(FieldError::invalid(
            path.as_str(),
            canonical(v).as_str(),
            "must be greater than or equal to 0",
        ));
    }
    if INTEGER_RESOURCES.contains(&name) || is_extended(name) {
        // `MilliValue()` rounds up to a whole milli-unit.
        let milli = q
            .and_then(|q| q.nanos())
            .map(|n| -(-n).div_euclid(1_000_000));
        if milli.is_some_and(|m| m % 1000 != 0) {
            errs.push(FieldError::invalid(
                path.as_str(),
                canonical(v).as_str(),
                "must be an integer",
            ));
        }
    }
    errs
}

/// kube's `validateResourceRequirements` of `r` at `path` (each map in
/// resource-name order; kube walks Go maps in random order), with
/// `validateResourceClaimNames` of its `claims` against `pod_claims`.
pub(crate) fn resources(
    r: &Value,
    names: Names,
    pod_claims: &[String],
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (lp, rp) = (path.child("limits"), path.child("requests"));
    let limits = obj_of(r, "limits");
    let (mut cpu_mem, mut huge) = (false, false);
    for (k, v) in sorted(limits) {
        let kp = lp.key(k);
        errs.extend(check_name(names, k, &kp));
        errs.extend(quantity_value(k, v, &kp));
        if is_huge_pages(k) {
            huge = true;
            errs.extend(huge_page_value(k, v, &kp));
        }
        cpu_mem |= k == "cpu" || k == "memory";
    }
    for (k, v) in sorted(obj_of(r, "requests")) {
        let kp = rp.key(k);
        errs.extend(check_name(names, k, &kp));
        let q = canonical(v);
        errs.extend(quantity_value(k, v, &kp));
        match limits.and_then(|l| l.get(k)) {
            Some(l) => {
                let order = quantity(v).zip(quantity(l)).map(|(a, b)| a.cmp_to(&b));
                let ls = canonical(l);
                if order.is_some_and(|o| o.is_ne()) && !overcommit_allowed(k) {
                    errs.push(FieldError::invalid(
                        rp.as_str(),
                        q.as_str(),
                        &format!("must be equal to {k} limit of {ls}"),
                    ));
                } else if order.is_some_and(|o| o.is_gt()) {
                    errs.push(FieldError::invalid(
                        rp.as_str(),
                        q.as_str(),
                        &format!("must be less than or equal to {k} limit of {ls}"),
                    ));
                }
            }
            None if !overcommit_allowed(k) => errs.push(FieldError::required(
                lp.as_str(),
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
        if is_huge_pages(k) {
            huge = true;
            errs.extend(huge_page_value(k, v, &kp));
        }
        cpu_mem |= k == "cpu" || k == "memory";
    }
    if !cpu_mem && huge {
        errs.push(FieldError::forbidden(
            path.as_str(),
            "HugePages require cpu or memory",
        ));
    }
    errs.extend(super::resource_claims::claim_refs(
        list_of(r, "claims"),
        pod_claims,
        &path.child("claims"),
    ));
    errs
}

/// The container fields an ephemeral container may not set, in the
/// internal `Container` struct's order (kube's
/// `allowedEphemeralContainerFields`).
const EPHEMERAL_FORBIDDEN: &[&str] = &[
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// Whether a JSON value is a Go zero value (`null`, `{}`, `[]`, `""`).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.values().all(is_zero),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// kube's `validateEphemeralContainers`: the common container rules, the
/// pod-only image rule, names unique across all containers, an existing
/// `targetContainerName`, and the fields an ephemeral container may not set.
pub(super) fn ephemeral_containers(
    spec: &Value,
    vols: &[String],
    ctx: &SpecCtx<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ecs = list_of(spec, "ephemeralContainers");
    if ecs.is_empty() {
        return errs;
    }
    let others: Vec<&str> = list_of(spec, "containers")
        .iter()
        .chain(list_of(spec, "initContainers"))
        .map(|c| str_of(c, "name"))
        .collect();
    let mut all = others.clone();
    for (i, ec) in ecs.iter().enumerate() {
        let ip = path.index(i);
        errs.extend(super::container::container_common(ec, vols, ctx, &ip));
        let image = str_of(ec, "image");
        if image.len() != image.trim().len() {
            errs.push(FieldError::invalid(
                ip.child("image").as_str(),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
        let name = str_of(ec, "name");
        if all.contains(&name) {
            errs.push(duplicate(&ip.child("name"), name));
        } else {
            all.push(name);
        }
        let target = str_of(ec, "targetContainerName");
        if !target.is_empty() && !others.contains(&target) {
            errs.push(not_found(&ip.child("targetContainerName"), target, ""));
        }
        for key in EPHEMERAL_FORBIDDEN {
            if ec.get(*key).is_some_and(|v| !is_zero(v)) {
                errs.push(FieldError::forbidden(
                    ip.child(key).as_str(),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        for (j, m) in list_of(ec, "volumeMounts").iter().enumerate() {
            for key in ["subPath", "subPathExpr"] {
                if !str_of(m, key).is_empty() {
                    errs.push(FieldError::forbidden(
                        ip.child("volumeMounts").index(j).child(key).as_str(),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
    errs
}
