//! CEL values, and the conversion of JSON data into them along a schema
//! (kube's `UnstructuredToVal`): `integer` is an int even when written `1.0`,
//! `number` a double, `date-time`/`duration`/`byte` strings are timestamps,
//! durations and bytes, and object property names are escaped.

use crate::escape::escape;
use crate::library::quantity::Quantity;
use crate::schema::Schema;
use chrono::{DateTime, FixedOffset};
use serde_json::Value as Json;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A map key (CEL keys are ints, uints, bools or strings).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Str(Arc<str>),
}

impl Key {
    /// The key as a value.
    pub fn to_value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::Str(s) => Value::Str(s.clone()),
        }
    }
}

/// A map or object: entries in insertion order are not needed by CEL, so a
/// sorted map keeps equality and iteration deterministic.
pub type MapData = BTreeMap<Key, Value>;

/// A CEL value.
#[derive(Debug, Clone)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(Arc<str>),
    Bytes(Arc<[u8]>),
    /// A list; `set` is true for `x-kubernetes-list-type: set|map`, whose
    /// equality ignores order.
    List(Arc<Vec<Value>>, bool),
    /// A map or a schema object (`object` is true: field names are escaped).
    Map(Arc<MapData>, bool),
    Timestamp(DateTime<FixedOffset>),
    Duration(chrono::Duration),
    Type(Arc<str>),
    Optional(Option<Box<Value>>),
    Quantity(Arc<Quantity>),
    Url(Arc<url::Url>),
    Ip(std::net::IpAddr),
    Cidr(ipnet::IpNet),
    Semver(Arc<semver::Version>),
    Format(Arc<str>),
    /// A value of the authorizer library (`kubernetes.authorization.*`).
    Authz(Arc<crate::library::authz::AuthzValue>),
    /// An object built by `Type{field: value}`: MutatingAdmissionPolicy's
    /// `Object{...}`, `Object.spec{...}` and `JSONPatch{...}`.
    Object(Arc<ObjectVal>),
}

/// A constructed object: its type name and the fields it was given.
#[derive(Debug, Clone)]
pub struct ObjectVal {
    pub type_name: Arc<str>,
    pub fields: BTreeMap<Arc<str>, Value>,
}

impl Value {
    /// A string value.
    pub fn str(s: impl Into<Arc<str>>) -> Value {
        Value::Str(s.into())
    }

