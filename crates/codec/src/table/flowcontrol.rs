//! flowcontrol.apiserver.k8s.io: flow schemas and priority level
//! configurations. kube's list printer sorts flow schemas by matching
//! precedence, then name ([`flow_schema_order`]).

use std::cmp::Ordering;

use serde_json::Value;

use super::columns::*;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

// flowcontrol/v1
const PL_REFERENCE_NAME: &str =
    "`name` is the name of the priority level configuration being referenced Required.";
const FS_MATCHING_PRECEDENCE: &str = "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.";
const FS_DISTINGUISHER_METHOD: &str = "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.";
const PL_TYPE: &str = "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.";
const PL_NOMINAL_CONCURRENCY_SHARES: &str = "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)";
const PL_QUEUES: &str = "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.";
const PL_HAND_SIZE: &str = "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.";
const PL_QUEUE_LENGTH_LIMIT: &str = "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.";

/// Name, PriorityLevel, MatchingPrecedence, DistinguisherMethod, Age,
/// MissingPL (the `Dangling` condition's status, `?` without one).
pub(crate) static FLOW_SCHEMA: Printer = Printer {
    columns: &[
        NAME,
        col("PriorityLevel", "string", PL_REFERENCE_NAME),
        col("MatchingPrecedence", "string", FS_MATCHING_PRECEDENCE),
        col("DistinguisherMethod", "string", FS_DISTINGUISHER_METHOD),
        AGE,
        col(
            "MissingPL",
            "string",
            "references a broken or non-existent PriorityLevelConfiguration",
        ),
    ],
    print: print_flow_schema,
};

/// Name, Type, NominalConcurrencyShares, Queues, HandSize,
/// QueueLengthLimit, Age (`<none>` for what an exempt level lacks).
pub(crate) static PRIORITY_LEVEL_CONFIGURATION: Printer = Printer {
    columns: &[
        NAME,
        col("Type", "string", PL_TYPE),
        col(
            "NominalConcurrencyShares",
            "string",
            PL_NOMINAL_CONCURRENCY_SHARES,
        ),
        col("Queues", "string", PL_QUEUES),
        col("HandSize", "string", PL_HAND_SIZE),
        col("QueueLengthLimit", "string", PL_QUEUE_LENGTH_LIMIT),
        AGE,
    ],
    print: print_priority_level_configuration,
};

/// kube's `FlowSchemaSequence` order, which its list printer prints flow
/// schemas in: lower `matchingPrecedence` first, then by name.
pub(crate) fn flow_schema_order(a: &Value, b: &Value) -> Ordering {
    let precedence = |o: &Value| int_at(o, &["spec", "matchingPrecedence"]);
    precedence(a)
        .cmp(&precedence(b))
        .then_with(|| name(a).cmp(name(b)))
}

fn print_flow_schema(o: &Value, now: Time) -> Row {
    let distinguisher = match at(o, &["spec", "distinguisherMethod"]).filter(|d| !d.is_null()) {
        Some(d) => str_at(d, &["type"]),
        None => "<none>",
    };
    let missing = arr_at(o, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Dangling")
        .map_or("?", |c| str_at(c, &["status"]));
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "priorityLevelConfiguration", "name"])),
        Value::from(int_at(o, &["spec", "matchingPrecedence"])),
        Value::from(distinguisher),
        age(o, now),
        Value::from(missing),
    ])
}

