//! `autoscaling/v1` ⇄ `autoscaling/v2` HorizontalPodAutoscaler, as kube's
//! `pkg/apis/autoscaling/v1/conversion.go` does it through the internal
//! type: `targetCPUUtilizationPercentage` is a `Resource` metric for `cpu`
//! with a `Utilization` target, and what `v1` has no field for travels in
//! annotations (JSON of the `v1` metric types; the behaviour as the
//! internal Go type, field names capitalised).

use serde_json::{Map, Value};

/// Metrics other than the CPU utilization one (`[]v1.MetricSpec`).
pub const METRIC_SPECS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// Current metrics (`[]v1.MetricStatus`).
pub const METRIC_STATUSES: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// Conditions (`[]v1.HorizontalPodAutoscalerCondition`).
pub const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `spec.behavior` (the internal type's JSON).
pub const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// The two tolerance annotations (`spec.behavior.scale{Up,Down}.tolerance`).
const TOLERANCE_DOWN: &str = "autoscaling.alpha.kubernetes.io/scale-down-tolerance";
const TOLERANCE_UP: &str = "autoscaling.alpha.kubernetes.io/scale-up-tolerance";

/// Every round-trip annotation: dropped before they are written anew, and
/// after they are read.
const ROUND_TRIP: [&str; 6] = [
    METRIC_SPECS,
    METRIC_STATUSES,
    CONDITIONS,
    BEHAVIOR,
    TOLERANCE_DOWN,
    TOLERANCE_UP,
];

/// kube's `DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// A JSON object of the present (`Some`) fields, in the given order.
fn obj<const N: usize>(fields: [(&str, Option<Value>); N]) -> Value {
    let mut m = Map::new();
    for (k, v) in fields {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    }
    Value::Object(m)
}

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    (!cur.is_null()).then_some(cur)
}

fn field(v: &Value, path: &[&str]) -> Option<Value> {
    get(v, path).cloned()
}

/// A Go `resource.Quantity` value field: `"0"` when absent.
fn quantity(v: &Value, path: &[&str]) -> Option<Value> {
    Some(field(v, path).unwrap_or_else(|| Value::from("0")))
}

fn is_cpu_resource(m: &Value) -> bool {
    get(m, &["type"]).and_then(Value::as_str) == Some("Resource")
        && get(m, &["resource", "name"]).and_then(Value::as_str) == Some("cpu")
}

fn annotations_of(object: &Value) -> Map<String, Value> {
    get(object, &["metadata", "annotations"])
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Write `annotations` back, sorted as Go writes a map; an empty map is
/// left out (`omitempty`).
fn set_annotations(object: &mut Value, annotations: Map<String, Value>) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        if !annotations.is_empty() {
            if let Some(m) = object.as_object_mut() {
                m.insert(
                    "metadata".into(),
                    obj([("annotations", Some(sorted(annotations)))]),
                );
            }
        }
        return;
    };
    if annotations.is_empty() {
        meta.shift_remove("annotations");
    } else {
        meta.insert("annotations".into(), sorted(annotations));
    }
}

fn sorted(m: Map<String, Value>) -> Value {
    let mut entries: Vec<(String, Value)> = m.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Object(entries.into_iter().collect())
}

fn json_string(v: &Value) -> Value {
    Value::from(serde_json::to_string(v).unwrap_or_default())
}

fn cross_version_ref(r: Option<&Value>) -> Option<Value> {
    let r = r?;
    Some(obj([
        (
            "kind",
            Some(field(r, &["kind"]).unwrap_or_else(|| Value::from(""))),
        ),
        (
            "name",
            Some(field(r, &["name"]).unwrap_or_else(|| Value::from(""))),
        ),
        ("apiVersion", field(r, &["apiVersion"])),
    ]))
}

// ---- v2 → v1 ----

