use serde_json::Value;

use super::*;

// The document functions over the built-in generation, under the names
// these tests were written with.
mod builtin {
    use std::sync::{Arc, OnceLock};

    use keelson_registry::CatalogSnapshot;
    use serde_json::Value;

    use crate::OpenApiDocs;

    fn c() -> &'static CatalogSnapshot {
        CatalogSnapshot::builtin()
    }

    fn openapi() -> &'static OpenApiDocs {
        static DOCS: OnceLock<OpenApiDocs> = OnceLock::new();
        DOCS.get_or_init(|| OpenApiDocs::build(c()))
    }

    pub fn api_versions_with_address(a: &str) -> Value {
        crate::api_versions_with_address(c(), a)
    }
    pub fn api_group_list() -> Value {
        crate::api_group_list(c())
    }
    pub fn api_group(g: &str) -> Option<Value> {
        crate::api_group(c(), g)
    }
    pub fn api_resource_list(g: &str, v: &str) -> Option<Value> {
        crate::api_resource_list(c(), g, v)
    }
    pub fn aggregated(core: bool, v: crate::AggVersion) -> Value {
        crate::aggregated(c(), core, v)
    }
    pub fn openapi_v3_root() -> Value {
        openapi().root()
    }
    pub fn openapi_v3_paths() -> Vec<String> {
        openapi().paths()
    }
    pub fn openapi_v3_doc(p: &str) -> Option<(Arc<Vec<u8>>, String)> {
        openapi().doc(p)
    }
}
use builtin::{
    aggregated, api_group, api_group_list, api_resource_list, api_versions_with_address,
    openapi_v3_doc, openapi_v3_paths, openapi_v3_root,
};

fn doc(path: &str) -> Value {
    let (bytes, _) = openapi_v3_doc(path).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn version_reports_1_34() {
    let v = version_info();
    assert_eq!(v["major"], "1");
    assert_eq!(v["minor"], "34");
    assert_eq!(v["gitVersion"], "v1.34.1");
    assert_eq!(v["emulationMinor"], "34");
    assert_eq!(v["minCompatibilityMinor"], "33");
    assert_eq!(v["platform"], "linux/amd64");
}

#[test]
fn legacy_api_and_apis() {
    let api = api_versions_with_address("10.0.0.1:443");
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], serde_json::json!(["v1"]));
    assert_eq!(
        api["serverAddressByClientCIDRs"][0]["serverAddress"],
        "10.0.0.1:443"
    );

    let apis = api_group_list();
    assert_eq!(apis["kind"], "APIGroupList");
    let groups = apis["groups"].as_array().unwrap();
    assert!(groups.iter().all(|g| g["name"] != ""));
    let autoscaling = groups.iter().find(|g| g["name"] == "autoscaling").unwrap();
    assert_eq!(
        autoscaling["preferredVersion"]["groupVersion"],
        "autoscaling/v2"
    );
    assert_eq!(autoscaling["versions"][1]["version"], "v1");

    let apps = api_group("apps").unwrap();
    assert_eq!(apps["kind"], "APIGroup");
    assert_eq!(apps["preferredVersion"]["version"], "v1");
    assert!(api_group("nope.example.com").is_none());
    assert!(api_group("").is_none());
}

