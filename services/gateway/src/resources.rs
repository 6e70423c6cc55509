//! Verb handlers for resource URLs: get, list, create, update, patch,
//! delete, deletecollection, and the `status` and `scale` subresources.

use bytes::Bytes;
use http::{HeaderMap, Method, Response};
use keelson_api::{
    AdmissionRequest, CreateOptions, DeleteOptions, DeleteOutcome, FieldValidation, ObjectKey,
    Operation, PatchRequest, PatchType, UpdateOptions,
};
use keelson_apimachinery::meta::{meta_mut, meta_str};
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource};
use keelson_registry::ResourceInfo;
use serde_json::{json, Map, Value};

use crate::http_util::{
    add_warnings, encode, media_type, negotiate_input, read_body, Body, Input, Output, Query,
};
use crate::request_info::ResourceRequest;
use crate::Backends;
use keelson_selectors::{FieldSelector, LabelSelector};

/// A successful handler result: status code, object, warnings.
struct Reply {
    code: u16,
    object: Value,
    warnings: Vec<String>,
}

impl Reply {
    fn ok(object: Value) -> Self {
        Reply {
            code: 200,
            object,
            warnings: Vec::new(),
        }
    }
}

/// Everything a verb handler needs about the request.
struct Ctx<'a> {
    b: &'a Backends,
    ri: &'a ResourceRequest,
    info: &'static ResourceInfo,
    query: &'a Query,
    headers: &'a HeaderMap,
}

impl Ctx<'_> {
    fn key(&self, name: &str) -> ObjectKey {
        ObjectKey::new(self.info.gr(), &self.ri.namespace, name)
    }
    fn gr(&self) -> GroupResource {
        self.info.gr()
    }
    fn has_status(&self) -> bool {
        self.info.has_subresource("status")
    }
    fn header(&self, name: http::header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Resources whose DELETE answers with the deleted object instead of a
/// `Status` (kube-apiserver's `ReturnDeletedObject`).
fn returns_deleted_object(gr: &GroupResource) -> bool {
    gr.group.is_empty() && matches!(gr.resource.as_str(), "pods" | "services" | "namespaces")
}

/// Resources whose PUT creates a missing object (`AllowCreateOnUpdate`).
fn allows_create_on_update(gr: &GroupResource) -> bool {
    matches!(
        (gr.group.as_str(), gr.resource.as_str()),
        ("", "endpoints")
            | ("", "events")
            | ("", "limitranges")
            | ("", "serviceaccounts")
            | ("events.k8s.io", "events")
            | ("coordination.k8s.io", "leases")
            | ("rbac.authorization.k8s.io", _)
    )
}

/// Serve one resource request.
pub async fn handle(
    b: &Backends,
    method: &Method,
    ri: &ResourceRequest,
    query: &Query,
    headers: &HeaderMap,
    body: hyper::body::Incoming,
    out: Output,
) -> Response<Body> {
    if method == Method::GET && ri.name.is_empty() && ri.subresource.is_empty() {
        let verb = if query.flag("watch") { "watch" } else { "list" };
        let served = match collection_target(ri, verb) {
            Ok(info) if verb == "watch" => crate::watch::serve(b, info, ri, query).await,
            Ok(info) => crate::list::serve(b, info, ri, query, out).await,
            Err(e) => Err(e),
        };
        return served.unwrap_or_else(|e| crate::http_util::status_response(&e, out));
    }
    let result = dispatch(b, method, ri, query, headers, body).await;
    match result {
        Ok(r) => {
            let mut resp = encode(r.code, out, &r.object);
            add_warnings(&mut resp, &r.warnings);
            resp
        }
        Err((e, warnings)) => {
            let mut resp = crate::http_util::status_response(&e, out);
            add_warnings(&mut resp, &warnings);
            resp
        }
    }
}

/// The resource a collection list or watch addresses, if it allows `verb`.
fn collection_target(ri: &ResourceRequest, verb: &str) -> ApiResult<&'static ResourceInfo> {
    let info = keelson_registry::catalog()
        .lookup(&ri.group, &ri.version, &ri.resource)
        .ok_or_else(ApiError::path_not_found)?;
    if !info.namespaced && !ri.namespace.is_empty() {
        return Err(ApiError::path_not_found());
    }
    if !info.has_verb(verb) {
        return Err(if verb == "watch" {
            ApiError::method_not_supported(&info.gr(), "watch")
        } else {
            ApiError::method_not_allowed()
        });
    }
    Ok(info)
}

