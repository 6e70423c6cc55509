//! The schema walk that mirrors kube-apiserver's strict JSON decoding into Go
//! structs: it reports unknown and duplicate fields (with kube's paths, in
//! document order), the first type mismatch (with Go's wording), and where
//! the unknown fields are so they can be dropped.

use std::collections::HashSet;

use serde_json::Number;

use super::error::DecodeError;
use super::raw::RawNode;
use super::scalar::{check_base64, check_quantity};
use crate::registry::Schema;
use crate::schema::{go_definition_name, go_type, resolve, Definitions, Shape};

/// One step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// What one walk found.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// `unknown field "spec.foo"` / `duplicate field "metadata.name"`, in
    /// document order.
    pub strict: Vec<String>,
    /// The first value that cannot be decoded.
    pub error: Option<DecodeError>,
    /// Where the unknown fields are.
    pub unknown: Vec<Vec<Seg>>,
}

/// Position in the walk: the Go error context and the strict-error path.
#[derive(Default)]
struct Ctx {
    /// The innermost Go struct (`Container`).
    go_struct: String,
    /// Go's field stack: dotted, no indices, no map keys.
    go_field: String,
    /// kube's strict path: `spec.containers[0].name`.
    strict: String,
    segs: Vec<Seg>,
}

struct Walker<'a> {
    defs: &'a dyn Definitions,
    out: Outcome,
}

/// Walk `node` against the root schema of definition `root_def`.
pub(crate) fn walk(
    defs: &dyn Definitions,
    root: &Schema,
    root_def: &str,
    node: &RawNode,
) -> Outcome {
    let mut w = Walker {
        defs,
        out: Outcome::default(),
    };
    let mut ctx = Ctx {
        go_struct: root_def.rsplit('.').next().unwrap_or(root_def).to_string(),
        ..Ctx::default()
    };
    match node {
        RawNode::Object(_) => w.node(node, root, &mut ctx),
        other => {
            // No struct context at the top: `Go value of type v1.Pod`.
            w.out.error = Some(DecodeError::Type {
                value: kind_of(other).into(),
                go_struct: String::new(),
                field: String::new(),
                go_type: go_definition_name(root_def),
            })
        }
    }
    w.out
}

fn kind_of(n: &RawNode) -> &'static str {
    match n {
        RawNode::Null => "null",
        RawNode::Bool(_) => "bool",
        RawNode::Number(_) => "number",
        RawNode::String(_) => "string",
        RawNode::Array(_) => "array",
        RawNode::Object(_) => "object",
    }
}

fn fits_int(n: &Number, format: Option<&str>) -> bool {
    match (n.as_i64(), format) {
        (Some(i), Some("int32")) => i32::try_from(i).is_ok(),
        (Some(_), _) => true,
        (None, _) => false,
    }
}

