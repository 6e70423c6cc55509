//! kube's `--feature-gates`: the gates Keelson knows, with kube 1.34's
//! defaults and kube's parse errors, and the one process-wide set (shared
//! by the gateway, admission and every binary that takes the flag).

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// One feature gate Keelson knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// kube's name.
    pub name: &'static str,
    /// kube 1.34's default.
    pub default: bool,
    /// kube's stage: `ALPHA`, `BETA` or `GA`.
    pub stage: &'static str,
}

/// The gates Keelson accepts: those whose behaviour it has.
pub const KNOWN_GATES: &[Gate] = &[
    // `ignoreStoreReadErrorWithClusterBreakingPotential` in DeleteOptions.
    Gate {
        name: "AllowUnsafeMalformedObjectDeletion",
        default: false,
        stage: "BETA",
    },
    // Keelson serves CBOR whatever this gate says (see compatibility.md).
    Gate {
        name: "CBORServingAndStorage",
        default: false,
        stage: "ALPHA",
    },
    // `certificates.k8s.io/v1beta1` ClusterTrustBundles are served only
    // with it (and the version enabled).
    Gate {
        name: "ClusterTrustBundle",
        default: false,
        stage: "BETA",
    },
    // `admissionregistration.k8s.io/v1beta1` MutatingAdmissionPolicies and
    // their bindings are served only with it (Keelson stores them but does
    // not apply them; see compatibility.md).
    Gate {
        name: "MutatingAdmissionPolicy",
        default: false,
        stage: "BETA",
    },
    // CSINode `allocatable.count` mutable, CSIDriver
    // `nodeAllocatableUpdatePeriodSeconds` kept (dropped while off).
    Gate {
        name: "MutableCSINodeAllocatableCount",
        default: false,
        stage: "BETA",
    },
    // Declarative validation (`+k8s:` rules) runs beside the handwritten
    // rules; mismatches are counted (compatibility.md).
    Gate {
        name: "DeclarativeValidation",
        default: true,
        stage: "BETA",
    },
    // The declarative result replaces the handwritten one for the fields
    // the rules cover.
    Gate {
        name: "DeclarativeValidationTakeover",
        default: false,
        stage: "BETA",
    },
];

/// A parsed `--feature-gates` over kube's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates {
    set: BTreeMap<&'static str, bool>,
}

impl FeatureGates {
    /// Parse `A=true,B=false` with kube's errors (`unrecognized feature
    /// gate: X`, `missing bool value for X`, `invalid value of X=Y, err:
    /// ...`).
    pub fn parse(s: &str) -> Result<FeatureGates, String> {
        let mut set = BTreeMap::new();
        for kv in s.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
            let (k, v) = match kv.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => return Err(format!("missing bool value for {kv}")),
            };
            let gate = KNOWN_GATES
                .iter()
                .find(|g| g.name == k)
                .ok_or_else(|| format!("unrecognized feature gate: {k}"))?;
            let b = parse_bool(v).ok_or_else(|| {
                format!("invalid value of {k}={v}, err: strconv.ParseBool: parsing {v:?}: invalid syntax")
            })?;
            set.insert(gate.name, b);
        }
        Ok(FeatureGates { set })
    }

    /// Whether `name` is on (its default unless set).
    pub fn enabled(&self, name: &str) -> bool {
        self.set.get(name).copied().unwrap_or_else(|| {
            KNOWN_GATES
                .iter()
                .find(|g| g.name == name)
                .is_some_and(|g| g.default)
        })
    }

    /// The process's gates (kube's defaults until [`FeatureGates::install`]).
    pub fn global() -> &'static FeatureGates {
        GATES.get_or_init(FeatureGates::default)
    }

    /// Make these the process's gates; only the first call counts.
    pub fn install(self) {
        let _ = GATES.set(self);
    }
}

static GATES: OnceLock<FeatureGates> = OnceLock::new();

/// Go's `strconv.ParseBool`.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}
