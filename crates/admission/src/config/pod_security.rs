//! PodSecurity's configuration (`pod-security.admission.config.k8s.io`
//! `PodSecurityConfiguration`, v1 and v1beta1) as a [`PodSecurityConfig`].

use serde::Deserialize;

use super::decode::{self, Scheme};
use crate::PodSecurityConfig;

const SCHEME: Scheme = Scheme {
    name: "k8s.io/pod-security-admission/admission/api/scheme/scheme.go",
    kinds: &[
        (
            "pod-security.admission.config.k8s.io/v1",
            "PodSecurityConfiguration",
        ),
        (
            "pod-security.admission.config.k8s.io/v1beta1",
            "PodSecurityConfiguration",
        ),
    ],
};

#[derive(Deserialize, Default)]
#[serde(default)]
struct File {
    defaults: Defaults,
    exemptions: Exemptions,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Defaults {
    enforce: String,
    #[serde(rename = "enforce-version")]
    enforce_version: String,
    audit: String,
    #[serde(rename = "audit-version")]
    audit_version: String,
    warn: String,
    #[serde(rename = "warn-version")]
    warn_version: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Exemptions {
    usernames: Option<Vec<String>>,
    namespaces: Option<Vec<String>>,
    #[serde(rename = "runtimeClasses")]
    runtime_classes: Option<Vec<String>>,
}

/// Decode the plugin's configuration (`Err`: kube's decoding error).
/// Empty values are defaulted as kube does: levels `privileged`, versions
/// `latest`. The values are checked by [`PodSecurityConfig::validate`].
pub(crate) fn load(data: &[u8]) -> Result<PodSecurityConfig, String> {
    let (doc, _) = decode::typed(data, &SCHEME)?;
    let f: File = decode::fields(doc)?;
    let d = f.defaults;
    let or = |v: String, default: &str| {
        if v.is_empty() {
            default.to_string()
        } else {
            v
        }
    };
    let defaults = [
        ("enforce", or(d.enforce, "privileged")),
        ("enforce-version", or(d.enforce_version, "latest")),
        ("audit", or(d.audit, "privileged")),
        ("audit-version", or(d.audit_version, "latest")),
        ("warn", or(d.warn, "privileged")),
        ("warn-version", or(d.warn_version, "latest")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let e = f.exemptions;
    Ok(PodSecurityConfig {
        defaults,
        exempt_usernames: e.usernames.unwrap_or_default(),
        exempt_namespaces: e.namespaces.unwrap_or_default(),
        exempt_runtime_classes: e.runtime_classes.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_exemptions_are_read() {
        let c = load(
            br#"
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
  warn: restricted
  warn-version: v1.30
exemptions:
  usernames: [admin]
  namespaces: [kube-system]
  runtimeClasses: [kata]
"#,
        )
        .unwrap();
        assert_eq!(c.defaults["enforce"], "baseline");
        assert_eq!(c.defaults["enforce-version"], "latest");
        assert_eq!(c.defaults["audit"], "privileged");
        assert_eq!(c.defaults["warn-version"], "v1.30");
        assert_eq!(c.exempt_usernames, ["admin"]);
        assert_eq!(c.exempt_namespaces, ["kube-system"]);
        assert_eq!(c.exempt_runtime_classes, ["kata"]);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn bad_values_are_kube_start_errors() {
        let c = load(br#"{"apiVersion":"pod-security.admission.config.k8s.io/v1beta1","kind":"PodSecurityConfiguration","defaults":{"enforce":"strict","warn-version":"1.30"}}"#).unwrap();
        assert_eq!(
            c.validate().unwrap_err(),
            r#"PodSecurity configuration error: [Enforce.Level: must be one of privileged, baseline, restricted, Warn.Version: must be "latest" or "v1.x"]"#
        );
        let c = load(
            b"apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\nexemptions:\n  usernames: [a, '', a]\n  namespaces: [Bad_NS]\n",
        )
        .unwrap();
        assert_eq!(
            c.validate().unwrap_err(),
            "PodSecurity invalid: [exemptions.namespaces[0]: Invalid value: \"Bad_NS\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), exemptions.usernames[1]: Required value, exemptions.usernames[2]: Duplicate value: \"a\"]"
        );
        assert_eq!(
            load(b"apiVersion: pod-security.admission.config.k8s.io/v1alpha1\nkind: PodSecurityConfiguration\n").unwrap_err(),
            r#"no kind "PodSecurityConfiguration" is registered for version "pod-security.admission.config.k8s.io/v1alpha1" in scheme "k8s.io/pod-security-admission/admission/api/scheme/scheme.go""#
        );
    }
}
