//! core/v1 (and events.k8s.io): services, endpoints, config maps, secrets,
//! service accounts, namespaces, nodes, events, replication controllers,
//! resource quotas and pod templates.

use std::collections::BTreeSet;

use serde_json::Value;

use super::columns::*;
use super::quantity;
use super::time::{self, Time};
use super::util::*;
use super::{Printer, Row};

pub(crate) static SERVICE: Printer = Printer {
    columns: &[
        NAME,
        col("Type", "string", SERVICE_SPEC_TYPE),
        col("Cluster-IP", "string", SERVICE_SPEC_CLUSTER_IP),
        col("External-IP", "string", SERVICE_SPEC_EXTERNAL_IPS),
        col("Port(s)", "string", SERVICE_SPEC_PORTS),
        AGE,
        wide("Selector", "string", SERVICE_SPEC_SELECTOR),
    ],
    print: print_service,
};

pub(crate) static ENDPOINTS: Printer = Printer {
    columns: &[NAME, col("Endpoints", "string", ENDPOINTS_SUBSETS), AGE],
    print: print_endpoints,
};

pub(crate) static CONFIG_MAP: Printer = Printer {
    columns: &[NAME, col("Data", "string", CONFIG_MAP_DATA), AGE],
    print: print_config_map,
};

pub(crate) static SECRET: Printer = Printer {
    columns: &[
        NAME,
        col("Type", "string", SECRET_TYPE),
        col("Data", "string", SECRET_DATA),
        AGE,
    ],
    print: print_secret,
};

pub(crate) static SERVICE_ACCOUNT: Printer = Printer {
    columns: &[NAME, col("Secrets", "string", SERVICE_ACCOUNT_SECRETS), AGE],
    print: print_service_account,
};

/// `ServiceAccount.secrets`' description, as kube's printer takes it.
const SERVICE_ACCOUNT_SECRETS: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";

/// kube's `printServiceAccount`: the name, the number of `secrets`, the age.
fn print_service_account(o: &Value, now: Time) -> Row {
    let secrets = arr_at(o, &["secrets"]).len() as i64;
    Row::new(vec![
        Value::from(name(o)),
        Value::from(secrets),
        age(o, now),
    ])
}

pub(crate) static NAMESPACE: Printer = Printer {
    columns: &[
        NAME,
        col("Status", "string", "The status of the namespace"),
        AGE,
    ],
    print: print_namespace,
};

pub(crate) static NODE: Printer = Printer {
    columns: &[
        NAME,
        col("Status", "string", "The status of the node"),
        col("Roles", "string", "The roles of the node"),
        AGE,
        col("Version", "string", NODE_INFO_KUBELET_VERSION),
        wide("Internal-IP", "string", NODE_STATUS_ADDRESSES),
        wide("External-IP", "string", NODE_STATUS_ADDRESSES),
        wide("OS-Image", "string", NODE_INFO_OS_IMAGE),
        wide("Kernel-Version", "string", NODE_INFO_KERNEL_VERSION),
        wide(
            "Container-Runtime",
            "string",
            NODE_INFO_CONTAINER_RUNTIME_VERSION,
        ),
    ],
    print: print_node,
};

const EVENT_COLUMNS: &[Column] = &[
    col("Last Seen", "string", EVENT_LAST_TIMESTAMP),
    col("Type", "string", EVENT_TYPE),
    col("Reason", "string", EVENT_REASON),
    col("Object", "string", EVENT_INVOLVED_OBJECT),
    wide("Subobject", "string", OBJECT_REFERENCE_FIELD_PATH),
    wide("Source", "string", EVENT_SOURCE),
    col("Message", "string", EVENT_MESSAGE),
    wide("First Seen", "string", EVENT_FIRST_TIMESTAMP),
    wide("Count", "string", EVENT_COUNT),
    Column {
        priority: 1,
        ..NAME
    },
];

/// core/v1 events.
pub(crate) static EVENT: Printer = Printer {
    columns: EVENT_COLUMNS,
    print: print_core_event,
};

/// events.k8s.io/v1 events: the same internal type, other field names.
pub(crate) static EVENTS_EVENT: Printer = Printer {
    columns: EVENT_COLUMNS,
    print: print_events_event,
};

