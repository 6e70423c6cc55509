//! batch: Job, CronJob (`pkg/apis/batch/validation`).

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::util::{go_map, validate_label_selector, Selector};
use super::util::{immutable, int_of, invalid_omit, list_of, nonnegative, obj_of, str_of};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if !w.subresource.is_empty() {
        // Status rules (ValidateJobUpdateStatus, ...) are not implemented.
        return Vec::new();
    }
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let old_spec = w.old().map(|o| o.get("spec").unwrap_or(&Value::Null));
    let p = Path::new("spec");
    match kind {
        "Job" => {
            let mut errs = validate_job_spec(spec, &p, w, true);
            if w.old().is_none() {
                errs.extend(indexed_hostname(obj, spec));
            }
            if let (Some(old), Some(old_obj)) = (old_spec, w.old()) {
                errs.extend(validate_job_spec_update(spec, old, old_obj, &p));
            }
            errs
        }
        "CronJob" => {
            let mut errs = validate_cron_job_spec(spec, old_spec, &p, w);
            let name = obj.get("metadata").map(|m| str_of(m, "name")).unwrap_or("");
            if w.old().is_none() && name.len() > 52 {
                errs.push(FieldError::invalid(
                    "metadata.name",
                    name,
                    "must be no more than 52 characters",
                ));
            }
            errs
        }
        _ => Vec::new(),
    }
}

fn template_labels(template: &Value) -> Option<&Map<String, Value>> {
    template.get("metadata").and_then(|m| obj_of(m, "labels"))
}

/// kube's `ValidateJob` tail: an Indexed Job's last pod hostname must be
/// a DNS label.
fn indexed_hostname(obj: &Value, spec: &Value) -> Vec<FieldError> {
    let completions = int_of(spec, "completions").unwrap_or(0);
    if str_of(spec, "completionMode") != "Indexed" || completions <= 0 {
        return Vec::new();
    }
    let name = obj.get("metadata").map(|m| str_of(m, "name")).unwrap_or("");
    let host = format!("{name}-{}", completions - 1);
    if keelson_apimachinery::names::is_dns1123_label(&host).is_empty() {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "metadata.name",
        name,
        &format!("will not able to create pod with invalid DNS label: {host}"),
    )]
}

