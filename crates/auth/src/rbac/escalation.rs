//! Privilege-escalation prevention (kube's `rbac/validation`): a user may
//! grant through a Role or a binding only the permissions they hold.

use std::collections::{BTreeMap, BTreeSet};

use super::rule::{url_matches, PolicyRule, ALL};
use crate::user::UserInfo;

/// The servant rules (split into one verb × group × resource × name each)
/// that no owner rule covers (kube's `Covers`); empty when all are.
pub fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut missing = Vec::new();
    for r in servant {
        for simple in breakdown(r) {
            if !owner.iter().any(|o| covers(o, &simple)) {
                missing.push(simple);
            }
        }
    }
    missing
}

/// kube's `BreakdownRule`: one rule per group × resource × name × verb,
/// and per URL × verb.
fn breakdown(r: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in &r.api_groups {
        for resource in &r.resources {
            for verb in &r.verbs {
                if r.resource_names.is_empty() {
                    out.push(PolicyRule {
                        verbs: vec![verb.clone()],
                        api_groups: vec![group.clone()],
                        resources: vec![resource.clone()],
                        ..Default::default()
                    });
                }
                for name in &r.resource_names {
                    out.push(PolicyRule {
                        verbs: vec![verb.clone()],
                        api_groups: vec![group.clone()],
                        resources: vec![resource.clone()],
                        resource_names: vec![name.clone()],
                        ..Default::default()
                    });
                }
            }
        }
    }
    for url in &r.non_resource_urls {
        for verb in &r.verbs {
            out.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..Default::default()
            });
        }
    }
    out
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

fn has_all(set: &[String], want: &[String]) -> bool {
    want.iter().all(|w| has(set, w))
}

/// kube's `resourceCoversAll`: `*`, exact names, or `*/sub` for a
/// subresource.
fn resources_cover(set: &[String], want: &[String]) -> bool {
    if has(set, ALL) || has_all(set, want) {
        return true;
    }
    want.iter().all(|path| {
        has(set, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(set, &format!("*/{sub}")))
    })
}

/// kube's `ruleCovers`.
fn covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resources_cover(&owner.resources, &sub.resources);
    let urls = sub
        .non_resource_urls
        .iter()
        .all(|u| owner.non_resource_urls.iter().any(|o| url_matches(o, u)));
    let names =
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names);
    verbs && groups && resources && urls && names
}

/// kube's `CompactRules`: simple resource rules of one group and resource
/// without names are merged into one rule with all their verbs.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut merged: BTreeMap<(String, String), PolicyRule> = BTreeMap::new();
    let mut out = Vec::new();
    for r in rules {
        if r.api_groups.len() == 1
            && r.resources.len() == 1
            && r.resource_names.is_empty()
            && r.non_resource_urls.is_empty()
        {
            let key = (r.api_groups[0].clone(), r.resources[0].clone());
            match merged.get_mut(&key) {
                Some(m) => {
                    for v in r.verbs {
                        if !m.verbs.contains(&v) {
                            m.verbs.push(v);
                        }
                    }
                }
                None => {
                    merged.insert(key, r);
                }
            }
        } else {
            out.push(r);
        }
    }
    out.extend(merged.into_values());
    out
}

/// kube's escalation message: `user "u" (groups=["g"]) is attempting to
/// grant RBAC permissions not currently held:` then the missing rules,
/// one per line, sorted; resolution errors after `; resolution errors: `.
pub fn escalation_message(user: &UserInfo, missing: Vec<PolicyRule>, errors: &[String]) -> String {
    let lines: BTreeSet<String> = compact(missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    let groups = format!(
        "[{}]",
        user.groups
            .iter()
            .map(|g| format!("{g:?}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut msg = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        groups,
        lines.into_iter().collect::<Vec<_>>().join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(json: &str) -> PolicyRule {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn coverage() {
        let owner = vec![rule(
            r#"{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]}"#,
        )];
        assert!(uncovered(
            &owner,
            &[rule(
                r#"{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}"#
            )]
        )
        .is_empty());
        let missing = uncovered(
            &owner,
            &[rule(
                r#"{"verbs":["get","delete","create"],"apiGroups":[""],"resources":["pods","secrets"]}"#,
            )],
        );
        assert_eq!(missing.len(), 5);
        let u = UserInfo::new("alice", vec!["system:authenticated".into()]);
        assert_eq!(
            escalation_message(&u, missing, &[]),
            "user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"create\"]}\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\" \"create\"]}"
        );
        let star = vec![rule(
            r#"{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}"#,
        )];
        assert!(uncovered(
            &star,
            &[rule(
                r#"{"verbs":["get"],"apiGroups":["x"],"resources":["y/z"],"resourceNames":["n"]}"#
            )]
        )
        .is_empty());
        let scale = vec![rule(
            r#"{"verbs":["get"],"apiGroups":["apps"],"resources":["*/scale"]}"#,
        )];
        assert!(uncovered(
            &scale,
            &[rule(
                r#"{"verbs":["get"],"apiGroups":["apps"],"resources":["deployments/scale"]}"#
            )]
        )
        .is_empty());
        let urls = vec![rule(r#"{"verbs":["get"],"nonResourceURLs":["/api/*"]}"#)];
        assert!(uncovered(
            &urls,
            &[rule(r#"{"verbs":["get"],"nonResourceURLs":["/api/v1"]}"#)]
        )
        .is_empty());
        assert_eq!(
            uncovered(
                &urls,
                &[rule(r#"{"verbs":["get"],"nonResourceURLs":["/apis"]}"#)]
            )
            .len(),
            1
        );
    }
}
