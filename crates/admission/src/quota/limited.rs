//! ResourceQuota's `limitedResources` (its `--admission-control-config-file`
//! configuration): resources whose consumption needs a covering quota.

use std::collections::BTreeSet;

use keelson_api::GroupResource;
use serde_json::Value;

use super::check::{Denied, Refusal};
use super::evaluator::Evaluator;
use super::resources::ResourceList;
use super::{QuotaDoc, ScopeSelector};

/// One `limitedResources` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitedResource {
    /// `apiGroup` (empty: the core group).
    pub api_group: String,
    /// `resource`.
    pub resource: String,
    /// `matchContains`: a consumed resource name containing one of these
    /// needs a quota that covers it.
    pub match_contains: Vec<String>,
    /// `matchScopes`: an object in one of these scopes needs a quota with
    /// that scope.
    pub match_scopes: Vec<ScopeSelector>,
}

/// ResourceQuota's configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceQuotaConfig {
    /// `limitedResources`.
    pub limited_resources: Vec<LimitedResource>,
}

/// kube's `limitedByDefault`: the consumed resource names of `usage`
/// that a `limitedResources` entry for `gr` names.
fn limited_names(
    limited: &[LimitedResource],
    gr: &GroupResource,
    usage: &ResourceList,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for l in limited
        .iter()
        .filter(|l| l.api_group == gr.group && l.resource == gr.resource)
    {
        for (name, amount) in usage {
            if amount.nanos() > 0 && l.match_contains.iter().any(|m| name.contains(m.as_str())) {
                out.insert(name.clone());
            }
        }
    }
    out
}

/// The scopes of `limited` (every entry's, as kube does) the object
/// falls in.
fn limited_scopes(
    limited: &[LimitedResource],
    ev: &Evaluator,
    object: &Value,
) -> Vec<ScopeSelector> {
    limited
        .iter()
        .flat_map(|l| l.match_scopes.iter())
        .filter(|s| ev.matches_scope(s, object))
        .cloned()
        .collect()
}

/// Go's `%v` of a `ScopedResourceSelectorRequirement`.
fn go_scope(s: &ScopeSelector) -> String {
    format!(
        "{{{} {} [{}]}}",
        s.scope_name,
        s.operator,
        s.values.join(" ")
    )
}

/// kube's check that every limited resource the write consumes, and every
/// limited scope it falls in, has a quota covering it (`insufficient quota
/// to consume: ...` is kube's 403; `insufficient quota to match these
/// scopes: ...` a plain error, kube's 500 without a reason). `restricted` are
/// the resources the matching quotas restrict.
pub(crate) fn check(
    limited: &[LimitedResource],
    gr: &GroupResource,
    ev: &Evaluator,
    object: &Value,
    usage: &ResourceList,
    quotas: &[QuotaDoc],
    restricted: &BTreeSet<String>,
) -> Result<(), Denied> {
    if limited.is_empty() {
        return Ok(());
    }
    let names = limited_names(limited, gr, usage);
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| !restricted.contains(*n))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(Denied::Forbidden(Refusal(format!(
            "insufficient quota to consume: {}",
            missing.join(",")
        ))));
    }
    // Only pods have scopes that cover (kube's other evaluators cover none
    // and report none uncovered).
    if *ev != Evaluator::Pods {
        return Ok(());
    }
    let covering: Vec<&ScopeSelector> = quotas
        .iter()
        .flat_map(|q| q.selectors.iter())
        .filter(|s| ev.matches_scope(s, object))
        .collect();
    let uncovered: Vec<String> = limited_scopes(limited, ev, object)
        .iter()
        .filter(|s| !covering.iter().any(|c| c.scope_name == s.scope_name))
        .map(go_scope)
        .collect();
    if !uncovered.is_empty() {
        return Err(Denied::Plain(format!(
            "insufficient quota to match these scopes: [{}]",
            uncovered.join(" ")
        )));
    }
    Ok(())
}