type HandlerResult = Result<Reply, (ApiError, Vec<String>)>;

fn plain(e: ApiError) -> (ApiError, Vec<String>) {
    (e, Vec::new())
}

async fn dispatch(
    b: &Backends,
    method: &Method,
    ri: &ResourceRequest,
    query: &Query,
    headers: &HeaderMap,
    body: hyper::body::Incoming,
) -> HandlerResult {
    let catalog = keelson_registry::catalog();
    let info = catalog
        .lookup(&ri.group, &ri.version, &ri.resource)
        .ok_or_else(|| plain(ApiError::path_not_found()))?;
    if !info.namespaced && !ri.namespace.is_empty() {
        return Err(plain(ApiError::path_not_found()));
    }
    let cx = Ctx {
        b,
        ri,
        info,
        query,
        headers,
    };
    let verb = verb_of(method, ri, query);
    let Some(verb) = verb else {
        return Err(plain(ApiError::method_not_allowed()));
    };
    if !ri.subresource.is_empty() {
        if !info.has_subresource(&ri.subresource) {
            return Err(plain(ApiError::path_not_found()));
        }
        if ri.subresource != "status" && ri.subresource != "scale" {
            return Err(plain(ApiError::new(
                405,
                "MethodNotAllowed",
                format!(
                    "the {:?} subresource of {} is not implemented by Keelson yet",
                    ri.subresource,
                    info.gr()
                ),
            )));
        }
        if !matches!(verb, "get" | "update" | "patch") {
            return Err(plain(ApiError::method_not_allowed()));
        }
    } else if !info.has_verb(verb) {
        return Err(plain(ApiError::method_not_allowed()));
    }
    match (verb, ri.subresource.as_str()) {
        ("get", "scale") => get_scale(&cx).await.map_err(plain),
        ("update", "scale") => {
            let body = read_body(body).await.map_err(plain)?;
            put_scale(&cx, &body).await.map_err(plain)
        }
        ("patch", "scale") => {
            let body = read_body(body).await.map_err(plain)?;
            patch_scale(&cx, &body).await.map_err(plain)
        }
        ("get", _) => get(&cx).await.map_err(plain),
        ("create", _) => {
            let body = read_body(body).await.map_err(plain)?;
            create(&cx, &body).await
        }
        ("update", _) => {
            let body = read_body(body).await.map_err(plain)?;
            update(&cx, &body).await
        }
        ("patch", _) => {
            let body = read_body(body).await.map_err(plain)?;
            patch(&cx, &body).await
        }
        ("delete", _) => {
            let body = read_body(body).await.map_err(plain)?;
            delete(&cx, &body).await.map_err(plain)
        }
        ("deletecollection", _) => {
            let body = read_body(body).await.map_err(plain)?;
            delete_collection(&cx, &body).await.map_err(plain)
        }
        _ => Err(plain(ApiError::method_not_allowed())),
    }
}

fn verb_of(method: &Method, ri: &ResourceRequest, query: &Query) -> Option<&'static str> {
    let collection = ri.name.is_empty();
    Some(match (method.as_str(), collection) {
        ("GET", true) if query.flag("watch") => "watch",
        ("GET", true) => "list",
        ("GET", false) => "get",
        ("POST", true) => "create",
        ("PUT", false) => "update",
        ("PATCH", false) => "patch",
        ("DELETE", false) => "delete",
        ("DELETE", true) => "deletecollection",
        _ => return None,
    })
}

// ---------- query options ----------

fn options_invalid(kind: &str, errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid("meta.k8s.io", kind, "", &errs)
}

