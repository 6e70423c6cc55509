//! One call of one webhook (kube's `callAttrMutatingHook` / `callHook`)
//! and its errors as kube classifies them.

use std::time::Duration;

use keelson_api::StoreApi;
use keelson_apimachinery::{ApiError, StatusDetails};
use keelson_webhook_client::{self as client, AuthInfoResolver, Clients, TimeoutWording};
use serde_json::Value;

use super::hook::{Hook, HookKey};
use super::review::{self, Answer, Invocation};

/// Why a call did not admit.
#[derive(Debug)]
pub(crate) enum CallError {
    /// kube's `ErrCallingWebhook`: the reason after `failed calling
    /// webhook "<name>": `; `failurePolicy` decides.
    Calling(String),
    /// Any other error, returned as it is (a denial, dry run refused, a
    /// patch that does not apply).
    Refused(ApiError),
}

/// kube's `ToStatusErr`: the webhook's status with its message prefixed.
pub(crate) fn denied(name: &str, status: Option<&Value>) -> ApiError {
    let field = |k: &str| {
        status
            .and_then(|s| s.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let denied_by = format!("admission webhook {name:?} denied the request");
    let (message, reason) = (field("message"), field("reason"));
    let message = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    // A Status without a code answers 500 (kube's ErrorToAPIStatus).
    let code = status
        .and_then(|s| s.get("code"))
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c != 0)
        .unwrap_or(500);
    let mut e = ApiError::new(code, reason.as_str(), message);
    e.details = status
        .and_then(|s| s.get("details"))
        .and_then(|d| serde_json::from_value::<StatusDetails>(d.clone()).ok())
        .map(Box::new);
    e
}

/// Call `hook` about `inv`; the verified answer.
pub(crate) async fn call(
    store: &dyn StoreApi,
    clients: &Clients<(HookKey, Option<(String, std::net::SocketAddr)>)>,
    auth: Option<&AuthInfoResolver>,
    hook: &Hook,
    inv: &Invocation<'_>,
    mutating: bool,
) -> Result<Answer, CallError> {
    if inv.req.dry_run {
        if hook.side_effects.is_none() {
            return Err(CallError::Calling("Webhook SideEffects is nil".into()));
        }
        if !hook.dry_run_safe() {
            return Err(CallError::Refused(ApiError::bad_request(format!(
                "admission webhook {:?} does not support dry run",
                hook.name
            ))));
        }
    }
    let Some(version) = review::review_version(&hook.review_versions) else {
        return Err(CallError::Calling(
            "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)".into(),
        ));
    };
    let uid = uuid::Uuid::new_v4().to_string();
    let body = review::review(version, review::request_json(inv, &uid));
    let timeout = Duration::from_secs(hook.timeout_seconds);
    let target = client::target(store, &hook.client_config, timeout)
        .await
        .map_err(|e| CallError::Calling(format!("failed to call webhook: {e}")))?;
    let credentials = auth.and_then(|a| a.for_client_config(&hook.client_config));
    let key = (hook.key.clone(), target.resolve.clone());
    let http = clients
        .get_or_make(
            &key,
            |(k, _)| {
                k.config_uid == hook.key.config_uid
                    && k.index == hook.key.index
                    && k.config_revision != hook.key.config_revision
            },
            || {
                client::build_client_with(
                    hook.client_config.ca_bundle.as_deref(),
                    target.resolve.as_ref(),
                    timeout,
                    credentials,
                )
            },
        )
        .map_err(|e| CallError::Calling(format!("could not get REST client: {e}")))?;
    let bytes = client::post_raw_with(
        &http,
        &target,
        &body,
        TimeoutWording::ContextDeadline,
        credentials,
    )
    .await
    .map_err(|e| CallError::Calling(format!("failed to call webhook: {e}")))?;
    let answer = review::decode(&bytes)
        .map_err(|e| CallError::Calling(format!("failed to call webhook: {e}")))?;
    review::verify(version, &uid, mutating, &answer)
        .map_err(|e| CallError::Calling(format!("received invalid webhook response: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn denials_are_wrapped_as_kube_wraps_them() {
        let e = denied(
            "deny.example.com",
            Some(&json!({"code": 403, "reason": "Forbidden", "message": "no pods today"})),
        );
        assert_eq!(e.code, 403);
        assert_eq!(e.reason.as_str(), "Forbidden");
        assert_eq!(
            e.message,
            "admission webhook \"deny.example.com\" denied the request: no pods today"
        );
        let e = denied("d", Some(&json!({"reason": "NotAllowed"})));
        assert_eq!(e.code, 500);
        assert_eq!(
            e.message,
            "admission webhook \"d\" denied the request: NotAllowed"
        );
        let e = denied("d", None);
        assert_eq!(
            e.message,
            "admission webhook \"d\" denied the request without explanation"
        );
        assert!(e.reason.is_empty());
    }
}
