//! `keelson-admission`: serves [`keelson_api::AdmissionApi`] (defaulting,
//! validation, admission) over gRPC. Stateless; scale freely. Reads
//! namespaces through a remote store.
//!
//! # Configuration
//!
//! | flag | env | config file key | default |
//! |---|---|---|---|
//! | `--listen ADDR` | `KEELSON_LISTEN` | `listen` | `127.0.0.1:7002` |
//! | `--metrics-bind-address ADDR` (`0`: off) | `KEELSON_METRICS_BIND_ADDRESS` | `metrics-bind-address` | `127.0.0.1:9002` (the `--listen` port + 2000) |
//! | `--store-endpoint URL[,URL...]` (store replicas; a replica that is down is skipped) | `KEELSON_STORE_ENDPOINT` | `store-endpoint` | `http://127.0.0.1:7001` |
//! | `--enable-admission-plugins A,B` | `KEELSON_ENABLE_ADMISSION_PLUGINS` | `enable-admission-plugins` | none (kube-apiserver's default set) |
//! | `--disable-admission-plugins A,B` | `KEELSON_DISABLE_ADMISSION_PLUGINS` | `disable-admission-plugins` | none |
//! | `--default-not-ready-toleration-seconds N` | `KEELSON_DEFAULT_NOT_READY_TOLERATION_SECONDS` | `default-not-ready-toleration-seconds` | `300` |
//! | `--default-unreachable-toleration-seconds N` | `KEELSON_DEFAULT_UNREACHABLE_TOLERATION_SECONDS` | `default-unreachable-toleration-seconds` | `300` |
//! | `--allow-privileged[=BOOL]` (containers may set `securityContext.privileged`) | `KEELSON_ALLOW_PRIVILEGED` | `allow-privileged` | `true` (kubeadm's and kind's setting; kube-apiserver's own default is `false`) |
//! | `--admission-control-config-file FILE` (kube's `AdmissionConfiguration`: PodSecurity's and ResourceQuota's configuration) | `KEELSON_ADMISSION_CONTROL_CONFIG_FILE` | `admission-control-config-file` | none |
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

use keelson_apimachinery::featuregates::FeatureGates;
use keelson_rpc::{AdmissionGrpc, RemoteStore, StoreEndpointFlags};
use keelson_runtime::bind_and_announce;
use tokio::net::TcpListener;
use tonic::transport::Server;

pub use keelson_rpc::DEFAULT_STORE_ENDPOINT;
pub use keelson_runtime::ServiceError;

/// Default gRPC listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7002";

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// gRPC listen address.
    pub listen: SocketAddr,
    /// The store service, `http://host:port`.
    pub store_endpoint: String,
    /// Which admission plugins run.
    pub plugins: AdmissionPluginFlags,
    /// The authorizer of policies' `authorizer` variable (the gateway's
    /// `--authorization-mode`: `RBAC` or `AlwaysAllow`).
    pub authorization_mode: String,
}

/// kube-apiserver's admission plugin flags, shared by `keelson-admission`
/// and the embedded `keelson`.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, clap::Args, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub struct AdmissionPluginFlags {
    /// Admission plugins to run in addition to kube-apiserver's default
    /// ones (comma-separated)
    #[arg(
        long,
        env = "KEELSON_ENABLE_ADMISSION_PLUGINS",
        value_delimiter = ',',
        value_name = "PLUGINS"
    )]
    #[serde(default)]
    pub enable_admission_plugins: Vec<String>,
    /// Default admission plugins not to run (comma-separated)
    #[arg(
        long,
        env = "KEELSON_DISABLE_ADMISSION_PLUGINS",
        value_delimiter = ',',
        value_name = "PLUGINS"
    )]
    #[serde(default)]
    pub disable_admission_plugins: Vec<String>,
    /// DefaultTolerationSeconds: the `node.kubernetes.io/not-ready`
    /// toleration's seconds [default: 300]
    #[arg(
        long,
        env = "KEELSON_DEFAULT_NOT_READY_TOLERATION_SECONDS",
        value_name = "SECONDS"
    )]
    pub default_not_ready_toleration_seconds: Option<i64>,
    /// DefaultTolerationSeconds: the `node.kubernetes.io/unreachable`
    /// toleration's seconds [default: 300]
    #[arg(
        long,
        env = "KEELSON_DEFAULT_UNREACHABLE_TOLERATION_SECONDS",
        value_name = "SECONDS"
    )]
    pub default_unreachable_toleration_seconds: Option<i64>,
    /// Whether containers may run privileged (kube-apiserver's
    /// `--allow-privileged`) [default: true]
    #[arg(
        long,
        env = "KEELSON_ALLOW_PRIVILEGED",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub allow_privileged: Option<bool>,
    /// kube's admission configuration file (`AdmissionConfiguration`,
    /// YAML or JSON): PodSecurity's and ResourceQuota's configuration
    #[arg(
        long,
        env = "KEELSON_ADMISSION_CONTROL_CONFIG_FILE",
        value_name = "FILE"
    )]
    pub admission_control_config_file: Option<std::path::PathBuf>,
}

