//! Deletes: kube's `store.Delete` with `updateForGracefulDeletionAndFinalizers`
//! (graceful marks, finalizers, the garbage collector's `orphan` and
//! `foregroundDeletion` finalizers from the propagation policy) in one
//! guaranteed update, and the namespace registry's own `Delete` (the first
//! delete only marks the namespace `Terminating`; it goes once its
//! `spec.finalizers` are empty).

use keelson_api::{DeleteOptions, DeleteOutcome};
use keelson_apimachinery::meta::{meta_str, set_meta_str};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey};
use serde_json::Value;

use super::object::{self, set_resource_version, Graceful};
use super::update::{Decision, Updated};
use super::LocalStore;

impl LocalStore {
    pub(crate) async fn delete_object(
        &self,
        key: &ObjectKey,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        if opts.ignore_store_read_error {
            return self.delete_unread(key).await;
        }
        if key.gr.group.is_empty() && key.gr.resource == "namespaces" {
            return self.delete_namespace(key, opts).await;
        }
        self.delete_generic(key, opts).await
    }

    /// kube's unsafe deletion of a corrupt object: remove the stored value
    /// without decoding it (no preconditions, finalizers or graceful
    /// deletion); the outcome carries no object.
    async fn delete_unread(&self, key: &ObjectKey) -> ApiResult<DeleteOutcome> {
        let updated = self
            .guaranteed_update(key, |current| match current {
                None => Err(ApiError::not_found(&key.gr, &key.name)),
                Some(_) => Ok(Decision::<DeleteOutcome, Value>::Delete),
            })
            .await?;
        match updated {
            Updated::Done(outcome) => Ok(outcome),
            Updated::Put { .. } | Updated::Deleted { .. } => {
                Ok(DeleteOutcome::Deleted(Value::Null))
            }
        }
    }

    async fn delete_generic(
        &self,
        key: &ObjectKey,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        let orphan_default = object::orphans_by_default(&key.gr);
        let codec = self.codec();
        let updated = self
            .guaranteed_update(key, |current| {
                let Some(current) = current else {
                    return Err(ApiError::not_found(&key.gr, &key.name));
                };
                let stored = codec.decode_kv(current)?;
                object::check_preconditions(
                    key,
                    &stored,
                    opts.precondition_uid.as_deref(),
                    opts.precondition_resource_version.as_deref(),
                )?;
                let now = chrono::Utc::now();
                let mut marked = stored.clone();
                let graceful = object::before_delete(&mut marked, opts.grace_period_seconds, now);
                if graceful == Graceful::Pending {
                    // Finalizers cannot change through a delete once a
                    // graceful deletion is pending.
                    return Ok(Decision::Done(DeleteOutcome::Marked(stored)));
                }
                if let Some(list) = object::deletion_finalizers(
                    &marked,
                    orphan_default,
                    opts.propagation_policy,
                    opts.orphan_dependents,
                ) {
                    object::set_finalizers(&mut marked, list);
                }
                let keep = match graceful {
                    _ if object::has_finalizers(&marked) => {
                        if graceful == Graceful::No {
                            object::mark_as_deleting(&mut marked, now);
                        }
                        true
                    }
                    Graceful::Yes(n) => n > 0,
                    Graceful::No | Graceful::Pending => false,
                };
                if keep {
                    if opts.dry_run {
                        return Ok(Decision::Done(DeleteOutcome::Marked(marked)));
                    }
                    if object::is_noop(&marked, &stored) {
                        return Ok(Decision::Done(DeleteOutcome::Marked(stored)));
                    }
                    return Ok(Decision::Put(codec.encode(&marked)?, marked));
                }
                if opts.dry_run {
                    return Ok(Decision::Done(DeleteOutcome::Deleted(stored)));
                }
                Ok(Decision::Delete)
            })
            .await?;
        finish(codec, updated)
    }

