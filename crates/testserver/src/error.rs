//! The test server's error type.

/// Why a test server did not start, or a client could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TestServerError {
    /// Writing the temporary directory failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Keelson did not start (bad flags, bind, credentials).
    #[error("keelson did not start: {0}")]
    Start(String),
    /// A kubeconfig could not be read or turned into a client config.
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    /// The API answered an error (preloading, a client).
    #[error(transparent)]
    Kube(#[from] kube::Error),
    /// A preload document is not a Kubernetes object.
    #[error("YAML document {index}: {message}")]
    Yaml {
        /// Position of the document in its stream (from 0).
        index: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Something the server should have done in time did not happen.
    #[error("timed out: {0}")]
    Timeout(String),
}
