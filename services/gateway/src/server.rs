//! TLS listener and the HTTP/1.1 + HTTP/2 connection loop.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::filters::{handle, State};
use crate::{pki, Backends, GatewayConfig, GatewayError};

/// Bytes an HTTP/2 stream may queue before its body stops being polled.
const SEND_BUFFER: usize = 64 * 1024;

/// A started gateway.
pub struct RunningGateway {
    /// The bound address.
    pub addr: SocketAddr,
    /// Path of the kubeconfig written for this server.
    pub kubeconfig: PathBuf,
    /// The accept loop; abort it to stop serving.
    pub task: tokio::task::JoinHandle<()>,
}

fn tls_config(
    creds: &pki::Credentials,
    client_cas: &str,
) -> Result<rustls::ServerConfig, GatewayError> {
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut creds.cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| GatewayError::Tls(e.to_string()))?;
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut creds.key_pem.as_bytes())
        .map_err(|e| GatewayError::Tls(e.to_string()))?
        .ok_or_else(|| GatewayError::Tls("no private key".into()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // Client certificates are requested, not required (kube's
    // `RequestClientCert`): one signed by the cluster CA authenticates its
    // CN/O; a connection without one goes on to the other authenticators.
    let mut roots = rustls::RootCertStore::empty();
    let all_cas = format!("{}\n{client_cas}", creds.ca_pem);
    for ca in rustls_pemfile::certs(&mut all_cas.as_bytes()) {
        let ca = ca.map_err(|e| GatewayError::Tls(e.to_string()))?;
        roots
            .add(ca)
            .map_err(|e| GatewayError::Tls(e.to_string()))?;
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .map_err(|e| GatewayError::Tls(e.to_string()))?;
    // A certificate of another CA completes the handshake and is refused
    // by authentication, as kube does.
    let verifier = Arc::new(crate::client_cert::Lenient { inner: verifier });
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| GatewayError::Tls(e.to_string()))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .map_err(|e| GatewayError::Tls(e.to_string()))?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(cfg)
}

pub(crate) async fn start(
    config: GatewayConfig,
    backends: Backends,
) -> Result<RunningGateway, GatewayError> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| GatewayError::io(&config.data_dir, e))?;
    let mut sans = vec![
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        "::1".to_string(),
    ];
    let bind = config.bind_address.to_string();
    if !sans.contains(&bind) && !config.bind_address.is_unspecified() {
        sans.push(bind);
    }
    for s in &config.tls_sans {
        if !sans.contains(s) {
            sans.push(s.clone());
        }
    }
    let mut creds = pki::load_or_create(&config.data_dir, &sans)?;
    let client_cas = pki::apply_tls_files(&mut creds, &config.tls)?;
    let acceptor = TlsAcceptor::from(Arc::new(tls_config(&creds, &client_cas)?));
    let addr = SocketAddr::new(config.bind_address, config.secure_port);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| GatewayError::Bind { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| GatewayError::Bind { addr, source })?;
    let server = config.kubeconfig_server.clone().unwrap_or_else(|| {
        let host = match addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => "127.0.0.1".to_string(),
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) if ip.is_unspecified() => "[::1]".to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        format!("https://{host}:{}", addr.port())
    });
    let kubeconfig = pki::write_kubeconfig(&config.data_dir, &server, &creds)?;
    // The API server's own objects: the `kubernetes` Service, Endpoints
    // and EndpointSlice, and the published client CA.
    // The first pass is awaited (bounded), so that the CA is published
    // before the server announces itself.
    let first = keelson_controllers::bootstrap::reconcile_apiserver_objects(
        backends.store.as_ref(),
        addr,
        &creds.ca_pem,
    );
    if let Err(e) = tokio::time::timeout(std::time::Duration::from_secs(5), first)
        .await
        .unwrap_or_else(|_| Err(keelson_apimachinery::ApiError::unavailable("timed out")))
    {
        tracing::warn!(error = %e.message, "the kubernetes service: will retry");
    }
    let apiserver_objects = tokio::spawn(keelson_controllers::bootstrap::apiserver_objects(
        backends.store.clone(),
        addr,
        creds.ca_pem.clone(),
        std::future::pending(),
    ));
    let signer = tokio::spawn(crate::handlers::review::csr_signer(
        backends.store.clone(),
        creds.ca_pem.clone(),
        creds.ca_key_pem.clone(),
    ));
    let advertised = SocketAddr::new(advertise_ip(&config), addr.port()).to_string();
    let mut state = auth_state(&config, backends, &creds, advertised)?;
    state.followers.push(apiserver_objects);
    state.followers.push(signer);
    // kube-controller-manager's tokens controller: it signs legacy
    // ServiceAccount tokens, so it runs where the signing key is.
    let tokens = keelson_controllers::TokensController::new(
        state.backends.store.clone(),
        state.service_accounts.clone(),
        creds.ca_pem.clone(),
    );
    state
        .followers
        .push(tokio::spawn(tokens.run(std::future::pending())));
    first_second(&state).await;
    let apf = keelson_controllers::bootstrap::flowcontrol::FlowControlController::new(
        state.backends.store.clone(),
    );
    state
        .followers
        .push(tokio::spawn(apf.run(std::future::pending())));
    let state = Arc::new(state);
    let task = tokio::spawn(accept_loop(listener, acceptor, state));
    Ok(RunningGateway {
        addr,
        kubeconfig,
        task,
    })
}

