//! [`TestServer`]: one Keelson on a thread and runtime of its own.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::TestServerError;

/// How long [`Builder::start`] waits for the server and for preloaded CRDs.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// `keelson`'s gateway and admission flags, parsed the way the binary
/// parses them.
#[derive(Debug, Parser)]
struct Flags {
    #[command(flatten)]
    gateway: keelson_gateway::GatewayFlags,
    #[command(flatten)]
    admission: keelson_admission_service::AdmissionPluginFlags,
}

/// How to start a [`TestServer`]: extra `keelson` flags, and CRDs and
/// objects to create before [`Builder::start`] returns.
#[derive(Debug, Default, Clone)]
pub struct Builder {
    args: Vec<String>,
    crds: Vec<String>,
    objects: Vec<String>,
}

impl Builder {
    /// Pass a `keelson` flag, e.g. `--authorization-mode=AlwaysAllow` or
    /// `--feature-gates=...` (the data directory, port and storage are the
    /// test server's).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// CustomResourceDefinitions (one or more YAML documents) to create;
    /// `start` returns once each is `Established` and served.
    pub fn crd_yaml(mut self, yaml: impl Into<String>) -> Self {
        self.crds.push(yaml.into());
        self
    }

    /// Objects (one or more YAML documents, any kind the server serves,
    /// custom resources included) to create in order, after the CRDs; a
    /// namespaced object without a namespace goes to `default`.
    pub fn objects_yaml(mut self, yaml: impl Into<String>) -> Self {
        self.objects.push(yaml.into());
        self
    }

    /// Start the server, then create the CRDs and objects.
    pub async fn start(self) -> Result<TestServer, TestServerError> {
        let server = TestServer::launch(&self.args).await?;
        if !self.crds.is_empty() || !self.objects.is_empty() {
            let client = server.client().await?;
            for yaml in &self.crds {
                crate::preload::crds(&client, yaml, START_TIMEOUT).await?;
            }
            for yaml in &self.objects {
                crate::preload::objects(&client, yaml, START_TIMEOUT).await?;
            }
        }
        Ok(server)
    }
}

/// A Keelson serving on a free port of 127.0.0.1, objects in memory;
/// stopped (port, tasks and thread released) when dropped.
pub struct TestServer {
    addr: SocketAddr,
    kubeconfig: PathBuf,
    phases: Vec<keelson::Phase>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    // Last: removed after the server stopped.
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.addr)
            .field("kubeconfig", &self.kubeconfig)
            .finish()
    }
}

impl TestServer {
    /// A server with the defaults (RBAC, no preloaded objects).
    pub async fn start() -> Result<TestServer, TestServerError> {
        Builder::default().start().await
    }

    /// A builder, for flags and preloaded CRDs and objects.
    pub fn builder() -> Builder {
        Builder::default()
    }

    async fn launch(extra: &[String]) -> Result<TestServer, TestServerError> {
        let dir = tempfile::Builder::new()
            .prefix("keelson-testserver-")
            .tempdir()?;
        let mut argv = vec![
            "keelson".to_string(),
            format!("--data-dir={}", dir.path().display()),
            "--secure-port=0".to_string(),
            "--bind-address=127.0.0.1".to_string(),
        ];
        argv.extend(extra.iter().cloned());
        let flags = Flags::try_parse_from(&argv).map_err(|e| {
            TestServerError::Start(e.to_string().trim_start_matches("error: ").into())
        })?;
        let config = keelson::EmbeddedConfig {
            admission_plugins: flags.admission.plugins().map_err(TestServerError::Start)?,
            gateway: flags.gateway,
            storage: keelson_store_service::Storage::Memory,
            retention: Duration::from_secs(300),
        };
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("keelson-testserver".into())
            .spawn(move || serve(config, started_tx, stop_rx))?;
        let started = match tokio::time::timeout(START_TIMEOUT, started_rx).await {
            Ok(Ok(started)) => started,
            Ok(Err(_)) => Err("the server thread ended before starting".into()),
            Err(_) => Err(format!("not serving after {START_TIMEOUT:?}")),
        };
        let mut server = TestServer {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            kubeconfig: PathBuf::new(),
            phases: Vec::new(),
            stop: Some(stop_tx),
            thread: Some(thread),
            dir,
        };
        let (addr, kubeconfig, phases) = started.map_err(TestServerError::Start)?;
        server.addr = addr;
        server.kubeconfig = kubeconfig;
        server.phases = phases;
        Ok(server)
    }

