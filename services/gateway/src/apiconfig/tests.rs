//! `--runtime-config` and `--feature-gates` parsing and their effect on
//! the built-in catalog.

use super::*;

fn served(c: &Catalog, g: &str, v: &str, r: &str) -> bool {
    c.snapshot().lookup(g, v, r).is_some()
}

#[test]
fn disabling_a_group_version_and_a_resource() {
    let c = Catalog::builtin();
    RuntimeConfig::parse("batch/v1=false,apps/v1/deployments=false")
        .apply(&c)
        .expect("applies");
    assert!(!served(&c, "batch", "v1", "jobs"));
    assert!(
        c.snapshot().group("batch").is_none(),
        "the group leaves discovery"
    );
    assert!(!served(&c, "apps", "v1", "deployments"));
    assert!(served(&c, "apps", "v1", "replicasets"));
    assert!(served(&c, "", "v1", "pods"));
}

#[test]
fn api_all_false_then_one_version_back() {
    let c = Catalog::builtin();
    RuntimeConfig::parse("api/all=false,api/v1=true,autoscaling/v1")
        .apply(&c)
        .expect("applies");
    assert!(served(&c, "", "v1", "pods"));
    assert!(served(&c, "autoscaling", "v1", "horizontalpodautoscalers"));
    assert!(!served(&c, "autoscaling", "v2", "horizontalpodautoscalers"));
    assert!(!served(&c, "apps", "v1", "deployments"));
}

#[test]
fn errors() {
    let c = Catalog::builtin();
    let e = RuntimeConfig::parse("batch/v1=maybe")
        .apply(&c)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid value of batch/v1: maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax"
    );
    // A version kube never registered, whatever its value.
    for flag in ["apps/v7=true", "apps/v7=false", "api/v2=true"] {
        let e = RuntimeConfig::parse(flag).apply(&c).unwrap_err();
        let gv = flag
            .split('=')
            .next()
            .unwrap_or_default()
            .replace("api/", "");
        assert_eq!(
            e.to_string(),
            format!("group version {gv} that has not been registered")
        );
    }
    // An alpha version kube serves resources in: Keelson has no data.
    let e = RuntimeConfig::parse("storage.k8s.io/v1alpha1=true")
        .apply(&c)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("no data for storage.k8s.io/v1alpha1"),
        "{e}"
    );
    let e = RuntimeConfig::parse("api/all=true").apply(&c).unwrap_err();
    assert!(e.to_string().starts_with("--runtime-config api/all=true: Keelson has no data for admissionregistration.k8s.io/v1alpha1, "), "{e}");
    let e = RuntimeConfig::parse("api/alpha=true")
        .apply(&c)
        .unwrap_err();
    assert!(
        e.to_string().contains("storagemigration.k8s.io/v1alpha1"),
        "{e}"
    );
    // A resource of a served version the catalog lacks.
    let e = RuntimeConfig::parse("apps/v1/foos=true")
        .apply(&c)
        .unwrap_err();
    assert!(e.to_string().contains("no data for apps/v1/foos"), "{e}");
    // Disabling what is not served, registered versions that serve nothing
    // in 1.34, and unknown groups are all fine.
    RuntimeConfig::parse(
        "storage.k8s.io/v1alpha1=false,batch/v1beta1=true,example.com/v1=true,api/all=true,api/alpha=false",
    )
    .apply(&c)
    .expect("kube accepts these");
}

#[test]
fn a_beta_version_is_served_when_enabled() {
    let c = Catalog::builtin();
    assert!(!served(
        &c,
        "storage.k8s.io",
        "v1beta1",
        "volumeattributesclasses"
    ));
    RuntimeConfig::parse("storage.k8s.io/v1beta1=true")
        .apply(&c)
        .expect("applies");
    assert!(served(
        &c,
        "storage.k8s.io",
        "v1beta1",
        "volumeattributesclasses"
    ));
    let s = c.snapshot();
    let g = s.group("storage.k8s.io").expect("group");
    assert_eq!(g.versions, ["v1", "v1beta1"], "v1 stays preferred");
    assert!(!served(&c, "networking.k8s.io", "v1beta1", "ipaddresses"));
    assert!(!served(&c, "resource.k8s.io", "v1beta1", "resourceclaims"));
}

