//! The patch metadata of a field (kube's `LookupPatchMeta`): the schema
//! below it, its patch strategy and its merge key, read from the catalog.
//! A field with no schema has no metadata: its maps merge and its lists
//! are replaced.

use super::error::{unexpected_strategy, SmpResult};
use crate::schema::{Shape, TypeRef};

/// How a field is patched.
pub(super) struct FieldMeta<'a> {
    /// The schema of the field (a map's own schema; a list's elements).
    pub(super) ty: TypeRef<'a>,
    /// The patch strategy other than `retainKeys`: `merge`, `replace` or
    /// empty.
    pub(super) strategy: &'a str,
    /// `x-kubernetes-patch-merge-key`, empty if none.
    pub(super) merge_key: &'a str,
}

impl FieldMeta<'_> {
    pub(super) fn merges(&self) -> bool {
        self.strategy == "merge"
    }

    pub(super) fn replaces(&self) -> bool {
        self.strategy == "replace"
    }
}

/// kube's `extractRetainKeysPatchStrategy`: at most two strategies, one
/// of them `retainKeys` when there are two.
fn strategy<'a>(field: &TypeRef<'a>) -> SmpResult<&'a str> {
    let all: Vec<&'a str> = field.patch_strategies().collect();
    match all.as_slice() {
        [] => Ok(""),
        ["retainKeys"] => Ok(""),
        [one] => Ok(one),
        ["retainKeys", other] | [other, "retainKeys"] => Ok(other),
        _ => Err(unexpected_strategy(&all)),
    }
}

/// The metadata of map-valued field `key` of `parent`.
pub(super) fn of_map_field<'a>(parent: &TypeRef<'a>, key: &str) -> SmpResult<FieldMeta<'a>> {
    let field = parent.field(key);
    Ok(FieldMeta {
        ty: field,
        strategy: strategy(&field)?,
        merge_key: field.patch_merge_key().unwrap_or(""),
    })
}

/// The metadata of list-valued field `key` of `parent`; `ty` is the
/// element schema.
pub(super) fn of_list_field<'a>(parent: &TypeRef<'a>, key: &str) -> SmpResult<FieldMeta<'a>> {
    let field = parent.field(key);
    Ok(FieldMeta {
        ty: field.items(),
        strategy: strategy(&field)?,
        merge_key: field.patch_merge_key().unwrap_or(""),
    })
}

/// The Go kind of a list's element type, as kube names it in "cannot
/// merge lists without merge key for <kind>": API types are structs.
pub(super) fn element_kind(elements: &TypeRef<'_>) -> &'static str {
    match elements.shape() {
        Shape::Map => "map",
        _ => "struct",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_registry::CatalogSnapshot;

    #[test]
    fn reads_builtin_patch_metadata() {
        let snap = CatalogSnapshot::builtin();
        let pod = TypeRef::for_kind(snap, "v1", "Pod");
        let spec = of_map_field(&pod, "spec").unwrap();
        let containers = of_list_field(&spec.ty, "containers").unwrap();
        assert!(containers.merges());
        assert_eq!(containers.merge_key, "name");
        let ports = of_list_field(&containers.ty, "ports").unwrap();
        assert_eq!(
            (ports.strategy, ports.merge_key),
            ("merge", "containerPort")
        );
        let volumes = of_list_field(&spec.ty, "volumes").unwrap();
        assert_eq!((volumes.strategy, volumes.merge_key), ("merge", "name"));
        let tolerations = of_list_field(&spec.ty, "tolerations").unwrap();
        assert_eq!((tolerations.strategy, tolerations.merge_key), ("", ""));
        let meta = of_map_field(&pod, "metadata").unwrap();
        let finalizers = of_list_field(&meta.ty, "finalizers").unwrap();
        assert_eq!((finalizers.strategy, finalizers.merge_key), ("merge", ""));
        let deploy = TypeRef::for_kind(snap, "apps/v1", "Deployment");
        let dspec = of_map_field(&deploy, "spec").unwrap();
        let strategy = of_map_field(&dspec.ty, "strategy").unwrap();
        assert_eq!(strategy.strategy, "");
        assert!(dspec.ty.field("strategy").has_patch_strategy("retainKeys"));
        let svc = TypeRef::for_kind(snap, "v1", "Service");
        let sspec = of_map_field(&svc, "spec").unwrap();
        let sports = of_list_field(&sspec.ty, "ports").unwrap();
        assert_eq!((sports.strategy, sports.merge_key), ("merge", "port"));
        assert_eq!(element_kind(&sports.ty), "struct");
    }
}
