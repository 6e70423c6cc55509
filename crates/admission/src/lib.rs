//! Keelson's admission service logic: what kube-apiserver does to a write
//! between decoding the body and storing it, in its order: field validation
//! (decoding against the schema), defaulting, NamespaceLifecycle, validation.
//!
//! [`LocalAdmission`] implements [`keelson_api::AdmissionApi`].
#![forbid(unsafe_code)]

mod audit;
mod config;
mod custom;
mod decode;
mod defaults;
mod lifecycle;
mod plugins;
mod policy;
pub mod quota;
mod schema;
mod validation;
mod webhook;

/// The catalog API this crate reads (one place to swap it).
pub(crate) mod registry {
    pub use keelson_registry::{Catalog, CatalogSnapshot, NameRule, ResourceInfo, Schema};
}

use std::sync::Arc;

use async_trait::async_trait;
use keelson_api::{
    AdmissionApi, AdmissionRequest, AdmissionResponse, AdmitPhase, FieldValidation, Operation,
    StoreApi,
};
use keelson_apimachinery::{ApiError, ApiResult, FieldError};
use serde_json::Value;

pub use config::{read_admission_config, AdmissionConfigError};
pub use decode::DecodeError;
pub use lifecycle::IMMORTAL_NAMESPACES;
pub use plugins::{
    PluginConfig, PodSecurityConfig, ALL_PLUGINS, DEFAULT_ON, DEFAULT_TOLERATION_SECONDS,
};
pub use validation::declarative::{DECLARATIVE_VALIDATION, DECLARATIVE_VALIDATION_TAKEOVER};

/// The per-kind validation errors of a create of `obj`, a `group`/`kind`
/// object that has been decoded and defaulted (what admission's
/// validation step adds after the metadata rules). For benchmarks and
/// tools; a write is validated by [`LocalAdmission`].
pub fn validate_kind_on_create(group: &str, kind: &str, obj: &Value) -> Vec<FieldError> {
    let write = validation::Write {
        op: Operation::Create,
        subresource: "",
        old: None,
        allow_privileged: true,
    };
    validation::validate_kind(group, kind, write, obj)
}

/// The cluster-IP checks kube's Service allocator makes before it
/// allocates (`ValidateServiceClusterIPsRelatedFields` in
/// `initIPFamilyFields`): `svc` as normalized by the allocator, `old` on
/// update. Empty when the allocator may go on.
pub fn service_cluster_ips_pre_validation(svc: &Value, old: Option<&Value>) -> Vec<FieldError> {
    validation::cluster_ips_pre_validation(svc, old)
}

use registry::{Catalog, NameRule};
use validation::{MetaRules, SpecialName};

/// Admission backed by the catalog and a store (for namespace lookups).
pub struct LocalAdmission {
    store: Arc<dyn StoreApi>,
    catalog: Catalog,
    /// Compiled schemas of the catalog's custom resources.
    schemas: keelson_apiextensions::SchemaCache,
    /// NamespaceLifecycle's view of the namespaces.
    namespaces: lifecycle::Namespaces,
    /// ValidatingAdmissionPolicies and their bindings.
    policies: policy::Policies,
    /// MutatingAdmissionPolicies and their bindings.
    mutating_policies: policy::MutatingPolicies,
    /// ResourceQuota: the quotas, followed, and the charging of writes.
    quotas: quota::Quotas,
    /// The built-in plugins (LimitRanger, ServiceAccount, Priority, ...)
    /// and which admission plugins are enabled.
    plugins: plugins::Plugins,
    /// Mutating and validating admission webhooks.
    webhooks: webhook::Webhooks,
}

impl LocalAdmission {
    /// Admission that reads namespaces from `store` and schemas from the
    /// live `catalog` (each request reads one generation).
    pub fn new(store: Arc<dyn StoreApi>, catalog: Catalog) -> LocalAdmission {
        LocalAdmission::with_plugins(store, catalog, PluginConfig::default())
    }

    /// [`LocalAdmission::new`] running the admission plugins `plugins`
    /// enables (kube's `--enable-admission-plugins` /
    /// `--disable-admission-plugins`).
    pub fn with_plugins(
        store: Arc<dyn StoreApi>,
        catalog: Catalog,
        plugins: PluginConfig,
    ) -> LocalAdmission {
        LocalAdmission::with_authorization(store, catalog, plugins, keelson_auth::Mode::Rbac)
    }

