//! The review APIs and TokenRequest, answered from the request's user and
//! the authorizer, never stored:
//!
//! - `authorization.k8s.io/v1`: SelfSubjectAccessReview (`kubectl auth
//!   can-i`), SelfSubjectRulesReview (`can-i --list`),
//!   SubjectAccessReview, LocalSubjectAccessReview;
//! - `authentication.k8s.io/v1`: SelfSubjectReview (`kubectl auth
//!   whoami`), TokenReview;
//! - `serviceaccounts/token` (TokenRequest, `kubectl create token`);
//! - the ServiceAccount issuer's discovery documents
//!   (`/.well-known/openid-configuration`, `/openid/v1/jwks`);
//! - privilege-escalation checks of RBAC writes ([`check_escalation`]).

use bytes::Bytes;
use http::Response;
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, FieldError, GroupResource, ObjectKey};
use keelson_auth::rbac::escalation::{escalation_message, uncovered};
use keelson_auth::rbac::{PolicyRule, GROUP as RBAC_GROUP};
use keelson_auth::serviceaccount::{DEFAULT_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS};
use keelson_auth::{Attributes, Mode, UserInfo};
use serde_json::{json, Value};

use super::object::{json_body, prepare_object};
use super::{plain, Ctx, HandlerResult, Reply};
use crate::filters::request_info::Verb;
use crate::filters::{current_state, current_user, State};
use crate::http_util::{bytes_response, Body};

const AUTHZ: &str = "authorization.k8s.io";
const AUTHN: &str = "authentication.k8s.io";
const CERTS: &str = "certificates.k8s.io";

/// The issuer discovery documents, for `path`; `None` for other paths.
pub(crate) fn well_known(state: &State, path: &str) -> Option<Response<Body>> {
    let sa = &state.service_accounts;
    let (doc, content_type) = match path {
        "/.well-known/openid-configuration" => (
            sa.openid_configuration(&format!(
                "{}/openid/v1/jwks",
                sa.issuer().trim_end_matches('/')
            )),
            "application/json",
        ),
        "/openid/v1/jwks" => (sa.jwks(), "application/jwk-set+json"),
        _ => return None,
    };
    let mut r = bytes_response(200, content_type, doc.to_string());
    r.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("public, max-age=3600"),
    );
    Some(r)
}

/// Whether the request is one [`intercept`] may answer.
pub(crate) fn handles(ri: &crate::filters::request_info::ResourceRequest) -> bool {
    matches!(
        (
            ri.group.as_str(),
            ri.resource.as_str(),
            ri.subresource.as_str()
        ),
        (AUTHZ | AUTHN, _, "")
            | ("", "serviceaccounts", "token")
            | (CERTS, "certificatesigningrequests", "approval")
    )
}

/// Serve a review or TokenRequest; `None` for any other request.
pub(crate) async fn intercept(cx: &Ctx<'_>, verb: Verb, body: &Bytes) -> Option<HandlerResult> {
    let ri = cx.ri;
    let which = match (
        ri.group.as_str(),
        ri.resource.as_str(),
        ri.subresource.as_str(),
    ) {
        (AUTHZ | AUTHN, _, "") if verb == Verb::Create => ri.resource.as_str(),
        ("", "serviceaccounts", "token") => "token",
        (CERTS, "certificatesigningrequests", "approval") if verb == Verb::Get => {
            // kube's approval subresource reads back the whole request.
            let key = cx.key(&cx.ri.name);
            return Some(cx.b.store.get(&key).await.map(Reply::ok).map_err(plain));
        }
        (CERTS, "certificatesigningrequests", "approval")
            if matches!(verb, Verb::Update | Verb::Patch) =>
        {
            let served = async {
                let body = if verb == Verb::Patch {
                    patched_approval(cx, body).await?
                } else {
                    body.clone()
                };
                approval(cx, &body).await
            };
            return Some(served.await.map_err(plain));
        }
        _ => return None,
    };
    if which == "token" && verb != Verb::Create {
        return Some(Err(plain(ApiError::method_not_allowed())));
    }
    let state = current_state()?;
    let user = current_user();
    let served = match which {
        "token" => token_request(cx, &state, body).await,
        other => {
            let review = match parse(cx, body) {
                Ok(v) => v,
                Err(e) => return Some(Err(plain(e))),
            };
            match other {
                "selfsubjectaccessreviews" => access_review(cx, &state, review, &user, false),
                "localsubjectaccessreviews" => {
                    let u = review_user(&review);
                    u.and_then(|u| access_review(cx, &state, review, &u, true))
                }
                "subjectaccessreviews" => {
                    let u = review_user(&review);
                    u.and_then(|u| access_review(cx, &state, review, &u, false))
                }
                "selfsubjectrulesreviews" => rules_review(&state, review, &user),
                "selfsubjectreviews" => {
                    Ok(with_status(review, json!({"userInfo": user.to_json()})))
                }
                "tokenreviews" => token_review(&state, review).await,
                _ => return None,
            }
        }
    };
    Some(served.map(created).map_err(plain))
}

