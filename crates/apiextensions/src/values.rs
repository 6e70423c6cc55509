//! What a structural schema does to a custom object: pruning of unknown
//! fields, defaulting, and validation with kube's field errors (the
//! `kube-openapi` validator's wording as apiextensions-apiserver converts
//! it into field errors).

use std::collections::HashMap;

use keelson_apimachinery::field::render_value;
use keelson_apimachinery::{FieldError, FieldErrorKind};
use regex::Regex;
use serde_json::{Map, Value};

use crate::formats;
use crate::props::Props;

/// A version's schema ready for use: the props and its compiled patterns.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The root schema.
    pub root: Props,
    patterns: HashMap<String, Option<Regex>>,
    /// The schema's `x-kubernetes-validations` rules, compiled.
    pub(crate) cel: Option<std::sync::Arc<keelson_cel::CompiledSchema>>,
}

impl Compiled {
    /// Compile `root` (patterns that do not compile never match; the CRD's
    /// own validation rejects them first).
    pub fn new(root: Props) -> Compiled {
        let mut patterns = HashMap::new();
        collect_patterns(&root, &mut patterns);
        Compiled {
            root,
            patterns,
            cel: None,
        }
    }

    /// Compile the CEL rules of `raw`, the schema `root` was read from
    /// (rules that do not compile were refused with the CRD; here they
    /// leave the schema without rules).
    pub fn with_cel(mut self, raw: &Value) -> Compiled {
        self.cel = keelson_cel::CompiledSchema::compile(raw, Default::default())
            .ok()
            .map(std::sync::Arc::new);
        self
    }

    /// Remove every field the schema does not declare (kube's pruning);
    /// returns the paths removed, e.g. `spec.foo`, for field validation.
    pub fn prune(&self, object: &mut Value) -> Vec<String> {
        let mut removed = Vec::new();
        if let Value::Object(m) = object {
            prune_object(m, &self.root, "", true, &mut removed);
        }
        removed
    }

    /// Whether the schema declares any default.
    pub fn has_defaults(&self) -> bool {
        fn any(p: &Props) -> bool {
            p.default.is_some()
                || p.properties.values().any(any)
                || p.items.as_deref().is_some_and(any)
                || p.additional_schema().is_some_and(any)
        }
        any(&self.root)
    }

    /// Fill in defaults (kube's structural defaulting).
    pub fn default(&self, object: &mut Value) {
        default_value(object, &self.root, true);
    }

    /// Validate `object` against the schema; metadata is validated elsewhere.
    pub fn validate(&self, object: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let Value::Object(m) = object else {
            return errs;
        };
        for (k, v) in m {
            if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(p) = self.root.properties.get(k) {
                self.validate_value(v, p, k, &mut errs);
            }
        }
        for r in &self.root.required {
            if !m.contains_key(r) {
                errs.push(FieldError::required(r, ""));
            }
        }
        errs
    }

    fn pattern(&self, p: &str) -> Option<&Regex> {
        self.patterns.get(p).and_then(Option::as_ref)
    }