fn metric_spec_to_v1(m: &Value) -> Value {
    let t = field(m, &["type"]).unwrap_or_else(|| Value::from(""));
    let object = get(m, &["object"]).map(|o| {
        obj([
            ("target", cross_version_ref(get(o, &["describedObject"]))),
            (
                "metricName",
                field(o, &["metric", "name"]).or(Some(Value::from(""))),
            ),
            ("targetValue", quantity(o, &["target", "value"])),
            ("selector", field(o, &["metric", "selector"])),
            ("averageValue", field(o, &["target", "averageValue"])),
        ])
    });
    let pods = get(m, &["pods"]).map(|p| {
        obj([
            (
                "metricName",
                field(p, &["metric", "name"]).or(Some(Value::from(""))),
            ),
            (
                "targetAverageValue",
                quantity(p, &["target", "averageValue"]),
            ),
            ("selector", field(p, &["metric", "selector"])),
        ])
    });
    let resource = get(m, &["resource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            (
                "targetAverageUtilization",
                field(r, &["target", "averageUtilization"]),
            ),
            ("targetAverageValue", field(r, &["target", "averageValue"])),
        ])
    });
    let container = get(m, &["containerResource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            (
                "targetAverageUtilization",
                field(r, &["target", "averageUtilization"]),
            ),
            ("targetAverageValue", field(r, &["target", "averageValue"])),
            (
                "container",
                field(r, &["container"]).or(Some(Value::from(""))),
            ),
        ])
    });
    let external = get(m, &["external"]).map(|e| {
        obj([
            (
                "metricName",
                field(e, &["metric", "name"]).or(Some(Value::from(""))),
            ),
            ("metricSelector", field(e, &["metric", "selector"])),
            ("targetValue", field(e, &["target", "value"])),
            ("targetAverageValue", field(e, &["target", "averageValue"])),
        ])
    });
    obj([
        ("type", Some(t)),
        ("object", object),
        ("pods", pods),
        ("resource", resource),
        ("containerResource", container),
        ("external", external),
    ])
}

fn metric_status_to_v1(m: &Value) -> Value {
    let t = field(m, &["type"]).unwrap_or_else(|| Value::from(""));
    let object = get(m, &["object"]).map(|o| {
        obj([
            ("target", cross_version_ref(get(o, &["describedObject"]))),
            (
                "metricName",
                field(o, &["metric", "name"]).or(Some(Value::from(""))),
            ),
            ("currentValue", quantity(o, &["current", "value"])),
            ("selector", field(o, &["metric", "selector"])),
            ("averageValue", field(o, &["current", "averageValue"])),
        ])
    });
    let pods = get(m, &["pods"]).map(|p| {
        obj([
            (
                "metricName",
                field(p, &["metric", "name"]).or(Some(Value::from(""))),
            ),
            (
                "currentAverageValue",
                quantity(p, &["current", "averageValue"]),
            ),
            ("selector", field(p, &["metric", "selector"])),
        ])
    });
    let resource = get(m, &["resource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            (
                "currentAverageUtilization",
                field(r, &["current", "averageUtilization"]),
            ),
            (
                "currentAverageValue",
                quantity(r, &["current", "averageValue"]),
            ),
        ])
    });
    let container = get(m, &["containerResource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            (
                "currentAverageUtilization",
                field(r, &["current", "averageUtilization"]),
            ),
            (
                "currentAverageValue",
                quantity(r, &["current", "averageValue"]),
            ),
            (
                "container",
                field(r, &["container"]).or(Some(Value::from(""))),
            ),
        ])
    });
    let external = get(m, &["external"]).map(|e| {
        obj([
            (
                "metricName",
                field(e, &["metric", "name"]).or(Some(Value::from(""))),
            ),
            ("metricSelector", field(e, &["metric", "selector"])),
            ("currentValue", quantity(e, &["current", "value"])),
            (
                "currentAverageValue",
                field(e, &["current", "averageValue"]),
            ),
        ])
    });
    obj([
        ("type", Some(t)),
        ("object", object),
        ("pods", pods),
        ("resource", resource),
        ("containerResource", container),
        ("external", external),
    ])
}

fn condition(c: &Value) -> Value {
    obj([
        ("type", field(c, &["type"]).or(Some(Value::from("")))),
        ("status", field(c, &["status"]).or(Some(Value::from("")))),
        ("lastTransitionTime", field(c, &["lastTransitionTime"])),
        ("reason", field(c, &["reason"])),
        ("message", field(c, &["message"])),
    ])
}