    /// The HTTPS address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// Path of the admin kubeconfig (for kubectl, client-go, `KUBECONFIG`);
    /// removed when the server is dropped.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The admin kubeconfig: contexts `keelson` (client certificate,
    /// `kubernetes-admin` in `system:masters`, the current one) and
    /// `keelson-token` (a bearer token).
    pub fn kubeconfig(&self) -> Result<Kubeconfig, TestServerError> {
        Kubeconfig::read_from(&self.kubeconfig)
            .map_err(|e| TestServerError::Kubeconfig(e.to_string()))
    }

    /// The admin's `kube::Config`.
    pub async fn config(&self) -> Result<kube::Config, TestServerError> {
        kube::Config::from_custom_kubeconfig(self.kubeconfig()?, &KubeConfigOptions::default())
            .await
            .map_err(|e| TestServerError::Kubeconfig(e.to_string()))
    }

    /// A client for the admin (`kubernetes-admin`, `system:masters`).
    pub async fn client(&self) -> Result<kube::Client, TestServerError> {
        Ok(kube::Client::try_from(self.config().await?)?)
    }

    /// The `kube::Config` of a client acting as `user` in `groups`: the
    /// admin's credentials impersonating them (kube's `Impersonate-User`
    /// and `Impersonate-Group`, what `kubectl --as --as-group` sends), so
    /// the server authorizes every request as that user and groups (plus
    /// `system:authenticated`) with RBAC, exactly as kube-apiserver does.
    pub async fn config_as(
        &self,
        user: &str,
        groups: &[&str],
    ) -> Result<kube::Config, TestServerError> {
        let mut config = self.config().await?;
        config.auth_info.impersonate = Some(user.to_string());
        config.auth_info.impersonate_groups = if groups.is_empty() {
            None
        } else {
            Some(groups.iter().map(|g| g.to_string()).collect())
        };
        Ok(config)
    }

    /// A client acting as `user` in `groups` (see [`TestServer::config_as`]).
    pub async fn client_as(
        &self,
        user: &str,
        groups: &[&str],
    ) -> Result<kube::Client, TestServerError> {
        Ok(kube::Client::try_from(self.config_as(user, groups).await?)?)
    }

    /// How long each phase of Keelson's start took (the start-up bench).
    pub fn startup_phases(&self) -> &[keelson::Phase] {
        &self.phases
    }

    /// The temporary directory holding the PKI and the kubeconfig.
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // The thread drops its runtime, which ends every task and
            // closes the listener and the connections.
            let _ = thread.join();
        }
    }
}

type Started = Result<(SocketAddr, PathBuf, Vec<keelson::Phase>), String>;

/// The server thread: a runtime of its own, serving until told to stop.
fn serve(
    config: keelson::EmbeddedConfig,
    started: tokio::sync::oneshot::Sender<Started>,
    stop: tokio::sync::oneshot::Receiver<()>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = started.send(Err(format!("runtime: {e}")));
            return;
        }
    };
    runtime.block_on(async move {
        match keelson::start_embedded(config).await {
            Ok(server) => {
                let _ = started.send(Ok((
                    server.addr,
                    server.kubeconfig.clone(),
                    server.phases.clone(),
                )));
                // Told to stop, or the handle is gone.
                let _ = stop.await;
                server.stop();
            }
            Err(e) => {
                let _ = started.send(Err(e.to_string()));
            }
        }
    });
    // Dropping the runtime cancels the rest (watch streams, followers).
    drop(runtime);
}
