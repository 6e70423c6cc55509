//! Credentials for calling webhooks, from the kubeconfig file a webhook
//! admission plugin's `WebhookAdmissionConfiguration.kubeConfigFile` names
//! (kube's `defaultAuthenticationInfoResolver`): a `users` entry chosen by
//! the webhook's `host:port` (a Service is `<name>.<namespace>.svc:<port>`):
//! the exact name, then `*.`-prefixed parents, then the same without a
//! `:443` port, then `*`, then the current context's user; else none.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;

/// What a call presents: a bearer token, basic credentials, a client
/// certificate, impersonation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// `token`, or the contents of `tokenFile`.
    pub bearer: Option<String>,
    /// `username` and `password`.
    pub basic: Option<(String, String)>,
    /// The PEM certificate chain and key (`client-certificate(-data)`,
    /// `client-key(-data)`).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
    /// `as`, `as-uid`, `as-groups`.
    pub impersonate: Option<(String, String, Vec<String>)>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct KubeConfig {
    users: Vec<NamedUser>,
    contexts: Vec<NamedContext>,
    #[serde(rename = "current-context")]
    current_context: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NamedUser {
    name: String,
    user: User,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NamedContext {
    name: String,
    context: Context,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Context {
    user: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct User {
    token: String,
    #[serde(rename = "tokenFile")]
    token_file: String,
    #[serde(rename = "client-certificate")]
    client_certificate: String,
    #[serde(rename = "client-certificate-data")]
    client_certificate_data: String,
    #[serde(rename = "client-key")]
    client_key: String,
    #[serde(rename = "client-key-data")]
    client_key_data: String,
    username: String,
    password: String,
    #[serde(rename = "as")]
    impersonate: String,
    #[serde(rename = "as-uid")]
    impersonate_uid: String,
    #[serde(rename = "as-groups")]
    impersonate_groups: Vec<String>,
}

/// The users of one kubeconfig, by name, and the current context's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthInfoResolver {
    users: HashMap<String, Credentials>,
    current: Option<String>,
}

fn read(base: &Path, file: &str) -> Result<Vec<u8>, String> {
    let p = Path::new(file);
    let p = if p.is_relative() {
        base.join(p)
    } else {
        p.to_path_buf()
    };
    std::fs::read(&p).map_err(|e| format!("open {}: {e}", p.display()))
}

fn data(inline: &str, file: &str, base: &Path) -> Result<Option<Vec<u8>>, String> {
    if !inline.is_empty() {
        return base64::engine::general_purpose::STANDARD
            .decode(inline.trim())
            .map(Some)
            .map_err(|e| format!("illegal base64 data: {e}"));
    }
    if !file.is_empty() {
        return read(base, file).map(Some);
    }
    Ok(None)
}

impl User {
    /// kube's `restConfigFromKubeconfig` (paths relative to the file).
    fn credentials(&self, base: &Path) -> Result<Credentials, String> {
        let bearer = if !self.token.is_empty() {
            Some(self.token.clone())
        } else if !self.token_file.is_empty() {
            Some(String::from_utf8_lossy(&read(base, &self.token_file)?).into_owned())
        } else {
            None
        };
        let cert = data(
            &self.client_certificate_data,
            &self.client_certificate,
            base,
        )?;
        let key = data(&self.client_key_data, &self.client_key, base)?;
        let identity = match (cert, key) {
            (Some(c), Some(k)) => Some((c, k)),
            (None, None) => None,
            _ => return Err("client-cert-data and client-key-data must both be specified".into()),
        };
        let basic = (!self.username.is_empty() || !self.password.is_empty())
            .then(|| (self.username.clone(), self.password.clone()));
        let impersonate = (!self.impersonate.is_empty()).then(|| {
            (
                self.impersonate.clone(),
                self.impersonate_uid.clone(),
                self.impersonate_groups.clone(),
            )
        });
        Ok(Credentials {
            bearer,
            basic,
            identity,
            impersonate,
        })
    }
}

impl AuthInfoResolver {
    /// The users of the kubeconfig at `path` (YAML or JSON).
    pub fn from_file(path: &Path) -> Result<AuthInfoResolver, String> {
        let text = std::fs::read(path).map_err(|e| format!("open {}: {e}", path.display()))?;
        let cfg: KubeConfig = serde_yaml::from_slice(&text).map_err(|e| {
            format!(
                "error loading config file {:?}: {e}",
                path.display().to_string()
            )
        })?;
        let base = path.parent().unwrap_or(Path::new("/"));
        let mut users = HashMap::new();
        for u in &cfg.users {
            users.insert(u.name.clone(), u.user.credentials(base)?);
        }
        let current = cfg
            .contexts
            .iter()
            .find(|c| !cfg.current_context.is_empty() && c.name == cfg.current_context)
            .map(|c| c.context.user.clone())
            .filter(|u| !u.is_empty());
        Ok(AuthInfoResolver { users, current })
    }

    /// The credentials for a call to `host_port` (kube's lookup order).
    pub fn for_host_port(&self, host_port: &str) -> Option<&Credentials> {
        let by_name = |target: &str| -> Option<&Credentials> {
            if let Some(c) = self.users.get(target) {
                return Some(c);
            }
            let steps: Vec<&str> = target.split('.').collect();
            (1..steps.len()).find_map(|i| self.users.get(&format!("*.{}", steps[i..].join("."))))
        };
        if let Some(c) = by_name(host_port) {
            return Some(c);
        }
        if let Some(host) = host_port.strip_suffix(":443") {
            if let Some(c) = by_name(host) {
                return Some(c);
            }
        }
        if let Some(c) = self.users.get("*") {
            return Some(c);
        }
        self.current.as_ref().and_then(|u| self.users.get(u))
    }

    /// The credentials for a call to `cc`: kube's `ClientConfigFor(u.Host)`
    /// (the URL's host, with its port when it names one) or
    /// `ClientConfigForService`.
    pub fn for_client_config(&self, cc: &crate::ClientConfig) -> Option<&Credentials> {
        match (&cc.url, &cc.service) {
            (Some(url), _) => {
                let u = reqwest::Url::parse(url).ok()?;
                let host = u.host_str()?;
                match u.port() {
                    Some(p) => self.for_host_port(&format!("{host}:{p}")),
                    None => self.for_host_port(host),
                }
            }
            (None, Some(svc)) => {
                self.for_service(&svc.name, &svc.namespace, svc.port.unwrap_or(443))
            }
            (None, None) => None,
        }
    }

    /// The credentials for a Service webhook (`<name>.<namespace>.svc:<port>`).
    pub fn for_service(&self, name: &str, namespace: &str, port: i32) -> Option<&Credentials> {
        self.for_host_port(&format!("{name}.{namespace}.svc:{port}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_chosen_as_kube_chooses_them() {
        let dir = std::env::temp_dir().join(format!("kc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tok"), "from-file").unwrap();
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            r#"apiVersion: v1
kind: Config
users:
- name: hook.ns.svc
  user: {token: exact}
- name: "*.other.svc"
  user: {tokenFile: tok}
- name: "example.com"
  user: {username: u, password: p}
- name: fallback
  user: {token: current}
contexts:
- name: c
  context: {user: fallback}
current-context: c
"#,
        )
        .unwrap();
        let r = AuthInfoResolver::from_file(&path).unwrap();
        let bearer = |c: Option<&Credentials>| c.and_then(|c| c.bearer.clone());
        assert_eq!(
            bearer(r.for_service("hook", "ns", 443)),
            Some("exact".into())
        );
        // `*.` parents are tried with the port, then without `:443`.
        assert_eq!(
            bearer(r.for_service("a", "other", 443)),
            Some("from-file".into())
        );
        assert_eq!(
            bearer(r.for_service("a", "other", 8443)),
            Some("current".into())
        );
        assert_eq!(
            r.for_host_port("example.com:443")
                .and_then(|c| c.basic.clone()),
            Some(("u".into(), "p".into()))
        );
        // Not named: the current context's user.
        assert_eq!(
            bearer(r.for_host_port("elsewhere:9443")),
            Some("current".into())
        );
        // A port other than 443 is not stripped.
        assert_eq!(
            bearer(r.for_service("hook", "ns", 8443)),
            Some("current".into())
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
