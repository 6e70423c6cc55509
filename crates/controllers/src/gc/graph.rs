//! The garbage collector's view of the world (kube's `GraphBuilder`
//! `uidToNode`): every observed object by uid, with its owner references,
//! and the reverse edges owner uid → dependent uids.

use std::collections::{BTreeSet, HashMap};

use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::ObjectKey;
use serde_json::Value;

/// One `metadata.ownerReferences` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    /// `blockOwnerDeletion: true`.
    pub block: bool,
}

impl OwnerRef {
    /// The owner references of an object (entries without a uid skipped).
    pub fn of(obj: &Value) -> Vec<OwnerRef> {
        let Some(refs) = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        let s = |r: &Value, k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        refs.iter()
            .map(|r| OwnerRef {
                api_version: s(r, "apiVersion"),
                kind: s(r, "kind"),
                name: s(r, "name"),
                uid: s(r, "uid"),
                block: r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true),
            })
            .filter(|r| !r.uid.is_empty())
            .collect()
    }
}

/// An observed object.
#[derive(Debug, Clone)]
pub struct Node {
    pub key: ObjectKey,
    pub owners: Vec<OwnerRef>,
    pub finalizers: Vec<String>,
    pub deleting: bool,
}

impl Node {
    /// Whether it waits for its dependents (`foregroundDeletion`).
    pub fn deleting_dependents(&self) -> bool {
        self.deleting && self.finalizers.iter().any(|f| f == super::FOREGROUND)
    }
}

/// Nodes by uid and the dependents of each owner uid.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: HashMap<String, Node>,
    dependents: HashMap<String, BTreeSet<String>>,
}

impl Graph {
    /// Record the current state of `obj` (stored at `key`); returns the
    /// uids whose decisions may change: the object, its owners (old and
    /// new) and its dependents.
    pub fn upsert(&mut self, key: ObjectKey, obj: &Value) -> Vec<String> {
        let uid = meta_str(obj, "uid").to_string();
        if uid.is_empty() {
            return Vec::new();
        }
        let finalizers = obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let node = Node {
            key,
            owners: OwnerRef::of(obj),
            finalizers,
            deleting: !meta_str(obj, "deletionTimestamp").is_empty(),
        };
        let mut touched = self.remove(&uid);
        for o in &node.owners {
            self.dependents
                .entry(o.uid.clone())
                .or_default()
                .insert(uid.clone());
            touched.push(o.uid.clone());
        }
        self.nodes.insert(uid, node);
        touched
    }

    /// Forget an object; returns the uids whose decisions may change.
    pub fn remove(&mut self, uid: &str) -> Vec<String> {
        let mut touched = vec![uid.to_string()];
        if let Some(old) = self.nodes.remove(uid) {
            for o in &old.owners {
                if let Some(set) = self.dependents.get_mut(&o.uid) {
                    set.remove(uid);
                    if set.is_empty() {
                        self.dependents.remove(&o.uid);
                    }
                }
                touched.push(o.uid.clone());
            }
        }
        touched.extend(self.dependents_of(uid));
        touched
    }

    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// The observed dependents of `owner`.
    pub fn dependents_of(&self, owner: &str) -> Vec<String> {
        self.dependents
            .get(owner)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Dependents whose reference to `owner` blocks its deletion.
    pub fn blocking_dependents(&self, owner: &str) -> Vec<String> {
        self.dependents_of(owner)
            .into_iter()
            .filter(|d| {
                self.nodes
                    .get(d)
                    .is_some_and(|n| n.owners.iter().any(|o| o.uid == owner && o.block))
            })
            .collect()
    }

    /// Every uid that may need work on start-up: objects with owners and
    /// objects being deleted with a garbage-collector finalizer.
    pub fn initial_work(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(_, n)| {
                !n.owners.is_empty()
                    || (n.deleting
                        && n.finalizers
                            .iter()
                            .any(|f| f == super::ORPHAN || f == super::FOREGROUND))
            })
            .map(|(u, _)| u.clone())
            .collect()
    }
}
