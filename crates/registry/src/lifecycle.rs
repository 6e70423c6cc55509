//! Deprecated built-in APIs (kube's prerelease-lifecycle data and the
//! deprecation of GA resources): what a request to them is warned about,
//! as kube's `deprecation.WarningMessage` words it.

/// One deprecated built-in resource at one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deprecation {
    /// API group (empty for core).
    pub group: &'static str,
    /// Version, e.g. `v1`.
    pub version: &'static str,
    /// Resource, e.g. `endpoints`.
    pub resource: &'static str,
    /// Kind, e.g. `Endpoints`.
    pub kind: &'static str,
    /// Release it was deprecated in, `(major, minor)`.
    pub deprecated_in: (u32, u32),
    /// Release it is removed in, if planned.
    pub removed_in: Option<(u32, u32)>,
    /// The replacement as `group/version Kind`, if any.
    pub replacement: Option<&'static str>,
}

/// The deprecated APIs kube-apiserver 1.34 serves, by default or once
/// `--runtime-config` enables them (the betas: their
/// `zz_generated.prerelease-lifecycle.go` in k8s.io/api v0.34.0; the other
/// enableable betas are deprecated in 1.35 or later).
const DEPRECATED: &[Deprecation] = &[
    Deprecation {
        group: "",
        version: "v1",
        resource: "componentstatuses",
        kind: "ComponentStatus",
        deprecated_in: (1, 19),
        removed_in: None,
        replacement: None,
    },
    Deprecation {
        group: "",
        version: "v1",
        resource: "endpoints",
        kind: "Endpoints",
        deprecated_in: (1, 33),
        removed_in: None,
        replacement: Some("discovery.k8s.io/v1 EndpointSlice"),
    },
    Deprecation {
        group: "networking.k8s.io",
        version: "v1beta1",
        resource: "ipaddresses",
        kind: "IPAddress",
        deprecated_in: (1, 34),
        removed_in: Some((1, 37)),
        replacement: None,
    },
    Deprecation {
        group: "networking.k8s.io",
        version: "v1beta1",
        resource: "servicecidrs",
        kind: "ServiceCIDR",
        deprecated_in: (1, 34),
        removed_in: Some((1, 37)),
        replacement: None,
    },
    Deprecation {
        group: "storage.k8s.io",
        version: "v1beta1",
        resource: "volumeattributesclasses",
        kind: "VolumeAttributesClass",
        deprecated_in: (1, 34),
        removed_in: Some((1, 37)),
        replacement: Some("storage.k8s.io/v1 VolumeAttributesClass"),
    },
];

/// The deprecation of the built-in `group`/`version`/`resource`, if it is.
pub fn builtin_deprecation(
    group: &str,
    version: &str,
    resource: &str,
) -> Option<&'static Deprecation> {
    DEPRECATED
        .iter()
        .find(|d| d.group == group && d.version == version && d.resource == resource)
}

impl Deprecation {
    /// kube's warning text: `v1 Endpoints is deprecated in v1.33+; use
    /// discovery.k8s.io/v1 EndpointSlice` (`, unavailable in vX.Y+` when a
    /// removal is planned).
    pub fn warning(&self) -> String {
        let gv = if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        };
        let (ma, mi) = self.deprecated_in;
        let mut w = format!("{gv} {} is deprecated in v{ma}.{mi}+", self.kind);
        if let Some((ra, ri)) = self.removed_in {
            w.push_str(&format!(", unavailable in v{ra}.{ri}+"));
        }
        if let Some(r) = self.replacement {
            w.push_str("; use ");
            w.push_str(r);
        }
        w
    }

    /// The `removed_release` label of `apiserver_requested_deprecated_apis`
    /// (`1.y`, empty when no removal is planned).
    pub fn removed_release(&self) -> String {
        self.removed_in
            .map(|(a, i)| format!("{a}.{i}"))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_wording() {
        let e = builtin_deprecation("", "v1", "endpoints").expect("endpoints");
        assert_eq!(
            e.warning(),
            "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
        );
        let c = builtin_deprecation("", "v1", "componentstatuses").expect("cs");
        assert_eq!(c.warning(), "v1 ComponentStatus is deprecated in v1.19+");
        assert_eq!(c.removed_release(), "");
        let gone = Deprecation {
            group: "batch",
            version: "v1beta1",
            resource: "cronjobs",
            kind: "CronJob",
            deprecated_in: (1, 21),
            removed_in: Some((1, 25)),
            replacement: Some("batch/v1 CronJob"),
        };
        assert_eq!(
            gone.warning(),
            "batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"
        );
        assert_eq!(gone.removed_release(), "1.25");
        assert!(builtin_deprecation("", "v1", "pods").is_none());
    }

    #[test]
    fn enableable_betas() {
        let vac = builtin_deprecation("storage.k8s.io", "v1beta1", "volumeattributesclasses")
            .expect("vac");
        assert_eq!(
            vac.warning(),
            "storage.k8s.io/v1beta1 VolumeAttributesClass is deprecated in v1.34+, unavailable in v1.37+; use storage.k8s.io/v1 VolumeAttributesClass"
        );
        assert_eq!(vac.removed_release(), "1.37");
        let ip = builtin_deprecation("networking.k8s.io", "v1beta1", "ipaddresses").expect("ip");
        assert_eq!(
            ip.warning(),
            "networking.k8s.io/v1beta1 IPAddress is deprecated in v1.34+, unavailable in v1.37+"
        );
        // Deprecated in 1.35: no warning in 1.34.
        assert!(builtin_deprecation("resource.k8s.io", "v1beta1", "resourceclaims").is_none());
    }
}
