//! Each catalog tag on a real type, and the gates' combinations.

use std::cell::Cell;

use keelson_api::Operation;
use serde_json::{json, Value};

use super::table::{Format, KindRules, ListType, Lit, Rule, Tag};
use super::walk::{walk, KindTree};
use super::{combine_with, Counters, Mode};
use crate::validation::kinds::Write;

fn no_gates(_: &str) -> bool {
    false
}

/// The errors as kube prints them: `path: body`.
fn errs_of(
    rules: &'static KindRules,
    sub: &str,
    obj: Value,
    old: Option<Value>,
    gates: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let tree = KindTree::build(rules);
    let Some(root) = tree.scope(sub) else {
        return vec!["<no declarative validation>".into()];
    };
    walk(root, &obj, old.as_ref(), gates)
        .errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.body()))
        .collect()
}

fn rules(kind: &'static str, rules: &'static [Rule]) -> &'static KindRules {
    Box::leak(Box::new(KindRules {
        group: "",
        version: "v1",
        kind,
        subresources: &["/status", "/approval"],
        rules,
    }))
}

fn generated(kind: &str) -> &'static KindRules {
    super::generated::KINDS
        .iter()
        .find(|k| k.kind == kind)
        .expect("generated rules")
}

#[test]
fn minimum_and_optional_on_rc_spec() {
    let rc = generated("ReplicationController");
    let e = errs_of(
        rc,
        "",
        json!({"spec": {"replicas": -1, "minReadySeconds": -5}}),
        None,
        &no_gates,
    );
    assert_eq!(
        e,
        [
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            "spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0",
        ]
    );
    assert!(errs_of(rc, "", json!({"spec": {}}), None, &no_gates).is_empty());
    assert!(errs_of(rc, "", json!({}), None, &no_gates).is_empty());
}

static RC_SELECTOR: &[Rule] = &[
    Rule {
        subresource: "",
        path: &["spec", "selector"],
        tags: &[
            Tag::Required,
            Tag::EachKey(&[Tag::Format(Format::LabelKey)]),
        ],
    },
    Rule {
        subresource: "",
        path: &["spec", "template"],
        tags: &[Tag::Subfield("spec", &[Tag::Required])],
    },
];

#[test]
fn required_each_key_and_subfield_on_rc() {
    let r = rules("ReplicationController", RC_SELECTOR);
    let e = errs_of(
        r,
        "",
        json!({"spec": {"selector": {}, "template": {}}}),
        None,
        &no_gates,
    );
    assert_eq!(
        e,
        [
            "spec.selector: Required value",
            "spec.template.spec: Required value"
        ]
    );
    let e = errs_of(
        r,
        "",
        json!({"spec": {"selector": {"a/b/c": "x"}, "template": {"spec": {"containers": []}}}}),
        None,
        &no_gates,
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with(
            r#"spec.selector: Invalid value: "a/b/c": a qualified name must consist of"#
        ),
        "{e:?}"
    );
}

static POD: &[Rule] = &[
    Rule {
        subresource: "",
        path: &["spec", "hostname"],
        tags: &[
            Tag::Optional,
            Tag::MaxLength(63),
            Tag::Format(Format::ShortName),
        ],
    },
    Rule {
        subresource: "",
        path: &["spec", "serviceAccountName"],
        tags: &[Tag::Optional, Tag::Format(Format::LongName)],
    },
    Rule {
        subresource: "",
        path: &["spec", "ephemeralContainers"],
        tags: &[Tag::Forbidden],
    },
    Rule {
        subresource: "",
        path: &["spec", "restartPolicy"],
        tags: &[Tag::Optional, Tag::Enum(&["Always", "OnFailure", "Never"])],
    },
    Rule {
        subresource: "/status",
        path: &["status", "podIP"],
        tags: &[Tag::Optional, Tag::Format(Format::Ip)],
    },
];

