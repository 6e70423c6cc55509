//! Watch-cache requests and events to and from their proto messages.

use keelson_api::{
    CacheEvent, CacheListRequest, CacheWatchRequest, EventType, IncludeObject, ListRevision,
    WatchStart,
};
use keelson_apimachinery::ApiError;
use keelson_codec::{Encoding, Format, MetaVersion, Target};

use crate::convert::{bad_enum, gr_from_pb, gr_to_pb, missing};
use crate::pb::watch as pb;

pub(crate) fn format_to_pb(f: Format) -> pb::Format {
    let encoding = match f.encoding {
        Encoding::Json => pb::Encoding::Json,
        Encoding::Yaml => pb::Encoding::Yaml,
        Encoding::Protobuf => pb::Encoding::Protobuf,
        Encoding::Cbor => pb::Encoding::Cbor,
    };
    let version = |v: MetaVersion| match v {
        MetaVersion::V1 => pb::MetaVersion::V1,
        MetaVersion::V1beta1 => pb::MetaVersion::V1beta1,
    };
    let (target, meta_version) = match f.target {
        Target::Object => (pb::TargetKind::Object, pb::MetaVersion::Unspecified),
        Target::Table(v) => (pb::TargetKind::Table, version(v)),
        Target::PartialObjectMetadata(v) => (pb::TargetKind::PartialObjectMetadata, version(v)),
        Target::PartialObjectMetadataList(v) => {
            (pb::TargetKind::PartialObjectMetadataList, version(v))
        }
    };
    pb::Format {
        encoding: encoding.into(),
        target: target.into(),
        meta_version: meta_version.into(),
    }
}

pub(crate) fn format_from_pb(service: &str, f: Option<pb::Format>) -> Result<Format, ApiError> {
    let f = f.ok_or_else(|| missing(service, "format"))?;
    let encoding = match pb::Encoding::try_from(f.encoding) {
        Ok(pb::Encoding::Json) => Encoding::Json,
        Ok(pb::Encoding::Yaml) => Encoding::Yaml,
        Ok(pb::Encoding::Protobuf) => Encoding::Protobuf,
        Ok(pb::Encoding::Cbor) => Encoding::Cbor,
        _ => return Err(bad_enum(service, "encoding", f.encoding)),
    };
    let version = || match pb::MetaVersion::try_from(f.meta_version) {
        Ok(pb::MetaVersion::V1) => Ok(MetaVersion::V1),
        Ok(pb::MetaVersion::V1beta1) => Ok(MetaVersion::V1beta1),
        _ => Err(bad_enum(service, "meta version", f.meta_version)),
    };
    let target = match pb::TargetKind::try_from(f.target) {
        Ok(pb::TargetKind::Object) => Target::Object,
        Ok(pb::TargetKind::Table) => Target::Table(version()?),
        Ok(pb::TargetKind::PartialObjectMetadata) => Target::PartialObjectMetadata(version()?),
        Ok(pb::TargetKind::PartialObjectMetadataList) => {
            Target::PartialObjectMetadataList(version()?)
        }
        _ => return Err(bad_enum(service, "target", f.target)),
    };
    Ok(Format { encoding, target })
}

pub(crate) fn list_request_to_pb(r: &CacheListRequest) -> pb::ListRequest {
    let (kind, revision) = match r.revision {
        ListRevision::Consistent => (pb::ListRevisionKind::Consistent, 0),
        ListRevision::Any => (pb::ListRevisionKind::Any, 0),
        ListRevision::NotOlderThan(rev) => (pb::ListRevisionKind::NotOlderThan, rev),
        ListRevision::Exact(rev) => (pb::ListRevisionKind::Exact, rev),
    };
    pb::ListRequest {
        gr: Some(gr_to_pb(&r.gr)),
        namespace: r.namespace.clone(),
        label_selector: r.label_selector.clone(),
        field_selector: r.field_selector.clone(),
        revision_kind: kind.into(),
        revision,
        start_after: r.start_after.clone(),
        // usize always fits in u64 on supported targets.
        limit: u64::try_from(r.limit).unwrap_or(u64::MAX),
        format: Some(format_to_pb(r.format)),
    }
}

