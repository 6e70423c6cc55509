//! The call site for `x-kubernetes-validations` (CEL) rules: the schema's
//! rules compiled by `keelson-cel` (see [`Compiled::with_cel`]).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use crate::values::Compiled;

/// Evaluate the schema's CEL rules on `object` (with `old` on update,
/// for transition rules and ratcheting) and return one field error per
/// failed rule.
pub fn validate_cel(schema: &Compiled, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    match &schema.cel {
        Some(rules) => rules.validate(object, old),
        None => Vec::new(),
    }
}