    /// A plain list.
    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Arc::new(v), false)
    }

    /// The CEL type name, as `type()` and error messages show it.
    pub fn type_name(&self) -> &str {
        match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::Str(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::List(..) => "list",
            Value::Map(..) => "map",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Quantity(_) => "kubernetes.Quantity",
            Value::Url(_) => "kubernetes.URL",
            Value::Ip(_) => "net.IP",
            Value::Cidr(_) => "net.CIDR",
            Value::Semver(_) => "kubernetes.Semver",
            Value::Format(_) => "kubernetes.NamedFormat",
            Value::Authz(a) => a.kind().type_name(),
            Value::Object(o) => &o.type_name,
        }
    }

    /// The size used by cost accounting (string length, list/map length).
    pub fn cost_size(&self) -> u64 {
        match self {
            Value::Str(s) => s.len() as u64,
            Value::Bytes(b) => b.len() as u64,
            Value::List(l, _) => l.len() as u64,
            Value::Map(m, _) => m.len() as u64,
            Value::Object(o) => o.fields.len() as u64,
            _ => 1,
        }
    }

    /// Converts to a map key.
    pub fn to_key(&self) -> Option<Key> {
        match self {
            Value::Bool(b) => Some(Key::Bool(*b)),
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Uint(u) => Some(Key::Uint(*u)),
            Value::Str(s) => Some(Key::Str(s.clone())),
            _ => None,
        }
    }

    /// CEL equality (numbers compare across int/uint/double).
    pub fn equals(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Str(a), Str(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (Int(_) | Uint(_) | Double(_), Int(_) | Uint(_) | Double(_)) => {
                num_cmp(self, other) == Some(Ordering::Equal)
            }
            (List(a, sa), List(b, sb)) => {
                if a.len() != b.len() {
                    return false;
                }
                if *sa || *sb {
                    // list-type set/map: equal regardless of order
                    let mut used = vec![false; b.len()];
                    a.iter().all(|x| {
                        for (i, y) in b.iter().enumerate() {
                            if !used[i] && x.equals(y) {
                                used[i] = true;
                                return true;
                            }
                        }
                        false
                    })
                } else {
                    a.iter().zip(b.iter()).all(|(x, y)| x.equals(y))
                }
            }
            (Map(a, _), Map(b, _)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v.equals(w)))
            }
            (Timestamp(a), Timestamp(b)) => a == b,
            (Duration(a), Duration(b)) => a == b,
            (Type(a), Type(b)) => a == b,
            (Optional(a), Optional(b)) => match (a, b) {
                (None, None) => true,
                (Some(x), Some(y)) => x.equals(y),
                _ => false,
            },
            (Quantity(a), Quantity(b)) => a.cmp_to(b) == Ordering::Equal,
            (Url(a), Url(b)) => a == b,
            (Ip(a), Ip(b)) => a == b,
            (Cidr(a), Cidr(b)) => a == b,
            (Semver(a), Semver(b)) => a == b,
            (Format(a), Format(b)) => a == b,
            (Object(a), Object(b)) => {
                a.type_name == b.type_name
                    && a.fields.len() == b.fields.len()
                    && a.fields
                        .iter()
                        .all(|(k, v)| b.fields.get(k).is_some_and(|w| v.equals(w)))
            }
            _ => false,
        }
    }

    /// CEL ordering for `<`, `>`, ... (None when not comparable).
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        use Value::*;
        match (self, other) {
            (Int(_) | Uint(_) | Double(_), Int(_) | Uint(_) | Double(_)) => num_cmp(self, other),
            (Str(a), Str(b)) => Some(a.cmp(b)),
            (Bytes(a), Bytes(b)) => Some(a.cmp(b)),
            (Bool(a), Bool(b)) => Some(a.cmp(b)),
            (Timestamp(a), Timestamp(b)) => Some(a.cmp(b)),
            (Duration(a), Duration(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

impl Value {
    /// The value as JSON, as kube serializes a mutation's result (cel-go's
    /// conversion to `structpb.Value`): bytes are base64, timestamps
    /// RFC 3339, map keys must be strings; an error names what cannot be.
    pub fn to_json(&self) -> Result<Json, String> {
        Ok(match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Uint(u) => Json::from(*u),
            Value::Double(d) => serde_json::Number::from_f64(*d)
                .map(Json::Number)
                .ok_or_else(|| format!("unsupported value: {d}"))?,
            Value::Str(s) => Json::String(s.to_string()),
            Value::Bytes(b) => {
                use base64::Engine as _;
                Json::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::List(items, _) => {
                Json::Array(items.iter().map(Value::to_json).collect::<Result<_, _>>()?)
            }
            Value::Map(m, _) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m.iter() {
                    let Key::Str(k) = k else {
                        return Err(format!(
                            "map key {:?} is of type {}, not string",
                            k.to_value().to_json().unwrap_or_default(),
                            k.to_value().type_name()
                        ));
                    };
                    out.insert(k.to_string(), v.to_json()?);
                }
                Json::Object(out)
            }
            Value::Object(o) => {
                let mut out = serde_json::Map::new();
                for (k, v) in &o.fields {
                    out.insert(k.to_string(), v.to_json()?);
                }
                Json::Object(out)
            }
            Value::Timestamp(t) => {
                Json::String(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
            }
            Value::Optional(Some(v)) => v.to_json()?,
            other => return Err(format!("unsupported type: {}", other.type_name())),
        })
    }
}

fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Uint(x), Uint(y)) => Some(x.cmp(y)),
        (Int(x), Uint(y)) => Some(if *x < 0 {
            Ordering::Less
        } else {
            (*x as u64).cmp(y)
        }),
        (Uint(_), Int(_)) => num_cmp(b, a).map(Ordering::reverse),
        (Double(x), Double(y)) => x.partial_cmp(y),
        (Double(x), Int(y)) => x.partial_cmp(&(*y as f64)),
        (Double(x), Uint(y)) => x.partial_cmp(&(*y as f64)),
        (Int(_) | Uint(_), Double(_)) => num_cmp(b, a).map(Ordering::reverse),
        _ => None,
    }
}

