//! Label and field selectors on lists and watches
//! (`k8s.io/apimachinery/pkg/labels`, `pkg/fields`).
//!
//! A selector matches either a whole object or its [`Attrs`]: the labels and
//! selectable fields extracted once, which is what the watch cache keeps per
//! object instead of a parsed copy of it.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use keelson_apimachinery::ApiError;
use serde_json::Value;

mod label_parser;
use label_parser::Op;

/// One label requirement.
#[derive(Debug, Clone, PartialEq)]
enum Req {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
    /// `k>n`: the label parses as an integer greater than `n`.
    Gt(String, i64),
    /// `k<n`.
    Lt(String, i64),
}

/// A parsed label selector (all requirements must hold).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabelSelector(Vec<Req>);

impl LabelSelector {
    /// Parse a label selector (`a=b,c!=d,e in (f,g),h notin (i),j,!k,l>1`)
    /// as apimachinery's `labels.Parse` does, with its `400` wording.
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let reqs = label_parser::parse(s).map_err(ApiError::bad_request)?;
        Ok(LabelSelector(
            reqs.into_iter()
                .map(|(k, op, mut vs)| match op {
                    Op::Eq => Req::Eq(k, vs.pop().unwrap_or_default()),
                    Op::NotEq => Req::NotEq(k, vs.pop().unwrap_or_default()),
                    Op::In => Req::In(k, vs),
                    Op::NotIn => Req::NotIn(k, vs),
                    Op::Exists => Req::Exists(k),
                    Op::NotExists => Req::NotExists(k),
                    Op::Gt => Req::Gt(k, vs.pop().and_then(|v| v.parse().ok()).unwrap_or_default()),
                    Op::Lt => Req::Lt(k, vs.pop().and_then(|v| v.parse().ok()).unwrap_or_default()),
                })
                .collect(),
        ))
    }

    /// Whether an object's labels satisfy the selector.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        self.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(|v| v.as_str()))
    }

    /// Whether extracted labels satisfy the selector.
    pub fn matches_attrs(&self, attrs: &Attrs) -> bool {
        self.matches_with(|k| attrs.label(k))
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| match r {
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::NotEq(k, v) => get(k) != Some(v.as_str()),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
            Req::Gt(k, n) => get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *n),
            Req::Lt(k, n) => get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *n),
        })
    }
}

/// Resources with their own field-label converters and the fields they allow
/// beyond `metadata.name` / `metadata.namespace`: the built-in strategies'
/// `selectable_fields`, read from code so that a process extracting
/// attributes (the watch cache) does not parse the whole catalog. A resource
/// added at runtime selects on `metadata.name` and `metadata.namespace` only.
fn type_fields(group: &str, resource: &str) -> Option<&'static [&'static str]> {
    keelson_registry::builtin_selectable_fields(group, resource)
}

/// What a custom resource can be selected on: kube's CR field-label
/// converter allows `metadata.name`, `metadata.namespace` when the resource
/// is namespaced, and the CRD's `selectableFields` (their `jsonPath`
/// without the leading dot).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomFields {
    /// Whether the resource is namespaced.
    pub namespaced: bool,
    /// `selectableFields` of the served versions, as selector labels.
    pub fields: Vec<String>,
}

type CustomRegistry = RwLock<HashMap<(String, String), Arc<CustomFields>>>;

/// The custom resources this process serves, by group and plural; kept by
/// each process's CRD catalog follower (like the Table printer's columns),
/// read when a selector is parsed.
fn custom_registry() -> &'static CustomRegistry {
    static REGISTRY: OnceLock<CustomRegistry> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Register (`Some`) or forget (`None`) a custom resource's selectable
/// fields.
pub fn set_custom_fields(group: &str, resource: &str, fields: Option<CustomFields>) {
    let mut reg = match custom_registry().write() {
        Ok(r) => r,
        Err(poisoned) => poisoned.into_inner(),
    };
    let key = (group.to_string(), resource.to_string());
    match fields {
        Some(f) => {
            reg.insert(key, Arc::new(f));
        }
        None => {
            reg.remove(&key);
        }
    }
}

fn custom_fields(group: &str, resource: &str) -> Option<Arc<CustomFields>> {
    let reg = match custom_registry().read() {
        Ok(r) => r,
        Err(poisoned) => poisoned.into_inner(),
    };
    reg.get(&(group.to_string(), resource.to_string())).cloned()
}

/// One field requirement.
#[derive(Debug, Clone, PartialEq)]
struct FieldReq {
    field: String,
    value: String,
    negate: bool,
}

/// A parsed field selector.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldSelector(Vec<FieldReq>);

