//! The start-up and run error every service shares.

use std::net::SocketAddr;
use std::path::PathBuf;

/// A boxed error from the layer a service is built on (gRPC, storage).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a service could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The config file could not be read or parsed.
    #[error("config file {path}: {source}")]
    ConfigFile {
        path: PathBuf,
        #[source]
        source: BoxError,
    },
    /// A configured value is invalid.
    #[error("invalid {key} {value:?}: {reason}")]
    InvalidValue {
        key: String,
        value: String,
        reason: String,
    },
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The service itself failed (its server, its backends).
    #[error(transparent)]
    Failed(BoxError),
}

impl ServiceError {
    /// Wrap any error of the service's own layers.
    pub fn failed(e: impl Into<BoxError>) -> Self {
        ServiceError::Failed(e.into())
    }
}
