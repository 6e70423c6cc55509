//! Custom resources and CustomResourceDefinitions in admission: the parts
//! of apiextensions-apiserver's handler that sit where kube's decoder,
//! defaulter and validator are for built-ins.
//!
//! - A custom object is pruned against its version's structural schema
//!   (the removed paths are the `fieldValidation` unknown fields),
//!   defaulted, and validated with kube's field errors (plus the CEL call
//!   site); on update, errors on fields left unchanged are dropped
//!   (validation ratcheting).
//! - A CustomResourceDefinition gets kube's CRD validation.

use keelson_api::{AdmissionRequest, Operation};
use keelson_apiextensions::{cel, Compiled, Crd};
use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::Value;

/// The unknown fields `schema` prunes from `object`, as strict-decoding
/// items (`unknown field "spec.foo"`).
pub(crate) fn prune(schema: &Compiled, object: &mut Value) -> Vec<String> {
    schema
        .prune(object)
        .into_iter()
        .map(|p| format!("unknown field {p:?}"))
        .collect()
}

/// Schema and CEL errors of a custom object; on update, errors at paths
/// whose value did not change are ratcheted away.
pub(crate) fn validate(schema: &Compiled, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = schema.validate(object);
    errs.extend(cel::validate_cel(schema, object, old));
    if let Some(old) = old {
        errs.retain(|e| !unchanged(e, object, old));
    }
    errs
}

/// Whether the field an error is about has the same value in both objects.
fn unchanged(e: &FieldError, new: &Value, old: &Value) -> bool {
    if e.kind == FieldErrorKind::Required {
        return false;
    }
    let Some(ptr) = pointer(&e.field) else {
        return false;
    };
    match (new.pointer(&ptr), old.pointer(&ptr)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// `spec.items[0].name` → `/spec/items/0/name`.
fn pointer(field: &str) -> Option<String> {
    let mut out = String::new();
    for part in field.split('.') {
        let (name, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push('/');
            out.push_str(&name.replace('~', "~0").replace('/', "~1"));
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            out.push('/');
            out.push_str(idx.strip_suffix(']')?);
        }
    }
    Some(out)
}

/// The catalog generation to admit `req` with. A custom resource the
/// gateway already serves may not have reached this process's catalog yet
/// (its CRD was just established and the follower is a moment behind):
/// wait up to 2 s for it rather than admit it without its schema.
pub(crate) async fn await_resource(
    catalog: &keelson_registry::Catalog,
    req: &AdmissionRequest,
) -> std::sync::Arc<keelson_registry::CatalogSnapshot> {
    let version = req
        .api_version
        .rsplit('/')
        .next()
        .unwrap_or(&req.api_version);
    let known = |c: &keelson_registry::CatalogSnapshot| {
        c.lookup(&req.gr.group, version, &req.gr.resource).is_some()
            || keelson_registry::CatalogSnapshot::builtin()
                .group(&req.gr.group)
                .is_some()
    };
    let mut snapshot = catalog.snapshot();
    for _ in 0..40 {
        if known(&snapshot) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        snapshot = catalog.snapshot();
    }
    snapshot
}

/// Whether a request is a write of a CustomResourceDefinition.
pub(crate) fn is_crd(req: &AdmissionRequest) -> bool {
    req.gr.group == "apiextensions.k8s.io"
        && req.gr.resource == "customresourcedefinitions"
        && req.subresource.is_empty()
}

/// kube's CRD validation of `object` (create, or update from the request's
/// old object).
pub(crate) fn crd_errors(req: &AdmissionRequest, object: &Value) -> Vec<FieldError> {
    let Ok(crd) = Crd::from_value(object) else {
        // Types were checked by decoding against the CRD's own schema.
        return Vec::new();
    };
    match (req.operation, req.old_object.as_ref().map(Crd::from_value)) {
        (Operation::Update, Some(Ok(old))) => {
            keelson_apiextensions::validation::validate_update(&crd, object, &old)
        }
        _ => keelson_apiextensions::validation::validate_create(&crd, object),
    }
}

#[cfg(test)]
mod tests {
    use super::pointer;

    #[test]
    fn field_paths_as_pointers() {
        assert_eq!(
            pointer("spec.items[0].name").as_deref(),
            Some("/spec/items/0/name")
        );
        assert_eq!(pointer("spec").as_deref(), Some("/spec"));
    }
}
