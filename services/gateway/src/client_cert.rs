//! Client certificates as kube-apiserver takes them: requested, never
//! required, and a certificate the client CAs do not verify does not fail
//! the handshake — the connection is made and its requests are refused by
//! authentication (`401`) unless another credential (a bearer token)
//! authenticates them, as kube's x509 authenticator does after the
//! handshake (Go's TLS server asks with `RequestClientCert` and verifies
//! nothing).
//!
//! [`Lenient`] wraps rustls' WebPKI verifier: a certificate it verifies is
//! accepted exactly as before (same verifier, same cost); one it refuses is
//! accepted at the TLS layer and the refusal is recorded in the
//! connection's [`REJECTED`] flag, which the accept loop scopes around the
//! handshake.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};

tokio::task_local! {
    /// Set when the handshake polled in this scope presented a client
    /// certificate the client CAs do not verify.
    pub(crate) static REJECTED: Arc<AtomicBool>;
}

/// Marks a connection whose client certificate was refused: its requests
/// authenticate by bearer token or not at all (never anonymously).
#[derive(Debug, Clone, Copy)]
pub struct PeerRejected;

/// A client certificate verifier that never fails a handshake for an
/// unverified chain (see the module docs).
#[derive(Debug)]
pub(crate) struct Lenient {
    pub(crate) inner: Arc<dyn ClientCertVerifier>,
}

impl ClientCertVerifier for Lenient {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        match self
            .inner
            .verify_client_cert(end_entity, intermediates, now)
        {
            Ok(v) => Ok(v),
            Err(e) => {
                tracing::debug!(error = %e, "client certificate not verified");
                // Outside a handshake scope (never in the server) the
                // certificate stays refused.
                REJECTED
                    .try_with(|r| r.store(true, Ordering::Relaxed))
                    .map_err(|_| e)?;
                Ok(ClientCertVerified::assertion())
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }
}
