//! Field validation as kube-apiserver's decoder does it: unknown and
//! duplicate fields, wrong JSON types, and dropping what Go structs cannot
//! hold.

mod error;
mod raw;
mod scalar;
mod walk;

use serde_json::Value;

pub use error::DecodeError;
pub(crate) use raw::RawNode;
use walk::Seg;

use crate::registry::Schema;
use crate::schema::Definitions;

/// The result of decoding an object against its schema.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Report {
    /// Strict-decoding items (`unknown field "spec.foo"`), de-duplicated, in
    /// document order.
    pub strict: Vec<String>,
    /// The first value that cannot be decoded; always fatal.
    pub error: Option<DecodeError>,
}

/// Check `object` against `root` (definition `root_def`), dropping unknown
/// fields from it. `raw`, the body as received, is used for duplicate keys
/// and document order when it is JSON.
pub(crate) fn decode(
    defs: &dyn Definitions,
    root: &Schema,
    root_def: &str,
    object: &mut Value,
    raw: Option<&[u8]>,
) -> Report {
    let seen = walk::walk(defs, root, root_def, &RawNode::from_value(object));
    for path in &seen.unknown {
        remove(object, path);
    }
    let mut report = Report {
        strict: seen.strict,
        error: seen.error,
    };
    if let Some(node) = raw.and_then(|r| RawNode::parse(r).ok()) {
        let from_raw = walk::walk(defs, root, root_def, &node);
        report.strict = from_raw.strict;
        if from_raw.error.is_some() {
            report.error = from_raw.error;
        }
    }
    let mut unique = Vec::with_capacity(report.strict.len());
    for item in report.strict.drain(..) {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    report.strict = unique;
    report
}

/// Remove the value at `path` (a no-op if it is not there).
fn remove(v: &mut Value, path: &[Seg]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for seg in parents {
        let next = match (seg, cur) {
            (Seg::Key(k), Value::Object(m)) => m.get_mut(k),
            (Seg::Index(i), Value::Array(a)) => a.get_mut(*i),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let (Seg::Key(k), Value::Object(m)) = (last, cur) {
        m.shift_remove(k);
    }
}