#[test]
fn legacy_resource_lists() {
    let core = api_resource_list("", "v1").unwrap();
    assert_eq!(core["groupVersion"], "v1");
    let res = core["resources"].as_array().unwrap();
    let names: Vec<&str> = res.iter().map(|r| r["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let pods = res.iter().find(|r| r["name"] == "pods").unwrap();
    assert_eq!(pods["singularName"], "pod");
    assert_eq!(pods["namespaced"], true);
    assert_eq!(pods["shortNames"], serde_json::json!(["po"]));
    assert_eq!(pods["categories"], serde_json::json!(["all"]));
    assert_eq!(pods["storageVersionHash"], "xPOwRZ+Yhw8=");
    let status = res.iter().find(|r| r["name"] == "pods/status").unwrap();
    assert_eq!(status["kind"], "Pod");
    assert!(status.get("group").is_none());
    let eviction = res.iter().find(|r| r["name"] == "pods/eviction").unwrap();
    assert_eq!(eviction["group"], "policy");

    let apps = api_resource_list("apps", "v1").unwrap();
    assert_eq!(apps["apiVersion"], "v1");
    let scale = apps["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .unwrap();
    assert_eq!(
        (&scale["group"], &scale["version"], &scale["kind"]),
        (
            &Value::from("autoscaling"),
            &Value::from("v1"),
            &Value::from("Scale")
        )
    );
    assert!(api_resource_list("apps", "v1beta1").is_none());
    assert!(api_resource_list("nope", "v1").is_none());
}

#[test]
fn aggregated_core_and_groups() {
    for (v, api_version) in [
        (AggVersion::V2, "apidiscovery.k8s.io/v2"),
        (AggVersion::V2Beta1, "apidiscovery.k8s.io/v2beta1"),
    ] {
        let core = aggregated(true, v);
        assert_eq!(core["kind"], "APIGroupDiscoveryList");
        assert_eq!(core["apiVersion"], api_version);
        let items = core["items"].as_array().unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["metadata"]["name"], "");
        let v1 = &items[0]["versions"][0];
        assert_eq!(v1["version"], "v1");
        assert_eq!(v1["freshness"], "Current");
        let pods = v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "pods")
            .unwrap();
        assert_eq!(pods["scope"], "Namespaced");
        assert_eq!(pods["singularResource"], "pod");
        assert_eq!(pods["shortNames"], serde_json::json!(["po"]));
        assert_eq!(pods["responseKind"]["kind"], "Pod");
        assert_eq!(pods["responseKind"]["version"], "v1");
    }
    let apis = aggregated(false, AggVersion::V2);
    let items = apis["items"].as_array().unwrap();
    assert_eq!(items[0]["metadata"]["name"], "apiregistration.k8s.io");
    assert!(items.iter().all(|i| i["metadata"]["name"] != ""));
    let apps = items
        .iter()
        .find(|i| i["metadata"]["name"] == "apps")
        .unwrap();
    let deploy = apps["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "deployments")
        .unwrap();
    let scale = deploy["subresources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["subresource"] == "scale")
        .unwrap();
    assert_eq!(
        scale["responseKind"],
        serde_json::json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
    );
    assert_eq!(
        scale["verbs"],
        serde_json::json!(["get", "patch", "update"])
    );
    let autoscaling = items
        .iter()
        .find(|i| i["metadata"]["name"] == "autoscaling")
        .unwrap();
    assert_eq!(autoscaling["versions"][0]["version"], "v2");
    let ns_scoped = items
        .iter()
        .find(|i| i["metadata"]["name"] == "rbac.authorization.k8s.io")
        .unwrap()["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "clusterroles")
        .unwrap()["scope"]
        .clone();
    assert_eq!(ns_scoped, "Cluster");
}

#[test]
fn openapi_root_lists_every_doc_with_stable_hash() {
    let root = openapi_v3_root();
    let paths = root["paths"].as_object().unwrap();
    for p in [
        "api",
        "api/v1",
        "apis",
        "apis/apps",
        "apis/apps/v1",
        "apis/autoscaling/v1",
        "version",
    ] {
        let url = paths[p]["serverRelativeURL"].as_str().unwrap();
        let (_, hash) = openapi_v3_doc(p).unwrap();
        assert_eq!(url, format!("/openapi/v3/{p}?hash={hash}"));
        assert_eq!(hash.len(), 128);
    }
    assert_eq!(openapi_v3_root(), root);
    assert_eq!(
        openapi_v3_doc("/api/v1/").unwrap().1,
        openapi_v3_doc("api/v1").unwrap().1
    );
    assert!(openapi_v3_doc("apis/apps/v1beta1").is_none());
}

fn find_op<'a>(d: &'a Value, path: &str, method: &str) -> &'a Value {
    &d["paths"][path][method]
}

#[test]
fn openapi_patch_operation_is_what_kubectl_checks() {
    let d = doc("api/v1");
    assert_eq!(d["openapi"], "3.0.0");
    assert_eq!(d["info"]["version"], "v1.34.1");
    let patch = find_op(&d, "/api/v1/namespaces/{namespace}/pods/{name}", "patch");
    assert_eq!(patch["operationId"], "patchCoreV1NamespacedPod");
    assert_eq!(patch["x-kubernetes-action"], "patch");
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        serde_json::json!({"group": "", "kind": "Pod", "version": "v1"})
    );
    let names: Vec<(&str, &str)> = patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["in"].as_str().unwrap()))
        .collect();
    assert!(names.contains(&("fieldValidation", "query")));
    assert!(names.contains(&("force", "query")));
    let fv = patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "fieldValidation")
        .unwrap();
    assert!(fv["description"].as_str().unwrap().contains("Strict"));
    let content: Vec<&String> = patch["requestBody"]["content"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        content,
        [
            "application/apply-patch+yaml",
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json"
        ]
    );
    assert_eq!(
        patch["requestBody"]["content"]["application/strategic-merge-patch+json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
    );
}