fn dry_run(q: &Query, body_values: &[String], options_kind: &str) -> ApiResult<bool> {
    let mut values: Vec<String> = q.all("dryRun").iter().map(|s| s.to_string()).collect();
    values.extend(body_values.iter().cloned());
    if values.is_empty() {
        return Ok(false);
    }
    if values.iter().all(|v| v == "All") {
        return Ok(true);
    }
    Err(options_invalid(
        options_kind,
        vec![FieldError::not_supported(
            "dryRun",
            Value::from(values),
            &["All"],
        )],
    ))
}

fn field_validation(q: &Query, options_kind: &str) -> ApiResult<FieldValidation> {
    match q.get("fieldValidation").unwrap_or("") {
        "" | "Warn" => Ok(FieldValidation::Warn),
        "Strict" => Ok(FieldValidation::Strict),
        "Ignore" => Ok(FieldValidation::Ignore),
        other => Err(options_invalid(
            options_kind,
            vec![FieldError::not_supported(
                "fieldValidation",
                other,
                &["", "Ignore", "Strict", "Warn"],
            )],
        )),
    }
}

// ---------- body decoding ----------

fn decode_body(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<(Value, Option<Vec<u8>>)> {
    let input = negotiate_input(cx.header(http::header::CONTENT_TYPE))?;
    let value: Value = match input {
        Input::Json => serde_json::from_slice(body).map_err(|e| decode_error(cx, body, &e))?,
        Input::Yaml => serde_yaml::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): {} ({})",
                cx.info.kind,
                e,
                summary(body)
            ))
        })?,
        Input::Protobuf => crate::protobuf::decode(body)?,
    };
    let raw = (input == Input::Json).then(|| body.to_vec());
    Ok((value, raw))
}

/// kube's 30-byte body summary in decode errors.
fn summary(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(body);
    let mut out: String = s.chars().take(30).collect();
    if s.chars().count() > 30 {
        out.push_str(" ...");
    }
    out
}

fn decode_error(cx: &Ctx<'_>, body: &[u8], e: &serde_json::Error) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {} ({})",
        cx.info.kind,
        e,
        summary(body)
    ))
}

/// Check and fill `apiVersion`, `kind` and `metadata.namespace` of a body.
fn prepare_object(cx: &Ctx<'_>, mut obj: Value) -> ApiResult<Value> {
    let kind = &cx.info.kind;
    let api_version = cx.info.api_version();
    let Some(map) = obj.as_object_mut() else {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): body is not a JSON object",
            kind
        )));
    };
    match map.get("apiVersion") {
        None | Some(Value::Null) => {}
        Some(Value::String(v)) if v.is_empty() || *v == api_version => {}
        Some(Value::String(v)) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({}) does not match the expected API version ({})",
                v, api_version
            )))
        }
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal non-string into Go struct field TypeMeta.apiVersion of type string",
                kind, cx.info.version, kind
            )))
        }
    }
    match map.get("kind") {
        None | Some(Value::Null) => {}
        Some(Value::String(k)) if k.is_empty() || k == kind => {}
        Some(Value::String(k)) => {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): object kind {:?} does not match",
                kind, k
            )))
        }
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal non-string into Go struct field TypeMeta.kind of type string",
                kind, cx.info.version, kind
            )))
        }
    }
    map.insert("apiVersion".into(), Value::String(api_version));
    map.insert("kind".into(), Value::String(kind.clone()));
    match map.get("metadata") {
        None | Some(Value::Null) => {
            map.insert("metadata".into(), Value::Object(Map::new()));
        }
        Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal non-object into Go struct field {}.metadata of type v1.ObjectMeta",
                kind, cx.info.version, kind, kind
            )))
        }
    }
    let ns_in_body = meta_str(&obj, "namespace").to_string();
    if cx.info.namespaced {
        if ns_in_body.is_empty() {
            keelson_apimachinery::meta::set_meta_str(&mut obj, "namespace", &cx.ri.namespace);
        } else if ns_in_body != cx.ri.namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    } else if let Some(m) = meta_mut(&mut obj) {
        m.remove("namespace");
    }
    Ok(obj)
}