#[test]
fn api_beta_enables_every_beta_but_gated_ones() {
    let c = Catalog::builtin();
    RuntimeConfig::parse("api/beta=true")
        .apply(&c)
        .expect("applies");
    for (g, v, r) in [
        ("storage.k8s.io", "v1beta1", "volumeattributesclasses"),
        ("networking.k8s.io", "v1beta1", "ipaddresses"),
        ("networking.k8s.io", "v1beta1", "servicecidrs"),
        ("resource.k8s.io", "v1beta1", "resourceclaims"),
        ("resource.k8s.io", "v1beta2", "resourceslices"),
        ("coordination.k8s.io", "v1beta1", "leasecandidates"),
    ] {
        assert!(served(&c, g, v, r), "{g}/{v}/{r}");
    }
    let s = c.snapshot();
    let versions = &s.group("resource.k8s.io").expect("group").versions;
    assert_eq!(versions, &["v1", "v1beta2", "v1beta1"]);
    // Behind gates that are off by default.
    assert!(!served(
        &c,
        "certificates.k8s.io",
        "v1beta1",
        "clustertrustbundles"
    ));
    assert!(!served(
        &c,
        "admissionregistration.k8s.io",
        "v1beta1",
        "mutatingadmissionpolicies"
    ));
    assert!(
        !s.group("admissionregistration.k8s.io")
            .expect("group")
            .versions
            .contains(&"v1beta1".to_string()),
        "a version with nothing served is not listed"
    );
}

#[test]
fn gates_and_resource_entries() {
    let c = Catalog::builtin();
    let gates = FeatureGates::parse("ClusterTrustBundle=true").expect("gates");
    RuntimeConfig::parse("certificates.k8s.io/v1beta1=true,resource.k8s.io/v1beta1/resourceslices=true,networking.k8s.io/v1beta1=true,networking.k8s.io/v1beta1/servicecidrs=false")
        .apply_with(&c, &gates)
        .expect("applies");
    assert!(served(
        &c,
        "certificates.k8s.io",
        "v1beta1",
        "clustertrustbundles"
    ));
    assert!(served(&c, "resource.k8s.io", "v1beta1", "resourceslices"));
    assert!(!served(&c, "resource.k8s.io", "v1beta1", "resourceclaims"));
    assert!(served(&c, "networking.k8s.io", "v1beta1", "ipaddresses"));
    assert!(!served(&c, "networking.k8s.io", "v1beta1", "servicecidrs"));
    // api/all=true with the alphas off: every beta, GA kept.
    let c = Catalog::builtin();
    RuntimeConfig::parse("api/all=true,api/alpha=false")
        .apply(&c)
        .expect("applies");
    assert!(served(&c, "resource.k8s.io", "v1beta2", "deviceclasses"));
    assert!(served(&c, "apps", "v1", "deployments"));
}

#[test]
fn feature_gates() {
    let g = FeatureGates::parse("AllowUnsafeMalformedObjectDeletion=true").expect("parses");
    assert!(g.enabled("AllowUnsafeMalformedObjectDeletion"));
    assert!(!FeatureGates::default().enabled("AllowUnsafeMalformedObjectDeletion"));
    assert_eq!(
        FeatureGates::parse("Nope=true").unwrap_err(),
        "unrecognized feature gate: Nope"
    );
    assert_eq!(
        FeatureGates::parse("CBORServingAndStorage").unwrap_err(),
        "missing bool value for CBORServingAndStorage"
    );
    assert_eq!(
        FeatureGates::parse("CBORServingAndStorage=yes").unwrap_err(),
        "invalid value of CBORServingAndStorage=yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax"
    );
}
