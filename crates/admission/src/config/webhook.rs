//! The webhook admission plugins' configuration
//! (`apiserver.config.k8s.io/v1` `WebhookAdmissionConfiguration`, or
//! `v1alpha1` `WebhookAdmission`): the kubeconfig whose users give the
//! webhook calls their credentials.

use std::sync::Arc;

use keelson_webhook_client::AuthInfoResolver;
use serde::Deserialize;

use super::decode::{self, Scheme};

const SCHEME: Scheme = Scheme {
    name: "k8s.io/apiserver/pkg/admission/plugin/webhook/config/kubeconfig.go",
    kinds: &[
        (
            "apiserver.config.k8s.io/v1",
            "WebhookAdmissionConfiguration",
        ),
        ("apiserver.config.k8s.io/v1alpha1", "WebhookAdmission"),
    ],
};

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct File {
    kube_config_file: String,
}

/// kube's `LoadConfig` and `NewDefaultAuthenticationInfoResolver`: the
/// users of the kubeconfig named (`Err`: kube's error, e.g.
/// `kubeConfigFile: Invalid value: "x": must be an absolute file path`).
pub(crate) fn load(data: &[u8]) -> Result<Arc<AuthInfoResolver>, String> {
    let (doc, _) = decode::typed(data, &SCHEME)?;
    let f: File = decode::fields(doc)?;
    let path = std::path::Path::new(&f.kube_config_file);
    if !path.is_absolute() {
        return Err(format!(
            "kubeConfigFile: Invalid value: {:?}: must be an absolute file path",
            f.kube_config_file
        ));
    }
    AuthInfoResolver::from_file(path).map(Arc::new)
}
