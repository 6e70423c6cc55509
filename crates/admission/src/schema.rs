//! Schema access: the catalog lookups admission needs, `$ref` resolution and
//! the Go type names kube-apiserver's decoder prints in its errors.

use crate::registry::{CatalogSnapshot, ResourceInfo, Schema};

/// Definitions whose Go types decode with custom rules.
pub(crate) const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
pub(crate) const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const TIME_DEFS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
];
const RAW_DEFS: &[&str] = &[
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
];

/// How a value of a schema is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Anything goes (raw extensions, untyped, preserve-unknown-fields).
    Any,
    IntOrString,
    Quantity,
    Time,
    String,
    /// `[]byte`: a base64 string.
    Bytes,
    Integer,
    Number,
    Boolean,
    Array,
    /// A Go struct: known properties only.
    Struct,
    /// A Go map: free-form keys.
    Map,
}

/// A schema with its `$ref`s followed, and the definition it came from.
#[derive(Clone, Copy)]
pub(crate) struct Resolved<'a> {
    pub schema: &'a Schema,
    /// The last definition name followed, if any.
    pub definition: Option<&'a str>,
}

/// Resolves definition names to schemas (the catalog, or a test map).
pub(crate) trait Definitions {
    /// The schema of a definition.
    fn get(&self, name: &str) -> Option<&Schema>;
}

impl Definitions for CatalogSnapshot {
    fn get(&self, name: &str) -> Option<&Schema> {
        self.definition(name)
    }
}

/// Follow `reference` links (bounded, so a cycle cannot hang us).
pub(crate) fn resolve<'a>(defs: &'a dyn Definitions, schema: &'a Schema) -> Resolved<'a> {
    let mut cur = Resolved {
        schema,
        definition: None,
    };
    for _ in 0..16 {
        let Some(name) = cur.schema.reference.as_deref() else {
            break;
        };
        match defs.get(name) {
            Some(s) => {
                cur = Resolved {
                    schema: s,
                    definition: Some(name),
                }
            }
            None => break,
        }
    }
    cur
}

impl<'a> Resolved<'a> {
    /// How values of this schema decode.
    pub fn shape(&self) -> Shape {
        if let Some(d) = self.definition {
            if d == INT_OR_STRING {
                return Shape::IntOrString;
            }
            if d == QUANTITY {
                return Shape::Quantity;
            }
            if TIME_DEFS.contains(&d) {
                return Shape::Time;
            }
            if RAW_DEFS.contains(&d) {
                return Shape::Any;
            }
        }
        let s = self.schema;
        if s.int_or_string {
            return Shape::IntOrString;
        }
        if s.preserve_unknown_fields {
            return Shape::Any;
        }
        match s.type_.as_deref() {
            Some("string") if s.format.as_deref() == Some("byte") => Shape::Bytes,
            Some("string") if s.format.as_deref() == Some("int-or-string") => Shape::IntOrString,
            Some("string") => Shape::String,
            Some("integer") => Shape::Integer,
            Some("number") => Shape::Number,
            Some("boolean") => Shape::Boolean,
            Some("array") => Shape::Array,
            Some("object") | None if !s.properties.is_empty() => Shape::Struct,
            Some("object") if s.additional_properties.is_some() => Shape::Map,
            _ => Shape::Any,
        }
    }

    /// The Go struct name of this schema's definition (`DeploymentSpec`).
    pub fn struct_name(&self) -> Option<&'a str> {
        self.definition.map(|d| d.rsplit('.').next().unwrap_or(d))
    }
}

/// Go's `reflect.Type.String()` for a definition: `v1.PodSpec`.
pub(crate) fn go_definition_name(def: &str) -> String {
    let mut parts = def.rsplit('.');
    let name = parts.next().unwrap_or(def);
    match parts.next() {
        Some(pkg) => format!("{}.{}", pkg, name),
        None => name.to_string(),
    }
}

/// Go's type name of a value decoded with this schema, as printed in
/// `json: cannot unmarshal ... of type <T>`.
pub(crate) fn go_type(defs: &dyn Definitions, schema: &Schema) -> String {
    go_type_depth(defs, schema, 0)
}

fn go_type_depth(defs: &dyn Definitions, schema: &Schema, depth: usize) -> String {
    let r = resolve(defs, schema);
    let named = || r.definition.map(go_definition_name);
    match r.shape() {
        _ if depth > 8 => "interface {}".into(),
        Shape::Struct => named().unwrap_or_else(|| "struct {}".into()),
        Shape::IntOrString => "intstr.IntOrString".into(),
        Shape::Quantity => "resource.Quantity".into(),
        Shape::Time | Shape::Any => named().unwrap_or_else(|| "interface {}".into()),
        Shape::Array => match r.schema.items.as_deref() {
            Some(items) => format!("[]{}", go_type_depth(defs, items, depth + 1)),
            None => "[]interface {}".into(),
        },
        Shape::Map => match r.schema.additional_properties.as_deref() {
            Some(v) => format!("map[string]{}", go_type_depth(defs, v, depth + 1)),
            None => "map[string]interface {}".into(),
        },
        Shape::String | Shape::Bytes | Shape::Integer | Shape::Number | Shape::Boolean => {
            primitive(r.schema)
        }
    }
}

fn primitive(s: &Schema) -> String {
    match (s.type_.as_deref(), s.format.as_deref()) {
        (Some("string"), Some("byte")) => "[]uint8",
        (Some("string"), _) => "string",
        (Some("integer"), Some("int32")) => "int32",
        (Some("integer"), _) => "int64",
        (Some("number"), Some("float")) => "float32",
        (Some("number"), _) => "float64",
        (Some("boolean"), _) => "bool",
        _ => "interface {}",
    }
    .to_string()
}

/// The resource and root schema an admission request is about.
pub(crate) struct Target<'a> {
    pub info: Option<&'a ResourceInfo>,
    /// Root schema and its definition name, when the object is the
    /// resource's own kind (not e.g. a `Scale` on `/scale`).
    pub root: Option<(&'a Schema, &'a str)>,
}

/// Look up the resource of `group`/`api_version`/`resource` and the schema
/// of `kind` in one catalog generation.
pub(crate) fn target<'a>(
    cat: &'a CatalogSnapshot,
    group: &str,
    api_version: &str,
    resource: &str,
    kind: &str,
) -> Target<'a> {
    let version = api_version.rsplit('/').next().unwrap_or(api_version);
    let info = cat.lookup(group, version, resource);
    let root = info
        .filter(|i| i.kind == kind || kind.is_empty())
        .and_then(|i| {
            cat.definition(&i.definition)
                .map(|s| (s, i.definition.as_str()))
        });
    Target { info, root }
}
