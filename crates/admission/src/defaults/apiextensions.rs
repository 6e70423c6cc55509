//! `apiextensions.k8s.io/v1` defaults
//! (`k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/defaults.go`):
//! a CRD's `names.singular` (the lower-cased kind) and `names.listKind`
//! (`<kind>List`), `conversion: {strategy: None}`, and port 443 of a
//! conversion webhook's service.

use serde_json::Value;

use super::{child, object_at, or_set, or_set_str};

/// CustomResourceDefinition: the spec's names, conversion and webhook port.
pub(super) fn custom_resource_definition(obj: &mut Value) {
    let Some(spec) = object_at(obj, &["spec"]) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        // Go leaves an empty string empty (and omits it when encoding).
        if !kind.is_empty() {
            or_set_str(names, "singular", &kind.to_lowercase());
            or_set_str(names, "listKind", &format!("{kind}List"));
        }
    }
    let Some(conversion) = child(spec, "conversion") else {
        return;
    };
    if conversion.is_empty() {
        conversion.insert("strategy".into(), Value::from("None"));
    }
    if let Some(service) = conversion
        .get_mut("webhook")
        .and_then(|w| w.get_mut("clientConfig"))
        .and_then(|c| c.get_mut("service"))
        .and_then(Value::as_object_mut)
    {
        or_set(service, "port", 443);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn names_conversion_and_port() {
        let mut crd = json!({"spec": {"names": {"plural": "dbs", "kind": "Database"}}});
        super::custom_resource_definition(&mut crd);
        assert_eq!(
            crd["spec"],
            json!({"names": {"plural": "dbs", "kind": "Database", "singular": "database", "listKind": "DatabaseList"},
                   "conversion": {"strategy": "None"}})
        );
        let mut crd = json!({"spec": {"names": {"kind": "A", "singular": "x", "listKind": "Y"},
            "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}}}});
        super::custom_resource_definition(&mut crd);
        assert_eq!(
            crd["spec"]["names"],
            json!({"kind": "A", "singular": "x", "listKind": "Y"})
        );
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"],
            443
        );
    }
}
