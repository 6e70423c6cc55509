//! CEL validation rules (`x-kubernetes-validations`) for CustomResourceDefinition
//! schemas, as kube-apiserver's apiextensions-apiserver runs them.
//!
//! [`CompiledSchema::compile`] checks every rule of a structural schema at
//! CRD write time (syntax, unknown fields, result type, estimated cost
//! against kube's limits) and answers kube's field errors;
//! [`CompiledSchema::validate`] evaluates the rules against an object (and
//! its old version on update) with kube's runtime cost budget, messages,
//! reasons and field paths.
//!
//! Parsing is the `cel` crate's; evaluation, cost and the Kubernetes
//! libraries are ours (see `eval`). This crate knows nothing of storage,
//! HTTP or the CRD object itself: it takes a schema and JSON values.
#![forbid(unsafe_code)]

mod check;
mod compile;
mod env;
mod escape;
mod eval;
pub mod expr;
pub mod library;
mod macros;
mod schema;
mod types;
mod validate;
mod value;

pub use compile::{CompileOptions, CompiledSchema};
pub use escape::escape as escape_property_name;
pub use escape::is_reserved as is_reserved_word;
pub use validate::Outcome;

/// The largest estimated cost of one expression (kube's `StaticEstimatedCostLimit`).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The largest estimated cost of all the rules of one CRD (`StaticEstimatedCRDCostLimit`).
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;
/// The runtime cost limit of one expression evaluation (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The runtime cost budget of one object's validation (`RuntimeCELCostBudget`).
pub const RUNTIME_CEL_COST_BUDGET: i64 = 10_000_000;

#[cfg(test)]
mod tests {
    /// A compiled schema is cached and shared across request tasks.
    #[test]
    fn compiled_schema_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<crate::CompiledSchema>();
    }
}
