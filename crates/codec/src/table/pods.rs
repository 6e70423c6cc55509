//! Pods (kube's `printPod`): readiness, the aggregate status with its
//! init-container, sidecar and terminating rules, restarts with the time
//! of the last one, and the wide columns.

use serde_json::{json, Value};

use super::columns::*;
use super::time::{self, Time};
use super::util::*;
use super::{Printer, Row};

pub(crate) static POD: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Ready",
            "string",
            "The aggregate readiness state of this pod for accepting traffic.",
        ),
        col(
            "Status",
            "string",
            "The aggregate status of the containers in this pod.",
        ),
        col(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
        ),
        AGE,
        wide("IP", "string", POD_STATUS_POD_IP),
        wide("Node", "string", POD_SPEC_NODE_NAME),
        wide("Nominated Node", "string", POD_STATUS_NOMINATED_NODE_NAME),
        wide("Readiness Gates", "string", POD_SPEC_READINESS_GATES),
    ],
    print: print_pod,
};

/// A container state (`state.waiting` / `running` / `terminated`) if set.
fn state<'a>(c: &'a Value, which: &str) -> Option<&'a Value> {
    at(c, &["state", which]).filter(|v| v.is_object())
}

/// When the container last terminated (`lastState.terminated.finishedAt`),
/// if it has a last termination: `Some(None)` for one without a time.
fn last_termination(c: &Value) -> Option<Option<Time>> {
    at(c, &["lastState", "terminated"])
        .filter(|v| v.is_object())
        .map(|t| time_at(t, &["finishedAt"]))
}

/// `lastRestartDate.Before(&terminatedDate)`: keep the later one.
fn later(current: &mut Option<Time>, candidate: Option<Time>) {
    if let Some(t) = candidate {
        if current.is_none_or(|c| c < t) {
            *current = Some(t);
        }
    }
}

fn condition_true(pod: &Value, ty: &str) -> bool {
    arr_at(pod, &["status", "conditions"])
        .iter()
        .any(|c| str_at(c, &["type"]) == ty && str_at(c, &["status"]) == "True")
}