/// kube's `ValidateJobSpec` (with `validateJobSpec`).
fn validate_job_spec(spec: &Value, p: &Path, w: Write<'_>, job: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for f in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        if let Some(n) = int_of(spec, f) {
            errs.extend(nonnegative(n, &p.child(f)));
        }
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    let indexed = mode == Some("Indexed");
    let completions = int_of(spec, "completions");
    let parallelism = int_of(spec, "parallelism");
    let per_index = int_of(spec, "backoffLimitPerIndex");
    let max_failed = int_of(spec, "maxFailedIndexes");
    let mfp = p.child("maxFailedIndexes");
    if let Some(n) = per_index {
        errs.extend(nonnegative(n, &p.child("backoffLimitPerIndex")));
    }
    if let Some(n) = max_failed {
        errs.extend(nonnegative(n, &mfp));
        if per_index.is_none() {
            errs.push(FieldError::required(
                p.child("backoffLimitPerIndex").as_str(),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    if let Some(m) = spec.get("managedBy").and_then(Value::as_str) {
        let mp = p.child("managedBy");
        errs.extend(domain_prefixed_path(m, &mp));
        if m.len() > MAX_MANAGED_BY_LENGTH {
            errs.push(FieldError::too_long(
                mp.as_str(),
                &format!("may not be more than {MAX_MANAGED_BY_LENGTH} bytes"),
            ));
        }
    }
    if let Some(m) = mode {
        if m != "NonIndexed" && m != "Indexed" {
            errs.push(FieldError::not_supported(
                p.child("completionMode").as_str(),
                m,
                &["NonIndexed", "Indexed"],
            ));
        }
        if indexed {
            errs.extend(indexed_job_limits(
                p,
                completions,
                parallelism,
                per_index,
                max_failed,
            ));
        }
    }
    if matches!(mode, None | Some("NonIndexed")) {
        if let Some(n) = per_index {
            errs.push(FieldError::invalid(
                p.child("backoffLimitPerIndex").as_str(),
                n,
                "requires indexed completion mode",
            ));
        }
        if let Some(n) = max_failed {
            errs.push(FieldError::invalid(
                mfp.as_str(),
                n,
                "requires indexed completion mode",
            ));
        }
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    let pfp = spec.get("podFailurePolicy").filter(|v| v.is_object());
    if let Some(pfp) = pfp {
        errs.extend(validate_pod_failure_policy(
            spec,
            pfp,
            template,
            &p.child("podFailurePolicy"),
        ));
    }
    if let Some(sp) = spec.get("successPolicy").filter(|v| v.is_object()) {
        let spp = p.child("successPolicy");
        if indexed {
            errs.extend(validate_success_policy(sp, completions, &spp));
        } else {
            errs.push(FieldError::invalid(
                spp.as_str(),
                success_policy_value(sp),
                "requires indexed completion mode",
            ));
        }
    }
    errs.extend(validate_pod_replacement_policy(
        spec,
        pfp.is_some(),
        &p.child("podReplacementPolicy"),
    ));
    let tp = p.child("template");
    errs.extend(super::core_pod::validate_pod_template_spec(
        template, &tp, w,
    ));
    let rp_path = tp.child("spec").child("restartPolicy");
    let rp = template
        .get("spec")
        .map(|s| str_of(s, "restartPolicy"))
        .unwrap_or("");
    if rp == "Always" || rp.is_empty() {
        errs.push(FieldError::required(
            rp_path.as_str(),
            "valid values: \"OnFailure\", \"Never\"",
        ));
    } else if rp != "OnFailure" && rp != "Never" {
        errs.push(FieldError::not_supported(
            rp_path.as_str(),
            rp,
            &["OnFailure", "Never"],
        ));
    } else if pfp.is_some() && rp != "Never" {
        errs.push(FieldError::invalid(
            rp_path.as_str(),
            rp,
            "only \"Never\" is supported when podFailurePolicy is specified",
        ));
    }
    if !job {
        return errs;
    }
    // The selector: kube generates it (with the controller-uid label) when
    // manualSelector is not set, so a missing one only matters when manual.
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    let sel = spec.get("selector").filter(|s| s.is_object());
    match sel {
        None if manual => errs.push(FieldError::required(p.child("selector").as_str(), "")),
        None => {}
        Some(s) => {
            errs.extend(validate_label_selector(
                Some(s),
                false,
                &p.child("selector"),
            ));
            if let Ok(selector) = Selector::of(Some(s)) {
                if !selector.matches(template_labels(template)) {
                    errs.push(FieldError::invalid(
                        tp.child("metadata").child("labels").as_str(),
                        template_labels(template)
                            .map_or(Value::Null, |l| go_map(&Value::Object(l.clone()))),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
        }
    }
    errs
}

/// The largest `parallelism` of an Indexed Job.
const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;
/// The largest `maxFailedIndexes` of an Indexed Job.
const MAX_FAILED_INDEXES_FOR_INDEXED_JOB: i64 = 100_000;
/// Above this many completions, a Job with a per-index backoff limit has
/// the tighter limits below.
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;
/// The longest `spec.managedBy`.
const MAX_MANAGED_BY_LENGTH: usize = 63;
/// The most `successPolicy.rules`.
const MAX_SUCCESS_POLICY_RULES: usize = 20;
/// The longest `succeededIndexes` of a success policy rule.
const MAX_SUCCEEDED_INDEXES_LENGTH: usize = 64 * 1024;
/// The most `onPodConditions` patterns of a pod failure policy rule.
const MAX_ON_POD_CONDITIONS_PATTERNS: usize = 20;

/// kube's `validateJobSpec` checks of an Indexed Job's sizes.
fn indexed_job_limits(
    p: &Path,
    completions: Option<i64>,
    parallelism: Option<i64>,
    per_index: Option<i64>,
    max_failed: Option<i64>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (pp, mfp) = (p.child("parallelism"), p.child("maxFailedIndexes"));
    if completions.is_none() {
        errs.push(FieldError::required(
            p.child("completions").as_str(),
            "when completion mode is Indexed",
        ));
    }
    if let Some(n) = parallelism.filter(|&n| n > MAX_PARALLELISM_FOR_INDEXED_JOB) {
        errs.push(FieldError::invalid(
            pp.as_str(),
            n,
            &format!(
                "must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"
            ),
        ));
    }
    if let (Some(c), Some(m)) = (completions, max_failed) {
        if m > c {
            errs.push(FieldError::invalid(
                mfp.as_str(),
                m,
                "must be less than or equal to completions",
            ));
        }
    }
    if let Some(m) = max_failed.filter(|&m| m > MAX_FAILED_INDEXES_FOR_INDEXED_JOB) {
        errs.push(FieldError::invalid(
            mfp.as_str(),
            m,
            &format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}"),
        ));
    }
    if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index.is_some() {
        let high = format!(
            "when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        );
        if max_failed.is_none() {
            errs.push(FieldError::required(
                mfp.as_str(),
                &format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
            ));
        }
        if let Some(n) = parallelism.filter(|&n| n > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS) {
            errs.push(FieldError::invalid(
                pp.as_str(),
                n,
                &format!(
                    "must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {high}"
                ),
            ));
        }
        if let Some(m) = max_failed.filter(|&m| m > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS) {
            errs.push(FieldError::invalid(
                mfp.as_str(),
                m,
                &format!(
                    "must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {high}"
                ),
            ));
        }
    }
    errs
}

/// apimachinery's `IsDomainPrefixedPath`: `host/path`, the host a DNS
/// subdomain, the path HTTP path characters.
fn domain_prefixed_path(v: &str, p: &Path) -> Vec<FieldError> {
    if v.is_empty() {
        return vec![FieldError::required(p.as_str(), "")];
    }
    let Some((host, rest)) = v
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        return vec![FieldError::invalid(
            p.as_str(),
            v,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errs = super::util::dns1123_subdomain(host, p);
    const HTTP_PATH_FMT: &str = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+";
    let path_ok = rest
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c));
    if !path_ok {
        errs.push(FieldError::invalid(
            p.as_str(),
            rest,
            &format!("Invalid path (regex used for validation is '{HTTP_PATH_FMT}')"),
        ));
    }
    errs
}

/// A `successPolicy` as kube prints it: rules with `succeededIndexes`,
/// then `succeededCount`.
fn success_policy_value(sp: &Value) -> Value {
    let mut v = super::util::go_struct(sp, &["rules"]);
    if let Some(Value::Array(rules)) = v.get_mut("rules") {
        for r in rules.iter_mut() {
            *r = super::util::go_struct(r, &["succeededIndexes", "succeededCount"]);
        }
    }
    v
}

/// kube's `validateSuccessPolicy` (with `validateSuccessPolicyRule`). The
/// index checks need `completions` (required for an Indexed Job, reported
/// there); without it they are skipped.
fn validate_success_policy(sp: &Value, completions: Option<i64>, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules_path = p.child("rules");
    let rules = list_of(sp, "rules");
    if rules.is_empty() {
        errs.push(FieldError::required(
            rules_path.as_str(),
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() > MAX_SUCCESS_POLICY_RULES {
        errs.push(too_many(&rules_path, rules.len(), MAX_SUCCESS_POLICY_RULES));
    }
    for (i, rule) in rules.iter().enumerate() {
        let rp = rules_path.index(i);
        let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
        let count = int_of(rule, "succeededCount");
        if indexes.is_none() && count.is_none() {
            errs.push(FieldError::required(
                rp.as_str(),
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(ix) = indexes {
            let ip = rp.child("succeededIndexes");
            if ix.len() > MAX_SUCCEEDED_INDEXES_LENGTH {
                errs.push(FieldError::too_long(
                    ip.as_str(),
                    &format!("may not be more than {MAX_SUCCEEDED_INDEXES_LENGTH} bytes"),
                ));
            }
            if let Some(c) = completions {
                match indexes_total(ix, c) {
                    Ok(n) => total = n,
                    Err(e) => errs.push(FieldError::invalid(
                        ip.as_str(),
                        ix,
                        &format!("error parsing succeededIndexes: {e}"),
                    )),
                }
            }
        }
        if let Some(n) = count {
            let cp = rp.child("succeededCount");
            errs.extend(nonnegative(n, &cp));
            if let Some(c) = completions.filter(|&c| n > c) {
                errs.push(FieldError::invalid(
                    cp.as_str(),
                    n,
                    &format!(
                        "must be less than or equal to {c} (the number of specified completions)"
                    ),
                ));
            }
            if indexes.is_some() && completions.is_some() && n > total {
                errs.push(FieldError::invalid(
                    cp.as_str(),
                    n,
                    &format!("must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"),
                ));
            }
        }
    }
    errs
}

/// kube's `validateIndexesFormat`: the number of indexes in an ordered
/// list of `x` and `x-y` intervals below `completions`.
fn indexes_total(s: &str, completions: i64) -> Result<i64, String> {
    if s.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in s.split(',') {
        let (x, y) = index_interval(interval, completions)?;
        if let Some(l) = last.filter(|&l| l >= x) {
            return Err(format!("non-increasing order, previous: {l}, current: {x}"));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// kube's `parseIndexInterval`.
fn index_interval(s: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = s.split('-').collect();
    if limits.len() > 2 {
        return Err(format!("the fragment {s:?} violates the requirement that an index interval can have at most two parts separated by '-'"));
    }
    let parse = |t: &str| -> Result<i64, String> {
        let n = go_atoi(t)
            .ok_or_else(|| format!("cannot convert string to integer for index: {t:?}"))?;
        if n >= completions {
            return Err(format!("too large index: {t:?}"));
        }
        Ok(n)
    };
    let x = parse(limits[0])?;
    match limits.get(1) {
        None => Ok((x, x)),
        Some(t) => {
            let y = parse(t)?;
            if x >= y {
                return Err(format!("non-increasing order, previous: {x}, current: {y}"));
            }
            Ok((x, y))
        }
    }
}

/// Go's `strconv.Atoi`: an optional sign, then decimal digits.
fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// kube's `validatePodReplacementPolicy`: only `Failed` with a pod
/// failure policy.
fn validate_pod_replacement_policy(spec: &Value, pfp: bool, p: &Path) -> Vec<FieldError> {
    let Some(v) = spec.get("podReplacementPolicy").and_then(Value::as_str) else {
        return Vec::new();
    };
    if pfp {
        if v != "Failed" {
            return vec![FieldError::not_supported(p.as_str(), v, &["Failed"])];
        }
    } else if v != "Failed" && v != "TerminatingOrFailed" {
        return vec![FieldError::not_supported(
            p.as_str(),
            v,
            &["Failed", "TerminatingOrFailed"],
        )];
    }
    Vec::new()
}

/// `Too many: <n>: must have at most <max> items`.
fn too_many(p: &Path, n: usize, max: usize) -> FieldError {
    FieldError {
        kind: keelson_apimachinery::FieldErrorKind::TooMany,
        field: p.as_str().to_string(),
        value: Some(Value::from(n)),
        detail: format!("must have at most {max} items"),
    }
}

/// kube's `validatePodFailurePolicy`.
fn validate_pod_failure_policy(
    spec: &Value,
    pfp: &Value,
    template: &Value,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules_path = p.child("rules");
    let rules = list_of(pfp, "rules");
    if rules.len() > 20 {
        errs.push(too_many(&rules_path, rules.len(), 20));
    }
    let pod = template.get("spec").unwrap_or(&Value::Null);
    let names: Vec<&str> = list_of(pod, "containers")
        .iter()
        .chain(list_of(pod, "initContainers"))
        .map(|c| str_of(c, "name"))
        .collect();
    const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
    for (i, rule) in rules.iter().enumerate() {
        let rp = rules_path.index(i);
        let ap = rp.child("action");
        match str_of(rule, "action") {
            "" => errs.push(FieldError::required(
                ap.as_str(),
                "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            )),
            "FailIndex" if int_of(spec, "backoffLimitPerIndex").is_none() => {
                errs.push(FieldError::invalid(
                    ap.as_str(),
                    "FailIndex",
                    "requires the backoffLimitPerIndex to be set",
                ))
            }
            "FailIndex" => {}
            a if !ACTIONS.contains(&a) => {
                errs.push(FieldError::not_supported(ap.as_str(), a, &ACTIONS))
            }
            _ => {}
        }
        let on_exit = rule.get("onExitCodes").filter(|v| v.is_object());
        let on_conds = list_of(rule, "onPodConditions");
        if let Some(oe) = on_exit {
            let op = rp.child("onExitCodes");
            let operator = str_of(oe, "operator");
            match operator {
                "" => errs.push(FieldError::required(
                    op.child("operator").as_str(),
                    "valid values: [\"In\" \"NotIn\"]",
                )),
                "In" | "NotIn" => {}
                o => errs.push(FieldError::not_supported(
                    op.child("operator").as_str(),
                    o,
                    &["In", "NotIn"],
                )),
            }
            if let Some(c) = oe.get("containerName").and_then(Value::as_str) {
                if !names.contains(&c) {
                    errs.push(FieldError::invalid(
                        op.child("containerName").as_str(),
                        c,
                        "must be one of the container or initContainer names in the pod template",
                    ));
                }
            }
            let vp = op.child("values");
            let values: Vec<i64> = list_of(oe, "values")
                .iter()
                .filter_map(Value::as_i64)
                .collect();
            if values.is_empty() {
                errs.push(FieldError::invalid(
                    vp.as_str(),
                    Value::Array(Vec::new()),
                    "at least one value is required",
                ));
            } else if values.len() > 255 {
                errs.push(too_many(&vp, values.len(), 255));
            }
            let mut seen = Vec::new();
            for (j, &v) in values.iter().enumerate() {
                let p = vp.index(j);
                if operator == "In" && v == 0 {
                    errs.push(FieldError::invalid(
                        p.as_str(),
                        v,
                        "must not be 0 for the In operator",
                    ));
                }
                if seen.contains(&v) {
                    errs.push(FieldError {
                        kind: keelson_apimachinery::FieldErrorKind::Duplicate,
                        field: p.as_str().to_string(),
                        value: Some(Value::from(v)),
                        detail: String::new(),
                    });
                } else {
                    seen.push(v);
                }
            }
            if values.windows(2).any(|w| w[0] > w[1]) {
                errs.push(FieldError::invalid(
                    vp.as_str(),
                    Value::from(values.clone()),
                    "must be ordered",
                ));
            }
        }
        if on_conds.len() > MAX_ON_POD_CONDITIONS_PATTERNS {
            errs.push(too_many(
                &rp.child("onPodConditions"),
                on_conds.len(),
                MAX_ON_POD_CONDITIONS_PATTERNS,
            ));
        }
        for (j, c) in on_conds.iter().enumerate() {
            let cp = rp.child("onPodConditions").index(j);
            // `ValidateQualifiedName`: an empty type is two `Invalid`s
            // (`name part must be non-empty` and the pattern), no
            // `Required`.
            let t = str_of(c, "type");
            for msg in keelson_apimachinery::names::is_qualified_name(t) {
                errs.push(FieldError::invalid(cp.child("type").as_str(), t, &msg));
            }
            match str_of(c, "status") {
                "" => errs.push(FieldError::required(
                    cp.child("status").as_str(),
                    "valid values: [\"False\" \"True\" \"Unknown\"]",
                )),
                "False" | "True" | "Unknown" => {}
                s => errs.push(FieldError::not_supported(
                    cp.child("status").as_str(),
                    s,
                    &["False", "True", "Unknown"],
                )),
            }
        }
        if on_exit.is_some() && !on_conds.is_empty() {
            errs.push(invalid_omit(
                &rp,
                "specifying both OnExitCodes and OnPodConditions is not supported",
            ));
        }
        if on_exit.is_none() && on_conds.is_empty() {
            errs.push(invalid_omit(
                &rp,
                "specifying one of OnExitCodes and OnPodConditions is required",
            ));
        }
    }
    errs
}

/// kube's `ValidateJobSpecUpdate` (the immutable fields).
fn validate_job_spec_update(
    spec: &Value,
    old: &Value,
    old_obj: &Value,
    p: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // completions: immutable except for Indexed Jobs changed with parallelism.
    let cp = p.child("completions");
    let indexed = str_of(spec, "completionMode") == "Indexed";
    if !indexed {
        errs.extend(immutable(
            spec.get("completions"),
            old.get("completions"),
            &cp,
        ));
    } else if let Some(c) = int_of(spec, "completions") {
        if Some(c) != int_of(old, "completions") && Some(c) != int_of(spec, "parallelism") {
            errs.push(FieldError::invalid(
                cp.as_str(),
                c,
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    }
    errs.extend(immutable(
        spec.get("selector"),
        old.get("selector"),
        &p.child("selector"),
    ));
    // The template: a suspended Job that never started may change its
    // scheduling directives, labels and annotations.
    let null = Value::Null;
    let new_t = spec.get("template").unwrap_or(&null);
    let old_t = old.get("template").unwrap_or(&null);
    let suspended = old.get("suspend").and_then(Value::as_bool) == Some(true);
    let started = old_obj
        .get("status")
        .is_some_and(|s| s.get("startTime").is_some_and(|v| !v.is_null()));
    let mutable_scheduling = suspended && !started;
    let strip = |t: &Value| -> Value {
        let mut t = t.clone();
        if let (true, Some(o)) = (mutable_scheduling, t.as_object_mut()) {
            if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("labels");
                m.remove("annotations");
            }
            if let Some(s) = o.get_mut("spec").and_then(Value::as_object_mut) {
                for f in ["nodeSelector", "tolerations", "schedulingGates", "affinity"] {
                    s.remove(f);
                }
            }
            if o.get("metadata")
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty)
            {
                o.remove("metadata");
            }
        }
        t
    };
    if super::util::semantic(&strip(new_t)) != super::util::semantic(&strip(old_t)) {
        errs.push(FieldError::invalid(
            p.child("template").as_str(),
            new_t.clone(),
            "field is immutable",
        ));
    }
    for f in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        errs.extend(immutable(spec.get(f), old.get(f), &p.child(f)));
    }
    errs
}

/// kube's `validateCronJobSpec`.
fn validate_cron_job_spec(
    spec: &Value,
    old: Option<&Value>,
    p: &Path,
    w: Write<'_>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schedule = str_of(spec, "schedule");
    let sp = p.child("schedule");
    let tz = spec.get("timeZone").and_then(Value::as_str);
    if schedule.is_empty() {
        errs.push(FieldError::required(sp.as_str(), ""));
    } else {
        if let Err(e) = parse_standard_cron(schedule) {
            errs.push(FieldError::invalid(sp.as_str(), schedule, &e));
        }
        let allow_tz = old.is_some_and(|o| str_of(o, "schedule").contains("TZ"));
        if allow_tz && schedule.contains("TZ") && tz.is_some() {
            errs.push(FieldError::invalid(
                sp.as_str(),
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        } else if !allow_tz && schedule.contains("TZ") {
            errs.push(FieldError::invalid(
                sp.as_str(),
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    if let Some(n) = int_of(spec, "startingDeadlineSeconds") {
        errs.extend(nonnegative(n, &p.child("startingDeadlineSeconds")));
    }
    let old_tz = old.and_then(|o| o.get("timeZone")).and_then(Value::as_str);
    if old.is_none() || old_tz != tz {
        if let Some(tz) = tz {
            errs.extend(validate_time_zone(tz, &p.child("timeZone")));
        }
    }
    let cp = p.child("concurrencyPolicy");
    match str_of(spec, "concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required(cp.as_str(), "")),
        other => errs.push(FieldError::not_supported(
            cp.as_str(),
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    // ValidateJobTemplateSpec: the job spec at spec.jobTemplate.spec.
    let jt = spec.get("jobTemplate").unwrap_or(&Value::Null);
    let jp = p.child("jobTemplate");
    let js = jt.get("spec").unwrap_or(&Value::Null);
    let jsp = jp.child("spec");
    errs.extend(validate_job_spec(js, &jsp, w, false));
    if let Some(sel) = js.get("selector").filter(|v| !v.is_null()) {
        errs.push(FieldError::invalid(
            jsp.child("selector").as_str(),
            super::util::go_selector(sel),
            "`selector` will be auto-generated",
        ));
    }
    if js.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::not_supported(
            jsp.child("manualSelector").as_str(),
            true,
            &["nil", "false"],
        ));
    }
    for f in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        if let Some(n) = int_of(spec, f) {
            errs.extend(nonnegative(n, &p.child(f)));
        }
    }
    errs
}

/// kube's `validateTimeZone`.
fn validate_time_zone(tz: &str, p: &Path) -> Vec<FieldError> {
    if tz.is_empty() {
        return vec![FieldError::invalid(
            p.as_str(),
            tz,
            "timeZone must be nil or non-empty string",
        )];
    }
    let part_ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 14
            && s != "."
            && s != ".."
            && !s.starts_with('-')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
    };
    if !tz.split('/').all(part_ok) {
        return vec![FieldError::invalid(
            p.as_str(),
            tz,
            &format!("unknown time zone {tz}"),
        )];
    }
    let mut errs = Vec::new();
    if tz.eq_ignore_ascii_case("local") {
        errs.push(FieldError::invalid(
            p.as_str(),
            tz,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
        return errs;
    }
    if !time_zone_known(tz) {
        errs.push(FieldError::invalid(
            p.as_str(),
            tz,
            &format!("unknown time zone {tz}"),
        ));
    }
    errs
}

/// Whether `tz` names an IANA zone: the host's zoneinfo when it has one
/// (kube-apiserver embeds the database); without one, every name passes.
fn time_zone_known(tz: &str) -> bool {
    if tz == "UTC" {
        return true;
    }
    let dir = std::path::Path::new("/usr/share/zoneinfo");
    if !dir.is_dir() {
        return true;
    }
    dir.join(tz).is_file()
}

/// robfig/cron v3's `ParseStandard`: five fields or a descriptor; the
/// error text is the parser's.
pub(crate) fn parse_standard_cron(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let i = spec.find(' ').unwrap_or(spec.len());
        let eq = spec.find('=').unwrap_or(0);
        let loc = &spec[eq + 1..i];
        if !time_zone_known(loc) || loc.is_empty() {
            return Err(format!(
                "provided bad location {loc}: unknown time zone {loc}"
            ));
        }
        spec = spec[i..].trim();
    }
    if spec.starts_with('@') {
        return match spec {
            "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight"
            | "@hourly" => Ok(()),
            _ => match spec.strip_prefix("@every ") {
                Some(d) if go_duration_ok(d) => Ok(()),
                Some(d) => Err(format!(
                    "failed to parse duration {spec}: time: invalid duration {d:?}"
                )),
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(u64, u64, &[&str], u64); 5] = [
        (0, 59, &[], 0),
        (0, 23, &[], 0),
        (1, 31, &[], 0),
        (1, 12, &MONTHS, 1),
        (0, 6, &DAYS, 0),
    ];
    for (field, (min, max, names, base)) in fields.iter().zip(bounds) {
        for expr in field.split(',') {
            cron_range(expr, min, max, names, base)?;
        }
    }
    Ok(())
}

fn cron_int(expr: &str) -> Result<u64, String> {
    let n: i64 = match expr.parse() {
        Ok(n) => n,
        Err(e) => {
            let why = match e.kind() {
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                    "value out of range"
                }
                _ => "invalid syntax",
            };
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: {why}"
            ));
        }
    };
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    Ok(n as u64)
}

fn cron_range(expr: &str, min: u64, max: u64, names: &[&str], base: u64) -> Result<(), String> {
    let range_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let name_or_int = |s: &str| -> Result<u64, String> {
        let lower = s.to_ascii_lowercase();
        match names.iter().position(|n| *n == lower) {
            Some(i) => Ok(i as u64 + base),
            None => cron_int(s),
        }
    };
    let (start, mut end) = if low_high[0] == "*" || low_high[0] == "?" {
        (min, max)
    } else {
        let start = name_or_int(low_high[0])?;
        let end = match low_high.len() {
            1 => start,
            2 => name_or_int(low_high[1])?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_step.len() {
        1 => 1,
        2 => {
            let step = cron_int(range_step[1])?;
            if single {
                end = max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Err(format!(
            "end of range ({end}) above maximum ({max}): {expr}"
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// Whether `s` parses as a Go `time.Duration` (`1h30m`, `90s`, `1.5h`).
fn go_duration_ok(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        if i == start || &s[start..i] == "." {
            return false;
        }
        let unit_start = i;
        while i < b.len() && !(b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        if !matches!(
            &s[unit_start..i],
            "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h"
        ) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::parse_standard_cron;

    #[test]
    fn cron_like_robfig() {
        for ok in [
            "*/5 * * * *",
            "0 0 * * 0",
            "0 9-17 * * mon-fri",
            "@hourly",
            "@every 1h30m",
            "15 3 1,15 JAN-jun ?",
        ] {
            assert_eq!(parse_standard_cron(ok), Ok(()), "{ok}");
        }
        let err = |s| parse_standard_cron(s).unwrap_err();
        assert_eq!(err("bad"), "expected exactly 5 fields, found 1: [bad]");
        assert_eq!(
            err("60 * * * *"),
            "end of range (60) above maximum (59): 60"
        );
        assert_eq!(err("* * * * 7"), "end of range (7) above maximum (6): 7");
        assert_eq!(
            err("x * * * *"),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(err("@often"), "unrecognized descriptor: @often");
        assert_eq!(
            err("5-1 * * * *"),
            "beginning of range (5) beyond end of range (1): 5-1"
        );
    }
}
