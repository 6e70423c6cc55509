//! The Pod Security checks (`k8s.io/pod-security-admission/policy`): each
//! has an ID, a level and versions; a level and version evaluate the
//! baseline checks (in ID order), then for restricted the restricted ones
//! (in ID order), a restricted check replacing the baseline checks it
//! overrides. The check bodies live in the group files.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::api::{Level, LevelVersion};
use super::{host, privilege, profiles, volumes};

/// A refusal: the reason always shown, the detail in parentheses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forbidden {
    pub reason: String,
    pub detail: String,
}

impl Forbidden {
    pub fn new(reason: impl Into<String>, detail: impl Into<String>) -> Option<Forbidden> {
        Some(Forbidden {
            reason: reason.into(),
            detail: detail.into(),
        })
    }
}

/// One container of the pod (init, regular and ephemeral, in that order).
pub struct Container<'a> {
    pub name: &'a str,
    pub c: &'a Map<String, Value>,
}

impl<'a> Container<'a> {
    /// `securityContext`, when set.
    pub fn sc(&self) -> Option<&'a Map<String, Value>> {
        obj(self.c.get("securityContext"))
    }
}

/// The pod (or pod template) a check sees.
pub struct PodView<'a> {
    pub meta: &'a Value,
    pub spec: &'a Value,
    pub containers: Vec<Container<'a>>,
}

impl<'a> PodView<'a> {
    pub fn new(meta: &'a Value, spec: &'a Value) -> PodView<'a> {
        let mut containers = Vec::new();
        for key in ["initContainers", "containers", "ephemeralContainers"] {
            for c in spec
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
            {
                let name = c.get("name").and_then(Value::as_str).unwrap_or("");
                containers.push(Container { name, c });
            }
        }
        PodView {
            meta,
            spec,
            containers,
        }
    }

    /// `spec.securityContext`, when set.
    pub fn pod_sc(&self) -> Option<&'a Map<String, Value>> {
        obj(self.spec.get("securityContext"))
    }

    /// `spec.os.name` is `windows`.
    pub fn windows(&self) -> bool {
        self.spec
            .get("os")
            .and_then(|o| o.get("name"))
            .and_then(Value::as_str)
            == Some("windows")
    }

    /// The pod's annotations.
    pub fn annotations(&self) -> Option<&'a Map<String, Value>> {
        obj(self.meta.get("annotations"))
    }
}

/// The value as an object (`None` for absent or null).
pub fn obj(v: Option<&Value>) -> Option<&Map<String, Value>> {
    v.and_then(Value::as_object)
}

/// A boolean field (`None` for absent or null).
pub fn boolean(m: Option<&Map<String, Value>>, key: &str) -> Option<bool> {
    m?.get(key)?.as_bool()
}

/// A string field, empty when absent.
pub fn string<'a>(m: Option<&'a Map<String, Value>>, key: &str) -> &'a str {
    m.and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// kube's `joinQuote`: `"a", "b"`.
pub fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let inner: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", inner.join("\", \""))
}

/// `joinQuote` of a sorted set.
pub fn join_quote_set(items: &BTreeSet<String>) -> String {
    let v: Vec<&str> = items.iter().map(String::as_str).collect();
    join_quote(&v)
}

/// kube's `pluralize`.
pub fn pluralize(singular: &'static str, plural: &'static str, n: usize) -> &'static str {
    if n == 1 {
        singular
    } else {
        plural
    }
}

/// `container "a"` / `containers "a", "b"`.
pub fn containers_phrase<S: AsRef<str>>(names: &[S]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

pub use keelson_apimachinery::gofmt::go_quote;

pub type CheckFn = fn(&PodView<'_>) -> Option<Forbidden>;

/// One revision of a check.
pub struct Variant {
    /// The first minor version (`v1.<min>`) it applies to.
    pub min: u64,
    pub check: CheckFn,
    /// Baseline checks it replaces (restricted checks only).
    pub overrides: &'static [&'static str],
}

/// A check and its revisions (increasing `min`).
pub struct Check {
    pub id: &'static str,
    pub versions: &'static [Variant],
}

impl Check {
    fn at(&self, minor: u64) -> Option<&Variant> {
        self.versions.iter().rev().find(|v| v.min <= minor)
    }
}

const fn v(min: u64, check: CheckFn) -> Variant {
    Variant {
        min,
        check,
        overrides: &[],
    }
}

const fn over(min: u64, check: CheckFn, overrides: &'static [&'static str]) -> Variant {
    Variant {
        min,
        check,
        overrides,
    }
}