fn strip_status_for_create(cx: &Ctx<'_>, obj: &mut Value) {
    if cx.has_status() {
        if let Some(m) = obj.as_object_mut() {
            let status = if cx.info.gr() == GroupResource::new("", "pods") {
                json!({"phase": "Pending"})
            } else {
                json!({})
            };
            m.insert("status".into(), status);
        }
    }
}

fn set_status_from(target: &mut Value, source: &Value) {
    if let Some(m) = target.as_object_mut() {
        match source.get("status") {
            Some(s) => {
                m.insert("status".into(), s.clone());
            }
            None => {
                m.remove("status");
            }
        }
    }
}

fn check_name(obj: &Value, url_name: &str) -> ApiResult<()> {
    let name = meta_str(obj, "name");
    if name != url_name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            name, url_name
        )));
    }
    Ok(())
}

// ---------- verbs ----------

async fn get(cx: &Ctx<'_>) -> ApiResult<Reply> {
    // resourceVersion unset: most recent; "0": any; N: not older than N.
    if let Some(rv) = crate::list::parse_resource_version(cx.query)? {
        crate::list::require_revision(cx.b, rv).await?;
    }
    let obj = cx.b.store.get(&cx.key(&cx.ri.name)).await?;
    Ok(Reply::ok(obj))
}

/// The parsed selectors of a list request, and whether any is set.
fn selectors(cx: &Ctx<'_>) -> ApiResult<(LabelSelector, FieldSelector, bool)> {
    let l = cx.query.get("labelSelector").unwrap_or("");
    let f = cx.query.get("fieldSelector").unwrap_or("");
    Ok((
        LabelSelector::parse(l)?,
        FieldSelector::parse(f, &cx.info.group, &cx.info.plural)?,
        !l.trim().is_empty() || !f.trim().is_empty(),
    ))
}

fn namespace_filter<'a>(cx: &'a Ctx<'_>) -> Option<&'a str> {
    (!cx.ri.namespace.is_empty()).then_some(cx.ri.namespace.as_str())
}

/// Every current object of the collection that matches the selectors.
async fn list_items(cx: &Ctx<'_>) -> ApiResult<Vec<Value>> {
    let (labels, fields, _) = selectors(cx)?;
    let res = cx.b.store.list(&cx.gr(), namespace_filter(cx)).await?;
    Ok(res
        .items
        .into_iter()
        .filter(|o| labels.matches(o) && fields.matches(o))
        .collect())
}

fn list_object(cx: &Ctx<'_>, items: Vec<Value>, metadata: Map<String, Value>) -> Value {
    let items: Vec<Value> = items
        .into_iter()
        .map(|mut o| {
            // Typed lists from kube-apiserver carry no per-item type meta.
            if let Some(m) = o.as_object_mut() {
                m.remove("apiVersion");
                m.remove("kind");
            }
            o
        })
        .collect();
    json!({
        "kind": cx.info.list_kind,
        "apiVersion": cx.info.api_version(),
        "metadata": metadata,
        "items": items,
    })
}

/// The write options every admission call carries.
#[derive(Clone, Copy)]
struct WriteOpts {
    fv: FieldValidation,
    dry: bool,
}

async fn admit(
    cx: &Ctx<'_>,
    operation: Operation,
    object: Option<Value>,
    old_object: Option<Value>,
    raw_body: Option<Vec<u8>>,
    is_patch: bool,
    opts: WriteOpts,
) -> ApiResult<(Option<Value>, Vec<String>)> {
    let name = object
        .as_ref()
        .or(old_object.as_ref())
        .map(|o| meta_str(o, "name").to_string())
        .unwrap_or_default();
    let resp =
        cx.b.admission
            .admit(AdmissionRequest {
                operation,
                gr: cx.gr(),
                api_version: cx.info.api_version(),
                kind: cx.info.kind.clone(),
                namespace: cx.ri.namespace.clone(),
                name,
                subresource: cx.ri.subresource.clone(),
                object,
                old_object,
                raw_body,
                is_patch,
                field_validation: opts.fv,
                dry_run: opts.dry,
            })
            .await?;
    Ok((resp.object, resp.warnings))
}

