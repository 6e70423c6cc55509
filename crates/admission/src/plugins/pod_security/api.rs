//! Pod Security levels, policy versions and the namespace labels that
//! choose them (`k8s.io/pod-security-admission/api`).

use std::fmt;

use keelson_apimachinery::FieldError;
use serde_json::Value;

/// A Pod Security Standard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    /// `ParseLevel`: an unknown value is restricted, with kube's error.
    pub fn parse(s: &str) -> Result<Level, (Level, &'static str)> {
        match s {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err((
                Level::Restricted,
                "must be one of privileged, baseline, restricted",
            )),
        }
    }

    fn strictness(self) -> u8 {
        match self {
            Level::Privileged => 0,
            Level::Baseline => 1,
            Level::Restricted => 2,
        }
    }
}

/// A policy version: `latest` or `v1.<minor>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    Latest,
    Minor(u64),
}

impl Version {
    /// `ParseVersion`: anything but `latest` or `v1.x` is latest, with
    /// kube's error.
    pub fn parse(s: &str) -> Result<Version, (Version, &'static str)> {
        const BAD: &str = r#"must be "latest" or "v1.x""#;
        if s == "latest" {
            return Ok(Version::Latest);
        }
        let Some(minor) = s.strip_prefix("v1.") else {
            return Err((Version::Latest, BAD));
        };
        let digits = !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit());
        if !digits || (minor.len() > 1 && minor.starts_with('0')) {
            return Err((Version::Latest, BAD));
        }
        // Go's Atoi: more than an int64 is an error.
        match minor.parse::<i64>() {
            Ok(n) => Ok(Version::Minor(n.unsigned_abs())),
            Err(_) => Err((Version::Latest, BAD)),
        }
    }

    /// The minor version whose checks apply, `latest` being `newest`.
    pub fn effective(self, newest: u64) -> u64 {
        match self {
            Version::Latest => newest,
            Version::Minor(m) => m.min(newest),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Latest => f.write_str("latest"),
            Version::Minor(m) => write!(f, "v1.{m}"),
        }
    }
}

/// A level at a version (`restricted:latest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl LevelVersion {
    /// `privileged:latest`, kube's default for every mode.
    pub const PRIVILEGED: LevelVersion = LevelVersion {
        level: Level::Privileged,
        version: Version::Latest,
    };

    /// Both privileged, or the same level and version.
    fn equivalent(&self, other: &LevelVersion) -> bool {
        (self.level == Level::Privileged && other.level == Level::Privileged) || self == other
    }
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.as_str(), self.version)
    }
}

/// What the three modes evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            enforce: LevelVersion::PRIVILEGED,
            audit: LevelVersion::PRIVILEGED,
            warn: LevelVersion::PRIVILEGED,
        }
    }
}

impl Policy {
    /// Every mode privileged.
    pub fn fully_privileged(&self) -> bool {
        [self.enforce, self.audit, self.warn]
            .iter()
            .all(|lv| lv.level == Level::Privileged)
    }

    /// Every mode equivalent.
    pub fn equivalent(&self, other: &Policy) -> bool {
        self.enforce.equivalent(&other.enforce)
            && self.audit.equivalent(&other.audit)
            && self.warn.equivalent(&other.warn)
    }
}

const PREFIX: &str = "pod-security.kubernetes.io/";
pub const ENFORCE: &str = "pod-security.kubernetes.io/enforce";
pub const ENFORCE_VERSION: &str = "pod-security.kubernetes.io/enforce-version";
pub const AUDIT: &str = "pod-security.kubernetes.io/audit";
pub const AUDIT_VERSION: &str = "pod-security.kubernetes.io/audit-version";
pub const WARN: &str = "pod-security.kubernetes.io/warn";
pub const WARN_VERSION: &str = "pod-security.kubernetes.io/warn-version";

/// The object's `metadata.labels` that are strings.
pub fn label<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("labels")?.get(key)?.as_str()
}

/// Whether the object has any Pod Security label (a quick way out).
pub fn has_labels(obj: &Value) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .is_some_and(|l| l.keys().any(|k| k.starts_with(PREFIX)))
}

fn invalid(key: &str, value: &str, msg: &str) -> FieldError {
    FieldError::invalid(&format!("metadata.labels[{key}]"), value, msg)
}

/// `PolicyToEvaluate`: the namespace's labels over `defaults`, with the
/// errors of the values that do not parse (an enforce level that does not
/// parse is restricted; audit and warn fail open to privileged; a version
/// that does not parse is latest). Warn follows a stricter enforce level
/// set by label when it has no label of its own.
pub fn policy_to_evaluate(ns: &Value, defaults: &Policy) -> (Policy, Vec<FieldError>) {
    let mut p = *defaults;
    let mut errs = Vec::new();
    if !has_labels(ns) {
        return (p, errs);
    }
    let mut has_enforce_level = false;
    if let Some(v) = label(ns, ENFORCE) {
        match Level::parse(v) {
            Ok(l) => {
                p.enforce.level = l;
                has_enforce_level = true;
            }
            Err((l, msg)) => {
                p.enforce.level = l;
                errs.push(invalid(ENFORCE, v, msg));
            }
        }
    }
    if let Some(v) = label(ns, ENFORCE_VERSION) {
        p.enforce.version = parse_version(v, ENFORCE_VERSION, &mut errs);
    }
    if let Some(v) = label(ns, AUDIT) {
        p.audit.level = parse_open_level(v, AUDIT, &mut errs);
    }
    if let Some(v) = label(ns, AUDIT_VERSION) {
        p.audit.version = parse_version(v, AUDIT_VERSION, &mut errs);
    }
    let has_warn_level = label(ns, WARN).is_some();
    if let Some(v) = label(ns, WARN) {
        p.warn.level = parse_open_level(v, WARN, &mut errs);
    }
    let has_warn_version = label(ns, WARN_VERSION).is_some();
    if let Some(v) = label(ns, WARN_VERSION) {
        p.warn.version = parse_version(v, WARN_VERSION, &mut errs);
    }
    if !has_warn_level
        && has_enforce_level
        && p.enforce.level.strictness() > p.warn.level.strictness()
    {
        p.warn.level = p.enforce.level;
        if !has_warn_version {
            p.warn.version = p.enforce.version;
        }
    }
    (p, errs)
}

fn parse_open_level(v: &str, key: &str, errs: &mut Vec<FieldError>) -> Level {
    Level::parse(v).unwrap_or_else(|(_, msg)| {
        errs.push(invalid(key, v, msg));
        Level::Privileged
    })
}

fn parse_version(v: &str, key: &str, errs: &mut Vec<FieldError>) -> Version {
    Version::parse(v).unwrap_or_else(|(ver, msg)| {
        errs.push(invalid(key, v, msg));
        ver
    })
}

/// `CompareLevels(a, b) < 1`: `a` is no stricter than `b`.
pub fn no_stricter(a: Level, b: Level) -> bool {
    a.strictness() <= b.strictness()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_kube() {
        assert_eq!(Version::parse("latest"), Ok(Version::Latest));
        assert_eq!(Version::parse("v1.0"), Ok(Version::Minor(0)));
        assert_eq!(Version::parse("v1.25"), Ok(Version::Minor(25)));
        for bad in ["v1.01", "1.25", "v2.1", "v1.", "v1.x", "", "v1.-1"] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Version::Minor(40).effective(34), 34);
        assert_eq!(Version::Minor(3).to_string(), "v1.3");
    }
}
