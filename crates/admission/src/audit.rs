//! Audit annotations admission steps record for the request's audit
//! event (kube's `Attributes.AddAnnotation`): PodSecurity's
//! `pod-security.kubernetes.io/*`, ValidatingAdmissionPolicy's
//! `<policy>/<key>` and `validation.policy.admission.k8s.io/validation_failure`,
//! the webhooks' `mutation.webhook.admission.k8s.io/round_<r>_index_<i>`
//! and `<webhook>/<key>`. They ride on the admission answer, or on its
//! error, to the gateway's audit log.

use std::collections::BTreeMap;

/// The annotations recorded so far; the first value of a key stays.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Annotations(BTreeMap<String, String>);

impl Annotations {
    /// Record `key` unless it already has a value.
    pub(crate) fn add(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.0.entry(key.into()).or_insert_with(|| value.into());
    }

    /// The recorded annotations.
    pub(crate) fn into_map(self) -> BTreeMap<String, String> {
        self.0
    }
}
