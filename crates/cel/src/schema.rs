//! The parts of a structural schema (`openAPIV3Schema`) that CEL rules see:
//! types, bounds, list/map semantics and the rules themselves.
//!
//! Parsed once from JSON; knows nothing of evaluation.

use serde_json::Value as Json;
use std::sync::Arc;

/// One `x-kubernetes-validations` entry.
#[derive(Debug, Clone, Default)]
pub struct Rule {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
}

/// A schema node.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// `type` (empty for int-or-string and untyped preserve-unknown nodes).
    pub ty: String,
    pub format: String,
    pub properties: Vec<(String, Arc<Schema>)>,
    /// The CEL spelling of each property (aligned with `properties`; None
    /// when CEL cannot name it).
    pub cel_names: Vec<Option<Arc<str>>>,
    pub items: Option<Arc<Schema>>,
    pub additional_properties: Option<Arc<Schema>>,
    pub max_items: Option<u64>,
    pub max_length: Option<u64>,
    pub max_properties: Option<u64>,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub embedded_resource: bool,
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
    pub map_type: Option<String>,
    pub rules: Vec<Rule>,
}

impl Schema {
    /// Parses a JSON schema object (tolerant: unknown keys are ignored).
    pub fn from_json(v: &Json) -> Schema {
        let get_str = |k: &str| v.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let get_u64 = |k: &str| {
            v.get(k)
                .and_then(|n| n.as_i64().map(|i| i.max(0) as u64).or_else(|| n.as_u64()))
        };
        let get_bool = |k: &str| v.get(k).and_then(Json::as_bool).unwrap_or(false);
        let mut s = Schema {
            ty: get_str("type"),
            format: get_str("format"),
            max_items: get_u64("maxItems"),
            max_length: get_u64("maxLength"),
            max_properties: get_u64("maxProperties"),
            int_or_string: get_bool("x-kubernetes-int-or-string"),
            preserve_unknown: get_bool("x-kubernetes-preserve-unknown-fields"),
            embedded_resource: get_bool("x-kubernetes-embedded-resource"),
            list_type: v
                .get("x-kubernetes-list-type")
                .and_then(Json::as_str)
                .map(str::to_string),
            map_type: v
                .get("x-kubernetes-map-type")
                .and_then(Json::as_str)
                .map(str::to_string),
            ..Default::default()
        };
        if let Some(keys) = v.get("x-kubernetes-list-map-keys").and_then(Json::as_array) {
            s.list_map_keys = keys
                .iter()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect();
        }
        if let Some(props) = v.get("properties").and_then(Json::as_object) {
            for (k, p) in props {
                s.properties
                    .push((k.clone(), Arc::new(Schema::from_json(p))));
                s.cel_names.push(crate::escape::escape(k).map(Arc::from));
            }
        }
        if let Some(items) = v.get("items") {
            if items.is_object() {
                s.items = Some(Arc::new(Schema::from_json(items)));
            }
        }
        if let Some(ap) = v.get("additionalProperties") {
            if ap.is_object() {
                s.additional_properties = Some(Arc::new(Schema::from_json(ap)));
            } else if ap.as_bool() == Some(true) {
                s.additional_properties = Some(Arc::new(Schema {
                    preserve_unknown: true,
                    ..Default::default()
                }));
            }
        }
        if let Some(rules) = v.get("x-kubernetes-validations").and_then(Json::as_array) {
            for r in rules {
                let get = |k: &str| r.get(k).and_then(Json::as_str).unwrap_or("").to_string();
                s.rules.push(Rule {
                    rule: get("rule"),
                    message: get("message"),
                    message_expression: get("messageExpression"),
                    reason: r.get("reason").and_then(Json::as_str).map(str::to_string),
                    field_path: get("fieldPath"),
                    optional_old_self: r.get("optionalOldSelf").and_then(Json::as_bool),
                });
            }
        }
        s
    }

    /// The schema of property `name`, if declared.
    pub fn property(&self, name: &str) -> Option<&Arc<Schema>> {
        self.properties
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, s)| s)
    }

    /// The schema and CEL name of property `name`, if declared.
    pub fn property_with_name(&self, name: &str) -> Option<(&Arc<Schema>, Option<&Arc<str>>)> {
        let i = self.properties.iter().position(|(k, _)| k == name)?;
        Some((
            &self.properties[i].1,
            self.cel_names.get(i).and_then(Option::as_ref),
        ))
    }

    /// A map (object with additionalProperties and no properties).
    pub fn is_map(&self) -> bool {
        self.ty == "object" && self.properties.is_empty() && self.additional_properties.is_some()
    }
}
