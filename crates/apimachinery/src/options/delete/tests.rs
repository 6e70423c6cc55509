use super::*;

fn parse(query: &str, body: &str) -> ApiResult<DeleteOptions> {
    DeleteOptions::from_request(&Query::parse(Some(query)), body.as_bytes())
}

fn msg(query: &str, body: &str) -> String {
    parse(query, body).unwrap_err().message
}

const PREFIX: &str = "DeleteOptions.meta.k8s.io \"\" is invalid: ";

#[test]
fn empty_body_and_query_are_the_defaults() {
    assert_eq!(parse("", "").unwrap(), DeleteOptions::default());
    assert_eq!(parse("", " \n\t").unwrap(), DeleteOptions::default());
    assert_eq!(parse("", "{}").unwrap(), DeleteOptions::default());
}

#[test]
fn the_body() {
    let o = parse(
        "",
        r#"{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":5,
            "preconditions":{"uid":"u-1","resourceVersion":"42"},
            "propagationPolicy":"Foreground","dryRun":["All"]}"#,
    )
    .unwrap();
    assert_eq!(
        o,
        DeleteOptions {
            grace_period_seconds: Some(5),
            preconditions: Preconditions {
                uid: Some("u-1".into()),
                resource_version: Some("42".into()),
            },
            propagation_policy: Some(PropagationPolicy::Foreground),
            orphan_dependents: None,
            dry_run: true,
            ignore_store_read_error: false,
        }
    );
    assert_eq!(
        parse("", r#"{"orphanDependents":false}"#)
            .unwrap()
            .orphan_dependents,
        Some(false)
    );
    // Wrong JSON types are ignored, as before.
    let o = parse(
        "",
        r#"{"gracePeriodSeconds":"5","preconditions":{"uid":7},"dryRun":"All"}"#,
    )
    .unwrap();
    assert_eq!(o, DeleteOptions::default());
}

#[test]
fn the_query() {
    let o = parse(
        "gracePeriodSeconds=0&propagationPolicy=Orphan&dryRun=All",
        "",
    )
    .unwrap();
    assert_eq!(o.grace_period_seconds, Some(0));
    assert_eq!(o.propagation_policy, Some(PropagationPolicy::Orphan));
    assert!(o.dry_run);
    assert_eq!(
        parse("orphanDependents=true", "")
            .unwrap()
            .orphan_dependents,
        Some(true)
    );
    // A gracePeriodSeconds that is not a number is ignored, as before.
    assert_eq!(
        parse("gracePeriodSeconds=soon", "")
            .unwrap()
            .grace_period_seconds,
        None
    );
}

#[test]
fn body_wins_and_dry_runs_combine() {
    let o = parse(
        "gracePeriodSeconds=9&propagationPolicy=Orphan",
        r#"{"gracePeriodSeconds":1,"propagationPolicy":"Background"}"#,
    )
    .unwrap();
    assert_eq!(o.grace_period_seconds, Some(1));
    assert_eq!(o.propagation_policy, Some(PropagationPolicy::Background));
    assert!(
        parse("dryRun=All", r#"{"dryRun":["All"]}"#)
            .unwrap()
            .dry_run
    );
    assert_eq!(
        msg("dryRun=All", r#"{"dryRun":["x"]}"#),
        format!("{PREFIX}dryRun: Unsupported value: [\"All\",\"x\"]: supported values: \"All\"")
    );
}

#[test]
fn dry_run_values() {
    assert!(!parse("", r#"{"dryRun":[]}"#).unwrap().dry_run);
    assert!(parse("dryRun=All&dryRun=All", "").unwrap().dry_run);
    let e = parse("dryRun=yes", "").unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        e.message,
        format!("{PREFIX}dryRun: Unsupported value: [\"yes\"]: supported values: \"All\"")
    );
    assert_eq!(
        msg("", r#"{"dryRun":["All","Some"]}"#),
        format!("{PREFIX}dryRun: Unsupported value: [\"All\",\"Some\"]: supported values: \"All\"")
    );
}

#[test]
fn propagation_policy_validation() {
    assert_eq!(
        msg("", r#"{"propagationPolicy":"Later"}"#),
        format!("{PREFIX}propagationPolicy: Unsupported value: \"Later\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"")
    );
    assert_eq!(
        msg("", r#"{"propagationPolicy":"Orphan","orphanDependents":true}"#),
        format!("{PREFIX}propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set")
    );
    assert_eq!(
        msg("orphanDependents=false&propagationPolicy=x&dryRun=no", ""),
        format!("{PREFIX}[propagationPolicy: Invalid value: \"x\": orphanDependents and deletionPropagation cannot be both set, propagationPolicy: Unsupported value: \"x\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\", dryRun: Unsupported value: [\"no\"]: supported values: \"All\"]")
    );
    assert_eq!(PropagationPolicy::Background.as_str(), "Background");
}

#[test]
fn bad_bodies_are_400() {
    let e = parse("", "{").unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    assert_eq!(e.message, "the object provided is unrecognized (must be of type DeleteOptions): couldn't get version/kind; json parse error: EOF while parsing an object at line 1 column 1 ({)");
    let long = format!("{{\"gracePeriodSeconds\": {}", "1".repeat(40));
    assert!(msg("", &long).ends_with(&format!("({} ...)", &long[..30])));
    for not_object in ["[]", "\"x\"", "1", "null"] {
        let e = parse("", not_object).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "the object provided is unrecognized (must be of type DeleteOptions): body is not a JSON object")
        );
    }
    // The body is read before the query is validated.
    assert_eq!(parse("dryRun=x", "[").unwrap_err().code, 400);
}

#[test]
fn unsafe_delete_goes_alone() {
    let alone = parse("ignoreStoreReadErrorWithClusterBreakingPotential=true", "").unwrap();
    assert!(alone.ignore_store_read_error);
    assert!(alone.validate_unsafe_delete().is_ok());
    let e = parse(
        "dryRun=All&gracePeriodSeconds=0",
        r#"{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"preconditions":{"uid":"u"}}"#,
    )
    .unwrap()
    .validate_unsafe_delete()
    .unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        "DeleteOptions.meta.k8s.io \"\" is invalid: [ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .dryRun, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .preconditions]"
    );
}
