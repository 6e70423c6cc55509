//! [`StoreApi::watch`](keelson_api::StoreApi::watch) for [`LocalStore`]:
//! the key/value watch of the resource's prefix, its values decoded into
//! objects and its progress notifications passed on as
//! [`Progress`](ApiEventType::Bookmark) events.

use futures::stream::StreamExt;
use keelson_api::{ChangeEvent, ChangeStream, EventType as ApiEventType};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, StatusReason};
use keelson_kv::{Event, EventKind, KvError, WatchResponse};

use crate::error::kv_error;

use super::LocalStore;
use crate::ValueCodec;

/// kube's watch-cache error for a revision older than the retained history.
pub(crate) fn too_old(requested: u64, compacted: u64) -> ApiError {
    ApiError::new(
        410,
        StatusReason::Expired,
        format!("too old resource version: {requested} ({compacted})"),
    )
}

/// A compaction names the first revision the watch needed; kube names the
/// revision it was watching after.
fn api_error(e: KvError) -> ApiError {
    match e {
        KvError::Compacted {
            requested,
            compacted,
        } => too_old(requested.saturating_sub(1), compacted),
        other => kv_error(other),
    }
}

fn progress(revision: u64) -> ChangeEvent {
    ChangeEvent {
        revision,
        event_type: ApiEventType::Bookmark,
        object: serde_json::Value::Null,
        prev_object: None,
    }
}

fn to_change(codec: ValueCodec, response: WatchResponse) -> ApiResult<ChangeEvent> {
    let Event { kind, kv, prev_kv } = match response {
        WatchResponse::Progress { revision } => return Ok(progress(revision)),
        WatchResponse::Event(ev) => ev,
    };
    let revision = kv.mod_revision;
    let prev_object = prev_kv.as_ref().map(|kv| codec.decode_kv(kv)).transpose()?;
    let (event_type, object) = match kind {
        EventKind::Put if prev_kv.is_none() => (ApiEventType::Added, codec.decode_kv(&kv)?),
        EventKind::Put => (ApiEventType::Modified, codec.decode_kv(&kv)?),
        // A delete's object is the last state, stamped with the delete's
        // revision as kube does.
        EventKind::Delete => match &prev_kv {
            Some(last) => (
                ApiEventType::Deleted,
                codec.decode(&last.key, &last.value, revision)?,
            ),
            None => {
                return Err(ApiError::internal(format!(
                    "delete at revision {revision} carries no previous state"
                )))
            }
        },
    };
    Ok(ChangeEvent {
        revision,
        event_type,
        object,
        prev_object,
    })
}

impl LocalStore {
    /// The change stream of `gr` (in `namespace`, or all) after
    /// `after_revision`; see [`keelson_api::StoreApi::watch`]. A compacted
    /// revision fails the call; the stream ends after its first error.
    pub(crate) async fn watch_changes(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        let prefix = self.inner.config.key_layout.prefix(gr, namespace)?;
        let changes = self
            .inner
            .kv
            .watch(prefix, after_revision.saturating_add(1))
            .await
            .map_err(api_error)?;
        let codec = self.codec();
        Ok(
            futures::stream::unfold(Some(changes), move |changes| async move {
                let mut changes = changes?;
                let item = changes
                    .next()
                    .await?
                    .map_err(api_error)
                    .and_then(|r| to_change(codec, r));
                let rest = item.is_ok().then_some(changes);
                Some((item, rest))
            })
            .boxed(),
        )
    }
}
