//! The subresources kube-apiserver serves by reaching a kubelet or a pod:
//! `pods/log`, `pods/exec`, `pods/attach`, `pods/portforward`,
//! `pods/proxy`, `services/proxy`, `nodes/proxy`. Keelson runs no kubelet
//! and proxies nowhere, so each answers what kube-apiserver answers before
//! it would stream: the pod or node lookup (`404`), the container check
//! (`400`), `pod x does not have a host assigned` (`400`, exec, attach,
//! port-forward), no content for the log of a pod not yet scheduled (`204`), a
//! node without a usable address (`500`), and otherwise one real TCP dial
//! to the kubelet (or pod) address, whose failure is worded as Go words
//! it. When something does listen there, the answer says that Keelson
//! does not proxy.

use std::time::Duration;

use keelson_api::ObjectKey;
use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use serde_json::Value;

use super::{Ctx, Reply};

/// kube-apiserver's `--kubelet-preferred-address-types` default.
const PREFERRED_ADDRESS_TYPES: [&str; 5] = [
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];

/// The kubelet port when the node reports none (`--kubelet-port`).
const DEFAULT_KUBELET_PORT: i64 = 10250;

/// How long one dial may take.
const DIAL_TIMEOUT: Duration = Duration::from_secs(3);

/// Whether the request is one of the family.
pub(crate) fn handles(resource: &str, subresource: &str) -> bool {
    match resource {
        "pods" => matches!(
            subresource,
            "log" | "exec" | "attach" | "portforward" | "proxy"
        ),
        "services" | "nodes" => subresource == "proxy",
        _ => false,
    }
}

/// An error kube returns as a plain Go error: `500`, no reason.
fn plain(msg: String) -> ApiError {
    ApiError::new(500, "", msg)
}

/// Serve one request of the family; the one success is kube's stream
/// without a location (the log of a pod not yet scheduled), which kube
/// answers `204 No Content`.
pub(crate) async fn serve(cx: &Ctx<'_>) -> ApiResult<()> {
    let name = cx.ri.name.as_str();
    match (cx.ri.resource.as_str(), cx.ri.subresource.as_str()) {
        ("nodes", _) => {
            let (host, port) = kubelet_address(cx, name).await?;
            let err = dial(&host, port).await;
            Err(unreachable_service(err))
        }
        ("services", _) => {
            let svc = cx.b.store.get(&cx.key(name)).await?;
            let _ = svc;
            let eps =
                cx.b.store
                    .get(&ObjectKey::new(
                        GroupResource::new("", "endpoints"),
                        &cx.ri.namespace,
                        name,
                    ))
                    .await;
            let target = eps.ok().and_then(|e| {
                let subset = e.pointer("/subsets/0")?.clone();
                let ip = subset.pointer("/addresses/0/ip")?.as_str()?.to_string();
                let port = subset.pointer("/ports/0/port")?.as_i64()?;
                Some((ip, port))
            });
            match target {
                None => Err(ApiError::new(
                    503,
                    "ServiceUnavailable",
                    format!("no endpoints available for service {:?}", name),
                )),
                Some((ip, port)) => Err(unreachable_service(dial(&ip, port).await)),
            }
        }
        (_, "proxy") => {
            let pod = cx.b.store.get(&cx.key(name)).await?;
            let ip = pod
                .pointer("/status/podIP")
                .and_then(Value::as_str)
                .unwrap_or("");
            let global = ip
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| !a.is_unspecified() && !a.is_loopback() && !a.is_multicast());
            if !global {
                return Err(ApiError::bad_request("address not allowed"));
            }
            let port = pod
                .pointer("/spec/containers/0/ports/0/containerPort")
                .and_then(Value::as_i64)
                .unwrap_or(80);
            Err(unreachable_service(dial(ip, port).await))
        }
        (_, sub) => {
            let pod = cx.b.store.get(&cx.key(name)).await?;
            let container = if sub == "portforward" {
                String::new()
            } else {
                validate_container(cx.query.get("container").unwrap_or(""), &pod)?
            };
            let node = pod
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .unwrap_or("");
            if node.is_empty() {
                if sub == "log" {
                    // kube's LogLocation has no location for a pod not yet
                    // scheduled: StreamObject answers 204.
                    return Ok(());
                }
                return Err(ApiError::bad_request(format!(
                    "pod {} does not have a host assigned",
                    name
                )));
            }
            let (host, port) = kubelet_address(cx, node).await?;
            let err = dial(&host, port).await;
            if sub == "log" {
                let url = format!(
                    "https://{}/containerLogs/{}/{}/{}",
                    host_port(&host, port),
                    cx.ri.namespace,
                    name,
                    container
                );
                return Err(plain(format!("Get {:?}: {}", url, err)));
            }
            Err(plain(format!("error dialing backend: {}", err)))
        }
    }
}

