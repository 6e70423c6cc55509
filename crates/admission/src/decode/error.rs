//! Decoding failures worded like Go's `encoding/json` and the custom
//! unmarshalers of Kubernetes types.

/// Why a value cannot be decoded into its Go type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// `encoding/json.UnmarshalTypeError` with its struct/field context.
    #[error("{}", type_message(.value, .go_struct, .field, .go_type))]
    Type {
        /// What was found: `number`, `string`, `number 1.5`, `object`...
        value: String,
        /// The innermost Go struct (`DeploymentSpec`).
        go_struct: String,
        /// Dotted JSON path without indices (`spec.replicas`).
        field: String,
        /// The Go type expected (`int32`, `v1.PodSpec`).
        go_type: String,
    },
    /// `resource.ErrFormatWrong`.
    #[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    QuantityFormat,
    /// `resource.ErrSuffix`.
    #[error("unable to parse quantity's suffix")]
    QuantitySuffix,
    /// `base64.CorruptInputError` for `[]byte` fields.
    #[error("illegal base64 data at input byte {0}")]
    Base64(usize),
}

fn type_message(value: &str, go_struct: &str, field: &str, go_type: &str) -> String {
    if go_struct.is_empty() && field.is_empty() {
        format!("json: cannot unmarshal {value} into Go value of type {go_type}")
    } else {
        format!("json: cannot unmarshal {value} into Go struct field {go_struct}.{field} of type {go_type}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_wording() {
        let e = DecodeError::Type {
            value: "number".into(),
            go_struct: "ConfigMap".into(),
            field: "data".into(),
            go_type: "string".into(),
        };
        assert_eq!(
            e.to_string(),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        let e = DecodeError::Type {
            value: "array".into(),
            go_struct: String::new(),
            field: String::new(),
            go_type: "v1.ConfigMap".into(),
        };
        assert_eq!(
            e.to_string(),
            "json: cannot unmarshal array into Go value of type v1.ConfigMap"
        );
        assert_eq!(
            DecodeError::Base64(4).to_string(),
            "illegal base64 data at input byte 4"
        );
    }
}
