//! `ValidateObjectMetaAccessor`: name, generateName, namespace, generation,
//! labels, annotations, ownerReferences and finalizers.

use keelson_apimachinery::names::{
    is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_label_value,
};
use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use crate::registry::NameRule;

/// kube's `TotalAnnotationSizeLimitB` (256 KiB).
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// What the metadata of one resource must satisfy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetaRules<'a> {
    pub name_rule: NameRule,
    pub namespaced: bool,
    /// A name rule that depends on the kind (else `name_rule`'s).
    pub special_name: SpecialName<'a>,
}

/// The kinds whose names follow their own rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecialName<'a> {
    None,
    /// A ClusterTrustBundle with this `spec.signerName` (`""` without
    /// one): kube's `ValidateClusterTrustBundleName`.
    TrustBundle(&'a str),
    /// An IPAddress: kube's `ValidateIPAddressName`, a canonical IP (the
    /// same check for a generateName).
    IpAddress,
    /// An APIService for this `spec.version` and `spec.group`: a path
    /// segment named `<version>.<group>`.
    ApiService {
        version: &'a str,
        group: &'a str,
    },
    /// A core `v1` Event: kube's Event strategy checks no metadata, so
    /// only `BeforeCreate`/`BeforeUpdate`'s generic
    /// `ValidateObjectMetaAccessor` applies, with
    /// `path.ValidatePathSegmentName` as the name rule.
    CoreEvent,
    /// A LeaseCandidate: kube's `ValidLeaseCandidateName`, a ConfigMap key
    /// (a generateName too: a trailing `-` is a valid key).
    LeaseCandidate,
}

impl MetaRules<'_> {
    fn name_errors(&self, name: &str, prefix: bool) -> Vec<String> {
        match self.special_name {
            SpecialName::TrustBundle(signer) => trust_bundle_name_errors(signer, name, prefix),
            SpecialName::IpAddress => super::kinds::netaddr::ip_errors(name),
            SpecialName::ApiService { version, group } => {
                let failures = path_segment_errors(name, false);
                let required = format!("{version}.{group}");
                if !failures.is_empty() {
                    failures
                } else if name != required {
                    vec![format!(
                        "must be `spec.version+\".\"+spec.group`: {required:?}"
                    )]
                } else {
                    Vec::new()
                }
            }
            SpecialName::CoreEvent => path_segment_errors(name, prefix),
            SpecialName::LeaseCandidate => super::kinds::util::config_map_key_errors(name),
            SpecialName::None => name_errors(self.name_rule, name, prefix),
        }
    }
}

/// kube's `ValidateClusterTrustBundleName`: a bundle for a signer is named
/// `<signer with '/' as ':'>:<subdomain>`; one without a signer has no ':'.
pub(crate) fn trust_bundle_name_errors(signer: &str, name: &str, prefix: bool) -> Vec<String> {
    if signer.is_empty() {
        if name.contains(':') {
            return vec![
                "ClusterTrustBundle without signer name must not have \":\" in its name".into(),
            ];
        }
        return name_errors(NameRule::Subdomain, name, prefix);
    }
    let required = format!("{}:", signer.replace('/', ":"));
    match name.strip_prefix(&required) {
        Some(rest) => name_errors(NameRule::Subdomain, rest, prefix),
        None => vec![format!(
            "ClusterTrustBundle for signerName {signer} must be named with prefix {required}"
        )],
    }
}

fn str_field<'a>(meta: &'a Map<String, Value>, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or("")
}

/// kube's `maskTrailingDash`: `name[:len-2] + "a"` (it drops two bytes).
pub(crate) fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len().saturating_sub(2);
        match name.get(..cut) {
            Some(head) => format!("{head}a"),
            None => name.to_string(),
        }
    } else {
        name.to_string()
    }
}

/// The name validator of a rule; `prefix` validates a generateName.
pub(crate) fn name_errors(rule: NameRule, name: &str, prefix: bool) -> Vec<String> {
    match rule {
        NameRule::PathSegment => path_segment_errors(name, prefix),
        _ => {
            let name = if prefix {
                mask_trailing_dash(name)
            } else {
                name.to_string()
            };
            match rule {
                NameRule::Label => is_dns1123_label(&name),
                NameRule::Dns1035 => is_dns1035_label(&name),
                _ => is_dns1123_subdomain(&name),
            }
        }
    }
}

