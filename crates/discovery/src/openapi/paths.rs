//! OpenAPI v3 `paths` for the resources of one group version.

use std::collections::{BTreeMap, BTreeSet};

use keelson_registry::{CatalogSnapshot, ResourceInfo, SubresourceInfo};
use serde_json::{json, Map, Value};

use super::params;
use super::schemas::ref_to;

pub(crate) const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub(crate) const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub(crate) const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub(crate) const RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";

/// The four PATCH content types kube-apiserver accepts.
pub const PATCH_CONTENT_TYPES: [&str; 4] = [
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

const MEDIA: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];
const WATCH_MEDIA: [&str; 2] = [
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

/// `CoreV1`, `AppsV1`, `RbacAuthorizationV1` (operationId infix).
pub fn gv_camel(group: &str, version: &str) -> String {
    format!("{}{}", group_camel(group), capitalize(version))
}

/// `Core`, `Apps`, `RbacAuthorization`, `FlowcontrolApiserver`.
pub fn group_camel(group: &str) -> String {
    if group.is_empty() {
        return "Core".into();
    }
    group
        .trim_end_matches(".k8s.io")
        .split('.')
        .map(capitalize)
        .collect()
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `/api/v1` or `/apis/{group}/{version}`.
pub fn prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// Paths of one group version plus the definitions they reference.
pub struct GvPaths {
    /// Path → path item.
    pub paths: BTreeMap<String, Value>,
    /// Definitions referenced directly.
    pub refs: BTreeSet<String>,
}

struct Ctx<'a> {
    catalog: &'a CatalogSnapshot,
    tag: String,
    refs: BTreeSet<String>,
    /// A CustomResourceDefinition's group version: kube publishes no
    /// Protobuf and no strategic merge patch for it (kubectl's client-side
    /// apply reads the latter to choose a JSON merge patch).
    custom: bool,
}

impl Ctx<'_> {
    fn r(&mut self, def: &str) -> Value {
        self.refs.insert(def.to_owned());
        ref_to(def)
    }

    fn content(&mut self, def: &str, watch: bool) -> Value {
        let schema = json!({"schema": self.r(def)});
        let mut m = Map::new();
        let custom = self.custom;
        for t in MEDIA
            .iter()
            .chain(if watch { &WATCH_MEDIA[..] } else { &[] })
            .filter(|t| !(custom && t.contains("protobuf")))
        {
            m.insert((*t).into(), schema.clone());
        }
        Value::Object(m)
    }

    fn responses(&mut self, codes: &[&str], def: &str, watch: bool) -> Value {
        let mut m = Map::new();
        for code in codes {
            let description = match *code {
                "200" => "OK",
                "201" => "Created",
                "202" => "Accepted",
                _ => "",
            };
            let content = self.content(def, watch);
            m.insert(
                (*code).into(),
                json!({"description": description, "content": content}),
            );
        }
        m.insert("401".into(), json!({"description": "Unauthorized"}));
        Value::Object(m)
    }

    fn body(&mut self, def: &str, required: bool) -> Value {
        let mut b = json!({"content": {"*/*": {"schema": self.r(def)}}});
        if required {
            b["required"] = json!(true);
        }
        b
    }

    fn patch_body(&mut self) -> Value {
        let schema = self.r(PATCH);
        let mut content = Map::new();
        for t in PATCH_CONTENT_TYPES {
            if self.custom && t == "application/strategic-merge-patch+json" {
                continue;
            }
            content.insert(t.into(), json!({"schema": schema}));
        }
        json!({"content": content, "required": true})
    }

    #[allow(clippy::too_many_arguments)]
    fn op(
        &self,
        description: String,
        operation_id: String,
        action: &str,
        gvk: (&str, &str, &str),
        parameters: Vec<Value>,
        body: Option<Value>,
        responses: Value,
    ) -> Value {
        let mut m = Map::new();
        m.insert("tags".into(), json!([self.tag]));
        m.insert("description".into(), json!(description));
        m.insert("operationId".into(), json!(operation_id));
        if !parameters.is_empty() {
            m.insert("parameters".into(), Value::Array(parameters));
        }
        if let Some(b) = body {
            m.insert("requestBody".into(), b);
        }
        m.insert("responses".into(), responses);
        m.insert("x-kubernetes-action".into(), json!(action));
        m.insert(
            "x-kubernetes-group-version-kind".into(),
            json!({"group": gvk.0, "kind": gvk.2, "version": gvk.1}),
        );
        Value::Object(m)
    }
}