pub(crate) static REPLICATION_CONTROLLER: Printer = Printer {
    columns: &[
        NAME,
        col("Desired", "integer", RC_SPEC_REPLICAS),
        col("Current", "integer", RC_STATUS_REPLICAS),
        col("Ready", "integer", RC_STATUS_READY_REPLICAS),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", "string", RC_SPEC_SELECTOR),
    ],
    print: print_replication_controller,
};

pub(crate) static RESOURCE_QUOTA: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Request",
            "string",
            "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        col(
            "Limit",
            "string",
            "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
        ),
        AGE,
    ],
    print: print_resource_quota,
};

pub(crate) static POD_TEMPLATE: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Containers",
            "string",
            "Names of each container in the template.",
        ),
        col(
            "Images",
            "string",
            "Images referenced by each container in the template.",
        ),
        col("Pod Labels", "string", "The labels for the pod template."),
    ],
    print: print_pod_template,
};

/// `kubectl get componentstatuses`: the `Healthy` condition as Status
/// (`Healthy`, `Unhealthy`, `Unknown` without one), its message and error.
pub(crate) static COMPONENT_STATUS: Printer = Printer {
    columns: &[
        NAME,
        col("Status", "string", "Status of the component conditions"),
        col("Message", "string", "Message of the component conditions"),
        col("Error", "string", "Error of the component conditions"),
    ],
    print: print_component_status,
};

/// Name and Age only.
pub(crate) fn print_name_age(o: &Value, now: Time) -> Row {
    Row::new(vec![Value::from(name(o)), age(o, now)])
}

/// `loadBalancerStatusStringer`: the ingress IPs (else hostnames), sorted
/// and de-duplicated; the server prints wide, so never cut.
pub(crate) fn load_balancer_ingress(o: &Value) -> String {
    let set: BTreeSet<&str> = arr_at(o, &["status", "loadBalancer", "ingress"])
        .iter()
        .filter_map(|i| {
            let ip = str_at(i, &["ip"]);
            let host = str_at(i, &["hostname"]);
            if !ip.is_empty() {
                Some(ip)
            } else if !host.is_empty() {
                Some(host)
            } else {
                None
            }
        })
        .collect();
    set.into_iter().collect::<Vec<_>>().join(",")
}

fn strings(v: &[Value]) -> Vec<&str> {
    v.iter().map(|s| s.as_str().unwrap_or("")).collect()
}

fn external_ip(o: &Value) -> String {
    let external = strings(arr_at(o, &["spec", "externalIPs"]));
    match str_at(o, &["spec", "type"]) {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".to_string()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let lb = load_balancer_ingress(o);
            if !external.is_empty() {
                let mut all: Vec<&str> = if lb.is_empty() {
                    Vec::new()
                } else {
                    lb.split(',').collect()
                };
                all.extend(external);
                all.join(",")
            } else if !lb.is_empty() {
                lb
            } else {
                "<pending>".to_string()
            }
        }
        "ExternalName" => str_at(o, &["spec", "externalName"]).to_string(),
        _ => "<unknown>".to_string(),
    }
}

fn print_service(o: &Value, now: Time) -> Row {
    let cluster_ip = arr_at(o, &["spec", "clusterIPs"])
        .first()
        .and_then(Value::as_str)
        .or_else(|| opt_str(o, &["spec", "clusterIP"]).filter(|s| !s.is_empty()))
        .unwrap_or("<none>");
    let ports: Vec<String> = arr_at(o, &["spec", "ports"])
        .iter()
        .map(|p| {
            let port = int_at(p, &["port"]);
            let proto = str_at(p, &["protocol"]);
            match int_at(p, &["nodePort"]) {
                n if n > 0 => format!("{port}:{n}/{proto}"),
                _ => format!("{port}/{proto}"),
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "type"])),
        Value::from(cluster_ip),
        Value::from(external_ip(o)),
        Value::from(ports),
        age(o, now),
        Value::from(format_labels(at(o, &["spec", "selector"]))),
    ])
}