impl FieldSelector {
    /// Parse and check the fields against what the resource supports.
    pub fn parse(s: &str, group: &str, resource: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(FieldSelector(reqs));
        }
        // apimachinery's `fields.ParseSelector` skips empty terms
        // (`a=b,` is `a=b`); label selectors do not.
        for part in s.split(',').filter(|p| !p.is_empty()) {
            let (field, value, negate) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{}'; can't understand '{}'",
                    s, part
                )));
            };
            let field = field.trim().to_string();
            let known = field == "metadata.name" || field == "metadata.namespace";
            if let Some(custom) = custom_fields(group, resource) {
                let allowed = field == "metadata.name"
                    || (custom.namespaced && field == "metadata.namespace")
                    || custom.fields.contains(&field);
                if !allowed {
                    return Err(ApiError::bad_request(format!(
                        "field label not supported: {field}"
                    )));
                }
            } else if !known {
                match type_fields(group, resource) {
                    Some(fields) if fields.contains(&field.as_str()) => {}
                    Some(_) => {
                        return Err(ApiError::bad_request(format!(
                            "field label not supported: {}",
                            field
                        )))
                    }
                    None => {
                        return Err(ApiError::bad_request(format!(
                            "{:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                            field
                        )))
                    }
                }
            }
            reqs.push(FieldReq {
                field,
                value: value.trim().to_string(),
                negate,
            });
        }
        Ok(FieldSelector(reqs))
    }

    /// Whether an object satisfies the selector.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|r| {
            let v = field_value(obj, &r.field);
            (v == r.value) != r.negate
        })
    }

    /// Whether extracted fields satisfy the selector (`attrs` must come from
    /// [`Attrs::of`] for the same resource).
    pub fn matches_attrs(&self, attrs: &Attrs) -> bool {
        self.0
            .iter()
            .all(|r| (attrs.field(&r.field) == r.value) != r.negate)
    }

    /// Like [`Self::matches_attrs`], for fields the attributes do not
    /// carry (a custom resource's `selectableFields`) reading the object
    /// that `object` yields, at most once.
    pub fn matches_cached(&self, attrs: &Attrs, object: impl FnOnce() -> Option<Value>) -> bool {
        let mut object = Some(object);
        let mut parsed: Option<Option<Value>> = None;
        self.0.iter().all(|r| {
            let v = match attrs.carried(&r.field) {
                Some(v) => v.to_string(),
                None => parsed
                    .get_or_insert_with(|| object.take().and_then(|f| f()))
                    .as_ref()
                    .map(|o| field_value(o, &r.field))
                    .unwrap_or_default(),
            };
            (v == r.value) != r.negate
        })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The labels and selectable fields of one object, extracted once so that
/// selectors can be matched without the object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attrs {
    labels: Vec<(Box<str>, Box<str>)>,
    /// `metadata.name`, `metadata.namespace`, then the resource's own
    /// selectable fields, in [`type_fields`] order.
    fields: Vec<Box<str>>,
    resource_fields: &'static [&'static str],
}

impl Attrs {
    /// Extract the labels and the fields `group`/`resource` can select on.
    pub fn of(group: &str, resource: &str, obj: &Value) -> Attrs {
        let labels = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str().into(), v.into())))
                    .collect()
            })
            .unwrap_or_default();
        let resource_fields = type_fields(group, resource).unwrap_or(&[]);
        let fields = ["metadata.name", "metadata.namespace"]
            .into_iter()
            .chain(resource_fields.iter().copied())
            .map(|f| field_value(obj, f).into_boxed_str())
            .collect();
        Attrs {
            labels,
            fields,
            resource_fields,
        }
    }

    fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    fn field(&self, field: &str) -> &str {
        self.carried(field).unwrap_or("")
    }

    /// The value of a field these attributes carry; `None` for a field
    /// they were not extracted with.
    fn carried(&self, field: &str) -> Option<&str> {
        let at = match field {
            "metadata.name" => Some(0),
            "metadata.namespace" => Some(1),
            f => self
                .resource_fields
                .iter()
                .position(|x| *x == f)
                .map(|i| i + 2),
        };
        at.and_then(|i| self.fields.get(i)).map(|s| &**s)
    }
}

