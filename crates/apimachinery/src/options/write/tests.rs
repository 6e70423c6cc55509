use super::*;

fn q(s: &str) -> Query {
    Query::parse(Some(s))
}

fn create_err(s: &str) -> String {
    CreateOptions::from_query(&q(s)).unwrap_err().message
}

#[test]
fn defaults() {
    let o = CreateOptions::from_query(&q("")).unwrap();
    assert_eq!(o, CreateOptions::default());
    assert_eq!(o.field_validation, FieldValidation::Warn);
    assert!(!o.dry_run);
    assert_eq!(
        UpdateOptions::from_query(&q("")).unwrap(),
        UpdateOptions::default()
    );
    assert_eq!(
        PatchOptions::from_query(&q(""), false).unwrap(),
        PatchOptions::default()
    );
}

#[test]
fn dry_run_values() {
    let dry = |s: &str| CreateOptions::from_query(&q(s)).map(|o| o.dry_run);
    assert_eq!(dry("dryRun=All"), Ok(true));
    assert_eq!(dry("dryRun=All&dryRun=All"), Ok(true));
    assert_eq!(create_err("dryRun=all"), "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"all\"]: supported values: \"All\"");
    assert_eq!(create_err("dryRun=All&dryRun=x"), "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"All\",\"x\"]: supported values: \"All\"");
    assert_eq!(create_err("dryRun="), "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"\"]: supported values: \"All\"");
    let e = UpdateOptions::from_query(&q("dryRun=x")).unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert!(e
        .message
        .starts_with("UpdateOptions.meta.k8s.io \"\" is invalid: dryRun"));
    let d = e.details.unwrap();
    assert_eq!(
        (d.group.as_str(), d.kind.as_str()),
        ("meta.k8s.io", "UpdateOptions")
    );
    assert_eq!(d.causes[0].reason, "FieldValueNotSupported");
    assert_eq!(d.causes[0].field, "dryRun");
}

#[test]
fn field_validation_values() {
    let fv = |s: &str| CreateOptions::from_query(&q(s)).unwrap().field_validation;
    assert_eq!(fv("fieldValidation="), FieldValidation::Warn);
    assert_eq!(fv("fieldValidation=Warn"), FieldValidation::Warn);
    assert_eq!(fv("fieldValidation=Strict"), FieldValidation::Strict);
    assert_eq!(fv("fieldValidation=Ignore"), FieldValidation::Ignore);
    assert_eq!(create_err("fieldValidation=strict"), "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
    assert_eq!(
        PatchOptions::from_query(&q("fieldValidation=Bogus"), false)
            .unwrap_err()
            .message,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );
    assert_eq!(FieldValidation::Strict.as_str(), "Strict");
}

#[test]
fn every_problem_at_once_in_kubes_order() {
    assert_eq!(
        create_err("fieldValidation=x&dryRun=y"),
        "CreateOptions.meta.k8s.io \"\" is invalid: [dryRun: Unsupported value: [\"y\"]: supported values: \"All\", fieldValidation: Unsupported value: \"x\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"]"
    );
}

#[test]
fn field_manager() {
    let o = CreateOptions::from_query(&q("fieldManager=kubectl-create")).unwrap();
    assert_eq!(o.field_manager, "kubectl-create");
    let max = "m".repeat(128);
    assert!(CreateOptions::from_query(&q(&format!("fieldManager={max}"))).is_ok());
    assert_eq!(
        create_err(&format!("fieldManager={max}x")),
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
    );
    let e = create_err("fieldManager=a%07b");
    assert!(
        e.starts_with("CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: ")
    );
    assert!(
        e.ends_with(": invalid character U+0007 (at position 1)"),
        "{e}"
    );
    // Printable: spaces and non-ASCII letters; not: other spaces, format
    // characters.
    assert!(CreateOptions::from_query(&q("fieldManager=my+tool+%C3%A9")).is_ok());
    assert!(
        create_err("fieldManager=a%C2%A0b").ends_with("invalid character U+00A0 (at position 1)")
    );
    assert!(
        create_err("fieldManager=%E2%80%8Bx").ends_with("invalid character U+200B (at position 0)")
    );
}

#[test]
fn patch_force_and_apply() {
    let p = |s: &str, apply| PatchOptions::from_query(&q(s), apply);
    assert_eq!(
        p("force=true", false).unwrap_err().message,
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
    // Even `force=false` is "specified".
    assert_eq!(p("force=false", false).unwrap_err().code, 422);
    assert_eq!(
        p("", true).unwrap_err().message,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let o = p("fieldManager=kubectl&force=true&dryRun=All", true).unwrap();
    assert_eq!(
        (o.field_manager.as_str(), o.force, o.dry_run),
        ("kubectl", Some(true), true)
    );
    assert_eq!(
        p("fieldManager=k&force=0", true).unwrap().force,
        Some(false)
    );
    assert_eq!(
        p("force=1&dryRun=x", false).unwrap_err().message,
        "PatchOptions.meta.k8s.io \"\" is invalid: [force: Forbidden: may not be specified for non-apply patch, dryRun: Unsupported value: [\"x\"]: supported values: \"All\"]"
    );
}
