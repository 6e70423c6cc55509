//! `flowcontrol.apiserver.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/flowcontrol/v1/defaults.go`).
//!
//! A FlowSchema's `matchingPrecedence` (a plain integer in Go: 0 counts as
//! unset) becomes 1000. A limited priority level gets
//! `nominalConcurrencyShares: 30` (a pointer in v1: an explicit 0 is kept),
//! `lendablePercent: 0` and, when it queues, 64 queues, hand size 8 and a
//! queue length limit of 50 (plain integers: 0 counts as unset); an exempt
//! one gets `nominalConcurrencyShares: 0` and `lendablePercent: 0`.

use serde_json::{Map, Value};

use super::{child, object_at, or_set};

/// FlowSchema: `matchingPrecedence` (the spec is a struct in Go, so even an
/// absent one gets it).
pub(super) fn flow_schema(obj: &mut Value) {
    if let Some(spec) = obj.as_object_mut().and_then(|m| child(m, "spec")) {
        or_set_nonzero(spec, "matchingPrecedence", 1000);
    }
}

/// PriorityLevelConfiguration: the limited or exempt configuration.
pub(super) fn priority_level_configuration(obj: &mut Value) {
    if let Some(limited) = object_at(obj, &["spec", "limited"]) {
        or_set(limited, "nominalConcurrencyShares", 30);
        or_set(limited, "lendablePercent", 0);
        if let Some(queuing) = limited
            .get_mut("limitResponse")
            .and_then(|r| r.get_mut("queuing"))
            .and_then(Value::as_object_mut)
        {
            or_set_nonzero(queuing, "handSize", 8);
            or_set_nonzero(queuing, "queues", 64);
            or_set_nonzero(queuing, "queueLengthLimit", 50);
        }
    }
    if let Some(exempt) = object_at(obj, &["spec", "exempt"]) {
        or_set(exempt, "nominalConcurrencyShares", 0);
        or_set(exempt, "lendablePercent", 0);
    }
}

/// Set the integer `key` when it is absent, null or 0 (Go: a plain integer
/// field's zero value).
fn or_set_nonzero(m: &mut Map<String, Value>, key: &str, v: i64) {
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() || slot.as_f64() == Some(0.0) {
        *slot = Value::from(v);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn flow_schema_precedence() {
        let mut fs = json!({"spec": {"matchingPrecedence": 0}});
        super::flow_schema(&mut fs);
        assert_eq!(fs["spec"]["matchingPrecedence"], 1000);
        let mut fs = json!({"spec": {"matchingPrecedence": 500}});
        super::flow_schema(&mut fs);
        assert_eq!(fs["spec"]["matchingPrecedence"], 500);
    }

    #[test]
    fn priority_levels() {
        let mut pl = json!({"spec": {"type": "Limited", "limited": {
            "limitResponse": {"type": "Queuing", "queuing": {"queues": 0, "handSize": 4}}}}});
        super::priority_level_configuration(&mut pl);
        assert_eq!(
            pl["spec"]["limited"],
            json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
                   "limitResponse": {"type": "Queuing",
                                     "queuing": {"queues": 64, "handSize": 4, "queueLengthLimit": 50}}})
        );
        let mut pl = json!({"spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 0, "lendablePercent": 20, "limitResponse": {"type": "Reject"}}}});
        super::priority_level_configuration(&mut pl);
        assert_eq!(pl["spec"]["limited"]["nominalConcurrencyShares"], 0);
        assert_eq!(pl["spec"]["limited"]["lendablePercent"], 20);
        assert!(pl["spec"]["limited"]["limitResponse"]
            .get("queuing")
            .is_none());
        let mut pl = json!({"spec": {"type": "Exempt", "exempt": {}}});
        super::priority_level_configuration(&mut pl);
        assert_eq!(
            pl["spec"]["exempt"],
            json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
        );
    }
}
