//! kube's field manager (`k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`
//! over structured-merge-diff): who owns which field, recorded in
//! `metadata.managedFields`, for `Update` operations (create, update,
//! non-apply patches) and Server-Side Apply.
//!
//! Written here because no Rust crate implements structured-merge-diff.
//! The layers of kube's manager chain map onto this module as:
//! reset (`[]`/`[{}]` clears), version check, last-applied migration and
//! annotation sync (kubectl's client-side apply), the `Update` entry cap,
//! manager identity, timestamps, stripping of the identity fields, and
//! the structured merge itself ([`typed`]).

mod managed;
mod path;
mod set;
pub(crate) mod typed;

use keelson_apimachinery::status::{StatusCause, StatusDetails};
use keelson_apimachinery::{ApiError, ApiResult, StatusReason};
use serde_json::{Map, Value};

use crate::schema::{Shape, TypeRef};
use managed::{Entry, Managed, ManagerId, Operation};
use path::{PathDisplay, PathElement};
use set::Set;
use typed::Comparison;

/// The annotation kubectl's client-side apply keeps.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The manager kube gives the fields of an object first applied to after it
/// was written without managedFields.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// What a write is recorded against: the kind's schema and the fields its
/// managers never own.
pub(crate) struct FieldManager<'a> {
    ty: TypeRef<'a>,
    api_version: String,
    kind: String,
    subresource: String,
    /// kube's reset fields: what this (sub)resource's writes never change.
    ignored: Set,
    /// Whether the resource is served at a `group/version`: entries
    /// recorded at any other version are dropped (kube cannot convert them).
    served: Box<dyn Fn(&str) -> bool + 'a>,
}

/// A conflict: the manager that owns the path.
struct Conflict {
    manager: ManagerId,
    path: Vec<PathElement>,
}

/// Why an apply could not be merged.
enum ApplyFailure {
    /// Fields other managers own would change.
    Conflicts(Vec<Conflict>),
    /// An object does not fit its schema (kube answers `500`).
    Schema(String),
}

impl From<String> for ApplyFailure {
    fn from(e: String) -> Self {
        ApplyFailure::Schema(e)
    }
}

impl ApplyFailure {
    fn into_error(self) -> ApiError {
        match self {
            ApplyFailure::Conflicts(c) => conflict_error(c),
            ApplyFailure::Schema(e) => ApiError::internal(e),
        }
    }
}

