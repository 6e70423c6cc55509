//! TLS listener and the HTTP/1.1 + HTTP/2 connection loop.

use std::future::Future;
use std::net::SocketAddr;
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

fn tls_config(creds: &pki::Credentials) -> Result<rustls::ServerConfig, GatewayError> {
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut creds.cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| GatewayError::Tls(e.to_string()))?;
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut creds.key_pem.as_bytes())
        .map_err(|e| GatewayError::Tls(e.to_string()))?
        .ok_or_else(|| GatewayError::Tls("no private key".into()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| GatewayError::Tls(e.to_string()))?
        .with_no_client_auth()
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
    let creds = pki::load_or_create(&config.data_dir, &sans)?;
    let acceptor = TlsAcceptor::from(Arc::new(tls_config(&creds)?));
    let addr = SocketAddr::new(config.bind_address, config.secure_port);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| GatewayError::Bind { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| GatewayError::Bind { addr, source })?;
    let kubeconfig = pki::write_kubeconfig(&config.data_dir, addr, &creds)?;
    let state = Arc::new(State {
        backends,
        token: creds.token.clone(),
        discovery: keelson_discovery::DiscoveryCache::new(),
    });
    let task = tokio::spawn(accept_loop(listener, acceptor, state));
    Ok(RunningGateway {
        addr,
        kubeconfig,
        task,
    })
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
            let tls = match acceptor.accept(tcp).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            let svc = service_fn(move |req| {
                let state = state.clone();
                // Boxed: hyper keeps a stream's service future inline in
                // the stream's state for as long as the response body
                // streams (an open watch), so an unboxed handler future —
                // every verb's state machine — would cost each watcher its
                // full size.
                let handled: Pin<Box<dyn Future<Output = _> + Send>> = Box::pin(handle(state, req));
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