    /// [`LocalAdmission::with_plugins`] whose policies' `authorizer`
    /// checks with `mode` (the gateway's `--authorization-mode`).
    pub fn with_authorization(
        store: Arc<dyn StoreApi>,
        catalog: Catalog,
        plugins: PluginConfig,
        mode: keelson_auth::Mode,
    ) -> LocalAdmission {
        // One authorizer (and one RBAC index) for policies and plugins.
        let authz = Arc::new(policy::PolicyAuthz::new(mode));
        let webhooks = webhook::Webhooks::new(plugins.webhook_auth.clone());
        LocalAdmission {
            policies: policy::Policies::new(catalog.clone(), authz.clone()),
            mutating_policies: policy::MutatingPolicies::new(catalog.clone(), authz.clone()),
            store,
            catalog,
            schemas: keelson_apiextensions::SchemaCache::new(),
            namespaces: lifecycle::Namespaces::new(),
            quotas: quota::Quotas::new(plugins.resource_quota.clone()),
            plugins: plugins::Plugins::new(plugins, authz),
            webhooks,
        }
    }
}

#[async_trait]
impl AdmissionApi for LocalAdmission {
    async fn admit_phase(
        &self,
        req: AdmissionRequest,
        phase: AdmitPhase,
    ) -> ApiResult<AdmissionResponse> {
        match req.operation {
            Operation::Delete => {
                lifecycle::check_delete(&req.gr, &req.name)?;
                // Webhooks see a delete with its oldObject.
                let mut annotations = audit::Annotations::default();
                let warnings = self
                    .webhooks
                    .on_delete(&self.store, &req, self.plugins.config(), &mut annotations)
                    .await
                    .map_err(|e| e.with_audit_annotations(annotations.clone().into_map()))?;
                if req.gr.group.is_empty() && req.gr.resource == "namespaces" && !req.dry_run {
                    self.namespaces.deleting(&req.name);
                }
                Ok(AdmissionResponse {
                    object: None,
                    unmutated: None,
                    warnings,
                    audit_annotations: annotations.into_map(),
                })
            }
            Operation::Create | Operation::Update => self.admit_write(req, phase).await,
        }
    }
}

/// Names used in error messages for one request.
struct Names<'a> {
    kind: &'a str,
    version: &'a str,
}

impl Names<'_> {
    /// kube's `transformDecodeError` wrapper.
    fn cannot_handle(&self, inner: &str) -> String {
        format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: {inner}",
            kind = self.kind,
            version = self.version
        )
    }
}

/// A decode failure on a patch: `422` with an empty kind and name, the
/// patched object as the invalid value (kube's patch handler).
fn patch_invalid(patched: &Value, msg: &str) -> ApiError {
    let json = serde_json::to_string(patched).unwrap_or_default();
    ApiError::invalid("", "", "", &[FieldError::invalid("patch", json, msg)])
}

impl LocalAdmission {
    /// A create or update through the chain. The warnings recorded before
    /// a step refuses ride on its error, as kube sends them with it.
    async fn admit_write(
        &self,
        req: AdmissionRequest,
        phase: AdmitPhase,
    ) -> ApiResult<AdmissionResponse> {
        let mut warnings = Vec::new();
        let mut annotations = audit::Annotations::default();
        let mut unmutated = None;
        match self
            .admit_write_with(req, phase, &mut warnings, &mut annotations, &mut unmutated)
            .await
        {
            Ok(object) => Ok(AdmissionResponse {
                object: Some(object),
                unmutated,
                warnings,
                audit_annotations: annotations.into_map(),
            }),
            Err(e) => Err(e
                .with_warnings(warnings)
                .with_audit_annotations(annotations.into_map())),
        }
    }

