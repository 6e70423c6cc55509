//! Priority (`plugin/pkg/admission/priority`): a pod's `priorityClassName`
//! resolves to `spec.priority` and `spec.preemptionPolicy` on create (the
//! global default class when it names none, priority 0 without one); an
//! update keeps the stored values; a second `globalDefault` PriorityClass
//! is refused.

use keelson_api::Operation;
use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::Value;

use super::cache::{live_get, priority_classes};
use super::util::{spec_mut, str_at};
use super::Attrs;

/// kube's system classes (`scheduling.SystemPriorityClasses`), which
/// kube-apiserver creates at start: used when the store does not hold
/// them.
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// A resolved class: name, value, preemption policy.
struct Class {
    name: String,
    value: i64,
    preemption: Option<String>,
}

fn class_of(pc: &Value) -> Class {
    Class {
        name: keelson_apimachinery::meta::meta_str(pc, "name").to_string(),
        value: pc.get("value").and_then(Value::as_i64).unwrap_or(0),
        preemption: pc
            .get("preemptionPolicy")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

fn is_global_default(pc: &Value) -> bool {
    pc.get("globalDefault").and_then(Value::as_bool) == Some(true)
}

/// `getDefaultPriorityClass`: of several defaults, the lowest value.
async fn default_class(a: &Attrs<'_>) -> ApiResult<Option<Value>> {
    let all = a.cache.list(a.store, &priority_classes(), None).await?;
    let mut best: Option<Value> = None;
    for pc in all.into_iter().filter(is_global_default) {
        let lower = best
            .as_ref()
            .is_none_or(|b| class_of(b).value > class_of(&pc).value);
        if lower {
            best = Some(pc);
        }
    }
    Ok(best)
}

/// The mutating phase (pods).
pub(crate) async fn admit(a: &Attrs<'_>, pod: &mut Value) -> ApiResult<()> {
    if !a.is("", "pods") {
        return Ok(());
    }
    match a.req.operation {
        Operation::Update => {
            let Some(old) = a.req.old_object.as_ref() else {
                return Ok(());
            };
            let Some(spec) = spec_mut(pod) else {
                return Ok(());
            };
            for key in ["priority", "preemptionPolicy"] {
                let missing = spec.get(key).is_none_or(Value::is_null);
                if let (true, Some(v)) = (missing, old.get("spec").and_then(|s| s.get(key))) {
                    if !v.is_null() {
                        spec.insert(key.into(), v.clone());
                    }
                }
            }
            Ok(())
        }
        Operation::Create => admit_create(a, pod).await,
        Operation::Delete => Ok(()),
    }
}

async fn admit_create(a: &Attrs<'_>, pod: &mut Value) -> ApiResult<()> {
    let wanted = str_at(pod, &["spec", "priorityClassName"]).to_string();
    let class = if wanted.is_empty() {
        match default_class(a).await {
            Ok(Some(pc)) => class_of(&pc),
            Ok(None) => Class {
                name: String::new(),
                value: 0,
                preemption: Some("PreemptLowerPriority".into()),
            },
            Err(e) => {
                return Err(ApiError::internal(format!(
                    "failed to get default priority class: {}",
                    e.message
                )))
            }
        }
    } else {
        match lookup(a, &wanted).await {
            Ok(Some(c)) => c,
            Ok(None) => {
                return Err(a.forbidden(&format!("no PriorityClass with name {wanted} was found")))
            }
            Err(e) => {
                return Err(ApiError::internal(format!(
                    "failed to get PriorityClass with name {wanted}: {}",
                    e.message
                )))
            }
        }
    };
    let Some(spec) = spec_mut(pod) else {
        return Ok(());
    };
    if let Some(given) = spec.get("priority").and_then(Value::as_i64) {
        if given != class.value {
            return Err(a.forbidden(&format!(
                "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {} from the given PriorityClass name",
                class.value
            )));
        }
    }
    if wanted.is_empty() {
        if class.name.is_empty() {
            spec.remove("priorityClassName");
        } else {
            spec.insert("priorityClassName".into(), Value::from(class.name.clone()));
        }
    }
    spec.insert("priority".into(), Value::from(class.value));
    if let Some(policy) = class.preemption {
        if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str) {
            if given != policy {
                return Err(a.forbidden(&format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                )));
            }
        }
        spec.insert("preemptionPolicy".into(), Value::from(policy));
    }
    Ok(())
}

/// The class named `name`: the cache, then the store (a class created
/// just before the pod), then kube's system classes.
async fn lookup(a: &Attrs<'_>, name: &str) -> ApiResult<Option<Class>> {
    let gr = priority_classes();
    let found = match a.cache.get(a.store, &gr, "", name).await? {
        Some(pc) => Some(pc),
        None => live_get(a.store, &gr, "", name).await?,
    };
    if let Some(pc) = found {
        return Ok(Some(class_of(&pc)));
    }
    Ok(SYSTEM_CLASSES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, v)| Class {
            name: n.to_string(),
            value: *v,
            preemption: Some("PreemptLowerPriority".into()),
        }))
}

/// The validating phase: one `globalDefault` class at most.
pub(crate) async fn validate(a: &Attrs<'_>, object: &Value) -> ApiResult<()> {
    if !a.is("scheduling.k8s.io", "priorityclasses") || !is_global_default(object) {
        return Ok(());
    }
    let existing = default_class(a).await.map_err(|e| {
        ApiError::internal(format!(
            "failed to get default priority class: {}",
            e.message
        ))
    })?;
    let Some(existing) = existing else {
        return Ok(());
    };
    let other = keelson_apimachinery::meta::meta_str(&existing, "name");
    let refuse = match a.req.operation {
        Operation::Create => true,
        Operation::Update => other != keelson_apimachinery::meta::meta_str(object, "name"),
        Operation::Delete => false,
    };
    if refuse {
        return Err(a.forbidden(&format!(
            "PriorityClass {other} is already marked as default. Only one default can exist"
        )));
    }
    Ok(())
}
