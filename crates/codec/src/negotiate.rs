//! Content negotiation: the Accept header picks a response [`Format`]
//! (`406 NotAcceptable` when nothing served is acceptable), the
//! Content-Type header picks a request body decoder (`415
//! UnsupportedMediaType`).
//!
//! Only the object itself is served as a target so far: a range that asks
//! for a `Table` or `PartialObjectMetadata` (or names something unknown
//! with `as`) is answered with the plain object, which kubectl and
//! client-go fall back to.

use keelson_apimachinery::ApiError;

use crate::format::{Encoding, Format, Target};
use crate::media::{media_type, parse_accept};
use crate::serializer::SERIALIZERS;

/// kube-apiserver's 406 message for the media types Keelson serves.
pub const NOT_ACCEPTABLE: &str =
    "only the following media types are accepted: application/json, application/yaml";

/// kube-apiserver's 415 message for the body media types Keelson decodes.
pub const UNSUPPORTED_MEDIA_TYPE: &str = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// Whether responses are written in `target` (see the module notes).
fn target_served(target: Target) -> bool {
    target == Target::Object
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
        let target = Target::from_params(r.param("as"), r.param("g"), r.param("v"))
            .filter(|t| target_served(*t))
            .unwrap_or(Target::Object);
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
        // Unserved types are skipped whatever their quality.
        assert_eq!(
            out("application/vnd.kubernetes.protobuf, application/yaml;q=0.2").unwrap(),
            Format::YAML
        );
        assert_eq!(
            out("application/cbor, application/json;q=0.9").unwrap(),
            Format::JSON
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
    fn table_and_metadata_targets_fall_back_to_the_object() {
        assert_eq!(
            out("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json").unwrap(),
            Format::JSON
        );
        assert_eq!(
            out("application/json;as=Table;v=v1;g=meta.k8s.io").unwrap(),
            Format::JSON
        );
        assert_eq!(
            out("application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").unwrap(),
            Format::YAML
        );
        assert_eq!(out("application/json;as=Nonsense").unwrap(), Format::JSON);
        assert_eq!(out("application/json;pretty=true").unwrap(), Format::JSON);
    }

    #[test]
    fn not_acceptable_wording() {
        for accept in [
            "text/plain",
            "application/vnd.kubernetes.protobuf",
            "application/cbor",
        ] {
            let e = out(accept).unwrap_err();
            assert_eq!((e.code, e.reason.as_str()), (406, "NotAcceptable"));
            assert_eq!(
                e.message,
                "only the following media types are accepted: application/json, application/yaml"
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
        for ct in [
            "application/cbor",
            "text/plain",
            "application/merge-patch+json",
        ] {
            let e = negotiate_input(Some(ct)).unwrap_err();
            assert_eq!((e.code, e.reason.as_str()), (415, "UnsupportedMediaType"));
            assert_eq!(e.message, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf");
        }
    }
}
