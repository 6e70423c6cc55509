//! Containers and init containers (`validateContainers`,
//! `validateInitContainers`, `validateContainerCommon`, ports, env,
//! volume mounts, resources, probes).

use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::Value;

use super::super::util::{
    config_map_key_errors, dns1123_label, dns1123_subdomain, duplicate, int_of, list_of,
    nonnegative, port_name_errors, port_num, str_of,
};
use super::super::Path;
use super::container_extra::{self as extra, SpecCtx};
use super::field_refs;
use super::one_of;
use super::security::container_security_context;

/// kube's `validateContainers`.
pub(super) fn validate_containers(
    cs: &[Value],
    vols: &[String],
    ctx: &SpecCtx<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if cs.is_empty() {
        errs.push(FieldError::required(path.as_str(), ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let p = path.index(i);
        errs.extend(container_common(c, vols, ctx, &p));
        let name = str_of(c, "name");
        if names.contains(&name) {
            errs.push(duplicate(&p.child("name"), name));
        } else {
            names.push(name);
        }
        errs.extend(extra::lifecycle(c, ctx, &p));
        errs.extend(probes(c, &p));
        if c.get("restartPolicy").is_some_and(|v| !v.is_null()) {
            errs.push(FieldError::forbidden(
                p.child("restartPolicy").as_str(),
                "may not be set for non-init containers",
            ));
        }
    }
    errs.extend(host_port_conflicts(cs.iter().enumerate(), path));
    errs
}

/// kube's `checkHostPortConflicts`: `hostIP/protocol/hostPort` unique.
fn host_port_conflicts<'a>(
    cs: impl Iterator<Item = (usize, &'a Value)>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (ci, c) in cs {
        for (pi, port) in list_of(c, "ports").iter().enumerate() {
            let hp = int_of(port, "hostPort").unwrap_or(0);
            if hp == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{hp}",
                str_of(port, "protocol"),
                str_of(port, "hostIP")
            );
            if seen.contains(&key) {
                let p = path.index(ci).child("ports").index(pi).child("hostPort");
                errs.push(duplicate(&p, key.as_str()));
            } else {
                seen.push(key);
            }
        }
    }
    errs
}

