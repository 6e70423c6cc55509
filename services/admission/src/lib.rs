//! `keelson-admission`: serves [`keelson_api::AdmissionApi`] (defaulting,
//! validation, admission) over gRPC. Stateless; scale freely. Reads
//! namespaces through a remote store.
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7002` |
//! | `--store-endpoint URL` | `KEELSON_STORE_ENDPOINT` | `store-endpoint` | `http://127.0.0.1:7001` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! The optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. The store is
//! dialled lazily, so this service may start before the store and
//! reconnects after it restarts (calls meanwhile fail with `503`). Port `0`
//! picks a free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c drains in-flight calls and exits 0.
#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use clap::Parser;
use keelson_rpc::{AdmissionGrpc, RemoteStore};
use keelson_runtime::{bind_and_announce, CommonFlags};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7002";
/// Default store endpoint.
pub const DEFAULT_STORE_ENDPOINT: &str = "http://127.0.0.1:7001";

pub use keelson_runtime::ServiceError;

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// gRPC listen address.
    pub listen: SocketAddr,
    /// The store service, `http://host:port`.
    pub store_endpoint: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7002)),
            store_endpoint: DEFAULT_STORE_ENDPOINT.to_string(),
        }
    }
}

/// Command line (each flag also read from `KEELSON_<FLAG>` and, by its
/// name, from the `--config` file).
#[derive(Debug, Parser, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[command(
    name = "keelson-admission",
    version,
    about = "Keelson admission service (defaulting, validation, admission)"
)]
pub struct Cli {
    /// Store service endpoint [default: http://127.0.0.1:7001]
    #[arg(long, env = "KEELSON_STORE_ENDPOINT", value_name = "URL")]
    pub store_endpoint: Option<String>,
    /// `--listen` and `--config`.
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonFlags,
}

keelson_runtime::service_flags!(Cli => Config);

impl From<Cli> for Config {
    /// The flags, with the defaults where unset.
    fn from(cli: Cli) -> Config {
        let defaults = Config::default();
        Config {
            listen: cli.common.listen.unwrap_or(defaults.listen),
            store_endpoint: cli.store_endpoint.unwrap_or(defaults.store_endpoint),
        }
    }
}

/// Bind `config.listen`, announce it, and serve until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind_and_announce("admission", config.listen).await?;
    serve(&config, listener, shutdown).await
}

/// Serve on an already bound listener until `shutdown` completes.
pub async fn serve(
    config: &Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let store = Arc::new(RemoteStore::connect_lazy(&config.store_endpoint)?);
    tracing::info!(store = %config.store_endpoint, "using remote store");
    // The built-in resources; resources added at runtime reach this process
    // once CustomResourceDefinitions are read from the store.
    let admission = Arc::new(keelson_admission::LocalAdmission::new(
        store,
        keelson_registry::Catalog::builtin(),
    ));
    let router = tonic::transport::Server::builder().add_service(AdmissionGrpc::server(admission));
    keelson_rpc::serve(listener, router, shutdown).await?;
    tracing::info!("admission service stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_runtime::ServiceFlags as _;

    fn parse(args: &[&str]) -> Result<Config, ServiceError> {
        let mut argv = vec!["keelson-admission"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap().into_config()
    }

    #[test]
    fn defaults() {
        let cfg = parse(&[]).unwrap();
        assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(cfg.store_endpoint, "http://127.0.0.1:7001");
    }

    #[test]
    fn flags_beat_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("admission.toml");
        std::fs::write(
            &path,
            "listen = \"0.0.0.0:7002\"\nstore-endpoint = \"http://store:7001\"\n",
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let cfg = parse(&["--config", p]).unwrap();
        assert_eq!(cfg.listen.to_string(), "0.0.0.0:7002");
        assert_eq!(cfg.store_endpoint, "http://store:7001");
        let cfg = parse(&["--config", p, "--store-endpoint", "http://10.0.0.1:1"]).unwrap();
        assert_eq!(cfg.listen.to_string(), "0.0.0.0:7002");
        assert_eq!(cfg.store_endpoint, "http://10.0.0.1:1");
    }

    #[tokio::test]
    async fn a_bad_store_endpoint_is_a_startup_error() {
        let config = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            store_endpoint: "not a url".into(),
        };
        let listener = TcpListener::bind(config.listen).await.unwrap();
        let err = serve(&config, listener, async {}).await.unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid endpoint \"not a url\""),
            "{err}"
        );
    }
}