/// `ValidatePathSegmentName` (`IsValidPathSegmentName` when `prefix` is
/// false).
pub(crate) fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        for bad in [".", ".."] {
            if name == bad {
                return vec![format!("may not be '{bad}'")];
            }
        }
    }
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// Validate `metadata` (a JSON object, or anything else treated as empty).
/// A create with only `generateName` validates the prefix; the generated
/// name is the store's to make.
pub(crate) fn validate_meta(metadata: Option<&Value>, rules: MetaRules<'_>) -> Vec<FieldError> {
    let empty = Map::new();
    let meta = metadata.and_then(Value::as_object).unwrap_or(&empty);
    let mut errs = Vec::new();

    let generate_name = str_field(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in rules.name_errors(generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                &msg,
            ));
        }
    }
    let name = str_field(meta, "name");
    if name.is_empty() {
        if generate_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        for msg in rules.name_errors(name, false) {
            errs.push(FieldError::invalid("metadata.name", name, &msg));
        }
    }

    let namespace = str_field(meta, "namespace");
    if rules.namespaced {
        if namespace.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in is_dns1123_label(namespace) {
                errs.push(FieldError::invalid("metadata.namespace", namespace, &msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }

    if let Some(g) = meta.get("generation").and_then(Value::as_i64) {
        if g < 0 {
            errs.push(FieldError::invalid(
                "metadata.generation",
                g,
                "must be greater than or equal to 0",
            ));
        }
    }
    errs.extend(labels(meta.get("labels")));
    errs.extend(annotations(meta.get("annotations")));
    errs.extend(owner_references(meta.get("ownerReferences")));
    errs.extend(finalizers(meta.get("finalizers")));
    errs
}

/// `ValidateLabels`: qualified-name keys, label-value values.
fn labels(v: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in v.and_then(Value::as_object).into_iter().flatten() {
        for msg in is_qualified_name(k) {
            errs.push(FieldError::invalid("metadata.labels", k.as_str(), &msg));
        }
        let value = v.as_str().unwrap_or("");
        for msg in is_valid_label_value(value) {
            errs.push(FieldError::invalid("metadata.labels", value, &msg));
        }
    }
    errs
}

/// `ValidateAnnotations`: case-insensitive qualified-name keys, total size.
fn annotations(v: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut size = 0usize;
    for (k, v) in v.and_then(Value::as_object).into_iter().flatten() {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(
                "metadata.annotations",
                k.as_str(),
                &msg,
            ));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            "metadata.annotations",
            &format!("may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
    errs
}

/// `ValidateOwnerReferences` (the path has no index, as in kube).
fn owner_references(v: Option<&Value>) -> Vec<FieldError> {
    const PATH: &str = "metadata.ownerReferences";
    let mut errs = Vec::new();
    let mut first_controller: Option<String> = None;
    let Some(refs) = v.and_then(Value::as_array) else {
        return errs;
    };
    for r in refs {
        let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let api_version = get("apiVersion");
        let version_empty = match api_version.split_once('/') {
            None => api_version.is_empty(),
            Some((_, v)) => v.is_empty() || v.contains('/'),
        };
        if version_empty {
            errs.push(FieldError::invalid(
                &format!("{PATH}.apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        for (key, what) in [("kind", "kind"), ("name", "name"), ("uid", "uid")] {
            if get(key).is_empty() {
                errs.push(FieldError::invalid(
                    &format!("{PATH}.{key}"),
                    "",
                    &format!("{what} must not be empty"),
                ));
            }
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{}/{}", get("kind"), get("name"));
            match &first_controller {
                Some(first) => errs.push(FieldError::invalid(
                    PATH,
                    Value::Array(refs.clone()),
                    &format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errs
}

/// `ValidateFinalizers`.
fn finalizers(v: Option<&Value>) -> Vec<FieldError> {
    const PATH: &str = "metadata.finalizers";
    let mut errs = Vec::new();
    let Some(list) = v.and_then(Value::as_array) else {
        return errs;
    };
    let names: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
    for f in &names {
        for msg in is_qualified_name(f) {
            errs.push(FieldError::invalid(PATH, *f, &msg));
        }
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        errs.push(FieldError::invalid(
            PATH,
            Value::Array(list.clone()),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

/// `ValidateObjectMetaUpdate`'s finalizer rule: no finalizer may be added
/// to an object that is being deleted.
pub(crate) fn no_new_finalizers(new: &Value, old: &Value) -> Vec<FieldError> {
    let deleting = old
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if !deleting {
        return Vec::new();
    }
    let list = |o: &Value| -> std::collections::BTreeSet<String> {
        o.pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let old = list(old);
    let extra: Vec<String> = list(new).into_iter().filter(|f| !old.contains(f)).collect();
    if extra.is_empty() {
        return Vec::new();
    }
    // Go's `%#v` of a `[]string`.
    let shown = extra
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![FieldError::forbidden(
        "metadata.finalizers",
        &format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{shown}}}"
        ),
    )]
}

/// The rest of `ValidateObjectMetaAccessorUpdate` (after the finalizer
/// rule above), as kube's `BeforeUpdate` leaves it: an empty `uid`, a
/// `creationTimestamp`, an unchanged or absent deletion mark and
/// `generation` are taken from the stored object before validation, so
/// only a changed name or namespace, a different `uid`, a new
/// `deletionTimestamp` and a new or different `deletionGracePeriodSeconds`
/// are refused (`Invalid value: <new>: field is immutable`).
pub(crate) fn validate_meta_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let empty = Map::new();
    let meta = |o: &'_ Value| -> Map<String, Value> {
        o.get("metadata")
            .and_then(Value::as_object)
            .unwrap_or(&empty)
            .clone()
    };
    let (n, o) = (meta(new), meta(old));
    let mut errs = Vec::new();
    let immutable = "field is immutable";
    for key in ["name", "namespace"] {
        let (nv, ov) = (str_field(&n, key), str_field(&o, key));
        // The stored object always has both; one without (a caller's
        // partial old object) has nothing to compare.
        if !ov.is_empty() && nv != ov {
            errs.push(FieldError::invalid(
                &format!("metadata.{key}"),
                nv,
                immutable,
            ));
        }
    }
    let uid = str_field(&n, "uid");
    if !uid.is_empty() && uid != str_field(&o, "uid") {
        errs.push(FieldError::invalid("metadata.uid", uid, immutable));
    }
    let set = |m: &Map<String, Value>, key: &str| m.get(key).filter(|v| !v.is_null()).cloned();
    if let (Some(ts), None) = (set(&n, "deletionTimestamp"), set(&o, "deletionTimestamp")) {
        // `*metav1.Time` prints as Go's `time.Time.String()`.
        let shown = ts.as_str().map(go_time_string).unwrap_or_default();
        errs.push(FieldError {
            kind: keelson_apimachinery::FieldErrorKind::Invalid,
            field: "metadata.deletionTimestamp".into(),
            value: None,
            detail: format!("{shown}: {immutable}"),
        });
    }
    let grace_old = set(&o, "deletionGracePeriodSeconds");
    let grace_new = set(&n, "deletionGracePeriodSeconds").or_else(|| grace_old.clone());
    if let Some(g) = grace_new.filter(|g| Some(g) != grace_old.as_ref()) {
        errs.push(FieldError::invalid(
            "metadata.deletionGracePeriodSeconds",
            g,
            immutable,
        ));
    }
    errs
}

/// An RFC 3339 timestamp as Go prints a `metav1.Time` decoded from it
/// (`Local()` on a UTC host): `2026-01-02 03:04:05.5 +0000 UTC`. Anything
/// unparsable is shown as sent.
fn go_time_string(ts: &str) -> String {
    let parsed = (|| {
        let (date, rest) = ts.split_once(['T', 't'])?;
        let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>().ok());
        let (y, mo, da) = (d.next()??, d.next()??, d.next()??);
        let (clock, offset) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
            (c, 0)
        } else {
            let at = rest.rfind(['+', '-'])?;
            let (c, off) = rest.split_at(at);
            let sign = if off.starts_with('-') { -1 } else { 1 };
            let (h, m) = off[1..].split_once(':')?;
            (
                c,
                sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60),
            )
        };
        let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
        let mut t = hms.splitn(3, ':').map(|x| x.parse::<i64>().ok());
        let (h, mi, s) = (t.next()??, t.next()??, t.next()??);
        // Days from the civil date (Howard Hinnant's algorithm), in UTC.
        let (yy, mm) = if mo <= 2 {
            (y - 1, mo + 9)
        } else {
            (y, mo - 3)
        };
        let era = yy.div_euclid(400);
        let yoe = yy - era * 400;
        let doy = (153 * mm + 2) / 5 + da - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146097 + doe - 719468;
        let secs = days * 86400 + h * 3600 + mi * 60 + s - offset;
        let (days, sod) = (secs.div_euclid(86400), secs.rem_euclid(86400));
        let z = days + 719468;
        let era = z.div_euclid(146097);
        let doe = z - era * 146097;
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        let frac = frac.trim_end_matches('0');
        let frac = if frac.is_empty() {
            String::new()
        } else {
            format!(".{}", &frac[..frac.len().min(9)])
        };
        Some(format!(
            "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}{frac} +0000 UTC",
            sod / 3600,
            sod % 3600 / 60,
            sod % 60
        ))
    })();
    parsed.unwrap_or_else(|| ts.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_like_kube() {
        assert_eq!(mask_trailing_dash("foo-"), "foa");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(mask_trailing_dash("ab"), "ab");
    }

    #[test]
    fn path_segments() {
        assert_eq!(path_segment_errors("..", false), ["may not be '..'"]);
        assert_eq!(
            path_segment_errors("a/b%", false),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert!(path_segment_errors("..", true).is_empty());
    }

    #[test]
    fn go_times() {
        assert_eq!(
            go_time_string("2026-01-02T03:04:05Z"),
            "2026-01-02 03:04:05 +0000 UTC"
        );
        assert_eq!(
            go_time_string("2026-01-01T00:30:00.500+01:00"),
            "2025-12-31 23:30:00.5 +0000 UTC"
        );
        assert_eq!(go_time_string("soon"), "soon");
    }
}