/// kube's `validateContainer`: the named container must exist; without a
/// name, the pod must have exactly one container.
fn validate_container(container: &str, pod: &Value) -> ApiResult<String> {
    let pod_name = meta_str(pod, "name");
    let names = |list: &str| -> Vec<String> {
        pod.pointer(&format!("/spec/{}", list))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.get("name").and_then(Value::as_str))
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let containers = names("containers");
    if container.is_empty() {
        return match containers.len() {
            1 => Ok(containers[0].clone()),
            0 => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {}",
                pod_name
            ))),
            _ => {
                let mut all = names("initContainers");
                all.extend(containers);
                all.extend(names("ephemeralContainers"));
                Err(ApiError::bad_request(format!(
                    "a container name must be specified for pod {}, choose one of: [{}]",
                    pod_name,
                    all.join(" ")
                )))
            }
        };
    }
    let any = ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .any(|l| names(l).iter().any(|n| n == container));
    if !any {
        return Err(ApiError::bad_request(format!(
            "container {} is not valid for pod {}",
            container, pod_name
        )));
    }
    Ok(container.to_string())
}

/// kube's `GetConnectionInfo`: the node (`404` when missing), its
/// preferred address and kubelet port.
async fn kubelet_address(cx: &Ctx<'_>, node: &str) -> ApiResult<(String, i64)> {
    let n =
        cx.b.store
            .get(&ObjectKey::new(GroupResource::new("", "nodes"), "", node))
            .await?;
    let addresses: Vec<(String, String)> = n
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| {
                    let f = |k: &str| x.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    (f("type"), f("address"))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut host = None;
    for ty in PREFERRED_ADDRESS_TYPES {
        if let Some((_, a)) = addresses.iter().find(|(t, _)| t == ty) {
            host = Some(a.clone());
            break;
        }
        if ty == "Hostname" {
            if let Some(h) = n
                .pointer("/metadata/labels/kubernetes.io~1hostname")
                .and_then(Value::as_str)
            {
                host = Some(h.to_string());
                break;
            }
        }
    }
    let Some(host) = host else {
        let known: Vec<String> = addresses
            .iter()
            .map(|(t, a)| format!("{{{} {}}}", t, a))
            .collect();
        return Err(plain(format!(
            "no preferred addresses found; known addresses: [{}]",
            known.join(" ")
        )));
    };
    let port = n
        .pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
        .and_then(Value::as_i64)
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_KUBELET_PORT);
    Ok((host, port))
}

fn host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{}]:{}", host, port)
    } else {
        format!("{}:{}", host, port)
    }
}

/// One TCP dial, its outcome worded as Go's `net.Dial` error.
async fn dial(host: &str, port: i64) -> String {
    let addr = host_port(host, port);
    let Ok(port16) = u16::try_from(port) else {
        return format!("dial tcp: address {}: invalid port", addr);
    };
    let resolved = match tokio::net::lookup_host((host, port16)).await {
        Ok(mut it) => it.next(),
        Err(_) => None,
    };
    let Some(sock) = resolved else {
        return format!("dial tcp: lookup {}: no such host", host);
    };
    match tokio::time::timeout(DIAL_TIMEOUT, tokio::net::TcpStream::connect(sock)).await {
        Err(_) => format!("dial tcp {}: i/o timeout", addr),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("dial tcp {}: connect: connection refused", addr)
        }
        Ok(Err(e)) => format!("dial tcp {}: connect: {}", addr, e),
        Ok(Ok(_)) => format!(
            "dial tcp {}: connected, but Keelson does not proxy to kubelets or pods",
            addr
        ),
    }
}

/// kube's proxy answer when the backend cannot be reached.
fn unreachable_service(err: String) -> ApiError {
    ApiError::new(
        503,
        "ServiceUnavailable",
        format!("error trying to reach service: {}", err),
    )
}

/// The components kube-apiserver probes besides storage (its
/// `componentstatus` servers): the controller manager's and the
/// scheduler's secure ports on this host, `/healthz` over HTTPS without
/// verifying the certificate. Keelson's own controllers do not listen
/// there, so these report what kube-apiserver reports when those
/// components are not local.
const COMPONENTS: [(&str, u16); 2] = [("scheduler", 10259), ("controller-manager", 10257)];

/// kube's `probeTimeOut` for one component probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// kube's HTTP prober reads at most this much of a body.
const MAX_PROBE_BODY: usize = 10 * 1024;

