//! Lists over stored values that do not decode: kube's corrupt-object
//! aggregation (`corruptObjErrAggregator`, on with the
//! `AllowUnsafeMalformedObjectDeletion` gate): the list fails as a whole
//! with `500 StorageReadError`, one cause per unreadable key (at most 100,
//! then a `FieldValueTooMany` cause), so the keys can be found and force
//! deleted.

use keelson_apimachinery::{
    ApiError, ApiResult, GroupResource, StatusCause, StatusDetails, StatusReason,
};
use keelson_kv::KeyValue;
use serde_json::Value;

use crate::ValueCodec;

/// kube's limit on aggregated corrupt-object errors.
const MAX_CAUSES: usize = 100;

/// Whether `e` is the codec's corrupt-object error (kube matches the text
/// too: the API error keeps no other trace of the storage error).
pub(crate) fn is_corrupt(e: &ApiError) -> bool {
    e.message.contains("corrupt object")
}

/// Decode every value, or fail with kube's aggregated `StorageReadError`
/// when some are corrupt (any other error fails the list as is).
pub(crate) fn decode_all(
    codec: ValueCodec,
    gr: &GroupResource,
    kvs: &[KeyValue],
) -> ApiResult<Vec<Value>> {
    let mut items = Vec::with_capacity(kvs.len());
    let mut causes = Vec::new();
    for kv in kvs {
        match codec.decode_kv(kv) {
            Ok(v) => items.push(v),
            Err(e) if is_corrupt(&e) => {
                if !add_cause(&mut causes, kv, e) {
                    break;
                }
            }
            Err(e) => return Err(e),
        }
    }
    if causes.is_empty() {
        Ok(items)
    } else {
        Err(store_read_error(gr, causes))
    }
}

/// [`decode_all`] one value at a time: values decode as the reader gets to
/// them; at the first corrupt one the rest are checked and the stream ends
/// with the aggregated error.
pub(crate) fn decode_stream(
    codec: ValueCodec,
    gr: GroupResource,
    kvs: Vec<KeyValue>,
) -> futures::stream::BoxStream<'static, ApiResult<Value>> {
    use futures::StreamExt as _;
    let state = Some(kvs.into_iter());
    futures::stream::unfold(state, move |state| {
        let gr = gr.clone();
        async move {
            let mut rest = state?;
            let kv = rest.next()?;
            match codec.decode_kv(&kv) {
                Ok(v) => Some((Ok(v), Some(rest))),
                Err(e) if is_corrupt(&e) => {
                    let mut causes = Vec::new();
                    let mut more = add_cause(&mut causes, &kv, e);
                    for kv in rest {
                        if !more {
                            break;
                        }
                        if let Err(e) = codec.decode_kv(&kv) {
                            if is_corrupt(&e) {
                                more = add_cause(&mut causes, &kv, e);
                            }
                        }
                    }
                    Some((Err(store_read_error(&gr, causes)), None))
                }
                Err(e) => Some((Err(e), None)),
            }
        }
    })
    .boxed()
}

/// Add `kv`'s cause; false once the list is full (the last cause then says
/// the list is truncated).
fn add_cause(causes: &mut Vec<StatusCause>, kv: &KeyValue, e: ApiError) -> bool {
    if causes.len() >= MAX_CAUSES {
        causes.push(StatusCause {
            reason: "FieldValueTooMany".into(),
            message: "too many errors, the list is truncated".into(),
            field: String::new(),
        });
        return false;
    }
    causes.push(StatusCause {
        reason: "UnexpectedServerResponse".into(),
        message: e.message,
        field: format!("/{}", String::from_utf8_lossy(&kv.key)),
    });
    true
}

/// kube's `aggregatedStorageError.NewAPIStatusError`.
fn store_read_error(gr: &GroupResource, causes: Vec<StatusCause>) -> ApiError {
    let resource = if gr.group.is_empty() {
        gr.resource.clone()
    } else {
        format!("{}.{}", gr.resource, gr.group)
    };
    let mut e = ApiError::new(
        500,
        StatusReason::StoreReadError,
        format!("failed to read one or more {resource} from the storage"),
    );
    e.details = Some(Box::new(StatusDetails {
        name: "list".into(),
        group: gr.group.clone(),
        kind: gr.resource.clone(),
        causes,
        ..Default::default()
    }));
    e
}