/// Create through admission and the store; shared by POST and PUT-creates.
async fn create_object(
    cx: &Ctx<'_>,
    mut obj: Value,
    raw: Option<Vec<u8>>,
    fv: FieldValidation,
    dry: bool,
) -> HandlerResult {
    strip_status_for_create(cx, &mut obj);
    if let Some(m) = meta_mut(&mut obj) {
        // Server-set fields are never taken from a create body.
        m.remove("resourceVersion");
        m.remove("uid");
        m.remove("creationTimestamp");
        m.remove("deletionTimestamp");
        m.remove("deletionGracePeriodSeconds");
    }
    let (admitted, warnings) = admit(
        cx,
        Operation::Create,
        Some(obj),
        None,
        raw,
        false,
        WriteOpts { fv, dry },
    )
    .await
    .map_err(plain)?;
    let obj = admitted.ok_or_else(|| plain(ApiError::internal("admission returned no object")))?;
    let name = meta_str(&obj, "name").to_string();
    let stored =
        cx.b.store
            .create(
                &cx.key(&name),
                obj,
                CreateOptions {
                    dry_run: dry,
                    track_generation: cx.info.tracks_generation(),
                },
            )
            .await
            .map_err(|e| (e, warnings.clone()))?;
    Ok(Reply {
        code: 201,
        object: stored,
        warnings,
    })
}

async fn create(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let dry = dry_run(cx.query, &[], "CreateOptions").map_err(plain)?;
    let fv = field_validation(cx.query, "CreateOptions").map_err(plain)?;
    let (value, raw) = decode_body(cx, body).map_err(plain)?;
    let obj = prepare_object(cx, value).map_err(plain)?;
    create_object(cx, obj, raw, fv, dry).await
}

async fn update(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let dry = dry_run(cx.query, &[], "UpdateOptions").map_err(plain)?;
    let fv = field_validation(cx.query, "UpdateOptions").map_err(plain)?;
    let (value, raw) = decode_body(cx, body).map_err(plain)?;
    let obj = prepare_object(cx, value).map_err(plain)?;
    check_name(&obj, &cx.ri.name).map_err(plain)?;
    let key = cx.key(&cx.ri.name);
    let old = match cx.b.store.get(&key).await {
        Ok(o) => o,
        Err(e)
            if e.code == 404
                && cx.ri.subresource.is_empty()
                && allows_create_on_update(&cx.gr()) =>
        {
            return create_object(cx, obj, raw, fv, dry).await;
        }
        Err(e) => return Err(plain(e)),
    };
    let new = merge_subresource(cx, obj, &old);
    write_update(cx, new, old, raw, false, fv, dry).await
}

/// Main-resource writes keep the stored status; `/status` writes change only
/// the status (and carry the request's resourceVersion as precondition).
fn merge_subresource(cx: &Ctx<'_>, new: Value, old: &Value) -> Value {
    if cx.ri.subresource == "status" {
        let mut merged = old.clone();
        set_status_from(&mut merged, &new);
        let rv = meta_str(&new, "resourceVersion").to_string();
        keelson_apimachinery::meta::set_meta_str(&mut merged, "resourceVersion", &rv);
        merged
    } else {
        let mut new = new;
        if cx.has_status() {
            set_status_from(&mut new, old);
        }
        new
    }
}

async fn write_update(
    cx: &Ctx<'_>,
    new: Value,
    old: Value,
    raw: Option<Vec<u8>>,
    is_patch: bool,
    fv: FieldValidation,
    dry: bool,
) -> HandlerResult {
    let (admitted, warnings) = admit(
        cx,
        Operation::Update,
        Some(new),
        Some(old),
        raw,
        is_patch,
        WriteOpts { fv, dry },
    )
    .await
    .map_err(plain)?;
    let obj = admitted.ok_or_else(|| plain(ApiError::internal("admission returned no object")))?;
    let stored =
        cx.b.store
            .update(
                &cx.key(&cx.ri.name),
                obj,
                UpdateOptions {
                    dry_run: dry,
                    track_generation: cx.info.tracks_generation(),
                    create_if_missing: false,
                },
            )
            .await
            .map_err(|e| (e, warnings.clone()))?;
    Ok(Reply {
        code: 200,
        object: stored,
        warnings,
    })
}

