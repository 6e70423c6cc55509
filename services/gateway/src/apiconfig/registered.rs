//! The group versions kube-apiserver 1.34 registers (its scheme's
//! versions: `pkg/apis/<group>/install` plus the apiextensions and
//! aggregator servers), served or not. `--runtime-config` naming another
//! version of one of these groups stops kube's start with `group version
//! <gv> that has not been registered`; a group not here is ignored.

/// Group and its registered versions.
const REGISTERED: &[(&str, &[&str])] = &[
    ("", &["v1"]),
    (
        "admissionregistration.k8s.io",
        &["v1", "v1beta1", "v1alpha1"],
    ),
    ("apiextensions.k8s.io", &["v1", "v1beta1"]),
    ("apiregistration.k8s.io", &["v1", "v1beta1"]),
    ("apps", &["v1", "v1beta2", "v1beta1"]),
    ("authentication.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("authorization.k8s.io", &["v1", "v1beta1"]),
    ("autoscaling", &["v2", "v1", "v2beta2", "v2beta1"]),
    ("batch", &["v1", "v1beta1"]),
    ("certificates.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("coordination.k8s.io", &["v1", "v1beta1", "v1alpha2"]),
    ("discovery.k8s.io", &["v1", "v1beta1"]),
    ("events.k8s.io", &["v1", "v1beta1"]),
    ("extensions", &["v1beta1"]),
    (
        "flowcontrol.apiserver.k8s.io",
        &["v1", "v1beta3", "v1beta2", "v1beta1"],
    ),
    ("imagepolicy.k8s.io", &["v1alpha1"]),
    ("internal.apiserver.k8s.io", &["v1alpha1"]),
    ("networking.k8s.io", &["v1", "v1beta1"]),
    ("node.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("policy", &["v1", "v1beta1"]),
    ("rbac.authorization.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("resource.k8s.io", &["v1", "v1beta2", "v1beta1", "v1alpha3"]),
    ("scheduling.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("storage.k8s.io", &["v1", "v1beta1", "v1alpha1"]),
    ("storagemigration.k8s.io", &["v1alpha1"]),
];

/// The alpha group versions kube-apiserver 1.34 serves resources in once
/// enabled (some only with an alpha gate on): Keelson has no data for
/// them. Every other registered version not in the catalog serves nothing
/// in kube 1.34 either (its kinds were removed), so enabling it is
/// accepted and changes nothing.
const ALPHA_WITH_RESOURCES: &[(&str, &str)] = &[
    ("admissionregistration.k8s.io", "v1alpha1"),
    ("certificates.k8s.io", "v1alpha1"),
    ("coordination.k8s.io", "v1alpha2"),
    ("internal.apiserver.k8s.io", "v1alpha1"),
    ("resource.k8s.io", "v1alpha3"),
    ("storage.k8s.io", "v1alpha1"),
    ("storagemigration.k8s.io", "v1alpha1"),
];

/// Every registered group version.
pub(super) fn all() -> impl Iterator<Item = (&'static str, &'static str)> {
    REGISTERED
        .iter()
        .flat_map(|(g, vs)| vs.iter().map(move |v| (*g, *v)))
}

/// Whether kube-apiserver registers the group `group`.
pub(super) fn group(group: &str) -> bool {
    REGISTERED.iter().any(|(g, _)| *g == group)
}

/// Whether kube would serve resources in this alpha version Keelson lacks.
pub(super) fn unserved_alpha(group: &str, version: &str) -> bool {
    ALPHA_WITH_RESOURCES.contains(&(group, version))
}
