//! `keelson-merge`: serves [`keelson_api::MergeApi`] (patch formats and
//! Server-Side Apply) over gRPC. Stateless; scale freely.
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7003` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! The optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. Port `0` picks
//! a free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c drains in-flight calls and exits 0.
#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use clap::Parser;
use keelson_rpc::MergeGrpc;
use keelson_runtime::{bind_and_announce, CommonFlags};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7003";

pub use keelson_runtime::ServiceError;

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// gRPC listen address.
    pub listen: SocketAddr,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7003)),
        }
    }
}

/// Command line (each flag also read from `KEELSON_<FLAG>` and, by its
/// name, from the `--config` file).
#[derive(Debug, Parser, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[command(
    name = "keelson-merge",
    version,
    about = "Keelson merge service (patches, Server-Side Apply)"
)]
pub struct Cli {
    /// `--listen` and `--config`.
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonFlags,
}

keelson_runtime::service_flags!(Cli => Config);

impl From<Cli> for Config {
    /// The flags, with the defaults where unset.
    fn from(cli: Cli) -> Config {
        Config {
            listen: cli.common.listen.unwrap_or(Config::default().listen),
        }
    }
}

/// Bind `config.listen`, announce it, and serve until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind_and_announce("merge", config.listen).await?;
    serve(listener, shutdown).await
}

/// Serve on an already bound listener until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let merge = Arc::new(keelson_merge::LocalMerge::new());
    let router = tonic::transport::Server::builder().add_service(MergeGrpc::server(merge));
    keelson_rpc::serve(listener, router, shutdown).await?;
    tracing::info!("merge service stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_runtime::ServiceFlags as _;

    #[test]
    fn defaults() {
        let cfg = Cli::try_parse_from(["keelson-merge"])
            .unwrap()
            .into_config()
            .unwrap();
        assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
    }

    #[test]
    fn flag_beats_file_beats_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("merge.toml");
        std::fs::write(&path, "listen = \"127.0.0.1:9000\"\n").unwrap();
        let p = path.to_str().unwrap();
        let cfg = Cli::try_parse_from(["keelson-merge", "--config", p])
            .unwrap()
            .into_config()
            .unwrap();
        assert_eq!(cfg.listen.to_string(), "127.0.0.1:9000");
        let cfg = Cli::try_parse_from(["keelson-merge", "--config", p, "--listen", "0.0.0.0:1"])
            .unwrap()
            .into_config()
            .unwrap();
        assert_eq!(cfg.listen.to_string(), "0.0.0.0:1");
    }

    #[test]
    fn bad_config_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("merge.toml");
        std::fs::write(&path, "lisen = \"x\"\n").unwrap();
        let err = Cli::try_parse_from(["keelson-merge", "--config", path.to_str().unwrap()])
            .unwrap()
            .into_config()
            .unwrap_err();
        assert!(err.to_string().contains("unknown field `lisen`"), "{err}");

        std::fs::write(&path, "listen = \"nowhere\"\n").unwrap();
        let err = Cli::try_parse_from(["keelson-merge", "--config", path.to_str().unwrap()])
            .unwrap()
            .into_config()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid listen \"nowhere\": invalid socket address syntax"
        );
    }
}
