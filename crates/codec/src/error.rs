//! Errors of encoding and framing (never of a client's request: those are
//! Kubernetes `Status` errors built where the request is read).

use keelson_apimachinery::ApiError;

use crate::format::Format;

/// An encoding or framing failure.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The format exists in Kubernetes but Keelson does not write it yet.
    #[error("the {0} format is not served yet")]
    NotServed(Format),
    /// JSON encoding or decoding failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// YAML encoding failed.
    #[error("yaml: {0}")]
    Yaml(String),
    /// An object has not the shape the conversion needs.
    #[error("{0}")]
    Shape(&'static str),
    /// A length-delimited frame is longer than the limit.
    #[error("a frame of {len} bytes exceeds the limit of {limit} bytes")]
    FrameTooLarge { len: usize, limit: usize },
    /// The object cannot be shown as the target asks (a list as
    /// `PartialObjectMetadata`, an object as a list): kube's `406` message.
    #[error("{0}")]
    NotAcceptable(String),
    /// The object cannot be written as Kubernetes Protobuf.
    #[error("{0}")]
    Protobuf(#[from] crate::protobuf::EncodeError),
}

impl From<CodecError> for ApiError {
    /// Encoding our own objects should not fail: a server error.
    fn from(e: CodecError) -> ApiError {
        match e {
            CodecError::NotServed(_) => ApiError::not_acceptable(crate::negotiate::NOT_ACCEPTABLE),
            CodecError::NotAcceptable(message) => ApiError::not_acceptable(message),
            // kube's errNotMarshalable (a kind without a Protobuf message).
            CodecError::Protobuf(e @ crate::protobuf::EncodeError::NotMarshalable(_)) => {
                ApiError::not_acceptable(e.to_string())
            }
            other => ApiError::internal(other.to_string()),
        }
    }
}
