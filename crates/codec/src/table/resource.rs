//! resource.k8s.io (dynamic resource allocation): device classes, resource
//! claims, resource claim templates and resource slices. kube prints every
//! served version (`v1`, `v1beta1`, `v1beta2`) with the same printers.

use serde_json::Value;

use super::columns::*;
use super::core::print_name_age;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

// resource.k8s.io swagger docs kube's columns carry.
const SLICE_SPEC_NODE_NAME: &str = "NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new nodes of the same type as some old node might also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.";
const SLICE_SPEC_DRIVER: &str = "Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of the driver. This field is immutable.";
const RESOURCE_POOL_NAME: &str = "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains separated by slashes. This field is immutable.";

pub(crate) static DEVICE_CLASS: Printer = Printer {
    columns: &[NAME, AGE],
    print: print_name_age,
};

pub(crate) static RESOURCE_CLAIM: Printer = Printer {
    columns: &[
        NAME,
        col(
            "State",
            "string",
            "A summary of the current state (allocated, pending, reserved, etc.).",
        ),
        AGE,
    ],
    print: print_resource_claim,
};

pub(crate) static RESOURCE_CLAIM_TEMPLATE: Printer = Printer {
    columns: &[NAME, AGE],
    print: print_name_age,
};

pub(crate) static RESOURCE_SLICE: Printer = Printer {
    columns: &[
        NAME,
        col("Node", "string", SLICE_SPEC_NODE_NAME),
        col("Driver", "string", SLICE_SPEC_DRIVER),
        col("Pool", "string", RESOURCE_POOL_NAME),
        AGE,
    ],
    print: print_resource_slice,
};

/// kube's `resourceClaimState`: `deleted` while deleting, then `pending`
/// (not allocated and not deleting) or `allocated`, plus `reserved` when
/// allocated and reserved for a consumer; comma-joined.
fn resource_claim_state(o: &Value) -> String {
    let mut states = Vec::new();
    let is_deleting = deleting(o);
    if is_deleting {
        states.push("deleted");
    }
    if at(o, &["status", "allocation"]).is_some_and(|a| !a.is_null()) {
        states.push("allocated");
        if !arr_at(o, &["status", "reservedFor"]).is_empty() {
            states.push("reserved");
        }
    } else if !is_deleting {
        states.push("pending");
    }
    states.join(",")
}

fn print_resource_claim(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(resource_claim_state(o)),
        age(o, now),
    ])
}

