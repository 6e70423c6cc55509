//! ResourceQuota's configuration (`apiserver.config.k8s.io/v1`
//! `ResourceQuotaConfiguration`, and the older
//! `resourcequota.admission.k8s.io` `Configuration`) as a
//! [`ResourceQuotaConfig`].

use keelson_apimachinery::FieldError;
use serde::Deserialize;

use super::decode::{self, Scheme};
use crate::quota::{LimitedResource, ResourceQuotaConfig, ScopeSelector};

const SCHEME: Scheme = Scheme {
    name: "k8s.io/kubernetes/plugin/pkg/admission/resourcequota/config.go",
    kinds: &[
        ("apiserver.config.k8s.io/v1", "ResourceQuotaConfiguration"),
        ("resourcequota.admission.k8s.io/v1beta1", "Configuration"),
        ("resourcequota.admission.k8s.io/v1alpha1", "Configuration"),
    ],
};

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct File {
    limited_resources: Option<Vec<Limited>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Limited {
    api_group: String,
    resource: String,
    match_contains: Option<Vec<String>>,
    match_scopes: Option<Vec<Scope>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Scope {
    scope_name: String,
    operator: String,
    values: Option<Vec<String>>,
}

/// Decode and validate the plugin's configuration (`Err`: kube's error,
/// a decoding one or `limitedResources[i].resource: Required value`).
pub(crate) fn load(data: &[u8]) -> Result<ResourceQuotaConfig, String> {
    let (doc, _) = decode::typed(data, &SCHEME)?;
    let f: File = decode::fields(doc)?;
    let mut errs = Vec::new();
    let mut limited_resources = Vec::new();
    for (i, l) in f
        .limited_resources
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        if l.resource.is_empty() {
            errs.push(FieldError::required(
                &format!("limitedResources[{i}].resource"),
                "",
            ));
        }
        limited_resources.push(LimitedResource {
            api_group: l.api_group,
            resource: l.resource,
            match_contains: l.match_contains.unwrap_or_default(),
            match_scopes: l
                .match_scopes
                .unwrap_or_default()
                .into_iter()
                .map(|s| ScopeSelector {
                    scope_name: s.scope_name,
                    operator: s.operator,
                    values: s.values.unwrap_or_default(),
                })
                .collect(),
        });
    }
    if !errs.is_empty() {
        return Err(FieldError::aggregate(&errs));
    }
    Ok(ResourceQuotaConfig { limited_resources })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limited_resources_are_read() {
        let c = load(
            br#"
apiVersion: apiserver.config.k8s.io/v1
kind: ResourceQuotaConfiguration
limitedResources:
- resource: pods
  matchContains: [cpu]
  matchScopes:
  - {scopeName: PriorityClass, operator: In, values: [cluster-services]}
- apiGroup: apps
  resource: deployments
"#,
        )
        .unwrap();
        assert_eq!(c.limited_resources.len(), 2);
        assert_eq!(c.limited_resources[0].match_contains, ["cpu"]);
        assert_eq!(
            c.limited_resources[0].match_scopes[0].values,
            ["cluster-services"]
        );
        assert_eq!(c.limited_resources[1].api_group, "apps");
        let old = load(br#"{"apiVersion":"resourcequota.admission.k8s.io/v1beta1","kind":"Configuration","limitedResources":[{"resource":"pods"}]}"#).unwrap();
        assert_eq!(old.limited_resources[0].resource, "pods");
    }

    #[test]
    fn a_limited_resource_without_resource_is_refused() {
        assert_eq!(
            load(b"apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources:\n- matchContains: [cpu]\n- resource: pods\n- apiGroup: x\n").unwrap_err(),
            "[limitedResources[0].resource: Required value, limitedResources[2].resource: Required value]"
        );
    }
}
