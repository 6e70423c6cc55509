//! The `--store-endpoint` flag of every service that calls the store.

use serde::{Deserialize, Serialize};

/// Default store endpoint.
pub const DEFAULT_STORE_ENDPOINT: &str = "http://127.0.0.1:7001";

/// Where the store service is: flattened (for clap and serde alike) into
/// the flags of every service that calls it, so the flag, its
/// `KEELSON_STORE_ENDPOINT` variable and its `store-endpoint` config-file
/// key are declared once.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct StoreEndpointFlags {
    /// Store service endpoint, or the store replicas' endpoints
    /// comma-separated (a replica that is down is skipped)
    /// [default: http://127.0.0.1:7001]
    #[arg(long, env = "KEELSON_STORE_ENDPOINT", value_name = "URL[,URL...]")]
    pub store_endpoint: Option<String>,
}

impl StoreEndpointFlags {
    /// The endpoint given, or [`DEFAULT_STORE_ENDPOINT`].
    pub fn endpoint(self) -> String {
        self.store_endpoint
            .unwrap_or_else(|| DEFAULT_STORE_ENDPOINT.to_string())
    }
}
