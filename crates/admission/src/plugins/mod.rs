//! kube-apiserver's built-in admission plugins (`plugin/pkg/admission/*`)
//! that 1.34 enables by default, in kube's order: their mutating phase
//! runs after NamespaceLifecycle and before validation, their validating
//! phase after validation. [`PluginConfig`] is kube's
//! `--enable-admission-plugins` / `--disable-admission-plugins`.
//!
//! None of them writes anything, so a dry-run request has the same effect.

mod cache;
mod certificates;
mod ingress_class;
mod limit_ranger;
mod node_taint;
mod pod_security;
mod priority;
mod pvc_resize;
mod runtime_class;
mod service_account;
mod storage_class;
mod storage_protection;
mod toleration_seconds;
mod util;

use std::collections::BTreeSet;
use std::sync::Arc;

use keelson_api::{AdmissionRequest, StoreApi};
use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::Value;

pub use pod_security::PodSecurityConfig;

/// Every plugin name kube-apiserver 1.34 registers, in its order
/// (`AllOrderedPlugins`).
pub const ALL_PLUGINS: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// The plugins kube-apiserver 1.34 runs unless disabled.
pub const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "DefaultStorageClass",
    "PersistentVolumeClaimResize",
    "DefaultTolerationSeconds",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "StorageObjectInUseProtection",
    "Priority",
    "TaintNodesByCondition",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodSecurity",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "ValidatingAdmissionPolicy",
];

/// The plugins this module runs (the others are run elsewhere in
/// admission, or not at all).
const BUILT_HERE: &[&str] = &[
    "LimitRanger",
    "ServiceAccount",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
];

/// kube's `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` default.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// Which admission plugins run: kube-apiserver's default set with
/// `--enable-admission-plugins` added and `--disable-admission-plugins`
/// taken away, and the plugins' own flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    enabled: BTreeSet<&'static str>,
    /// The plugins `--enable-admission-plugins` named.
    asked: BTreeSet<&'static str>,
    /// DefaultTolerationSeconds' not-ready toleration.
    pub not_ready_toleration_seconds: i64,
    /// DefaultTolerationSeconds' unreachable toleration.
    pub unreachable_toleration_seconds: i64,
    /// PodSecurity's defaults and exemptions.
    pub pod_security: PodSecurityConfig,
    /// kube-apiserver's `--allow-privileged`: whether containers may set
    /// `securityContext.privileged` (and pods run hostProcess
    /// containers). `true` by default, as kubeadm, kind and envtest run.
    pub allow_privileged: bool,
    /// ResourceQuota's `limitedResources`.
    pub resource_quota: crate::quota::ResourceQuotaConfig,
    /// The webhook plugins' `kubeConfigFile` credentials.
    pub webhook_auth: WebhookAuth,
}

/// The credentials each webhook plugin calls with (none: anonymous).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookAuth {
    /// MutatingAdmissionWebhook's.
    pub mutating: Option<std::sync::Arc<keelson_webhook_client::AuthInfoResolver>>,
    /// ValidatingAdmissionWebhook's.
    pub validating: Option<std::sync::Arc<keelson_webhook_client::AuthInfoResolver>>,
}

impl Default for PluginConfig {
    /// kube-apiserver's default-on set.
    fn default() -> Self {
        PluginConfig {
            enabled: DEFAULT_ON.iter().copied().collect(),
            asked: BTreeSet::new(),
            not_ready_toleration_seconds: DEFAULT_TOLERATION_SECONDS,
            unreachable_toleration_seconds: DEFAULT_TOLERATION_SECONDS,
            pod_security: PodSecurityConfig::default(),
            allow_privileged: true,
            resource_quota: crate::quota::ResourceQuotaConfig::default(),
            webhook_auth: WebhookAuth::default(),
        }
    }
}

impl PluginConfig {
    /// The default set plus `enable` minus `disable` (names as kube's comma
    /// lists give them); `Err` is kube-apiserver's start error text
    /// (unknown names, a name in both lists).
    pub fn from_flags(enable: &[String], disable: &[String]) -> Result<PluginConfig, String> {
        let mut errs = Vec::new();
        let known = |flag: &str, names: &[String], errs: &mut Vec<String>| {
            for n in names {
                if !ALL_PLUGINS.contains(&n.as_str()) {
                    errs.push(format!("{flag} plugin {n:?} is unknown"));
                }
            }
        };
        known("enable-admission-plugins", enable, &mut errs);
        known("disable-admission-plugins", disable, &mut errs);
        let both: BTreeSet<&str> = enable
            .iter()
            .filter(|n| disable.contains(n))
            .map(String::as_str)
            .collect();
        if !both.is_empty() {
            let list: Vec<&str> = both.into_iter().collect();
            errs.push(format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                list.join(" ")
            ));
        }
        if !errs.is_empty() {
            return Err(util::aggregate(&errs));
        }
        let mut config = PluginConfig::default();
        for n in disable {
            config.enabled.retain(|p| p != n);
        }
        for n in enable {
            if let Some(p) = ALL_PLUGINS.iter().find(|p| **p == n.as_str()) {
                config.enabled.insert(p);
                config.asked.insert(p);
            }
        }
        Ok(config)
    }

    /// Whether the plugin named `name` runs.
    pub fn enabled(&self, name: &str) -> bool {
        self.enabled.contains(name)
    }

    /// The plugins that run, in kube's order.
    pub fn enabled_plugins(&self) -> Vec<&'static str> {
        ALL_PLUGINS
            .iter()
            .copied()
            .filter(|p| self.enabled.contains(p))
            .collect()
    }

    /// The plugins `--enable-admission-plugins` named that Keelson does
    /// not run (to warn about at start; the default-on ones it does not
    /// run are listed in docs/compatibility.md).
    pub fn not_implemented(&self) -> Vec<&'static str> {
        const ELSEWHERE: &[&str] = &[
            "NamespaceLifecycle",
            "ValidatingAdmissionPolicy",
            "MutatingAdmissionWebhook",
            "ValidatingAdmissionWebhook",
            "ResourceQuota",
            "MutatingAdmissionPolicy",
        ];
        self.enabled_plugins()
            .into_iter()
            .filter(|p| self.asked.contains(p))
            .filter(|p| !BUILT_HERE.contains(p) && !ELSEWHERE.contains(p))
            .collect()
    }
}