/// `HPAScalingRules` as the internal Go type marshals (no JSON tags).
fn rules_to_internal(r: Option<&Value>) -> Value {
    let Some(r) = r else {
        return Value::Null;
    };
    let policies = get(r, &["policies"]).and_then(Value::as_array).map(|ps| {
        Value::Array(
            ps.iter()
                .map(|p| {
                    obj([
                        ("Type", field(p, &["type"]).or(Some(Value::from("")))),
                        ("Value", field(p, &["value"]).or(Some(Value::from(0)))),
                        (
                            "PeriodSeconds",
                            field(p, &["periodSeconds"]).or(Some(Value::from(0))),
                        ),
                    ])
                })
                .collect(),
        )
    });
    obj([
        (
            "StabilizationWindowSeconds",
            Some(field(r, &["stabilizationWindowSeconds"]).unwrap_or(Value::Null)),
        ),
        (
            "SelectPolicy",
            Some(field(r, &["selectPolicy"]).unwrap_or(Value::Null)),
        ),
        ("Policies", Some(policies.unwrap_or(Value::Null))),
    ])
}

/// The `v2` object as `autoscaling/v1` (in place, `apiVersion` aside).
pub(super) fn v2_to_v1(object: &mut Value) {
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let status = object.get("status").cloned();
    let metrics: Vec<Value> = get(&spec, &["metrics"])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut annotations = annotations_of(object);
    for a in ROUND_TRIP {
        annotations.shift_remove(a);
    }
    let cpu_target = metrics
        .iter()
        .find(|m| {
            is_cpu_resource(m) && get(m, &["resource", "target", "averageUtilization"]).is_some()
        })
        .and_then(|m| field(m, &["resource", "target", "averageUtilization"]));
    let others: Vec<Value> = metrics
        .iter()
        .filter(|m| {
            !(is_cpu_resource(m) && get(m, &["resource", "target", "averageUtilization"]).is_some())
        })
        .map(metric_spec_to_v1)
        .collect();
    if !others.is_empty() {
        annotations.insert(METRIC_SPECS.into(), json_string(&Value::Array(others)));
    }
    let current: Vec<Value> = status
        .as_ref()
        .and_then(|s| get(s, &["currentMetrics"]))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !current.is_empty() {
        let v1: Vec<Value> = current.iter().map(metric_status_to_v1).collect();
        annotations.insert(METRIC_STATUSES.into(), json_string(&Value::Array(v1)));
    }
    if let Some(b) = get(&spec, &["behavior"]) {
        let internal = obj([
            ("ScaleUp", Some(rules_to_internal(get(b, &["scaleUp"])))),
            ("ScaleDown", Some(rules_to_internal(get(b, &["scaleDown"])))),
        ]);
        annotations.insert(BEHAVIOR.into(), json_string(&internal));
    }
    let conditions: Vec<Value> = status
        .as_ref()
        .and_then(|s| get(s, &["conditions"]))
        .and_then(Value::as_array)
        .map(|cs| cs.iter().map(condition).collect())
        .unwrap_or_default();
    if !conditions.is_empty() {
        annotations.insert(CONDITIONS.into(), json_string(&Value::Array(conditions)));
    }
    set_annotations(object, annotations);

    let v1_spec = obj([
        (
            "scaleTargetRef",
            cross_version_ref(get(&spec, &["scaleTargetRef"])),
        ),
        ("minReplicas", field(&spec, &["minReplicas"])),
        (
            "maxReplicas",
            field(&spec, &["maxReplicas"]).or(Some(Value::from(0))),
        ),
        ("targetCPUUtilizationPercentage", cpu_target),
    ]);
    let v1_status = status.map(|s| {
        let cpu_current = current
            .iter()
            .rev()
            .filter(|m| is_cpu_resource(m))
            .find_map(|m| field(m, &["resource", "current", "averageUtilization"]));
        obj([
            ("observedGeneration", field(&s, &["observedGeneration"])),
            ("lastScaleTime", field(&s, &["lastScaleTime"])),
            (
                "currentReplicas",
                field(&s, &["currentReplicas"]).or(Some(Value::from(0))),
            ),
            (
                "desiredReplicas",
                field(&s, &["desiredReplicas"]).or(Some(Value::from(0))),
            ),
            ("currentCPUUtilizationPercentage", cpu_current),
        ])
    });
    if let Some(m) = object.as_object_mut() {
        if m.contains_key("spec") {
            m.insert("spec".into(), v1_spec);
        }
        if let Some(s) = v1_status {
            m.insert("status".into(), s);
        }
    }
}

