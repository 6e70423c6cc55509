//! networking.k8s.io and discovery.k8s.io: ingresses, ingress classes,
//! network policies, service CIDRs, IP addresses and endpoint slices.

use serde_json::Value;

use super::columns::*;
use super::core::load_balancer_ingress;
use super::time::Time;
use super::util::*;
use super::{Printer, Row};

// networking/v1beta1 swagger docs kube's columns carry (the same in v1).
const SERVICE_CIDR_SPEC_CIDRS: &str = "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.";
const IP_ADDRESS_SPEC_PARENT_REF: &str = "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.";

pub(crate) static INGRESS: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Class",
            "string",
            "The name of the IngressClass resource that should be used for additional configuration",
        ),
        col(
            "Hosts",
            "string",
            "Hosts that incoming requests are matched against before the ingress rule",
        ),
        col(
            "Address",
            "string",
            "Address is a list containing ingress points for the load-balancer",
        ),
        col("Ports", "string", "Ports of TLS configurations that open"),
        AGE,
    ],
    print: print_ingress,
};

pub(crate) static INGRESS_CLASS: Printer = Printer {
    columns: &[
        NAME,
        col(
            "Controller",
            "string",
            "Controller that is responsible for handling this class",
        ),
        col(
            "Parameters",
            "string",
            "A reference to a resource with additional parameters",
        ),
        AGE,
    ],
    print: print_ingress_class,
};

pub(crate) static NETWORK_POLICY: Printer = Printer {
    columns: &[
        NAME,
        col("Pod-Selector", "string", NETPOL_SPEC_POD_SELECTOR),
        AGE,
    ],
    print: print_network_policy,
};

pub(crate) static SERVICE_CIDR: Printer = Printer {
    columns: &[NAME, col("CIDRs", "string", SERVICE_CIDR_SPEC_CIDRS), AGE],
    print: print_service_cidr,
};

/// kube's IPAddress columns are Name and ParentRef, but its rows carry the
/// age as a third cell (kubectl shows only the first two).
pub(crate) static IP_ADDRESS: Printer = Printer {
    columns: &[NAME, col("ParentRef", "string", IP_ADDRESS_SPEC_PARENT_REF)],
    print: print_ip_address,
};

pub(crate) static ENDPOINT_SLICE: Printer = Printer {
    columns: &[
        NAME,
        col("AddressType", "string", EPS_ADDRESS_TYPE),
        col("Ports", "string", EPS_PORTS),
        col("Endpoints", "string", EPS_ENDPOINTS),
        AGE,
    ],
    print: print_endpoint_slice,
};

/// `formatHosts`: up to three hosts, `*` when none.
fn format_hosts(rules: &[Value]) -> String {
    const MAX: usize = 3;
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        let host = str_at(rule, &["host"]);
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    if list.is_empty() {
        return "*".to_string();
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", rules.len() - MAX)
    } else {
        ret
    }
}

fn print_ingress(o: &Value, now: Time) -> Row {
    let ports = if arr_at(o, &["spec", "tls"]).is_empty() {
        "80"
    } else {
        "80, 443"
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(opt_str(o, &["spec", "ingressClassName"]).unwrap_or("<none>")),
        Value::from(format_hosts(arr_at(o, &["spec", "rules"]))),
        Value::from(load_balancer_ingress(o)),
        Value::from(ports),
        age(o, now),
    ])
}

fn print_ingress_class(o: &Value, now: Time) -> Row {
    let parameters = match at(o, &["spec", "parameters"]).filter(|p| p.is_object()) {
        None => "<none>".to_string(),
        Some(p) => {
            let mut s = str_at(p, &["kind"]).to_string();
            if let Some(g) = opt_str(p, &["apiGroup"]) {
                s = format!("{s}.{g}");
            }
            format!("{s}/{}", str_at(p, &["name"]))
        }
    };
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["spec", "controller"])),
        Value::from(parameters),
        age(o, now),
    ])
}

fn print_network_policy(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(format_label_selector(at(o, &["spec", "podSelector"]))),
        age(o, now),
    ])
}

