//! Scheduling and policy objects: pod disruption budgets, horizontal pod
//! autoscalers, priority classes and leases.

use serde_json::{json, Value};

use super::columns::*;
use super::quantity;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

pub(crate) static POD_DISRUPTION_BUDGET: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Min Available",
            "string",
            "The minimum number of pods that must be available.",
        ),
        col(
            "Max Unavailable",
            "string",
            "The maximum number of pods that may be unavailable.",
        ),
        col(
            "Allowed Disruptions",
            "integer",
            "Calculated number of pods that may be disrupted at this time.",
        ),
        AGE,
    ],
    print: print_pdb,
};

pub(crate) static HORIZONTAL_POD_AUTOSCALER: Printer = Printer {
    columns: &[
        NAME,
        col("Reference", "string", HPA_SPEC_SCALE_TARGET_REF),
        col("Targets", "string", HPA_SPEC_METRICS),
        col("MinPods", "string", HPA_SPEC_MIN_REPLICAS),
        col("MaxPods", "string", HPA_SPEC_MAX_REPLICAS),
        col("Replicas", "string", HPA_STATUS_CURRENT_REPLICAS),
        AGE,
    ],
    print: print_hpa,
};

pub(crate) static PRIORITY_CLASS: Printer = Printer {
    columns: &[
        NAME,
        col("Value", "integer", PC_VALUE),
        col("Global-Default", "boolean", PC_GLOBAL_DEFAULT),
        AGE,
        col("PreemptionPolicy", "string", PC_PREEMPTION_POLICY),
    ],
    print: print_priority_class,
};

/// The `scale` subresource (`autoscaling/v1 Scale`); its Name column has
/// no `name` format in kube.
pub(crate) static SCALE: Printer = Printer {
    columns: &[
        col("Name", "string", OBJECT_META_NAME),
        col(
            "Desired",
            "integer",
            "replicas is the desired number of instances for the scaled object.",
        ),
        col(
            "Available",
            "integer",
            "replicas is the actual number of observed instances of the scaled object.",
        ),
        AGE,
    ],
    print: print_scale,
};

pub(crate) static LEASE: Printer = Printer {
    columns: &[NAME, col("Holder", "string", LEASE_SPEC_HOLDER), AGE],
    print: print_lease,
};

fn print_pdb(o: &Value, now: Time) -> Row {
    let or_na = |f: &str| {
        at(o, &["spec", f])
            .filter(|v| !v.is_null())
            .map_or_else(|| "N/A".to_string(), int_or_string)
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(or_na("minAvailable")),
        Value::from(or_na("maxUnavailable")),
        Value::from(int_at(o, &["status", "disruptionsAllowed"])),
        age(o, now),
    ])
}

/// `Quantity.String()` of an optional quantity (`<nil>` for a nil pointer).
fn q(v: Option<&str>) -> String {
    v.map_or_else(|| "<nil>".to_string(), quantity::canonical)
}

/// The metrics of an HPA in autoscaling/v2 form (autoscaling/v1's CPU
/// target converted as kube converts it to its internal type).
fn hpa_metrics(o: &Value) -> (Vec<Value>, Vec<Value>) {
    if let Some(specs) = at(o, &["spec", "metrics"]).and_then(Value::as_array) {
        return (
            specs.clone(),
            arr_at(o, &["status", "currentMetrics"]).to_vec(),
        );
    }
    let Some(target) = opt_int(o, &["spec", "targetCPUUtilizationPercentage"]) else {
        return (Vec::new(), Vec::new());
    };
    let spec = json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}});
    let status = match opt_int(o, &["status", "currentCPUUtilizationPercentage"]) {
        Some(c) => vec![
            json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": c}}}),
        ],
        None => Vec::new(),
    };
    (vec![spec], status)
}