    async fn admit_write_with(
        &self,
        mut req: AdmissionRequest,
        phase: AdmitPhase,
        warnings: &mut Vec<String>,
        annotations: &mut audit::Annotations,
        unmutated: &mut Option<Value>,
    ) -> ApiResult<Value> {
        let mut object = req
            .object
            .take()
            .ok_or_else(|| ApiError::bad_request("the request has no object to admit"))?;
        let catalog = custom::await_resource(&self.catalog, &req).await;
        let target = schema::target(
            &catalog,
            &req.gr.group,
            &req.api_version,
            &req.gr.resource,
            &req.kind,
        );
        let kind = if req.kind.is_empty() {
            target.info.map_or("", |i| i.kind.as_str())
        } else {
            req.kind.as_str()
        };
        let names = Names {
            kind,
            version: req
                .api_version
                .rsplit('/')
                .next()
                .unwrap_or(&req.api_version),
        };
        // A subresource with its own kind (a Scale on /scale) is not the
        // resource's object: only the namespace checks apply to it.
        let own_kind = target.info.is_none_or(|i| i.kind == kind);

        // A custom resource's own kind: its structural schema decides.
        let custom_schema = target
            .info
            .filter(|_| own_kind)
            .and_then(|i| self.schemas.get(i));

        // 1. Decoding: wrong types, unknown and duplicate fields (an
        // object for the validating phase has been through it).
        if !phase.mutates() {
            // Decoded by the mutating phase.
        } else if let (Some(schema), true) = (custom_schema.as_deref(), object.is_object()) {
            let received = if req.is_patch {
                object.clone()
            } else {
                Value::Null
            };
            // metadata is ObjectMeta, decoded as for built-ins.
            let mut strict = Vec::new();
            if let (Some((root, root_def)), Some(meta)) = (
                target.root,
                object.as_object_mut().and_then(|m| m.get_mut("metadata")),
            ) {
                let mut only_meta = serde_json::json!({ "metadata": meta.take() });
                let report = decode::decode(&*catalog, root, root_def, &mut only_meta, None);
                *meta = only_meta["metadata"].take();
                if let Some(e) = report.error {
                    return Err(if req.is_patch {
                        patch_invalid(&received, &e.to_string())
                    } else {
                        ApiError::bad_request(names.cannot_handle(&e.to_string()))
                    });
                }
                strict = report.strict;
            }
            strict.extend(custom::prune(schema, &mut object));
            // Stored in the storage version (`conversion: None` changes
            // only `apiVersion`); reads show the version asked for. A
            // conversion webhook is called by the gateway after admission.
            if let Some(c) = target
                .info
                .and_then(|i| i.custom.as_deref())
                .filter(|c| !c.conversion_webhook)
            {
                if let Some(m) = object.as_object_mut() {
                    m.insert(
                        "apiVersion".into(),
                        Value::from(format!("{}/{}", req.gr.group, c.storage_version)),
                    );
                }
            }
            if !strict.is_empty() {
                match req.field_validation {
                    FieldValidation::Strict => {
                        let msg = format!("strict decoding error: {}", strict.join(", "));
                        return Err(if req.is_patch {
                            patch_invalid(&received, &msg)
                        } else {
                            ApiError::bad_request(names.cannot_handle(&msg))
                        });
                    }
                    FieldValidation::Warn => *warnings = strict,
                    FieldValidation::Ignore => {}
                }
            }
        } else if let Some((root, root_def)) = target.root.filter(|_| custom_schema.is_none()) {
            // Kept only for a patch's error message.
            let received = if req.is_patch {
                object.clone()
            } else {
                Value::Null
            };
            let report = decode::decode(
                &*catalog,
                root,
                root_def,
                &mut object,
                req.raw_body.as_deref(),
            );
            if let Some(e) = report.error {
                return Err(if req.is_patch {
                    patch_invalid(&received, &e.to_string())
                } else {
                    ApiError::bad_request(names.cannot_handle(&e.to_string()))
                });
            }
            if !report.strict.is_empty() {
                match req.field_validation {
                    FieldValidation::Strict => {
                        let msg = format!("strict decoding error: {}", report.strict.join(", "));
                        return Err(if req.is_patch {
                            patch_invalid(&received, &msg)
                        } else {
                            ApiError::bad_request(names.cannot_handle(&msg))
                        });
                    }
                    FieldValidation::Warn => *warnings = report.strict,
                    FieldValidation::Ignore => {}
                }
            }
        } else if !object.is_object() {
            let inner = format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                keelson_apimachinery::field::json_kind(&object)
            );
            return Err(ApiError::bad_request(names.cannot_handle(&inner)));
        }

        let namespaced = target
            .info
            .map_or(!req.namespace.is_empty(), |i| i.namespaced);
        let group = target
            .info
            .map_or(req.gr.group.as_str(), |i| i.group.as_str());
        if own_kind && phase.mutates() {
            ensure_namespace(&mut object, &req.namespace, namespaced)?;
            // 2. Defaulting.
            defaults::apply(
                group,
                kind,
                req.operation,
                &req.subresource,
                &mut object,
                req.old_object.as_ref(),
            );
            if let Some(schema) = custom_schema.as_deref() {
                // kube's custom resource strategy: a create through a
                // resource with a status subresource starts without status.
                if req.operation == Operation::Create
                    && target.info.is_some_and(|i| i.has_subresource("status"))
                {
                    if let Some(m) = object.as_object_mut() {
                        m.shift_remove("status");
                    }
                }
                schema.default(&mut object);
            }
        }

