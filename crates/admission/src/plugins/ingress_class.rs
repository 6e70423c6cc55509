//! DefaultIngressClass (`plugin/pkg/admission/network/defaultingressclass`):
//! an Ingress created without `spec.ingressClassName` (and without the
//! `kubernetes.io/ingress.class` annotation) gets the default IngressClass
//! (`ingressclass.kubernetes.io/is-default-class: "true"`); of several
//! defaults, the newest (then the first by name).

use keelson_apimachinery::ApiResult;
use serde_json::Value;

use super::cache::ingress_classes;
use super::storage_class::newest_default;
use super::util::{annotation, spec_mut};
use super::Attrs;

/// The mutating phase.
pub(crate) async fn admit(a: &Attrs<'_>, ingress: &mut Value) -> ApiResult<()> {
    if !a.is("networking.k8s.io", "ingresses") || a.req.operation != keelson_api::Operation::Create
    {
        return Ok(());
    }
    let has_class = annotation(ingress, "kubernetes.io/ingress.class").is_some()
        || ingress
            .get("spec")
            .and_then(|s| s.get("ingressClassName"))
            .is_some_and(|v| !v.is_null());
    if has_class {
        return Ok(());
    }
    let classes = a
        .cache
        .list(a.store, &ingress_classes(), None)
        .await
        .map_err(|e| a.forbidden(&e.message))?;
    let Some(class) = newest_default(classes, &["ingressclass.kubernetes.io/is-default-class"])
    else {
        return Ok(());
    };
    let name = keelson_apimachinery::meta::meta_str(&class, "name").to_string();
    if let Some(spec) = spec_mut(ingress) {
        spec.insert("ingressClassName".into(), Value::from(name));
    }
    Ok(())
}
