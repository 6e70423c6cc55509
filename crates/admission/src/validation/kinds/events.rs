//! Event, core `v1` and `events.k8s.io/v1` (`pkg/apis/core/validation/events.go`:
//! `ValidateEventCreate`, `ValidateEventUpdate`).
//!
//! kube validates the internal `core.Event`, so the paths are its field
//! names whichever version was asked: `events.k8s.io/v1`'s `regarding`,
//! `note` and `deprecatedCount` are reported as `involvedObject`,
//! `message` and `count`. A core `v1` request gets the legacy rules only
//! (also on update); `events.k8s.io/v1` adds the strict ones.

use chrono::{DateTime, SecondsFormat, Utc};
use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::util::{int_of, str_of};
use super::Write;

/// The field names of one request version's Event.
struct Shape {
    involved: &'static str,
    controller: &'static str,
    message: &'static str,
    source: &'static str,
    first: &'static str,
    last: &'static str,
    count: &'static str,
}

const CORE: Shape = Shape {
    involved: "involvedObject",
    controller: "reportingComponent",
    message: "message",
    source: "source",
    first: "firstTimestamp",
    last: "lastTimestamp",
    count: "count",
};

const EVENTS_V1: Shape = Shape {
    involved: "regarding",
    controller: "reportingController",
    message: "note",
    source: "deprecatedSource",
    first: "deprecatedFirstTimestamp",
    last: "deprecatedLastTimestamp",
    count: "deprecatedCount",
};

/// The errors of an `events.k8s.io` object of `kind`.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "Event" {
        return Vec::new();
    }
    validate_event(w, obj, true)
}

/// kube's `ValidateEventCreate` / `ValidateEventUpdate` for a core `v1`
/// (`events_v1 == false`) or `events.k8s.io/v1` request.
pub(crate) fn validate_event(w: Write<'_>, obj: &Value, events_v1: bool) -> Vec<FieldError> {
    let shape = if events_v1 { &EVENTS_V1 } else { &CORE };
    let mut errs = legacy_validate_event(obj, shape);
    if !events_v1 {
        return errs;
    }
    let Some(old) = w.old() else {
        errs.extend(validate_v1_event_series(obj));
        if time_unset(obj, "eventTime") {
            errs.push(FieldError::required("eventTime", ""));
        }
        let ty = str_of(obj, "type");
        if ty != "Normal" && ty != "Warning" {
            errs.push(FieldError::invalid(
                "type",
                "",
                &format!("has invalid value: {ty}"),
            ));
        }
        let source = obj.get(shape.source).unwrap_or(&Value::Null);
        for (path, set) in [
            ("firstTimestamp", !time_unset(obj, shape.first)),
            ("lastTimestamp", !time_unset(obj, shape.last)),
            ("count", int_of(obj, shape.count).unwrap_or(0) != 0),
            (
                "source",
                !str_of(source, "component").is_empty() || !str_of(source, "host").is_empty(),
            ),
        ] {
            if set {
                errs.push(FieldError::invalid(path, "", "needs to be unset"));
            }
        }
        return errs;
    };
    if super::util::semantic(obj.get("series").unwrap_or(&Value::Null))
        != super::util::semantic(old.get("series").unwrap_or(&Value::Null))
    {
        errs.extend(validate_v1_event_series(obj));
    }
    for (path, value) in immutable_fields() {
        let (n, o) = (value(obj), value(old));
        // Rendered values compare as `Semantic.DeepEqual` does (times
        // normalized to UTC at their precision).
        if n != o {
            errs.push(FieldError::invalid(path, n, "field is immutable"));
        }
    }
    errs
}

type Render = fn(&Value) -> Value;

/// `ValidateEventUpdate`'s immutable fields in kube's order (`reason` is
/// checked twice, as kube does), each rendered as its internal Go value.
/// Only `events.k8s.io/v1` updates get here, so the names are its own.
fn immutable_fields() -> Vec<(&'static str, Render)> {
    vec![
        ("involvedObject", |o| object_reference(o.get("regarding"))),
        ("reason", |o| str_of(o, "reason").into()),
        ("message", |o| str_of(o, "note").into()),
        ("source", |o| {
            let s = o.get("deprecatedSource").unwrap_or(&Value::Null);
            let mut m = Map::new();
            m.insert("Component".into(), str_of(s, "component").into());
            m.insert("Host".into(), str_of(s, "host").into());
            Value::Object(m)
        }),
        ("firstTimestamp", |o| {
            time(o.get("deprecatedFirstTimestamp"), false)
        }),
        ("lastTimestamp", |o| {
            time(o.get("deprecatedLastTimestamp"), false)
        }),
        ("count", |o| {
            int_of(o, "deprecatedCount").unwrap_or(0).into()
        }),
        ("reason", |o| str_of(o, "reason").into()),
        ("type", |o| str_of(o, "type").into()),
        ("eventTime", |o| time(o.get("eventTime"), true)),
        ("action", |o| str_of(o, "action").into()),
        ("related", |o| match o.get("related") {
            Some(r) if r.is_object() => object_reference(Some(r)),
            _ => Value::Null,
        }),
        ("reportingController", |o| {
            str_of(o, "reportingController").into()
        }),
        ("reportingInstance", |o| {
            str_of(o, "reportingInstance").into()
        }),
    ]
}

