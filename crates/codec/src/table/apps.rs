//! apps/v1: deployments, replica sets, stateful sets, daemon sets and
//! controller revisions.

use serde_json::Value;

use super::columns::*;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

const READY_PODS: &str = "Number of the pod with ready state";

pub(crate) static DEPLOYMENT: Printer = Printer {
    columns: &[
        NAME,
        col("Ready", "string", READY_PODS),
        col("Up-to-date", "string", DEPLOY_STATUS_UPDATED),
        col("Available", "string", DEPLOY_STATUS_AVAILABLE),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", "string", DEPLOY_SPEC_SELECTOR),
    ],
    print: print_deployment,
};

pub(crate) static REPLICA_SET: Printer = Printer {
    columns: &[
        NAME,
        col("Desired", "integer", RS_SPEC_REPLICAS),
        col("Current", "integer", RS_STATUS_REPLICAS),
        col("Ready", "integer", RS_STATUS_READY_REPLICAS),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", "string", RS_SPEC_SELECTOR),
    ],
    print: print_replica_set,
};

pub(crate) static STATEFUL_SET: Printer = Printer {
    columns: &[
        NAME,
        col("Ready", "string", READY_PODS),
        AGE,
        CONTAINERS,
        IMAGES,
    ],
    print: print_stateful_set,
};

pub(crate) static DAEMON_SET: Printer = Printer {
    columns: &[
        NAME,
        col("Desired", "integer", DS_STATUS_DESIRED),
        col("Current", "integer", DS_STATUS_CURRENT),
        col("Ready", "integer", DS_STATUS_READY),
        col("Up-to-date", "integer", DS_STATUS_UPDATED),
        col("Available", "integer", DS_STATUS_AVAILABLE),
        col("Node Selector", "string", POD_SPEC_NODE_SELECTOR),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", "string", DS_SPEC_SELECTOR),
    ],
    print: print_daemon_set,
};

pub(crate) static CONTROLLER_REVISION: Printer = Printer {
    columns: &[
        NAME,
        col("Controller", "string", "Controller of the object"),
        col(
            "Revision",
            "string",
            "Revision indicates the revision of the state represented by Data.",
        ),
        AGE,
    ],
    print: print_controller_revision,
};

fn template_containers(o: &Value) -> &[Value] {
    arr_at(o, &["spec", "template", "spec", "containers"])
}

fn print_deployment(o: &Value, now: Time) -> Row {
    let (containers, images) = container_cells(template_containers(o));
    let selector =
        selector_string(at(o, &["spec", "selector"])).unwrap_or_else(|()| "<invalid>".into());
    Row::new(vec![
        Value::from(name(o)),
        Value::from(format!(
            "{}/{}",
            int_at(o, &["status", "readyReplicas"]),
            int_at(o, &["spec", "replicas"])
        )),
        Value::from(int_at(o, &["status", "updatedReplicas"])),
        Value::from(int_at(o, &["status", "availableReplicas"])),
        age(o, now),
        containers,
        images,
        Value::from(selector),
    ])
}

fn print_replica_set(o: &Value, now: Time) -> Row {
    let (containers, images) = container_cells(template_containers(o));
    Row::new(vec![
        Value::from(name(o)),
        Value::from(int_at(o, &["spec", "replicas"])),
        Value::from(int_at(o, &["status", "replicas"])),
        Value::from(int_at(o, &["status", "readyReplicas"])),
        age(o, now),
        containers,
        images,
        Value::from(format_label_selector(at(o, &["spec", "selector"]))),
    ])
}

fn print_stateful_set(o: &Value, now: Time) -> Row {
    let (containers, images) = container_cells(template_containers(o));
    Row::new(vec![
        Value::from(name(o)),
        Value::from(format!(
            "{}/{}",
            int_at(o, &["status", "readyReplicas"]),
            int_at(o, &["spec", "replicas"])
        )),
        age(o, now),
        containers,
        images,
    ])
}

fn print_daemon_set(o: &Value, now: Time) -> Row {
    let (containers, images) = container_cells(template_containers(o));
    let status = |f: &str| Value::from(int_at(o, &["status", f]));
    Row::new(vec![
        Value::from(name(o)),
        status("desiredNumberScheduled"),
        status("currentNumberScheduled"),
        status("numberReady"),
        status("updatedNumberScheduled"),
        status("numberAvailable"),
        Value::from(format_labels(at(
            o,
            &["spec", "template", "spec", "nodeSelector"],
        ))),
        age(o, now),
        containers,
        images,
        Value::from(format_label_selector(at(o, &["spec", "selector"]))),
    ])
}