impl<'a> FieldManager<'a> {
    /// The manager for writes of `kind` at `api_version` on `subresource`
    /// ("" for the resource); `has_status` when the resource has a `status`
    /// subresource (its main writes then never own `status`).
    #[cfg(test)]
    pub(crate) fn new(
        ty: TypeRef<'a>,
        api_version: &str,
        kind: &str,
        subresource: &str,
        has_status: bool,
    ) -> FieldManager<'a> {
        FieldManager::with_versions(
            ty,
            api_version,
            kind,
            subresource,
            has_status,
            &[],
            Box::new(|_: &str| true),
        )
    }

    /// [`FieldManager::new`] for a resource served at the `group/version`s
    /// `served` accepts, whose status writes cannot change the `metadata`
    /// fields `status_resets`.
    pub(crate) fn with_versions(
        ty: TypeRef<'a>,
        api_version: &str,
        kind: &str,
        subresource: &str,
        has_status: bool,
        status_resets: &[String],
        served: Box<dyn Fn(&str) -> bool + 'a>,
    ) -> FieldManager<'a> {
        let mut ignored = Set::new();
        match subresource {
            // A status write changes status and metadata, less what the
            // status strategy resets (the gateway keeps the rest stored).
            "status" => {
                for f in ty.field_names() {
                    if !matches!(f, "status" | "metadata" | "apiVersion" | "kind") {
                        ignored.insert(&[PathElement::field(f)]);
                    }
                }
                for f in status_resets {
                    ignored.insert(&[PathElement::field("metadata"), PathElement::field(f)]);
                }
            }
            "" if has_status => ignored.insert(&[PathElement::field("status")]),
            _ => {}
        }
        FieldManager {
            ty,
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            subresource: subresource.to_string(),
            ignored,
            served,
        }
    }

    /// Entries at a version the resource is not served at are dropped.
    fn drop_unknown_versions(&self, managed: &mut Managed) {
        managed.retain(|_, e| e.api_version.is_empty() || (self.served)(&e.api_version));
    }

    /// `new` with managedFields brought up to date for an `Update` by
    /// `manager` (kube's `FieldManager.UpdateNoErrors`): a client may set
    /// managedFields itself, or clear them with `[]` or `[{}]`; a failure
    /// clears them rather than failing the write.
    pub(crate) fn update(&self, old: &Value, mut new: Value, manager: &str, now: &str) -> Value {
        let managed = self.decode_live_or_new(old, &new);
        remove_managed_fields(&mut new);
        let Ok(mut managed) = managed else {
            return new;
        };
        // kube's skipNonAppliedManager: an existing object without
        // managedFields is not tracked until something applies to it.
        if managed.is_empty() && !old.is_null() {
            return new;
        }
        let live = if old.is_null() {
            self.zero_object()
        } else {
            let mut l = old.clone();
            remove_managed_fields(&mut l);
            l
        };
        if self
            .record_update(&live, &new, &mut managed, manager, now)
            .is_ok()
        {
            set_managed_fields(&mut new, &managed);
        }
        new
    }

    /// kube's `decodeLiveOrNew`: a subresource write always keeps the
    /// stored managedFields; `[]`/`[{}]` resets them; otherwise the request's
    /// own, unless it has none (clients that do not know them keep them).
    fn decode_live_or_new(&self, old: &Value, new: &Value) -> Result<Managed, String> {
        if !self.subresource.is_empty() {
            return managed::decode(old);
        }
        if managed::is_reset(new) {
            return Ok(Managed::new());
        }
        match managed::decode(new) {
            Ok(m) if !m.is_empty() => Ok(m),
            _ => managed::decode(old),
        }
    }

    fn record_update(
        &self,
        live: &Value,
        new: &Value,
        managed: &mut Managed,
        manager: &str,
        now: &str,
    ) -> Result<(), String> {
        self.drop_unknown_versions(managed);
        let compare = typed::compare(live, new, self.ty)?.excluding(&self.ignored);
        release_changed(managed, &compare, None);
        let changed = compare
            .modified
            .union(&compare.added)
            .difference(&compare.removed);
        let changed = strip_identity(&changed);
        if !changed.is_empty() {
            let id = ManagerId::new(
                manager,
                Operation::Update,
                &self.api_version,
                &self.subresource,
            );
            let set = match managed.get(&id) {
                Some(prev) => changed.union(&prev.set),
                None => changed,
            };
            managed.insert(
                id,
                Entry {
                    set,
                    api_version: self.api_version.clone(),
                    time: Some(now.to_string()),
                },
            );
        }
        managed::cap_update_managers(managed, managed::MAX_UPDATE_MANAGERS);
        Ok(())
    }

    /// Server-Side Apply of `config` by `manager` to `live` (`Value::Null`
    /// when the object does not exist yet): the merged object with its
    /// managedFields, or kube's errors (`409` conflicts, `400` for a wrong
    /// kind or managedFields in the body, `500` for a configuration that
    /// does not fit the schema).
    pub(crate) fn apply(
        &self,
        live: &Value,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> ApiResult<Value> {
        self.check_config(config)?;
        let mut managed = managed::decode(live)
            .map_err(|e| ApiError::internal(format!("failed to decode managed fields: {e}")))?;
        let mut live_obj = if live.is_null() {
            Value::Object(Map::new())
        } else {
            live.clone()
        };
        remove_managed_fields(&mut live_obj);
        self.drop_unknown_versions(&mut managed);
        // kube's skipNonAppliedManager: the fields of an existing object
        // nobody tracked belong to `before-first-apply`.
        if managed.is_empty() && !live.is_null() {
            self.record_update(
                &self.zero_object(),
                &live_obj,
                &mut managed,
                BEFORE_FIRST_APPLY,
                now,
            )
            .map_err(ApiError::internal)?;
        }
        let id = ManagerId::new(manager, Operation::Apply, "", &self.subresource);
        let attempt = self.apply_merge(&live_obj, config, &managed, &id, force);
        let (merged, next) = match attempt {
            // Only kubectl's own server-side apply inherits what its
            // client-side apply owned.
            Err(ApplyFailure::Conflicts(conflicts)) if manager == "kubectl" && !force => {
                // kubectl's client-side apply owned these fields through
                // the last-applied annotation: taking them over is allowed.
                let allowed = self.allowed_from_last_applied(&live_obj);
                let remaining: Vec<Conflict> = conflicts
                    .into_iter()
                    .filter(|c| !allowed.as_ref().is_some_and(|a| a.has(&c.path)))
                    .collect();
                if !remaining.is_empty() {
                    return Err(conflict_error(remaining));
                }
                self.apply_merge(&live_obj, config, &managed, &id, true)
                    .map_err(ApplyFailure::into_error)?
            }
            Err(e) => return Err(e.into_error()),
            Ok(done) => done,
        };
        managed = next;
        let mut object = match merged {
            Some(m) => {
                if let Some(e) = managed.get_mut(&id) {
                    e.time = Some(now.to_string());
                }
                m
            }
            None => live_obj.clone(),
        };
        managed::cap_update_managers(&mut managed, managed::MAX_UPDATE_MANAGERS);
        if manager == "kubectl" && last_applied(&live_obj).is_some() {
            set_last_applied(&mut object, config);
        }
        set_managed_fields(&mut object, &managed);
        Ok(object)
    }

    /// The merge and the new ownership, or the conflicts. `None` as the
    /// object when it is unchanged.
    fn apply_merge(
        &self,
        live: &Value,
        config: &Value,
        managed: &Managed,
        id: &ManagerId,
        force: bool,
    ) -> Result<(Option<Value>, Managed), ApplyFailure> {
        let mut managed = managed.clone();
        let merged = typed::merge(live, config, self.ty)?;
        let last = managed.get(id).map(|e| e.set.clone());
        let set = typed::to_field_set(config, self.ty)?.recursive_difference(&self.ignored);
        let time = managed.get(id).and_then(|e| e.time.clone());
        managed.insert(
            id.clone(),
            Entry {
                set,
                api_version: self.api_version.clone(),
                time,
            },
        );
        // Pruning removes what the last apply owned and this one does not;
        // when this apply owns all of it (the usual re-apply) nothing goes.
        let merged = match &last {
            Some(last) if !last.difference(&managed[id].set).is_empty() => {
                self.prune(&merged, &managed, last)
            }
            _ => merged,
        };
        let compare = typed::compare(live, &merged, self.ty)?.excluding(&self.ignored);
        if !force {
            let conflicts = conflicts(&managed, &compare, id);
            if !conflicts.is_empty() {
                return Err(ApplyFailure::Conflicts(conflicts));
            }
        }
        release_changed(&mut managed, &compare, Some(id));
        if let Some(e) = managed.get_mut(id) {
            e.set = strip_identity(&e.set);
            if e.set.is_empty() {
                managed.remove(id);
            }
        }
        let changed = merged != *live;
        Ok((changed.then_some(merged), managed))
    }

    /// Remove what the applier owned last time and no longer specifies,
    /// unless another manager (or the new configuration) owns it.
    fn prune(&self, merged: &Value, managed: &Managed, last: &Set) -> Value {
        let ensure = |s: &Set| typed::ensure_named_fields(s, self.ty);
        let set_of = |v: &Value| typed::to_field_set(v, self.ty).map(|s| ensure(&s));
        let last = ensure(last);
        let pruned = typed::remove_items(merged, &last, self.ty);
        let (Ok(merged_set), Ok(pruned_set)) = (set_of(merged), set_of(&pruned)) else {
            return merged.clone();
        };
        let owned = managed
            .values()
            .fold(Set::new(), |acc, e| acc.union(&e.set));
        let owned = ensure(&owned);
        let pruned = typed::remove_items(
            merged,
            &merged_set.difference(&pruned_set.union(&owned)),
            self.ty,
        );
        let Ok(pruned_set) = set_of(&pruned) else {
            return merged.clone();
        };
        typed::remove_items(
            merged,
            &merged_set.difference(&pruned_set).intersection(&last),
            self.ty,
        )
    }

    /// The fields kubectl's last-applied annotation holds with the value
    /// the live object still has (kube's `allowedConflictsFromLastApplied`).
    fn allowed_from_last_applied(&self, live: &Value) -> Option<Set> {
        let text = last_applied(live)?;
        let last: Value = serde_json::from_str(text).ok()?;
        if last.get("apiVersion").and_then(Value::as_str) != Some(self.api_version.as_str()) {
            return None;
        }
        let last_set = typed::to_field_set(&last, self.ty).ok()?;
        let compare = typed::compare(&last, live, self.ty).ok()?;
        Some(last_set.difference(&compare.modified))
    }

    /// The checks kube makes before merging an applied configuration.
    fn check_config(&self, config: &Value) -> ApiResult<()> {
        let text = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        if api_version != self.api_version || kind != self.kind {
            return Err(ApiError::bad_request(format!(
                "invalid object type: {}",
                gvk_string(api_version, kind)
            )));
        }
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        let errs = typed::validate(config, self.ty);
        if !errs.is_empty() {
            let meta = |k: &str| {
                config
                    .pointer(&format!("/metadata/{k}"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
            };
            let msg = typed::validation_message(&errs);
            return Err(ApiError::new(
                500,
                StatusReason::Unknown,
                format!(
                    "failed to create typed patch object ({}/{}; {}): {msg}",
                    meta("namespace"),
                    meta("name"),
                    gvk_string(api_version, kind)
                ),
            ));
        }
        Ok(())
    }

    /// The object a create is compared with: kube compares with the kind's
    /// Go zero value, whose non-pointer structs are present and empty and
    /// whose required lists are `null`, so neither is recorded as added.
    /// The catalog does not say which struct fields are pointers; these
    /// are the non-pointer ones of the built-in kinds' usual paths.
    fn zero_object(&self) -> Value {
        const ZERO_STRUCTS: &[&str] = &[
            "metadata",
            "spec",
            "status",
            "template",
            "jobTemplate",
            "strategy",
            "updateStrategy",
            "scaleTargetRef",
            "roleRef",
            "involvedObject",
        ];
        fn zero(ty: TypeRef<'_>, depth: usize) -> Value {
            let mut m = Map::new();
            if depth < 6 {
                for name in ZERO_STRUCTS {
                    let f = ty.field(name);
                    if ty.has_field(name) && f.shape() == Shape::Struct {
                        m.insert((*name).to_string(), zero(f, depth + 1));
                    }
                }
                for name in ty.required() {
                    m.entry(name.clone()).or_insert(Value::Null);
                }
            }
            Value::Object(m)
        }
        zero(self.ty, 0)
    }
}

/// Other managers lose the fields a write changed or removed (an `Update`
/// always wins; an apply only gets here when forced or without conflicts).
fn release_changed(managed: &mut Managed, compare: &Comparison, except: Option<&ManagerId>) {
    let taken = compare.modified.union(&compare.added);
    managed.retain(|id, e| {
        if Some(id) == except {
            return true;
        }
        e.set = e.set.difference(&taken).difference(&compare.removed);
        !e.set.is_empty()
    });
}

/// The fields other managers own that the apply changes.
fn conflicts(managed: &Managed, compare: &Comparison, applier: &ManagerId) -> Vec<Conflict> {
    let changed = compare.modified.union(&compare.added);
    let mut out = Vec::new();
    for (id, e) in managed {
        if id == applier {
            continue;
        }
        for path in e.set.intersection(&changed).paths() {
            out.push(Conflict {
                manager: id.clone(),
                path,
            });
        }
    }
    out
}

/// kube's `409 Conflict` for an apply: one cause per field.
fn conflict_error(conflicts: Vec<Conflict>) -> ApiError {
    let causes = conflicts
        .iter()
        .map(|c| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", c.manager.describe()),
            field: PathDisplay(&c.path).to_string(),
        })
        .collect();
    let message = if conflicts.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            conflicts[0].manager.describe(),
            PathDisplay(&conflicts[0].path)
        )
    } else {
        let mut by_manager: Vec<(&ManagerId, Vec<&[PathElement]>)> = Vec::new();
        for c in &conflicts {
            match by_manager.iter_mut().find(|(m, _)| *m == &c.manager) {
                Some((_, paths)) => paths.push(&c.path),
                None => by_manager.push((&c.manager, vec![&c.path])),
            }
        }
        by_manager.sort_by_key(|(m, _)| manager_json(m));
        let mut lines = Vec::new();
        for (m, paths) in by_manager {
            lines.push(format!("conflicts with {}:", m.describe()));
            lines.extend(paths.iter().map(|p| format!("- {}", PathDisplay(p))));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    let mut e = ApiError::new(409, StatusReason::Conflict, message);
    e.details = Some(Box::new(StatusDetails {
        causes,
        ..Default::default()
    }));
    e
}

/// kube sorts conflicting managers by their identifier, a JSON object
/// whose first field is the manager name.
fn manager_json(id: &ManagerId) -> String {
    serde_json::json!({"manager": id.manager, "operation": format!("{:?}", id.operation)})
        .to_string()
}

/// `apps/v1, Kind=Deployment` (`/v1, Kind=Pod` for the core group).
fn gvk_string(api_version: &str, kind: &str) -> String {
    match api_version.split_once('/') {
        Some((g, v)) => format!("{g}/{v}, Kind={kind}"),
        None => format!("/{api_version}, Kind={kind}"),
    }
}

/// Drop the fields no manager ever owns (kube's `stripMetaManager`).
fn strip_identity(set: &Set) -> Set {
    set.difference(&IDENTITY_FIELDS)
}

/// The fields [`strip_identity`] drops, built once.
static IDENTITY_FIELDS: std::sync::LazyLock<Set> = std::sync::LazyLock::new(|| {
    let mut strip = Set::new();
    for p in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "namespace"],
        &["metadata", "creationTimestamp"],
        &["metadata", "selfLink"],
        &["metadata", "uid"],
        &["metadata", "clusterName"],
        &["metadata", "generation"],
        &["metadata", "managedFields"],
        &["metadata", "resourceVersion"],
    ] {
        let path: Vec<PathElement> = p.iter().map(|s| PathElement::field(s)).collect();
        strip.insert(&path);
    }
    strip
});

fn remove_managed_fields(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
}

fn set_managed_fields(obj: &mut Value, managed: &Managed) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match managed::encode(managed) {
        Some(list) => {
            meta.insert("managedFields".into(), list);
        }
        None => {
            meta.remove("managedFields");
        }
    }
}

fn last_applied(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// kube's `lastAppliedUpdater`: a server-side apply by kubectl keeps the
/// client-side annotation in step with what was applied, encoded as kube
/// encodes unstructured objects (sorted keys, a final newline), without the
/// annotation itself (an emptied annotations map stays, as `{}`).
fn set_last_applied(object: &mut Value, config: &Value) {
    let mut applied = config.clone();
    if let Some(ann) = applied
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        ann.remove(LAST_APPLIED);
    }
    let mut text = serde_json::to_string(&sorted(&applied)).unwrap_or_default();
    text.push('\n');
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let ann = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(ann) = ann.as_object_mut() {
            ann.insert(LAST_APPLIED.into(), Value::from(text));
        }
    }
}

/// `v` with every map's keys sorted, as Go encodes a `map[string]any`.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