impl Walker<'_> {
    fn type_error(&mut self, ctx: &Ctx, value: String, go_type: String) {
        if self.out.error.is_none() {
            self.out.error = Some(DecodeError::Type {
                value,
                go_struct: ctx.go_struct.clone(),
                field: ctx.go_field.clone(),
                go_type,
            });
        }
    }

    fn error(&mut self, e: DecodeError) {
        if self.out.error.is_none() {
            self.out.error = Some(e);
        }
    }

    fn node(&mut self, node: &RawNode, schema: &Schema, ctx: &mut Ctx) {
        if matches!(node, RawNode::Null) {
            return; // Go leaves the zero value.
        }
        let r = resolve(self.defs, schema);
        match (r.shape(), node) {
            (Shape::Any, _) => self.duplicates_only(node, ctx),
            (Shape::IntOrString, RawNode::String(_)) => {}
            (Shape::IntOrString, RawNode::Number(n)) if fits_int(n, Some("int32")) => {}
            (Shape::IntOrString, RawNode::Number(n)) => {
                self.type_error(ctx, format!("number {n}"), "int32".into())
            }
            (Shape::IntOrString, other) => {
                self.type_error(ctx, kind_of(other).into(), "int32".into())
            }
            (Shape::Quantity, RawNode::String(s)) => {
                if let Err(e) = check_quantity(s) {
                    self.error(e)
                }
            }
            (Shape::Quantity, RawNode::Number(_)) => {}
            (Shape::Quantity, _) => self.error(DecodeError::QuantityFormat),
            (Shape::Time | Shape::String, RawNode::String(_)) => {}
            (Shape::Time, other) => self.type_error(ctx, kind_of(other).into(), "string".into()),
            (Shape::Bytes, RawNode::String(s)) => {
                if let Err(e) = check_base64(s) {
                    self.error(e)
                }
            }
            (Shape::Integer, RawNode::Number(n)) if fits_int(n, r.schema.format.as_deref()) => {}
            (Shape::Integer, RawNode::Number(n)) => {
                let t = go_type(self.defs, schema);
                self.type_error(ctx, format!("number {n}"), t)
            }
            (Shape::Number, RawNode::Number(_)) | (Shape::Boolean, RawNode::Bool(_)) => {}
            (Shape::Array, RawNode::Array(items)) => {
                let Some(item_schema) = r.schema.items.as_deref() else {
                    return;
                };
                self.items(items, ctx, |w, item, ctx| w.node(item, item_schema, ctx));
            }
            (Shape::Struct, RawNode::Object(entries)) => {
                let name = r.struct_name().map(str::to_string);
                let saved = match name {
                    Some(n) => std::mem::replace(&mut ctx.go_struct, n),
                    None => ctx.go_struct.clone(),
                };
                self.fields(entries, r.schema, ctx);
                ctx.go_struct = saved;
            }
            (Shape::Map, RawNode::Object(entries)) => {
                let Some(value_schema) = r.schema.additional_properties.as_deref() else {
                    return;
                };
                self.map_entries(entries, ctx, |w, v, ctx| w.node(v, value_schema, ctx));
            }
            (_, other) => {
                let t = go_type(self.defs, schema);
                self.type_error(ctx, kind_of(other).into(), t)
            }
        }
    }

    /// The fields of a Go struct.
    fn fields(&mut self, entries: &[(String, RawNode)], schema: &Schema, ctx: &mut Ctx) {
        let mut seen = HashSet::new();
        for (k, v) in entries {
            let first = seen.insert(k.as_str());
            let known = schema.properties.get(k);
            let (s_len, f_len) = push_key(ctx, k, true);
            match known {
                Some(child) => {
                    if !first {
                        self.duplicate_field(ctx);
                    }
                    self.node(v, child, ctx);
                }
                None if first => {
                    self.out
                        .strict
                        .push(format!("unknown field {:?}", ctx.strict));
                    self.out.unknown.push(ctx.segs.clone());
                }
                None => {}
            }
            pop_key(ctx, s_len, f_len);
        }
    }

    /// Free-form values: Go decodes them into maps, which still reject
    /// duplicate keys.
    fn duplicates_only(&mut self, node: &RawNode, ctx: &mut Ctx) {
        match node {
            RawNode::Object(entries) => {
                self.map_entries(entries, ctx, |w, v, ctx| w.duplicates_only(v, ctx))
            }
            RawNode::Array(items) => {
                self.items(items, ctx, |w, item, ctx| w.duplicates_only(item, ctx))
            }
            _ => {}
        }
    }

    /// The entries of a Go map (keys are not struct fields): each value
    /// walked by `value`, a key seen twice reported as a duplicate field.
    fn map_entries(
        &mut self,
        entries: &[(String, RawNode)],
        ctx: &mut Ctx,
        mut value: impl FnMut(&mut Self, &RawNode, &mut Ctx),
    ) {
        let mut seen = HashSet::new();
        for (k, v) in entries {
            let (s_len, _) = push_key(ctx, k, false);
            if !seen.insert(k.as_str()) {
                self.duplicate_field(ctx);
            }
            value(self, v, ctx);
            pop_key(ctx, s_len, None);
        }
    }

    /// The items of an array, each walked by `item` at its `[i]` path.
    fn items(
        &mut self,
        items: &[RawNode],
        ctx: &mut Ctx,
        mut item: impl FnMut(&mut Self, &RawNode, &mut Ctx),
    ) {
        for (i, node) in items.iter().enumerate() {
            let len = ctx.strict.len();
            ctx.strict.push_str(&format!("[{i}]"));
            ctx.segs.push(Seg::Index(i));
            item(self, node, ctx);
            ctx.segs.pop();
            ctx.strict.truncate(len);
        }
    }

    /// `duplicate field "PATH"` at the current path.
    fn duplicate_field(&mut self, ctx: &Ctx) {
        self.out
            .strict
            .push(format!("duplicate field {:?}", ctx.strict));
    }
}

/// Enter key `k`; struct fields also extend Go's field stack (map keys do
/// not). Returns the lengths to restore.
fn push_key(ctx: &mut Ctx, k: &str, struct_field: bool) -> (usize, Option<usize>) {
    let s_len = ctx.strict.len();
    if !ctx.strict.is_empty() {
        ctx.strict.push('.');
    }
    ctx.strict.push_str(k);
    ctx.segs.push(Seg::Key(k.to_string()));
    let f_len = struct_field.then(|| {
        let len = ctx.go_field.len();
        if !ctx.go_field.is_empty() {
            ctx.go_field.push('.');
        }
        ctx.go_field.push_str(k);
        len
    });
    (s_len, f_len)
}

fn pop_key(ctx: &mut Ctx, s_len: usize, f_len: Option<usize>) {
    ctx.strict.truncate(s_len);
    ctx.segs.pop();
    if let Some(l) = f_len {
        ctx.go_field.truncate(l);
    }
}
