//! Small readers and rules shared by the kinds' validators.
#![allow(dead_code)]

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::Path;

/// `obj[key]` as a string, `""` when absent or not a string.
pub(crate) fn str_of<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `obj[key]` as an object, when it is one.
pub(crate) fn obj_of<'a>(obj: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    obj.get(key).and_then(Value::as_object)
}

/// `obj[key]` as a list, empty when absent or not a list.
pub(crate) fn list_of<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// `obj[key]` as an integer, when it is one.
pub(crate) fn int_of(obj: &Value, key: &str) -> Option<i64> {
    obj.get(key).and_then(Value::as_i64)
}

/// kube's `ValidateImmutableField`: `Invalid value: <new>: field is immutable`
/// when `new` differs from `old` (absent and `null` are the same).
pub(crate) fn immutable(new: Option<&Value>, old: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let norm = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
    let (n, o) = (norm(new), norm(old));
    if n == o {
        return Vec::new();
    }
    vec![FieldError::invalid(
        path.as_str(),
        n.unwrap_or(Value::Null),
        "field is immutable",
    )]
}

/// kube's `ValidateNonnegativeField`.
pub(crate) fn nonnegative(value: i64, path: &Path) -> Vec<FieldError> {
    if value < 0 {
        vec![FieldError::invalid(
            path.as_str(),
            value,
            "must be greater than or equal to 0",
        )]
    } else {
        Vec::new()
    }
}

/// `Duplicate value: <value>`.
pub(crate) fn duplicate(path: &Path, value: impl Into<Value>) -> FieldError {
    FieldError {
        kind: keelson_apimachinery::field::FieldErrorKind::Duplicate,
        field: path.as_str().to_string(),
        value: Some(value.into()),
        detail: String::new(),
    }
}

/// kube's `RegexError` wording.
pub(crate) fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

/// kube's `IsConfigMapKey` (also Secret keys).
pub(crate) fn config_map_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let ok = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        errs.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." {
        errs.push("must not be '.'".to_string());
    } else if key == ".." {
        errs.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_string());
    }
    errs
}

/// kube's `IsValidPortNum` as `Invalid value` errors at `path`.
pub(crate) fn port_num(port: i64, path: &Path) -> Vec<FieldError> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            path.as_str(),
            port,
            "must be between 1 and 65535, inclusive",
        )]
    }
}

/// kube's `IsValidPortName` messages (IANA service names).
pub(crate) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters".to_string());
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// kube's `ValidatePortNumOrName` (an int-or-string port) at `path`.
pub(crate) fn port_num_or_name(v: Option<&Value>, path: &Path) -> Vec<FieldError> {
    match v {
        Some(Value::Number(n)) => port_num(n.as_i64().unwrap_or(0), path),
        Some(Value::String(s)) => port_name_errors(s)
            .into_iter()
            .map(|m| FieldError::invalid(path.as_str(), s.as_str(), &m))
            .collect(),
        _ => Vec::new(),
    }
}

/// `msgs` as `Invalid value: <value>` errors at `path`.
pub(crate) fn invalid_all(msgs: Vec<String>, path: &Path, value: &str) -> Vec<FieldError> {
    msgs.into_iter()
        .map(|m| FieldError::invalid(path.as_str(), value, &m))
        .collect()
}

/// kube's `ValidateLabels` at `path` (selectors, label maps).
pub(crate) fn labels(map: Option<&Map<String, Value>>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in map.into_iter().flatten() {
        errs.extend(invalid_all(
            keelson_apimachinery::names::is_qualified_name(k),
            path,
            k,
        ));
        let value = v.as_str().unwrap_or("");
        errs.extend(invalid_all(
            keelson_apimachinery::names::is_valid_label_value(value),
            path,
            value,
        ));
    }
    errs
}

/// `ValidateDNS1123Subdomain` at `path`.
pub(crate) fn dns1123_subdomain(v: &str, path: &Path) -> Vec<FieldError> {
    invalid_all(
        keelson_apimachinery::names::is_dns1123_subdomain(v),
        path,
        v,
    )
}

/// `ValidateDNS1123Label` at `path`.
pub(crate) fn dns1123_label(v: &str, path: &Path) -> Vec<FieldError> {
    invalid_all(keelson_apimachinery::names::is_dns1123_label(v), path, v)
}