#[test]
fn openapi_collection_and_item_operations() {
    let d = doc("api/v1");
    let coll = &d["paths"]["/api/v1/namespaces/{namespace}/pods"];
    assert_eq!(coll["get"]["operationId"], "listCoreV1NamespacedPod");
    assert_eq!(coll["get"]["x-kubernetes-action"], "list");
    assert_eq!(coll["post"]["x-kubernetes-action"], "post");
    assert_eq!(
        coll["post"]["requestBody"]["content"]["*/*"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.Pod"
    );
    assert_eq!(
        coll["post"]["responses"]["201"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.Pod"
    );
    assert_eq!(
        coll["delete"]["operationId"],
        "deleteCoreV1CollectionNamespacedPod"
    );
    assert_eq!(coll["delete"]["x-kubernetes-action"], "deletecollection");
    let list_params: Vec<&str> = coll["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(list_params.contains(&"labelSelector") && list_params.contains(&"watch"));
    assert_eq!(
        d["paths"]["/api/v1/pods"]["get"]["operationId"],
        "listCoreV1PodForAllNamespaces"
    );
    let item = &d["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"];
    for (m, id) in [
        ("get", "readCoreV1NamespacedPod"),
        ("put", "replaceCoreV1NamespacedPod"),
        ("delete", "deleteCoreV1NamespacedPod"),
    ] {
        assert_eq!(item[m]["operationId"], id);
    }
    let status = &d["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/status"];
    assert_eq!(
        status["patch"]["operationId"],
        "patchCoreV1NamespacedPodStatus"
    );
    assert!(d["paths"]["/api/v1/nodes/{name}"]["get"].is_object());
    assert!(d["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/exec"].is_null());

    let apps = doc("apis/apps/v1");
    let scale = &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
    assert_eq!(
        scale["patch"]["operationId"],
        "patchAppsV1NamespacedDeploymentScale"
    );
    assert_eq!(
        scale["patch"]["x-kubernetes-group-version-kind"],
        serde_json::json!({"group": "autoscaling", "kind": "Scale", "version": "v1"})
    );
    assert_eq!(
        scale["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"
    );
    let rbac = doc("apis/rbac.authorization.k8s.io/v1");
    assert!(
        rbac["paths"]["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["get"]["operationId"]
            == "listRbacAuthorizationV1ClusterRole"
    );
}

#[test]
fn openapi_schemas_carry_gvk_refs_and_extensions() {
    let d = doc("api/v1");
    let schemas = d["components"]["schemas"].as_object().unwrap();
    let pod = &schemas["io.k8s.api.core.v1.Pod"];
    assert_eq!(
        pod["x-kubernetes-group-version-kind"],
        serde_json::json!([{"group": "", "kind": "Pod", "version": "v1"}])
    );
    assert_eq!(
        pod["properties"]["spec"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.PodSpec"
    );
    assert_eq!(pod["properties"]["spec"]["default"], serde_json::json!({}));
    assert!(pod["properties"]["spec"]["description"].is_string());
    let containers = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["type"], "array");
    assert_eq!(
        containers["x-kubernetes-list-map-keys"],
        serde_json::json!(["name"])
    );
    assert_eq!(containers["x-kubernetes-list-type"], "map");
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
    let ios = &schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert_eq!(ios["x-kubernetes-int-or-string"], true);
    assert_eq!(ios["format"], "int-or-string");
    // Everything referenced is present.
    let text = serde_json::to_string(&d).unwrap();
    for part in text.split("\"#/components/schemas/").skip(1) {
        let name = &part[..part.find('"').unwrap()];
        assert!(schemas.contains_key(name), "missing {name}");
    }
    // Another group's kinds are not dragged in.
    assert!(!schemas.contains_key("io.k8s.api.apps.v1.Deployment"));
}

#[test]
fn every_served_patch_has_field_validation() {
    for p in openapi_v3_paths() {
        let d = doc(&p);
        for (path, item) in d["paths"].as_object().unwrap() {
            if let Some(patch) = item.get("patch") {
                let ok = patch["parameters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|q| q["name"] == "fieldValidation" && q["in"] == "query");
                assert!(ok, "{path}");
            }
        }
    }
}

#[test]
fn etag_is_quoted_and_stable() {
    let a = etag(b"hello");
    assert!(a.starts_with('"') && a.ends_with('"'));
    assert_eq!(a, etag(b"hello"));
    assert_ne!(a, etag(b"hello!"));
}

/// Manual check helper: `KEELSON_DUMP_DIR=/tmp/d cargo test -p
/// keelson-discovery dump -- --ignored` writes every document to disk.
#[test]
#[ignore]
fn dump() {
    let Ok(dir) = std::env::var("KEELSON_DUMP_DIR") else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    let write = |name: &str, v: &[u8]| {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, v).unwrap();
    };
    let j = |v: &Value| serde_json::to_vec(v).unwrap();
    write("version", &j(&version_info()));
    write("agg/api", &j(&aggregated(true, AggVersion::V2)));
    write("agg/apis", &j(&aggregated(false, AggVersion::V2)));
    write("openapi_root", &j(&openapi_v3_root()));
    for p in openapi_v3_paths() {
        write(
            &format!("oa/{}", p.replace('/', "__")),
            &openapi_v3_doc(&p).unwrap().0,
        );
    }
}

mod generations {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use keelson_registry::{Catalog, CatalogSnapshot, ResourceInfo, Schema, Strategy};

    use crate::{AggVersion, DiscoveryCache};

    pub(super) fn widgets() -> (Vec<ResourceInfo>, BTreeMap<String, Schema>) {
        let mut schema = Schema {
            type_: Some("object".into()),
            ..Schema::default()
        };
        schema.properties.insert(
            "spec".into(),
            Schema {
                type_: Some("object".into()),
                preserve_unknown_fields: true,
                ..Schema::default()
            },
        );
        let r = ResourceInfo {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            namespaced: true,
            verbs: [
                "create", "delete", "get", "list", "patch", "update", "watch",
            ]
            .map(String::from)
            .to_vec(),
            definition: "com.example.v1.Widget".into(),
            strategy: Strategy {
                tracks_generation: true,
                ..Strategy::default()
            },
            ..ResourceInfo::default()
        };
        (
            vec![r],
            BTreeMap::from([("com.example.v1.Widget".to_owned(), schema)]),
        )
    }

    #[test]
    fn documents_follow_the_generation_with_new_etags() {
        let catalog = Catalog::builtin();
        let cache = DiscoveryCache::new("10.0.0.1:6443".into());
        let old = cache.documents(&catalog.snapshot());
        // Same generation: the same documents.
        assert!(Arc::ptr_eq(&old, &cache.documents(&catalog.snapshot())));
        let old_api_v1 = old.openapi_doc("api/v1").unwrap();

        let (rs, defs) = widgets();
        let snap = catalog.insert(rs, defs).unwrap();
        let new = cache.documents(&snap);
        assert!(!Arc::ptr_eq(&old, &new));

        // /apis, /apis/example.com/v1, aggregated, OpenAPI: present, new ETags.
        assert_ne!(old.apis_legacy.etag, new.apis_legacy.etag);
        assert_ne!(old.apis_v2.etag, new.apis_v2.etag);
        assert_ne!(old.openapi_root().etag, new.openapi_root().etag);
        // Untouched documents keep their bytes and ETags.
        assert_eq!(old.api_legacy.etag, new.api_legacy.etag);
        assert_eq!(old.api_v2.etag, new.api_v2.etag);
        assert_eq!(old_api_v1.hash, new.openapi_doc("api/v1").unwrap().hash);

        let apis: serde_json::Value = serde_json::from_slice(&new.apis_legacy.bytes).unwrap();
        assert!(apis["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "example.com"));
        let list = crate::api_resource_list(&snap, "example.com", "v1").unwrap();
        assert_eq!(list["resources"][0]["name"], "widgets");
        assert_eq!(list["resources"][0]["kind"], "Widget");
        assert!(
            crate::api_resource_list(CatalogSnapshot::builtin(), "example.com", "v1").is_none()
        );
        let agg = crate::aggregated(&snap, false, AggVersion::V2);
        let item = agg["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["metadata"]["name"] == "example.com")
            .unwrap();
        assert_eq!(item["versions"][0]["resources"][0]["resource"], "widgets");

        let root: serde_json::Value = serde_json::from_slice(&new.openapi_root().bytes).unwrap();
        let doc = new.openapi_doc("apis/example.com/v1").unwrap();
        assert_eq!(
            root["paths"]["apis/example.com/v1"]["serverRelativeURL"],
            format!("/openapi/v3/apis/example.com/v1?hash={}", doc.hash)
        );
        let d: serde_json::Value = serde_json::from_slice(&doc.doc.bytes).unwrap();
        assert!(
            d["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets"]["post"].is_object()
        );
        assert!(d["components"]["schemas"]["com.example.v1.Widget"].is_object());
        assert!(old.openapi_doc("apis/example.com/v1").is_none());

        // A request still on the old generation does not displace the new one.
        let stale = cache.documents(&old.snapshot().clone());
        assert_eq!(stale.apis_legacy.etag, old.apis_legacy.etag);
        assert!(Arc::ptr_eq(&cache.documents(&snap), &new));
    }
}

mod openapi_v2 {
    use std::sync::OnceLock;

    use keelson_registry::{Catalog, CatalogSnapshot};
    use serde_json::Value;

    use crate::openapi::v2;

    fn doc() -> &'static Value {
        static DOC: OnceLock<Value> = OnceLock::new();
        DOC.get_or_init(|| v2::document(CatalogSnapshot::builtin()))
    }

    fn op<'a>(d: &'a Value, path: &str, method: &str) -> &'a Value {
        let o = &d["paths"][path][method];
        assert!(o.is_object(), "no {method} {path}");
        o
    }

    fn param<'a>(o: &'a Value, name: &str) -> Option<&'a Value> {
        o["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
    }

    /// Every `$ref` under `v`, and every key used anywhere except names
    /// (of properties, definitions, paths).
    fn walk<'a>(v: &'a Value, refs: &mut Vec<&'a str>, keys: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    keys.push(k);
                    match (k.as_str(), x) {
                        ("$ref", Value::String(r)) => refs.push(r),
                        ("properties" | "definitions" | "paths", Value::Object(named)) => {
                            named.values().for_each(|x| walk(x, refs, keys))
                        }
                        _ => walk(x, refs, keys),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, refs, keys)),
            _ => {}
        }
    }

    #[test]
    fn envelope_is_swagger_2() {
        let d = doc();
        assert_eq!(d["swagger"], "2.0");
        assert_eq!(d["info"]["title"], "Kubernetes");
        assert_eq!(d["info"]["version"], crate::GIT_VERSION);
        assert_eq!(
            d["securityDefinitions"]["BearerToken"],
            serde_json::json!({"description": "Bearer Token authentication", "in": "header",
                "name": "authorization", "type": "apiKey"})
        );
        assert_eq!(d["security"], serde_json::json!([{"BearerToken": []}]));
        assert!(d.get("openapi").is_none() && d.get("components").is_none());
        for p in ["/api/", "/apis/", "/apis/apps/", "/api/v1/", "/version/"] {
            assert!(d["paths"][p]["get"].is_object(), "{p}");
        }
        assert_eq!(
            d["paths"]["/api/v1/"]["get"]["operationId"],
            "getCoreV1APIResources"
        );
    }

    #[test]
    fn list_create_and_patch_operations() {
        let d = doc();
        let list = op(d, "/api/v1/namespaces/{namespace}/pods", "get");
        assert_eq!(list["operationId"], "listCoreV1NamespacedPod");
        assert_eq!(list["x-kubernetes-action"], "list");
        assert_eq!(
            list["x-kubernetes-group-version-kind"],
            serde_json::json!({"group": "", "kind": "Pod", "version": "v1"})
        );
        assert_eq!(list["consumes"], serde_json::json!(["*/*"]));
        assert_eq!(
            list["produces"],
            serde_json::json!([
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
                "application/json;stream=watch",
                "application/vnd.kubernetes.protobuf;stream=watch"
            ])
        );
        assert_eq!(list["schemes"], serde_json::json!(["https"]));
        assert_eq!(list["tags"], serde_json::json!(["core_v1"]));
        assert_eq!(
            list["responses"]["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.PodList"
        );
        assert_eq!(list["responses"]["401"]["description"], "Unauthorized");
        let watch = param(list, "watch").unwrap();
        assert_eq!(watch["in"], "query");
        assert_eq!(watch["type"], "boolean");
        assert!(watch.get("schema").is_none());
        // Path-level parameters: name/namespace/pretty with inline types.
        let item = &d["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"];
        let names: Vec<&str> = item["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["name", "namespace", "pretty"]);
        assert_eq!(item["parameters"][0]["in"], "path");
        assert_eq!(item["parameters"][0]["required"], true);
        assert_eq!(item["parameters"][0]["type"], "string");

        let create = op(
            d,
            "/apis/apps/v1/namespaces/{namespace}/deployments",
            "post",
        );
        assert_eq!(create["operationId"], "createAppsV1NamespacedDeployment");
        assert_eq!(create["x-kubernetes-action"], "post");
        assert_eq!(create["consumes"], serde_json::json!(["*/*"]));
        let body = &create["parameters"][0];
        assert_eq!(body["in"], "body");
        assert_eq!(body["name"], "body");
        assert_eq!(body["required"], true);
        assert_eq!(
            body["schema"]["$ref"],
            "#/definitions/io.k8s.api.apps.v1.Deployment"
        );
        for code in ["200", "201", "202"] {
            assert_eq!(
                create["responses"][code]["schema"]["$ref"],
                "#/definitions/io.k8s.api.apps.v1.Deployment",
                "{code}"
            );
        }
        assert!(create.get("requestBody").is_none());

        let patch = op(
            d,
            "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
            "patch",
        );
        assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeploymentScale");
        assert_eq!(patch["x-kubernetes-action"], "patch");
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            serde_json::json!({"group": "autoscaling", "kind": "Scale", "version": "v1"})
        );
        assert_eq!(
            patch["consumes"],
            serde_json::json!([
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml"
            ])
        );
        assert_eq!(
            patch["parameters"][0]["schema"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
        );
        assert!(param(patch, "fieldValidation").is_some());
        assert!(param(patch, "force").is_some());
        assert_eq!(
            patch["responses"]["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.autoscaling.v1.Scale"
        );

        let del = op(
            d,
            "/apis/apps/v1/namespaces/{namespace}/deployments",
            "delete",
        );
        assert_eq!(
            del["operationId"],
            "deleteAppsV1CollectionNamespacedDeployment"
        );
        assert_eq!(del["parameters"][0]["in"], "body");
        assert!(del["parameters"][0].get("required").is_none());
    }

    #[test]
    fn every_ref_resolves_and_no_v3_constructs_remain() {
        let d = doc();
        let (mut refs, mut keys) = (Vec::new(), Vec::new());
        walk(d, &mut refs, &mut keys);
        assert!(refs.len() > 1000, "{}", refs.len());
        let defs = d["definitions"].as_object().unwrap();
        for r in refs {
            let name = r
                .strip_prefix("#/definitions/")
                .unwrap_or_else(|| panic!("not a v2 ref: {r}"));
            assert!(defs.contains_key(name), "dangling {r}");
        }
        for k in [
            "oneOf",
            "anyOf",
            "requestBody",
            "content",
            "components",
            "nullable",
        ] {
            assert!(!keys.contains(&k), "v3 key {k} remains");
        }
    }

    #[test]
    fn definitions_in_v2_form() {
        let d = doc();
        let pod = &d["definitions"]["io.k8s.api.core.v1.Pod"];
        assert_eq!(
            pod["x-kubernetes-group-version-kind"],
            serde_json::json!([{"group": "", "kind": "Pod", "version": "v1"}])
        );
        let meta = &pod["properties"]["metadata"];
        assert_eq!(
            meta["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert!(meta["description"].is_string());
        assert!(meta.get("allOf").is_none() && meta.get("default").is_none());
        let containers =
            &d["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["type"], "array");
        assert_eq!(
            containers["items"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.Container"
        );
        let ios = &d["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
        assert_eq!(ios["type"], "string");
        assert_eq!(ios["format"], "int-or-string");
        let q = &d["definitions"]["io.k8s.apimachinery.pkg.api.resource.Quantity"];
        assert_eq!(q["type"], "string");
    }

    #[test]
    fn custom_resources_are_included() {
        let catalog = Catalog::builtin();
        let (rs, defs) = super::generations::widgets();
        let snap = catalog.insert(rs, defs).unwrap();
        let d = v2::document(&snap);
        assert!(d["definitions"]["com.example.v1.Widget"].is_object());
        let create = op(
            &d,
            "/apis/example.com/v1/namespaces/{namespace}/widgets",
            "post",
        );
        assert_eq!(create["operationId"], "createExampleComV1NamespacedWidget");
        assert_eq!(
            create["parameters"][0]["schema"]["$ref"],
            "#/definitions/com.example.v1.Widget"
        );
        let patch = op(
            &d,
            "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}",
            "patch",
        );
        assert_eq!(patch["operationId"], "patchExampleComV1NamespacedWidget");
        assert!(v2::document(CatalogSnapshot::builtin())["definitions"]
            .get("com.example.v1.Widget")
            .is_none());
    }

    /// A custom resource whose root preserves unknown fields: v2 publishes
    /// only `type: object` and the GVK (kube's builder, for kubectl's
    /// client-side validation); nested preserving nodes lose their
    /// properties and `type: object`; v3 keeps the schema and the extension.
    #[test]
    fn preserve_unknown_custom_roots_are_open_in_v2() {
        let catalog = Catalog::builtin();
        let (mut rs, mut defs) = super::generations::widgets();
        rs[0].custom = Some(Box::default());
        let root = defs.get_mut("com.example.v1.Widget").unwrap();
        root.preserve_unknown_fields = true;
        root.gvk = vec![keelson_registry::GroupVersionKind {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
        }];
        let snap = catalog.insert(rs.clone(), defs.clone()).unwrap();
        let d = v2::document(&snap);
        assert_eq!(
            d["definitions"]["com.example.v1.Widget"],
            serde_json::json!({
                "type": "object",
                "x-kubernetes-group-version-kind": [
                    {"group": "example.com", "kind": "Widget", "version": "v1"}
                ]
            })
        );
        let v3: serde_json::Value = serde_json::from_slice(
            &crate::openapi::OpenApiDocs::build(&snap)
                .doc("apis/example.com/v1")
                .unwrap()
                .0,
        )
        .unwrap();
        let w = &v3["components"]["schemas"]["com.example.v1.Widget"];
        assert_eq!(w["x-kubernetes-preserve-unknown-fields"], true, "{w}");
        assert_eq!(
            w["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"],
            true
        );

        // Only a nested node preserves: it is open in v2, the root is not.
        let root = defs.get_mut("com.example.v1.Widget").unwrap();
        root.preserve_unknown_fields = false;
        let snap = Catalog::builtin().insert(rs, defs).unwrap();
        let d = v2::document(&snap);
        let spec = &d["definitions"]["com.example.v1.Widget"]["properties"]["spec"];
        assert_eq!(
            *spec,
            serde_json::json!({"x-kubernetes-preserve-unknown-fields": true}),
            "{spec}"
        );
        // Built-in definitions never carry the extension.
        let raw = &d["definitions"]["io.k8s.apimachinery.pkg.runtime.RawExtension"];
        assert!(
            raw.get("x-kubernetes-preserve-unknown-fields").is_none(),
            "{raw}"
        );
    }

    /// `(field, wire type, payload)` of one protobuf message level.
    fn fields(mut b: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
        fn varint(b: &mut &[u8]) -> u64 {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let byte = b[0];
                *b = &b[1..];
                v |= u64::from(byte & 0x7f) << shift;
                if byte < 0x80 {
                    return v;
                }
                shift += 7;
            }
        }
        let mut out = Vec::new();
        while !b.is_empty() {
            let key = varint(&mut b);
            let (field, wire) = (key >> 3, key & 7);
            let payload = match wire {
                0 => varint(&mut b).to_le_bytes().to_vec(),
                1 => {
                    let p = b[..8].to_vec();
                    b = &b[8..];
                    p
                }
                2 => {
                    let n = varint(&mut b) as usize;
                    let p = b[..n].to_vec();
                    b = &b[n..];
                    p
                }
                w => panic!("wire type {w}"),
            };
            out.push((field, wire, payload));
        }
        out
    }

    fn field(b: &[u8], n: u64) -> Vec<Vec<u8>> {
        fields(b)
            .into_iter()
            .filter(|f| f.0 == n)
            .map(|f| f.2)
            .collect()
    }

    #[test]
    fn protobuf_is_gnostic_document() {
        let docs = crate::Documents::build(
            std::sync::Arc::clone(CatalogSnapshot::builtin()),
            "10.0.0.1:6443",
        );
        let v2 = docs.openapi_v2();
        assert_ne!(v2.json.etag, v2.proto.etag);
        let json: Value = serde_json::from_slice(&v2.json.bytes).unwrap();
        assert_eq!(json["swagger"], "2.0");
        let b = &v2.proto.bytes;
        assert_eq!(field(b, 1), vec![b"2.0".to_vec()]);
        let info = &field(b, 2)[0];
        assert_eq!(field(info, 1), vec![b"Kubernetes".to_vec()]);
        // Definitions → NamedSchema{name, Schema}; Pod has its GVK
        // extension and a `properties.metadata` with a `_ref`.
        let defs = &field(b, 9)[0];
        let named = field(defs, 1);
        assert_eq!(named.len(), json["definitions"].as_object().unwrap().len());
        let pod = named
            .iter()
            .find(|n| field(n, 1)[0] == b"io.k8s.api.core.v1.Pod")
            .map(|n| field(n, 2).remove(0))
            .unwrap();
        let ext = field(&pod, 31);
        let gvk = ext
            .iter()
            .find(|e| field(e, 1)[0] == b"x-kubernetes-group-version-kind")
            .unwrap();
        let yaml = String::from_utf8(field(&field(gvk, 2)[0], 2).remove(0)).unwrap();
        assert!(yaml.contains("\"kind\":\"Pod\""), "{yaml}");
        let props = &field(&pod, 25)[0];
        let meta = field(props, 1)
            .into_iter()
            .find(|n| field(n, 1)[0] == b"metadata")
            .map(|n| field(&n, 2).remove(0))
            .unwrap();
        assert_eq!(
            field(&meta, 1),
            vec![b"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta".to_vec()]
        );
        // Paths → NamedPathItem; the pods collection's GET operationId.
        let paths = &field(b, 8)[0];
        let pods = field(paths, 2)
            .into_iter()
            .find(|n| field(n, 1)[0] == b"/api/v1/namespaces/{namespace}/pods")
            .map(|n| field(&n, 2).remove(0))
            .unwrap();
        let get = &field(&pods, 2)[0];
        assert_eq!(field(get, 5), vec![b"listCoreV1NamespacedPod".to_vec()]);
        // Security definitions: BearerToken as an ApiKeySecurity.
        let sd = &field(b, 13)[0];
        let bearer = &field(sd, 1)[0];
        let api_key = &field(&field(bearer, 2)[0], 2)[0];
        assert_eq!(field(api_key, 2), vec![b"authorization".to_vec()]);
        // Built once per generation.
        assert!(std::ptr::eq(docs.openapi_v2(), v2));
    }
}

/// kube-openapi writes its documents with Go's `json.Marshal`, which
/// escapes `<`, `>` and `&` (descriptions such as the Quantity grammar's
/// `<quantity>`).
#[test]
fn openapi_documents_are_go_escaped() {
    let (bytes, _) = openapi_v3_doc("api/v1").unwrap();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(
        !text.contains('<') && !text.contains('>'),
        "raw < or > in v3"
    );
    assert!(text.contains("\\u003c"), "no escaped < in v3");
    let (v2, _) = crate::openapi::v2_documents(keelson_registry::CatalogSnapshot::builtin());
    let v2 = String::from_utf8(v2).unwrap();
    assert!(!v2.contains('<') && !v2.contains('&'), "raw < or & in v2");
    assert!(v2.contains("\\u003c"), "no escaped < in v2");
}
