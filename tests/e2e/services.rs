//! Service cluster IP and node-port allocation in both modes, through the
//! installed kubectl: allocated and requested IPs, the IPAddress objects
//! and the default ServiceCIDR, kube's 422s for taken and out-of-range
//! values, dry run, updates keeping what was allocated, and deletes
//! (of a Service and of its namespace) releasing it.

mod support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Cluster, Mode};

const NS: &str = "svcs";

fn json(c: &Cluster, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    let out = c.ok(&a);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn svc(c: &Cluster, name: &str) -> Value {
    json(c, &["get", "svc", name, "-n", NS])
}

/// Whether `kubectl get <what>` finds it.
fn exists(c: &Cluster, args: &[&str]) -> bool {
    c.kubectl(args).status.success()
}

fn eventually(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn in_service_range(ip: &str) -> bool {
    let o: Vec<u8> = ip.split('.').filter_map(|p| p.parse().ok()).collect();
    o.len() == 4 && o[0] == 10 && (96..=111).contains(&o[1]) && ip != "10.96.0.0"
}

fn manifest(name: &str, ns: &str, cluster_ip: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  clusterIP: {cluster_ip}\n  selector: {{app: {name}}}\n  ports:\n  - port: 80\n"
    )
}

fn bootstrap_objects(c: &Cluster) {
    eventually("the default ServiceCIDR", Duration::from_secs(20), || {
        exists(c, &["get", "servicecidr", "kubernetes"])
    });
    let cidr = json(c, &["get", "servicecidr", "kubernetes"]);
    assert_eq!(cidr["spec"]["cidrs"], serde_json::json!(["10.96.0.0/12"]));
    assert_eq!(cidr["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(cidr["status"]["conditions"][0]["status"], "True");
    let out = c.ok(&["get", "servicecidrs"]);
    assert!(
        out.contains("kubernetes") && out.contains("10.96.0.0/12"),
        "{out}"
    );
    eventually(
        "the kubernetes Service's IPAddress",
        Duration::from_secs(20),
        || exists(c, &["get", "ipaddress", "10.96.0.1"]),
    );
    let ip = json(c, &["get", "ipaddress", "10.96.0.1"]);
    assert_eq!(ip["spec"]["parentRef"]["name"], "kubernetes");
    assert_eq!(ip["spec"]["parentRef"]["namespace"], "default");
}

fn allocation(c: &Cluster) {
    c.ok(&["create", "namespace", NS]);

    // ClusterIP: a free IP of the range, recorded as an IPAddress.
    c.ok(&[
        "create",
        "svc",
        "clusterip",
        "s1",
        "--tcp=80:8080",
        "-n",
        NS,
    ]);
    let s1 = svc(c, "s1");
    let ip = s1["spec"]["clusterIP"]
        .as_str()
        .expect("a cluster IP")
        .to_string();
    assert!(in_service_range(&ip), "{ip}");
    assert_eq!(s1["spec"]["clusterIPs"], serde_json::json!([ip]));
    assert_eq!(s1["spec"]["ipFamilies"], serde_json::json!(["IPv4"]));
    assert_eq!(s1["spec"]["ipFamilyPolicy"], "SingleStack");
    let out = c.ok(&["get", "svc", "s1", "-n", NS]);
    assert!(out.contains(&ip), "{out}");
    let rec = json(c, &["get", "ipaddress", &ip]);
    assert_eq!(rec["spec"]["parentRef"]["resource"], "services");
    assert_eq!(rec["spec"]["parentRef"]["namespace"], NS);
    assert_eq!(rec["spec"]["parentRef"]["name"], "s1");
    assert_eq!(
        rec["metadata"]["labels"]["ipaddress.kubernetes.io/managed-by"],
        "ipallocator.k8s.io"
    );
    let out = c.ok(&["get", "ipaddresses"]);
    assert!(out.contains(&ip) && out.contains("s1"), "{out}");

    // Updates keep the allocated IP: a replace without it, a label patch.
    let replaced = "apiVersion: v1\nkind: Service\nmetadata:\n  name: s1\n  namespace: svcs\nspec:\n  selector: {app: s1}\n  ports:\n  - name: 80-8080\n    port: 80\n    targetPort: 8080\n";
    c.ok_stdin(&["replace", "-f", "-"], replaced);
    c.ok(&["label", "svc", "s1", "-n", NS, "tier=web"]);
    assert_eq!(svc(c, "s1")["spec"]["clusterIP"], ip.as_str());

    // Headless and ExternalName get no IP.
    c.ok(&[
        "create",
        "svc",
        "clusterip",
        "h",
        "--clusterip=None",
        "-n",
        NS,
    ]);
    let h = svc(c, "h");
    assert_eq!(h["spec"]["clusterIP"], "None");
    assert_eq!(h["spec"]["clusterIPs"], serde_json::json!(["None"]));
    assert_eq!(h["spec"]["ipFamilyPolicy"], "SingleStack");
    c.ok(&[
        "create",
        "svc",
        "externalname",
        "ext",
        "--external-name=example.com",
        "-n",
        NS,
    ]);
    let ext = svc(c, "ext");
    assert!(ext["spec"].get("clusterIP").is_none(), "{ext}");
    let out = c.ok(&["get", "svc", "-n", NS]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("h ") && l.contains("None")),
        "{out}"
    );

    // NodePort: a port of the range; a requested one; a taken one is 422.
    c.ok(&["create", "svc", "nodeport", "np", "--tcp=80:8080", "-n", NS]);
    let port = svc(c, "np")["spec"]["ports"][0]["nodePort"]
        .as_u64()
        .expect("a node port");
    assert!((30000..=32767).contains(&port), "{port}");
    c.ok(&[
        "create",
        "svc",
        "nodeport",
        "np2",
        "--tcp=81:8080",
        "--node-port=30080",
        "-n",
        NS,
    ]);
    assert_eq!(svc(c, "np2")["spec"]["ports"][0]["nodePort"], 30080);
    let err = c.fails(
        &[
            "create",
            "svc",
            "nodeport",
            "np3",
            "--tcp=82:8080",
            "--node-port=30080",
            "-n",
            NS,
        ],
        None,
    );
    assert!(
        err.contains(r#"Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"#),
        "{err}"
    );
    // The refused create released the IP it had taken.
    assert!(!c.ok(&["get", "ipaddresses"]).contains("np3"));

    // A LoadBalancer turned `externalTrafficPolicy: Local` gets a
    // health-check node port; back to NodePort drops it.
    c.ok(&[
        "create",
        "svc",
        "loadbalancer",
        "lb",
        "--tcp=83:8080",
        "-n",
        NS,
    ]);
    c.ok(&[
        "patch",
        "svc",
        "lb",
        "-n",
        NS,
        "-p",
        r#"{"spec":{"externalTrafficPolicy":"Local"}}"#,
    ]);
    let lb = svc(c, "lb");
    let hc = lb["spec"]["healthCheckNodePort"]
        .as_u64()
        .expect("a health-check node port");
    assert!((30000..=32767).contains(&hc), "{lb}");
    c.ok(&[
        "patch",
        "svc",
        "lb",
        "-n",
        NS,
        "-p",
        r#"{"spec":{"type":"NodePort","externalTrafficPolicy":"Cluster"}}"#,
    ]);
    assert!(svc(c, "lb")["spec"].get("healthCheckNodePort").is_none());

    // A requested IP; the same IP again is kube's 422; out of range too.
    c.ok_stdin(&["create", "-f", "-"], &manifest("fixed", NS, "10.96.0.10"));
    assert_eq!(
        svc(c, "fixed")["spec"]["clusterIPs"],
        serde_json::json!(["10.96.0.10"])
    );
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&manifest("dup", NS, "10.96.0.10")),
    );
    assert!(
        err.contains(r#"Service "dup" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated"#),
        "{err}"
    );
    // The allocator's pre-validation refuses a clusterIPs list that does
    // not start with clusterIP before it allocates (it used to take
    // clusterIPs[0] and overwrite clusterIP); nothing is stored.
    let mismatch = manifest("mismatch", NS, "10.96.0.20").replace(
        "  clusterIP: 10.96.0.20\n",
        "  clusterIP: 10.96.0.20\n  clusterIPs: [10.96.0.21]\n",
    );
    let err = c.fails(&["create", "-f", "-"], Some(&mismatch));
    assert!(
        err.contains(r#"Service "mismatch" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.21"]: first value must match `clusterIP`"#),
        "{err}"
    );
    assert!(!exists(c, &["get", "svc", "mismatch", "-n", NS]));
    let err = c.fails(
        &[
            "patch",
            "svc",
            "fixed",
            "-n",
            NS,
            "-p",
            r#"{"spec":{"clusterIPs":["10.96.0.22"]}}"#,
        ],
        None,
    );
    assert!(
        err.contains(r#"Service "fixed" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.22"]: first value must match `clusterIP`"#),
        "{err}"
    );
    // Allocation comes before validation (kube's `BeginCreate`): a taken
    // IP is the only error, even beside an invalid port name.
    let bad_port = manifest("dup2", NS, "10.96.0.10").replace(
        "  - port: 80\n",
        "  - port: 80\n    name: Bad_Name\n  - port: 81\n    name: other\n",
    );
    let err = c.fails(&["create", "-f", "-"], Some(&bad_port));
    assert!(
        err.contains(r#"Service "dup2" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated"#),
        "{err}"
    );
    assert!(!err.contains("Bad_Name"), "{err}");
    // With a free IP, validation runs and the IP it allocated is released.
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&bad_port.replace("10.96.0.10", "10.96.0.12")),
    );
    assert!(
        err.contains(r#"Service "dup2" is invalid: spec.ports[0].name: Invalid value: "Bad_Name""#),
        "{err}"
    );
    c.ok_stdin(&["create", "-f", "-"], &manifest("reuse", NS, "10.96.0.12"));
    let err = c.fails(
        &["create", "-f", "-"],
        Some(&manifest("far", NS, "10.0.0.1")),
    );
    assert!(
        err.contains("failed to allocate IP 10.0.0.1: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12"),
        "{err}"
    );
    // A changed cluster IP is refused.
    let err = c.fails(
        &[
            "patch",
            "svc",
            "fixed",
            "-n",
            NS,
            "-p",
            r#"{"spec":{"clusterIP":"10.96.0.11","clusterIPs":["10.96.0.11"]}}"#,
        ],
        None,
    );
    assert!(err.contains("may not change once set"), "{err}");

    // Dry run shows an address and stores nothing.
    let dry = c.ok(&[
        "create",
        "svc",
        "clusterip",
        "dry",
        "--tcp=80",
        "-n",
        NS,
        "--dry-run=server",
        "-o",
        "json",
    ]);
    let dry: Value = serde_json::from_str(&dry).expect("json");
    assert_eq!(dry["spec"]["clusterIP"], "10.96.0.0");
    assert!(!exists(c, &["get", "svc", "dry", "-n", NS]));
    assert!(!exists(c, &["get", "ipaddress", "10.96.0.0"]));

    // Deletes release: the same requested values succeed again.
    c.ok(&["delete", "svc", "fixed", "np2", "-n", NS]);
    assert!(!exists(c, &["get", "ipaddress", "10.96.0.10"]));
    c.ok_stdin(&["create", "-f", "-"], &manifest("dup", NS, "10.96.0.10"));
    c.ok(&[
        "create",
        "svc",
        "nodeport",
        "np3",
        "--tcp=82:8080",
        "--node-port=30080",
        "-n",
        NS,
    ]);
    c.ok(&["delete", "svc", "s1", "-n", NS]);
    assert!(!exists(c, &["get", "ipaddress", &ip]));

    // Deleting the namespace releases its Services' IPs.
    c.ok(&["delete", "namespace", NS, "--wait=false"]);
    eventually(
        "the namespace's IPAddresses to go",
        Duration::from_secs(60),
        || !exists(c, &["get", "ipaddress", "10.96.0.10"]),
    );
    eventually("the namespace to go", Duration::from_secs(60), || {
        !exists(c, &["get", "namespace", NS])
    });
    // The node port is free again too.
    c.ok(&[
        "create",
        "svc",
        "nodeport",
        "again",
        "--tcp=82:8080",
        "--node-port=30080",
        "-n",
        "default",
    ]);
    c.ok(&["delete", "svc", "again", "-n", "default"]);
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    bootstrap_objects(&c);
    allocation(&c);
}

#[test]
fn services_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn services_distributed() {
    scenario(Mode::Distributed);
}