/// `formatEndpoints` with every port: up to three `ip:port` (or `ip` for a
/// subset without ports), then `+ N more...`.
fn format_endpoints(o: &Value) -> String {
    let subsets = arr_at(o, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    const MAX: usize = 3;
    let mut list: Vec<String> = Vec::new();
    let mut more = false;
    let mut count = 0usize;
    for ss in subsets {
        let addresses = arr_at(ss, &["addresses"]);
        let ports = arr_at(ss, &["ports"]);
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(str_at(a, &["ip"]).to_string());
            }
            continue;
        }
        for p in ports {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                let ip = str_at(a, &["ip"]);
                let port = int_at(p, &["port"]);
                // net.JoinHostPort brackets IPv6 addresses.
                list.push(if ip.contains(':') {
                    format!("[{ip}]:{port}")
                } else {
                    format!("{ip}:{port}")
                });
            }
        }
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", count - MAX)
    } else {
        ret
    }
}

fn print_endpoints(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(format_endpoints(o)),
        age(o, now),
    ])
}

fn print_config_map(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(map_len(o, &["data"]) + map_len(o, &["binaryData"])),
        age(o, now),
    ])
}

fn print_secret(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["type"])),
        Value::from(map_len(o, &["data"])),
        age(o, now),
    ])
}

fn print_namespace(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["status", "phase"])),
        age(o, now),
    ])
}

/// `findNodeRoles`: `node-role.kubernetes.io/<role>` labels and the
/// `kubernetes.io/role` label's value, sorted.
fn node_roles(o: &Value) -> Vec<String> {
    let mut roles = BTreeSet::new();
    if let Some(labels) = at(o, &["metadata", "labels"]).and_then(Value::as_object) {
        for (k, v) in labels {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.insert(role.to_string());
                }
            } else if k == "kubernetes.io/role" {
                if let Some(v) = v.as_str().filter(|v| !v.is_empty()) {
                    roles.insert(v.to_string());
                }
            }
        }
    }
    roles.into_iter().collect()
}

fn node_address(o: &Value, ty: &str) -> String {
    arr_at(o, &["status", "addresses"])
        .iter()
        .find(|a| str_at(a, &["type"]) == ty)
        .map_or_else(
            || "<none>".to_string(),
            |a| str_at(a, &["address"]).to_string(),
        )
}

fn print_node(o: &Value, now: Time) -> Row {
    // The last condition of a type wins (kube fills a map).
    let ready = arr_at(o, &["status", "conditions"])
        .iter()
        .rev()
        .find(|c| str_at(c, &["type"]) == "Ready");
    let mut status = vec![match ready {
        Some(c) if str_at(c, &["status"]) == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if opt_bool(o, &["spec", "unschedulable"]) == Some(true) {
        status.push("SchedulingDisabled");
    }
    let roles = node_roles(o).join(",");
    let info = |f: &str| {
        let v = str_at(o, &["status", "nodeInfo", f]);
        Value::from(if v.is_empty() { "<unknown>" } else { v })
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(status.join(",")),
        Value::from(if roles.is_empty() {
            "<none>".to_string()
        } else {
            roles
        }),
        age(o, now),
        Value::from(str_at(o, &["status", "nodeInfo", "kubeletVersion"])),
        Value::from(node_address(o, "InternalIP")),
        Value::from(node_address(o, "ExternalIP")),
        info("osImage"),
        info("kernelVersion"),
        info("containerRuntimeVersion"),
    ])
}

/// Where an event's fields are, in core/v1 and events.k8s.io/v1.
struct EventFields {
    first: &'static str,
    last: &'static str,
    count: &'static str,
    regarding: &'static str,
    message: &'static str,
    source: &'static str,
    reporting_controller: &'static str,
}

fn print_core_event(o: &Value, now: Time) -> Row {
    print_event(
        o,
        now,
        &EventFields {
            first: "firstTimestamp",
            last: "lastTimestamp",
            count: "count",
            regarding: "involvedObject",
            message: "message",
            source: "source",
            reporting_controller: "reportingComponent",
        },
    )
}

fn print_events_event(o: &Value, now: Time) -> Row {
    print_event(
        o,
        now,
        &EventFields {
            first: "deprecatedFirstTimestamp",
            last: "deprecatedLastTimestamp",
            count: "deprecatedCount",
            regarding: "regarding",
            message: "note",
            source: "deprecatedSource",
            reporting_controller: "reportingController",
        },
    )
}

fn first_non_empty<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() {
        b
    } else {
        a
    }
}