fn print_service_cidr(o: &Value, now: Time) -> Row {
    let cidrs: Vec<&str> = arr_at(o, &["spec", "cidrs"])
        .iter()
        .map(|c| c.as_str().unwrap_or(""))
        .collect();
    Row::new(vec![
        Value::from(name(o)),
        Value::from(cidrs.join(",")),
        age(o, now),
    ])
}

/// The ParentRef cell: `<none>`, else the lower-cased group resource
/// (`services`, `gateways.gateway.networking.k8s.io`), the namespace when
/// set, and the name, `/`-separated.
fn parent_ref(o: &Value) -> String {
    let Some(p) = at(o, &["spec", "parentRef"]).filter(|p| p.is_object()) else {
        return "<none>".to_string();
    };
    let (group, resource) = (str_at(p, &["group"]), str_at(p, &["resource"]));
    let mut s = if group.is_empty() {
        resource.to_lowercase()
    } else {
        format!("{resource}.{group}").to_lowercase()
    };
    let namespace = str_at(p, &["namespace"]);
    if !namespace.is_empty() {
        s.push('/');
        s.push_str(namespace);
    }
    s.push('/');
    s.push_str(str_at(p, &["name"]));
    s
}

fn print_ip_address(o: &Value, now: Time) -> Row {
    Row::new(vec![
        Value::from(name(o)),
        Value::from(parent_ref(o)),
        age(o, now),
    ])
}

