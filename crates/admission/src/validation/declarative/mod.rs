//! Declarative validation (kube 1.34's `+k8s:` tags, KEP-5073): the rules
//! of `rules/*.rules` (compiled by `cargo xtask gen-validation` into
//! `generated.rs`), run beside the handwritten per-kind rules as kube's
//! `DeclarativeValidation` / `DeclarativeValidationTakeover` gates say, with
//! disagreements and failures counted in
//! `apiserver_validation_declarative_validation_{mismatch,panic}_total`.

mod generated;
// Tags and fields the rule files do not use yet (each has a unit test).
#[allow(dead_code)]
mod table;
mod walk;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::kinds::Write;
use walk::KindTree;

/// kube's gate that runs declarative validation (BETA, on in 1.34).
pub const DECLARATIVE_VALIDATION: &str = "DeclarativeValidation";
/// kube's gate that makes the declarative result authoritative (BETA, off
/// in 1.34).
pub const DECLARATIVE_VALIDATION_TAKEOVER: &str = "DeclarativeValidationTakeover";

/// How the two results are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `DeclarativeValidation=false`: handwritten only.
    Off,
    /// Both run; the handwritten result is returned, disagreements counted.
    Shadow,
    /// Both run; the declarative errors replace the handwritten ones of the
    /// fields the rules cover.
    Takeover,
}

/// A gate of the process's `--feature-gates` (kube's defaults until a
/// binary installs its flag).
fn gate(name: &str) -> bool {
    keelson_apimachinery::featuregates::FeatureGates::global().enabled(name)
}

fn mode() -> Mode {
    match (
        gate(DECLARATIVE_VALIDATION),
        gate(DECLARATIVE_VALIDATION_TAKEOVER),
    ) {
        (false, _) => Mode::Off,
        (true, false) => Mode::Shadow,
        (true, true) => Mode::Takeover,
    }
}

/// Every kind's rule tree, built once.
fn trees() -> &'static HashMap<(&'static str, &'static str), KindTree> {
    static TREES: OnceLock<HashMap<(&'static str, &'static str), KindTree>> = OnceLock::new();
    TREES.get_or_init(|| {
        generated::KINDS
            .iter()
            .map(|k| ((k.group, k.kind), KindTree::build(k)))
            .collect()
    })
}

/// Where disagreements and failures are counted.
pub(crate) trait Counters {
    /// The declarative and the covered handwritten errors differ.
    fn mismatch(&self);
    /// The declarative run failed (panicked).
    fn panic(&self);
}

struct Global;

impl Counters for Global {
    fn mismatch(&self) {
        keelson_metrics::Metrics::global().declarative_validation_mismatch();
    }
    fn panic(&self) {
        keelson_metrics::Metrics::global().declarative_validation_panic();
    }
}

/// The errors of one write of a `group`/`kind` object given its handwritten
/// errors `hv`, under the process's gates.
pub(crate) fn combine(
    group: &str,
    kind: &str,
    w: Write<'_>,
    obj: &Value,
    hv: Vec<FieldError>,
) -> Vec<FieldError> {
    match trees().get(&(group, kind)) {
        Some(tree) => combine_with(mode(), tree, w, obj, hv, &gate, &Global),
        None => hv,
    }
}

/// [`combine`] with an explicit mode, tree, gates and counters.
pub(crate) fn combine_with(
    mode: Mode,
    tree: &KindTree,
    w: Write<'_>,
    obj: &Value,
    hv: Vec<FieldError>,
    gates: &dyn Fn(&str) -> bool,
    counters: &dyn Counters,
) -> Vec<FieldError> {
    if mode == Mode::Off {
        return hv;
    }
    let Some(root) = tree.scope(w.subresource) else {
        return hv;
    };
    let run = catch_unwind(AssertUnwindSafe(|| walk::walk(root, obj, w.old(), gates)));
    let Ok(dv) = run else {
        counters.panic();
        tracing::error!("declarative validation panicked; the handwritten result stands");
        return hv;
    };
    let covered = |e: &FieldError| dv.covered.contains(&e.field);
    let key = |e: &FieldError| (e.field.clone(), e.kind.as_str());
    let mut have: Vec<_> = hv.iter().filter(|e| covered(e)).map(key).collect();
    let mut want: Vec<_> = dv.errs.iter().map(key).collect();
    have.sort();
    want.sort();
    if have != want {
        counters.mismatch();
        tracing::warn!(handwritten = ?have, declarative = ?want, "declarative validation mismatch");
    }
    match mode {
        Mode::Takeover => {
            let mut out: Vec<FieldError> = hv.into_iter().filter(|e| !covered(e)).collect();
            out.extend(dv.errs);
            out
        }
        _ => hv,
    }
}
