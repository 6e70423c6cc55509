//! TaintNodesByCondition (`plugin/pkg/admission/nodetaint`): a node is
//! created with the `node.kubernetes.io/not-ready:NoSchedule` taint (the
//! node lifecycle controller removes it once the node is ready).

use serde_json::{json, Value};

use super::util::{child, objects};
use super::Attrs;

const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// The mutating phase.
pub(crate) fn admit(a: &Attrs<'_>, node: &mut Value) {
    if !a.is("", "nodes") || a.req.operation != keelson_api::Operation::Create {
        return;
    }
    let present = objects(node, &["spec", "taints"]).iter().any(|t| {
        t.get("key").and_then(Value::as_str) == Some(NOT_READY)
            && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    });
    if present {
        return;
    }
    let Some(root) = node.as_object_mut() else {
        return;
    };
    let Some(spec) = child(root, "spec") else {
        return;
    };
    let taint = json!({"key": NOT_READY, "effect": "NoSchedule"});
    match spec.get_mut("taints").and_then(Value::as_array_mut) {
        Some(list) => list.push(taint),
        None => {
            spec.insert("taints".into(), Value::Array(vec![taint]));
        }
    }
}
