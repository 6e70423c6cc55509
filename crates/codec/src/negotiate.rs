//! Content negotiation: the Accept header picks a response [`Format`]
//! (`406 NotAcceptable` when nothing served is acceptable), the
//! Content-Type header picks a request body decoder (`415
//! UnsupportedMediaType`).
//!
//! A range's `as`, `g` and `v` parameters name its target (kube's
//! `AllowsMediaTypeTransform`): a `Table` in JSON or YAML, a
//! `PartialObjectMetadata[List]` (JSON, YAML and CBOR), in `meta.k8s.io`
//! `v1` or `v1beta1`. A range whose target is anything else (an unknown
//! `as`, another group or version, a Table in Protobuf) is skipped, as
//! kube skips it: kubectl lists the plain object after its Table ranges.

use keelson_apimachinery::ApiError;

use crate::format::{Encoding, Format, Target};
use crate::media::{media_type, parse_accept};
use crate::serializer::SERIALIZERS;

/// kube-apiserver's 406 message for the media types Keelson serves.
/// (kube-apiserver with CBORServingAndStorage, which adds `application/cbor`).
pub const NOT_ACCEPTABLE: &str =
    "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";

/// kube-apiserver's 415 message for the body media types Keelson decodes.
pub const UNSUPPORTED_MEDIA_TYPE: &str = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";

/// kube-apiserver's 406 message for a watch asked for in a media type
/// without a stream serializer (YAML): the stream media types.
pub const NOT_ACCEPTABLE_STREAM: &str = "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq";

/// Whether responses are written in `target` with `encoding` (see the
/// module notes).
fn target_served(encoding: Encoding, target: Target) -> bool {
    match target {
        Target::Object => true,
        Target::Table(_) => matches!(encoding, Encoding::Json | Encoding::Yaml),
        // Every encoding has the meta.k8s.io views (Protobuf: kube's
        // `PartialObjectMetadata[List]` messages).
        Target::PartialObjectMetadata(_) | Target::PartialObjectMetadataList(_) => true,
    }
}

/// Choose the response format for an API object from an Accept header;
/// no header (or an empty one) is JSON.
pub fn negotiate_output(accept: Option<&str>) -> Result<Format, ApiError> {
    let ranges = parse_accept(accept);
    if ranges.is_empty() {
        return Ok(Format::JSON);
    }
    for r in &ranges {
        let encoding = match r.essence.as_str() {
            "*/*" | "application/*" => Encoding::Json,
            essence => match SERIALIZERS
                .iter()
                .find(|s| s.served && s.media_type == essence)
            {
                Some(s) => s.encoding,
                None => continue,
            },
        };
        let Some(target) = Target::from_params(r.param("as"), r.param("g"), r.param("v"))
            .filter(|t| target_served(encoding, *t))
        else {
            continue;
        };
        return Ok(Format { encoding, target });
    }
    Err(ApiError::not_acceptable(NOT_ACCEPTABLE))
}