/// `obj[key]` as a bool, `false` when absent.
pub(crate) fn bool_of(obj: &Value, key: &str) -> bool {
    obj.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// `Invalid value` without a value (kube's `field.OmitValueType`).
pub(crate) fn invalid_omit(path: &Path, detail: &str) -> FieldError {
    FieldError {
        kind: keelson_apimachinery::FieldErrorKind::Invalid,
        field: path.as_str().to_string(),
        value: None,
        detail: detail.to_string(),
    }
}

/// kube's `ValidateLabels`: each key a qualified name, each value a label
/// value, both reported at `path`.
pub(crate) fn validate_labels(labels: Option<&Map<String, Value>>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels.into_iter().flatten() {
        for msg in keelson_apimachinery::names::is_qualified_name(k) {
            errs.push(FieldError::invalid(path.as_str(), k.as_str(), &msg));
        }
        let v = v.as_str().unwrap_or("");
        for msg in keelson_apimachinery::names::is_valid_label_value(v) {
            errs.push(FieldError::invalid(path.as_str(), v, &msg));
        }
    }
    errs
}

/// kube's `ValidateLabelSelector` (meta/v1/validation) of `sel` at `path`;
/// `allow_invalid_values` is `AllowInvalidLabelValueInSelector`.
pub(crate) fn validate_label_selector(
    sel: Option<&Value>,
    allow_invalid_values: bool,
    path: &Path,
) -> Vec<FieldError> {
    let Some(sel) = sel.filter(|s| s.is_object()) else {
        return Vec::new();
    };
    let mut errs = validate_labels(obj_of(sel, "matchLabels"), &path.child("matchLabels"));
    for (i, expr) in list_of(sel, "matchExpressions").iter().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let values = list_of(expr, "values");
        match str_of(expr, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        p.child("values").as_str(),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        p.child("values").as_str(),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            op => errs.push(FieldError::invalid(
                p.child("operator").as_str(),
                op,
                "not a valid selector operator",
            )),
        }
        let key = str_of(expr, "key");
        for msg in keelson_apimachinery::names::is_qualified_name(key) {
            errs.push(FieldError::invalid(p.child("key").as_str(), key, &msg));
        }
        if !allow_invalid_values {
            for (j, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("");
                for msg in keelson_apimachinery::names::is_valid_label_value(v) {
                    errs.push(FieldError::invalid(
                        p.child("values").index(j).as_str(),
                        v,
                        &msg,
                    ));
                }
            }
        }
    }
    errs
}

/// A label selector as `metav1.LabelSelectorAsSelector` sees it.
pub(crate) enum Selector<'a> {
    /// A `nil` selector: matches nothing.
    Nothing,
    /// A parsed selector (an empty one matches everything).
    Parsed(&'a Value),
}

impl<'a> Selector<'a> {
    /// `LabelSelectorAsSelector`: `Err` when an operator, key or value
    /// would not parse.
    pub fn of(sel: Option<&'a Value>) -> Result<Selector<'a>, ()> {
        let Some(sel) = sel.filter(|s| s.is_object()) else {
            return Ok(Selector::Nothing);
        };
        let names = keelson_apimachinery::names::is_qualified_name;
        let value_ok = |v: &str| keelson_apimachinery::names::is_valid_label_value(v).is_empty();
        for (k, v) in obj_of(sel, "matchLabels").into_iter().flatten() {
            if !names(k).is_empty() || !value_ok(v.as_str().unwrap_or("")) {
                return Err(());
            }
        }
        for expr in list_of(sel, "matchExpressions") {
            let values = list_of(expr, "values");
            let ok = match str_of(expr, "operator") {
                "In" | "NotIn" => !values.is_empty(),
                "Exists" | "DoesNotExist" => values.is_empty(),
                _ => false,
            };
            if !ok
                || !names(str_of(expr, "key")).is_empty()
                || !values.iter().all(|v| value_ok(v.as_str().unwrap_or("")))
            {
                return Err(());
            }
        }
        Ok(Selector::Parsed(sel))
    }

    /// `selector.Empty()`: a parsed selector with no requirements.
    pub fn is_empty(&self) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::Parsed(sel) => {
                obj_of(sel, "matchLabels").is_none_or(Map::is_empty)
                    && list_of(sel, "matchExpressions").is_empty()
            }
        }
    }

    /// `selector.Matches(labels)`.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let Selector::Parsed(sel) = self else {
            return false;
        };
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        for (k, v) in obj_of(sel, "matchLabels").into_iter().flatten() {
            if get(k) != v.as_str() {
                return false;
            }
        }
        for expr in list_of(sel, "matchExpressions") {
            let have = get(str_of(expr, "key"));
            let in_values = |h: &str| {
                list_of(expr, "values")
                    .iter()
                    .any(|v| v.as_str() == Some(h))
            };
            let ok = match str_of(expr, "operator") {
                "In" => have.is_some_and(in_values),
                "NotIn" => !have.is_some_and(in_values),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        true
    }
}

/// An int-or-string field as kube's `intstr.IntOrString`: `Ok(int)` or
/// `Err(string)`; `None` when absent or of another type.
pub(crate) fn int_or_string(v: Option<&Value>) -> Option<Result<i64, &str>> {
    match v? {
        Value::Number(n) => n.as_i64().map(Ok),
        Value::String(s) => Some(Err(s.as_str())),
        _ => None,
    }
}

/// The percent of a valid `N%` string.
fn percent_value(s: &str) -> Option<i64> {
    let digits = s.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(i64::MAX))
}