/// Baseline checks, in ID (byte) order.
pub const BASELINE: &[Check] = &[
    Check {
        id: "appArmorProfile",
        versions: &[v(0, profiles::app_armor_1_0)],
    },
    Check {
        id: "capabilities_baseline",
        versions: &[v(0, privilege::capabilities_baseline_1_0)],
    },
    Check {
        id: "hostNamespaces",
        versions: &[v(0, host::host_namespaces_1_0)],
    },
    Check {
        id: "hostPathVolumes",
        versions: &[v(0, volumes::host_path_volumes_1_0)],
    },
    Check {
        id: "hostPorts",
        versions: &[v(0, host::host_ports_1_0)],
    },
    Check {
        id: "hostProbesAndHostLifecycle",
        versions: &[v(34, host::host_probes_1_34)],
    },
    Check {
        id: "privileged",
        versions: &[v(0, privilege::privileged_1_0)],
    },
    Check {
        id: "procMount",
        versions: &[v(0, profiles::proc_mount_1_0)],
    },
    Check {
        id: "seLinuxOptions",
        versions: &[v(0, profiles::se_linux_1_0), v(31, profiles::se_linux_1_31)],
    },
    Check {
        id: "seccompProfile_baseline",
        versions: &[
            v(0, profiles::seccomp_baseline_1_0),
            v(19, profiles::seccomp_baseline_1_19),
        ],
    },
    Check {
        id: "sysctls",
        versions: &[
            v(0, profiles::sysctls_1_0),
            v(27, profiles::sysctls_1_27),
            v(29, profiles::sysctls_1_29),
            v(32, profiles::sysctls_1_32),
        ],
    },
    Check {
        id: "windowsHostProcess",
        versions: &[v(0, host::windows_host_process_1_0)],
    },
];

/// Restricted checks, in ID (byte) order.
pub const RESTRICTED: &[Check] = &[
    Check {
        id: "allowPrivilegeEscalation",
        versions: &[
            v(8, privilege::allow_privilege_escalation_1_8),
            v(25, privilege::allow_privilege_escalation_1_25),
        ],
    },
    Check {
        id: "capabilities_restricted",
        versions: &[
            over(
                22,
                privilege::capabilities_restricted_1_22,
                &["capabilities_baseline"],
            ),
            over(
                25,
                privilege::capabilities_restricted_1_25,
                &["capabilities_baseline"],
            ),
        ],
    },
    Check {
        id: "restrictedVolumes",
        versions: &[over(
            0,
            volumes::restricted_volumes_1_0,
            &["hostPathVolumes"],
        )],
    },
    Check {
        id: "runAsNonRoot",
        versions: &[v(0, privilege::run_as_non_root_1_0)],
    },
    Check {
        id: "runAsUser",
        versions: &[v(23, privilege::run_as_user_1_23)],
    },
    Check {
        id: "seccompProfile_restricted",
        versions: &[
            over(
                19,
                profiles::seccomp_restricted_1_19,
                &["seccompProfile_baseline"],
            ),
            over(
                25,
                profiles::seccomp_restricted_1_25,
                &["seccompProfile_baseline"],
            ),
        ],
    },
];

/// The newest minor version any check starts at: `latest` and newer
/// versions evaluate as this one.
pub fn newest() -> u64 {
    BASELINE
        .iter()
        .chain(RESTRICTED)
        .filter_map(|c| c.versions.last().map(|v| v.min))
        .max()
        .unwrap_or(0)
}

/// `EvaluatePod` + `AggregateCheckResults`: the refusals of the checks
/// `lv` runs, in kube's order (empty: allowed).
pub fn evaluate(lv: LevelVersion, pod: &PodView<'_>) -> Vec<Forbidden> {
    if lv.level == Level::Privileged {
        return Vec::new();
    }
    let minor = lv.version.effective(newest());
    let mut fns: Vec<CheckFn> = Vec::new();
    let restricted: Vec<&Variant> = if lv.level == Level::Restricted {
        RESTRICTED.iter().filter_map(|c| c.at(minor)).collect()
    } else {
        Vec::new()
    };
    for c in BASELINE {
        let overridden = restricted.iter().any(|r| r.overrides.contains(&c.id));
        if let (Some(var), false) = (c.at(minor), overridden) {
            fns.push(var.check);
        }
    }
    fns.extend(restricted.iter().map(|r| r.check));
    fns.iter().filter_map(|f| f(pod)).collect()
}

/// `ForbiddenDetail`: `reason (detail), reason, ...`.
pub fn detail(results: &[Forbidden]) -> String {
    let parts: Vec<String> = results
        .iter()
        .map(|r| {
            let reason = if r.reason.is_empty() {
                "unknown forbidden reason"
            } else {
                r.reason.as_str()
            };
            if r.detail.is_empty() {
                reason.to_string()
            } else {
                format!("{reason} ({})", r.detail)
            }
        })
        .collect();
    parts.join(", ")
}

/// `ForbiddenReason`: the reasons alone.
pub fn reasons(results: &[Forbidden]) -> String {
    let parts: Vec<&str> = results.iter().map(|r| r.reason.as_str()).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_are_in_kube_order() {
        for list in [BASELINE, RESTRICTED] {
            let ids: Vec<&str> = list.iter().map(|c| c.id).collect();
            let mut sorted = ids.clone();
            sorted.sort();
            assert_eq!(ids, sorted);
            for c in list {
                assert!(c.versions.windows(2).all(|w| w[0].min < w[1].min));
            }
        }
        assert_eq!(newest(), 34);
        assert_eq!(go_quote("a\"b\n"), r#""a\"b\n""#);
    }
}