impl AdmissionPluginFlags {
    /// The plugin set and their configuration; `Err` is kube-apiserver's
    /// start error (an unknown plugin name, one both enabled and disabled,
    /// an `--admission-control-config-file` kube refuses). A plugin
    /// configuration Keelson does not implement is logged as a warning.
    pub fn plugins(&self) -> Result<keelson_admission::PluginConfig, String> {
        let trim = |l: &[String]| -> Vec<String> {
            l.iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let mut config = keelson_admission::PluginConfig::from_flags(
            &trim(&self.enable_admission_plugins),
            &trim(&self.disable_admission_plugins),
        )?;
        if let Some(s) = self.default_not_ready_toleration_seconds {
            config.not_ready_toleration_seconds = s;
        }
        if let Some(s) = self.default_unreachable_toleration_seconds {
            config.unreachable_toleration_seconds = s;
        }
        config.allow_privileged = self.allow_privileged.unwrap_or(true);
        if let Some(path) = &self.admission_control_config_file {
            let warnings = keelson_admission::read_admission_config(path, &mut config)
                .map_err(|e| e.to_string())?;
            for w in warnings {
                tracing::warn!("{w}");
            }
        }
        Ok(config)
    }
}

keelson_runtime::service_flags! {
    "keelson-admission",
    about = "Keelson admission service (defaulting, validation, admission)",
    pub struct Cli => Config {
        /// `--store-endpoint`.
        #[command(flatten)]
        #[serde(flatten)]
        pub store: StoreEndpointFlags,
        /// The admission plugin flags.
        #[command(flatten)]
        #[serde(flatten)]
        pub plugins: AdmissionPluginFlags,
        /// What policies' `authorizer` checks with: `RBAC` or
        /// `AlwaysAllow` (the gateway's `--authorization-mode`)
        #[arg(long, env = "KEELSON_AUTHORIZATION_MODE", default_value = "RBAC")]
        #[serde(default = "rbac")]
        pub authorization_mode: String,
        /// kube's `--feature-gates` (`A=true,B=false`): the gates admission
        /// reads (`DeclarativeValidation`, `DeclarativeValidationTakeover`)
        #[arg(long = "feature-gates", env = "KEELSON_FEATURE_GATES", default_value = "", value_parser = check_gates)]
        #[serde(default)]
        pub feature_gates: String,
    }
}

fn check_gates(s: &str) -> Result<String, String> {
    FeatureGates::parse(s).map(|_| s.to_string())
}

fn rbac() -> String {
    "RBAC".into()
}

impl From<Cli> for Config {
    /// The flags, with the defaults where unset.
    fn from(cli: Cli) -> Config {
        // The process's gates, as the gateway installs its own.
        match FeatureGates::parse(&cli.feature_gates) {
            Ok(g) => g.install(),
            Err(e) => tracing::error!(error = %e, "--feature-gates ignored"),
        }
        Config {
            listen: cli.common.listen_or(DEFAULT_LISTEN),
            store_endpoint: cli.store.endpoint(),
            plugins: cli.plugins,
            authorization_mode: cli.authorization_mode,
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
    let store: Arc<dyn keelson_api::StoreApi> =
        Arc::new(RemoteStore::connect_resolving(&config.store_endpoint)?);
    tracing::info!(store = %config.store_endpoint, "using remote store");
    // The live catalog follows the stored CustomResourceDefinitions.
    let catalog = keelson_registry::Catalog::builtin();
    keelson_apiextensions::CatalogFollower::spawn(store.clone(), catalog.clone());
    let plugins = config
        .plugins
        .plugins()
        .map_err(|reason| ServiceError::InvalidValue {
            key: "admission plugins".into(),
            value: format!(
                "enable={} disable={}",
                config.plugins.enable_admission_plugins.join(","),
                config.plugins.disable_admission_plugins.join(",")
            ),
            reason,
        })?;
    for p in plugins.not_implemented() {
        tracing::warn!(
            plugin = p,
            "admission plugin enabled but not implemented by Keelson"
        );
    }
    tracing::info!(plugins = ?plugins.enabled_plugins(), "admission plugins");
    let mode: keelson_auth::Mode =
        config
            .authorization_mode
            .parse()
            .map_err(|reason| ServiceError::InvalidValue {
                key: "authorization mode".into(),
                value: config.authorization_mode.clone(),
                reason,
            })?;
    let admission = Arc::new(keelson_admission::LocalAdmission::with_authorization(
        store, catalog, plugins, mode,
    ));
    keelson_rpc::serve_service("admission", listener, shutdown, |_| {
        Server::builder().add_service(AdmissionGrpc::server(admission))
    })
    .await
}

#[cfg(test)]
mod tests;