#[test]
fn max_length_format_forbidden_enum_on_pod() {
    let r = rules("Pod", POD);
    let long = "a".repeat(64);
    let e = errs_of(
        r,
        "",
        json!({"spec": {
            "hostname": long,
            "serviceAccountName": "Bad_Name",
            "ephemeralContainers": [],
            "restartPolicy": "Sometimes"
        }}),
        None,
        &no_gates,
    );
    assert_eq!(
        e[0],
        "spec.hostname: Too long: may not be more than 63 bytes"
    );
    assert_eq!(
        e[1],
        format!(r#"spec.hostname: Invalid value: "{long}": must be no more than 63 characters"#)
    );
    assert!(
        e[2].starts_with(r#"spec.serviceAccountName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of"#),
        "{e:?}"
    );
    assert_eq!(e[3], "spec.ephemeralContainers: Forbidden");
    assert_eq!(
        e[4],
        r#"spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never""#
    );
    assert_eq!(e.len(), 5, "{e:?}");
}

#[test]
fn is_subresource_and_supports_subresource_scope_the_rules() {
    let r = rules("Pod", POD);
    let status = json!({"status": {"podIP": "not-an-ip"}});
    // Root writes use the root rules only.
    assert!(errs_of(r, "", status.clone(), None, &no_gates).is_empty());
    assert_eq!(
        errs_of(r, "status", status, None, &no_gates),
        [
            r#"status.podIP: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#
        ]
    );
    // k8s-ip accepts IPv4 octets with leading zeros, and IPv6.
    for ip in ["010.001.0.1", "2001:db8::1"] {
        let obj = json!({"status": {"podIP": ip}});
        assert!(
            errs_of(r, "status", obj, None, &no_gates).is_empty(),
            "{ip}"
        );
    }
    // A supported subresource without its own scope gets the root rules.
    let e = errs_of(
        r,
        "approval",
        json!({"spec": {"restartPolicy": "x"}}),
        None,
        &no_gates,
    );
    assert_eq!(e.len(), 1);
    // An undeclared subresource is not validated declaratively.
    assert_eq!(
        errs_of(r, "scale", json!({}), None, &no_gates),
        ["<no declarative validation>"]
    );
}

static CSR: &[Rule] = &[
    Rule {
        subresource: "",
        path: &["spec", "request"],
        tags: &[Tag::Required, Tag::Immutable],
    },
    Rule {
        subresource: "",
        path: &["spec", "usages"],
        tags: &[
            Tag::Optional,
            Tag::ListType(ListType::Set),
            Tag::EachVal(&[Tag::Neq(Lit::Str(""))]),
        ],
    },
    Rule {
        subresource: "",
        path: &["status", "conditions"],
        tags: &[
            Tag::ListType(ListType::Map),
            Tag::ListMapKey("type"),
            Tag::Item(
                &[("type", Lit::Str("Approved"))],
                &[Tag::ZeroOrOneOfMember {
                    union: "",
                    member: "",
                }],
            ),
            Tag::Item(
                &[("type", Lit::Str("Denied"))],
                &[Tag::ZeroOrOneOfMember {
                    union: "",
                    member: "",
                }],
            ),
        ],
    },
];

#[test]
fn immutable_list_set_each_val_neq_on_csr() {
    let r = rules("CertificateSigningRequest", CSR);
    let e = errs_of(
        r,
        "",
        json!({"spec": {"request": "Yg==", "usages": ["digital signature", "", "digital signature"]}}),
        Some(json!({"spec": {"request": "YQ=="}})),
        &no_gates,
    );
    assert_eq!(
        e,
        [
            "spec.request: Forbidden: field is immutable",
            r#"spec.usages[2]: Duplicate value: "digital signature""#,
            r#"spec.usages[1]: Invalid value: "": must not be equal to "#,
        ]
    );
    // On create nothing is compared.
    let e = errs_of(r, "", json!({"spec": {"request": "Yg=="}}), None, &no_gates);
    assert!(e.is_empty(), "{e:?}");
}

#[test]
fn item_list_map_and_zero_or_one_of_on_csr_conditions() {
    let r = rules("CertificateSigningRequest", CSR);
    let cond = |t: &str| json!({"type": t, "status": "True"});
    let obj = json!({"spec": {"request": "YQ=="}, "status": {"conditions": [cond("Approved"), cond("Denied"), cond("Denied")]}});
    let e = errs_of(r, "status", obj, None, &no_gates);
    assert_eq!(
        e,
        [
            r#"status.conditions[2]: Duplicate value: {"type":"Denied","status":"True"}"#,
            r#"status.conditions: Invalid value: "{Approved, Denied}": must specify at most one of: `Approved`, `Denied`"#,
        ]
    );
    let obj = json!({"spec": {"request": "YQ=="}, "status": {"conditions": [cond("Approved")]}});
    assert!(errs_of(r, "status", obj, None, &no_gates).is_empty());
}

static VOLUME: &[Rule] = &[
    Rule {
        subresource: "",
        path: &["hostPath"],
        tags: &[
            Tag::UnionMember {
                union: "",
                member: "",
            },
            Tag::Optional,
        ],
    },
    Rule {
        subresource: "",
        path: &["emptyDir"],
        tags: &[
            Tag::UnionMember {
                union: "",
                member: "",
            },
            Tag::Optional,
        ],
    },
    Rule {
        subresource: "",
        path: &["secret"],
        tags: &[Tag::OpaqueType],
    },
    Rule {
        subresource: "",
        path: &["secret", "secretName"],
        tags: &[Tag::Required],
    },
];

#[test]
fn union_member_and_opaque_type_on_volume_source() {
    let r = rules("Volume", VOLUME);
    assert_eq!(
        errs_of(r, "", json!({"secret": {}}), None, &no_gates),
        [r#": Invalid value: "": must specify one of: `hostPath`, `emptyDir`"#]
    );
    assert_eq!(
        errs_of(
            r,
            "",
            json!({"hostPath": {}, "emptyDir": {}}),
            None,
            &no_gates
        ),
        [
            r#": Invalid value: "{hostPath, emptyDir}": must specify exactly one of: `hostPath`, `emptyDir`"#
        ]
    );
    assert!(errs_of(r, "", json!({"emptyDir": {}}), None, &no_gates).is_empty());
}

static METRIC_SPEC: &[Rule] = &[
    Rule {
        subresource: "",
        path: &["type"],
        tags: &[Tag::UnionDiscriminator { union: "" }, Tag::Required],
    },
    Rule {
        subresource: "",
        path: &["resource"],
        tags: &[
            Tag::UnionMember {
                union: "",
                member: "Resource",
            },
            Tag::Optional,
        ],
    },
    Rule {
        subresource: "",
        path: &["pods"],
        tags: &[
            Tag::UnionMember {
                union: "",
                member: "Pods",
            },
            Tag::Optional,
        ],
    },
];

#[test]
fn union_discriminator_on_hpa_metric_spec() {
    let r = rules("MetricSpec", METRIC_SPEC);
    assert_eq!(
        errs_of(
            r,
            "",
            json!({"type": "Resource", "pods": {}}),
            None,
            &no_gates
        ),
        [
            "resource: Required value: must be specified when `type` is \"Resource\"",
            "pods: Invalid value: \"\": may only be specified when `type` is \"Pods\"",
        ]
    );
    assert!(errs_of(r, "", json!({"type": "Pods", "pods": {}}), None, &no_gates).is_empty());
}

static JOB: &[Rule] = &[
    Rule {
        subresource: "",
        path: &["spec", "podFailurePolicy", "rules"],
        tags: &[Tag::MaxItems(20)],
    },
    Rule {
        subresource: "",
        path: &["spec", "managedBy"],
        tags: &[
            Tag::IfEnabled("JobManagedBy", &[Tag::Optional, Tag::MaxLength(63)]),
            Tag::IfDisabled("JobManagedBy", &[Tag::Forbidden]),
        ],
    },
    Rule {
        subresource: "",
        path: &["spec", "parallelism"],
        tags: &[Tag::Optional, Tag::Neq(Lit::Int(0))],
    },
];

#[test]
fn max_items_if_enabled_if_disabled_neq_on_job() {
    let r = rules("Job", JOB);
    let rules21: Vec<Value> = (0..21).map(|_| json!({})).collect();
    let obj = json!({"spec": {"podFailurePolicy": {"rules": rules21}, "managedBy": "x".repeat(64), "parallelism": 0}});
    let on = |g: &str| g == "JobManagedBy";
    assert_eq!(
        errs_of(r, "", obj.clone(), None, &on),
        [
            "spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items",
            "spec.managedBy: Too long: may not be more than 63 bytes",
            "spec.parallelism: Invalid value: 0: must not be equal to 0",
        ]
    );
    assert_eq!(
        errs_of(r, "", obj, None, &no_gates)[1],
        "spec.managedBy: Forbidden"
    );
}

#[derive(Default)]
struct Count {
    mismatch: Cell<u32>,
    panic: Cell<u32>,
}

impl Counters for Count {
    fn mismatch(&self) {
        self.mismatch.set(self.mismatch.get() + 1);
    }
    fn panic(&self) {
        self.panic.set(self.panic.get() + 1);
    }
}

fn rc(replicas: i64) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"app": "a"},
            "template": {
                "metadata": {"labels": {"app": "a"}},
                "spec": {
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "terminationGracePeriodSeconds": 30,
                    "containers": [{"name": "c", "image": "i", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]
                }
            }
        }
    })
}