/// `kind.group/name` of the controlling owner (`metav1.GetControllerOf`).
pub(crate) fn controller_name(o: &Value) -> String {
    let owner = arr_at(o, &["metadata", "ownerReferences"])
        .iter()
        .find(|r| opt_bool(r, &["controller"]) == Some(true));
    let Some(owner) = owner else {
        return "<none>".to_string();
    };
    let kind = str_at(owner, &["kind"]);
    let group = str_at(owner, &["apiVersion"])
        .rsplit_once('/')
        .map_or("", |(g, _)| g);
    let name = str_at(owner, &["name"]);
    if kind.is_empty() && group.is_empty() {
        return name.to_string();
    }
    let gk = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    format!("{}/{name}", gk.to_lowercase())
}

fn print_controller_revision(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(controller_name(o)),
        Value::from(int_at(o, &["revision"])),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    fn template(containers: Value) -> Value {
        json!({"spec": {"containers": containers}})
    }

    // Facts from kube's printers_test.go TestPrintDeployment.
    #[test]
    fn deployments() {
        let d = json!({
            "metadata": {"name": "test1", "creationTimestamp": "2024-04-01T12:00:00Z"},
            "spec": {"replicas": 5, "template": template(json!([{"name": "fake-container1", "image": "fake-image1"}, {"name": "fake-container2", "image": "fake-image2"}])),
                     "selector": {"matchLabels": {"foo": "bar"}}},
            "status": {"replicas": 10, "updatedReplicas": 2, "availableReplicas": 1, "unavailableReplicas": 4}
        });
        assert_eq!(
            print_deployment(&d, now()).cells,
            vec![
                json!("test1"),
                json!("0/5"),
                json!(2),
                json!(1),
                json!("30d"),
                json!("fake-container1,fake-container2"),
                json!("fake-image1,fake-image2"),
                json!("foo=bar")
            ]
        );
        let no_selector = json!({"metadata": {"name": "x"}});
        assert_eq!(print_deployment(&no_selector, now()).cells[7], json!(""));
    }

    #[test]
    fn replica_sets_stateful_sets_daemon_sets() {
        let rs = json!({
            "metadata": {"name": "rs", "creationTimestamp": "2024-05-01T11:59:00Z"},
            "spec": {"replicas": 5, "template": template(json!([{"name": "c", "image": "i"}])),
                     "selector": {"matchLabels": {"foo": "bar"}}},
            "status": {"replicas": 5, "readyReplicas": 2}
        });
        assert_eq!(
            print_replica_set(&rs, now()).cells,
            vec![
                json!("rs"),
                json!(5),
                json!(5),
                json!(2),
                json!("60s"),
                json!("c"),
                json!("i"),
                json!("foo=bar")
            ]
        );
        let sts = json!({"metadata": {"name": "sts"}, "spec": {"replicas": 5, "template": template(json!([{"name": "c", "image": "i"}]))}, "status": {"readyReplicas": 2}});
        assert_eq!(
            print_stateful_set(&sts, now()).cells,
            vec![
                json!("sts"),
                json!("2/5"),
                json!("<unknown>"),
                json!("c"),
                json!("i")
            ]
        );
        let ds = json!({
            "metadata": {"name": "ds"},
            "spec": {"template": template(json!([])), "selector": {"matchLabels": {"a": "b"}}},
            "status": {"currentNumberScheduled": 2, "desiredNumberScheduled": 3, "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 0}
        });
        assert_eq!(
            print_daemon_set(&ds, now()).cells,
            vec![
                json!("ds"),
                json!(3),
                json!(2),
                json!(1),
                json!(2),
                json!(0),
                json!("<none>"),
                json!("<unknown>"),
                json!(""),
                json!(""),
                json!("a=b")
            ]
        );
    }

    #[test]
    fn controller_revisions() {
        let cr = json!({
            "metadata": {"name": "web-1", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": true}
            ]},
            "revision": 1
        });
        assert_eq!(
            print_controller_revision(&cr, now()).cells,
            vec![
                json!("web-1"),
                json!("statefulset.apps/web"),
                json!(1),
                json!("<unknown>")
            ]
        );
        assert_eq!(controller_name(&json!({})), "<none>");
    }
}
