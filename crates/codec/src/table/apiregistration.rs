//! apiregistration.k8s.io: API services, as kube-aggregator's own table
//! convertor prints them (not kube's printers).

use serde_json::Value;

use super::columns::*;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

/// Name, Service (`namespace/name`, `Local` without one), Available (the
/// `Available` condition), Age.
pub(crate) static API_SERVICE: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Service",
            "string",
            "The reference to the service that hosts this API endpoint.",
        ),
        col("Available", "string", "Whether this service is available."),
        AGE,
    ],
    print: print_api_service,
};

/// The Available cell: `True`; the status and its reason (`False
/// (MissingEndpoints)`); the bare status without a reason; `Unknown` when
/// there is no `Available` condition.
fn available(o: &Value) -> String {
    let Some(c) = arr_at(o, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Available")
    else {
        return "Unknown".to_string();
    };
    let (status, reason) = (str_at(c, &["status"]), str_at(c, &["reason"]));
    if status == "True" || reason.is_empty() {
        status.to_string()
    } else {
        format!("{status} ({reason})")
    }
}

fn print_api_service(o: &Value, now: Time) -> Row {
    let service = match at(o, &["spec", "service"]).filter(|s| !s.is_null()) {
        Some(s) => format!("{}/{}", str_at(s, &["namespace"]), str_at(s, &["name"])),
        None => "Local".to_string(),
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(service),
        Value::from(available(o)),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    #[test]
    fn columns() {
        let cols: Vec<(&str, &str, i32)> = API_SERVICE
            .columns
            .iter()
            .map(|c| (c.name, c.description, c.priority))
            .collect();
        assert_eq!(
            cols,
            vec![
                ("Name", OBJECT_META_NAME, 0),
                (
                    "Service",
                    "The reference to the service that hosts this API endpoint.",
                    0
                ),
                ("Available", "Whether this service is available.", 0),
                ("Age", OBJECT_META_CREATION_TIMESTAMP, 0)
            ]
        );
    }

    #[test]
    fn local_and_remote_services() {
        let local = json!({"metadata": {"name": "v1.apps", "creationTimestamp": "2024-05-01T11:00:00Z"},
                           "spec": {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15},
                           "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local", "message": "Local APIServices are always available"}]}});
        assert_eq!(
            print_api_service(&local, now()).cells,
            vec![
                json!("v1.apps"),
                json!("Local"),
                json!("True"),
                json!("60m")
            ]
        );
        let remote = |conditions: Value| {
            json!({"metadata": {"name": "v1beta1.metrics.k8s.io"},
                   "spec": {"service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}},
                   "status": {"conditions": conditions}})
        };
        assert_eq!(
            print_api_service(
                &remote(
                    json!([{"type": "Available", "status": "False", "reason": "MissingEndpoints"}])
                ),
                now()
            )
            .cells,
            vec![
                json!("v1beta1.metrics.k8s.io"),
                json!("kube-system/metrics-server"),
                json!("False (MissingEndpoints)"),
                json!("<unknown>")
            ]
        );
        let cell = |c: Value| print_api_service(&remote(c), now()).cells[2].clone();
        assert_eq!(
            cell(json!([{"type": "Available", "status": "False"}])),
            json!("False")
        );
        assert_eq!(
            cell(json!([{"type": "Available", "status": "Unknown", "reason": "NoEndpoints"}])),
            json!("Unknown (NoEndpoints)")
        );
        assert_eq!(cell(json!([])), json!("Unknown"));
        assert_eq!(cell(Value::Null), json!("Unknown"));
    }
}