/// Choose the decoder for a request body from its Content-Type; a missing
/// Content-Type is JSON.
pub fn negotiate_input(content_type: Option<&str>) -> Result<Encoding, ApiError> {
    match media_type(content_type).as_str() {
        "" => Ok(Encoding::Json),
        essence => SERIALIZERS
            .iter()
            .find(|s| s.decodes && s.media_type == essence)
            .map(|s| s.encoding)
            .ok_or_else(|| ApiError::unsupported_media_type(UNSUPPORTED_MEDIA_TYPE)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(accept: &str) -> Result<Format, ApiError> {
        negotiate_output(Some(accept))
    }

    #[test]
    fn no_accept_and_wildcards_are_json() {
        assert_eq!(negotiate_output(None).unwrap(), Format::JSON);
        assert_eq!(out("").unwrap(), Format::JSON);
        assert_eq!(out("*/*").unwrap(), Format::JSON);
        assert_eq!(out("application/*").unwrap(), Format::JSON);
        assert_eq!(out("text/html, */*;q=0.1").unwrap(), Format::JSON);
    }

    #[test]
    fn quality_orders_the_choice() {
        assert_eq!(
            out("application/json;q=0.5, application/yaml").unwrap(),
            Format::YAML
        );
        assert_eq!(
            out("application/yaml;q=0.5, application/json;q=0.8").unwrap(),
            Format::JSON
        );
        assert_eq!(
            out("application/vnd.kubernetes.protobuf, application/yaml;q=0.2").unwrap(),
            Format::object(Encoding::Protobuf)
        );
        // Unserved types are skipped whatever their quality.
        assert_eq!(
            out("application/cbor-seq, application/json;q=0.9").unwrap(),
            Format::JSON
        );
        assert_eq!(
            out("application/cbor, application/json;q=0.9").unwrap(),
            Format::object(Encoding::Cbor)
        );
        // q=0 excludes a range; with none left it is as if no header was
        // sent.
        assert_eq!(
            out("application/yaml;q=0, text/plain").unwrap_err().code,
            406
        );
        assert_eq!(out("application/yaml;q=0").unwrap(), Format::JSON);
    }

    #[test]
    fn table_and_metadata_targets() {
        use crate::format::MetaVersion;
        let f = |encoding, target| Format { encoding, target };
        // kubectl get's Accept header.
        assert_eq!(
            out("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json").unwrap(),
            f(Encoding::Json, Target::Table(MetaVersion::V1))
        );
        assert_eq!(
            out("application/json;as=Table;v=v1beta1;g=meta.k8s.io").unwrap(),
            f(Encoding::Json, Target::Table(MetaVersion::V1beta1))
        );
        assert_eq!(
            out("application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").unwrap(),
            f(
                Encoding::Yaml,
                Target::PartialObjectMetadataList(MetaVersion::V1)
            )
        );
        assert_eq!(
            out("*/*;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").unwrap(),
            f(
                Encoding::Json,
                Target::PartialObjectMetadata(MetaVersion::V1)
            )
        );
        assert_eq!(out("application/json;pretty=true").unwrap(), Format::JSON);
        // Targets kube does not serve skip their range.
        for skipped in [
            "application/json;as=Nonsense",
            "application/json;as=Table",
            "application/json;as=Table;g=meta.k8s.io;v=v2",
            "application/json;as=Table;g=apps;v=v1",
            "application/json;g=meta.k8s.io;v=v1",
        ] {
            assert_eq!(out(skipped).unwrap_err().code, 406, "{skipped}");
            assert_eq!(
                out(&format!("{skipped}, application/yaml;q=0.5")).unwrap(),
                Format::YAML,
                "{skipped}"
            );
        }
        assert_eq!(
            out("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1")
                .unwrap_err()
                .code,
            406
        );
    }

    #[test]
    fn not_acceptable_wording() {
        for accept in [
            "text/plain",
            "application/cbor-seq",
            "application/cbor;as=Table;g=meta.k8s.io;v=v1",
        ] {
            let e = out(accept).unwrap_err();
            assert_eq!((e.code, e.reason.as_str()), (406, "NotAcceptable"));
            assert_eq!(
                e.message,
                "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
            );
        }
    }

    #[test]
    fn decoders_by_content_type() {
        assert_eq!(negotiate_input(None).unwrap(), Encoding::Json);
        assert_eq!(negotiate_input(Some("")).unwrap(), Encoding::Json);
        assert_eq!(
            negotiate_input(Some("application/json; charset=utf-8")).unwrap(),
            Encoding::Json
        );
        assert_eq!(
            negotiate_input(Some("application/yaml")).unwrap(),
            Encoding::Yaml
        );
        assert_eq!(
            negotiate_input(Some("application/vnd.kubernetes.protobuf")).unwrap(),
            Encoding::Protobuf
        );
        assert_eq!(
            negotiate_input(Some("application/cbor")).unwrap(),
            Encoding::Cbor
        );
        for ct in [
            "application/cbor-seq",
            "text/plain",
            "application/merge-patch+json",
        ] {
            let e = negotiate_input(Some(ct)).unwrap_err();
            assert_eq!((e.code, e.reason.as_str()), (415, "UnsupportedMediaType"));
            assert_eq!(e.message, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor");
        }
    }
}