/// `isPodInitializedConditionTrue`: the first Initialized condition decides.
fn initialized(pod: &Value) -> bool {
    arr_at(pod, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Initialized")
        .is_some_and(|c| str_at(c, &["status"]) == "True")
}

/// The reason of a terminated container: its reason, else `Signal:N`, else
/// `ExitCode:N`.
fn terminated_reason(t: &Value, prefix: &str) -> String {
    let reason = str_at(t, &["reason"]);
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    let signal = int_at(t, &["signal"]);
    if signal != 0 {
        format!("{prefix}Signal:{signal}")
    } else {
        format!("{prefix}ExitCode:{}", int_at(t, &["exitCode"]))
    }
}

fn print_pod(pod: &Value, now: Time) -> Row {
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let spec_init = arr_at(pod, &["spec", "initContainers"]);
    let mut total = arr_at(pod, &["spec", "containers"]).len();
    let mut ready = 0usize;
    let mut last_restart: Option<Time> = None;
    let mut last_sidecar_restart: Option<Time> = None;

    let phase = str_at(pod, &["status", "phase"]);
    let mut reason = phase.to_string();
    let status_reason = str_at(pod, &["status", "reason"]);
    if !status_reason.is_empty() {
        reason = status_reason.to_string();
    }
    if arr_at(pod, &["status", "conditions"]).iter().any(|c| {
        str_at(c, &["type"]) == "PodScheduled" && str_at(c, &["reason"]) == "SchedulingGated"
    }) {
        reason = "SchedulingGated".to_string();
    }

    let conditions = match phase {
        "Succeeded" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]),
        ),
        "Failed" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]),
        ),
        _ => None,
    };

    let restartable = |name: &str| {
        spec_init
            .iter()
            .find(|c| str_at(c, &["name"]) == name)
            .is_some_and(|c| str_at(c, &["restartPolicy"]) == "Always")
    };
    total += spec_init
        .iter()
        .filter(|c| str_at(c, &["restartPolicy"]) == "Always")
        .count();

    let mut initializing = false;
    for (i, c) in arr_at(pod, &["status", "initContainerStatuses"])
        .iter()
        .enumerate()
    {
        restarts += int_at(c, &["restartCount"]);
        if let Some(t) = last_termination(c) {
            later(&mut last_restart, t);
        }
        let sidecar = restartable(str_at(c, &["name"]));
        if sidecar {
            sidecar_restarts += int_at(c, &["restartCount"]);
            if let Some(t) = last_termination(c) {
                later(&mut last_sidecar_restart, t);
            }
        }
        let terminated = state(c, "terminated");
        let waiting_reason = state(c, "waiting").map_or("", |w| str_at(w, &["reason"]));
        if terminated.is_some_and(|t| int_at(t, &["exitCode"]) == 0) {
            continue;
        }
        if sidecar && opt_bool(c, &["started"]) == Some(true) {
            if opt_bool(c, &["ready"]) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            terminated_reason(t, "Init:")
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", spec_init.len())
        };
        initializing = true;
        break;
    }

    if !initializing || initialized(pod) {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        let mut error_reason = String::new();
        for c in arr_at(pod, &["status", "containerStatuses"]).iter().rev() {
            restarts += int_at(c, &["restartCount"]);
            if let Some(t) = last_termination(c) {
                later(&mut last_restart, t);
            }
            let waiting_reason = state(c, "waiting").map_or("", |w| str_at(w, &["reason"]));
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(t) = state(c, "terminated") {
                reason = terminated_reason(t, "");
                if int_at(t, &["exitCode"]) != 0 {
                    error_reason = reason.clone();
                }
            } else if opt_bool(c, &["ready"]) == Some(true) && state(c, "running").is_some() {
                has_running = true;
                ready += 1;
            }
        }
        // A pod whose last container completed but another still runs.
        if reason == "Completed" {
            if has_running && condition_true(pod, "Ready") {
                reason = "Running".to_string();
            } else if !error_reason.is_empty() {
                reason = error_reason;
            } else if has_running {
                reason = "NotReady".to_string();
            }
        }
    }

    if deleting(pod) && status_reason == "NodeLost" {
        reason = "Unknown".to_string();
    } else if deleting(pod) && phase != "Failed" && phase != "Succeeded" {
        reason = "Terminating".to_string();
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", time::since(Some(t), now)),
        _ => restarts.to_string(),
    };

    // status.podIP is authoritative over status.podIPs (v1 → internal).
    let mut ip = str_at(pod, &["status", "podIP"]);
    if ip.is_empty() {
        ip = arr_at(pod, &["status", "podIPs"])
            .first()
            .map_or("", |p| str_at(p, &["ip"]));
    }
    let or_none = |s: &str| {
        if s.is_empty() {
            "<none>".to_string()
        } else {
            s.to_string()
        }
    };
    let gates = arr_at(pod, &["spec", "readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let conditions = arr_at(pod, &["status", "conditions"]);
        let met = gates
            .iter()
            .filter(|g| {
                let ty = str_at(g, &["conditionType"]);
                conditions
                    .iter()
                    .find(|c| str_at(c, &["type"]) == ty)
                    .is_some_and(|c| str_at(c, &["status"]) == "True")
            })
            .count();
        format!("{met}/{}", gates.len())
    };

    Row {
        cells: vec![
            Value::from(name(pod)),
            Value::from(format!("{ready}/{total}")),
            Value::from(reason),
            Value::from(restarts_cell),
            age(pod, now),
            Value::from(or_none(ip)),
            Value::from(or_none(str_at(pod, &["spec", "nodeName"]))),
            Value::from(or_none(str_at(pod, &["status", "nominatedNodeName"]))),
            Value::from(readiness_gates),
        ],
        conditions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::table::time::test_now as now;

    fn cells(pod: Value) -> Vec<Value> {
        print_pod(&pod, now()).cells
    }

    /// Ready, Status, Restarts.
    fn summary(pod: Value) -> (String, String, String) {
        let c = cells(pod);
        (
            c[1].as_str().unwrap().to_string(),
            c[2].as_str().unwrap().to_string(),
            c[3].as_str().unwrap().to_string(),
        )
    }

    fn s(a: &str, b: &str, c: &str) -> (String, String, String) {
        (a.into(), b.into(), c.into())
    }

    // Facts from kube's printers_test.go TestPrintPod and friends.
    #[test]
    fn pending_and_running() {
        let pod = json!({
            "metadata": {"name": "test1", "creationTimestamp": "2024-05-01T11:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "podPhase", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 3, "state": {"running": {}}},
                {"name": "b", "restartCount": 3}
            ]}
        });
        let c = cells(pod);
        assert_eq!(
            c,
            vec![
                json!("test1"),
                json!("1/2"),
                json!("podPhase"),
                json!("6"),
                json!("60m"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
        let waiting = json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "podPhase", "containerStatuses": [
                {"ready": true, "restartCount": 3, "state": {"running": {}}},
                {"restartCount": 3, "state": {"waiting": {"reason": "ContainerWaitingReason"}}}
            ]}
        });
        assert_eq!(summary(waiting), s("1/2", "ContainerWaitingReason", "6"));
        let terminated = json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "podPhase", "containerStatuses": [
                {"ready": true, "restartCount": 3, "state": {"running": {}}},
                {"restartCount": 3, "state": {"terminated": {"reason": "ContainerTerminatedReason"}}}
            ]}
        });
        assert_eq!(
            summary(terminated),
            s("1/2", "ContainerTerminatedReason", "6")
        );
        let signal = json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"containerStatuses": [{"state": {"terminated": {"signal": 9, "exitCode": 137}}}]}
        });
        assert_eq!(summary(signal), s("0/1", "Signal:9", "0"));
        let exit = json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"containerStatuses": [{"state": {"terminated": {"exitCode": 1}}}]}
        });
        assert_eq!(summary(exit), s("0/1", "ExitCode:1", "0"));
    }

    #[test]
    fn restarts_with_time_of_the_last() {
        let pod = json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"ready": true, "restartCount": 3, "state": {"running": {}},
                 "lastState": {"terminated": {"finishedAt": "2024-05-01T11:50:00Z"}}},
                {"ready": true, "restartCount": 1, "state": {"running": {}},
                 "lastState": {"terminated": {"finishedAt": "2024-05-01T11:58:00Z"}}}
            ]}
        });
        assert_eq!(summary(pod), s("2/2", "Running", "4 (2m ago)"));
    }

    #[test]
    fn init_containers() {
        let base = |statuses: Value| {
            json!({
                "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]},
                "status": {"phase": "Pending", "initContainerStatuses": statuses,
                           "containerStatuses": [{"name": "a", "state": {"waiting": {"reason": "PodInitializing"}}}]}
            })
        };
        assert_eq!(
            summary(base(json!([
                {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "state": {"running": {}}}
            ]))),
            s("0/1", "Init:1/2", "0")
        );
        assert_eq!(
            summary(base(json!([
                {"name": "i1", "restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
            ]))),
            s("0/1", "Init:CrashLoopBackOff", "2")
        );
        assert_eq!(
            summary(base(json!([
                {"name": "i1", "state": {"terminated": {"exitCode": 2, "reason": "Error"}}}
            ]))),
            s("0/1", "Init:Error", "0")
        );
        assert_eq!(
            summary(base(json!([
                {"name": "i1", "state": {"terminated": {"exitCode": 2, "signal": 9}}}
            ]))),
            s("0/1", "Init:Signal:9", "0")
        );
        assert_eq!(
            summary(base(json!([
                {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "state": {"terminated": {"exitCode": 0}}}
            ]))),
            s("0/1", "PodInitializing", "0")
        );
    }

    #[test]
    fn sidecars_count_as_containers() {
        let pod = json!({
            "spec": {"initContainers": [{"name": "side", "restartPolicy": "Always"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Running",
                "conditions": [{"type": "Initialized", "status": "True"}],
                "initContainerStatuses": [{"name": "side", "started": true, "ready": true, "restartCount": 2, "state": {"running": {}}}],
                "containerStatuses": [{"name": "a", "ready": true, "restartCount": 1, "state": {"running": {}}}]}
        });
        assert_eq!(summary(pod), s("2/2", "Running", "3"));
    }

    #[test]
    fn completed_terminating_and_gated() {
        let completed_running = json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": [
                {"ready": true, "state": {"running": {}}},
                {"state": {"terminated": {"reason": "Completed", "exitCode": 0}}}
            ]}
        });
        assert_eq!(summary(completed_running), s("1/2", "Running", "0"));
        let not_ready = json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"ready": true, "state": {"running": {}}},
                {"state": {"terminated": {"reason": "Completed", "exitCode": 0}}}
            ]}
        });
        assert_eq!(summary(not_ready), s("1/2", "NotReady", "0"));
        let terminating = json!({
            "metadata": {"deletionTimestamp": "2024-05-01T11:59:00Z"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [{"ready": true, "state": {"running": {}}}]}
        });
        assert_eq!(summary(terminating), s("1/1", "Terminating", "0"));
        let lost = json!({
            "metadata": {"deletionTimestamp": "2024-05-01T11:59:00Z"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "reason": "NodeLost"}
        });
        assert_eq!(summary(lost), s("0/1", "Unknown", "0"));
        let succeeded_deleting = json!({
            "metadata": {"deletionTimestamp": "2024-05-01T11:59:00Z"},
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Succeeded"}
        });
        assert_eq!(summary(succeeded_deleting), s("0/1", "Succeeded", "0"));
        let gated = json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}
        });
        assert_eq!(summary(gated), s("0/1", "SchedulingGated", "0"));
    }

    #[test]
    fn row_conditions_and_wide_cells() {
        let done = print_pod(
            &json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Succeeded"}}),
            now(),
        );
        assert_eq!(
            done.conditions,
            Some(
                json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}])
            )
        );
        let failed = print_pod(&json!({"status": {"phase": "Failed"}}), now());
        assert_eq!(failed.conditions.unwrap()[0]["message"], "The pod failed.");
        let pod = json!({
            "metadata": {"name": "w"},
            "spec": {"nodeName": "node1", "containers": [{"name": "a"}],
                     "readinessGates": [{"conditionType": "gate1"}, {"conditionType": "gate2"}]},
            "status": {"podIPs": [{"ip": "10.1.1.1"}, {"ip": "fd00::1"}], "nominatedNodeName": "node2",
                       "conditions": [{"type": "gate1", "status": "True"}, {"type": "gate2", "status": "False"}]}
        });
        let c = cells(pod);
        assert_eq!(
            &c[5..],
            &[
                json!("10.1.1.1"),
                json!("node1"),
                json!("node2"),
                json!("1/2")
            ]
        );
        let by_pod_ip = json!({"status": {"podIP": "1.2.3.4", "podIPs": [{"ip": "5.6.7.8"}]}});
        assert_eq!(cells(by_pod_ip)[5], json!("1.2.3.4"));
        // An empty object (a bookmark in a Table watch) still prints.
        assert_eq!(
            cells(json!({})),
            vec![
                json!(""),
                json!("0/0"),
                json!(""),
                json!("0"),
                json!("<unknown>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }
}