        // What kube's field manager sees: it records the writer's `Update`
        // after decoding and defaulting, before mutating admission.
        let decoded = (own_kind && phase.mutates()).then(|| object.clone());

        let display_name = display_name(&req.name, &object);
        if phase.mutates() {
            // 3. NamespaceLifecycle.
            if req.operation == Operation::Create
                && namespaced
                && self.plugins.config().enabled("NamespaceLifecycle")
            {
                lifecycle::check_create(
                    &self.store,
                    &self.namespaces,
                    &req.gr,
                    &req.namespace,
                    &display_name,
                )
                .await?;
            }

            // 3b. The built-in plugins' mutating phase (LimitRanger,
            // ServiceAccount, Priority, ...).
            if own_kind {
                self.plugins
                    .mutate(&self.store, &req, &mut object, &display_name)
                    .await?;
            }

            // 3c. MutatingAdmissionPolicy, then the mutating admission
            // webhooks; a policy with `reinvocationPolicy: IfNeeded` runs once
            // more when the webhooks changed the object after it.
            let redecode = webhook::Redecode {
                catalog: &catalog,
                root: target.root,
                custom: custom_schema.as_deref(),
                group,
                kind,
                own_kind,
            };
            // Served only with its gate (and `--runtime-config`, which the
            // gateway enforces): the gate is what every process is given.
            let mutating_policies = self.plugins.config().enabled("MutatingAdmissionPolicy")
                && keelson_apimachinery::featuregates::FeatureGates::global()
                    .enabled("MutatingAdmissionPolicy")
                && !webhook::exempt(&req.gr.group, kind);
            let mut reinvoke = None;
            let mutating_write = policy::MutatingWrite {
                store: &self.store,
                catalog: &catalog,
                req: &req,
                display_name: &display_name,
                redecode: &redecode,
            };
            if mutating_policies {
                let r = self
                    .mutating_policies
                    .mutate(&mutating_write, &mut object, None)
                    .await?;
                reinvoke = Some(r).filter(|r| !r.is_empty());
            }
            if self.plugins.config().enabled("MutatingAdmissionWebhook") {
                let before = reinvoke.as_ref().map(|_| object.clone());
                let mut slot = Some(object);
                let w = (self.webhooks)
                    .mutate(&self.store, &req, &mut slot, Some(&redecode), annotations)
                    .await?;
                object = slot.unwrap_or_default();
                warnings.extend(w);
                if let (Some(r), Some(before)) = (&reinvoke, before) {
                    if before != object {
                        self.mutating_policies
                            .mutate(&mutating_write, &mut object, Some(r))
                            .await?;
                    }
                }
            }

            // 3d. The registry strategy's preparation, which kube runs in the
            // store after mutating admission (a Job's generated selector, a
            // CertificateSigningRequest's requester).
            if own_kind && custom_schema.is_none() {
                defaults::prepare(
                    group,
                    kind,
                    req.operation,
                    &req.subresource,
                    &mut object,
                    req.old_object.as_ref(),
                    req.user.as_ref(),
                );
            }
        }

        if let Some(decoded) = decoded.filter(|d| *d != object) {
            *unmutated = Some(decoded);
        }
        if !phase.validates() {
            return Ok(object);
        }