/// `componentstatuses` (get, list): the scheduler and controller manager
/// probed on their local ports, then `etcd-0`, the store's health.
pub(crate) async fn component_statuses(cx: &Ctx<'_>, list: bool) -> ApiResult<Reply> {
    let item = |name: &str, condition: Value, with_type: bool| {
        let mut v = serde_json::json!({
            "metadata": {"name": name, "creationTimestamp": null},
            "conditions": [condition],
        });
        if with_type {
            v["kind"] = "ComponentStatus".into();
            v["apiVersion"] = "v1".into();
        }
        v
    };
    if list {
        let (scheduler, manager, store) = tokio::join!(
            probe_component(COMPONENTS[0].1),
            probe_component(COMPONENTS[1].1),
            store_condition(cx)
        );
        return Ok(Reply::ok(serde_json::json!({
            "kind": "ComponentStatusList",
            "apiVersion": "v1",
            "metadata": {},
            "items": [
                item(COMPONENTS[0].0, scheduler, false),
                item(COMPONENTS[1].0, manager, false),
                item("etcd-0", store, false),
            ],
        })));
    }
    let name = cx.ri.name.as_str();
    let condition = match COMPONENTS.iter().find(|(n, _)| *n == name) {
        Some((_, port)) => probe_component(*port).await,
        None if name == "etcd-0" => store_condition(cx).await,
        None => {
            // kube names the resource in the singular here.
            return Err(ApiError::not_found(
                &GroupResource::new("", "componentstatus"),
                name,
            ));
        }
    };
    Ok(Reply::ok(item(name, condition, true)))
}

/// The `etcd-0` condition: the store's readiness.
async fn store_condition(cx: &Ctx<'_>) -> Value {
    match cx.b.store.ready().await {
        Ok(()) => serde_json::json!({"type": "Healthy", "status": "True", "message": "ok"}),
        Err(e) => serde_json::json!({"type": "Healthy", "status": "False", "error": e.message}),
    }
}

/// kube's `HttpServer.DoServerCheck` of `https://127.0.0.1:<port>/healthz`
/// as a `Healthy` condition: a 2xx is `True` with the body as message, a
/// redirect left after following redirects `Unknown` (also with the
/// body), any other status `False` with `HTTP probe failed
/// with statuscode: N`, and a request that fails `False` with Go's
/// `Get "<url>": <error>` as message (kube's prober turns errors into
/// failures, so `error` stays empty).
async fn probe_component(port: u16) -> Value {
    let url = format!("https://127.0.0.1:{port}/healthz");
    let (status, message) = match http_probe(&url, port).await {
        Ok((code, body)) if (300..400).contains(&code) => ("Unknown", body),
        Ok((code, body)) if (200..300).contains(&code) => ("True", body),
        Ok((code, _)) => (
            "False",
            format!("HTTP probe failed with statuscode: {code}"),
        ),
        Err(e) => ("False", format!("Get \"{url}\": {e}")),
    };
    serde_json::json!({"type": "Healthy", "status": status, "message": message})
}

/// One GET of `url` (certificate not verified, as kube's probe); the
/// status code and the first [`MAX_PROBE_BODY`] bytes of the body, or the
/// failure in Go's words for a refused or timed-out dial.
async fn http_probe(url: &str, port: u16) -> Result<(u16, String), String> {
    // The dial first, so that a refused connection is worded as Go's
    // `net.Dial` words it; reqwest then makes its own connection.
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    match tokio::time::timeout(PROBE_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
        Err(_) => return Err(format!("dial tcp {addr}: i/o timeout")),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(format!("dial tcp {addr}: connect: connection refused"));
        }
        Ok(Err(e)) => return Err(format!("dial tcp {addr}: connect: {e}")),
        Ok(Ok(_)) => {}
    }
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(PROBE_TIMEOUT)
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let mut resp = client.get(url).send().await.map_err(|e| {
        if e.is_timeout() {
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".to_string()
        } else {
            innermost(&e)
        }
    })?;
    let code = resp.status().as_u16();
    let mut body = Vec::new();
    // At most MAX_PROBE_BODY bytes are read, as kube's prober limits it.
    while body.len() < MAX_PROBE_BODY {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(e) => return Err(innermost(&e)),
        }
    }
    body.truncate(MAX_PROBE_BODY);
    Ok((code, String::from_utf8_lossy(&body).into_owned()))
}

/// The text of the deepest cause of `e` (reqwest wraps its causes in
/// `error sending request for url (...)`, which Go's message lacks).
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
