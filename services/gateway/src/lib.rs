//! The Keelson gateway: HTTPS, authentication, routing, content negotiation
//! and the verb handlers. It holds no state of its own: every request goes to
//! the store, admission, merge and watch services through their traits, which are
//! plain function calls in the embedded binary and gRPC clients in the
//! distributed one.
#![forbid(unsafe_code)]
//!
//! Layout (kube-apiserver's): [`filters`] — panic recovery, request info,
//! authentication, body limits — then `handlers`, one module per verb and
//! subresource; `server` is the TLS listener and connection loop.

pub mod apiconfig;
pub mod audit;
pub mod client_cert;
mod coalesce;
pub mod compression;
pub mod filters;
mod handlers;
pub mod http_util;
pub mod metrics;
pub mod pki;
mod requests;
mod server;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use keelson_api::{AdmissionApi, MergeApi, StoreApi, WatchCacheApi};

pub use server::RunningGateway;

/// The backing services the gateway calls.
#[derive(Clone)]
pub struct Backends {
    pub store: Arc<dyn StoreApi>,
    pub admission: Arc<dyn AdmissionApi>,
    pub merge: Arc<dyn MergeApi>,
    /// Lists and watches (the watch cache, local or its replicas).
    pub watch: Arc<dyn WatchCacheApi>,
    /// The live resource catalog; each request resolves against one
    /// snapshot of it.
    pub catalog: keelson_registry::Catalog,
}

/// Gateway settings.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Where the PKI, token and kubeconfig live.
    pub data_dir: PathBuf,
    /// Address to bind.
    pub bind_address: IpAddr,
    /// Port to bind; 0 picks a free one (written into the kubeconfig).
    pub secure_port: u16,
    /// `--advertise-address` (see [`GatewayFlags::advertise_address`]).
    pub advertise_address: Option<IpAddr>,
    /// Extra subject alternative names for the serving certificate.
    pub tls_sans: Vec<String>,
    /// The server URL written into the kubeconfig (default: the bound
    /// address, `https://ADDR:PORT`).
    pub kubeconfig_server: Option<String>,
    /// Serve kube's `etcd` check in `/livez` and `/readyz` (the store's
    /// readiness, when the store runs on etcd).
    pub etcd_health_check: bool,
    /// Authentication and authorization settings.
    pub auth: AuthFlags,
    /// kube's serving certificate files (`--tls-cert-file`,
    /// `--tls-private-key-file`): used instead of the generated one.
    pub tls: TlsFileFlags,
}

/// kube-apiserver's serving certificate and client CA flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsFileFlags {
    /// PEM serving certificate (chain); default: one issued by the data dir's CA.
    #[arg(long = "tls-cert-file", env = "KEELSON_TLS_CERT_FILE")]
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of `--tls-cert-file`.
    #[arg(long = "tls-private-key-file", env = "KEELSON_TLS_PRIVATE_KEY_FILE")]
    pub tls_private_key_file: Option<PathBuf>,
    /// PEM CAs whose client certificates authenticate (besides the data dir's CA).
    #[arg(long = "client-ca-file", env = "KEELSON_CLIENT_CA_FILE")]
    pub client_ca_file: Option<PathBuf>,
}

/// The gateway's command-line flags, shared by `keelson` and
/// `keelson-gateway` (each also settable as `KEELSON_<FLAG>`).
#[derive(Debug, Clone, clap::Args)]
pub struct GatewayFlags {
    /// Directory for the PKI, token and kubeconfig (and, embedded, the database).
    #[arg(long, env = "KEELSON_DATA_DIR", default_value = "keelson-data")]
    pub data_dir: PathBuf,
    /// Address to serve HTTPS on.
    #[arg(long, env = "KEELSON_BIND_ADDRESS", default_value = "127.0.0.1")]
    pub bind_address: IpAddr,
    /// Port to serve HTTPS on; 0 picks a free port.
    #[arg(long, env = "KEELSON_SECURE_PORT", default_value_t = 6443)]
    pub secure_port: u16,
    /// The address `/api` advertises in `serverAddressByClientCIDRs`
    /// (kube's default: the bind address, or the host's default-route
    /// address when that is loopback or unspecified).
    #[arg(long = "advertise-address", env = "KEELSON_ADVERTISE_ADDRESS")]
    pub advertise_address: Option<IpAddr>,
    /// Extra subject alternative names for the serving certificate.
    #[arg(long = "tls-san", env = "KEELSON_TLS_SAN", value_delimiter = ',')]
    pub tls_sans: Vec<String>,
    /// The server URL written into `<data-dir>/kubeconfig` (default: the
    /// bound address); e.g. the published address of a container.
    #[arg(long = "kubeconfig-server", env = "KEELSON_KUBECONFIG_SERVER")]
    pub kubeconfig_server: Option<String>,
    #[command(flatten)]
    pub auth: AuthFlags,
    #[command(flatten)]
    pub tls: TlsFileFlags,
    /// `--runtime-config` and `--feature-gates`.
    #[command(flatten)]
    pub api: apiconfig::ApiFlags,
}

