//! What a response is made of: an [`Encoding`] (the media type's syntax)
//! and a [`Target`] (the object itself, or a view of it that the `as`, `g`
//! and `v` Accept parameters ask for).

use std::fmt;

/// The syntax of a media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    /// `application/json`
    Json,
    /// `application/yaml`
    Yaml,
    /// `application/vnd.kubernetes.protobuf`
    Protobuf,
    /// `application/cbor`
    Cbor,
}

impl Encoding {
    /// Every encoding, in [`Encoding::index`] order.
    pub const ALL: [Encoding; 4] = [
        Encoding::Json,
        Encoding::Yaml,
        Encoding::Protobuf,
        Encoding::Cbor,
    ];

    /// The media type (`type/subtype`).
    pub fn media_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Yaml => "application/yaml",
            Encoding::Protobuf => "application/vnd.kubernetes.protobuf",
            Encoding::Cbor => "application/cbor",
        }
    }

    /// A dense index in `0..Encoding::ALL.len()`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The `meta.k8s.io` version a Table or PartialObjectMetadata is asked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetaVersion {
    V1,
    V1beta1,
}

impl MetaVersion {
    /// `v1` or `v1beta1`.
    pub fn as_str(self) -> &'static str {
        match self {
            MetaVersion::V1 => "v1",
            MetaVersion::V1beta1 => "v1beta1",
        }
    }

    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
    pub fn api_version(self) -> &'static str {
        match self {
            MetaVersion::V1 => "meta.k8s.io/v1",
            MetaVersion::V1beta1 => "meta.k8s.io/v1beta1",
        }
    }

    /// A version named by the `v` Accept parameter.
    pub fn parse(v: &str) -> Option<MetaVersion> {
        match v {
            "v1" => Some(MetaVersion::V1),
            "v1beta1" => Some(MetaVersion::V1beta1),
            _ => None,
        }
    }
}

/// Which object a response carries (the `as`/`g`/`v` Accept parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// The resource's own kind (no `as` parameter).
    Object,
    /// `as=Table;g=meta.k8s.io;v=...`
    Table(MetaVersion),
    /// `as=PartialObjectMetadata;g=meta.k8s.io;v=...`
    PartialObjectMetadata(MetaVersion),
    /// `as=PartialObjectMetadataList;g=meta.k8s.io;v=...`
    PartialObjectMetadataList(MetaVersion),
}

impl Target {
    /// How many targets there are ([`Target::index`] is below this).
    pub const COUNT: usize = 7;

    /// A dense index in `0..Target::COUNT`.
    pub fn index(self) -> usize {
        let v = |m: MetaVersion| m as usize;
        match self {
            Target::Object => 0,
            Target::Table(m) => 1 + v(m),
            Target::PartialObjectMetadata(m) => 3 + v(m),
            Target::PartialObjectMetadataList(m) => 5 + v(m),
        }
    }

    /// The target named by the `as`, `g` and `v` parameters of a media
    /// range; `None` when they name nothing Kubernetes serves (any of them
    /// without a known `as` is such a conversion, as in kube).
    pub fn from_params(as_: Option<&str>, g: Option<&str>, v: Option<&str>) -> Option<Target> {
        let Some(as_) = as_ else {
            return (g.is_none() && v.is_none()).then_some(Target::Object);
        };
        if g != Some("meta.k8s.io") {
            return None;
        }
        let v = MetaVersion::parse(v?)?;
        match as_ {
            "Table" => Some(Target::Table(v)),
            "PartialObjectMetadata" => Some(Target::PartialObjectMetadata(v)),
            "PartialObjectMetadataList" => Some(Target::PartialObjectMetadataList(v)),
            _ => None,
        }
    }

    /// The kind named by `as` (`None` for the object itself).
    pub fn kind(self) -> Option<&'static str> {
        match self {
            Target::Object => None,
            Target::Table(_) => Some("Table"),
            Target::PartialObjectMetadata(_) => Some("PartialObjectMetadata"),
            Target::PartialObjectMetadataList(_) => Some("PartialObjectMetadataList"),
        }
    }
}

/// A response's format: its encoding and what object it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Format {
    pub encoding: Encoding,
    pub target: Target,
}

impl Format {
    /// The object as JSON: the default format, and the one the watch cache
    /// encodes every object in up front.
    pub const JSON: Format = Format {
        encoding: Encoding::Json,
        target: Target::Object,
    };
    /// The object as YAML.
    pub const YAML: Format = Format {
        encoding: Encoding::Yaml,
        target: Target::Object,
    };
    /// How many formats there are ([`Format::index`] is below this).
    pub const COUNT: usize = Encoding::ALL.len() * Target::COUNT;

    /// The object itself in `encoding`.
    pub const fn object(encoding: Encoding) -> Format {
        Format {
            encoding,
            target: Target::Object,
        }
    }

    /// A dense index in `0..Format::COUNT`, for per-format tables.
    pub fn index(self) -> usize {
        self.encoding.index() * Target::COUNT + self.target.index()
    }

    /// The Content-Type of a response in this format.
    pub fn content_type(self) -> &'static str {
        self.encoding.media_type()
    }
}

impl Default for Format {
    fn default() -> Self {
        Format::JSON
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.encoding.media_type())?;
        match self.target {
            Target::Object => Ok(()),
            Target::Table(v)
            | Target::PartialObjectMetadata(v)
            | Target::PartialObjectMetadataList(v) => write!(
                f,
                ";as={};g=meta.k8s.io;v={}",
                self.target.kind().unwrap_or_default(),
                v.as_str()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Format> {
        let mut targets = vec![Target::Object];
        for v in [MetaVersion::V1, MetaVersion::V1beta1] {
            targets.extend([
                Target::Table(v),
                Target::PartialObjectMetadata(v),
                Target::PartialObjectMetadataList(v),
            ]);
        }
        Encoding::ALL
            .iter()
            .flat_map(|&encoding| {
                targets
                    .iter()
                    .map(move |&target| Format { encoding, target })
            })
            .collect()
    }

    #[test]
    fn indexes_are_dense_and_distinct() {
        let mut seen: Vec<usize> = all().iter().map(|f| f.index()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..Format::COUNT).collect::<Vec<_>>());
    }

    #[test]
    fn targets_from_parameters() {
        let t = |a, g, v| Target::from_params(a, g, v);
        assert_eq!(t(None, None, None), Some(Target::Object));
        assert_eq!(
            t(Some("Table"), Some("meta.k8s.io"), Some("v1")),
            Some(Target::Table(MetaVersion::V1))
        );
        assert_eq!(
            t(
                Some("PartialObjectMetadataList"),
                Some("meta.k8s.io"),
                Some("v1beta1")
            ),
            Some(Target::PartialObjectMetadataList(MetaVersion::V1beta1))
        );
        assert_eq!(t(Some("Table"), Some("apps"), Some("v1")), None);
        assert_eq!(t(Some("Table"), Some("meta.k8s.io"), Some("v2")), None);
        assert_eq!(t(Some("Table"), Some("meta.k8s.io"), None), None);
        assert_eq!(t(Some("Pod"), Some("meta.k8s.io"), Some("v1")), None);
        assert_eq!(t(None, Some("meta.k8s.io"), Some("v1")), None);
        assert_eq!(t(None, None, Some("v1")), None);
    }

    #[test]
    fn display_names_the_media_type_and_target() {
        assert_eq!(Format::JSON.to_string(), "application/json");
        let f = Format {
            encoding: Encoding::Protobuf,
            target: Target::PartialObjectMetadata(MetaVersion::V1),
        };
        assert_eq!(
            f.to_string(),
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
        );
    }
}