/// kube's `validateInitContainers`.
pub(super) fn validate_init_containers(
    cs: &[Value],
    others: &[Value],
    vols: &[String],
    ctx: &SpecCtx<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = others.iter().map(|c| str_of(c, "name")).collect();
    for (i, c) in cs.iter().enumerate() {
        let p = path.index(i);
        errs.extend(container_common(c, vols, ctx, &p));
        let mut always = false;
        if let Some(rp) = c.get("restartPolicy").filter(|v| !v.is_null()) {
            let rp = rp.as_str().unwrap_or("");
            always = rp == "Always";
            if !always {
                errs.push(FieldError::not_supported(
                    p.child("restartPolicy").as_str(),
                    rp,
                    &["Always"],
                ));
            }
        }
        let name = str_of(c, "name");
        if names.contains(&name) {
            errs.push(duplicate(&p.child("name"), name));
        } else if !name.is_empty() {
            names.push(name);
        }
        // kube checks each init container alone, as a one-element list (index 0).
        errs.extend(host_port_conflicts(std::iter::once((0, c)), path));
        if always {
            errs.extend(extra::lifecycle(c, ctx, &p));
            errs.extend(probes(c, &p));
        } else {
            for key in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if c.get(key).is_some_and(|v| !v.is_null()) {
                    errs.push(FieldError::forbidden(
                        p.child(key).as_str(),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    errs
}

/// kube's `validateContainerCommon` (regular, init and ephemeral containers).
pub(super) fn container_common(
    c: &Value,
    vols: &[String],
    ctx: &SpecCtx<'_>,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(c, "name");
    if name.is_empty() {
        errs.push(FieldError::required(p.child("name").as_str(), ""));
    } else {
        errs.extend(dns1123_label(name, &p.child("name")));
    }
    if str_of(c, "image").is_empty() {
        errs.push(FieldError::required(p.child("image").as_str(), ""));
    }
    errs.extend(one_of(
        c.get("terminationMessagePolicy"),
        &p.child("terminationMessagePolicy"),
        &["File", "FallbackToLogsOnError"],
    ));
    errs.extend(ports(list_of(c, "ports"), &p.child("ports")));
    errs.extend(env(list_of(c, "env"), &p.child("env")));
    errs.extend(extra::env_from(list_of(c, "envFrom"), &p.child("envFrom")));
    errs.extend(mounts(c, vols, &p.child("volumeMounts")));
    errs.extend(extra::volume_devices(
        c,
        vols,
        ctx,
        &p.child("volumeDevices"),
    ));
    errs.extend(one_of(
        c.get("imagePullPolicy"),
        &p.child("imagePullPolicy"),
        &["Always", "IfNotPresent", "Never"],
    ));
    errs.extend(extra::resources(
        c.get("resources").unwrap_or(&Value::Null),
        extra::Names::Container,
        &ctx.claims,
        &p.child("resources"),
    ));
    errs.extend(extra::resize_policy(c, ctx, &p.child("resizePolicy")));
    errs.extend(container_security_context(c, p, ctx.sec));
    errs
}

fn ports(ports: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let ip = path.index(i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            let msgs = port_name_errors(name);
            if !msgs.is_empty() {
                for m in msgs {
                    errs.push(FieldError::invalid(ip.child("name").as_str(), name, &m));
                }
            } else if names.contains(&name) {
                errs.push(duplicate(&ip.child("name"), name));
            } else {
                names.push(name);
            }
        }
        match int_of(port, "containerPort").unwrap_or(0) {
            0 => errs.push(FieldError::required(ip.child("containerPort").as_str(), "")),
            n => errs.extend(port_num(n, &ip.child("containerPort"))),
        }
        let hp = int_of(port, "hostPort").unwrap_or(0);
        if hp != 0 {
            errs.extend(port_num(hp, &ip.child("hostPort")));
        }
        errs.extend(one_of(
            port.get("protocol"),
            &ip.child("protocol"),
            &["SCTP", "TCP", "UDP"],
        ));
    }
    errs
}

pub(super) const ENV_NAME: &str =
    "a valid environment variable name must consist only of printable ASCII characters other than '='";

/// kube's `ValidateEnv` and `validateEnvVarValueFrom` (with the `EnvFiles`
/// gate off, as in 1.34, a `fileKeyRef` is dropped before validation and
/// so is no source).
fn env(vars: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, ev) in vars.iter().enumerate() {
        let ip = path.index(i);
        let name = str_of(ev, "name");
        if name.is_empty() {
            errs.push(FieldError::required(ip.child("name").as_str(), ""));
        } else if !name.bytes().all(|b| (32..=126).contains(&b) && b != b'=') {
            errs.push(FieldError::invalid(
                ip.child("name").as_str(),
                name,
                ENV_NAME,
            ));
        }
        let Some(from) = ev.get("valueFrom").filter(|v| v.is_object()) else {
            continue;
        };
        let fp = ip.child("valueFrom");
        let mut n = 0;
        for src in [
            "fieldRef",
            "resourceFieldRef",
            "configMapKeyRef",
            "secretKeyRef",
        ] {
            let Some(s) = from.get(src).filter(|v| v.is_object()) else {
                continue;
            };
            n += 1;
            let sp = fp.child(src);
            match src {
                "fieldRef" => errs.extend(field_refs::object_field_selector(
                    s,
                    &sp,
                    field_refs::ENV_FIELD_PATHS,
                )),
                "resourceFieldRef" => {
                    errs.extend(field_refs::resource_field_selector(s, &sp, false))
                }
                _ => {
                    // `ValidateSecretName`: an empty name fails the format too.
                    errs.extend(dns1123_subdomain(str_of(s, "name"), &sp.child("name")));
                    let key = str_of(s, "key");
                    if key.is_empty() {
                        errs.push(FieldError::required(sp.child("key").as_str(), ""));
                    } else {
                        for m in config_map_key_errors(key) {
                            errs.push(FieldError::invalid(sp.child("key").as_str(), key, &m));
                        }
                    }
                }
            }
        }
        if n == 0 {
            errs.push(FieldError::invalid(
                fp.as_str(),
                "",
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            ));
        } else if !str_of(ev, "value").is_empty() {
            errs.push(FieldError::invalid(
                fp.as_str(),
                "",
                "may not be specified when `value` is not empty",
            ));
        } else if n > 1 {
            errs.push(FieldError::invalid(
                fp.as_str(),
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errs
}

/// kube's `ValidateVolumeMounts` of container `c` (`vols`: the valid
/// volume names).
fn mounts(c: &Value, vols: &[String], path: &Path) -> Vec<FieldError> {
    let ms = list_of(c, "volumeMounts");
    let mut errs = Vec::new();
    let mut points: Vec<&str> = Vec::new();
    for (i, m) in ms.iter().enumerate() {
        let ip = path.index(i);
        let name = str_of(m, "name");
        if name.is_empty() {
            errs.push(FieldError::required(ip.child("name").as_str(), ""));
        }
        if !vols.iter().any(|v| v == name) {
            errs.push(FieldError {
                kind: FieldErrorKind::NotFound,
                field: ip.child("name").as_str().to_string(),
                value: Some(Value::String(name.to_string())),
                detail: String::new(),
            });
        }
        let mp = str_of(m, "mountPath");
        if mp.is_empty() {
            errs.push(FieldError::required(ip.child("mountPath").as_str(), ""));
        }
        if points.contains(&mp) {
            errs.push(FieldError::invalid(
                ip.child("mountPath").as_str(),
                mp,
                "must be unique",
            ));
        }
        points.push(mp);
        errs.extend(extra::mount_device_conflicts(m, c, &ip));
        errs.extend(extra::mount_paths_and_propagation(m, c, path, &ip));
    }
    errs
}

fn probes(c: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, one) in [
        ("livenessProbe", true),
        ("readinessProbe", false),
        ("startupProbe", true),
    ] {
        let Some(probe) = c.get(key).filter(|v| v.is_object()) else {
            continue;
        };
        let pp = p.child(key);
        errs.extend(handler(probe, &pp));
        for f in [
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
        ] {
            errs.extend(nonnegative(int_of(probe, f).unwrap_or(0), &pp.child(f)));
        }
        if let Some(t) = int_of(probe, "terminationGracePeriodSeconds") {
            if t <= 0 {
                errs.push(FieldError::invalid(
                    pp.child("terminationGracePeriodSeconds").as_str(),
                    t,
                    "must be greater than 0",
                ));
            }
        }
        if one {
            if let Some(s) = int_of(probe, "successThreshold").filter(|s| *s != 1) {
                errs.push(FieldError::invalid(
                    pp.child("successThreshold").as_str(),
                    s,
                    "must be 1",
                ));
            }
        }
    }
    errs
}

/// A probe's handler (`grpc` is its fourth kind).
fn handler(h: &Value, p: &Path) -> Vec<FieldError> {
    extra::one_handler(h, p, "grpc", |v, hp| {
        port_num(int_of(v, "port").unwrap_or(0), &hp.child("port"))
    })
}