/// `formatHPAMetrics`: `current/target` per metric, at most two, then
/// `+ N more...`.
fn format_hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".to_string();
    }
    let status = |i: usize, source: &str| -> Option<&Value> {
        statuses
            .get(i)
            .and_then(|s| s.get(source))
            .filter(|s| s.is_object())
    };
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let ty = str_at(spec, &["type"]);
        let item = match ty {
            "External" | "Object" => {
                let source = if ty == "External" {
                    "external"
                } else {
                    "object"
                };
                if let Some(avg) = opt_str(spec, &[source, "target", "averageValue"]) {
                    let current = status(i, source)
                        .and_then(|s| opt_str(s, &["current", "averageValue"]))
                        .map_or_else(|| "<unknown>".to_string(), quantity::canonical);
                    format!("{current}/{} (avg)", quantity::canonical(avg))
                } else {
                    let current = status(i, source).map_or_else(
                        || "<unknown>".to_string(),
                        |s| q(opt_str(s, &["current", "value"])),
                    );
                    format!(
                        "{current}/{}",
                        q(opt_str(spec, &[source, "target", "value"]))
                    )
                }
            }
            "Pods" => {
                let current = status(i, "pods").map_or_else(
                    || "<unknown>".to_string(),
                    |s| q(opt_str(s, &["current", "averageValue"])),
                );
                format!(
                    "{current}/{}",
                    q(opt_str(spec, &["pods", "target", "averageValue"]))
                )
            }
            "Resource" | "ContainerResource" => {
                let source = if ty == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let metric = str_at(spec, &[source, "name"]);
                if let Some(avg) = opt_str(spec, &[source, "target", "averageValue"]) {
                    let current = status(i, source).map_or_else(
                        || "<unknown>".to_string(),
                        |s| q(opt_str(s, &["current", "averageValue"])),
                    );
                    format!("{metric}: {current}/{}", quantity::canonical(avg))
                } else {
                    let current = status(i, source)
                        .and_then(|s| opt_int(s, &["current", "averageUtilization"]))
                        .map_or_else(|| "<unknown>".to_string(), |u| format!("{u}%"));
                    let target = opt_int(spec, &[source, "target", "averageUtilization"])
                        .map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
                    format!("{metric}: {current}/{target}")
                }
            }
            _ => "<unknown type>".to_string(),
        };
        list.push(item);
    }
    const MAX: usize = 2;
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

fn print_hpa(o: &Value, now: Time) -> Row {
    let (specs, statuses) = hpa_metrics(o);
    let min = opt_int(o, &["spec", "minReplicas"])
        .map_or_else(|| "<unset>".to_string(), |m| m.to_string());
    Row::new(vec![
        Value::from(name(o)),
        Value::from(format!(
            "{}/{}",
            str_at(o, &["spec", "scaleTargetRef", "kind"]),
            str_at(o, &["spec", "scaleTargetRef", "name"])
        )),
        Value::from(format_hpa_metrics(&specs, &statuses)),
        Value::from(min),
        Value::from(int_at(o, &["spec", "maxReplicas"])),
        Value::from(int_at(o, &["status", "currentReplicas"])),
        age(o, now),
    ])
}

fn print_priority_class(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(int_at(o, &["value"])),
        Value::from(opt_bool(o, &["globalDefault"]).unwrap_or(false)),
        age(o, now),
        Value::from(str_at(o, &["preemptionPolicy"])),
    ])
}

fn print_scale(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(int_at(o, &["spec", "replicas"])),
        Value::from(int_at(o, &["status", "replicas"])),
        age(o, now),
    ])
}

