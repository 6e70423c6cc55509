//! Impersonation (kube-apiserver's `WithImpersonation`): the
//! `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
//! `Impersonate-Extra-<key>` headers (`kubectl --as`, `--as-group`,
//! `--as-uid`) turn the request into one by another user, each asked-for
//! user, group, uid and extra value authorized first by the `impersonate`
//! verb (`users`, `groups`, `serviceaccounts`, `uids` and `userextras`).

use std::collections::BTreeMap;

use http::HeaderMap;
use keelson_apimachinery::{ApiError, ApiResult};
use keelson_auth::user::{split_service_account, AUTHENTICATED, SERVICE_ACCOUNTS};
use keelson_auth::{Attributes, Authorizer, UserInfo};
use percent_encoding::percent_decode_str;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// The user the request acts as: `user` itself without impersonation
/// headers, else the impersonated user once every part is allowed (`403`
/// with kube's wording otherwise).
pub fn impersonate(authz: &Authorizer, user: UserInfo, headers: &HeaderMap) -> ApiResult<UserInfo> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    };
    let name = headers
        .get(USER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let groups = values(GROUP);
    let uid = headers
        .get(UID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in headers {
        if let Some(key) = k.as_str().strip_prefix(EXTRA_PREFIX) {
            let key = percent_decode_str(key).decode_utf8_lossy().to_lowercase();
            if let Ok(v) = v.to_str() {
                extra.entry(key).or_default().push(v.to_string());
            }
        }
    }
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        if groups.is_empty() && extra.is_empty() && uid.is_none() {
            return Ok(user);
        }
        // kube answers this with an internal error.
        return Err(ApiError::internal(
            "requested impersonation of groups, uid or extra without impersonating a user",
        ));
    };
    let check = |group: &str, resource: &str, sub: &str, ns: &str, n: &str| -> ApiResult<()> {
        let a = Attributes {
            user: user.clone(),
            verb: "impersonate".into(),
            resource_request: true,
            namespace: ns.into(),
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: n.into(),
            ..Default::default()
        };
        let d = authz.authorize(&a);
        if d.allowed {
            Ok(())
        } else {
            Err(a.forbidden(&d.reason))
        }
    };
    let sa = split_service_account(&name);
    match sa {
        Some((ns, sa_name)) => check("", "serviceaccounts", "", ns, sa_name)?,
        None => check("", "users", "", "", &name)?,
    }
    for g in &groups {
        check("", "groups", "", "", g)?;
    }
    if let Some(uid) = &uid {
        check("authentication.k8s.io", "uids", "", "", uid)?;
    }
    for (k, vs) in &extra {
        for v in vs {
            check("authentication.k8s.io", "userextras", k, "", v)?;
        }
    }
    let mut groups = groups;
    if let Some((ns, _)) = sa {
        if groups.is_empty() {
            groups = vec![SERVICE_ACCOUNTS.into(), format!("{SERVICE_ACCOUNTS}:{ns}")];
        }
    }
    let mut out = UserInfo {
        name,
        uid: uid.unwrap_or_default(),
        groups,
        extra,
    };
    if out.name != keelson_auth::user::ANONYMOUS && !out.in_group(AUTHENTICATED) {
        out.groups.push(AUTHENTICATED.into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_auth::{Mode, Rbac};

    #[test]
    fn needs_the_impersonate_verb() {
        let authz = Authorizer {
            mode: Mode::Rbac,
            rbac: Rbac::new(),
        };
        let alice = UserInfo::new("alice", vec![AUTHENTICATED.into()]);
        let mut h = HeaderMap::new();
        assert_eq!(impersonate(&authz, alice.clone(), &h).unwrap(), alice);
        h.insert(USER, "bob".parse().unwrap());
        let e = impersonate(&authz, alice.clone(), &h).unwrap_err();
        assert_eq!(
            e.message,
            r#"users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#
        );
        let root = UserInfo::new("root", vec!["system:masters".into()]);
        h.insert(GROUP, "devs".parse().unwrap());
        let u = impersonate(&authz, root, &h).unwrap();
        assert_eq!(u.name, "bob");
        assert_eq!(u.groups, vec!["devs", AUTHENTICATED]);
    }
}