fn print_event(o: &Value, now: Time, f: &EventFields) -> Row {
    let first = match time_at(o, &[f.first]) {
        Some(t) => time::since(Some(t), now),
        None => time::since(time_at(o, &["eventTime"]), now),
    };
    let mut last = match time_at(o, &[f.last]) {
        Some(t) => time::since(Some(t), now),
        None => first.clone(),
    };
    let mut count = int_at(o, &[f.count]);
    if let Some(series) = at(o, &["series"]).filter(|s| s.is_object()) {
        last = time::since(time_at(series, &["lastObservedTime"]), now);
        count = int_at(series, &["count"]);
    } else if count == 0 {
        // Singleton events have no count in the new API.
        count = 1;
    }
    let kind = str_at(o, &[f.regarding, "kind"]).to_lowercase();
    let obj_name = str_at(o, &[f.regarding, "name"]);
    let target = if obj_name.is_empty() {
        kind
    } else {
        format!("{kind}/{obj_name}")
    };
    let component = first_non_empty(
        str_at(o, &[f.source, "component"]),
        str_at(o, &[f.reporting_controller]),
    );
    let host = first_non_empty(
        str_at(o, &[f.source, "host"]),
        str_at(o, &["reportingInstance"]),
    );
    let source = if host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {host}")
    };
    Row::new(vec![
        Value::from(last),
        Value::from(str_at(o, &["type"])),
        Value::from(str_at(o, &["reason"])),
        Value::from(target),
        Value::from(str_at(o, &[f.regarding, "fieldPath"])),
        Value::from(source),
        Value::from(str_at(o, &[f.message]).trim()),
        Value::from(first),
        Value::from(count),
        Value::from(name(o)),
    ])
}

fn print_replication_controller(o: &Value, now: Time) -> Row {
    let (containers, images) =
        container_cells(arr_at(o, &["spec", "template", "spec", "containers"]));
    Row::new(vec![
        Value::from(name(o)),
        Value::from(int_at(o, &["spec", "replicas"])),
        Value::from(int_at(o, &["status", "replicas"])),
        Value::from(int_at(o, &["status", "readyReplicas"])),
        age(o, now),
        containers,
        images,
        Value::from(format_labels(at(o, &["spec", "selector"]))),
    ])
}

fn print_resource_quota(o: &Value, now: Time) -> Row {
    let mut resources: Vec<&String> = at(o, &["status", "hard"])
        .and_then(Value::as_object)
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    resources.sort();
    let mut requests = Vec::new();
    let mut limits = Vec::new();
    for r in resources {
        let q = |which: &str| quantity::canonical(str_at(o, &["status", which, r.as_str()]));
        let used = match opt_str(o, &["status", "used", r.as_str()]) {
            Some(_) => q("used"),
            None => "0".to_string(),
        };
        let entry = format!("{r}: {used}/{}", q("hard"));
        let pieces: Vec<&str> = r.split('.').collect();
        if pieces.len() > 1 && pieces[0] == "limits" {
            limits.push(entry);
        } else {
            requests.push(entry);
        }
    }
    Row::new(vec![
        Value::from(name(o)),
        Value::from(requests.join(", ")),
        Value::from(limits.join(", ")),
        age(o, now),
    ])
}

fn print_pod_template(o: &Value, _now: Time) -> Row {
    let (containers, images) = container_cells(arr_at(o, &["template", "spec", "containers"]));
    Row::new(vec![
        Value::from(name(o)),
        containers,
        images,
        Value::from(format_labels(at(o, &["template", "metadata", "labels"]))),
    ])
}