fn created(object: Value) -> Reply {
    Reply {
        code: 201,
        object,
        warnings: Vec::new(),
    }
}

/// The body as the resource's kind (JSON, YAML or Protobuf).
fn parse(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Value> {
    let (value, _) = super::object::decode_body(cx, body)?;
    prepare_object(cx, value)
}

fn with_status(mut review: Value, status: Value) -> Value {
    if let Some(m) = review.as_object_mut() {
        m.insert("status".into(), status);
        if !m.contains_key("metadata") {
            m.insert("metadata".into(), json!({}));
        }
    }
    review
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// The user a SubjectAccessReview asks about (`spec.user`, `groups`,
/// `uid`, `extra`); one of user or groups is required.
fn review_user(review: &Value) -> ApiResult<UserInfo> {
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let mut u = UserInfo::new(str_of(&spec, "user"), strings(spec.get("groups")));
    u.uid = str_of(&spec, "uid").to_string();
    if let Some(extra) = spec.get("extra").and_then(Value::as_object) {
        for (k, v) in extra {
            u.extra.insert(k.clone(), strings(Some(v)));
        }
    }
    if u.name.is_empty() && u.groups.is_empty() {
        return Err(ApiError::invalid(
            AUTHZ,
            str_of(review, "kind"),
            meta_str(review, "name"),
            &[FieldError::invalid(
                "spec.user,spec.groups",
                Value::String(String::new()),
                "at least one of user or group must be specified",
            )],
        ));
    }
    Ok(u)
}

/// A (Self|Local)SubjectAccessReview: ask the authorizer.
fn access_review(
    cx: &Ctx<'_>,
    state: &State,
    review: Value,
    user: &UserInfo,
    local: bool,
) -> ApiResult<Value> {
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let res = spec.get("resourceAttributes").filter(|v| v.is_object());
    let non = spec.get("nonResourceAttributes").filter(|v| v.is_object());
    let kind = str_of(&review, "kind").to_string();
    let invalid = |field: &str, value: Value, detail: &str| {
        ApiError::invalid(
            AUTHZ,
            &kind,
            meta_str(&review, "name"),
            &[FieldError::invalid(field, value, detail)],
        )
    };
    let attrs = match (res, non) {
        (Some(r), None) => {
            let mut namespace = str_of(r, "namespace").to_string();
            if local {
                if !namespace.is_empty() && namespace != cx.ri.namespace {
                    return Err(invalid(
                        "spec.resourceAttributes.namespace",
                        Value::String(namespace),
                        "must match metadata.namespace",
                    ));
                }
                namespace = cx.ri.namespace.clone();
            }
            Attributes {
                user: user.clone(),
                verb: str_of(r, "verb").to_string(),
                resource_request: true,
                namespace,
                api_group: str_of(r, "group").to_string(),
                api_version: str_of(r, "version").to_string(),
                resource: str_of(r, "resource").to_string(),
                subresource: str_of(r, "subresource").to_string(),
                name: str_of(r, "name").to_string(),
                ..Default::default()
            }
        }
        (None, Some(n)) if !local => Attributes {
            user: user.clone(),
            verb: str_of(n, "verb").to_string(),
            path: str_of(n, "path").to_string(),
            ..Default::default()
        },
        (None, Some(_)) => {
            return Err(invalid(
                "spec.nonResourceAttributes",
                Value::String("null".into()),
                "disallowed on this kind of request",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(invalid(
                "spec.nonResourceAttributes",
                Value::String("null".into()),
                "cannot be specified in combination with resourceAttributes",
            ))
        }
        (None, None) => {
            return Err(invalid(
                "spec.resourceAttributes",
                Value::String("null".into()),
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            ))
        }
    };
    let d = state.authz.authorize(&attrs);
    let mut status = json!({"allowed": d.allowed});
    if !d.reason.is_empty() {
        status["reason"] = json!(d.reason);
    }
    Ok(with_status(review, status))
}

/// SelfSubjectRulesReview: the rules that apply in `spec.namespace`.
fn rules_review(state: &State, review: Value, user: &UserInfo) -> ApiResult<Value> {
    let ns = review
        .get("spec")
        .map(|s| str_of(s, "namespace").to_string())
        .unwrap_or_default();
    let (rules, errors) = state.authz.rules_for(user, &ns);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for r in &rules {
        if !r.resources.is_empty() {
            let mut rr =
                json!({"verbs": r.verbs, "apiGroups": r.api_groups, "resources": r.resources});
            if !r.resource_names.is_empty() {
                rr["resourceNames"] = json!(r.resource_names);
            }
            resource_rules.push(rr);
        }
        if !r.non_resource_urls.is_empty() {
            non_resource_rules
                .push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(format!("[{}]", errors.join(", ")));
    }
    Ok(with_status(review, status))
}

/// TokenReview: who a token authenticates as, for the audiences the review
/// names (else the API server's), as kube's TokenReview REST: a token is
/// required (`400`); a refused token answers `user: {}` and kube's
/// `error`; an accepted one its user (in `system:authenticated`) and the
/// audiences it is good for.
async fn token_review(state: &State, review: Value) -> ApiResult<Value> {
    let spec = review.get("spec").cloned().unwrap_or(Value::Null);
    let token = str_of(&spec, "token");
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let audiences = strings(spec.get("audiences"));
    let status = match state.authn.authenticate_token_for(token, &audiences).await {
        Ok((u, auds)) => json!({
            "authenticated": true,
            "user": u.with_authenticated().to_json(),
            "audiences": auds,
        }),
        Err(error) => json!({"user": {}, "error": error}),
    };
    Ok(with_status(review, status))
}

/// TokenRequest: a JWT bound to the ServiceAccount named on the URL.
async fn token_request(cx: &Ctx<'_>, state: &State, body: &Bytes) -> ApiResult<Value> {
    let body = json_body(cx, body, "TokenRequest")?;
    let mut req: Value = if body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(e.to_string()))?
    };
    let name = cx.ri.name.clone();
    let ns = cx.ri.namespace.clone();
    let sa =
        cx.b.store
            .get(&ObjectKey::new(
                GroupResource::new("", "serviceaccounts"),
                &ns,
                &name,
            ))
            .await?;
    let spec = req.get("spec").cloned().unwrap_or(Value::Null);
    let expiration = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let invalid = |detail: &str| {
        ApiError::invalid(
            AUTHN,
            "TokenRequest",
            &name,
            &[FieldError::invalid(
                "spec.expirationSeconds",
                json!(expiration),
                detail,
            )],
        )
    };
    if expiration < MIN_EXPIRATION_SECONDS {
        return Err(invalid("may not specify a duration less than 10 minutes"));
    }
    if expiration > 1 << 32 {
        return Err(invalid(
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    let audiences = strings(spec.get("audiences"));
    let now = chrono::Utc::now();
    let (token, exp) = state
        .service_accounts
        .issue(
            &ns,
            &name,
            meta_str(&sa, "uid"),
            &audiences,
            now.timestamp(),
            expiration,
        )
        .map_err(ApiError::internal)?;
    let exp_time = chrono::DateTime::from_timestamp(exp, 0)
        .unwrap_or(now)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let audiences = if audiences.is_empty() {
        state.service_accounts.api_audiences().to_vec()
    } else {
        audiences
    };
    req["kind"] = json!("TokenRequest");
    req["apiVersion"] = json!("authentication.k8s.io/v1");
    req["metadata"] = json!({
        "name": name,
        "namespace": ns,
        "creationTimestamp": now.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    });
    req["spec"] = json!({
        "audiences": audiences,
        "expirationSeconds": expiration,
        "boundObjectRef": spec.get("boundObjectRef").cloned().unwrap_or(Value::Null),
    });
    req["status"] = json!({"token": token, "expirationTimestamp": exp_time});
    Ok(req)
}

/// kube's RBAC escalation checks for a write of a Role, ClusterRole,
/// RoleBinding or ClusterRoleBinding (`object` as admitted, `old` the
/// stored object of an update): a user may grant only what they hold,
/// unless they may `escalate` (roles) or `bind` (the referenced role), or
/// are in `system:masters`.
pub(crate) fn check_escalation(
    cx: &Ctx<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
) -> ApiResult<()> {
    if cx.ri.group != RBAC_GROUP || !cx.ri.subresource.is_empty() {
        return Ok(());
    }
    let Some(obj) = object else {
        return Ok(());
    };
    let resource = cx.ri.resource.as_str();
    if !matches!(
        resource,
        "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings"
    ) {
        return Ok(());
    }
    let Some(state) = current_state() else {
        return Ok(());
    };
    let user = current_user();
    if state.authz.mode == Mode::AlwaysAllow || user.in_group(keelson_auth::user::MASTERS) {
        return Ok(());
    }
    let ns = cx.ri.namespace.as_str();
    let name = meta_str(obj, "name");
    let gr = GroupResource::new(RBAC_GROUP, resource);
    let may = |verb: &str, res: &str, n: &str| {
        state
            .authz
            .authorize(&Attributes {
                user: user.as_ref().clone(),
                verb: verb.into(),
                resource_request: true,
                namespace: ns.into(),
                api_group: RBAC_GROUP.into(),
                resource: res.into(),
                name: n.into(),
                ..Default::default()
            })
            .allowed
    };
    let servant: Vec<PolicyRule> = match resource {
        "roles" | "clusterroles" => {
            let rules = PolicyRule::list_of(obj);
            if old.is_some_and(|o| {
                PolicyRule::list_of(o) == rules
                    && o.get("aggregationRule") == obj.get("aggregationRule")
            }) {
                return Ok(());
            }
            if may("escalate", resource, name) {
                return Ok(());
            }
            let aggregated = obj.get("aggregationRule").is_some_and(|a| !a.is_null());
            if aggregated {
                let (owner, _) = state.authz.rules_for(&user, ns);
                let full = [PolicyRule {
                    verbs: vec!["*".into()],
                    api_groups: vec!["*".into()],
                    resources: vec!["*".into()],
                    ..Default::default()
                }];
                if !uncovered(&owner, &full).is_empty() {
                    return Err(ApiError::forbidden(
                        &gr,
                        name,
                        "must have cluster-admin privileges to use the aggregationRule",
                    ));
                }
            }
            rules
        }
        _ => {
            let role_ref = obj.get("roleRef").cloned().unwrap_or(Value::Null);
            let (kind, role) = (str_of(&role_ref, "kind"), str_of(&role_ref, "name"));
            if old.is_some_and(|o| {
                o.get("roleRef") == obj.get("roleRef") && o.get("subjects") == obj.get("subjects")
            }) {
                return Ok(());
            }
            let role_resource = if kind == "Role" {
                "roles"
            } else {
                "clusterroles"
            };
            if may("bind", role_resource, role) {
                return Ok(());
            }
            state
                .authz
                .rbac
                .role_rules(kind, ns, role)
                .map_err(|e| ApiError::forbidden(&gr, name, &e))?
        }
    };
    let (owner, errors) = state.authz.rules_for(&user, ns);
    let missing = uncovered(&owner, &servant);
    if missing.is_empty() {
        return Ok(());
    }
    Err(ApiError::forbidden(
        &gr,
        name,
        &escalation_message(&user, missing, &errors),
    ))
}

/// `certificatesigningrequests/<name>/approval` (`kubectl certificate
/// approve|deny`): the body's `status.conditions` replace the stored ones
/// (new conditions get their update and transition times); admission's
/// CertificateApproval checks that the user may `approve` for the signer.
/// A PATCH of `approval` (kube-rs's `patch_approval`): the patch applied to
/// the stored request, as the body of the approval update that follows.
async fn patched_approval(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Bytes> {
    let patch_type = super::patch::patch_type(cx)?;
    if patch_type == keelson_api::PatchType::Apply {
        return Err(ApiError::unsupported_media_type(
            "415: Unsupported Media Type",
        ));
    }
    let original = cx.b.store.get(&cx.key(&cx.ri.name)).await?;
    let patched =
        cx.b.merge
            .patch(keelson_api::PatchRequest {
                patch_type,
                gr: cx.gr(),
                kind: "CertificateSigningRequest".into(),
                owner: Default::default(),
                force: false,
                original,
                patch: body.to_vec(),
            })
            .await?;
    serde_json::to_vec(&patched)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(e.to_string()))
}

async fn approval(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<Reply> {
    let body = json_body(cx, body, "CertificateSigningRequest")?;
    let sent: Value =
        serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let key = cx.key(&cx.ri.name);
    let mut stored = cx.b.store.get(&key).await?;
    let old = stored.clone();
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let mut conditions = sent
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &mut conditions {
        for field in ["lastUpdateTime", "lastTransitionTime"] {
            if c.get(field).is_none_or(Value::is_null) {
                c[field] = json!(now);
            }
        }
    }
    let has = |t: &str| {
        conditions
            .iter()
            .any(|c| str_of(c, "type") == t && str_of(c, "status") == "True")
    };
    if has("Approved") && has("Denied") {
        return Err(ApiError::invalid(
            CERTS,
            "CertificateSigningRequest",
            &cx.ri.name,
            &[FieldError::invalid(
                "status.conditions",
                Value::String("Approved".into()),
                "Approved and Denied conditions are mutually exclusive",
            )],
        ));
    }
    if let Some(rv) = sent
        .pointer("/metadata/resourceVersion")
        .filter(|v| v.is_string())
    {
        stored["metadata"]["resourceVersion"] = rv.clone();
    }
    if !stored.get("status").is_some_and(Value::is_object) {
        stored["status"] = json!({});
    }
    stored["status"]["conditions"] = json!(conditions);
    // kube's approval update runs the admission chain (validation with the
    // approval rules, webhooks and policies matching `.../approval`) and
    // records the writer in managedFields with `subresource: approval`.
    let opts = keelson_apimachinery::options::UpdateOptions::from_query(cx.query)?;
    let write_opts = super::write::WriteOpts {
        fv: opts.field_validation,
        dry: opts.dry_run,
    };
    let (admitted, warnings) = super::write::admit(
        cx,
        keelson_api::Operation::Update,
        Some(stored),
        Some(old.clone()),
        None,
        false,
        write_opts,
    )
    .await?;
    let admitted = admitted.ok_or_else(|| ApiError::internal("admission returned no object"))?;
    let recorded =
        cx.b.merge
            .update_managed_fields(keelson_api::ManagedFieldsRequest {
                gr: cx.gr(),
                kind: cx.info.kind.clone(),
                owner: cx.owner(&opts.field_manager),
                old,
                new: admitted,
            })
            .await?;
    let object =
        cx.b.store
            .update(
                &key,
                recorded,
                keelson_api::UpdateOptions {
                    dry_run: opts.dry_run,
                    ..Default::default()
                },
            )
            .await?;
    Ok(Reply {
        code: 200,
        object,
        warnings,
    })
}

/// The `kubernetes.io/kube-apiserver-client` signer: follows the
/// CertificateSigningRequests (a [`keelson_informer::Informer`]) and gives
/// every approved one for that signer its `status.certificate` (or a
/// `Failed` condition when the request cannot be signed). A store failure
/// while signing lists them all again. Runs until aborted.
pub(crate) async fn csr_signer(
    store: std::sync::Arc<dyn keelson_api::StoreApi>,
    ca_pem: String,
    ca_key_pem: String,
) {
    use keelson_informer::{Event, Informer};
    let gr = GroupResource::new(CERTS, "certificatesigningrequests");
    let mut informer = Informer::new("CSR signer", store.clone(), vec![gr.clone()]);
    loop {
        let event = informer.next().await;
        let csrs: Vec<&Value> = match &event {
            Event::Listed(listings) => listings.iter().flat_map(|l| &l.items).collect(),
            Event::Changed(_, change)
                if matches!(
                    change.event_type,
                    keelson_api::EventType::Added | keelson_api::EventType::Modified
                ) =>
            {
                vec![&change.object]
            }
            Event::Changed(..) | Event::Resync => Vec::new(),
        };
        for csr in csrs {
            if let Err(e) = sign_one(store.as_ref(), &gr, csr, &ca_pem, &ca_key_pem).await {
                informer.failed(&e);
                break;
            }
        }
    }
}

/// Sign one CSR if it is approved, for our signer, and not yet issued.
async fn sign_one(
    store: &dyn keelson_api::StoreApi,
    gr: &GroupResource,
    csr: &Value,
    ca_pem: &str,
    ca_key_pem: &str,
) -> ApiResult<()> {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let conditions = csr
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has = |t: &str| {
        conditions
            .iter()
            .any(|c| str_of(c, "type") == t && str_of(c, "status") == "True")
    };
    let signer = csr.pointer("/spec/signerName").and_then(Value::as_str);
    let issued = csr
        .pointer("/status/certificate")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty());
    if signer != Some(keelson_auth::csr::KUBE_APISERVER_CLIENT)
        || !has("Approved")
        || has("Denied")
        || has("Failed")
        || issued
    {
        return Ok(());
    }
    let usages = strings(csr.pointer("/spec/usages"));
    let request = csr
        .pointer("/spec/request")
        .and_then(Value::as_str)
        .and_then(|r| b64.decode(r).ok())
        .and_then(|r| String::from_utf8(r).ok())
        .unwrap_or_default();
    let signed = if !usages.iter().any(|u| u == "client auth") {
        Err("usages must include \"client auth\"".to_string())
    } else if usages.iter().any(|u| u == "server auth") {
        Err("usage \"server auth\" is not allowed".to_string())
    } else {
        keelson_auth::csr::sign_client_certificate(
            &request,
            ca_pem,
            ca_key_pem,
            chrono::Utc::now().timestamp(),
            csr.pointer("/spec/expirationSeconds")
                .and_then(Value::as_i64),
        )
        .map_err(|e| e.to_string())
    };
    let mut updated = csr.clone();
    match signed {
        Ok(pem) => updated["status"]["certificate"] = json!(b64.encode(pem.as_bytes())),
        Err(msg) => {
            let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
            let mut cs = conditions.clone();
            cs.push(json!({
                "type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                "message": msg, "lastUpdateTime": now, "lastTransitionTime": now,
            }));
            updated["status"]["conditions"] = json!(cs);
        }
    }
    let key = ObjectKey::new(gr.clone(), "", meta_str(csr, "name"));
    match store
        .update(&key, updated, keelson_api::UpdateOptions::default())
        .await
    {
        Ok(_) => Ok(()),
        // Changed or gone meanwhile: its next event brings it again.
        Err(e) if e.is_conflict() || e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}