// ---- v1 → v2 ----

fn metric_target(
    t: &str,
    value: Option<Value>,
    average: Option<Value>,
    util: Option<Value>,
) -> Value {
    obj([
        ("type", Some(Value::from(t))),
        ("value", value),
        ("averageValue", average),
        ("averageUtilization", util),
    ])
}

fn identifier(name: Option<Value>, selector: Option<Value>) -> Value {
    obj([
        ("name", name.or(Some(Value::from("")))),
        ("selector", selector),
    ])
}

fn metric_spec_to_v2(m: &Value) -> Value {
    let object = get(m, &["object"]).map(|o| {
        let average = field(o, &["averageValue"]);
        let t = if average.is_none() {
            "Value"
        } else {
            "AverageValue"
        };
        obj([
            (
                "describedObject",
                cross_version_ref(get(o, &["target"]))
                    .or_else(|| cross_version_ref(Some(&Value::Null))),
            ),
            (
                "target",
                Some(metric_target(
                    t,
                    quantity(o, &["targetValue"]),
                    average,
                    None,
                )),
            ),
            (
                "metric",
                Some(identifier(
                    field(o, &["metricName"]),
                    field(o, &["selector"]),
                )),
            ),
        ])
    });
    let pods = get(m, &["pods"]).map(|p| {
        obj([
            (
                "metric",
                Some(identifier(
                    field(p, &["metricName"]),
                    field(p, &["selector"]),
                )),
            ),
            (
                "target",
                Some(metric_target(
                    "AverageValue",
                    None,
                    quantity(p, &["targetAverageValue"]),
                    None,
                )),
            ),
        ])
    });
    let resource_target = |r: &Value| {
        let util = field(r, &["targetAverageUtilization"]);
        let t = if util.is_none() {
            "AverageValue"
        } else {
            "Utilization"
        };
        metric_target(t, None, field(r, &["targetAverageValue"]), util)
    };
    let resource = get(m, &["resource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            ("target", Some(resource_target(r))),
        ])
    });
    let container = get(m, &["containerResource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            ("target", Some(resource_target(r))),
            (
                "container",
                field(r, &["container"]).or(Some(Value::from(""))),
            ),
        ])
    });
    let external = get(m, &["external"]).map(|e| {
        let value = field(e, &["targetValue"]);
        let t = if value.is_none() {
            "AverageValue"
        } else {
            "Value"
        };
        obj([
            (
                "metric",
                Some(identifier(
                    field(e, &["metricName"]),
                    field(e, &["metricSelector"]),
                )),
            ),
            (
                "target",
                Some(metric_target(
                    t,
                    value,
                    field(e, &["targetAverageValue"]),
                    None,
                )),
            ),
        ])
    });
    obj([
        ("type", field(m, &["type"]).or(Some(Value::from("")))),
        ("object", object),
        ("pods", pods),
        ("resource", resource),
        ("containerResource", container),
        ("external", external),
    ])
}

fn value_status(value: Option<Value>, average: Option<Value>, util: Option<Value>) -> Value {
    obj([
        ("value", value),
        ("averageValue", average),
        ("averageUtilization", util),
    ])
}