    fn validate_value(&self, v: &Value, s: &Props, path: &str, errs: &mut Vec<FieldError>) {
        if v.is_null() {
            if s.nullable || (s.type_.is_empty() && !s.int_or_string) {
                return;
            }
            let t = if s.int_or_string {
                "integer,string"
            } else {
                &s.type_
            };
            errs.push(type_error(path, t, v));
            return;
        }
        if s.int_or_string {
            if !(v.is_string() || is_integer(v)) {
                errs.push(type_error(path, "integer,string", v));
                return;
            }
        } else if !s.type_.is_empty() && !type_matches(&s.type_, v) {
            errs.push(type_error(path, &s.type_, v));
            return;
        }
        if let Some(values) = &s.enum_ {
            if !values.iter().any(|e| json_equal(e, v)) {
                errs.push(FieldError {
                    kind: FieldErrorKind::NotSupported,
                    field: path.into(),
                    value: Some(v.clone()),
                    detail: format!(
                        "supported values: {}",
                        values
                            .iter()
                            .map(render_value)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
        match v {
            Value::String(x) => self.validate_string(x, v, s, path, errs),
            Value::Number(_) => validate_number(v, s, path, errs),
            Value::Array(a) => self.validate_array(a, v, s, path, errs),
            Value::Object(m) => self.validate_object(m, v, s, path, errs),
            _ => {}
        }
    }

    fn validate_string(
        &self,
        x: &str,
        v: &Value,
        s: &Props,
        path: &str,
        errs: &mut Vec<FieldError>,
    ) {
        let chars = x.chars().count() as i64;
        if let Some(max) = s.max_length {
            if chars > max {
                errs.push(FieldError {
                    kind: FieldErrorKind::TooLong,
                    field: path.into(),
                    value: None,
                    detail: format!("may not be more than {max} bytes"),
                });
            }
        }
        if let Some(min) = s.min_length {
            if chars < min {
                errs.push(invalid(
                    path,
                    v,
                    format!("{path} in body should be at least {min} chars long"),
                ));
            }
        }
        if !s.pattern.is_empty() {
            if let Some(re) = self.pattern(&s.pattern) {
                if !re.is_match(x) {
                    errs.push(invalid(
                        path,
                        v,
                        format!("{path} in body should match '{}'", s.pattern),
                    ));
                }
            }
        }
        if !s.format.is_empty() && !formats::valid(&s.format, x) {
            errs.push(invalid(
                path,
                v,
                format!(
                    "{path} in body must be of type {}: {}",
                    s.format,
                    render_value(v)
                ),
            ));
        }
    }

    fn validate_array(
        &self,
        a: &[Value],
        v: &Value,
        s: &Props,
        path: &str,
        errs: &mut Vec<FieldError>,
    ) {
        if let Some(max) = s.max_items {
            if a.len() as i64 > max {
                errs.push(FieldError {
                    kind: FieldErrorKind::TooMany,
                    field: path.into(),
                    value: Some(Value::from(a.len())),
                    detail: format!("must have at most {max} items"),
                });
            }
        }
        if let Some(min) = s.min_items {
            if (a.len() as i64) < min {
                errs.push(invalid(
                    path,
                    v,
                    format!("{path} in body should have at least {min} items"),
                ));
            }
        }
        if let Some(items) = s.items.as_deref() {
            for (i, item) in a.iter().enumerate() {
                self.validate_value(item, items, &format!("{path}[{i}]"), errs);
            }
        }
        match s.list_type.as_deref() {
            Some("set") => {
                for (i, item) in a.iter().enumerate() {
                    if a[..i].iter().any(|x| json_equal(x, item)) {
                        errs.push(duplicate(&format!("{path}[{i}]"), item.clone()));
                    }
                }
            }
            Some("map") if !s.list_map_keys.is_empty() => {
                let key = |x: &Value| -> Vec<Value> {
                    s.list_map_keys
                        .iter()
                        .map(|k| x.get(k).cloned().unwrap_or(Value::Null))
                        .collect()
                };
                for (i, item) in a.iter().enumerate() {
                    let k = key(item);
                    if a[..i].iter().any(|x| key(x) == k) {
                        let shown: Map<String, Value> = s
                            .list_map_keys
                            .iter()
                            .filter_map(|n| item.get(n).map(|v| (n.clone(), v.clone())))
                            .collect();
                        errs.push(duplicate(&format!("{path}[{i}]"), Value::Object(shown)));
                    }
                }
            }
            _ => {}
        }
    }

    fn validate_object(
        &self,
        m: &Map<String, Value>,
        v: &Value,
        s: &Props,
        path: &str,
        errs: &mut Vec<FieldError>,
    ) {
        if let Some(max) = s.max_properties {
            if m.len() as i64 > max {
                errs.push(FieldError {
                    kind: FieldErrorKind::TooMany,
                    field: path.into(),
                    value: Some(Value::from(m.len())),
                    detail: format!("must have at most {max} items"),
                });
            }
        }
        if let Some(min) = s.min_properties {
            if (m.len() as i64) < min {
                errs.push(invalid(
                    path,
                    v,
                    format!("{path} in body should have at least {min} properties"),
                ));
            }
        }
        if s.embedded_resource {
            for f in ["apiVersion", "kind"] {
                if m.get(f).and_then(Value::as_str).unwrap_or("").is_empty() {
                    errs.push(FieldError::required(
                        &format!("{path}.{f}"),
                        "must not be empty",
                    ));
                }
            }
        }
        for (k, child) in m {
            let cp = format!("{path}.{k}");
            if let Some(p) = s.properties.get(k) {
                self.validate_value(child, p, &cp, errs);
            } else if let Some(p) = s.additional_schema() {
                self.validate_value(child, p, &cp, errs);
            }
        }
        for r in &s.required {
            if !m.contains_key(r) {
                errs.push(FieldError::required(&format!("{path}.{r}"), ""));
            }
        }
    }
}

fn collect_patterns(p: &Props, out: &mut HashMap<String, Option<Regex>>) {
    if !p.pattern.is_empty() && !out.contains_key(&p.pattern) {
        out.insert(p.pattern.clone(), Regex::new(&p.pattern).ok());
    }
    for c in p.properties.values() {
        collect_patterns(c, out);
    }
    if let Some(i) = &p.items {
        collect_patterns(i, out);
    }
    if let Some(a) = p.additional_schema() {
        collect_patterns(a, out);
    }
}

fn invalid(path: &str, v: &Value, detail: String) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid,
        field: path.into(),
        value: Some(v.clone()),
        detail,
    }
}

fn duplicate(path: &str, v: Value) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Duplicate,
        field: path.into(),
        value: Some(v),
        detail: String::new(),
    }
}

/// The JSON type name kube-openapi reports for a value.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_integer(v) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_error(path: &str, want: &str, v: &Value) -> FieldError {
    let actual = type_name(v);
    FieldError {
        kind: FieldErrorKind::Invalid,
        field: path.into(),
        value: Some(Value::from(actual)),
        detail: format!("{path} in body must be of type {want}: {actual:?}"),
    }
}

