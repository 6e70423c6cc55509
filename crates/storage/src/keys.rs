//! Object keys as engine key bytes, in one of two layouts ([`KeyLayout`]):
//! Keelson's own (sled's), `{group}/{resource}/{namespace}/{name}` with the
//! core group spelled `core` and cluster-scoped objects having an empty
//! namespace segment (the free functions below); or kube-apiserver's etcd
//! layout, `{resource prefix}/{namespace}/{name}` and
//! `{resource prefix}/{name}` ([`kube_resource_prefix`]).
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

/// How object keys are laid out in the key/value store: a property of the
/// backend (sled keeps Keelson's layout on disk; etcd uses kube's, so its
/// keys are where kube-apiserver's tools look for them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyLayout {
    /// `{group}/{resource}/{namespace}/{name}` (core spelled `core`,
    /// cluster-scoped objects with an empty namespace segment).
    #[default]
    Keelson,
    /// kube-apiserver's: `{resource prefix}/{namespace}/{name}`, or
    /// `{resource prefix}/{name}` for cluster-scoped objects (under
    /// `--etcd-prefix`, which the key/value store adds).
    Kube,
}

/// The API groups kube-apiserver itself serves (1.34): their resources are
/// stored under the bare resource name. Every other group (CRDs,
/// `apiextensions.k8s.io`, `apiregistration.k8s.io`) is stored under
/// `{group}/{resource}`.
const KUBE_BUILTIN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// kube-apiserver's etcd resource prefix of `gr` (its storage factory's
/// `ResourcePrefix`): the exceptions compiled into kube
/// (`SpecialDefaultResourcePrefixes`: `controllers`, `services/endpoints`,
/// `minions`, `services/specs`, `ingress`), the bare resource for the
/// groups kube-apiserver serves, `{group}/{resource}` for the rest.
pub fn kube_resource_prefix(gr: &GroupResource) -> String {
    let special = match (gr.group.as_str(), gr.resource.as_str()) {
        ("", "replicationcontrollers") => Some("controllers"),
        ("", "endpoints") => Some("services/endpoints"),
        ("", "nodes") => Some("minions"),
        ("", "services") => Some("services/specs"),
        ("extensions" | "networking.k8s.io", "ingresses") => Some("ingress"),
        _ => None,
    };
    match special {
        Some(p) => p.to_string(),
        None if KUBE_BUILTIN_GROUPS.contains(&gr.group.as_str()) => gr.resource.to_lowercase(),
        None => format!("{}/{}", gr.group, gr.resource.to_lowercase()),
    }
}

impl KeyLayout {
    /// The prefix selecting every object of `gr`, in `namespace` or (None)
    /// in all namespaces.
    pub fn prefix(
        self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> Result<Vec<u8>, StorageError> {
        match self {
            KeyLayout::Keelson => prefix(gr, namespace),
            KeyLayout::Kube => {
                check_segment("group", &gr.group, true)?;
                check_segment("resource", &gr.resource, false)?;
                let mut s = kube_resource_prefix(gr);
                s.push('/');
                if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
                    check_segment("namespace", ns, false)?;
                    s.push_str(ns);
                    s.push('/');
                }
                Ok(s.into_bytes())
            }
        }
    }

    /// The key of one object.
    pub fn object_key(self, key: &ObjectKey) -> Result<Vec<u8>, StorageError> {
        match self {
            KeyLayout::Keelson => object_key(key),
            KeyLayout::Kube => {
                check_segment("name", &key.name, false)?;
                let mut k = self.prefix(&key.gr, Some(&key.namespace))?;
                k.extend_from_slice(key.name.as_bytes());
                Ok(k)
            }
        }
    }
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
    fn kube_layout_is_kube_apiservers() {
        let kube = KeyLayout::Kube;
        let key = |g: &str, r: &str, ns: &str, n: &str| {
            String::from_utf8(
                kube.object_key(&ObjectKey::new(GroupResource::new(g, r), ns, n))
                    .unwrap(),
            )
            .unwrap()
        };
        assert_eq!(
            key("", "configmaps", "default", "x"),
            "configmaps/default/x"
        );
        assert_eq!(key("", "namespaces", "", "default"), "namespaces/default");
        assert_eq!(key("", "services", "ns", "s"), "services/specs/ns/s");
        assert_eq!(key("", "endpoints", "ns", "s"), "services/endpoints/ns/s");
        assert_eq!(key("", "nodes", "", "n1"), "minions/n1");
        assert_eq!(
            key("", "replicationcontrollers", "ns", "r"),
            "controllers/ns/r"
        );
        assert_eq!(
            key("networking.k8s.io", "ingresses", "ns", "i"),
            "ingress/ns/i"
        );
        assert_eq!(key("apps", "deployments", "ns", "d"), "deployments/ns/d");
        assert_eq!(
            key("rbac.authorization.k8s.io", "clusterroles", "", "admin"),
            "clusterroles/admin"
        );
        assert_eq!(
            key(
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                "",
                "a.b.c"
            ),
            "apiextensions.k8s.io/customresourcedefinitions/a.b.c"
        );
        assert_eq!(
            key("stable.example.com", "crontabs", "ns", "c"),
            "stable.example.com/crontabs/ns/c"
        );
        let cms = GroupResource::new("", "configmaps");
        assert_eq!(kube.prefix(&cms, None).unwrap(), b"configmaps/");
        assert_eq!(kube.prefix(&cms, Some("a")).unwrap(), b"configmaps/a/");
        assert!(kube
            .object_key(&ObjectKey::new(cms.clone(), "a/b", "x"))
            .is_err());
        // sled keeps its layout.
        assert_eq!(
            KeyLayout::Keelson.prefix(&cms, Some("a")).unwrap(),
            prefix(&cms, Some("a")).unwrap()
        );
    }

    #[test]
    fn parse_round_trips() {
        let k = ObjectKey::new(GroupResource::new("apps", "deployments"), "ns", "d");
        assert_eq!(parse_object_key(&object_key(&k).unwrap()).unwrap(), k);
        let c = ObjectKey::new(pods(), "", "n");
        assert_eq!(parse_object_key(&object_key(&c).unwrap()).unwrap(), c);
    }
}
