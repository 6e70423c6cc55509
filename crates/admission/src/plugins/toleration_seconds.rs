//! DefaultTolerationSeconds (`plugin/pkg/admission/defaulttolerationseconds`):
//! a pod that tolerates neither `node.kubernetes.io/not-ready` nor
//! `node.kubernetes.io/unreachable` `NoExecute` taints gets tolerations for
//! them, for 300 s (kube's `--default-not-ready-toleration-seconds` and
//! `--default-unreachable-toleration-seconds`), on create and update.

use serde_json::{json, Value};

use super::util::{objects, spec_mut};
use super::{Attrs, PluginConfig};

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Whether one of `tolerations` covers the `NoExecute` taint `key` (an
/// empty key or effect matches all).
fn tolerates(tolerations: &[&serde_json::Map<String, Value>], key: &str) -> bool {
    tolerations.iter().any(|t| {
        let k = t.get("key").and_then(Value::as_str).unwrap_or("");
        let e = t.get("effect").and_then(Value::as_str).unwrap_or("");
        (k == key || k.is_empty()) && (e == "NoExecute" || e.is_empty())
    })
}

/// The mutating phase.
pub(crate) fn admit(a: &Attrs<'_>, config: &PluginConfig, pod: &mut Value) {
    if !a.is("", "pods") || a.req.operation == keelson_api::Operation::Delete {
        return;
    }
    let tolerations = objects(pod, &["spec", "tolerations"]);
    let add: Vec<Value> = [
        (NOT_READY, config.not_ready_toleration_seconds),
        (UNREACHABLE, config.unreachable_toleration_seconds),
    ]
    .into_iter()
    .filter(|(key, _)| !tolerates(&tolerations, key))
    .map(|(key, seconds)| {
        json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds})
    })
    .collect();
    if add.is_empty() {
        return;
    }
    let Some(spec) = spec_mut(pod) else { return };
    match spec.get_mut("tolerations").and_then(Value::as_array_mut) {
        Some(list) => list.extend(add),
        None => {
            spec.insert("tolerations".into(), Value::Array(add));
        }
    }
}