/// What kube-apiserver's post-start hooks make sure of before it reports
/// ready, each bounded so that a missing backend only delays the start:
/// the bootstrap RBAC policy is reconciled (kube's
/// `rbac/bootstrap-roles`), the RBAC index has it, and the controllers
/// have given `default` its ServiceAccount and `kube-root-ca.crt`.
async fn first_second(state: &State) {
    use keelson_api::{GroupResource, ObjectKey};
    let store = state.backends.store.as_ref();
    let policy = keelson_controllers::bootstrap::reconcile_policy(store);
    match tokio::time::timeout(std::time::Duration::from_secs(5), policy).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::warn!(error = %e.message, "bootstrap RBAC policy: not reconciled"),
        Err(_) => tracing::warn!("bootstrap RBAC policy: timed out"),
    }
    // kube's `priority-and-fairness-config-producer`: the APF bootstrap
    // FlowSchemas and PriorityLevelConfigurations (and their `Dangling`
    // conditions); the controller started after this keeps them.
    let apf = keelson_controllers::bootstrap::flowcontrol::reconcile_flowcontrol(store);
    match tokio::time::timeout(std::time::Duration::from_secs(5), apf).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::warn!(error = %e.message, "APF configuration: not ensured"),
        Err(_) => tracing::warn!("APF configuration: timed out"),
    }
    let anonymous_version = keelson_auth::Attributes {
        user: keelson_auth::UserInfo::anonymous(),
        verb: "get".into(),
        path: "/version".into(),
        ..Default::default()
    };
    let keys = [
        ObjectKey::new(
            GroupResource::new("", "serviceaccounts"),
            "default",
            "default",
        ),
        ObjectKey::new(
            GroupResource::new("", "configmaps"),
            "default",
            "kube-root-ca.crt",
        ),
    ];
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(3);
    loop {
        let policy_seen = state.authz.mode == keelson_auth::Mode::AlwaysAllow
            || state.authz.authorize(&anonymous_version).allowed;
        let mut objects = true;
        for k in &keys {
            objects &= store.get(k).await.is_ok();
        }
        if policy_seen && objects {
            return;
        }
        if tokio::time::Instant::now() > deadline {
            tracing::warn!(
                policy_seen,
                objects,
                "starting before the first-second objects are all there"
            );
            return;
        }
        // A short poll: on a fresh store the controllers make these within
        // a few milliseconds, and the start waits for them.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
}