fn is_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => is_integer(v),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        _ => true,
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_equal(a, b)))
        }
        _ => a == b,
    }
}

/// Go's `%v` of a float64 bound in kube-openapi messages: `10`, `1.5`.
fn num(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn validate_number(v: &Value, s: &Props, path: &str, errs: &mut Vec<FieldError>) {
    let Some(x) = v.as_f64() else { return };
    if let Some(max) = s.maximum {
        if s.exclusive_maximum && x >= max {
            errs.push(invalid(
                path,
                v,
                format!("{path} in body should be less than {}", num(max)),
            ));
        } else if x > max {
            errs.push(invalid(
                path,
                v,
                format!(
                    "{path} in body should be less than or equal to {}",
                    num(max)
                ),
            ));
        }
    }
    if let Some(min) = s.minimum {
        if s.exclusive_minimum && x <= min {
            errs.push(invalid(
                path,
                v,
                format!("{path} in body should be greater than {}", num(min)),
            ));
        } else if x < min {
            errs.push(invalid(
                path,
                v,
                format!(
                    "{path} in body should be greater than or equal to {}",
                    num(min)
                ),
            ));
        }
    }
    if let Some(m) = s.multiple_of {
        if m != 0.0 && (x / m).fract().abs() > f64::EPSILON {
            errs.push(invalid(
                path,
                v,
                format!("{path} in body should be a multiple of {}", num(m)),
            ));
        }
    }
}

fn join(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

fn prune_object(
    m: &mut Map<String, Value>,
    s: &Props,
    path: &str,
    root: bool,
    removed: &mut Vec<String>,
) {
    let embedded = root || s.embedded_resource;
    let preserve = s.preserves_unknown();
    let additional = s.additional_schema();
    let keys: Vec<String> = m.keys().cloned().collect();
    for k in keys {
        if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            if k == "metadata" && !root {
                if let Some(Value::Object(meta)) = m.get_mut(&k) {
                    prune_embedded_meta(meta, &join(path, "metadata"), removed);
                }
            }
            continue;
        }
        let child_path = join(path, &k);
        if let Some(p) = s.properties.get(&k) {
            if let Some(v) = m.get_mut(&k) {
                prune_value(v, p, &child_path, removed);
            }
        } else if let Some(p) = additional {
            if let Some(v) = m.get_mut(&k) {
                prune_value(v, p, &child_path, removed);
            }
        } else if !preserve
            && !matches!(
                s.additional_properties,
                Some(crate::props::PropsOrBool::Bool(true))
            )
        {
            m.shift_remove(&k);
            removed.push(child_path);
        }
    }
}

/// The ObjectMeta fields an embedded resource's metadata may keep.
const EMBEDDED_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "labels",
    "annotations",
    "finalizers",
    "ownerReferences",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

fn prune_embedded_meta(meta: &mut Map<String, Value>, path: &str, removed: &mut Vec<String>) {
    let keys: Vec<String> = meta.keys().cloned().collect();
    for k in keys {
        if !EMBEDDED_META.contains(&k.as_str()) {
            meta.shift_remove(&k);
            removed.push(join(path, &k));
        }
    }
}

fn prune_value(v: &mut Value, s: &Props, path: &str, removed: &mut Vec<String>) {
    match v {
        Value::Object(m) => prune_object(m, s, path, false, removed),
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, item) in a.iter_mut().enumerate() {
                    prune_value(item, items, &format!("{path}[{i}]"), removed);
                }
            }
        }
        _ => {}
    }
}

fn default_value(v: &mut Value, s: &Props, root: bool) {
    match v {
        Value::Object(m) => {
            for (k, p) in &s.properties {
                if root && k == "metadata" {
                    continue;
                }
                let missing = match m.get(k) {
                    None => true,
                    Some(Value::Null) => !p.nullable,
                    Some(_) => false,
                };
                if missing {
                    if let Some(d) = &p.default {
                        m.insert(k.clone(), d.clone());
                    }
                }
                if let Some(child) = m.get_mut(k) {
                    default_value(child, p, false);
                }
            }
            if let Some(p) = s.additional_schema() {
                for (k, child) in m.iter_mut() {
                    if !s.properties.contains_key(k) {
                        default_value(child, p, false);
                    }
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for item in a.iter_mut() {
                    if item.is_null() && !items.nullable {
                        if let Some(d) = &items.default {
                            *item = d.clone();
                        }
                    }
                    default_value(item, items, false);
                }
            }
        }
        _ => {}
    }
}