        // 4. Validation.
        if own_kind {
            let rules = MetaRules {
                name_rule: target.info.map_or(NameRule::Subdomain, |i| i.name_rule),
                namespaced,
                special_name: match (req.gr.group.as_str(), kind) {
                    ("certificates.k8s.io", "ClusterTrustBundle") => SpecialName::TrustBundle(
                        object
                            .pointer("/spec/signerName")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                    ),
                    ("networking.k8s.io", "IPAddress") => SpecialName::IpAddress,
                    ("", "Event") => SpecialName::CoreEvent,
                    ("coordination.k8s.io", "LeaseCandidate") => SpecialName::LeaseCandidate,
                    ("apiregistration.k8s.io", "APIService") => {
                        let spec_str = |k: &str| {
                            object
                                .get("spec")
                                .and_then(|s| s.get(k))
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                        };
                        SpecialName::ApiService {
                            version: spec_str("version"),
                            group: spec_str("group"),
                        }
                    }
                    _ => SpecialName::None,
                },
            };
            let mut errs = validation::validate_meta(object.get("metadata"), rules);
            if let Some(old) = req
                .old_object
                .as_ref()
                .filter(|_| req.operation == Operation::Update)
            {
                errs.extend(validation::no_new_finalizers(&object, old));
            }
            let mut strategy_warnings = Vec::new();
            if let Some(schema) = custom_schema.as_deref() {
                let old = req
                    .old_object
                    .as_ref()
                    .filter(|_| req.operation == Operation::Update);
                if let Some(old) = old {
                    errs.extend(validation::validate_meta_update(&object, old));
                }
                errs.extend(custom::validate(schema, &object, old));
            } else {
                let write = validation::Write {
                    op: req.operation,
                    subresource: &req.subresource,
                    old: req.old_object.as_ref(),
                    allow_privileged: self.plugins.config().allow_privileged,
                };
                let meta_errs = errs.len();
                errs.extend(validation::validate_kind(group, kind, write, &object));
                // kube's `BeforeCreate` runs the generic metadata checks only
                // once the strategy's own passed: for core Events (whose
                // strategy checks no metadata) they come alone or not at all.
                if rules.special_name == SpecialName::CoreEvent
                    && req.operation == Operation::Create
                    && errs.len() > meta_errs
                {
                    errs.drain(..meta_errs);
                }
                // The strategy's WarningsOnCreate/OnUpdate, sent only when
                // validation passes.
                strategy_warnings = validation::warnings(group, kind, write, &object);
                if let Some((root, _)) = target
                    .root
                    .filter(|_| !validation::covers_required(group, kind))
                {
                    // The schema's required fields at which the kind's
                    // own rules reported nothing.
                    for e in validation::required_fields(&*catalog, root, &object) {
                        if !errs.iter().any(|x| x.field == e.field) {
                            errs.push(e);
                        }
                    }
                }
            }
            if custom::is_crd(&req) {
                errs.extend(custom::crd_errors(&req, &object));
            }
            if !errs.is_empty() {
                return Err(ApiError::invalid(group, kind, &display_name, &errs));
            }
            warnings.extend(strategy_warnings);
        }

        // 4b. The built-in plugins' validating phase (LimitRanger's
        // limits, PodSecurity, PersistentVolumeClaimResize, ...).
        if own_kind {
            let w = self
                .plugins
                .validate(&self.store, &req, &object, &display_name, annotations)
                .await?;
            warnings.extend(w);
        }

        // 5. ValidatingAdmissionPolicy.
        if self.plugins.config().enabled("ValidatingAdmissionPolicy")
            && !webhook::exempt(&req.gr.group, kind)
        {
            let policy_warnings = self
                .policies
                .admit(
                    &self.store,
                    &catalog,
                    &req,
                    &object,
                    &display_name,
                    annotations,
                )
                .await?;
            warnings.extend(policy_warnings);
        }

        // 5b. Validating admission webhooks.
        if self.plugins.config().enabled("ValidatingAdmissionWebhook") {
            let w = self
                .webhooks
                .validate(&self.store, &req, Some(&object), annotations)
                .await?;
            warnings.extend(w);
        }

        // 6. ResourceQuota, last (kube's order): check and charge.
        if self.plugins.config().enabled("ResourceQuota") {
            self.quotas
                .admit(&self.store, &req, &object, &display_name)
                .await?;
        }

        Ok(object)
    }
}

/// The name kube shows for the object: its name, else its generateName.
fn display_name(request_name: &str, object: &Value) -> String {
    let meta = |k: &str| {
        object
            .get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    [meta("name"), request_name.to_string(), meta("generateName")]
        .into_iter()
        .find(|n| !n.is_empty())
        .unwrap_or_default()
}

/// kube's `EnsureObjectNamespaceMatchesRequestNamespace`: an empty namespace
/// takes the request's, a cluster-scoped object loses its namespace, and a
/// different one is a `400`.
fn ensure_namespace(object: &mut Value, request_ns: &str, namespaced: bool) -> ApiResult<()> {
    let expected = if namespaced { request_ns } else { "" };
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        if !expected.is_empty() {
            keelson_apimachinery::meta::set_meta_str(object, "namespace", expected);
        }
        return Ok(());
    };
    let current = meta
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if current == expected {
        return Ok(());
    }
    if current.is_empty() {
        meta.insert("namespace".into(), expected.into());
    } else if expected.is_empty() {
        meta.shift_remove("namespace");
    } else {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}