/// An internal `core.ObjectReference` (no JSON tags: Go field names in
/// declaration order).
fn object_reference(r: Option<&Value>) -> Value {
    let r = r.unwrap_or(&Value::Null);
    let mut m = Map::new();
    for (json, go) in [
        ("kind", "Kind"),
        ("namespace", "Namespace"),
        ("name", "Name"),
        ("uid", "UID"),
        ("apiVersion", "APIVersion"),
        ("resourceVersion", "ResourceVersion"),
        ("fieldPath", "FieldPath"),
    ] {
        m.insert(go.into(), str_of(r, json).into());
    }
    Value::Object(m)
}

/// A `metav1.Time` (`micro == false`, second precision) or
/// `metav1.MicroTime` as its JSON: the UTC timestamp, `null` when zero.
fn time(v: Option<&Value>, micro: bool) -> Value {
    let Some(s) = v.and_then(Value::as_str).filter(|s| !s.is_empty()) else {
        return Value::Null;
    };
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => {
            let t = t.with_timezone(&Utc);
            if micro {
                t.to_rfc3339_opts(SecondsFormat::Micros, true).into()
            } else {
                t.to_rfc3339_opts(SecondsFormat::Secs, true).into()
            }
        }
        Err(_) => s.into(),
    }
}

/// Whether a timestamp field is unset (absent, null or empty).
fn time_unset(obj: &Value, key: &str) -> bool {
    match obj.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

/// kube's `validateV1EventSeries`.
fn validate_v1_event_series(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(series) = obj.get("series").filter(|s| s.is_object()) else {
        return errs;
    };
    if int_of(series, "count").unwrap_or(0) < 2 {
        errs.push(FieldError::invalid(
            "series.count",
            "",
            "should be at least 2",
        ));
    }
    if time_unset(series, "lastObservedTime") {
        errs.push(FieldError::required("series.lastObservedTime", ""));
    }
    errs
}

/// kube's `legacyValidateEvent`: without `eventTime`, the namespaces of
/// the event and its object agree (an empty object namespace allows only
/// `default`); with it, the reporting fields and their lengths; always a
/// DNS-1123 namespace.
fn legacy_validate_event(obj: &Value, shape: &Shape) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let involved_ns = obj
        .get(shape.involved)
        .map(|o| str_of(o, "namespace"))
        .unwrap_or("");
    let ns = obj
        .get("metadata")
        .map(|m| str_of(m, "namespace"))
        .unwrap_or("");
    let mismatch = || {
        FieldError::invalid(
            "involvedObject.namespace",
            involved_ns,
            "does not match event.namespace",
        )
    };
    // An object without a namespace yet (the request's is applied later)
    // is not compared.
    if time_unset(obj, "eventTime") {
        let agrees = if involved_ns.is_empty() {
            ns == "default"
        } else {
            ns == involved_ns
        };
        if !ns.is_empty() && !agrees {
            errs.push(mismatch());
        }
    } else {
        if involved_ns.is_empty() && !ns.is_empty() && ns != "default" && ns != "kube-system" {
            errs.push(mismatch());
        }
        let rc = str_of(obj, shape.controller);
        if rc.is_empty() {
            errs.push(FieldError::required("reportingController", ""));
        }
        for m in keelson_apimachinery::names::is_qualified_name(rc) {
            errs.push(FieldError::invalid("reportingController", rc, &m));
        }
        for (path, key, limit, required) in [
            ("reportingInstance", "reportingInstance", 128, true),
            ("action", "action", 128, true),
            ("reason", "reason", 128, true),
            ("message", shape.message, 1024, false),
        ] {
            let v = str_of(obj, key);
            if required && v.is_empty() {
                errs.push(FieldError::required(path, ""));
            }
            if v.len() > limit {
                errs.push(FieldError::invalid(
                    path,
                    "",
                    &format!("can have at most {limit} characters"),
                ));
            }
        }
    }
    if !ns.is_empty() {
        for m in keelson_apimachinery::names::is_dns1123_subdomain(ns) {
            errs.push(FieldError::invalid("namespace", ns, &m));
        }
    }
    errs
}
