//! The store's change stream on the wire: events to and from their proto
//! messages, and the two stream adapters (server and client side).

use futures::future::ready;
use futures::stream::{BoxStream, StreamExt};
use keelson_api::{ChangeEvent, ChangeStream, EventType};
use keelson_apimachinery::ApiError;
use tonic::{Status, Streaming};

use crate::convert::{bad_enum, from_json_bytes, to_json_bytes};
use crate::pb::store as pb;
use crate::status::{from_grpc_status, to_grpc_status};

/// The server's response stream.
pub(crate) type PbEventStream = BoxStream<'static, Result<pb::WatchEvent, Status>>;

fn event_to_pb(e: &ChangeEvent) -> pb::WatchEvent {
    let event_type = match e.event_type {
        EventType::Added => pb::EventType::Added,
        EventType::Modified => pb::EventType::Modified,
        EventType::Deleted => pb::EventType::Deleted,
        // The store never sends errors as events.
        EventType::Bookmark | EventType::Error => pb::EventType::Progress,
    };
    pb::WatchEvent {
        revision: e.revision,
        event_type: event_type.into(),
        object: if e.event_type == EventType::Bookmark {
            Vec::new()
        } else {
            to_json_bytes(&e.object)
        },
        prev_object: e.prev_object.as_ref().map(to_json_bytes),
    }
}

fn event_from_pb(service: &str, e: pb::WatchEvent) -> Result<ChangeEvent, ApiError> {
    let event_type = match pb::EventType::try_from(e.event_type) {
        Ok(pb::EventType::Added) => EventType::Added,
        Ok(pb::EventType::Modified) => EventType::Modified,
        Ok(pb::EventType::Deleted) => EventType::Deleted,
        Ok(pb::EventType::Progress) => {
            return Ok(ChangeEvent {
                revision: e.revision,
                event_type: EventType::Bookmark,
                object: serde_json::Value::Null,
                prev_object: None,
            })
        }
        _ => return Err(bad_enum(service, "event type", e.event_type)),
    };
    Ok(ChangeEvent {
        revision: e.revision,
        event_type,
        object: from_json_bytes(service, "object", &e.object)?,
        prev_object: e
            .prev_object
            .map(|b| from_json_bytes(service, "prev_object", &b))
            .transpose()?,
    })
}

/// Server side: forward the local stream; an error item is sent as the
/// call's status and ends the stream.
pub(crate) fn to_pb_stream(changes: ChangeStream) -> PbEventStream {
    changes
        .scan(false, |ended, item| {
            if *ended {
                return ready(None);
            }
            *ended = item.is_err();
            ready(Some(
                item.map(|e| event_to_pb(&e))
                    .map_err(|e| to_grpc_status(&e)),
            ))
        })
        .boxed()
}

/// An error status received mid-stream. One without a Kubernetes `Status`
/// is a broken connection, hence `503` whatever its gRPC code.
pub(crate) fn stream_error(service: &str, s: &Status) -> ApiError {
    if s.details().is_empty() {
        return ApiError::unavailable(format!(
            "the {service} service is unavailable: {}",
            s.message()
        ));
    }
    from_grpc_status(service, s)
}

/// Client side: the gRPC stream as a [`ChangeStream`]; an error is its last
/// item. Dropping it cancels the call.
pub(crate) fn from_pb_stream(
    service: &'static str,
    stream: Streaming<pb::WatchEvent>,
) -> ChangeStream {
    decode_stream(service, stream, event_from_pb)
}

/// A received message stream decoded item by item; a decoding failure or a
/// broken stream ([`stream_error`]) is the last item.
pub(crate) fn decode_stream<M, T>(
    service: &'static str,
    stream: Streaming<M>,
    decode: fn(&str, M) -> Result<T, ApiError>,
) -> BoxStream<'static, Result<T, ApiError>>
where
    M: Send + 'static,
    T: Send + 'static,
{
    futures::stream::unfold(Some(stream), move |state| async move {
        let mut stream = state?;
        match stream.message().await {
            Ok(Some(m)) => match decode(service, m) {
                Ok(v) => Some((Ok(v), Some(stream))),
                Err(e) => Some((Err(e), None)),
            },
            Ok(None) => None,
            Err(s) => Some((Err(stream_error(service, &s)), None)),
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_round_trip() {
        for (t, prev) in [
            (EventType::Added, None),
            (EventType::Modified, Some(json!({"a": 1}))),
            (EventType::Deleted, Some(json!({"a": 2}))),
        ] {
            let e = ChangeEvent {
                revision: 9,
                event_type: t,
                object: json!({"b": "✓"}),
                prev_object: prev,
            };
            assert_eq!(event_from_pb("store", event_to_pb(&e)).unwrap(), e);
        }
    }

    #[test]
    fn an_unspecified_event_type_is_rejected() {
        let e = pb::WatchEvent {
            revision: 1,
            event_type: 0,
            object: b"{}".to_vec(),
            prev_object: None,
        };
        let err = event_from_pb("store", e).unwrap_err();
        assert_eq!(err.code, 500);
        assert!(
            err.message.contains("invalid event type 0"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_detail_less_status_mid_stream_is_503() {
        let e = stream_error("store", &Status::internal("h2 protocol error"));
        assert_eq!((e.code, e.reason.as_str()), (503, "ServiceUnavailable"));
        let gone = ApiError::new(410, "Expired", "too old resource version: 1 (2)");
        assert_eq!(stream_error("store", &to_grpc_status(&gone)), gone);
    }
}