    /// The namespace registry's `Delete`: the first delete sets
    /// `deletionTimestamp` and phase `Terminating` (and the `orphan` /
    /// `foregroundDeletion` finalizers the options ask for); later deletes
    /// answer the namespace until its `spec.finalizers` are empty, then
    /// delete it as any object.
    async fn delete_namespace(
        &self,
        key: &ObjectKey,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        let ns = self.get_object(key).await?;
        let codec = self.codec();
        let uid = meta_str(&ns, "uid").to_string();
        let rv = meta_str(&ns, "resourceVersion").to_string();
        let pre_uid = opts.precondition_uid.clone().unwrap_or_else(|| uid.clone());
        let check = |uid: &str, rv: &str| -> ApiResult<()> {
            if pre_uid != uid {
                return Err(precondition_failed(key, "UID", &pre_uid, uid));
            }
            if let Some(want) = &opts.precondition_resource_version {
                if want != rv {
                    return Err(precondition_failed(key, "ResourceVersion", want, rv));
                }
            }
            Ok(())
        };
        check(&uid, &rv)?;
        if object::is_deleting(&ns) {
            if object::has_spec_finalizers(&ns) {
                return Ok(DeleteOutcome::Marked(ns));
            }
            let opts = DeleteOptions {
                precondition_uid: Some(pre_uid.clone()),
                ..opts.clone()
            };
            return self.delete_generic(key, &opts).await;
        }
        let updated = self
            .guaranteed_update(key, |current| {
                let Some(current) = current else {
                    return Err(ApiError::not_found(&key.gr, &key.name));
                };
                let stored = codec.decode_kv(current)?;
                check(meta_str(&stored, "uid"), &current.mod_revision.to_string())?;
                let mut marked = stored.clone();
                if !object::is_deleting(&marked) {
                    set_meta_str(&mut marked, "deletionTimestamp", &now_secs());
                }
                terminating_phase(&mut marked);
                let mut list = object::finalizers(&marked);
                let has = |l: &[String], f: &str| l.iter().any(|x| x == f);
                let orphan = match (opts.orphan_dependents, opts.propagation_policy) {
                    (Some(o), _) => o,
                    (None, Some(p)) => {
                        p == keelson_apimachinery::options::PropagationPolicy::Orphan
                    }
                    (None, None) => has(&list, object::ORPHAN),
                };
                let foreground = match (opts.orphan_dependents, opts.propagation_policy) {
                    (Some(o), _) => !o,
                    (None, Some(p)) => {
                        p == keelson_apimachinery::options::PropagationPolicy::Foreground
                    }
                    (None, None) => has(&list, object::FOREGROUND),
                };
                for (f, want) in [(object::ORPHAN, orphan), (object::FOREGROUND, foreground)] {
                    if want && !has(&list, f) {
                        list.push(f.to_string());
                    } else if !want {
                        list.retain(|x| x != f);
                    }
                }
                object::set_finalizers(&mut marked, list);
                object::kube_form(&mut marked);
                if opts.dry_run || object::is_noop(&marked, &stored) {
                    return Ok(Decision::Done(DeleteOutcome::Marked(marked)));
                }
                Ok(Decision::Put(codec.encode(&marked)?, marked))
            })
            .await?;
        finish(codec, updated)
    }

    async fn get_object(&self, key: &ObjectKey) -> ApiResult<Value> {
        let ek = self.inner.config.key_layout.object_key(key)?;
        match self.read_key(&ek).await? {
            Some(kv) => self.codec().decode_kv(&kv),
            None => Err(ApiError::not_found(&key.gr, &key.name)),
        }
    }
}

fn finish(
    codec: crate::ValueCodec,
    updated: Updated<DeleteOutcome, Value>,
) -> ApiResult<DeleteOutcome> {
    match updated {
        Updated::Done(outcome) => Ok(outcome),
        Updated::Put {
            revision,
            state: mut marked,
        } => {
            set_resource_version(&mut marked, &revision.to_string());
            Ok(DeleteOutcome::Marked(marked))
        }
        Updated::Deleted { revision, last } => Ok(DeleteOutcome::Deleted(codec.decode(
            &last.key,
            &last.value,
            revision,
        )?)),
    }
}

/// The namespace registry's precondition conflict.
fn precondition_failed(key: &ObjectKey, what: &str, want: &str, actual: &str) -> ApiError {
    ApiError::conflict(
        &GroupResource::new("", "namespaces"),
        &key.name,
        &format!(
            "Precondition failed: {what} in precondition: {want}, {what} in object meta: {actual}"
        ),
    )
}

fn now_secs() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `status.phase: Terminating`.
fn terminating_phase(ns: &mut Value) {
    let Some(root) = ns.as_object_mut() else {
        return;
    };
    let status = root
        .entry("status")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(s) = status.as_object_mut() {
        s.insert("phase".into(), Value::from("Terminating"));
    }
}