fn print_priority_level_configuration(o: &Value, now: Time) -> Row {
    let none = || Value::from("<none>");
    let (mut ncs, mut queues, mut hand_size, mut queue_length_limit) =
        (none(), none(), none(), none());
    if let Some(limited) = at(o, &["spec", "limited"]).filter(|l| !l.is_null()) {
        ncs = Value::from(int_at(limited, &["nominalConcurrencyShares"]));
        if let Some(q) = at(limited, &["limitResponse", "queuing"]).filter(|q| !q.is_null()) {
            queues = Value::from(int_at(q, &["queues"]));
            hand_size = Value::from(int_at(q, &["handSize"]));
            queue_length_limit = Value::from(int_at(q, &["queueLengthLimit"]));
        }
    }
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "type"])),
        ncs,
        queues,
        hand_size,
        queue_length_limit,
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    #[test]
    fn column_definitions() {
        let names = |p: &Printer| -> Vec<(&str, &str, i32)> {
            p.columns
                .iter()
                .map(|c| (c.name, c.ty, c.priority))
                .collect()
        };
        assert_eq!(
            names(&FLOW_SCHEMA),
            vec![
                ("Name", "string", 0),
                ("PriorityLevel", "string", 0),
                ("MatchingPrecedence", "string", 0),
                ("DistinguisherMethod", "string", 0),
                ("Age", "string", 0),
                ("MissingPL", "string", 0)
            ]
        );
        assert_eq!(
            names(&PRIORITY_LEVEL_CONFIGURATION),
            vec![
                ("Name", "string", 0),
                ("Type", "string", 0),
                ("NominalConcurrencyShares", "string", 0),
                ("Queues", "string", 0),
                ("HandSize", "string", 0),
                ("QueueLengthLimit", "string", 0),
                ("Age", "string", 0)
            ]
        );
    }

    // Facts from kube's printers_test.go TestPrintFlowSchema.
    #[test]
    fn flow_schemas() {
        let all = json!({
            "metadata": {"name": "all-matcher", "creationTimestamp": "2024-05-01T11:59:50Z"},
            "spec": {"priorityLevelConfiguration": {"name": "allee"}, "matchingPrecedence": 1,
                     "distinguisherMethod": {"type": "ByUser"}}
        });
        assert_eq!(
            print_flow_schema(&all, now()).cells,
            vec![
                json!("all-matcher"),
                json!("allee"),
                json!(1),
                json!("ByUser"),
                json!("10s"),
                json!("?")
            ]
        );
        let dangling = json!({
            "metadata": {"name": "some-matcher"},
            "spec": {"priorityLevelConfiguration": {"name": "allee"}, "matchingPrecedence": 10000},
            "status": {"conditions": [
                {"type": "Dangling", "status": "True"},
                {"type": "Dangling", "status": "False"}
            ]}
        });
        assert_eq!(
            print_flow_schema(&dangling, now()).cells,
            vec![
                json!("some-matcher"),
                json!("allee"),
                json!(10000),
                json!("<none>"),
                json!("<unknown>"),
                json!("True")
            ]
        );
        let fine = json!({"metadata": {"name": "ok"}, "spec": {"matchingPrecedence": 500},
                          "status": {"conditions": [{"type": "Dangling", "status": "False"}]}});
        assert_eq!(print_flow_schema(&fine, now()).cells[5], json!("False"));
    }

    #[test]
    fn flow_schemas_sort_by_precedence_then_name() {
        let fs =
            |n: &str, p: i64| json!({"metadata": {"name": n}, "spec": {"matchingPrecedence": p}});
        let mut items = [
            fs("global-default", 9900),
            fs("catch-all", 10000),
            fs("system-nodes", 500),
            fs("exempt", 1),
            fs("probes", 2),
            fs("kube-system-service-accounts", 900),
            fs("kube-controller-manager", 800),
            fs("kube-scheduler", 800),
        ];
        items.sort_by(flow_schema_order);
        let names: Vec<&str> = items.iter().map(name).collect();
        assert_eq!(
            names,
            vec![
                "exempt",
                "probes",
                "system-nodes",
                "kube-controller-manager",
                "kube-scheduler",
                "kube-system-service-accounts",
                "global-default",
                "catch-all"
            ]
        );
    }

    // Facts from kube's printers_test.go TestPrintPriorityLevelConfiguration.
    #[test]
    fn priority_levels() {
        let exempt = json!({"metadata": {"name": "unlimited", "creationTimestamp": "2024-05-01T11:00:00Z"},
                            "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}});
        assert_eq!(
            print_priority_level_configuration(&exempt, now()).cells,
            vec![
                json!("unlimited"),
                json!("Exempt"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("60m")
            ]
        );
        let rejecting = json!({"metadata": {"name": "unqueued"},
                               "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 47,
                                        "limitResponse": {"type": "Reject"}}}});
        assert_eq!(
            print_priority_level_configuration(&rejecting, now()).cells,
            vec![
                json!("unqueued"),
                json!("Limited"),
                json!(47),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<unknown>")
            ]
        );
        let queuing = json!({"metadata": {"name": "queued"},
                             "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 42,
                                      "limitResponse": {"type": "Queue",
                                                        "queuing": {"queues": 8, "handSize": 3, "queueLengthLimit": 4}}}}});
        assert_eq!(
            &print_priority_level_configuration(&queuing, now()).cells[1..6],
            &[json!("Limited"), json!(42), json!(8), json!(3), json!(4)]
        );
    }
}
