//! What the printers share: reading fields of a JSON object the way Go reads
//! a typed one (missing is the zero value), and kube's label and selector
//! formatting.

use serde_json::Value;

use super::time::{self, Time};

/// The value at `path`, if every step is there.
pub(crate) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// A string field; "" when missing (Go's zero value).
pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// An optional string field (a Go `*string`).
pub(crate) fn opt_str<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path).and_then(Value::as_str)
}

/// An integer field; 0 when missing.
pub(crate) fn int_at(v: &Value, path: &[&str]) -> i64 {
    opt_int(v, path).unwrap_or(0)
}

/// An optional integer field (a Go `*int32`).
pub(crate) fn opt_int(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(Value::as_i64)
}

/// An optional boolean field (a Go `*bool`).
pub(crate) fn opt_bool(v: &Value, path: &[&str]) -> Option<bool> {
    at(v, path).and_then(Value::as_bool)
}

/// An array field; empty when missing.
pub(crate) fn arr_at<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    at(v, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// How many entries a map field has.
pub(crate) fn map_len(v: &Value, path: &[&str]) -> i64 {
    at(v, path)
        .and_then(Value::as_object)
        .map_or(0, |m| m.len() as i64)
}

/// A timestamp field (`None` when missing or zero).
pub(crate) fn time_at(v: &Value, path: &[&str]) -> Option<Time> {
    opt_str(v, path).and_then(time::parse)
}

/// `metadata.name`.
pub(crate) fn name(v: &Value) -> &str {
    str_at(v, &["metadata", "name"])
}

/// The Age cell: `translateTimestampSince(metadata.creationTimestamp)`.
pub(crate) fn age(v: &Value, now: Time) -> Value {
    Value::from(time::since(
        time_at(v, &["metadata", "creationTimestamp"]),
        now,
    ))
}

/// Whether `metadata.deletionTimestamp` is set.
pub(crate) fn deleting(v: &Value) -> bool {
    at(v, &["metadata", "deletionTimestamp"]).is_some_and(|t| !t.is_null())
}

/// `labels.Set(m).String()`: `k=v` pairs sorted by key, comma-joined.
pub(crate) fn labels_string(m: Option<&Value>) -> String {
    let Some(m) = m.and_then(Value::as_object) else {
        return String::new();
    };
    let mut pairs: Vec<(&String, &str)> = m
        .iter()
        .map(|(k, v)| (k, v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `labels.FormatLabels`: [`labels_string`], `<none>` when empty.
pub(crate) fn format_labels(m: Option<&Value>) -> String {
    let s = labels_string(m);
    if s.is_empty() {
        "<none>".to_string()
    } else {
        s
    }
}

/// `metav1.LabelSelectorAsSelector(sel).String()`: "" for a missing or
/// empty selector, `Err` for an invalid operator.
pub(crate) fn selector_string(sel: Option<&Value>) -> Result<String, ()> {
    let Some(sel) = sel.filter(|s| !s.is_null()) else {
        return Ok(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in arr_at(sel, &["matchExpressions"]) {
        let key = str_at(e, &["key"]);
        let mut values: Vec<&str> = arr_at(e, &["values"])
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        values.sort_unstable();
        let s = match str_at(e, &["operator"]) {
            "In" if !values.is_empty() => format!("{key} in ({})", values.join(",")),
            "NotIn" if !values.is_empty() => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.to_string(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return Err(()),
        };
        reqs.push((key.to_string(), s));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(reqs
        .into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(","))
}

/// `metav1.FormatLabelSelector`: `<none>` when empty, `<error>` when invalid.
pub(crate) fn format_label_selector(sel: Option<&Value>) -> String {
    match selector_string(sel) {
        Ok(s) if s.is_empty() => "<none>".to_string(),
        Ok(s) => s,
        Err(()) => "<error>".to_string(),
    }
}

/// The Containers and Images cells of a pod template (`layoutContainerCells`).
pub(crate) fn container_cells(containers: &[Value]) -> (Value, Value) {
    let names: Vec<&str> = containers.iter().map(|c| str_at(c, &["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| str_at(c, &["image"])).collect();
    (Value::from(names.join(",")), Value::from(images.join(",")))
}

/// `IntOrString.String()`.
pub(crate) fn int_or_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// `printBoolPtr`: `True`, `False` or `<unset>`.
pub(crate) fn bool_ptr(v: Option<bool>) -> String {
    match v {
        Some(true) => "True".to_string(),
        Some(false) => "False".to_string(),
        None => "<unset>".to_string(),
    }
}

/// kube's `listWithMoreString`: the first `max` entries, then `+ N more...`.
pub(crate) fn list_with_more(list: &[String], count: usize, max: usize) -> String {
    let ret = list.join(",");
    if count > max {
        return format!("{ret} + {} more...", count - max);
    }
    if ret.is_empty() {
        "<unset>".to_string()
    } else {
        ret
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_and_selectors() {
        assert_eq!(format_labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(format_labels(None), "<none>");
        assert_eq!(format_labels(Some(&json!({}))), "<none>");
        let sel = json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["b", "a"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "x", "operator": "Exists"},
                {"key": "gone", "operator": "DoesNotExist"}
            ]
        });
        assert_eq!(
            format_label_selector(Some(&sel)),
            "app=web,env notin (prod),!gone,tier in (a,b),x"
        );
        assert_eq!(format_label_selector(None), "<none>");
        assert_eq!(format_label_selector(Some(&json!({}))), "<none>");
        assert_eq!(selector_string(Some(&json!({}))), Ok(String::new()));
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "Nope"}]});
        assert_eq!(format_label_selector(Some(&bad)), "<error>");
    }

    #[test]
    fn zero_values() {
        let o = json!({"a": {"b": "x", "n": 3, "t": true}});
        assert_eq!(str_at(&o, &["a", "b"]), "x");
        assert_eq!(str_at(&o, &["a", "zz"]), "");
        assert_eq!(int_at(&o, &["a", "n"]), 3);
        assert_eq!(int_at(&o, &["nope"]), 0);
        assert_eq!(opt_bool(&o, &["a", "t"]), Some(true));
        assert!(arr_at(&o, &["a"]).is_empty());
        assert_eq!(bool_ptr(None), "<unset>");
        assert_eq!(int_or_string(&json!("50%")), "50%");
        assert_eq!(int_or_string(&json!(2)), "2");
        assert_eq!(
            list_with_more(&["a".into(), "b".into(), "c".into()], 5, 3),
            "a,b,c + 2 more..."
        );
        assert_eq!(list_with_more(&[], 0, 3), "<unset>");
    }
}