fn metric_status_to_v2(m: &Value) -> Value {
    let object = get(m, &["object"]).map(|o| {
        obj([
            (
                "metric",
                Some(identifier(
                    field(o, &["metricName"]),
                    field(o, &["selector"]),
                )),
            ),
            (
                "current",
                Some(value_status(
                    quantity(o, &["currentValue"]),
                    field(o, &["averageValue"]),
                    None,
                )),
            ),
            (
                "describedObject",
                cross_version_ref(get(o, &["target"]))
                    .or_else(|| cross_version_ref(Some(&Value::Null))),
            ),
        ])
    });
    let pods = get(m, &["pods"]).map(|p| {
        obj([
            (
                "metric",
                Some(identifier(
                    field(p, &["metricName"]),
                    field(p, &["selector"]),
                )),
            ),
            (
                "current",
                Some(value_status(
                    None,
                    quantity(p, &["currentAverageValue"]),
                    None,
                )),
            ),
        ])
    });
    let resource_current = |r: &Value| {
        value_status(
            None,
            quantity(r, &["currentAverageValue"]),
            field(r, &["currentAverageUtilization"]),
        )
    };
    let resource = get(m, &["resource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            ("current", Some(resource_current(r))),
        ])
    });
    let container = get(m, &["containerResource"]).map(|r| {
        obj([
            ("name", field(r, &["name"]).or(Some(Value::from("")))),
            ("current", Some(resource_current(r))),
            (
                "container",
                field(r, &["container"]).or(Some(Value::from(""))),
            ),
        ])
    });
    let external = get(m, &["external"]).map(|e| {
        obj([
            (
                "metric",
                Some(identifier(
                    field(e, &["metricName"]),
                    field(e, &["metricSelector"]),
                )),
            ),
            (
                "current",
                Some(value_status(
                    quantity(e, &["currentValue"]),
                    field(e, &["currentAverageValue"]),
                    None,
                )),
            ),
        ])
    });
    obj([
        ("type", field(m, &["type"]).or(Some(Value::from("")))),
        ("object", object),
        ("pods", pods),
        ("resource", resource),
        ("containerResource", container),
        ("external", external),
    ])
}