fn print_lease(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "holderIdentity"])),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::table::time::test_now as now;

    // Facts from kube's printers_test.go TestPrintPodDisruptionBudget.
    #[test]
    fn disruption_budgets() {
        let pdb = json!({"metadata": {"name": "pdb1", "creationTimestamp": "2024-05-01T11:59:50Z"},
                         "spec": {"minAvailable": 22}, "status": {"disruptionsAllowed": 5}});
        assert_eq!(
            print_pdb(&pdb, now()).cells,
            vec![
                json!("pdb1"),
                json!("22"),
                json!("N/A"),
                json!(5),
                json!("10s")
            ]
        );
        let pdb = json!({"metadata": {"name": "pdb2"}, "spec": {"maxUnavailable": "11%"}});
        assert_eq!(
            &print_pdb(&pdb, now()).cells[1..4],
            &[json!("N/A"), json!("11%"), json!(0)]
        );
    }

    // Facts from kube's printers_test.go TestPrintHPA.
    #[test]
    fn autoscalers() {
        let hpa = |metrics: Value, current: Value| {
            json!({"metadata": {"name": "some-hpa"},
                   "spec": {"scaleTargetRef": {"kind": "ReplicationController", "name": "some-rc"}, "minReplicas": 2, "maxReplicas": 10, "metrics": metrics},
                   "status": {"currentReplicas": 4, "desiredReplicas": 5, "currentMetrics": current}})
        };
        let c = print_hpa(&hpa(json!([]), json!([])), now()).cells;
        assert_eq!(
            c,
            vec![
                json!("some-hpa"),
                json!("ReplicationController/some-rc"),
                json!("<none>"),
                json!("2"),
                json!(10),
                json!(4),
                json!("<unknown>")
            ]
        );
        let targets = |m: Value, s: Value| print_hpa(&hpa(m, s), now()).cells[2].clone();
        assert_eq!(
            targets(
                json!([{"type": "External", "external": {"metric": {"name": "some-external-metric"}, "target": {"type": "Value", "value": "100m"}}}]),
                json!([])
            ),
            json!("<unknown>/100m")
        );
        assert_eq!(
            targets(
                json!([{"type": "External", "external": {"target": {"type": "AverageValue", "averageValue": "100m"}}}]),
                json!([{"type": "External", "external": {"current": {"averageValue": "50m"}}}])
            ),
            json!("50m/100m (avg)")
        );
        assert_eq!(
            targets(
                json!([{"type": "Pods", "pods": {"target": {"type": "AverageValue", "averageValue": "100m"}}}]),
                json!([{"type": "Pods", "pods": {"current": {"averageValue": "50m"}}}])
            ),
            json!("50m/100m")
        );
        assert_eq!(
            targets(
                json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "100m"}}}]),
                json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "50m"}}}])
            ),
            json!("cpu: 50m/100m")
        );
        assert_eq!(
            targets(
                json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
                json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 50, "averageValue": "10m"}}}])
            ),
            json!("cpu: 50%/80%")
        );
        assert_eq!(
            targets(
                json!([{"type": "ContainerResource", "containerResource": {"name": "memory", "container": "c", "target": {"type": "Utilization"}}}]),
                json!([])
            ),
            json!("memory: <unknown>/<auto>")
        );
        let three = json!([
            {"type": "Resource", "resource": {"name": "cpu", "target": {"averageUtilization": 80}}},
            {"type": "Resource", "resource": {"name": "memory", "target": {"averageUtilization": 80}}},
            {"type": "Pods", "pods": {"target": {"averageValue": "1"}}}
        ]);
        assert_eq!(
            targets(three, json!([])),
            json!("cpu: <unknown>/80%, memory: <unknown>/80% + 1 more...")
        );
        let v1 = json!({"metadata": {"name": "v1"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3, "targetCPUUtilizationPercentage": 70},
                        "status": {"currentCPUUtilizationPercentage": 20}});
        let c = print_hpa(&v1, now()).cells;
        assert_eq!((&c[2], &c[3]), (&json!("cpu: 20%/70%"), &json!("<unset>")));
    }

    #[test]
    fn priority_classes_and_leases() {
        let pc = json!({"metadata": {"name": "high"}, "value": 1000000, "globalDefault": true, "preemptionPolicy": "Never"});
        assert_eq!(
            print_priority_class(&pc, now()).cells,
            vec![
                json!("high"),
                json!(1000000),
                json!(true),
                json!("<unknown>"),
                json!("Never")
            ]
        );
        let scale = json!({"kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 3}, "status": {"replicas": 1}});
        assert_eq!(
            print_scale(&scale, now()).cells,
            vec![json!("web"), json!(3), json!(1), json!("<unknown>")]
        );
        let lease = json!({"metadata": {"name": "node1", "creationTimestamp": "2024-05-01T11:59:59Z"}, "spec": {"holderIdentity": "node1"}});
        assert_eq!(
            print_lease(&lease, now()).cells,
            vec![json!("node1"), json!("node1"), json!("1s")]
        );
    }
}
