//! `keelson-webhook-echo`: an HTTPS admission webhook for benchmarks. It
//! makes its own CA and a certificate for 127.0.0.1, writes the CA's PEM to
//! `--ca-out`, prints `listening on ADDR`, and answers every
//! `AdmissionReview` (v1 or v1beta1) with `allowed: true` for the request's
//! uid, over HTTP/1.1 keep-alive, as a webhook that only validates would.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Parser)]
#[command(name = "keelson-webhook-echo")]
struct Flags {
    /// Where to write the CA certificate (PEM) that signed the server's.
    #[arg(long)]
    ca_out: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
}

/// The review's answer: allowed, for the request's uid, in its version.
fn answer(review: &Value) -> Value {
    json!({
        "apiVersion": review["apiVersion"].as_str().unwrap_or("admission.k8s.io/v1"),
        "kind": "AdmissionReview",
        "response": {"uid": review["request"]["uid"], "allowed": true},
    })
}

/// Answer one request: the review allowed.
async fn review(
    req: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, Error> {
    let body = req.into_body().collect().await?.to_bytes();
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(hyper::Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(answer(&review).to_string())))?)
}

fn tls_acceptor(ca_out: &std::path::Path) -> Result<tokio_rustls::TlsAcceptor, Error> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca = rcgen::CertificateParams::default();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "keelson-webhook-echo-ca");
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;
    let key = rcgen::KeyPair::generate()?;
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])?
        .signed_by(&key, &ca_cert, &ca_key)?;
    std::fs::write(ca_out, ca_cert.pem())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(tls)))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let f = Flags::parse();
    let acceptor = tls_acceptor(&f.ca_out)?;
    let listener = tokio::net::TcpListener::bind(&f.listen).await?;
    println!("listening on {}", listener.local_addr()?);
    loop {
        let (tcp, _) = listener.accept().await?;
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(review);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
        });
    }
}