/// One request as the plugins see it.
pub(crate) struct Attrs<'a> {
    pub store: &'a Arc<dyn StoreApi>,
    pub cache: &'a cache::Cache,
    /// `--authorization-mode`'s authorizer (CertificateApproval's checks).
    pub authz: &'a crate::policy::PolicyAuthz,
    pub req: &'a AdmissionRequest,
    /// The name errors show (name, else generateName).
    pub name: &'a str,
}

impl Attrs<'_> {
    /// `admission.NewForbidden`: `403 <resource> "<name>" is forbidden: <msg>`.
    pub(crate) fn forbidden(&self, msg: &str) -> ApiError {
        ApiError::forbidden(&self.req.gr, self.name, msg)
    }

    /// `resource` of the core group or `group`, no subresource.
    pub(crate) fn is(&self, group: &str, resource: &str) -> bool {
        self.req.subresource.is_empty()
            && self.req.gr.group == group
            && self.req.gr.resource == resource
    }
}

/// The built-in plugins with their caches.
pub(crate) struct Plugins {
    config: PluginConfig,
    cache: cache::Cache,
    limits: limit_ranger::LiveLookups,
    pod_security: pod_security::State,
    authz: Arc<crate::policy::PolicyAuthz>,
}

impl Plugins {
    pub(crate) fn new(config: PluginConfig, authz: Arc<crate::policy::PolicyAuthz>) -> Plugins {
        Plugins {
            authz,
            pod_security: pod_security::State::new(&config.pod_security),
            config,
            cache: cache::Cache::new(),
            limits: limit_ranger::LiveLookups::default(),
        }
    }

    pub(crate) fn config(&self) -> &PluginConfig {
        &self.config
    }

    /// The mutating phase, in kube's order.
    pub(crate) async fn mutate(
        &self,
        store: &Arc<dyn StoreApi>,
        req: &AdmissionRequest,
        object: &mut Value,
        name: &str,
    ) -> ApiResult<()> {
        let a = Attrs {
            store,
            cache: &self.cache,
            authz: &self.authz,
            req,
            name,
        };
        let on = |p: &str| self.config.enabled(p);
        if a.is("", "pods") {
            service_account::deprecated_name(object);
        }
        if on("LimitRanger") {
            limit_ranger::mutate(&a, &self.limits, object).await?;
        }
        if on("ServiceAccount") {
            service_account::admit(&a, object).await?;
        }
        if on("TaintNodesByCondition") {
            node_taint::admit(&a, object);
        }
        if on("Priority") {
            priority::admit(&a, object).await?;
        }
        if on("DefaultTolerationSeconds") {
            toleration_seconds::admit(&a, &self.config, object);
        }
        if on("DefaultStorageClass") {
            storage_class::admit(&a, object).await?;
        }
        if on("StorageObjectInUseProtection") {
            storage_protection::admit(&a, object);
        }
        if on("RuntimeClass") {
            runtime_class::admit(&a, object).await?;
        }
        if on("DefaultIngressClass") {
            ingress_class::admit(&a, object).await?;
        }
        Ok(())
    }

    /// The validating phase, in kube's order: the warnings (PodSecurity's).
    pub(crate) async fn validate(
        &self,
        store: &Arc<dyn StoreApi>,
        req: &AdmissionRequest,
        object: &Value,
        name: &str,
        annotations: &mut crate::audit::Annotations,
    ) -> ApiResult<Vec<String>> {
        let a = Attrs {
            store,
            cache: &self.cache,
            authz: &self.authz,
            req,
            name,
        };
        let on = |p: &str| self.config.enabled(p);
        let mut warnings = Vec::new();
        if on("LimitRanger") {
            limit_ranger::validate(&a, &self.limits, object).await?;
        }
        if on("ServiceAccount") {
            service_account::validate(&a, object).await?;
        }
        if on("PodSecurity") {
            warnings = pod_security::validate(&a, &self.pod_security, object, annotations).await?;
        }
        if on("Priority") {
            priority::validate(&a, object).await?;
        }
        if on("PersistentVolumeClaimResize") {
            pvc_resize::validate(&a, object).await?;
        }
        if on("RuntimeClass") {
            runtime_class::validate(&a, object).await?;
        }
        if on("CertificateApproval") {
            certificates::approval(&a).await?;
        }
        if on("CertificateSigning") {
            certificates::signing(&a, object).await?;
        }
        if on("ClusterTrustBundleAttest") {
            certificates::attest(&a, object).await?;
        }
        if on("CertificateSubjectRestriction") {
            certificates::subject_restriction(&a, object)?;
        }
        Ok(warnings)
    }
}