fn field_value(obj: &Value, field: &str) -> String {
    if field == "source" {
        return obj
            .pointer("/source/component")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
    }
    let ptr = format!("/{}", field.replace('.', "/"));
    match obj.pointer(&ptr) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Array(a)) => a
            .first()
            .and_then(|x| x.get("ip"))
            .and_then(|x| x.as_str())
            .unwrap_or("")
            .to_string(),
        _ => {
            // Booleans that are unset read as "false", as kube's field sets do.
            if field == "spec.hostNetwork" || field == "spec.unschedulable" {
                "false".into()
            } else {
                String::new()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_grammar() {
        let o = json!({"metadata": {"labels": {"app": "x", "tier": "web"}}});
        for (sel, want) in [
            ("app=x", true),
            ("app==x", true),
            ("app!=x", false),
            ("app in (x,y)", true),
            ("app notin (x)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing,app=x", true),
            ("app=x,tier=db", false),
        ] {
            let sel_ = LabelSelector::parse(sel).unwrap();
            assert_eq!(sel_.matches(&o), want, "{sel}");
            assert_eq!(
                sel_.matches_attrs(&Attrs::of("", "configmaps", &o)),
                want,
                "{sel}"
            );
        }
        assert_eq!(LabelSelector::parse("a b").unwrap_err().code, 400);
    }

    #[test]
    fn field_rules() {
        let pod = json!({"metadata": {"name": "p"}, "status": {"phase": "Running"}});
        assert!(FieldSelector::parse("status.phase=Running", "", "pods")
            .unwrap()
            .matches(&pod));
        assert!(!FieldSelector::parse("metadata.name!=p", "", "pods")
            .unwrap()
            .matches(&pod));
        let attrs = Attrs::of("", "pods", &pod);
        for (sel, want) in [
            ("status.phase=Running", true),
            ("status.phase!=Running", false),
            ("metadata.name=p,spec.hostNetwork=false", true),
            ("metadata.namespace=x", false),
            ("spec.nodeName=", true),
        ] {
            let f = FieldSelector::parse(sel, "", "pods").unwrap();
            assert_eq!(f.matches_attrs(&attrs), want, "{sel}");
            assert_eq!(f.matches(&pod), want, "{sel}");
        }
        assert_eq!(
            FieldSelector::parse("x=1", "", "pods").unwrap_err().message,
            "field label not supported: x"
        );
        assert_eq!(
            FieldSelector::parse("x=1", "", "configmaps")
                .unwrap_err()
                .message,
            "\"x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
    }

    #[test]
    fn field_selector_skips_empty_terms() {
        let pod = json!({"metadata": {"name": "kubernetes"}});
        for sel in [
            "metadata.name=kubernetes,",
            ",metadata.name=kubernetes",
            "metadata.name=kubernetes,,",
        ] {
            let f = FieldSelector::parse(sel, "", "pods").unwrap();
            assert!(f.matches(&pod), "{sel}");
            assert!(f.matches_attrs(&Attrs::of("", "pods", &pod)), "{sel}");
        }
        let f = FieldSelector::parse("metadata.name=other,", "", "pods").unwrap();
        assert!(!f.matches(&pod));
        assert_eq!(
            FieldSelector::parse("metadata.name=kubernetes, ", "", "pods")
                .unwrap_err()
                .message,
            "invalid selector: 'metadata.name=kubernetes, '; can't understand ' '"
        );
        // Label selectors keep rejecting an empty term.
        assert_eq!(
            LabelSelector::parse("app=x,").unwrap_err().message,
            "found '', expected: identifier after ','"
        );
    }

    #[test]
    fn custom_resource_fields() {
        set_custom_fields(
            "ops.example.com",
            "databases",
            Some(CustomFields {
                namespaced: true,
                fields: vec![
                    "spec.engine".into(),
                    "spec.replicas".into(),
                    "status.ready".into(),
                ],
            }),
        );
        set_custom_fields("ops.example.com", "clusters", Some(CustomFields::default()));
        let db = json!({"metadata": {"name": "a", "namespace": "n"},
            "spec": {"engine": "Postgres", "replicas": 3}, "status": {"ready": true}});
        let attrs = Attrs::of("ops.example.com", "databases", &db);
        for (sel, want) in [
            ("spec.engine=Postgres", true),
            ("spec.engine!=Postgres", false),
            ("spec.replicas=3,status.ready=true", true),
            ("spec.replicas=4", false),
            ("metadata.namespace=n,metadata.name=a", true),
        ] {
            let f = FieldSelector::parse(sel, "ops.example.com", "databases").unwrap();
            assert_eq!(f.matches_cached(&attrs, || Some(db.clone())), want, "{sel}");
            assert_eq!(f.matches(&db), want, "{sel}");
        }
        // An absent field is the empty string, as kube's GetAttrs gives it.
        let bare = json!({"metadata": {"name": "b", "namespace": "n"}});
        let f = FieldSelector::parse("spec.engine=", "ops.example.com", "databases").unwrap();
        assert!(
            f.matches_cached(&Attrs::of("ops.example.com", "databases", &bare), || Some(
                bare.clone()
            ))
        );
        // kube's CR field-label converter: everything else, and
        // metadata.namespace of a cluster-scoped resource, is refused.
        for (sel, resource) in [
            ("spec.version=1", "databases"),
            ("metadata.namespace=x", "clusters"),
            ("spec.engine=x", "clusters"),
        ] {
            assert_eq!(
                FieldSelector::parse(sel, "ops.example.com", resource)
                    .unwrap_err()
                    .message,
                format!(
                    "field label not supported: {}",
                    sel.split('=').next().unwrap()
                ),
            );
        }
        set_custom_fields("ops.example.com", "clusters", None);
        assert!(
            FieldSelector::parse("spec.engine=x", "ops.example.com", "clusters")
                .unwrap_err()
                .message
                .contains("is not a known field selector")
        );
    }
}