/// kube-apiserver's authentication and authorization flags.
#[derive(Debug, Clone, clap::Args)]
pub struct AuthFlags {
    /// Static bearer tokens: CSV lines `token,user,uid[,"group1,group2"]`.
    #[arg(long = "token-auth-file", env = "KEELSON_TOKEN_AUTH_FILE")]
    pub token_auth_file: Option<PathBuf>,
    /// Serve unauthenticated requests as `system:anonymous`.
    #[arg(long = "anonymous-auth", env = "KEELSON_ANONYMOUS_AUTH", default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,
    /// `RBAC` or `AlwaysAllow`.
    #[arg(
        long = "authorization-mode",
        env = "KEELSON_AUTHORIZATION_MODE",
        default_value = "RBAC"
    )]
    pub authorization_mode: keelson_auth::Mode,
    /// The `iss` of ServiceAccount tokens.
    #[arg(long = "service-account-issuer", env = "KEELSON_SERVICE_ACCOUNT_ISSUER", default_value = keelson_auth::serviceaccount::DEFAULT_ISSUER)]
    pub service_account_issuer: String,
    /// PEM private key that signs ServiceAccount tokens (default:
    /// `<data-dir>/pki/sa.key`, created on first start).
    #[arg(
        long = "service-account-signing-key-file",
        env = "KEELSON_SERVICE_ACCOUNT_SIGNING_KEY_FILE"
    )]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// PEM keys that verify ServiceAccount tokens (besides the signing key).
    #[arg(
        long = "service-account-key-file",
        env = "KEELSON_SERVICE_ACCOUNT_KEY_FILE",
        value_delimiter = ','
    )]
    pub service_account_key_files: Vec<PathBuf>,
    /// Audiences the API accepts in ServiceAccount tokens (default: the issuer).
    #[arg(
        long = "api-audiences",
        env = "KEELSON_API_AUDIENCES",
        value_delimiter = ','
    )]
    pub api_audiences: Vec<String>,
    /// kube-apiserver's audit flags (`--audit-policy-file`,
    /// `--audit-log-*`).
    #[command(flatten)]
    pub audit: audit::AuditFlags,
}

impl Default for AuthFlags {
    fn default() -> Self {
        AuthFlags {
            token_auth_file: None,
            anonymous_auth: true,
            authorization_mode: keelson_auth::Mode::Rbac,
            service_account_issuer: keelson_auth::serviceaccount::DEFAULT_ISSUER.into(),
            service_account_signing_key_file: None,
            service_account_key_files: Vec::new(),
            api_audiences: Vec::new(),
            audit: audit::AuditFlags {
                audit_log_format: "json".into(),
                ..Default::default()
            },
        }
    }
}

impl From<GatewayFlags> for GatewayConfig {
    fn from(f: GatewayFlags) -> Self {
        GatewayConfig {
            data_dir: f.data_dir,
            bind_address: f.bind_address,
            secure_port: f.secure_port,
            advertise_address: f.advertise_address,
            tls_sans: f.tls_sans,
            kubeconfig_server: f.kubeconfig_server,
            etcd_health_check: false,
            auth: f.auth,
            tls: f.tls,
        }
    }
}

/// Start serving, then print the machine-readable `serving on https://ADDR`
/// and `kubeconfig: PATH` lines, wait for SIGTERM/ctrl-c and stop.
pub async fn serve_until_shutdown(
    config: GatewayConfig,
    backends: Backends,
) -> Result<(), GatewayError> {
    let gw = start(config, backends).await?;
    tracing::info!(
        "kubeconfig written; export KUBECONFIG={}",
        gw.kubeconfig.display()
    );
    println!("serving on https://{}", gw.addr);
    println!("kubeconfig: {}", gw.kubeconfig.display());
    keelson_runtime::shutdown_signal().await;
    tracing::info!("shutting down");
    gw.task.abort();
    Ok(())
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            data_dir: PathBuf::from("keelson-data"),
            bind_address: IpAddr::from([127, 0, 0, 1]),
            secure_port: 6443,
            advertise_address: None,
            tls_sans: Vec::new(),
            kubeconfig_server: None,
            etcd_health_check: false,
            auth: AuthFlags::default(),
            tls: TlsFileFlags::default(),
        }
    }
}

/// Gateway start-up failures.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("tls: {0}")]
    Tls(String),
    #[error("{0}")]
    Auth(#[from] keelson_auth::authn::AuthnError),
    #[error("{0}")]
    Audit(#[from] audit::AuditError),
    #[error("bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

impl GatewayError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        GatewayError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Start serving: create or load credentials, bind, write the kubeconfig,
/// and accept connections in the background.
pub async fn start(
    config: GatewayConfig,
    backends: Backends,
) -> Result<RunningGateway, GatewayError> {
    server::start(config, backends).await
}
