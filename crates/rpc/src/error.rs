//! Errors of the rpc plumbing itself (not API errors, which are `ApiError`).

/// Setting up a client or serving failed.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The endpoint is not a valid `http://host:port` URI.
    #[error("invalid endpoint {endpoint:?}: {source}")]
    InvalidEndpoint {
        endpoint: String,
        #[source]
        source: tonic::transport::Error,
    },
    /// A client over several replicas was given none.
    #[error("no {service} endpoints given")]
    NoEndpoints { service: &'static str },
    /// A lazy channel was requested outside a Tokio runtime.
    #[error("a gRPC channel needs a running Tokio runtime")]
    NoRuntime,
    /// The gRPC server failed.
    #[error("gRPC server error: {0}")]
    Serve(#[from] tonic::transport::Error),
}

impl From<RpcError> for keelson_runtime::ServiceError {
    fn from(e: RpcError) -> Self {
        keelson_runtime::ServiceError::failed(e)
    }
}