fn patch_type(cx: &Ctx<'_>) -> ApiResult<PatchType> {
    PatchType::from_media_type(&media_type(cx.header(http::header::CONTENT_TYPE))).ok_or_else(
        || {
            let mut e = ApiError::unsupported_media_type("415: Unsupported Media Type");
            e.details = Some(Default::default());
            e
        },
    )
}

/// How often a patch is retried when a concurrent write moved the object
/// (kube-apiserver retries patches that carry no resourceVersion).
const PATCH_RETRIES: usize = 5;

async fn patch(cx: &Ctx<'_>, body: &Bytes) -> HandlerResult {
    let dry = dry_run(cx.query, &[], "PatchOptions").map_err(plain)?;
    let fv = field_validation(cx.query, "PatchOptions").map_err(plain)?;
    let pt = patch_type(cx).map_err(plain)?;
    let key = cx.key(&cx.ri.name);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let old = cx.b.store.get(&key).await.map_err(plain)?;
        let patched =
            cx.b.merge
                .patch(PatchRequest {
                    patch_type: pt,
                    gr: cx.gr(),
                    kind: cx.info.kind.clone(),
                    original: old.clone(),
                    patch: body.to_vec(),
                })
                .await
                .map_err(plain)?;
        let patched = prepare_object(cx, patched).map_err(plain)?;
        check_name(&patched, &cx.ri.name).map_err(plain)?;
        let client_rv = meta_str(&patched, "resourceVersion") != meta_str(&old, "resourceVersion");
        let new = merge_subresource(cx, patched, &old);
        match write_update(cx, new, old, None, true, fv, dry).await {
            Err((e, _))
                if e.code == 409
                    && e.reason == "Conflict"
                    && !client_rv
                    && attempt < PATCH_RETRIES =>
            {
                continue
            }
            other => return other,
        }
    }
}

fn delete_options(body: &Bytes) -> ApiResult<Value> {
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(json!({}));
    }
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type DeleteOptions): couldn't get version/kind; json parse error: {} ({})",
            e,
            summary(body)
        ))
    })?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the object provided is unrecognized (must be of type DeleteOptions): body is not a JSON object",
        ));
    }
    Ok(v)
}

async fn delete(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let opts = delete_options(body)?;
    let body_dry: Vec<String> = opts
        .get("dryRun")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let dry = dry_run(cx.query, &body_dry, "DeleteOptions")?;
    let grace = opts
        .get("gracePeriodSeconds")
        .and_then(|v| v.as_i64())
        .or_else(|| {
            cx.query
                .get("gracePeriodSeconds")
                .and_then(|s| s.parse().ok())
        });
    delete_one(cx, &cx.ri.name, &opts, grace, dry).await
}