/// The authenticators and the authorizer of `config`; the RBAC index
/// starts following the store.
fn auth_state(
    config: &GatewayConfig,
    backends: Backends,
    creds: &pki::Credentials,
    advertised: String,
) -> Result<State, GatewayError> {
    use crate::filters::authentication::Authenticators;
    let auth = &config.auth;
    let token_file = match &auth.token_auth_file {
        Some(p) => Some(keelson_auth::authn::TokenFile::load(p)?),
        None => None,
    };
    let signing = match &auth.service_account_signing_key_file {
        Some(p) => p.clone(),
        None => pki::service_account_key(&config.data_dir)?,
    };
    let service_accounts = Arc::new(keelson_auth::serviceaccount::TokenAuthority::load(
        &signing,
        &auth.service_account_key_files,
        &auth.service_account_issuer,
        &auth.api_audiences,
    )?);
    let rbac = keelson_auth::Rbac::new();
    let followers = match auth.authorization_mode {
        keelson_auth::Mode::Rbac => {
            keelson_auth::rbac::follow(rbac.clone(), backends.store.clone())
        }
        keelson_auth::Mode::AlwaysAllow => Vec::new(),
    };
    Ok(State {
        authn: Authenticators {
            admin_token: creds.token.clone(),
            token_file,
            service_accounts: service_accounts.clone(),
            anonymous: auth.anonymous_auth,
            store: backends.store.clone(),
        },
        authz: keelson_auth::Authorizer {
            mode: auth.authorization_mode,
            rbac,
        },
        service_accounts,
        audit: crate::audit::Auditor::from_flags(&auth.audit)?,
        followers,
        backends,
        discovery: keelson_discovery::DiscoveryCache::new(advertised),
        etcd_health_check: config.etcd_health_check,
    })
}

/// kube's advertise address: `--advertise-address`, else the bind address
/// unless it is loopback or unspecified, else the host's address on its
/// default route (kube's `ChooseHostInterface`; found as the source address
/// a UDP socket "connected" to a public address gets, which sends nothing),
/// else the bind address.
fn advertise_ip(config: &GatewayConfig) -> std::net::IpAddr {
    if let Some(ip) = config.advertise_address.filter(|ip| !ip.is_unspecified()) {
        return ip;
    }
    let bind = config.bind_address;
    if !bind.is_loopback() && !bind.is_unspecified() {
        return bind;
    }
    std::net::UdpSocket::bind(("0.0.0.0", 0))
        .and_then(|s| {
            s.connect(("192.0.2.1", 9))?;
            s.local_addr()
        })
        .map(|a| a.ip())
        .ok()
        .filter(|ip| !ip.is_unspecified())
        .unwrap_or(bind)
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, state: Arc<State>) {
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let state = state.clone();
        tokio::spawn(async move {
            let rejected = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let handshake =
                crate::client_cert::REJECTED.scope(rejected.clone(), acceptor.accept(tcp));
            let tls = match handshake.await {
                Ok(t) => t,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            // The verified client certificate's user, for every request
            // of the connection.
            let cert_rejected = rejected.load(std::sync::atomic::Ordering::Relaxed);
            let peer_user = tls
                .get_ref()
                .1
                .peer_certificates()
                .filter(|_| !cert_rejected)
                .and_then(|certs| certs.first())
                .and_then(|c| keelson_auth::authn::user_from_certificate(c.as_ref()))
                .map(|u| crate::filters::authentication::PeerUser(Arc::new(u)));
            let svc = service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                let state = state.clone();
                if let Some(p) = &peer_user {
                    req.extensions_mut().insert(p.clone());
                }
                if cert_rejected {
                    req.extensions_mut()
                        .insert(crate::client_cert::PeerRejected);
                }
                if state.audit.is_some() {
                    req.extensions_mut()
                        .insert(crate::audit::RemoteAddr(peer.ip()));
                }
                // Boxed: hyper keeps a stream's service future inline in
                // the stream's state for as long as the response body
                // streams (an open watch), so an unboxed handler future —
                // every verb's state machine — would cost each watcher its
                // full size.
                let handled: Pin<Box<dyn Future<Output = _> + Send>> =
                    if crate::requests::long_running(&req) {
                        Box::pin(handle(state, req))
                    } else {
                        Box::pin(crate::requests::on_requests_runtime(handle(state, req)))
                    };
                async move { Ok::<_, std::convert::Infallible>(handled.await) }
            });
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            // Bound what one HTTP/2 stream may queue unsent (a slow watcher),
            // instead of hyper's 400 KiB.
            builder.http2().max_send_buf_size(SEND_BUFFER);
            let io = TokioIo::new(crate::coalesce::Coalesce::new(tls));
            if let Err(e) = builder.serve_connection(io, svc).await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}