pub(crate) fn list_request_from_pb(
    service: &str,
    r: pb::ListRequest,
) -> Result<CacheListRequest, ApiError> {
    let revision = match pb::ListRevisionKind::try_from(r.revision_kind) {
        Ok(pb::ListRevisionKind::Consistent) => ListRevision::Consistent,
        Ok(pb::ListRevisionKind::Any) => ListRevision::Any,
        Ok(pb::ListRevisionKind::NotOlderThan) => ListRevision::NotOlderThan(r.revision),
        Ok(pb::ListRevisionKind::Exact) => ListRevision::Exact(r.revision),
        _ => return Err(bad_enum(service, "list revision kind", r.revision_kind)),
    };
    Ok(CacheListRequest {
        gr: gr_from_pb(r.gr.ok_or_else(|| missing(service, "gr"))?),
        namespace: r.namespace,
        label_selector: r.label_selector,
        field_selector: r.field_selector,
        revision,
        start_after: r.start_after,
        // A limit beyond the address space means "no smaller limit".
        limit: usize::try_from(r.limit).unwrap_or(usize::MAX),
        format: format_from_pb(service, r.format)?,
    })
}

pub(crate) fn watch_request_to_pb(r: &CacheWatchRequest) -> pb::WatchRequest {
    let (start, initial_events_end, after_revision) = match r.start {
        WatchStart::InitialState { initial_events_end } => {
            (pb::WatchStartKind::InitialState, initial_events_end, 0)
        }
        WatchStart::InitialStateAny => (pb::WatchStartKind::InitialStateAny, false, 0),
        WatchStart::After(rev) => (pb::WatchStartKind::After, false, rev),
        WatchStart::Now => (pb::WatchStartKind::Now, false, 0),
    };
    pb::WatchRequest {
        gr: Some(gr_to_pb(&r.gr)),
        namespace: r.namespace.clone(),
        label_selector: r.label_selector.clone(),
        field_selector: r.field_selector.clone(),
        start: start.into(),
        initial_events_end,
        after_revision,
        bookmark_interval_ms: r.bookmark_interval_ms,
        format: Some(format_to_pb(r.format)),
        include_object: match r.include_object {
            IncludeObject::Metadata => pb::IncludeObject::Metadata,
            IncludeObject::None => pb::IncludeObject::None,
            IncludeObject::Object => pb::IncludeObject::Object,
        }
        .into(),
    }
}

pub(crate) fn watch_request_from_pb(
    service: &str,
    r: pb::WatchRequest,
) -> Result<CacheWatchRequest, ApiError> {
    let start = match pb::WatchStartKind::try_from(r.start) {
        Ok(pb::WatchStartKind::InitialState) => WatchStart::InitialState {
            initial_events_end: r.initial_events_end,
        },
        Ok(pb::WatchStartKind::InitialStateAny) => WatchStart::InitialStateAny,
        Ok(pb::WatchStartKind::After) => WatchStart::After(r.after_revision),
        Ok(pb::WatchStartKind::Now) => WatchStart::Now,
        _ => return Err(bad_enum(service, "watch start", r.start)),
    };
    Ok(CacheWatchRequest {
        gr: gr_from_pb(r.gr.ok_or_else(|| missing(service, "gr"))?),
        namespace: r.namespace,
        label_selector: r.label_selector,
        field_selector: r.field_selector,
        start,
        bookmark_interval_ms: r.bookmark_interval_ms,
        format: format_from_pb(service, r.format)?,
        include_object: match pb::IncludeObject::try_from(r.include_object) {
            Ok(pb::IncludeObject::Unspecified | pb::IncludeObject::Metadata) => {
                IncludeObject::Metadata
            }
            Ok(pb::IncludeObject::None) => IncludeObject::None,
            Ok(pb::IncludeObject::Object) => IncludeObject::Object,
            Err(_) => return Err(bad_enum(service, "include object", r.include_object)),
        },
    })
}

