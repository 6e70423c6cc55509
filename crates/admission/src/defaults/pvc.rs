//! The PersistentVolumeClaim strategy's data sources
//! (`pkg/api/persistentvolumeclaim/util.go`, KEP 1495, with kube 1.34's
//! gates: `AnyVolumeDataSource` GA, `CrossNamespaceVolumeDataSource` off):
//! a cross-namespace `dataSourceRef` is dropped unless the stored claim
//! had a `dataSourceRef`; a `dataSource` other than a PVC or a
//! VolumeSnapshot is dropped when there is no `dataSourceRef` and the
//! stored claim had no data source; then a lone `dataSource` is copied to
//! `dataSourceRef` and a lone local `dataSourceRef` to `dataSource`.

use serde_json::{Map, Value};

fn spec_field<'a>(obj: &'a Value, k: &str) -> Option<&'a Value> {
    obj.get("spec")?.get(k).filter(|v| !v.is_null())
}

fn is_pvc_or_snapshot(ds: &Value) -> bool {
    let s = |k: &str| ds.get(k).and_then(Value::as_str).unwrap_or("");
    (s("kind") == "PersistentVolumeClaim" && s("apiGroup").is_empty())
        || (s("kind") == "VolumeSnapshot" && s("apiGroup") == "snapshot.storage.k8s.io")
}

/// `kind`, `name` and (when set) `apiGroup` of a reference.
fn reference(from: &Value) -> Value {
    let mut m = Map::new();
    if let Some(g) = from.get("apiGroup").filter(|g| !g.is_null()) {
        m.insert("apiGroup".into(), g.clone());
    }
    for k in ["kind", "name"] {
        m.insert(
            k.into(),
            from.get(k).cloned().unwrap_or_else(|| Value::from("")),
        );
    }
    Value::Object(m)
}

/// kube's `DropDisabledFields`, `EnforceDataSourceBackwardsCompatibility`
/// and `NormalizeDataSources` on a create (`old` none) or an update.
pub(super) fn data_sources(obj: &mut Value, old: Option<&Value>) {
    let old_ref = old.and_then(|o| spec_field(o, "dataSourceRef")).is_some();
    let old_any = old_ref || old.and_then(|o| spec_field(o, "dataSource")).is_some();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let cross_namespace = spec
        .get("dataSourceRef")
        .and_then(|r| r.get("namespace"))
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if cross_namespace && !old_ref {
        spec.shift_remove("dataSourceRef");
    }
    let has = |spec: &Map<String, Value>, k: &str| spec.get(k).is_some_and(|v| !v.is_null());
    if !old_any
        && !has(spec, "dataSourceRef")
        && !spec.get("dataSource").is_some_and(is_pvc_or_snapshot)
    {
        spec.shift_remove("dataSource");
    }
    normalize(spec);
}

/// kube's `NormalizeDataSources` on a claim's spec: a lone `dataSource`
/// is copied to `dataSourceRef`, a lone local `dataSourceRef` to
/// `dataSource`.
pub(crate) fn normalize(spec: &mut Map<String, Value>) {
    let has = |spec: &Map<String, Value>, k: &str| spec.get(k).is_some_and(|v| !v.is_null());
    match (has(spec, "dataSource"), has(spec, "dataSourceRef")) {
        (true, false) => {
            let r = reference(&spec["dataSource"]);
            spec.insert("dataSourceRef".into(), r);
        }
        (false, true) => {
            let local = spec["dataSourceRef"]
                .get("namespace")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if local {
                let r = reference(&spec["dataSourceRef"]);
                spec.insert("dataSource".into(), r);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pvc(spec: Value) -> Value {
        json!({"metadata": {"name": "c"}, "spec": spec})
    }

    #[test]
    fn data_sources_are_normalized_as_kube_s_strategy_does() {
        let mut v = pvc(json!({"dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}}));
        data_sources(&mut v, None);
        assert_eq!(
            v["spec"]["dataSourceRef"],
            json!({"kind": "PersistentVolumeClaim", "name": "src"})
        );
        let mut v = pvc(
            json!({"dataSourceRef": {"apiGroup": "example.com", "kind": "Populator", "name": "p"}}),
        );
        data_sources(&mut v, None);
        assert_eq!(
            v["spec"]["dataSource"],
            json!({"apiGroup": "example.com", "kind": "Populator", "name": "p"})
        );
        // A data source that is neither a PVC nor a snapshot, alone: dropped.
        let mut v = pvc(json!({"dataSource": {"kind": "ConfigMap", "name": "x"}}));
        data_sources(&mut v, None);
        assert!(v["spec"].get("dataSource").is_none() && v["spec"].get("dataSourceRef").is_none());
        // ... unless the stored claim already had one.
        let stored = pvc(json!({"dataSource": {"kind": "ConfigMap", "name": "x"}}));
        let mut v = stored.clone();
        data_sources(&mut v, Some(&stored));
        assert_eq!(v["spec"]["dataSourceRef"]["kind"], "ConfigMap");
        // A cross-namespace ref: dropped (its gate is off).
        let mut v = pvc(
            json!({"dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "s", "namespace": "other"}}),
        );
        data_sources(&mut v, None);
        assert!(v["spec"].get("dataSourceRef").is_none());
    }
}
