//! Seccomp and AppArmor profiles (`validateSeccompProfileField`,
//! `ValidateAppArmorProfileField`), the create-time match of their
//! deprecated annotations with the fields, and the Go rendering of the
//! security structs kube prints as error values.

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::super::super::util::{obj_of, str_of};
use super::super::super::Path;
use super::super::container_extra::local_descending_path;
use super::{each_container, set};

/// kube's `validateSeccompProfileField` of an optional profile at `path`.
pub(super) fn seccomp(sp: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(sp) = sp.filter(|v| v.is_object()) else {
        return errs;
    };
    let t = str_of(sp, "type");
    const TYPES: &[&str] = &["Localhost", "RuntimeDefault", "Unconfined"];
    if t.is_empty() {
        errs.push(FieldError::required(
            path.child("type").as_str(),
            "type is required when seccompProfile is set",
        ));
    } else if !TYPES.contains(&t) {
        errs.push(FieldError::not_supported(
            path.child("type").as_str(),
            t,
            TYPES,
        ));
    }
    let lp = path.child("localhostProfile");
    if t == "Localhost" {
        if set(sp, "localhostProfile") {
            errs.extend(local_descending_path(str_of(sp, "localhostProfile"), &lp));
        } else {
            errs.push(FieldError::required(
                lp.as_str(),
                "must be set when seccomp type is Localhost",
            ));
        }
    } else if set(sp, "localhostProfile") {
        errs.push(FieldError::invalid(
            lp.as_str(),
            go_struct(Some(sp), PROFILE),
            "can only be set when seccomp type is Localhost",
        ));
    }
    errs
}