const CREATE: Write<'static> = Write {
    op: Operation::Create,
    subresource: "",
    old: None,
    allow_privileged: true,
};

/// The handwritten errors of an RC create, and the combined result.
fn combined(mode: Mode, rules: &'static KindRules, obj: &Value, c: &Count) -> Vec<String> {
    let hv = crate::validation::kinds::validate_group("", "ReplicationController", CREATE, obj);
    let tree = KindTree::build(rules);
    combine_with(mode, &tree, CREATE, obj, hv, &no_gates, c)
        .iter()
        .map(|e| format!("{}: {}", e.field, e.body()))
        .collect()
}

#[test]
fn rc_negative_replicas_in_every_gate_configuration() {
    let rc_rules = generated("ReplicationController");
    let want = ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"];
    for mode in [Mode::Off, Mode::Shadow, Mode::Takeover] {
        let c = Count::default();
        assert_eq!(combined(mode, rc_rules, &rc(-1), &c), want, "{mode:?}");
        assert_eq!(c.mismatch.get(), 0, "{mode:?}: the two agree");
        assert_eq!(c.panic.get(), 0);
        assert!(combined(mode, rc_rules, &rc(1), &c).is_empty(), "{mode:?}");
    }
}

static RC_DISAGREEING: &[Rule] = &[Rule {
    subresource: "",
    path: &["spec", "replicas"],
    tags: &[Tag::Minimum(1)],
}];