const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// kube's `ValidatePositiveIntOrPercent` (apps validation) of `v` at `path`.
pub(crate) fn positive_int_or_percent(v: Option<&Value>, path: &Path) -> Vec<FieldError> {
    match int_or_string(v) {
        Some(Ok(i)) => nonnegative(i, path),
        Some(Err(s)) if percent_value(s).is_none() => {
            vec![FieldError::invalid(path.as_str(), s, PERCENT_MSG)]
        }
        _ => Vec::new(),
    }
}

/// kube's `IsNotMoreThan100Percent`.
pub(crate) fn not_more_than_100_percent(v: Option<&Value>, path: &Path) -> Vec<FieldError> {
    match int_or_string(v) {
        Some(Err(s)) if percent_value(s).is_some_and(|p| p > 100) => vec![FieldError::invalid(
            path.as_str(),
            s,
            "must not be greater than 100%",
        )],
        _ => Vec::new(),
    }
}

/// kube's `getIntOrPercentValue`: the percent of a valid percent, the int,
/// else 0 (what `IntValue` answers for other strings that are not ints).
pub(crate) fn int_or_percent_value(v: Option<&Value>) -> i64 {
    match int_or_string(v) {
        Some(Ok(i)) => i,
        Some(Err(s)) => percent_value(s).unwrap_or_else(|| s.parse().unwrap_or(0)),
        None => 0,
    }
}

/// kube's `ValidateLabelSelector` at `path`: matchLabels, then each
/// matchExpressions requirement.
pub(crate) fn label_selector(sel: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = labels(obj_of(sel, "matchLabels"), &path.child("matchLabels"));
    for (i, req) in list_of(sel, "matchExpressions").iter().enumerate() {
        let rp = path.child("matchExpressions").index(i);
        let values = list_of(req, "values");
        match str_of(req, "operator") {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        rp.child("values").as_str(),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        rp.child("values").as_str(),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            op => errs.push(FieldError::invalid(
                rp.child("operator").as_str(),
                op,
                "not a valid selector operator",
            )),
        }
        let key = str_of(req, "key");
        errs.extend(invalid_all(
            keelson_apimachinery::names::is_qualified_name(key),
            &rp.child("key"),
            key,
        ));
        for (j, v) in values.iter().enumerate() {
            let v = v.as_str().unwrap_or("");
            errs.extend(invalid_all(
                keelson_apimachinery::names::is_valid_label_value(v),
                &rp.child("values").index(j),
                v,
            ));
        }
    }
    errs
}

/// A CIDR as (address bits, width 32 or 128, prefix length), when valid.
pub(crate) fn parse_cidr(s: &str) -> Option<(u128, u32, u32)> {
    let (ip, len) = s.split_once('/')?;
    let len: u32 = len.parse().ok()?;
    match ip.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(a) if len <= 32 => Some((u32::from(a) as u128, 32, len)),
        std::net::IpAddr::V6(a) if len <= 128 => Some((u128::from(a), 128, len)),
        _ => None,
    }
}

/// kube's `IsValidCIDRForLegacyField` (validity only) at `path`.
pub(crate) fn cidr(s: &str, path: &Path) -> Vec<FieldError> {
    if parse_cidr(s).is_some() {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            path.as_str(),
            s,
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        )]
    }
}

/// A Go map as `encoding/json` prints it: keys sorted.
pub(crate) fn go_map(v: &Value) -> Value {
    match v.as_object() {
        Some(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), m[k].clone()))
                    .collect(),
            )
        }
        None => v.clone(),
    }
}

/// A Go struct as `encoding/json` prints it: its fields in declaration
/// order (`fields`), any others after.
pub(crate) fn go_struct(v: &Value, fields: &[&str]) -> Value {
    let Some(m) = v.as_object() else {
        return v.clone();
    };
    let mut out = Map::new();
    for f in fields {
        if let Some(x) = m.get(*f) {
            out.insert((*f).to_string(), x.clone());
        }
    }
    for (k, x) in m {
        if !out.contains_key(k) {
            out.insert(k.clone(), x.clone());
        }
    }
    Value::Object(out)
}

/// A `metav1.LabelSelector` as kube prints it in a field error.
pub(crate) fn go_selector(v: &Value) -> Value {
    let mut sel = go_struct(v, &["matchLabels", "matchExpressions"]);
    if let Some(m) = sel.as_object_mut() {
        if let Some(ml) = m.get_mut("matchLabels") {
            *ml = go_map(ml);
        }
        if let Some(Value::Array(exprs)) = m.get_mut("matchExpressions") {
            for e in exprs.iter_mut() {
                *e = go_struct(e, &["key", "operator", "values"]);
            }
        }
    }
    sel
}

/// `v` as kube's `apiequality.Semantic.DeepEqual` compares it: object
/// members that are `null`, `[]` or `{}` (after normalizing) are dropped,
/// as Go's zero values, nil and empty slices and maps compare equal.
pub(crate) fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), semantic(x)))
                .filter(|(_, x)| !is_zero(x))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// kube's `standardResources` (`helper.IsStandardResourceName`).
pub(super) const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];
