//! One POST of a review, and its failures as Go's HTTP client and kube's
//! REST client word them.

use std::net::{IpAddr, SocketAddr};

use serde_json::Value;

use crate::Target;

/// How a call that ran out of time is worded: the conversion webhook's
/// client has an HTTP client timeout, the admission webhooks' a context
/// deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutWording {
    /// `context deadline exceeded (Client.Timeout exceeded while awaiting headers)`.
    ClientTimeout,
    /// `context deadline exceeded`.
    ContextDeadline,
}

fn str_at<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or("")
}

/// POST `body` as JSON; the answer's JSON, or the reason the call failed.
pub async fn post(
    client: &reqwest::Client,
    target: &Target,
    body: &Value,
    timeout: TimeoutWording,
) -> Result<Value, String> {
    let bytes = post_raw(client, target, body, timeout).await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))
}

/// POST `body` as JSON; the bytes of a 2xx answer, or the reason the call
/// failed (a non-2xx answer as kube's REST client reports it).
pub async fn post_raw(
    client: &reqwest::Client,
    target: &Target,
    body: &Value,
    timeout: TimeoutWording,
) -> Result<Vec<u8>, String> {
    post_raw_with(client, target, body, timeout, None).await
}

/// [`post_raw`] with `credentials`' token, basic credentials and
/// impersonation headers.
pub async fn post_raw_with(
    client: &reqwest::Client,
    target: &Target,
    body: &Value,
    timeout: TimeoutWording,
    credentials: Option<&crate::Credentials>,
) -> Result<Vec<u8>, String> {
    let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
    let mut req = client
        .post(&target.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "application/json, */*");
    if let Some(c) = credentials {
        if let Some(t) = &c.bearer {
            req = req.bearer_auth(t.trim());
        } else if let Some((u, p)) = &c.basic {
            req = req.basic_auth(u, Some(p));
        }
        if let Some((user, uid, groups)) = &c.impersonate {
            req = req.header("Impersonate-User", user);
            if !uid.is_empty() {
                req = req.header("Impersonate-Uid", uid);
            }
            for g in groups {
                req = req.header("Impersonate-Group", g);
            }
        }
    }
    let resp = req.body(bytes).send().await.map_err(|e| {
        format!(
            "Post {:?}: {}",
            target.url,
            transport_reason(&e, target, timeout)
        )
    })?;
    let code = resp.status().as_u16();
    let body = resp.bytes().await.map_err(|e| {
        format!(
            "Post {:?}: {}",
            target.url,
            transport_reason(&e, target, timeout)
        )
    })?;
    if !(200..300).contains(&code) {
        return Err(status_reason(code, &body));
    }
    Ok(body.to_vec())
}

/// Why a call failed at the transport, as Go says it.
fn transport_reason(e: &reqwest::Error, target: &Target, timeout: TimeoutWording) -> String {
    if e.is_timeout() {
        return match timeout {
            TimeoutWording::ClientTimeout => {
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".into()
            }
            TimeoutWording::ContextDeadline => "context deadline exceeded".into(),
        };
    }
    let dial_addr = || {
        target.resolve.as_ref().map_or_else(
            || {
                reqwest::Url::parse(&target.url)
                    .ok()
                    .and_then(|u| {
                        let host = u.host_str()?.trim_matches(['[', ']']).to_string();
                        let port = u.port_or_known_default()?;
                        Some(match host.parse::<IpAddr>() {
                            Ok(ip) => SocketAddr::new(ip, port).to_string(),
                            Err(_) => format!("{host}:{port}"),
                        })
                    })
                    .unwrap_or_default()
            },
            |(_, addr)| addr.to_string(),
        )
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return format!("dial tcp {}: connect: connection refused", dial_addr());
            }
            if let Some(tls) = io
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            {
                return tls_reason(tls);
            }
        }
        if let Some(tls) = s.downcast_ref::<rustls::Error>() {
            return tls_reason(tls);
        }
        source = s.source();
    }
    // The innermost cause is the most telling.
    let mut last = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}

/// A TLS failure as Go's crypto/tls words the common ones.
fn tls_reason(e: &rustls::Error) -> String {
    use rustls::CertificateError;
    match e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                .into()
        }
        rustls::Error::InvalidCertificate(CertificateError::Expired) => {
            "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
                .into()
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => "tls: failed to verify certificate: x509: certificate is not valid for the requested name".into(),
        other => format!("tls: {other}"),
    }
}

/// A non-2xx answer as kube's REST client reports it: a Status body's
/// message, else its generic wording for the code.
pub fn status_reason(code: u16, body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        if str_at(&v, "kind") == "Status" {
            let msg = str_at(&v, "message");
            if !msg.is_empty() {
                return msg.to_string();
            }
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match code {
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "Unauthorized".into(),
        403 => "forbidden".into(),
        404 => "the server could not find the requested resource".into(),
        405 => "the server does not allow this method on the requested resource".into(),
        409 => "the server reported a conflict".into(),
        429 => "the server has received too many requests and has asked us to try again later"
            .into(),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".into(),
        c if c >= 500 => {
            format!("an error on the server ({text:?}) has prevented the request from succeeding")
        }
        c => format!("the server responded with the status code {c} but did not return more information"),
    }
}