async fn delete_one(
    cx: &Ctx<'_>,
    name: &str,
    opts: &Value,
    grace: Option<i64>,
    dry: bool,
) -> ApiResult<Reply> {
    let key = cx.key(name);
    let old = cx.b.store.get(&key).await?;
    admit(
        cx,
        Operation::Delete,
        None,
        Some(old.clone()),
        None,
        false,
        WriteOpts {
            fv: FieldValidation::Ignore,
            dry,
        },
    )
    .await?;
    let gr = cx.gr();
    let grace_period = if gr == GroupResource::new("", "pods") {
        let bound = old
            .pointer("/spec/nodeName")
            .and_then(|v| v.as_str())
            .is_some_and(|s| !s.is_empty());
        if !bound {
            // Unscheduled pods are removed at once, as in kube-apiserver.
            None
        } else {
            let g = grace.unwrap_or_else(|| {
                old.pointer("/spec/terminationGracePeriodSeconds")
                    .and_then(|v| v.as_i64())
                    .unwrap_or(30)
            });
            (g > 0).then_some(g)
        }
    } else {
        None
    };
    let precondition = |k: &str| {
        opts.pointer(&format!("/preconditions/{}", k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let outcome =
        cx.b.store
            .delete(
                &key,
                DeleteOptions {
                    dry_run: dry,
                    precondition_uid: precondition("uid"),
                    precondition_resource_version: precondition("resourceVersion"),
                    grace_period_seconds: grace_period,
                },
            )
            .await?;
    Ok(match outcome {
        DeleteOutcome::Marked(obj) => Reply::ok(obj),
        DeleteOutcome::Deleted(obj) if returns_deleted_object(&gr) => Reply::ok(obj),
        DeleteOutcome::Deleted(obj) => Reply::ok(json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {
                "name": name,
                "group": gr.group,
                "kind": gr.resource,
                "uid": meta_str(&obj, "uid"),
            }
        })),
    })
}

async fn delete_collection(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let opts = delete_options(body)?;
    let dry = dry_run(cx.query, &[], "DeleteOptions")?;
    let grace = opts.get("gracePeriodSeconds").and_then(|v| v.as_i64());
    let items = list_items(cx).await?;
    let mut deleted = Vec::new();
    for item in items {
        let name = meta_str(&item, "name").to_string();
        let ns_cx = Ctx {
            b: cx.b,
            ri: &ResourceRequest {
                namespace: meta_str(&item, "namespace").to_string(),
                ..cx.ri.clone()
            },
            info: cx.info,
            query: cx.query,
            headers: cx.headers,
        };
        match delete_one(&ns_cx, &name, &opts, grace, dry).await {
            Ok(_) => deleted.push(item),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Reply::ok(list_object(cx, deleted, Map::new())))
}

// ---------- scale ----------

/// The label selector string of a workload, as the Scale status shows it.
fn selector_string(obj: &Value) -> String {
    let sel = obj.pointer("/spec/selector");
    let mut parts = Vec::new();
    let labels = sel
        .and_then(|s| s.get("matchLabels"))
        .or_else(|| sel.filter(|s| s.get("matchExpressions").is_none()));
    if let Some(Value::Object(m)) = labels {
        let mut kv: Vec<_> = m.iter().collect();
        kv.sort_by(|a, b| a.0.cmp(b.0));
        for (k, v) in kv {
            parts.push(format!("{}={}", k, v.as_str().unwrap_or("")));
        }
    }
    if let Some(Value::Array(exprs)) = sel.and_then(|s| s.get("matchExpressions")) {
        for e in exprs {
            let key = e.get("key").and_then(|v| v.as_str()).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(|v| v.as_str()).unwrap_or("") {
                "In" => parts.push(format!("{} in ({})", key, values.join(","))),
                "NotIn" => parts.push(format!("{} notin ({})", key, values.join(","))),
                "Exists" => parts.push(key.to_string()),
                "DoesNotExist" => parts.push(format!("!{}", key)),
                _ => {}
            }
        }
    }
    parts.join(",")
}

fn scale_of(obj: &Value) -> Value {
    let m = |f: &str| meta_str(obj, f).to_string();
    let mut metadata = Map::new();
    for f in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        let v = m(f);
        if !v.is_empty() {
            metadata.insert(f.into(), Value::String(v));
        }
    }
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let status_replicas = obj
        .pointer("/status/replicas")
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let mut status = json!({"replicas": status_replicas});
    let sel = selector_string(obj);
    if !sel.is_empty() {
        status["selector"] = Value::String(sel);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": replicas},
        "status": status,
    })
}

async fn get_scale(cx: &Ctx<'_>) -> ApiResult<Reply> {
    let obj = cx.b.store.get(&cx.key(&cx.ri.name)).await?;
    Ok(Reply::ok(scale_of(&obj)))
}

