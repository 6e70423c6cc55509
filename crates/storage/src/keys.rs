//! Object keys as engine key bytes: `{group}/{resource}/{namespace}/{name}`,
//! with the core group spelled `core` and cluster-scoped objects having an
//! empty namespace segment.
//!
//! No segment may contain `/` or NUL, so `…/{namespace}/` prefixes select
//! exactly one namespace (`a/` never matches `ab/`) and NUL stays free as
//! the separator between a key and its revision in the versions table.
//! Keys sort bytewise, i.e. by `"{namespace}/{name}"`, which is the order
//! kube-apiserver's etcd keys list in.

use keelson_apimachinery::{GroupResource, ObjectKey};

use crate::error::StorageError;

fn group_segment(gr: &GroupResource) -> &str {
    if gr.group.is_empty() {
        "core"
    } else {
        &gr.group
    }
}

fn check_segment(what: &str, s: &str, allow_empty: bool) -> Result<(), StorageError> {
    if (!allow_empty && s.is_empty()) || s.contains('/') || s.contains('\0') {
        return Err(StorageError::InvalidKey(format!(
            "{what} {s:?} may not be empty or contain '/' or NUL"
        )));
    }
    Ok(())
}

/// The prefix selecting every object of `gr`, in `namespace` or (None) in
/// all namespaces.
pub fn prefix(gr: &GroupResource, namespace: Option<&str>) -> Result<Vec<u8>, StorageError> {
    check_segment("group", &gr.group, true)?;
    check_segment("resource", &gr.resource, false)?;
    let mut s = format!("{}/{}/", group_segment(gr), gr.resource);
    if let Some(ns) = namespace {
        check_segment("namespace", ns, true)?;
        s.push_str(ns);
        s.push('/');
    }
    Ok(s.into_bytes())
}

/// The engine key of one object.
pub fn object_key(key: &ObjectKey) -> Result<Vec<u8>, StorageError> {
    check_segment("name", &key.name, false)?;
    let mut k = prefix(&key.gr, Some(&key.namespace))?;
    k.extend_from_slice(key.name.as_bytes());
    Ok(k)
}

/// Parse engine key bytes back into an [`ObjectKey`].
pub fn parse_object_key(bytes: &[u8]) -> Result<ObjectKey, StorageError> {
    let s = std::str::from_utf8(bytes).map_err(|_| {
        StorageError::Kv(keelson_kv::KvError::Corrupt(
            "object key is not UTF-8".into(),
        ))
    })?;
    let parts: Vec<&str> = s.split('/').collect();
    match parts.as_slice() {
        [group, resource, namespace, name] => {
            let group = if *group == "core" { "" } else { group };
            Ok(ObjectKey::new(
                GroupResource::new(group, resource),
                namespace,
                name,
            ))
        }
        _ => Err(StorageError::Kv(keelson_kv::KvError::Corrupt(format!(
            "malformed object key {s:?}"
        )))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pods() -> GroupResource {
        GroupResource::new("", "pods")
    }

    #[test]
    fn core_group_is_spelled_core() {
        let k = ObjectKey::new(pods(), "default", "web");
        assert_eq!(object_key(&k).unwrap(), b"core/pods/default/web");
        let d = ObjectKey::new(GroupResource::new("apps", "deployments"), "ns", "d");
        assert_eq!(object_key(&d).unwrap(), b"apps/deployments/ns/d");
    }

    #[test]
    fn namespace_prefix_does_not_match_longer_namespace() {
        let p = prefix(&pods(), Some("a")).unwrap();
        let in_ab = object_key(&ObjectKey::new(pods(), "ab", "x")).unwrap();
        let in_a = object_key(&ObjectKey::new(pods(), "a", "x")).unwrap();
        assert!(!in_ab.starts_with(&p));
        assert!(in_a.starts_with(&p));
    }

    #[test]
    fn cluster_scoped_keys_have_empty_namespace() {
        let ns = GroupResource::new("", "namespaces");
        let k = ObjectKey::new(ns.clone(), "", "default");
        assert_eq!(object_key(&k).unwrap(), b"core/namespaces//default");
        assert!(object_key(&k)
            .unwrap()
            .starts_with(&prefix(&ns, None).unwrap()));
    }

    #[test]
    fn slashes_and_nul_are_rejected() {
        assert!(object_key(&ObjectKey::new(pods(), "a/b", "x")).is_err());
        assert!(object_key(&ObjectKey::new(pods(), "a", "x/y")).is_err());
        assert!(object_key(&ObjectKey::new(pods(), "a", "x\0")).is_err());
        assert!(object_key(&ObjectKey::new(pods(), "a", "")).is_err());
    }

    #[test]
    fn parse_round_trips() {
        let k = ObjectKey::new(GroupResource::new("apps", "deployments"), "ns", "d");
        assert_eq!(parse_object_key(&object_key(&k).unwrap()).unwrap(), k);
        let c = ObjectKey::new(pods(), "", "n");
        assert_eq!(parse_object_key(&object_key(&c).unwrap()).unwrap(), c);
    }
}