/// Converts JSON data to a CEL value along `schema` (`root` adds the
/// resource-root view of `metadata`: only `name` and `generateName`).
pub fn from_json(v: &Json, schema: Option<&Schema>, root: bool) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => {
            let ty = schema.map(|s| s.ty.as_str()).unwrap_or("");
            if ty == "number" {
                return Value::Double(n.as_f64().unwrap_or(0.0));
            }
            if let Some(i) = n.as_i64() {
                return Value::Int(i);
            }
            if let Some(u) = n.as_u64() {
                return Value::Uint(u);
            }
            let f = n.as_f64().unwrap_or(0.0);
            // `integer`, int-or-string and untyped data written as 1.0 is an int
            let int_like =
                ty == "integer" || ty.is_empty() || schema.is_some_and(|s| s.int_or_string);
            if int_like && f.fract() == 0.0 && f.abs() < 9.2e18 {
                Value::Int(f as i64)
            } else {
                Value::Double(f)
            }
        }
        Json::String(s) => {
            if let Some(sc) = schema {
                if sc.ty == "string" {
                    match sc.format.as_str() {
                        "date-time" => {
                            if let Ok(t) = DateTime::parse_from_rfc3339(s) {
                                return Value::Timestamp(t);
                            }
                        }
                        "duration" => {
                            if let Ok(d) = crate::library::time::parse_duration(s) {
                                return Value::Duration(d);
                            }
                        }
                        "byte" => {
                            use base64::Engine as _;
                            if let Ok(b) = base64::engine::general_purpose::STANDARD.decode(s) {
                                return Value::Bytes(b.into());
                            }
                        }
                        _ => {}
                    }
                }
            }
            Value::str(s.as_str())
        }
        Json::Array(items) => {
            let item_schema = schema.and_then(|s| s.items.as_deref());
            let set =
                schema.is_some_and(|s| matches!(s.list_type.as_deref(), Some("set") | Some("map")));
            Value::List(
                Arc::new(
                    items
                        .iter()
                        .map(|i| from_json(i, item_schema, false))
                        .collect(),
                ),
                set,
            )
        }
        Json::Object(map) => {
            let mut out = MapData::new();
            let Some(s) = schema else {
                for (k, v) in map {
                    out.insert(Key::Str(k.as_str().into()), from_json(v, None, false));
                }
                return Value::Map(Arc::new(out), false);
            };
            if !s.properties.is_empty()
                || s.embedded_resource
                || root
                || (s.additional_properties.is_none() && !s.preserve_unknown)
            {
                let resource = root || s.embedded_resource;
                for (k, v) in map {
                    // null-valued fields are absent to CEL
                    if v.is_null() {
                        continue;
                    }
                    let prop = s.property_with_name(k);
                    if resource && (k == "apiVersion" || k == "kind") {
                        out.insert(Key::Str(k.as_str().into()), from_json(v, None, false));
                        continue;
                    }
                    if resource && k == "metadata" {
                        out.insert(Key::Str("metadata".into()), resource_meta(v));
                        continue;
                    }
                    let Some(prop) = prop else {
                        if s.preserve_unknown && !resource {
                            if let Some(name) = escape(k) {
                                out.insert(Key::Str(name.into()), from_json(v, None, false));
                            }
                        }
                        continue;
                    };
                    // properties whose names cannot be escaped are invisible to CEL
                    if let (prop, Some(name)) = prop {
                        out.insert(Key::Str(name.clone()), from_json(v, Some(prop), false));
                    }
                }
                Value::Map(Arc::new(out), true)
            } else {
                let vs = s.additional_properties.as_deref();
                for (k, v) in map {
                    out.insert(Key::Str(k.as_str().into()), from_json(v, vs, false));
                }
                Value::Map(Arc::new(out), false)
            }
        }
    }
}

/// `metadata` of a resource as CEL sees it: `name` and `generateName` only.
fn resource_meta(v: &Json) -> Value {
    let mut out = MapData::new();
    if let Some(m) = v.as_object() {
        for k in ["name", "generateName"] {
            if let Some(Json::String(s)) = m.get(k) {
                out.insert(Key::Str(k.into()), Value::str(s.as_str()));
            }
        }
    }
    Value::Map(Arc::new(out), true)
}
