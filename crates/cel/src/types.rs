//! Static types of CEL expressions over a schema, and the worst-case
//! sizes cel-go's cost estimator reasons with: a string's `maxLength`×4
//! bytes, a list's `maxItems`, a map's `maxProperties`, or what fits in
//! kube's 3 MiB request when unbounded.

use crate::schema::Schema;
use std::sync::Arc;

/// kube's request size limit, the bound of anything unbounded.
pub const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;

/// A static type.
#[derive(Debug, Clone)]
pub enum Ty {
    Dyn,
    Bool,
    Int,
    Uint,
    Double,
    Str,
    Bytes,
    Null,
    List(Box<Ty>),
    Map(Box<Ty>),
    /// A schema node (`true` when it is a resource root: apiVersion/kind/metadata).
    Schema(Arc<Schema>, bool),
    Timestamp,
    Duration,
    Optional(Box<Ty>),
    Opaque,
    /// A declared object type (`kubernetes.AdmissionRequest`, ...): its
    /// name and fields.
    Object(Arc<ObjectTy>),
    /// A type of the authorizer library.
    Authz(crate::library::authz::Kind),
}

/// A declared object type: a name and typed fields.
#[derive(Debug, Clone)]
pub struct ObjectTy {
    pub name: String,
    pub fields: Vec<(String, Ty)>,
    /// Any field name is allowed, each dyn (kube's untyped `Object` types).
    pub open: bool,
}

impl Ty {
    /// The type of data validated by `s`.
    pub fn resolve(&self) -> Ty {
        let Ty::Schema(s, root) = self else {
            return self.clone();
        };
        if s.int_or_string {
            return Ty::Dyn;
        }
        match s.ty.as_str() {
            "string" => match s.format.as_str() {
                "date-time" => Ty::Timestamp,
                "duration" => Ty::Duration,
                "byte" => Ty::Bytes,
                _ => Ty::Str,
            },
            "integer" => Ty::Int,
            "number" => Ty::Double,
            "boolean" => Ty::Bool,
            "array" => Ty::List(Box::new(
                s.items
                    .clone()
                    .map(|i| Ty::Schema(i, false))
                    .unwrap_or(Ty::Dyn),
            )),
            "object" if s.is_map() => Ty::Map(Box::new(
                s.additional_properties
                    .clone()
                    .map(|i| Ty::Schema(i, false))
                    .unwrap_or(Ty::Dyn),
            )),
            "object" => Ty::Schema(s.clone(), *root),
            _ => Ty::Dyn,
        }
    }

    pub fn name(&self) -> &'static str {
        match self.resolve() {
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Double => "double",
            Ty::Str => "string",
            Ty::Bytes => "bytes",
            Ty::Null => "null_type",
            Ty::List(_) => "list",
            Ty::Map(_) | Ty::Schema(..) => "map",
            Ty::Timestamp => "google.protobuf.Timestamp",
            Ty::Duration => "google.protobuf.Duration",
            Ty::Optional(_) => "optional_type",
            Ty::Authz(k) => k.type_name(),
            Ty::Object(_) => "object",
            _ => "dyn",
        }
    }
}

/// The smallest JSON serialization of a value of this schema.
pub fn min_serialized_size(s: &Schema) -> u64 {
    if s.int_or_string {
        return 1;
    }
    match s.ty.as_str() {
        "integer" | "number" => 1,
        "boolean" => 4,
        "string" | "array" | "object" => 2,
        _ => 1,
    }
}

/// How many values of `s` fit in one request, the cardinality of a node
/// below an unbounded list or map.
pub fn max_cardinality(s: &Schema) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_serialized_size(s) + 1)
}

/// The maximum size (length or count) of a value of `ty`.
pub fn schema_size(ty: &Ty) -> u64 {
    let Ty::Schema(s, _) = ty else {
        return 1;
    };
    let unbounded = MAX_REQUEST_SIZE_BYTES - 2;
    match s.ty.as_str() {
        // maxLength counts code points; CEL sizes are bytes, up to 4 a code point
        "string" => s
            .max_length
            .map(|l| l.saturating_mul(4))
            .unwrap_or(unbounded),
        "array" => s.max_items.unwrap_or_else(|| {
            let item = s.items.as_deref().map(min_serialized_size).unwrap_or(1);
            unbounded / (item + 1)
        }),
        "object" => s.max_properties.unwrap_or_else(|| {
            if s.is_map() {
                let v = s
                    .additional_properties
                    .as_deref()
                    .map(min_serialized_size)
                    .unwrap_or(1);
                unbounded / (v + 4)
            } else {
                s.properties.len() as u64
            }
        }),
        _ => 1,
    }
}

/// A typed, costed expression.
#[derive(Debug, Clone)]
pub struct Est {
    pub ty: Ty,
    /// Worst-case cost.
    pub cost: u64,
    /// Worst-case size (string length, list or map size).
    pub size: u64,
}

impl Est {
    pub fn new(ty: Ty, cost: u64) -> Est {
        let size = schema_size(&ty);
        Est { ty, cost, size }
    }
    pub fn sized(ty: Ty, cost: u64, size: u64) -> Est {
        Est { ty, cost, size }
    }
}
