//! Validation (`422 Invalid`): object metadata as
//! `k8s.io/apimachinery/pkg/api/validation/objectmeta.go` does it, and the
//! schema's required fields.

pub(crate) mod declarative;
mod kinds;
mod objectmeta;
mod required;

pub(crate) use kinds::cluster_ips_pre_validation;
pub(crate) use kinds::util::semantic;
pub(crate) use kinds::{covers_required, validate as validate_kind, warnings, Write};
pub(crate) use objectmeta::{
    no_new_finalizers, path_segment_errors, validate_meta, validate_meta_update, MetaRules,
    SpecialName,
};
pub(crate) use required::required_fields;