#[test]
fn a_disagreeing_rule_is_counted_and_only_authoritative_in_takeover() {
    let r = rules("ReplicationController", RC_DISAGREEING);
    let dv = "spec.replicas: Invalid value: 0: must be greater than or equal to 1";
    let c = Count::default();
    assert!(combined(Mode::Shadow, r, &rc(0), &c).is_empty());
    assert_eq!(c.mismatch.get(), 1);
    assert_eq!(combined(Mode::Takeover, r, &rc(0), &c), [dv]);
    assert_eq!(c.mismatch.get(), 2);
    // Off: the declarative rules do not run at all.
    assert!(combined(Mode::Off, r, &rc(0), &c).is_empty());
    assert_eq!(c.mismatch.get(), 2);
    // Takeover keeps the handwritten errors of fields the rules do not cover.
    let mut obj = rc(0);
    obj["spec"]["selector"] = json!({});
    let e = combined(Mode::Takeover, r, &obj, &c);
    assert!(
        e.contains(&"spec.selector: Required value".to_string()),
        "{e:?}"
    );
    assert_eq!(e.last().map(String::as_str), Some(dv));
}

#[test]
fn generated_csr_rules_check_conditions_on_approval_and_status() {
    let r = generated("CertificateSigningRequest");
    let cond = |t: &str| json!({"type": t, "status": "True"});
    let obj = json!({"spec": {"request": "YQ=="}, "status": {"conditions": [cond("Approved"), cond("Denied")]}});
    let want = [
        r#"status.conditions: Invalid value: "{Approved, Denied}": must specify at most one of: `Approved`, `Denied`"#,
    ];
    assert_eq!(errs_of(r, "approval", obj.clone(), None, &no_gates), want);
    assert_eq!(errs_of(r, "status", obj, None, &no_gates), want);
    let one = json!({"spec": {"request": "YQ=="}, "status": {"conditions": [cond("Approved")]}});
    assert!(errs_of(r, "approval", one, None, &no_gates).is_empty());
}