/// Type checks of an `autoscaling/v1 Scale` body, as Go's decoder makes them.
fn check_scale(scale: &Value) -> ApiResult<()> {
    let err = |v: &Value, field: &str, go_type: &str| {
        ApiError::bad_request(format!(
            "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field {} of type {}",
            keelson_apimachinery::field::json_kind(v),
            field,
            go_type
        ))
    };
    if !scale.is_object() {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type Scale): json: cannot unmarshal {} into Go value of type v1.Scale",
            keelson_apimachinery::field::json_kind(scale)
        )));
    }
    if let Some(k) = scale.get("kind").filter(|k| !k.is_null()) {
        if k.as_str().is_some_and(|k| k != "Scale" && !k.is_empty()) {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type Scale): object kind {} does not match",
                k
            )));
        }
    }
    match scale.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for f in ["name", "namespace", "resourceVersion", "uid"] {
                if let Some(v) = m.get(f).filter(|v| !v.is_null() && !v.is_string()) {
                    return Err(err(v, &format!("ObjectMeta.metadata.{}", f), "string"));
                }
            }
            for f in ["labels", "annotations"] {
                match m.get(f) {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(kv)) => {
                        if let Some(v) = kv.values().find(|v| !v.is_string() && !v.is_null()) {
                            return Err(err(v, &format!("ObjectMeta.metadata.{}", f), "string"));
                        }
                    }
                    Some(v) => {
                        return Err(err(
                            v,
                            &format!("ObjectMeta.metadata.{}", f),
                            "map[string]string",
                        ))
                    }
                }
            }
        }
        Some(v) => return Err(err(v, "Scale.metadata", "v1.ObjectMeta")),
    }
    match scale.get("spec") {
        None | Some(Value::Null) | Some(Value::Object(_)) => Ok(()),
        Some(v) => Err(err(v, "Scale.spec", "v1.ScaleSpec")),
    }
}

/// Apply a desired Scale to the workload and store it.
async fn apply_scale(cx: &Ctx<'_>, old: Value, scale: &Value) -> ApiResult<Reply> {
    check_scale(scale)?;
    let dry = dry_run(cx.query, &[], "UpdateOptions")?;
    let name = &cx.ri.name;
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_i64().filter(|n| i32::try_from(*n).is_ok()).ok_or_else(|| {
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                v
            ))
        })?,
    };
    if replicas < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            name,
            &[FieldError::invalid(
                "spec.replicas",
                replicas,
                "must be greater than or equal to 0",
            )],
        ));
    }
    let mut new = old;
    if let Some(spec) = new.get_mut("spec").and_then(|s| s.as_object_mut()) {
        spec.insert("replicas".into(), Value::from(replicas));
    } else if let Some(m) = new.as_object_mut() {
        m.insert("spec".into(), json!({"replicas": replicas}));
    }
    let rv = meta_str(scale, "resourceVersion").to_string();
    if !rv.is_empty() {
        keelson_apimachinery::meta::set_meta_str(&mut new, "resourceVersion", &rv);
    }
    let stored =
        cx.b.store
            .update(
                &cx.key(name),
                new,
                UpdateOptions {
                    dry_run: dry,
                    track_generation: cx.info.tracks_generation(),
                    create_if_missing: false,
                },
            )
            .await?;
    Ok(Reply::ok(scale_of(&stored)))
}

async fn put_scale(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let scale: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type Scale): couldn't get version/kind; json parse error: {} ({})",
            e,
            summary(body)
        ))
    })?;
    let name = meta_str(&scale, "name");
    if name != cx.ri.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            name, cx.ri.name
        )));
    }
    let old = cx.b.store.get(&cx.key(&cx.ri.name)).await?;
    apply_scale(cx, old, &scale).await
}

async fn patch_scale(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let pt = patch_type(cx)?;
    let old = cx.b.store.get(&cx.key(&cx.ri.name)).await?;
    let patched =
        cx.b.merge
            .patch(PatchRequest {
                patch_type: pt,
                gr: GroupResource::new("autoscaling", "scale"),
                kind: "Scale".into(),
                original: scale_of(&old),
                patch: body.to_vec(),
            })
            .await?;
    apply_scale(cx, old, &patched).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_view() {
        let d = json!({"metadata": {"name": "d", "namespace": "default", "resourceVersion": "7"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}}, "status": {"replicas": 1}});
        let s = scale_of(&d);
        assert_eq!(s["apiVersion"], "autoscaling/v1");
        assert_eq!(s["spec"]["replicas"], 2);
        assert_eq!(s["status"]["selector"], "app=x");
        assert_eq!(s["metadata"]["resourceVersion"], "7");
    }
}
