//! Field sets, structured-merge-diff's `fieldpath.Set`: a tree of paths
//! whose members are the owned fields, and its FieldsV1 form.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::path::PathElement;

/// A set of paths. A path is a *member* when it is in the set itself; a
/// path with members below it is a *child*. Children are never empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// The empty set.
    pub(crate) fn new() -> Set {
        Set::default()
    }

    /// True when the set has no member at any depth.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Add `path` as a member. The empty path is not a member of anything
    /// and is ignored (as structured-merge-diff does).
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// True when `path` is a member.
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Is `pe` a member at this level?
    pub(crate) fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// The members below `pe`, if any.
    pub(crate) fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe)
    }

    /// Every member of either set.
    pub(crate) fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(c),
                None => c.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// The members of `self` that are not members of `other` (path by
    /// path: members below a removed member stay).
    pub(crate) fn difference(&self, other: &Set) -> Set {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, c) in &self.children {
            let d = match other.children.get(pe) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                children.insert(pe.clone(), d);
            }
        }
        Set { members, children }
    }

    /// The members of both sets.
    pub(crate) fn intersection(&self, other: &Set) -> Set {
        let members = self.members.intersection(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, c) in &self.children {
            if let Some(o) = other.children.get(pe) {
                let i = c.intersection(o);
                if !i.is_empty() {
                    children.insert(pe.clone(), i);
                }
            }
        }
        Set { members, children }
    }

    /// `self` without every member that is `other`'s member or lies below
    /// one (structured-merge-diff's `RecursiveDifference`; how ignored
    /// fields such as `status` are cut out).
    pub(crate) fn recursive_difference(&self, other: &Set) -> Set {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, c) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let d = match other.children.get(pe) {
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                children.insert(pe.clone(), d);
            }
        }
        Set { members, children }
    }

    /// Every member path, members of a level before its children, each in
    /// path order (the order kube lists conflicts in).
    pub(crate) fn paths(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The FieldsV1 form: `{"f:a": {}, "f:b": {".": {}, "f:c": {}}}`, keys in
    /// path order, `.` first where a child is also a member.
    pub(crate) fn to_fields_v1(&self) -> Value {
        Value::Object(self.fields_v1_contents(false))
    }

    fn fields_v1_contents(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        let mut elements: BTreeSet<&PathElement> = self.members.iter().collect();
        elements.extend(self.children.keys());
        for pe in elements {
            let value = match self.children.get(pe) {
                Some(c) => Value::Object(c.fields_v1_contents(self.members.contains(pe))),
                None => Value::Object(Map::new()),
            };
            out.insert(pe.to_fields_key(), value);
        }
        out
    }

    /// Parse the FieldsV1 form.
    pub(crate) fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let map = v
            .as_object()
            .ok_or_else(|| "FieldsV1 is not a JSON object".to_string())?;
        let mut set = Set::new();
        for (k, child) in map {
            if k == "." {
                continue;
            }
            let pe = PathElement::from_fields_key(k)?;
            let c = child
                .as_object()
                .ok_or_else(|| format!("FieldsV1 entry {k:?} is not a JSON object"))?;
            if c.is_empty() || c.contains_key(".") {
                set.members.insert(pe.clone());
            }
            let sub = Set::from_fields_v1(child)?;
            if !sub.is_empty() {
                set.children.insert(pe, sub);
            }
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(s: &str) -> PathElement {
        PathElement::field(s)
    }

    #[test]
    fn fields_v1_round_trip_with_dot_entries() {
        let v = json!({
            "f:data": {".": {}, "f:a": {}},
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}}}
        });
        let s = Set::from_fields_v1(&v).unwrap();
        assert!(s.has(&[f("data")]));
        assert!(s.has(&[f("data"), f("a")]));
        assert!(!s.has(&[f("spec")]));
        assert_eq!(s.to_fields_v1(), v);
        assert_eq!(
            serde_json::to_string(&s.to_fields_v1()).unwrap(),
            r#"{"f:data":{".":{},"f:a":{}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}"#
        );
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
        assert!(Set::from_fields_v1(&json!([1])).is_err());
    }

    #[test]
    fn set_algebra_is_path_by_path() {
        let mut a = Set::new();
        a.insert(&[f("spec")]);
        a.insert(&[f("spec"), f("replicas")]);
        a.insert(&[f("data"), f("x")]);
        let mut b = Set::new();
        b.insert(&[f("spec")]);
        let d = a.difference(&b);
        assert!(!d.has(&[f("spec")]));
        assert!(d.has(&[f("spec"), f("replicas")]));
        let r = a.recursive_difference(&b);
        assert!(!r.has(&[f("spec"), f("replicas")]));
        assert!(r.has(&[f("data"), f("x")]));
        assert_eq!(a.intersection(&b), b);
        assert_eq!(a.union(&b), a);
        assert_eq!(
            a.paths(),
            vec![
                vec![f("spec")],
                vec![f("data"), f("x")],
                vec![f("spec"), f("replicas")]
            ]
        );
    }
}
