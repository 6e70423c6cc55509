//! Building and starting the embedded server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use keelson_api::{AdmissionApi, MergeApi, StoreApi, WatchCacheApi};
use tokio::task::JoinHandle;

/// What [`start_embedded`] needs: the gateway's flags (data dir, port, TLS,
/// authentication, `--runtime-config`), where the objects live and how
/// long old revisions are kept.
#[derive(Debug, Clone)]
pub struct EmbeddedConfig {
    /// The gateway's flags, as `keelson` parses them.
    pub gateway: keelson_gateway::GatewayFlags,
    /// sled in `<data-dir>/store`, etcd, or memory.
    pub storage: keelson_store_service::Storage,
    /// kube's `--etcd-compaction-interval`.
    pub retention: Duration,
    /// Which admission plugins run (`--enable-admission-plugins`,
    /// `--disable-admission-plugins`).
    pub admission_plugins: keelson_admission::PluginConfig,
}

/// Why the embedded server did not start.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// The data directory could not be created.
    #[error("{path}: {source}")]
    DataDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store did not open.
    #[error(transparent)]
    Store(#[from] keelson_store_service::ServiceError),
    /// `--runtime-config` or `--feature-gates` was refused.
    #[error(transparent)]
    ApiConfig(#[from] keelson_gateway::apiconfig::ApiConfigError),
    /// The gateway did not start (credentials, TLS, bind).
    #[error(transparent)]
    Gateway(#[from] keelson_gateway::GatewayError),
}

/// A start-up phase and how long it took (for the start-up benchmark).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    /// What was done.
    pub name: &'static str,
    /// How long it took.
    pub took: Duration,
}

/// A running embedded server. Dropping it (or [`EmbeddedServer::stop`])
/// stops accepting connections and stops the controllers; connections
/// already open end when their clients close them, or with the runtime.
pub struct EmbeddedServer {
    /// The bound HTTPS address.
    pub addr: SocketAddr,
    /// The admin kubeconfig written into the data directory.
    pub kubeconfig: PathBuf,
    /// The data directory (PKI, token, kubeconfig; sled's `store`).
    pub data_dir: PathBuf,
    /// How long each start-up phase took, in order.
    pub phases: Vec<Phase>,
    tasks: Vec<JoinHandle<()>>,
}

impl EmbeddedServer {
    /// Stop serving and stop the controllers.
    pub fn stop(self) {}
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Open the store, start the services, the controllers and the gateway,
/// and return once the gateway is serving (kube-apiserver's post-start
/// hooks done: bootstrap RBAC and APF objects, the `default`
/// ServiceAccount). Must run inside a tokio runtime.
pub async fn start_embedded(config: EmbeddedConfig) -> Result<EmbeddedServer, EmbeddedError> {
    let mut phases = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str| {
        let now = Instant::now();
        phases.push(Phase {
            name,
            took: now - clock,
        });
        clock = now;
    };
    let data_dir = config.gateway.data_dir.clone();
    std::fs::create_dir_all(&data_dir).map_err(|source| EmbeddedError::DataDir {
        path: data_dir.clone(),
        source,
    })?;
    let on_etcd = matches!(config.storage, keelson_store_service::Storage::Etcd(..));
    let store = keelson_store_service::open_storage(
        &config.storage,
        &data_dir.join("store"),
        config.retention,
    )
    .await?;
    lap("open the store (system namespaces)");
    // kube's storage metrics, on the gateway's /metrics.
    let store: Arc<dyn StoreApi> = Arc::new(keelson_storage::MeteredStore::new(store));
    // One live catalog shared by admission, merge and the gateway, kept in
    // step with the stored CustomResourceDefinitions.
    let catalog = keelson_registry::Catalog::builtin();
    // `--runtime-config` and `--feature-gates`, before anything reads the catalog.
    config.gateway.api.apply(&catalog)?;
    let pending = std::future::pending::<()>;
    let mut tasks = vec![tokio::spawn(
        keelson_apiextensions::CatalogFollower::new(store.clone(), catalog.clone()).run(pending()),
    )];
    let admission: Arc<dyn AdmissionApi> =
        Arc::new(keelson_admission::LocalAdmission::with_authorization(
            store.clone(),
            catalog.clone(),
            config.admission_plugins.clone(),
            config.gateway.auth.authorization_mode,
        ));
    let merge: Arc<dyn MergeApi> = Arc::new(keelson_merge::LocalMerge::new(catalog.clone()));
    let watch: Arc<dyn WatchCacheApi> = Arc::new(keelson_watchcache::LocalWatchCache::new(
        store.clone(),
        keelson_watchcache::WatchCacheConfig::default(),
    ));
    lap("catalog, admission, merge, watch cache");
    {
        use keelson_controllers::{
            AggregationController, CrdController, DisruptionController, GarbageCollector,
            NamespaceController, RootCaController, ServiceAccountController,
        };
        tasks.push(tokio::spawn(
            NamespaceController::with_catalog(store.clone(), catalog.clone()).run(pending()),
        ));
        tasks.push(tokio::spawn(
            CrdController::new(store.clone()).run(pending()),
        ));
        tasks.push(tokio::spawn(
            GarbageCollector::new(store.clone(), catalog.clone()).run(pending()),
        ));
        // ClusterRole aggregation, and the per-namespace `default`
        // ServiceAccount and `kube-root-ca.crt` (the gateway reconciles the
        // bootstrap RBAC policy as it starts, as kube-apiserver does).
        tasks.push(tokio::spawn(
            AggregationController::new(store.clone()).run(pending()),
        ));
        tasks.push(tokio::spawn(
            ServiceAccountController::new(store.clone()).run(pending()),
        ));
        tasks.push(tokio::spawn(
            RootCaController::new(store.clone()).run(pending()),
        ));
        tasks.push(tokio::spawn(
            DisruptionController::new(store.clone()).run(pending()),
        ));
        tasks.push(tokio::spawn(
            keelson_controllers::ResourceQuotaController::new(store.clone()).run(pending()),
        ));
    }
    lap("spawn the controllers");
    let backends = keelson_gateway::Backends {
        store,
        admission,
        merge,
        watch,
        catalog,
    };
    let mut gateway: keelson_gateway::GatewayConfig = config.gateway.into();
    // kube's `etcd` livez/readyz check: the store's readiness is etcd's.
    gateway.etcd_health_check = on_etcd;
    let gw = keelson_gateway::start(gateway, backends).await?;
    lap("gateway (PKI, bootstrap objects, first second)");
    tasks.push(gw.task);
    Ok(EmbeddedServer {
        addr: gw.addr,
        kubeconfig: gw.kubeconfig,
        data_dir,
        phases,
        tasks,
    })
}
