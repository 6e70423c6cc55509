//! admissionregistration.k8s.io: webhook configurations, validating
//! admission policies and their bindings.

use serde_json::Value;

use super::columns::*;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

const WEBHOOKS: Column = col(
    "Webhooks",
    "integer",
    "Webhooks indicates the number of webhooks registered in this configuration",
);

/// Name, Webhooks (how many), Age.
pub(crate) static MUTATING_WEBHOOK_CONFIGURATION: Printer = Printer {
    columns: &[NAME, WEBHOOKS, AGE],
    print: print_webhook_configuration,
};

/// Name, Webhooks (how many), Age.
pub(crate) static VALIDATING_WEBHOOK_CONFIGURATION: Printer = Printer {
    columns: &[NAME, WEBHOOKS, AGE],
    print: print_webhook_configuration,
};

/// Name, Validations (how many), ParamKind, Age.
pub(crate) static VALIDATING_ADMISSION_POLICY: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Validations",
            "integer",
            "Validations indicates the number of validation rules defined in this configuration",
        ),
        col(
            "ParamKind",
            "string",
            "ParamKind specifies the kind of resources used to parameterize this policy",
        ),
        AGE,
    ],
    print: print_validating_admission_policy,
};

/// Name, PolicyName, ParamRef, Age.
pub(crate) static VALIDATING_ADMISSION_POLICY_BINDING: Printer = Printer {
    columns: &[
        NAME,
        col(
            "PolicyName",
            "string",
            "PolicyName indicates the policy definition which the policy binding binded to",
        ),
        col(
            "ParamRef",
            "string",
            "ParamRef indicates the param resource which sets the configration param",
        ),
        AGE,
    ],
    print: print_validating_admission_policy_binding,
};

fn print_webhook_configuration(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(arr_at(o, &["webhooks"]).len() as i64),
        age(o, now),
    ])
}

fn print_validating_admission_policy(o: &Value, now: Time) -> Row {
    let param_kind = match at(o, &["spec", "paramKind"]).filter(|p| !p.is_null()) {
        Some(p) => format!("{}/{}", str_at(p, &["apiVersion"]), str_at(p, &["kind"])),
        None => "<unset>".to_string(),
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(arr_at(o, &["spec", "validations"]).len() as i64),
        Value::from(param_kind),
        age(o, now),
    ])
}

/// The ParamRef cell: `namespace/name` (`*/name` without a namespace),
/// else the selector as Go prints a `*metav1.LabelSelector`, else
/// `<unset>`.
fn param_ref(o: &Value) -> String {
    let Some(pr) = at(o, &["spec", "paramRef"]).filter(|p| !p.is_null()) else {
        return "<unset>".to_string();
    };
    let name = str_at(pr, &["name"]);
    if !name.is_empty() {
        return match str_at(pr, &["namespace"]) {
            "" => format!("*/{name}"),
            ns => format!("{ns}/{name}"),
        };
    }
    match at(pr, &["selector"]).filter(|s| !s.is_null()) {
        Some(sel) => label_selector_go_string(sel),
        None => "<unset>".to_string(),
    }
}

/// The generated `String()` of a `metav1.LabelSelector`:
/// `&LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[a b],},},}`
/// (labels sorted by key, expressions in their order, values as `%v`).
fn label_selector_go_string(sel: &Value) -> String {
    let mut labels: Vec<(&str, &str)> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    labels.sort_unstable();
    let mut out = String::from("&LabelSelector{MatchLabels:map[string]string{");
    for (k, v) in labels {
        out.push_str(&format!("{k}: {v},"));
    }
    out.push_str("},MatchExpressions:[]LabelSelectorRequirement{");
    for e in arr_at(sel, &["matchExpressions"]) {
        let values: Vec<&str> = arr_at(e, &["values"])
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        out.push_str(&format!(
            "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
            str_at(e, &["key"]),
            str_at(e, &["operator"]),
            values.join(" ")
        ));
    }
    out.push_str("},}");
    out
}

