//! kube's `--feature-gates`; the registry lives in
//! `keelson_apimachinery::featuregates`, shared with admission.

pub use keelson_apimachinery::featuregates::{FeatureGates, Gate, KNOWN_GATES};