/// The frame is shared (`Bytes` clone), not copied.
pub(crate) fn event_to_pb(e: &CacheEvent) -> pb::WatchEvent {
    let event_type = match e.event_type {
        EventType::Added => pb::EventType::Added,
        EventType::Modified => pb::EventType::Modified,
        EventType::Deleted => pb::EventType::Deleted,
        _ if e.initial_events_end => pb::EventType::InitialEventsEnd,
        EventType::Bookmark | EventType::Error => pb::EventType::Bookmark,
    };
    pb::WatchEvent {
        event_type: event_type.into(),
        revision: e.revision,
        frame: e.frame.clone(),
        format: Some(format_to_pb(e.format)),
    }
}

pub(crate) fn event_from_pb(service: &str, e: pb::WatchEvent) -> Result<CacheEvent, ApiError> {
    let event_type = match pb::EventType::try_from(e.event_type) {
        Ok(pb::EventType::Added) => EventType::Added,
        Ok(pb::EventType::Modified) => EventType::Modified,
        Ok(pb::EventType::Deleted) => EventType::Deleted,
        Ok(pb::EventType::Bookmark) => EventType::Bookmark,
        Ok(pb::EventType::InitialEventsEnd) => {
            let format = format_from_pb(service, e.format)?;
            return Ok(CacheEvent::initial_events_end(e.revision, format));
        }
        _ => return Err(bad_enum(service, "event type", e.event_type)),
    };
    let format = format_from_pb(service, e.format)?;
    CacheEvent::from_frame(event_type, e.revision, format, e.frame).ok_or_else(|| {
        ApiError::internal(format!("{service} rpc: a watch event frame is malformed"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use keelson_apimachinery::GroupResource;

    fn list_req(revision: ListRevision) -> CacheListRequest {
        CacheListRequest {
            gr: GroupResource::new("apps", "deployments"),
            namespace: Some("ns1".into()),
            label_selector: "app=web,tier!=db".into(),
            field_selector: "metadata.name=a".into(),
            revision,
            start_after: Some("ns1/a".into()),
            limit: 500,
            format: Format::JSON,
        }
    }

    #[test]
    fn every_list_revision_round_trips() {
        for revision in [
            ListRevision::Consistent,
            ListRevision::Any,
            ListRevision::NotOlderThan(17),
            ListRevision::Exact(42),
        ] {
            let r = list_req(revision);
            assert_eq!(
                list_request_from_pb("watch cache", list_request_to_pb(&r)).unwrap(),
                r
            );
        }
    }

    #[test]
    fn list_defaults_round_trip() {
        let r = CacheListRequest {
            gr: GroupResource::new("", "pods"),
            namespace: None,
            label_selector: String::new(),
            field_selector: String::new(),
            revision: ListRevision::Any,
            start_after: None,
            limit: 0,
            format: Format::YAML,
        };
        assert_eq!(
            list_request_from_pb("watch cache", list_request_to_pb(&r)).unwrap(),
            r
        );
    }

    #[test]
    fn every_watch_start_round_trips() {
        for start in [
            WatchStart::InitialState {
                initial_events_end: true,
            },
            WatchStart::InitialState {
                initial_events_end: false,
            },
            WatchStart::InitialStateAny,
            WatchStart::After(99),
            WatchStart::Now,
        ] {
            let r = CacheWatchRequest {
                gr: GroupResource::new("", "configmaps"),
                namespace: None,
                label_selector: "a in (b, c)".into(),
                field_selector: String::new(),
                start,
                bookmark_interval_ms: 1500,
                format: Format::JSON,
                include_object: keelson_api::IncludeObject::Object,
            };
            assert_eq!(
                watch_request_from_pb("watch cache", watch_request_to_pb(&r)).unwrap(),
                r
            );
        }
    }

    #[test]
    fn every_event_type_round_trips() {
        for (event_type, object) in [
            (
                EventType::Added,
                Bytes::from_static(b"{\"a\":\"\xe2\x9c\x93\"}"),
            ),
            (EventType::Modified, Bytes::from_static(b"{\"a\":2}")),
            (EventType::Deleted, Bytes::from_static(b"{\"a\":3}")),
            (EventType::Bookmark, Bytes::new()),
        ] {
            let e = CacheEvent::new(event_type, 7, Format::JSON, &object).unwrap();
            assert_eq!(event_from_pb("watch cache", event_to_pb(&e)).unwrap(), e);
        }
        let end = CacheEvent::initial_events_end(7, Format::JSON);
        assert_eq!(
            event_from_pb("watch cache", event_to_pb(&end)).unwrap(),
            end
        );
    }

    #[test]
    fn events_share_the_frame_and_the_object_is_a_slice_of_it() {
        let e = CacheEvent::new(EventType::Added, 1, Format::JSON, &[b'x'; 64]).unwrap();
        let pb = event_to_pb(&e);
        assert_eq!(pb.frame.as_ptr(), e.frame.as_ptr());
        let back = event_from_pb("watch cache", pb).unwrap();
        assert_eq!(back.object, e.object);
        let inside = back.frame.as_ptr() as usize..back.frame.as_ptr() as usize + back.frame.len();
        assert!(inside.contains(&(back.object.as_ptr() as usize)));
    }

    #[test]
    fn a_malformed_frame_is_an_internal_error() {
        for line in [
            &b"{\"type\":\"MODIFIED\",\"object\":{}}\n"[..],
            b"garbage",
            b"{}",
        ] {
            let e = pb::WatchEvent {
                event_type: pb::EventType::Added.into(),
                revision: 1,
                frame: Bytes::copy_from_slice(line),
                format: Some(format_to_pb(Format::JSON)),
            };
            let err = event_from_pb("watch cache", e).unwrap_err();
            assert_eq!(err.code, 500, "{line:?}");
        }
    }

    #[test]
    fn unspecified_enums_are_rejected() {
        let mut l = list_request_to_pb(&list_req(ListRevision::Any));
        l.revision_kind = 0;
        let err = list_request_from_pb("watch cache", l).unwrap_err();
        assert_eq!(err.code, 500);
        assert!(
            err.message.contains("invalid list revision kind 0"),
            "{err}"
        );

        let mut w = watch_request_to_pb(&CacheWatchRequest {
            gr: GroupResource::new("", "pods"),
            namespace: None,
            label_selector: String::new(),
            field_selector: String::new(),
            start: WatchStart::Now,
            bookmark_interval_ms: 0,
            format: Format::JSON,
            include_object: keelson_api::IncludeObject::Metadata,
        });
        w.start = 9;
        let err = watch_request_from_pb("watch cache", w).unwrap_err();
        assert!(err.message.contains("invalid watch start 9"), "{err}");

        let e = pb::WatchEvent {
            event_type: 0,
            revision: 1,
            frame: Bytes::new(),
            format: Some(format_to_pb(Format::JSON)),
        };
        let err = event_from_pb("watch cache", e).unwrap_err();
        assert!(err.message.contains("invalid event type 0"), "{err}");
    }

    #[test]
    fn a_missing_group_resource_is_rejected() {
        let mut l = list_request_to_pb(&list_req(ListRevision::Any));
        l.gr = None;
        let err = list_request_from_pb("watch cache", l).unwrap_err();
        assert!(err.message.contains("missing gr"), "{err}");
    }

    #[test]
    fn every_format_round_trips() {
        let mut targets = vec![Target::Object];
        for v in [MetaVersion::V1, MetaVersion::V1beta1] {
            targets.extend([
                Target::Table(v),
                Target::PartialObjectMetadata(v),
                Target::PartialObjectMetadataList(v),
            ]);
        }
        for encoding in Encoding::ALL {
            for &target in &targets {
                let f = Format { encoding, target };
                assert_eq!(
                    format_from_pb("watch cache", Some(format_to_pb(f))).unwrap(),
                    f
                );
            }
        }
        let err = format_from_pb("watch cache", None).unwrap_err();
        assert!(err.message.contains("missing format"), "{err}");
        let mut f = format_to_pb(Format::JSON);
        f.target = pb::TargetKind::Table.into();
        let err = format_from_pb("watch cache", Some(f)).unwrap_err();
        assert!(err.message.contains("invalid meta version 0"), "{err}");
    }
}
