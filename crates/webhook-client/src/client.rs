//! HTTPS clients: one per webhook configuration (and resolved endpoint),
//! kept so that connections are reused across calls.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;

/// Clients by a caller's key (a configuration's identity and revision).
pub struct Clients<K> {
    clients: Mutex<HashMap<K, reqwest::Client>>,
}

impl<K> Default for Clients<K> {
    fn default() -> Self {
        Clients {
            clients: Mutex::new(HashMap::new()),
        }
    }
}

impl<K> std::fmt::Debug for Clients<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clients").finish_non_exhaustive()
    }
}

impl<K: Hash + Eq + Clone> Clients<K> {
    /// No clients yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client kept for `key`, else one made by `make` (kept when it
    /// could be made). `stale` drops kept clients first (an older revision
    /// of the same configuration).
    pub fn get_or_make(
        &self,
        key: &K,
        stale: impl Fn(&K) -> bool,
        make: impl FnOnce() -> Result<reqwest::Client, String>,
    ) -> Result<reqwest::Client, String> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get(key) {
            return Ok(c.clone());
        }
        clients.retain(|k, _| !stale(k));
        let client = make()?;
        clients.insert(key.clone(), client.clone());
        Ok(client)
    }
}

/// An HTTPS client trusting `caBundle` (else the system roots), with the
/// call's timeout; a Service's host resolves to its endpoint.
pub fn build_client(
    ca_bundle: Option<&str>,
    resolve: Option<&(String, SocketAddr)>,
    timeout: Duration,
) -> Result<reqwest::Client, String> {
    build_client_with(ca_bundle, resolve, timeout, None)
}

/// [`build_client`] presenting `credentials`' client certificate, if any.
pub fn build_client_with(
    ca_bundle: Option<&str>,
    resolve: Option<&(String, SocketAddr)>,
    timeout: Duration,
    credentials: Option<&crate::Credentials>,
) -> Result<reqwest::Client, String> {
    let mut roots = rustls::RootCertStore::empty();
    let pem = ca_bundle
        .filter(|b| !b.is_empty())
        .map(|b| base64::engine::general_purpose::STANDARD.decode(b))
        .transpose()
        .map_err(|e| format!("invalid caBundle: {e}"))?;
    match pem {
        Some(pem) => {
            let mut reader = std::io::BufReader::new(pem.as_slice());
            for cert in rustls_pemfile::certs(&mut reader) {
                let cert = cert.map_err(|e| format!("unable to load root certificates: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("unable to load root certificates: {e}"))?;
            }
            if roots.is_empty() {
                return Err("unable to load root certificates: no certificates found".into());
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                // A system certificate rustls cannot use is skipped.
                let _ = roots.add(cert);
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let tls = match credentials.and_then(|c| c.identity.as_ref()) {
        None => tls.with_no_client_auth(),
        Some((cert, key)) => {
            let certs = rustls_pemfile::certs(&mut std::io::BufReader::new(cert.as_slice()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("unable to load client certificate: {e}"))?;
            let key = rustls_pemfile::private_key(&mut std::io::BufReader::new(key.as_slice()))
                .map_err(|e| format!("unable to load client key: {e}"))?
                .ok_or("tls: failed to find any PEM data in key input")?;
            tls.with_client_auth_cert(certs, key)
                .map_err(|e| format!("tls: {e}"))?
        }
    };
    let mut builder = reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .timeout(timeout)
        .no_proxy();
    if let Some((host, addr)) = resolve {
        builder = builder.resolve(host, *addr);
    }
    builder.build().map_err(|e| e.to_string())
}