/// Build the paths of `group`/`version`.
pub fn gv_paths(c: &CatalogSnapshot, group: &str, version: &str) -> GvPaths {
    let gv = gv_camel(group, version);
    let mut ctx = Ctx {
        catalog: c,
        tag: format!("{}_{}", lower_first(&group_camel(group)), version),
        refs: BTreeSet::new(),
        custom: c
            .resources()
            .iter()
            .any(|r| r.group == group && r.version == version && r.custom.is_some()),
    };
    let mut paths = BTreeMap::new();
    let pre = prefix(group, version);
    let responses = ctx.responses(&["200"], RESOURCE_LIST, false);
    let root = json!({"get": {
        "tags": [ctx.tag],
        "description": "get available resources",
        "operationId": format!("get{gv}APIResources"),
        "responses": responses,
    }});
    paths.insert(format!("{pre}/"), root);
    for r in c.resources_in(group, version) {
        resource_paths(&mut ctx, &mut paths, &pre, &gv, r);
    }
    GvPaths {
        paths,
        refs: ctx.refs,
    }
}

fn list_definition(c: &CatalogSnapshot, r: &ResourceInfo) -> Option<String> {
    let (pkg, _) = r.definition.rsplit_once('.')?;
    let name = format!("{pkg}.{}", r.list_kind);
    c.definition(&name).map(|_| name)
}

fn subresource_definition(c: &CatalogSnapshot, s: &SubresourceInfo) -> Option<String> {
    if let Some(r) = c.lookup_kind(&s.group, &s.version, &s.kind) {
        return Some(r.definition.clone());
    }
    c.definitions()
        .iter()
        .find(|(_, d)| {
            d.gvk.len() == 1
                && d.gvk[0].group == s.group
                && d.gvk[0].version == s.version
                && d.gvk[0].kind == s.kind
        })
        .map(|(n, _)| n.clone())
}

fn path_params(r: &ResourceInfo, item: bool) -> Value {
    let mut p = Vec::new();
    if item {
        p.push(params::name(&r.kind));
    }
    if r.namespaced {
        p.push(params::namespace());
    }
    p.push(params::pretty());
    Value::Array(p)
}

fn write_params(apply: bool) -> Vec<Value> {
    vec![
        params::dry_run(),
        params::field_manager(apply),
        params::field_validation(),
    ]
}

