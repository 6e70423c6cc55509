//! kube-apiserver's webhook client, shared by the conversion webhook
//! (`keelson-apiextensions`) and the admission webhooks
//! (`keelson-admission`): a `clientConfig` (`url`, or a `service` resolved
//! to a ready address of its Endpoints, `caBundle`), one HTTPS client per
//! configuration kept by the caller ([`Clients`]), and a JSON POST whose
//! failures are worded as Go's HTTP client and kube's REST client word
//! them.
#![forbid(unsafe_code)]

mod client;
mod credentials;
mod resolve;
mod transport;

pub use client::{build_client, build_client_with, Clients};
pub use credentials::{AuthInfoResolver, Credentials};
pub use resolve::resolve_endpoint;
pub use transport::{post, post_raw, post_raw_with, status_reason, TimeoutWording};

use std::net::SocketAddr;
use std::time::Duration;

use keelson_api::StoreApi;
use serde::Deserialize;

/// A webhook's `clientConfig` (`WebhookClientConfig` of admissionregistration
/// and apiextensions alike).
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientConfig {
    /// `url`.
    pub url: Option<String>,
    /// `service`.
    pub service: Option<ServiceReference>,
    /// Base64 PEM, as JSON carries `[]byte`.
    pub ca_bundle: Option<String>,
}

/// `clientConfig.service`.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct ServiceReference {
    /// `namespace`.
    pub namespace: String,
    /// `name`.
    pub name: String,
    /// `path`.
    pub path: Option<String>,
    /// `port` (default 443).
    pub port: Option<i32>,
}

/// Where one call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as kube's client shows it in errors (with `?timeout=Ns`).
    pub url: String,
    /// A Service's `<name>.<namespace>.svc` host and the endpoint it
    /// resolved to.
    pub resolve: Option<(String, SocketAddr)>,
}

/// kube's REST client adds the call's timeout to the URL, in whole
/// seconds rounded up.
pub fn with_timeout(url: &str, timeout: Duration) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    let mut secs = timeout.as_secs();
    if timeout.subsec_nanos() > 0 {
        secs += 1;
    }
    format!("{url}{sep}timeout={secs}s")
}

/// Where `cc` sends a call (a Service resolved through `store`); errors
/// are worded as kube words them (`Post "<url>": service "x" not found`).
pub async fn target(
    store: &dyn StoreApi,
    cc: &ClientConfig,
    timeout: Duration,
) -> Result<Target, String> {
    match (&cc.url, &cc.service) {
        (Some(url), _) => Ok(Target {
            url: with_timeout(url, timeout),
            resolve: None,
        }),
        (None, Some(svc)) => {
            let port = svc.port.unwrap_or(443);
            let host = format!("{}.{}.svc", svc.name, svc.namespace);
            let url = with_timeout(
                &format!("https://{host}:{port}{}", svc.path.as_deref().unwrap_or("")),
                timeout,
            );
            let addr = resolve_endpoint(store, &svc.namespace, &svc.name, port)
                .await
                .map_err(|e| format!("Post {url:?}: {e}"))?;
            Ok(Target {
                url,
                resolve: Some((host, addr)),
            })
        }
        (None, None) => Err("no url or service in the webhook client config".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_whole_seconds_rounded_up() {
        assert_eq!(
            with_timeout("https://a/b", Duration::from_secs(10)),
            "https://a/b?timeout=10s"
        );
        assert_eq!(
            with_timeout("https://a/b?x=1", Duration::from_millis(1500)),
            "https://a/b?x=1&timeout=2s"
        );
    }
}
