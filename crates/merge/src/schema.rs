//! A position in a kind's schema, as strategic merge patch and Server-Side
//! Apply read it: the node as written (where the list/patch extensions
//! sit) and the node it resolves to through `$ref`s (its structure).

use keelson_registry::{CatalogSnapshot, Schema};

/// What a schema node describes, as the merge algorithms see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A struct with declared fields.
    Struct,
    /// A map with values of one schema (`additionalProperties`).
    Map,
    /// An array.
    List,
    /// A string, number, boolean or int-or-string.
    Scalar,
    /// No schema (free-form: `RawExtension`, preserved unknown fields, or a
    /// field the catalog does not know). Treated as atomic by SSA and
    /// merged like a map or replaced like a scalar by SMP.
    Untyped,
}

/// One node of a schema, with the catalog its references resolve in.
#[derive(Clone, Copy)]
pub(crate) struct TypeRef<'a> {
    snap: &'a CatalogSnapshot,
    /// The node as written (a property, or `items`).
    node: Option<&'a Schema>,
    /// `node` with its references followed.
    resolved: Option<&'a Schema>,
}

impl<'a> TypeRef<'a> {
    /// The schema of kind `group/version/kind`, if the catalog has it.
    pub(crate) fn for_kind(
        snap: &'a CatalogSnapshot,
        api_version: &str,
        kind: &str,
    ) -> TypeRef<'a> {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let def = snap
            .lookup_kind(group, version, kind)
            .and_then(|r| snap.definition(&r.definition))
            .or_else(|| {
                snap.definitions().values().find(|d| {
                    d.gvk
                        .iter()
                        .any(|g| g.group == group && g.version == version && g.kind == kind)
                })
            });
        TypeRef::new(snap, def)
    }

    fn new(snap: &'a CatalogSnapshot, node: Option<&'a Schema>) -> TypeRef<'a> {
        TypeRef {
            snap,
            node,
            resolved: node.map(|n| snap.resolve(n)),
        }
    }

    /// What the node describes.
    pub(crate) fn shape(&self) -> Shape {
        let Some(s) = self.resolved else {
            return Shape::Untyped;
        };
        if s.int_or_string {
            return Shape::Scalar;
        }
        match s.type_.as_deref() {
            Some("array") => Shape::List,
            Some("object") if !s.properties.is_empty() => Shape::Struct,
            Some("object") if s.additional_properties.is_some() => Shape::Map,
            Some("object") | None if s.preserve_unknown_fields => Shape::Untyped,
            Some("object") => Shape::Struct,
            Some(_) => Shape::Scalar,
            None => Shape::Untyped,
        }
    }

    /// The schema of field `name` of a struct, or of any value of a map.
    pub(crate) fn field(&self, name: &str) -> TypeRef<'a> {
        let node = self.resolved.and_then(|s| {
            s.properties
                .get(name)
                .or(s.additional_properties.as_deref())
        });
        TypeRef::new(self.snap, node)
    }

    /// True when the node keeps fields its schema does not declare
    /// (`x-kubernetes-preserve-unknown-fields`): structured-merge-diff
    /// treats them as deduced (untyped) values, not as errors.
    pub(crate) fn preserves_unknown_fields(&self) -> bool {
        self.resolved.is_some_and(|s| s.preserve_unknown_fields)
    }

    /// True when `name` is a declared field of this struct.
    pub(crate) fn has_field(&self, name: &str) -> bool {
        self.resolved
            .is_some_and(|s| s.properties.contains_key(name))
    }

    /// The declared fields of a struct, in schema order.
    pub(crate) fn field_names(&self) -> impl Iterator<Item = &'a str> {
        self.resolved
            .into_iter()
            .flat_map(|s| s.properties.keys().map(String::as_str))
    }

    /// The required fields of a struct.
    pub(crate) fn required(&self) -> &'a [String] {
        self.resolved.map_or(&[], |s| s.required.as_slice())
    }

    /// The element schema of a list.
    pub(crate) fn items(&self) -> TypeRef<'a> {
        TypeRef::new(self.snap, self.resolved.and_then(|s| s.items.as_deref()))
    }

    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    pub(crate) fn list_type(&self) -> Option<&'a str> {
        self.ext(|s| s.list_type.as_deref())
    }

    /// `x-kubernetes-list-map-keys`.
    pub(crate) fn list_map_keys(&self) -> &'a [String] {
        for s in [self.node, self.resolved].into_iter().flatten() {
            if !s.list_map_keys.is_empty() {
                return &s.list_map_keys;
            }
        }
        &[]
    }

    /// `x-kubernetes-patch-merge-key`.
    pub(crate) fn patch_merge_key(&self) -> Option<&'a str> {
        self.ext(|s| s.patch_merge_key.as_deref())
    }

    /// The strategies of `x-kubernetes-patch-strategy` (`merge`,
    /// `replace`, `retainKeys`), comma separated upstream.
    pub(crate) fn patch_strategies(&self) -> impl Iterator<Item = &'a str> {
        self.ext(|s| s.patch_strategy.as_deref())
            .into_iter()
            .flat_map(|p| p.split(','))
            .map(str::trim)
    }

    /// True when `x-kubernetes-patch-strategy` includes `strategy`.
    pub(crate) fn has_patch_strategy(&self, strategy: &str) -> bool {
        self.patch_strategies().any(|s| s == strategy)
    }

    /// `x-kubernetes-map-type` (also what kube calls a struct's
    /// `structType`): `atomic` or `granular`.
    pub(crate) fn map_type(&self) -> Option<&'a str> {
        self.ext(|s| s.map_type.as_deref())
    }

    /// The node with its references followed, if the catalog has it.
    pub(crate) fn resolved(&self) -> Option<&'a Schema> {
        self.resolved
    }

    /// The definition the node refers to (`$ref`), if any.
    pub(crate) fn reference(&self) -> Option<&'a str> {
        self.node.and_then(|n| n.reference.as_deref())
    }

    /// An extension from the node as written, else from its definition.
    fn ext(&self, get: impl Fn(&'a Schema) -> Option<&'a str>) -> Option<&'a str> {
        self.node
            .and_then(&get)
            .or_else(|| self.resolved.and_then(&get))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_extensions_of_builtin_kinds() {
        let snap = CatalogSnapshot::builtin();
        let pod = TypeRef::for_kind(snap, "v1", "Pod");
        assert_eq!(pod.shape(), Shape::Struct);
        let containers = pod.field("spec").field("containers");
        assert_eq!(containers.shape(), Shape::List);
        assert_eq!(containers.patch_merge_key(), Some("name"));
        assert!(containers.has_patch_strategy("merge"));
        assert_eq!(containers.list_type(), Some("map"));
        assert_eq!(containers.list_map_keys(), ["name".to_string()]);
        let image = containers.items().field("image");
        assert_eq!(image.shape(), Shape::Scalar);
        let labels = pod.field("metadata").field("labels");
        assert_eq!(labels.shape(), Shape::Map);
        assert_eq!(labels.field("app").shape(), Shape::Scalar);
        let volumes = pod.field("spec").field("volumes");
        assert!(volumes.has_patch_strategy("retainKeys"));
        let deploy = TypeRef::for_kind(snap, "apps/v1", "Deployment");
        assert_eq!(
            deploy.field("spec").field("selector").map_type(),
            Some("atomic")
        );
        assert_eq!(
            TypeRef::for_kind(snap, "autoscaling/v1", "Scale").shape(),
            Shape::Struct
        );
        assert_eq!(
            TypeRef::for_kind(snap, "x/v1", "Nope").shape(),
            Shape::Untyped
        );
    }
}