fn resource_paths(
    ctx: &mut Ctx<'_>,
    paths: &mut BTreeMap<String, Value>,
    pre: &str,
    gv: &str,
    r: &ResourceInfo,
) {
    let c = ctx.catalog;
    let ns_word = if r.namespaced { "Namespaced" } else { "" };
    let base = format!("{gv}{ns_word}{}", r.kind);
    let kind = r.kind.as_str();
    let gvk = (r.group.as_str(), r.version.as_str(), kind);
    let def = r.definition.as_str();
    let list_def = list_definition(c, r);
    let coll = if r.namespaced {
        format!("{pre}/namespaces/{{namespace}}/{}", r.plural)
    } else {
        format!("{pre}/{}", r.plural)
    };
    let item = format!("{coll}/{{name}}");

    // Collection: list, create, deletecollection.
    let mut m = Map::new();
    if let (true, Some(ld)) = (r.has_verb("list"), &list_def) {
        let responses = ctx.responses(&["200"], ld, true);
        m.insert(
            "get".into(),
            ctx.op(
                format!("list or watch objects of kind {kind}"),
                format!("list{base}"),
                "list",
                gvk,
                params::list(),
                None,
                responses,
            ),
        );
    }
    if r.has_verb("create") {
        let body = ctx.body(def, true);
        let responses = ctx.responses(&["200", "201", "202"], def, false);
        m.insert(
            "post".into(),
            ctx.op(
                format!("create a {kind}"),
                format!("create{base}"),
                "post",
                gvk,
                write_params(false),
                Some(body),
                responses,
            ),
        );
    }
    if r.has_verb("deletecollection") {
        let mut p = params::delete();
        p.extend(
            params::list()
                .into_iter()
                .filter(|q| !matches!(q["name"].as_str(), Some("watch" | "allowWatchBookmarks"))),
        );
        let body = ctx.body(DELETE_OPTIONS, false);
        let responses = ctx.responses(&["200"], STATUS, false);
        m.insert(
            "delete".into(),
            ctx.op(
                format!("delete collection of {kind}"),
                format!("delete{gv}Collection{ns_word}{kind}"),
                "deletecollection",
                gvk,
                p,
                Some(body),
                responses,
            ),
        );
    }
    if !m.is_empty() {
        m.insert("parameters".into(), path_params(r, false));
        paths.insert(coll.clone(), Value::Object(m));
    }

    // Item: read, replace, patch, delete.
    let mut m = Map::new();
    item_ops(ctx, &mut m, &base, kind, gvk, def, &r.verbs, true);
    if !m.is_empty() {
        m.insert("parameters".into(), path_params(r, true));
        paths.insert(item.clone(), Value::Object(m));
    }

    // All namespaces.
    if let (true, true, Some(ld)) = (r.namespaced, r.has_verb("list"), &list_def) {
        let responses = ctx.responses(&["200"], ld, true);
        let op = ctx.op(
            format!("list or watch objects of kind {kind}"),
            format!("list{gv}{kind}ForAllNamespaces"),
            "list",
            gvk,
            params::list(),
            None,
            responses,
        );
        paths.insert(
            format!("{pre}/{}", r.plural),
            json!({"get": op, "parameters": [params::pretty()]}),
        );
    }

    // Subresources with a schema (status, scale, eviction, binding, token, ...).
    for s in &r.subresources {
        if s.name == "log" {
            continue; // plain text, not an object
        }
        let Some(sdef) = subresource_definition(c, s) else {
            continue; // connect-style options kinds (exec, attach, proxy, ...)
        };
        let sub = capitalize(&s.name);
        let sgvk = (s.group.as_str(), s.version.as_str(), s.kind.as_str());
        let mut m = Map::new();
        item_ops(
            ctx,
            &mut m,
            &format!("{base}{sub}"),
            &format!("{sub} of the specified {kind}"),
            sgvk,
            &sdef,
            &s.verbs,
            false,
        );
        if s.verbs.iter().any(|v| v == "create") {
            let body = ctx.body(&sdef, true);
            let responses = ctx.responses(&["200", "201", "202"], &sdef, false);
            m.insert(
                "post".into(),
                ctx.op(
                    format!("create {} of a {kind}", s.name),
                    format!("create{base}{sub}"),
                    "post",
                    sgvk,
                    write_params(false),
                    Some(body),
                    responses,
                ),
            );
        }
        if !m.is_empty() {
            m.insert("parameters".into(), path_params(r, true));
            paths.insert(format!("{item}/{}", s.name), Value::Object(m));
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn item_ops(
    ctx: &mut Ctx<'_>,
    m: &mut Map<String, Value>,
    base: &str,
    what: &str,
    gvk: (&str, &str, &str),
    def: &str,
    verbs: &[String],
    with_delete: bool,
) {
    let has = |v: &str| verbs.iter().any(|x| x == v);
    if has("get") {
        let responses = ctx.responses(&["200"], def, false);
        m.insert(
            "get".into(),
            ctx.op(
                format!("read the specified {what}"),
                format!("read{base}"),
                "get",
                gvk,
                vec![],
                None,
                responses,
            ),
        );
    }
    if has("update") {
        let body = ctx.body(def, true);
        let responses = ctx.responses(&["200", "201"], def, false);
        m.insert(
            "put".into(),
            ctx.op(
                format!("replace the specified {what}"),
                format!("replace{base}"),
                "put",
                gvk,
                write_params(false),
                Some(body),
                responses,
            ),
        );
    }
    if has("patch") {
        let body = ctx.patch_body();
        let responses = ctx.responses(&["200", "201"], def, false);
        let mut p = write_params(true);
        p.push(params::force());
        m.insert(
            "patch".into(),
            ctx.op(
                format!("partially update the specified {what}"),
                format!("patch{base}"),
                "patch",
                gvk,
                p,
                Some(body),
                responses,
            ),
        );
    }
    if with_delete && has("delete") {
        let body = ctx.body(DELETE_OPTIONS, false);
        let responses = ctx.responses(&["200", "202"], def, false);
        m.insert(
            "delete".into(),
            ctx.op(
                format!("delete a {what}"),
                format!("delete{base}"),
                "delete",
                gvk,
                params::delete(),
                Some(body),
                responses,
            ),
        );
    }
}