fn print_validating_admission_policy_binding(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "policyName"])),
        Value::from(param_ref(o)),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    fn columns(p: &Printer) -> Vec<(&'static str, &'static str, i32)> {
        p.columns
            .iter()
            .map(|c| (c.name, c.ty, c.priority))
            .collect()
    }

    #[test]
    fn column_definitions() {
        for p in [
            &MUTATING_WEBHOOK_CONFIGURATION,
            &VALIDATING_WEBHOOK_CONFIGURATION,
        ] {
            assert_eq!(
                columns(p),
                vec![
                    ("Name", "string", 0),
                    ("Webhooks", "integer", 0),
                    ("Age", "string", 0)
                ]
            );
        }
        assert_eq!(
            columns(&VALIDATING_ADMISSION_POLICY),
            vec![
                ("Name", "string", 0),
                ("Validations", "integer", 0),
                ("ParamKind", "string", 0),
                ("Age", "string", 0)
            ]
        );
        assert_eq!(
            columns(&VALIDATING_ADMISSION_POLICY_BINDING),
            vec![
                ("Name", "string", 0),
                ("PolicyName", "string", 0),
                ("ParamRef", "string", 0),
                ("Age", "string", 0)
            ]
        );
        assert_eq!(
            VALIDATING_ADMISSION_POLICY_BINDING.columns[2].description,
            "ParamRef indicates the param resource which sets the configration param"
        );
    }

    // Facts from kube's printers_test.go TestPrintMutatingWebhook /
    // TestPrintValidatingWebhook.
    #[test]
    fn webhook_counts() {
        let none = json!({"metadata": {"name": "mutating-webhook", "creationTimestamp": "2024-05-01T11:59:50Z"}});
        assert_eq!(
            print_webhook_configuration(&none, now()).cells,
            vec![json!("mutating-webhook"), json!(0), json!("10s")]
        );
        let two = json!({"metadata": {"name": "validating-webhook"},
                         "webhooks": [{"name": "a.example.com"}, {"name": "b.example.com"}]});
        assert_eq!(
            print_webhook_configuration(&two, now()).cells,
            vec![json!("validating-webhook"), json!(2), json!("<unknown>")]
        );
    }

    // Facts from kube's printers_test.go TestPrintValidatingAdmissionPolicy.
    #[test]
    fn policies() {
        let unset = json!({"metadata": {"name": "policy", "creationTimestamp": "2024-05-01T11:00:00Z"},
                           "spec": {"validations": [{"expression": "true"}]}});
        assert_eq!(
            print_validating_admission_policy(&unset, now()).cells,
            vec![json!("policy"), json!(1), json!("<unset>"), json!("60m")]
        );
        let with_param = json!({"metadata": {"name": "p2"},
                                "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                                         "validations": [{"expression": "a"}, {"expression": "b"}]}});
        assert_eq!(
            &print_validating_admission_policy(&with_param, now()).cells[1..3],
            &[json!(2), json!("v1/ConfigMap")]
        );
        let group = json!({"metadata": {"name": "p3"},
                           "spec": {"paramKind": {"apiVersion": "example.com/v1", "kind": "Config"}}});
        assert_eq!(
            &print_validating_admission_policy(&group, now()).cells[1..3],
            &[json!(0), json!("example.com/v1/Config")]
        );
    }

    // Facts from kube's printers_test.go TestPrintValidatingAdmissionPolicyBinding.
    #[test]
    fn bindings() {
        let binding = |param_ref: Value| {
            json!({"metadata": {"name": "binding"},
                   "spec": {"policyName": "policy", "paramRef": param_ref}})
        };
        let cell = |param_ref: Value| {
            print_validating_admission_policy_binding(&binding(param_ref), now()).cells
        };
        assert_eq!(
            cell(json!({"name": "param", "namespace": "ns"})),
            vec![
                json!("binding"),
                json!("policy"),
                json!("ns/param"),
                json!("<unknown>")
            ]
        );
        assert_eq!(cell(json!({"name": "param"}))[2], json!("*/param"));
        assert_eq!(cell(Value::Null)[2], json!("<unset>"));
        assert_eq!(
            cell(json!({"parameterNotFoundAction": "Deny"}))[2],
            json!("<unset>")
        );
        assert_eq!(
            cell(json!({"selector": {}}))[2],
            json!("&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}")
        );
        assert_eq!(
            cell(json!({"namespace": "ns", "selector": {
                "matchLabels": {"tier": "gold", "app": "web"},
                "matchExpressions": [
                    {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                    {"key": "canary", "operator": "DoesNotExist"}
                ]}}))[2],
            json!("&LabelSelector{MatchLabels:map[string]string{app: web,tier: gold,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[prod dev],},LabelSelectorRequirement{Key:canary,Operator:DoesNotExist,Values:[],},},}")
        );
        let no_param = json!({"metadata": {"name": "b"}, "spec": {"policyName": "p"}});
        assert_eq!(
            print_validating_admission_policy_binding(&no_param, now()).cells[2],
            json!("<unset>")
        );
    }
}
