//! `keelson-watch`: a watch-cache replica. Follows the store's change stream
//! and serves [`keelson_api::WatchCacheApi`] (lists and watches) over gRPC.
//! Replicas are independent: run as many as the read load needs and give
//! the gateway all of them (`--watch-endpoints`).
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7004` |
//! | `--store-endpoint URL` | `KEELSON_STORE_ENDPOINT` | `store-endpoint` | `http://127.0.0.1:7001` |
//! | `--history N` | `KEELSON_HISTORY` | `history` | `10000` |
//! | `--history-bytes N` | `KEELSON_HISTORY_BYTES` | `history-bytes` | `67108864` (64 MiB) |
//! | `--watcher-buffer N` | `KEELSON_WATCHER_BUFFER` | `watcher-buffer` | `1024` |
//! | `--config FILE` | `KEELSON_CONFIG` | | none |
//!
//! `history` is how many changes per resource the cache keeps for watches
//! that resume from an older revision and for paged lists, `history-bytes`
//! how much object JSON those changes may hold; `watcher-buffer`
//! how many events a watcher may fall behind before it is closed. The
//! optional `--config` file is TOML whose keys are the flag names.
//! Precedence: defaults < config file < environment < flags. The store is
//! dialled lazily and the cache re-lists after losing it. Port `0` picks a
//! free port; the bound address is printed on stdout as
//! `listening on 127.0.0.1:PORT`. Logs go to stderr (`RUST_LOG`, default
//! `info`). SIGTERM or ctrl-c drains in-flight calls and exits 0.
#![forbid(unsafe_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use clap::Parser;
use keelson_rpc::{RemoteStore, WatchCacheGrpc};
use keelson_runtime::{bind_and_announce, CommonFlags};
use keelson_watchcache::{LocalWatchCache, WatchCacheConfig};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7004";
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
    /// Cache sizes.
    pub cache: WatchCacheConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7004)),
            store_endpoint: DEFAULT_STORE_ENDPOINT.to_string(),
            cache: WatchCacheConfig::default(),
        }
    }
}

/// Command line (each flag also read from `KEELSON_<FLAG>` and, by its
/// name, from the `--config` file).
#[derive(Debug, Parser, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[command(
    name = "keelson-watch",
    version,
    about = "Keelson watch service (a watch-cache replica serving lists and watches)"
)]
pub struct Cli {
    /// Store service endpoint [default: http://127.0.0.1:7001]
    #[arg(long, env = "KEELSON_STORE_ENDPOINT", value_name = "URL")]
    pub store_endpoint: Option<String>,
    /// Changes kept per resource [default: 10000]
    #[arg(long, env = "KEELSON_HISTORY", value_name = "N")]
    pub history: Option<usize>,
    /// Bytes of object JSON kept in each resource's history [default: 64 MiB]
    #[arg(long, env = "KEELSON_HISTORY_BYTES", value_name = "N")]
    pub history_bytes: Option<usize>,
    /// Events a watcher may fall behind before it is closed [default: 1024]
    #[arg(long, env = "KEELSON_WATCHER_BUFFER", value_name = "N")]
    pub watcher_buffer: Option<usize>,
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
        let mut cache = defaults.cache;
        cache.history = cli.history.unwrap_or(cache.history);
        cache.history_bytes = cli.history_bytes.unwrap_or(cache.history_bytes);
        cache.watcher_buffer = cli.watcher_buffer.unwrap_or(cache.watcher_buffer);
        Config {
            listen: cli.common.listen.unwrap_or(defaults.listen),
            store_endpoint: cli.store_endpoint.unwrap_or(defaults.store_endpoint),
            cache,
        }
    }
}

/// Bind `config.listen`, announce it, and serve until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind_and_announce("watch", config.listen).await?;
    serve(&config, listener, shutdown).await
}

/// Serve on an already bound listener until `shutdown` completes.
pub async fn serve(
    config: &Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let store = Arc::new(RemoteStore::connect_lazy(&config.store_endpoint)?);
    tracing::info!(store = %config.store_endpoint, "watch cache following the remote store");
    let cache = Arc::new(LocalWatchCache::new(store, config.cache));
    // Open watches end as soon as shutdown starts; the gateway resumes them
    // on another replica.
    let (trigger, draining) = keelson_rpc::draining();
    let grpc = WatchCacheGrpc::new(cache).with_draining(draining);
    let router = tonic::transport::Server::builder().add_service(grpc.into_server());
    keelson_rpc::serve_with_drain(listener, router, shutdown, trigger).await?;
    tracing::info!("watch service stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_runtime::ServiceFlags as _;

    fn parse(args: &[&str]) -> Result<Config, ServiceError> {
        let mut argv = vec!["keelson-watch"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap().into_config()
    }

    #[test]
    fn defaults() {
        let cfg = parse(&[]).unwrap();
        assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(cfg.store_endpoint, DEFAULT_STORE_ENDPOINT);
        assert_eq!(cfg.cache, WatchCacheConfig::default());
    }

    #[test]
    fn flags_beat_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watch.toml");
        std::fs::write(
            &path,
            "listen = \"0.0.0.0:7004\"\nstore-endpoint = \"http://store:7001\"\nhistory = 50\nhistory-bytes = 1000\nwatcher-buffer = 7\n",
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let cfg = parse(&["--config", p]).unwrap();
        assert_eq!(cfg.listen.to_string(), "0.0.0.0:7004");
        assert_eq!(cfg.store_endpoint, "http://store:7001");
        assert_eq!(
            (
                cfg.cache.history,
                cfg.cache.history_bytes,
                cfg.cache.watcher_buffer
            ),
            (50, 1000, 7)
        );
        let cfg = parse(&[
            "--config",
            p,
            "--history",
            "9",
            "--store-endpoint",
            "http://x:1",
        ])
        .unwrap();
        assert_eq!(
            (cfg.cache.history, cfg.store_endpoint.as_str()),
            (9, "http://x:1")
        );
    }

    #[test]
    fn unknown_config_keys_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("watch.toml");
        std::fs::write(&path, "histroy = 1\n").unwrap();
        let err = parse(&["--config", path.to_str().unwrap()]).unwrap_err();
        assert!(err.to_string().contains("unknown field `histroy`"), "{err}");
    }
}