fn print_component_status(o: &Value, _now: Time) -> Row {
    let (status, message, error) = match arr_at(o, &["conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == "Healthy")
    {
        Some(c) => (
            if str_at(c, &["status"]) == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            },
            str_at(c, &["message"]),
            str_at(c, &["error"]),
        ),
        None => ("Unknown", "", ""),
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(status),
        Value::from(message),
        Value::from(error),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    // kube's printServiceAccount: NAME SECRETS AGE, SECRETS a count.
    #[test]
    fn service_accounts() {
        let sa = json!({"metadata": {"name": "builder", "creationTimestamp": "2024-05-01T11:59:58Z"},
            "secrets": [{"name": "a"}, {"name": "b"}]});
        let c = print_service_account(&sa, now()).cells;
        assert_eq!(c, vec![json!("builder"), json!(2), json!("2s")]);
        let names: Vec<&str> = SERVICE_ACCOUNT.columns.iter().map(|c| c.name).collect();
        assert_eq!(names, ["Name", "Secrets", "Age"]);
    }

    // Facts from kube's printers_test.go TestPrintService.
    #[test]
    fn services() {
        let svc = |spec: Value, status: Value| json!({"metadata": {"name": "test1", "creationTimestamp": "2024-05-01T11:59:58Z"}, "spec": spec, "status": status});
        let c = print_service(
            &svc(
                json!({"type": "ClusterIP", "ports": [{"protocol": "TCP", "port": 2233}], "clusterIPs": ["10.9.8.7"], "selector": {"foo": "bar"}}),
                json!({}),
            ),
            now(),
        )
        .cells;
        assert_eq!(
            c,
            vec![
                json!("test1"),
                json!("ClusterIP"),
                json!("10.9.8.7"),
                json!("<none>"),
                json!("2233/TCP"),
                json!("2s"),
                json!("foo=bar")
            ]
        );
        let c = print_service(
            &svc(
                json!({"type": "NodePort", "ports": [{"protocol": "TCP", "port": 8888, "nodePort": 9999}], "clusterIPs": ["10.9.8.7"]}),
                json!({}),
            ),
            now(),
        )
        .cells;
        assert_eq!(
            (&c[3], &c[4], &c[6]),
            (&json!("<none>"), &json!("8888:9999/TCP"), &json!("<none>"))
        );
        let c = print_service(
            &svc(
                json!({"type": "LoadBalancer", "ports": [{"protocol": "TCP", "port": 8888}], "clusterIPs": ["10.9.8.7"]}),
                json!({}),
            ),
            now(),
        )
        .cells;
        assert_eq!(c[3], json!("<pending>"));
        let c = print_service(
            &svc(
                json!({"type": "LoadBalancer", "ports": [{"protocol": "TCP", "port": 8888}], "clusterIPs": ["10.9.8.7"], "externalIPs": ["80.11.12.11"]}),
                json!({"loadBalancer": {"ingress": [{"ip": "3.4.5.6", "hostname": "test.cluster.com"}, {"ip": "2.3.4.5"}]}}),
            ),
            now(),
        )
        .cells;
        assert_eq!(c[3], json!("2.3.4.5,3.4.5.6,80.11.12.11"));
        let c = print_service(
            &svc(
                json!({"type": "ExternalName", "externalName": "my.database.example.com"}),
                json!({}),
            ),
            now(),
        )
        .cells;
        assert_eq!(
            (&c[2], &c[3], &c[4]),
            (
                &json!("<none>"),
                &json!("my.database.example.com"),
                &json!("<none>")
            )
        );
    }

    #[test]
    fn endpoints() {
        let ep = json!({"metadata": {"name": "svc"}, "subsets": [
            {"addresses": [{"ip": "127.0.0.1"}, {"ip": "::1"}], "ports": [{"port": 8080}, {"port": 8443}]},
            {"addresses": [{"ip": "10.0.0.1"}]}
        ]});
        assert_eq!(
            format_endpoints(&ep),
            "127.0.0.1:8080,[::1]:8080,127.0.0.1:8443 + 2 more..."
        );
        assert_eq!(format_endpoints(&json!({})), "<none>");
        let headless = json!({"subsets": [{"addresses": [{"ip": "1.1.1.1"}]}]});
        assert_eq!(format_endpoints(&headless), "1.1.1.1");
    }

    #[test]
    fn config_maps_secrets_namespaces_accounts() {
        let cm =
            json!({"metadata": {"name": "cm"}, "data": {"a": "1"}, "binaryData": {"b": "AA=="}});
        assert_eq!(print_config_map(&cm, now()).cells[1], json!(2));
        let s = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "", "b": ""}});
        assert_eq!(
            print_secret(&s, now()).cells,
            vec![json!("s"), json!("Opaque"), json!(2), json!("<unknown>")]
        );
        let ns = json!({"metadata": {"name": "ns", "creationTimestamp": "2024-04-29T12:00:00Z"}, "status": {"phase": "Active"}});
        assert_eq!(
            print_namespace(&ns, now()).cells,
            vec![json!("ns"), json!("Active"), json!("2d")]
        );
        assert_eq!(
            print_name_age(&json!({"metadata": {"name": "default"}}), now()).cells,
            vec![json!("default"), json!("<unknown>")]
        );
    }

    // Facts from kube's printers_test.go TestPrintNodeStatus / roles / IPs.
    #[test]
    fn nodes() {
        let node = |labels: Value, spec: Value, status: Value| json!({"metadata": {"name": "foo", "labels": labels}, "spec": spec, "status": status});
        let status = |n: Value| print_node(&n, now()).cells[1].clone();
        assert_eq!(
            status(node(
                json!({}),
                json!({}),
                json!({"conditions": [{"type": "Ready", "status": "True"}]})
            )),
            json!("Ready")
        );
        assert_eq!(
            status(node(
                json!({}),
                json!({"unschedulable": true}),
                json!({"conditions": [{"type": "Ready", "status": "True"}]})
            )),
            json!("Ready,SchedulingDisabled")
        );
        assert_eq!(
            status(node(
                json!({}),
                json!({}),
                json!({"conditions": [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}]})
            )),
            json!("Ready")
        );
        assert_eq!(
            status(node(
                json!({}),
                json!({}),
                json!({"conditions": [{"type": "InvalidValue", "status": "True"}]})
            )),
            json!("Unknown")
        );
        assert_eq!(
            status(node(
                json!({}),
                json!({"unschedulable": true}),
                json!({"conditions": [{}]})
            )),
            json!("Unknown,SchedulingDisabled")
        );
        let n = node(
            json!({"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/proxy": "", "kubernetes.io/role": "node", "node-role.kubernetes.io/": "x"}),
            json!({}),
            json!({"nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "fake-os-image"},
                   "addresses": [{"type": "ExternalIP", "address": "1.1.1.1"}, {"type": "InternalIP", "address": "2.2.2.2"}, {"type": "InternalIP", "address": "3.3.3.3"}]}),
        );
        let c = print_node(&n, now()).cells;
        assert_eq!(
            c,
            vec![
                json!("foo"),
                json!("Unknown"),
                json!("master,node,proxy"),
                json!("<unknown>"),
                json!("v1.34.0"),
                json!("2.2.2.2"),
                json!("1.1.1.1"),
                json!("fake-os-image"),
                json!("<unknown>"),
                json!("<unknown>")
            ]
        );
        let bare = print_node(&node(json!({}), json!({}), json!({})), now()).cells;
        assert_eq!(
            (&bare[2], &bare[5], &bare[6]),
            (&json!("<none>"), &json!("<none>"), &json!("<none>"))
        );
    }

    // Facts from kube's printers_test.go TestPrintEvent.
    #[test]
    fn events() {
        let ev = json!({
            "metadata": {"name": "event1"},
            "source": {"component": "kubelet", "host": "Node1"},
            "involvedObject": {"kind": "Deployment", "name": "Deployment Name", "fieldPath": "spec.containers{foo}"},
            "reason": "Event Reason", "message": "Message Data ",
            "firstTimestamp": "2024-04-28T12:00:00Z", "lastTimestamp": "2024-04-29T12:00:00Z",
            "count": 6, "type": "Normal"
        });
        assert_eq!(
            print_core_event(&ev, now()).cells,
            vec![
                json!("2d"),
                json!("Normal"),
                json!("Event Reason"),
                json!("deployment/Deployment Name"),
                json!("spec.containers{foo}"),
                json!("kubelet, Node1"),
                json!("Message Data"),
                json!("3d"),
                json!(6),
                json!("event1")
            ]
        );
        let new_api = json!({
            "metadata": {"name": "event2"},
            "reportingComponent": "kubelet", "reportingInstance": "Node1",
            "involvedObject": {"kind": "Deployment", "name": "d"},
            "eventTime": "2024-04-30T12:00:00.123456Z",
            "series": {"count": 2, "lastObservedTime": "2024-05-01T11:00:00.000000Z"},
            "type": "Warning"
        });
        let c = print_core_event(&new_api, now()).cells;
        assert_eq!(
            (&c[0], &c[5], &c[7], &c[8]),
            (
                &json!("60m"),
                &json!("kubelet, Node1"),
                &json!("23h"),
                &json!(2)
            )
        );
        let singleton = json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod"}});
        let c = print_core_event(&singleton, now()).cells;
        assert_eq!(
            (&c[0], &c[3], &c[5], &c[7], &c[8]),
            (
                &json!("<unknown>"),
                &json!("pod"),
                &json!(""),
                &json!("<unknown>"),
                &json!(1)
            )
        );
        let ev2 = json!({
            "metadata": {"name": "e3"}, "regarding": {"kind": "Pod", "name": "p"}, "note": "hi",
            "reportingController": "ctl", "deprecatedCount": 4,
            "deprecatedLastTimestamp": "2024-05-01T11:59:00Z"
        });
        let c = print_events_event(&ev2, now()).cells;
        assert_eq!(
            (&c[0], &c[3], &c[5], &c[6], &c[8]),
            (
                &json!("60s"),
                &json!("pod/p"),
                &json!("ctl"),
                &json!("hi"),
                &json!(4)
            )
        );
    }

    #[test]
    fn replication_controllers_quotas_templates() {
        let rc = json!({"metadata": {"name": "rc"}, "spec": {"replicas": 5, "selector": {"a": "b"},
                        "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
                        "status": {"replicas": 3, "readyReplicas": 1}});
        assert_eq!(
            print_replication_controller(&rc, now()).cells,
            vec![
                json!("rc"),
                json!(5),
                json!(3),
                json!(1),
                json!("<unknown>"),
                json!("c"),
                json!("i"),
                json!("a=b")
            ]
        );
        let rq = json!({"metadata": {"name": "q"}, "status": {
            "hard": {"cpu": "1000m", "limits.memory": "1024Mi", "pods": "10", "requests.cpu": "500m"},
            "used": {"cpu": "0", "limits.memory": "512Mi", "pods": "1"}}});
        assert_eq!(
            print_resource_quota(&rq, now()).cells,
            vec![
                json!("q"),
                json!("cpu: 0/1, pods: 1/10, requests.cpu: 0/500m"),
                json!("limits.memory: 512Mi/1Gi"),
                json!("<unknown>")
            ]
        );
        let pt = json!({"metadata": {"name": "t"}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}});
        assert_eq!(
            print_pod_template(&pt, now()).cells,
            vec![json!("t"), json!("c"), json!("i"), json!("a=b")]
        );
    }

    // Facts from kube's printers_test.go TestPrintComponentStatus.
    #[test]
    fn component_statuses() {
        let names: Vec<&str> = COMPONENT_STATUS.columns.iter().map(|c| c.name).collect();
        assert_eq!(names, vec!["Name", "Status", "Message", "Error"]);
        let cs = |conditions: Value| {
            print_component_status(
                &json!({"metadata": {"name": "etcd-0", "creationTimestamp": null}, "conditions": conditions}),
                now(),
            )
            .cells
        };
        assert_eq!(
            cs(json!([{"type": "Healthy", "status": "True", "message": "ok"}])),
            vec![json!("etcd-0"), json!("Healthy"), json!("ok"), json!("")]
        );
        assert_eq!(
            cs(
                json!([{"type": "Healthy", "status": "False", "error": "context deadline exceeded"}])
            ),
            vec![
                json!("etcd-0"),
                json!("Unhealthy"),
                json!(""),
                json!("context deadline exceeded")
            ]
        );
        assert_eq!(
            cs(json!([{"type": "Other", "status": "True", "message": "x"}])),
            vec![json!("etcd-0"), json!("Unknown"), json!(""), json!("")]
        );
        assert_eq!(cs(Value::Null)[1], json!("Unknown"));
    }
}