/// The Node cell is kube's `*string` `spec.nodeName` as is: the name, or
/// `null` for a slice of a node selector, all nodes or per-device nodes.
fn print_resource_slice(o: &Value, now: Time) -> Row {
    let node = opt_str(o, &["spec", "nodeName"]).map_or(Value::Null, Value::from);
    Row::new(vec![
        Value::from(name(o)),
        node,
        Value::from(str_at(o, &["spec", "driver"])),
        Value::from(str_at(o, &["spec", "pool", "name"])),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::printer;
    use crate::table::time::test_now as now;

    fn columns(p: &Printer) -> Vec<(&'static str, &'static str, &'static str, i32)> {
        p.columns
            .iter()
            .map(|c| (c.name, c.ty, c.format, c.priority))
            .collect()
    }

    #[test]
    fn device_classes_and_templates() {
        for p in [&DEVICE_CLASS, &RESOURCE_CLAIM_TEMPLATE] {
            assert_eq!(
                columns(p),
                vec![("Name", "string", "name", 0), ("Age", "string", "", 0)]
            );
            assert_eq!(p.columns[1].description, OBJECT_META_CREATION_TIMESTAMP);
            // Not kube's default table (Name, Created At).
            assert!(!p.null_when_empty());
        }
        let class = json!({"metadata": {"name": "gpu.example.com", "creationTimestamp": "2024-05-01T11:30:00Z"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}});
        assert_eq!(
            (DEVICE_CLASS.print)(&class, now()).cells,
            vec![json!("gpu.example.com"), json!("30m")]
        );
        let template = json!({"metadata": {"name": "one-gpu", "namespace": "ml"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}});
        assert_eq!(
            (RESOURCE_CLAIM_TEMPLATE.print)(&template, now()).cells,
            vec![json!("one-gpu"), json!("<unknown>")]
        );
    }

    // Facts from kube's printers.go resourceClaimState.
    #[test]
    fn resource_claims() {
        assert_eq!(
            columns(&RESOURCE_CLAIM),
            vec![
                ("Name", "string", "name", 0),
                ("State", "string", "", 0),
                ("Age", "string", "", 0)
            ]
        );
        assert_eq!(
            RESOURCE_CLAIM.columns[1].description,
            "A summary of the current state (allocated, pending, reserved, etc.)."
        );
        let pending = json!({"metadata": {"name": "gpu-claim", "namespace": "ml", "creationTimestamp": "2024-05-01T11:59:30Z"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}});
        assert_eq!(
            print_resource_claim(&pending, now()).cells,
            vec![json!("gpu-claim"), json!("pending"), json!("30s")]
        );
        let allocation = json!({"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}});
        let allocated = json!({"metadata": {"name": "c"}, "status": {"allocation": allocation}});
        assert_eq!(
            print_resource_claim(&allocated, now()).cells[1],
            json!("allocated")
        );
        let reserved = json!({"metadata": {"name": "c"}, "status": {"allocation": allocation,
            "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "u1"}]}});
        assert_eq!(
            print_resource_claim(&reserved, now()).cells[1],
            json!("allocated,reserved")
        );
        let deleted_pending =
            json!({"metadata": {"name": "c", "deletionTimestamp": "2024-05-01T11:59:00Z"}});
        assert_eq!(
            print_resource_claim(&deleted_pending, now()).cells[1],
            json!("deleted")
        );
        let deleted_reserved = json!({"metadata": {"name": "c", "deletionTimestamp": "2024-05-01T11:59:00Z"},
            "status": {"allocation": allocation, "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}});
        assert_eq!(
            print_resource_claim(&deleted_reserved, now()).cells[1],
            json!("deleted,allocated,reserved")
        );
        // Reserved without an allocation is still pending.
        let odd = json!({"metadata": {"name": "c"}, "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}});
        assert_eq!(print_resource_claim(&odd, now()).cells[1], json!("pending"));
    }

    #[test]
    fn resource_slices() {
        assert_eq!(
            columns(&RESOURCE_SLICE),
            vec![
                ("Name", "string", "name", 0),
                ("Node", "string", "", 0),
                ("Driver", "string", "", 0),
                ("Pool", "string", "", 0),
                ("Age", "string", "", 0)
            ]
        );
        assert!(RESOURCE_SLICE.columns[3]
            .description
            .starts_with("Name is used to identify the pool."));
        let slice = json!({"metadata": {"name": "node-1-gpu.example.com-x2x4p", "creationTimestamp": "2024-05-01T11:00:00Z"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                     "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}]}});
        assert_eq!(
            print_resource_slice(&slice, now()).cells,
            vec![
                json!("node-1-gpu.example.com-x2x4p"),
                json!("node-1"),
                json!("gpu.example.com"),
                json!("node-1"),
                json!("60m")
            ]
        );
        // A network-attached pool has no node name: kube's nil *string.
        let shared = json!({"metadata": {"name": "san"},
            "spec": {"driver": "san.example.com", "allNodes": true, "pool": {"name": "rack-7", "generation": 2, "resourceSliceCount": 1}}});
        assert_eq!(
            print_resource_slice(&shared, now()).cells,
            vec![
                json!("san"),
                Value::Null,
                json!("san.example.com"),
                json!("rack-7"),
                json!("<unknown>")
            ]
        );
    }

    #[test]
    fn printers_of_the_group() {
        for (kind, p) in [
            ("DeviceClass", &DEVICE_CLASS),
            ("ResourceClaim", &RESOURCE_CLAIM),
            ("ResourceClaimTemplate", &RESOURCE_CLAIM_TEMPLATE),
            ("ResourceSlice", &RESOURCE_SLICE),
        ] {
            assert!(std::ptr::eq(printer("resource.k8s.io", kind), p), "{kind}");
            let row = (p.print)(&json!({"metadata": {"name": "x"}}), now());
            assert_eq!(row.cells.len(), p.columns.len(), "{kind}");
        }
        // kube has no printers for these: its default table.
        for (group, kind) in [
            ("", "LimitRange"),
            ("rbac.authorization.k8s.io", "Role"),
            ("rbac.authorization.k8s.io", "ClusterRole"),
        ] {
            assert!(printer(group, kind).null_when_empty(), "{group}/{kind}");
        }
    }
}