/// A key of the internal behaviour JSON, matched as Go's `encoding/json`
/// matches field names (case-insensitively).
fn go_field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    let m = v.as_object()?;
    m.get(name)
        .or_else(|| {
            m.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
        .filter(|v| !v.is_null())
}

/// kube's v2 defaults of one direction's scaling rules
/// (`GenerateHPAScaleUpRules` / `GenerateHPAScaleDownRules`), filling what
/// `rules` lacks.
fn defaulted_rules(rules: Option<&Value>, up: bool) -> Value {
    let (window, policies) = if up {
        (
            0,
            vec![
                obj([
                    ("type", Some("Pods".into())),
                    ("value", Some(4.into())),
                    ("periodSeconds", Some(15.into())),
                ]),
                obj([
                    ("type", Some("Percent".into())),
                    ("value", Some(100.into())),
                    ("periodSeconds", Some(15.into())),
                ]),
            ],
        )
    } else {
        (
            300,
            vec![obj([
                ("type", Some("Percent".into())),
                ("value", Some(100.into())),
                ("periodSeconds", Some(15.into())),
            ])],
        )
    };
    let r = rules.cloned().unwrap_or(Value::Null);
    obj([
        (
            "stabilizationWindowSeconds",
            Some(field(&r, &["stabilizationWindowSeconds"]).unwrap_or(window.into())),
        ),
        (
            "selectPolicy",
            Some(field(&r, &["selectPolicy"]).unwrap_or("Max".into())),
        ),
        (
            "policies",
            Some(
                get(&r, &["policies"])
                    .filter(|p| p.as_array().is_some_and(|a| !a.is_empty()))
                    .cloned()
                    .unwrap_or(Value::Array(policies)),
            ),
        ),
        ("tolerance", field(&r, &["tolerance"])),
    ])
}

fn rules_from_internal(r: Option<&Value>) -> Option<Value> {
    let r = r?;
    let policies = go_field(r, "Policies").and_then(Value::as_array).map(|ps| {
        Value::Array(
            ps.iter()
                .map(|p| {
                    obj([
                        ("type", go_field(p, "Type").cloned().or(Some("".into()))),
                        ("value", go_field(p, "Value").cloned().or(Some(0.into()))),
                        (
                            "periodSeconds",
                            go_field(p, "PeriodSeconds").cloned().or(Some(0.into())),
                        ),
                    ])
                })
                .collect(),
        )
    });
    Some(obj([
        (
            "stabilizationWindowSeconds",
            go_field(r, "StabilizationWindowSeconds").cloned(),
        ),
        ("selectPolicy", go_field(r, "SelectPolicy").cloned()),
        ("policies", policies),
    ]))
}

fn parse_array(annotations: &Map<String, Value>, key: &str) -> Option<Vec<Value>> {
    let s = annotations.get(key)?.as_str()?;
    match serde_json::from_str::<Value>(s).ok()? {
        Value::Array(a) => Some(a),
        Value::Null => Some(Vec::new()),
        _ => None,
    }
}

/// The `v1` object as `autoscaling/v2` (in place, `apiVersion` aside).
pub(super) fn v1_to_v2(object: &mut Value) {
    let spec = object.get("spec").cloned().unwrap_or(Value::Null);
    let status = object.get("status").cloned();
    let mut annotations = annotations_of(object);

    let cpu_metric = field(&spec, &["targetCPUUtilizationPercentage"]).map(|n| {
        obj([
            ("type", Some("Resource".into())),
            (
                "resource",
                Some(obj([
                    ("name", Some("cpu".into())),
                    (
                        "target",
                        Some(metric_target("Utilization", None, None, Some(n))),
                    ),
                ])),
            ),
        ])
    });
    let mut metrics: Vec<Value> = cpu_metric.iter().cloned().collect();
    if let Some(others) = parse_array(&annotations, METRIC_SPECS) {
        metrics = others.iter().map(metric_spec_to_v2).collect();
        metrics.extend(cpu_metric);
    }
    let behavior = annotations
        .get(BEHAVIOR)
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|b| {
            let up = rules_from_internal(go_field(&b, "ScaleUp"));
            let down = rules_from_internal(go_field(&b, "ScaleDown"));
            (up.is_some() || down.is_some()).then(|| {
                obj([
                    ("scaleUp", Some(defaulted_rules(up.as_ref(), true))),
                    ("scaleDown", Some(defaulted_rules(down.as_ref(), false))),
                ])
            })
        });
    let mut current: Option<Vec<Value>> = status
        .as_ref()
        .and_then(|s| field(s, &["currentCPUUtilizationPercentage"]))
        .map(|n| {
            vec![obj([
                ("type", Some("Resource".into())),
                (
                    "resource",
                    Some(obj([
                        ("name", Some("cpu".into())),
                        ("current", Some(value_status(None, None, Some(n)))),
                    ])),
                ),
            ])]
        });
    if let Some(statuses) = parse_array(&annotations, METRIC_STATUSES) {
        current = Some(statuses.iter().map(metric_status_to_v2).collect());
    }
    if metrics.is_empty() {
        metrics.push(obj([
            ("type", Some("Resource".into())),
            (
                "resource",
                Some(obj([
                    ("name", Some("cpu".into())),
                    (
                        "target",
                        Some(metric_target(
                            "Utilization",
                            None,
                            None,
                            Some(DEFAULT_CPU_UTILIZATION.into()),
                        )),
                    ),
                ])),
            ),
        ]));
    }
    let conditions = parse_array(&annotations, CONDITIONS)
        .map(|cs| cs.iter().map(condition).collect::<Vec<_>>());
    for a in ROUND_TRIP {
        annotations.shift_remove(a);
    }
    set_annotations(object, annotations);

    let v2_spec = obj([
        (
            "scaleTargetRef",
            cross_version_ref(get(&spec, &["scaleTargetRef"])),
        ),
        ("minReplicas", field(&spec, &["minReplicas"])),
        (
            "maxReplicas",
            field(&spec, &["maxReplicas"]).or(Some(Value::from(0))),
        ),
        ("metrics", Some(Value::Array(metrics))),
        ("behavior", behavior),
    ]);
    let v2_status = status.map(|s| {
        obj([
            ("observedGeneration", field(&s, &["observedGeneration"])),
            ("lastScaleTime", field(&s, &["lastScaleTime"])),
            (
                "currentReplicas",
                field(&s, &["currentReplicas"]).or(Some(Value::from(0))),
            ),
            (
                "desiredReplicas",
                field(&s, &["desiredReplicas"]).or(Some(Value::from(0))),
            ),
            (
                "currentMetrics",
                current.filter(|c| !c.is_empty()).map(Value::Array),
            ),
            (
                "conditions",
                conditions.filter(|c| !c.is_empty()).map(Value::Array),
            ),
        ])
    });
    if let Some(m) = object.as_object_mut() {
        if m.contains_key("spec") {
            m.insert("spec".into(), v2_spec);
        }
        if let Some(s) = v2_status {
            m.insert("status".into(), s);
        }
    }
}