fn print_endpoint_slice(o: &Value, now: Time) -> Row {
    const MAX: usize = 3;
    let ports_all = arr_at(o, &["ports"]);
    let ports: Vec<String> = ports_all
        .iter()
        .take(MAX)
        .map(|p| match (opt_int(p, &["port"]), opt_str(p, &["name"])) {
            (Some(n), _) => n.to_string(),
            (None, Some(name)) => name.to_string(),
            (None, None) => "*".to_string(),
        })
        .collect();
    let addresses: Vec<&str> = arr_at(o, &["endpoints"])
        .iter()
        .flat_map(|e| arr_at(e, &["addresses"]))
        .map(|a| a.as_str().unwrap_or(""))
        .collect();
    let shown: Vec<String> = addresses.iter().take(MAX).map(|s| s.to_string()).collect();
    Row::new(vec![
        Value::from(name(o)),
        Value::from(str_at(o, &["addressType"])),
        Value::from(list_with_more(&ports, ports_all.len(), MAX)),
        Value::from(list_with_more(&shown, addresses.len(), MAX)),
        age(o, now),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::table::time::test_now as now;

    // Facts from kube's printers_test.go TestPrintIngress / EndpointSlice.
    #[test]
    fn ingresses() {
        let ing = json!({
            "metadata": {"name": "test1", "creationTimestamp": "2024-04-01T12:00:00Z"},
            "spec": {"ingressClassName": "foo", "rules": [{"host": "foo.bar.com"}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "2.3.4.5", "hostname": "localhost.localdomain"}]}}
        });
        assert_eq!(
            print_ingress(&ing, now()).cells,
            vec![
                json!("test1"),
                json!("foo"),
                json!("foo.bar.com"),
                json!("2.3.4.5"),
                json!("80"),
                json!("30d")
            ]
        );
        let many = json!({"spec": {"tls": [{}], "rules": [{"host": "a"}, {}, {"host": "b"}, {"host": "c"}, {"host": "d"}]}});
        let c = print_ingress(&many, now()).cells;
        assert_eq!(
            (&c[1], &c[2], &c[4]),
            (
                &json!("<none>"),
                &json!("a,b,c + 2 more..."),
                &json!("80, 443")
            )
        );
        assert_eq!(format_hosts(&[]), "*");
        let class = json!({"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}});
        assert_eq!(
            print_ingress_class(&class, now()).cells[2],
            json!("IngressParameters.k8s.example.com/external-lb")
        );
    }

    #[test]
    fn policies_and_slices() {
        let np = json!({"metadata": {"name": "np"}, "spec": {"podSelector": {"matchLabels": {"foo": "bar"}}}});
        assert_eq!(print_network_policy(&np, now()).cells[1], json!("foo=bar"));
        let all = json!({"metadata": {"name": "np"}, "spec": {"podSelector": {}}});
        assert_eq!(print_network_policy(&all, now()).cells[1], json!("<none>"));
        let eps = json!({
            "metadata": {"name": "abcslice.123"}, "addressType": "IPv4",
            "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}, {"name": "named"}, {}],
            "endpoints": [{"addresses": ["10.1.2.3", "2001:db8::1234:5678"]}, {"addresses": ["10.1.2.4"]}, {"addresses": ["10.1.2.5"]}]
        });
        assert_eq!(
            print_endpoint_slice(&eps, now()).cells,
            vec![
                json!("abcslice.123"),
                json!("IPv4"),
                json!("80,443,named + 1 more..."),
                json!("10.1.2.3,2001:db8::1234:5678,10.1.2.4 + 1 more..."),
                json!("<unknown>")
            ]
        );
        let empty = json!({"metadata": {"name": "e"}, "addressType": "FQDN"});
        let c = print_endpoint_slice(&empty, now()).cells;
        assert_eq!((&c[2], &c[3]), (&json!("<unset>"), &json!("<unset>")));
    }

    #[test]
    fn service_cidrs() {
        let cols: Vec<_> = SERVICE_CIDR
            .columns
            .iter()
            .map(|c| (c.name, c.ty, c.format, c.priority))
            .collect();
        assert_eq!(
            cols,
            vec![
                ("Name", "string", "name", 0),
                ("CIDRs", "string", "", 0),
                ("Age", "string", "", 0)
            ]
        );
        assert!(SERVICE_CIDR.columns[1]
            .description
            .starts_with("CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\""));
        let cidr = json!({"metadata": {"name": "kubernetes", "creationTimestamp": "2024-04-01T12:00:00Z"},
            "spec": {"cidrs": ["10.96.0.0/16", "fd00:10:96::/112"]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(
            print_service_cidr(&cidr, now()).cells,
            vec![
                json!("kubernetes"),
                json!("10.96.0.0/16,fd00:10:96::/112"),
                json!("30d")
            ]
        );
        let single = json!({"metadata": {"name": "extra"}, "spec": {"cidrs": ["192.168.0.0/24"]}});
        assert_eq!(
            print_service_cidr(&single, now()).cells[1],
            json!("192.168.0.0/24")
        );
        let none = json!({"metadata": {"name": "empty"}, "spec": {}});
        assert_eq!(print_service_cidr(&none, now()).cells[1], json!(""));
    }

    // Facts from kube's printers.go printIPAddress.
    #[test]
    fn ip_addresses() {
        let cols: Vec<_> = IP_ADDRESS
            .columns
            .iter()
            .map(|c| (c.name, c.ty, c.format, c.priority))
            .collect();
        assert_eq!(
            cols,
            vec![
                ("Name", "string", "name", 0),
                ("ParentRef", "string", "", 0)
            ]
        );
        assert_eq!(
            IP_ADDRESS.columns[1].description,
            "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object."
        );
        let ip = json!({"metadata": {"name": "10.96.0.1", "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "kubernetes"}}});
        // Three cells for two columns, as kube sends them.
        assert_eq!(
            print_ip_address(&ip, now()).cells,
            vec![
                json!("10.96.0.1"),
                json!("services/default/kubernetes"),
                json!("120m")
            ]
        );
        let grouped = json!({"metadata": {"name": "2001:db8::1"},
            "spec": {"parentRef": {"group": "Gateway.Networking.k8s.io", "resource": "Gateways", "name": "gw"}}});
        assert_eq!(
            print_ip_address(&grouped, now()).cells[1],
            json!("gateways.gateway.networking.k8s.io/gw")
        );
        let orphan = json!({"metadata": {"name": "10.96.0.2"}, "spec": {}});
        assert_eq!(
            print_ip_address(&orphan, now()).cells,
            vec![json!("10.96.0.2"), json!("<none>"), json!("<unknown>")]
        );
        for (kind, p) in [("ServiceCIDR", &SERVICE_CIDR), ("IPAddress", &IP_ADDRESS)] {
            assert!(std::ptr::eq(
                crate::table::printer("networking.k8s.io", kind),
                p
            ));
        }
    }
}