/// kube's `ValidateAppArmorProfileField` of an optional profile at `path`.
pub(super) fn apparmor(profile: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(profile) = profile.filter(|v| v.is_object()) else {
        return errs;
    };
    let lp = path.child("localhostProfile");
    match str_of(profile, "type") {
        "Localhost" => {
            if !set(profile, "localhostProfile") {
                errs.push(FieldError::required(
                    lp.as_str(),
                    "must be set when AppArmor type is Localhost",
                ));
                return errs;
            }
            let local = str_of(profile, "localhostProfile");
            if local.trim() != local {
                errs.push(FieldError::invalid(
                    lp.as_str(),
                    local,
                    "must not be padded with whitespace",
                ));
            } else if local.is_empty() {
                errs.push(FieldError::required(
                    lp.as_str(),
                    "must be set when AppArmor type is Localhost",
                ));
            }
            if local.len() > 4095 {
                errs.push(FieldError::too_long(
                    lp.as_str(),
                    "may not be more than 4095 bytes",
                ));
            }
        }
        "RuntimeDefault" | "Unconfined" => {
            if set(profile, "localhostProfile") {
                errs.push(FieldError::invalid(
                    lp.as_str(),
                    str_of(profile, "localhostProfile"),
                    "can only be set when AppArmor type is Localhost",
                ));
            }
        }
        "" => errs.push(FieldError::required(
            path.child("type").as_str(),
            "type is required when appArmorProfile is set",
        )),
        t => errs.push(FieldError::not_supported(
            path.child("type").as_str(),
            t,
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
    errs
}

const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER: &str = "container.apparmor.security.beta.kubernetes.io/";

/// The checks kube's `ValidatePodCreate` adds after the spec:
/// `validateSeccompAnnotationsAndFields` and
/// `validateAppArmorAnnotationsAndFieldsMatchOnCreate` (a deprecated
/// annotation set beside its field must say the same).
pub(in super::super) fn pod_create_annotations(pod: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let annotations = pod.get("metadata").and_then(|m| obj_of(m, "annotations"));
    let Some(annotations) = annotations else {
        return errs;
    };
    let note = |key: &str| annotations.get(key).and_then(Value::as_str);
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let sp = Path::new("spec");
    let pod_sc = spec.get("securityContext").unwrap_or(&Value::Null);
    if let (Some(profile), Some(a)) = (
        pod_sc.get("seccompProfile").filter(|v| v.is_object()),
        note(SECCOMP_POD),
    ) {
        let p = sp.child("securityContext").child("seccompProfile");
        errs.extend(seccomp_match(a, profile, &p));
    }
    for (cp, c) in each_container(spec, &sp) {
        let sc = c.get("securityContext").unwrap_or(&Value::Null);
        let Some(profile) = sc.get("seccompProfile").filter(|v| v.is_object()) else {
            continue;
        };
        if let Some(a) = note(&format!("{SECCOMP_CONTAINER}{}", str_of(c, "name"))) {
            let p = cp.child("securityContext").child("seccompProfile");
            errs.extend(seccomp_match(a, profile, &p));
        }
    }
    if spec.get("os").map(|o| str_of(o, "name")) == Some("windows") {
        return errs;
    }
    let pod_profile = pod_sc.get("appArmorProfile").filter(|v| v.is_object());
    for (cp, c) in each_container(spec, &sp) {
        let sc = c.get("securityContext").unwrap_or(&Value::Null);
        let Some(profile) = sc
            .get("appArmorProfile")
            .filter(|v| v.is_object())
            .or(pod_profile)
        else {
            continue;
        };
        let Some(a) = note(&format!("{APPARMOR_CONTAINER}{}", str_of(c, "name"))) else {
            continue;
        };
        let p = cp.child("securityContext").child("appArmorProfile");
        let type_mismatch = FieldError::forbidden(
            p.child("type").as_str(),
            "apparmor type in annotation and field must match",
        );
        match str_of(profile, "type") {
            "Unconfined" if a != "unconfined" => errs.push(type_mismatch),
            "RuntimeDefault" if a != "runtime/default" => errs.push(type_mismatch),
            "Localhost" => match a.strip_prefix("localhost/") {
                None => errs.push(type_mismatch),
                Some(name)
                    if !set(profile, "localhostProfile")
                        || name != str_of(profile, "localhostProfile") =>
                {
                    errs.push(FieldError::forbidden(
                        p.child("localhostProfile").as_str(),
                        "apparmor profile in annotation and field must match",
                    ))
                }
                Some(_) => {}
            },
            _ => {}
        }
    }
    errs
}

/// kube's `validateSeccompAnnotationsAndFieldsMatch`.
fn seccomp_match(annotation: &str, profile: &Value, path: &Path) -> Option<FieldError> {
    let type_mismatch = || {
        Some(FieldError::forbidden(
            path.child("type").as_str(),
            "seccomp type in annotation and field must match",
        ))
    };
    match str_of(profile, "type") {
        "Unconfined" if annotation != "unconfined" => type_mismatch(),
        "RuntimeDefault" if annotation != "runtime/default" && annotation != "docker/default" => {
            type_mismatch()
        }
        "Localhost" => match annotation.strip_prefix("localhost/") {
            None => type_mismatch(),
            Some(name)
                if !set(profile, "localhostProfile")
                    || name != str_of(profile, "localhostProfile") =>
            {
                Some(FieldError::forbidden(
                    path.child("localhostProfile").as_str(),
                    "seccomp profile in annotation and field must match",
                ))
            }
            Some(_) => None,
        },
        _ => None,
    }
}

/// How one field of kube's internal struct is printed: its `v1` JSON name,
/// its Go name and its shape.
type GoField = (&'static str, &'static str, Shape);

#[derive(Clone, Copy)]
enum Shape {
    /// A non-pointer string (`""` when unset).
    Str,
    /// A pointer or slice (`null` when unset).
    Ptr,
    /// A pointer to a struct with these fields.
    Struct(&'static [GoField]),
}

const PROFILE: &[GoField] = &[
    ("type", "Type", Shape::Str),
    ("localhostProfile", "LocalhostProfile", Shape::Ptr),
];

const SECURITY_CONTEXT: &[GoField] = &[
    (
        "capabilities",
        "Capabilities",
        Shape::Struct(&[("add", "Add", Shape::Ptr), ("drop", "Drop", Shape::Ptr)]),
    ),
    ("privileged", "Privileged", Shape::Ptr),
    (
        "seLinuxOptions",
        "SELinuxOptions",
        Shape::Struct(&[
            ("user", "User", Shape::Str),
            ("role", "Role", Shape::Str),
            ("type", "Type", Shape::Str),
            ("level", "Level", Shape::Str),
        ]),
    ),
    (
        "windowsOptions",
        "WindowsOptions",
        Shape::Struct(&[
            (
                "gmsaCredentialSpecName",
                "GMSACredentialSpecName",
                Shape::Ptr,
            ),
            ("gmsaCredentialSpec", "GMSACredentialSpec", Shape::Ptr),
            ("runAsUserName", "RunAsUserName", Shape::Ptr),
            ("hostProcess", "HostProcess", Shape::Ptr),
        ]),
    ),
    ("runAsUser", "RunAsUser", Shape::Ptr),
    ("runAsGroup", "RunAsGroup", Shape::Ptr),
    ("runAsNonRoot", "RunAsNonRoot", Shape::Ptr),
    (
        "readOnlyRootFilesystem",
        "ReadOnlyRootFilesystem",
        Shape::Ptr,
    ),
    (
        "allowPrivilegeEscalation",
        "AllowPrivilegeEscalation",
        Shape::Ptr,
    ),
    ("procMount", "ProcMount", Shape::Ptr),
    ("seccompProfile", "SeccompProfile", Shape::Struct(PROFILE)),
    ("appArmorProfile", "AppArmorProfile", Shape::Struct(PROFILE)),
];

/// A container security context as kube 1.34 prints the internal
/// `core.SecurityContext` in an error (`json.Marshal` of a struct without
/// JSON tags: every field, Go names, declaration order).
pub(super) fn go_security_context(sc: &Value) -> Value {
    go_struct(Some(sc), SECURITY_CONTEXT)
}

fn go_struct(v: Option<&Value>, fields: &[GoField]) -> Value {
    let Some(v) = v.filter(|v| v.is_object()) else {
        return Value::Null;
    };
    let mut out = Map::new();
    for (json, go, shape) in fields {
        let x = v.get(*json).filter(|x| !x.is_null());
        let printed = match shape {
            Shape::Str => x.cloned().unwrap_or_else(|| Value::String(String::new())),
            Shape::Ptr => x.cloned().unwrap_or(Value::Null),
            Shape::Struct(inner) => go_struct(x, inner),
        };
        out.insert((*go).to_string(), printed);
    }
    Value::Object(out)
}
