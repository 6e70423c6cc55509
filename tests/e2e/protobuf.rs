//! Kubernetes Protobuf end to end, in both modes: every `kubectl create`
//! generator (kubectl sends those objects as Protobuf) read back, and raw
//! HTTPS with k8s-pb's prost types decoding what the server writes — an
//! object, a list, a watch stream and a Status — and a Protobuf POST that
//! reads back as the same JSON as its JSON twin.

mod support;

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::apis::meta::v1beta1 as meta_v1beta1;
use k8s_pb::apimachinery::pkg::runtime as rt;
use prost::Message;
use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

const TLS_CRT: &str = "-----BEGIN CERTIFICATE-----
MIIBgjCCASegAwIBAgIUZwrTRjgy3LZQmvS86qG7wjGemAAwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKcGIuZXhhbXBsZTAgFw0yNjExMjYwNzQyMjVaGA8yMTI2MTEw
MjA3NDIyNVowFTETMBEGA1UEAwwKcGIuZXhhbXBsZTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABA4rgAF9zoFHkpWWr42PutNHixNboHZJijzqvWprMqtfqDD3Fxhd
fcO+BGSUnvl3Ccx/uqryqFCxXC7f2eSlhxOjUzBRMB0GA1UdDgQWBBQuAp3Ti3k8
7xGslK4dm0+6PcFQUzAfBgNVHSMEGDAWgBQuAp3Ti3k87xGslK4dm0+6PcFQUzAP
BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQCVB1Ke8KKI9PUtmnr6
3/vey1xT+sAFfoeW+qlbgBaVcAIhAOaqAkJUS+kLkUhEdBXnh22FCNUgfd6GoGMc
0cHq62ZH
-----END CERTIFICATE-----
";

const TLS_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgfRwyU1i7d842Tj9m
JiBspnOsGhvGyuaXhLk0sg2l+J6hRANCAAQOK4ABfc6BR5KVlq+Nj7rTR4sTW6B2
SYo86r1qazKrX6gw9xcYXX3DvgRklJ75dwnMf7qq8qhQsVwu39nkpYcT
-----END PRIVATE KEY-----
";

fn get_json(c: &Cluster, args: &[&str]) -> Value {
    let mut a = vec!["get"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-n", "pb", "-o", "json"]);
    let out = c.ok(&a);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn b64(s: &str) -> Vec<u8> {
    use std::io::Write;
    // Decode with the base64 alphabet by hand (no dependency).
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for ch in s.bytes().filter(|b| *b != b'=') {
        let v = table.iter().position(|t| *t == ch).expect("base64") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.write_all(&[(acc >> bits) as u8]).unwrap();
        }
    }
    out
}

/// Every generator of `kubectl create` that sends Protobuf, read back.
fn generators(c: &Cluster) {
    c.ok(&["create", "namespace", "pb"]);
    assert_eq!(
        get_json(c, &["namespace", "pb"])["status"]["phase"],
        "Active"
    );

    // kubectl does send Protobuf for these.
    let out = c.kubectl(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
        "--port=80",
        "-n",
        "pb",
        "-v=8",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "kubectl did not send Protobuf:\n{log}"
    );
    let d = get_json(c, &["deployment", "web"]);
    assert_eq!(d["spec"]["replicas"], 2);
    let ctr = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        (ctr["name"].as_str(), ctr["image"].as_str()),
        (Some("nginx"), Some("nginx:1.27"))
    );
    assert_eq!(ctr["ports"][0]["containerPort"], 80);
    assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "web");
    assert_eq!(
        d["spec"]["strategy"]["type"], "RollingUpdate",
        "defaulted as from JSON"
    );
    assert_eq!(ctr["terminationMessagePath"], "/dev/termination-log");
    assert!(
        ctr.get("workingDir").is_none() && ctr.get("stdin").is_none(),
        "{ctr}"
    );
    assert_eq!(ctr["resources"], json!({}));

    c.ok(&[
        "create",
        "service",
        "clusterip",
        "web",
        "--tcp=80:8080",
        "-n",
        "pb",
    ]);
    let s = get_json(c, &["service", "web"]);
    assert_eq!(s["spec"]["type"], "ClusterIP");
    assert_eq!(s["spec"]["ports"][0]["port"], 80);
    assert_eq!(s["spec"]["ports"][0]["targetPort"], 8080);
    assert_eq!(s["spec"]["selector"]["app"], "web");

    c.ok(&[
        "create",
        "service",
        "nodeport",
        "np",
        "--tcp=81:8081",
        "--node-port=30081",
        "-n",
        "pb",
    ]);
    let s = get_json(c, &["service", "np"]);
    assert_eq!(s["spec"]["type"], "NodePort");
    assert_eq!(s["spec"]["ports"][0]["nodePort"], 30081);

    c.ok(&[
        "create",
        "job",
        "j",
        "--image=busybox:1.36",
        "-n",
        "pb",
        "--",
        "date",
    ]);
    let j = get_json(c, &["job", "j"]);
    assert_eq!(
        j["spec"]["template"]["spec"]["containers"][0]["command"],
        json!(["date"])
    );
    assert_eq!(j["spec"]["template"]["spec"]["restartPolicy"], "Never");

    c.ok(&[
        "create",
        "cronjob",
        "cj",
        "--image=busybox:1.36",
        "--schedule=*/5 * * * *",
        "-n",
        "pb",
        "--",
        "date",
    ]);
    let cj = get_json(c, &["cronjob", "cj"]);
    assert_eq!(cj["spec"]["schedule"], "*/5 * * * *");
    assert_eq!(
        cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"],
        "busybox:1.36"
    );

    c.ok(&[
        "create",
        "role",
        "r",
        "--verb=get,list",
        "--resource=pods",
        "-n",
        "pb",
    ]);
    let r = get_json(c, &["role", "r"]);
    assert_eq!(r["rules"][0]["verbs"], json!(["get", "list"]));
    assert_eq!(r["rules"][0]["resources"], json!(["pods"]));

    c.ok(&[
        "create",
        "rolebinding",
        "rb",
        "--role=r",
        "--user=alice",
        "-n",
        "pb",
    ]);
    let rb = get_json(c, &["rolebinding", "rb"]);
    assert_eq!(
        rb["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"})
    );
    assert_eq!(rb["subjects"][0]["name"], "alice");

    c.ok(&[
        "create",
        "clusterrole",
        "pb-reader",
        "--verb=get",
        "--resource=configmaps",
    ]);
    let cr = get_json(c, &["clusterrole", "pb-reader"]);
    assert_eq!(cr["rules"][0]["resources"], json!(["configmaps"]));

    c.ok(&[
        "create",
        "secret",
        "docker-registry",
        "reg",
        "--docker-server=registry.example",
        "--docker-username=u",
        "--docker-password=p",
        "-n",
        "pb",
    ]);
    let reg = get_json(c, &["secret", "reg"]);
    assert_eq!(reg["type"], "kubernetes.io/dockerconfigjson");
    let cfg = String::from_utf8(b64(reg["data"][".dockerconfigjson"].as_str().unwrap())).unwrap();
    assert!(cfg.contains("registry.example"), "{cfg}");

    let crt = c.home.path().join("tls.crt");
    let key = c.home.path().join("tls.key");
    std::fs::write(&crt, TLS_CRT).unwrap();
    std::fs::write(&key, TLS_KEY).unwrap();
    c.ok(&[
        "create",
        "secret",
        "tls",
        "tls",
        &format!("--cert={}", crt.display()),
        &format!("--key={}", key.display()),
        "-n",
        "pb",
    ]);
    let tls = get_json(c, &["secret", "tls"]);
    assert_eq!(tls["type"], "kubernetes.io/tls");
    assert_eq!(
        b64(tls["data"]["tls.crt"].as_str().unwrap()),
        TLS_CRT.as_bytes()
    );
    assert_eq!(
        b64(tls["data"]["tls.key"].as_str().unwrap()),
        TLS_KEY.as_bytes()
    );

    c.ok(&[
        "create",
        "quota",
        "q",
        "--hard=pods=10,requests.cpu=1500m",
        "-n",
        "pb",
    ]);
    let q = get_json(c, &["resourcequota", "q"]);
    assert_eq!(
        q["spec"]["hard"],
        json!({"pods": "10", "requests.cpu": "1500m"})
    );

    c.ok(&[
        "create",
        "priorityclass",
        "pb-high",
        "--value=1000",
        "--description=high",
    ]);
    let pc = get_json(c, &["priorityclass", "pb-high"]);
    assert_eq!(
        (pc["value"].as_i64(), pc["description"].as_str()),
        (Some(1000), Some("high"))
    );
    assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");

    c.ok(&[
        "create",
        "poddisruptionbudget",
        "pdb",
        "--selector=app=web",
        "--min-available=1",
        "-n",
        "pb",
    ]);
    let pdb = get_json(c, &["poddisruptionbudget", "pdb"]);
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    assert_eq!(pdb["spec"]["selector"]["matchLabels"]["app"], "web");

    c.ok(&[
        "create",
        "ingress",
        "ing",
        "--rule=a.example/=web:80",
        "-n",
        "pb",
    ]);
    let ing = get_json(c, &["ingress", "ing"]);
    let rule = &ing["spec"]["rules"][0];
    assert_eq!(rule["host"], "a.example");
    let path = &rule["http"]["paths"][0];
    assert_eq!(
        path["backend"]["service"],
        json!({"name": "web", "port": {"number": 80}})
    );
    assert_eq!(path["pathType"], "Exact");

    // Each generator's object made twice — sent as Protobuf by kubectl, and
    // as the JSON kubectl prints for it (`--dry-run=client -o json`) —
    // reads back the same.
    let twins: [(&str, &[&str]); 9] = [
        (
            "deployment",
            &[
                "deployment",
                "--image=nginx:1.27",
                "--replicas=3",
                "--port=8080",
            ],
        ),
        ("service", &["service", "clusterip", "--tcp=80:8080"]),
        ("job", &["job", "--image=busybox:1.36", "--", "date"]),
        (
            "cronjob",
            &[
                "cronjob",
                "--image=busybox:1.36",
                "--schedule=0 * * * *",
                "--",
                "date",
            ],
        ),
        ("role", &["role", "--verb=get", "--resource=pods,services"]),
        (
            "secret",
            &[
                "secret",
                "docker-registry",
                "--docker-server=r.example",
                "--docker-username=u",
                "--docker-password=p",
            ],
        ),
        ("resourcequota", &["quota", "--hard=pods=3"]),
        (
            "poddisruptionbudget",
            &[
                "poddisruptionbudget",
                "--selector=app=x",
                "--max-unavailable=20%",
            ],
        ),
        (
            "ingress",
            &[
                "ingress",
                "--rule=b.example/api*=svc:8080,tls=tls",
                "--class=nginx",
            ],
        ),
    ];
    for (resource, args) in twins {
        let with_name = |name: &str, extra: &[&str]| -> Vec<String> {
            // The name goes after the generator's sub-command words, the
            // flags before a `--` command.
            let words = args.iter().take_while(|a| !a.starts_with('-')).count();
            let dashes = args.iter().position(|a| *a == "--").unwrap_or(args.len());
            let mut v: Vec<String> = vec!["create".into()];
            v.extend(args[..words].iter().map(|s| s.to_string()));
            v.push(name.into());
            v.extend(args[words..dashes].iter().map(|s| s.to_string()));
            v.extend(["-n", "pb"].iter().chain(extra).map(|s| s.to_string()));
            v.extend(args[dashes..].iter().map(|s| s.to_string()));
            v
        };
        let pb = with_name("twin-pb", &[]);
        c.ok(&pb.iter().map(String::as_str).collect::<Vec<_>>());
        let dry = with_name("twin-json", &["--dry-run=client", "-o", "json"]);
        let printed = c.ok(&dry.iter().map(String::as_str).collect::<Vec<_>>());
        c.ok_stdin(&["create", "-f", "-", "-n", "pb"], &printed);
        let (a, b) = (
            get_json(c, &[resource, "twin-pb"]),
            get_json(c, &[resource, "twin-json"]),
        );
        assert_eq!(
            twin(a),
            twin(b),
            "{resource}: Protobuf and JSON twins differ"
        );
    }

    // Namespaced and cluster objects list back through kubectl.
    let all = c.ok(&[
        "get",
        "deploy,svc,job,cronjob,role,rolebinding,secret,quota,pdb,ingress",
        "-n",
        "pb",
        "-o",
        "name",
    ]);
    for want in [
        "deployment.apps/web",
        "service/np",
        "job.batch/j",
        "ingress.networking.k8s.io/ing",
    ] {
        assert!(all.contains(want), "{all}");
    }
}

fn pod_json(name: &str) -> Value {
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "pb", "labels": {"app": "twin"}},
        "spec": {
            "containers": [{
                "name": "c",
                "image": "busybox:1.36",
                "command": ["sleep", "3600"],
                "ports": [{"containerPort": 8080, "name": "http"}],
                "resources": {"limits": {"cpu": "500m", "memory": "64Mi"}},
                "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5}
            }],
            "terminationGracePeriodSeconds": 5
        }
    })
}

/// The Pod `pod_json` describes, as client-go would send it.
fn pod_proto(name: &str) -> core::Pod {
    core::Pod {
        metadata: Some(meta::ObjectMeta {
            name: Some(name.into()),
            namespace: Some("pb".into()),
            labels: [("app".to_string(), "twin".to_string())]
                .into_iter()
                .collect(),
            ..Default::default()
        }),
        spec: Some(core::PodSpec {
            containers: vec![core::Container {
                name: Some("c".into()),
                image: Some("busybox:1.36".into()),
                command: vec!["sleep".into(), "3600".into()],
                ports: vec![core::ContainerPort {
                    container_port: Some(8080),
                    name: Some("http".into()),
                    ..Default::default()
                }],
                resources: Some(core::ResourceRequirements {
                    limits: [("cpu", "500m"), ("memory", "64Mi")]
                        .into_iter()
                        .map(|(k, v)| {
                            (
                                k.to_string(),
                                k8s_pb::apimachinery::pkg::api::resource::Quantity {
                                    string: Some(v.into()),
                                },
                            )
                        })
                        .collect(),
                    ..Default::default()
                }),
                readiness_probe: Some(core::Probe {
                    handler: Some(core::ProbeHandler {
                        http_get: Some(core::HttpGetAction {
                            path: Some("/".into()),
                            port: Some(k8s_pb::apimachinery::pkg::util::intstr::IntOrString {
                                r#type: Some(1),
                                int_val: Some(0),
                                str_val: Some("http".into()),
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    period_seconds: Some(5),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            termination_grace_period_seconds: Some(5),
            ..Default::default()
        }),
        status: Some(core::PodStatus::default()),
    }
}

fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let u = rt::Unknown {
        type_meta: Some(rt::TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut b = b"k8s\0".to_vec();
    b.extend(u.encode_to_vec());
    b
}

/// A Protobuf response body's envelope.
fn unwrap(body: &[u8]) -> rt::Unknown {
    assert!(
        body.starts_with(b"k8s\0"),
        "no magic: {:?}",
        &body[..body.len().min(16)]
    );
    rt::Unknown::decode(&body[4..]).expect("an Unknown envelope")
}

/// A generator's object without what differs between two of them (names,
/// uids, times, allocated addresses; the JSON twin's manager is kubectl's
/// `create -f`, the same `kubectl-create`).
fn twin(mut v: Value) -> Value {
    for path in [["spec", "clusterIP"], ["spec", "clusterIPs"]] {
        if let Some(m) = v[path[0]].as_object_mut() {
            m.remove(path[1]);
        }
    }
    if let Some(m) = v["metadata"].as_object_mut() {
        m.remove("annotations");
    }
    // A budget's status is the disruption controller's, written after the
    // create at its own time.
    if v["kind"] == "PodDisruptionBudget" {
        if let Some(m) = v.as_object_mut() {
            m.remove("status");
        }
    }
    let s = comparable(v)
        .to_string()
        .replace("twin-json", "twin")
        .replace("twin-pb", "twin");
    serde_json::from_str(&s).unwrap()
}

/// What differs between two objects made the same way at different times.
fn comparable(mut v: Value) -> Value {
    // A Job's generated selector and template labels carry its own uid.
    let uid = v["metadata"]["uid"].as_str().unwrap_or("").to_string();
    let m = v["metadata"].as_object_mut().unwrap();
    for k in ["name", "uid", "resourceVersion", "creationTimestamp"] {
        m.remove(k);
    }
    if let Some(mf) = m.get_mut("managedFields").and_then(Value::as_array_mut) {
        for e in mf {
            e.as_object_mut().unwrap().remove("time");
        }
    }
    // Each pod's ServiceAccount token volume has a random name, as on kube.
    let mut text = v.to_string();
    if !uid.is_empty() {
        text = text.replace(&uid, "<uid>");
    }
    let prefix = "kube-api-access-";
    let mut from = 0;
    while let Some(i) = text[from..].find(prefix) {
        let at = from + i + prefix.len();
        text.replace_range(at..at + 5, "*****");
        from = at + 5;
    }
    serde_json::from_str(&text).unwrap()
}

async fn http(c: &Cluster) {
    let client = c.client();
    let pods = format!("{}/api/v1/namespaces/pb/pods", c.url);

    // A Protobuf POST answered in Protobuf, and its JSON twin.
    let r = client
        .post(&pods)
        .header("content-type", PROTOBUF)
        .header("accept", PROTOBUF)
        .body(envelope("v1", "Pod", pod_proto("twin-pb").encode_to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    assert_eq!(r.headers()["content-type"], PROTOBUF);
    let u = unwrap(&r.bytes().await.unwrap());
    assert_eq!(u.type_meta.unwrap().kind.as_deref(), Some("Pod"));
    let created = core::Pod::decode(u.raw.unwrap().as_slice()).unwrap();
    let cm = created.metadata.as_ref().unwrap();
    assert_eq!(cm.name.as_deref(), Some("twin-pb"));
    assert!(cm.uid.as_deref().is_some_and(|u| !u.is_empty()));
    assert!(cm.creation_timestamp.as_ref().unwrap().seconds.unwrap() > 0);
    let spec = created.spec.as_ref().unwrap();
    assert_eq!(spec.restart_policy.as_deref(), Some("Always"), "defaulted");
    assert_eq!(spec.termination_grace_period_seconds, Some(5));

    let r = client
        .post(&pods)
        .json(&pod_json("twin-json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let get = |name: &'static str| {
        let client = client.clone();
        let url = format!("{pods}/{name}");
        async move {
            client
                .get(url)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let (a, b) = (get("twin-pb").await, get("twin-json").await);
    assert_eq!(
        comparable(a),
        comparable(b),
        "a Protobuf POST reads back as its JSON twin"
    );

    // GET in Protobuf.
    let r = client
        .get(format!(
            "{}/apis/apps/v1/namespaces/pb/deployments/web",
            c.url
        ))
        .header("accept", PROTOBUF)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let u = unwrap(&r.bytes().await.unwrap());
    let tm = u.type_meta.unwrap();
    assert_eq!(
        (tm.api_version.as_deref(), tm.kind.as_deref()),
        (Some("apps/v1"), Some("Deployment"))
    );
    let d = apps::Deployment::decode(u.raw.unwrap().as_slice()).unwrap();
    assert_eq!(d.spec.unwrap().replicas, Some(2));

    // LIST in Protobuf, paged.
    let r = client
        .get(format!("{pods}?limit=1"))
        .header("accept", PROTOBUF)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], PROTOBUF);
    let u = unwrap(&r.bytes().await.unwrap());
    assert_eq!(u.type_meta.unwrap().kind.as_deref(), Some("PodList"));
    let page = core::PodList::decode(u.raw.unwrap().as_slice()).unwrap();
    assert_eq!(page.items.len(), 1);
    let lm = page.metadata.unwrap();
    let token = lm.r#continue.unwrap();
    assert!(!token.is_empty());
    assert_eq!(lm.remaining_item_count, Some(1));
    let r = client
        .get(format!("{pods}?limit=5&continue={token}"))
        .header("accept", PROTOBUF)
        .send()
        .await
        .unwrap();
    let rest =
        core::PodList::decode(unwrap(&r.bytes().await.unwrap()).raw.unwrap().as_slice()).unwrap();
    assert_eq!(rest.items.len(), 1);
    let list_rv = lm.resource_version.unwrap();

    // A Status in Protobuf.
    let r = client
        .get(format!("{pods}/nope"))
        .header("accept", PROTOBUF)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    assert_eq!(r.headers()["content-type"], PROTOBUF);
    let u = unwrap(&r.bytes().await.unwrap());
    assert_eq!(u.type_meta.unwrap().kind.as_deref(), Some("Status"));
    let st = meta::Status::decode(u.raw.unwrap().as_slice()).unwrap();
    assert_eq!(
        (st.code, st.reason.as_deref()),
        (Some(404), Some("NotFound"))
    );
    assert_eq!(st.message.as_deref(), Some("pods \"nope\" not found"));

    // Bad bytes are a 400 Status.
    let r = client
        .post(&pods)
        .header("content-type", PROTOBUF)
        .body(&b"k8s\0\x0a\xff\xff"[..])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: Value = r.json().await.unwrap();
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("the object provided is unrecognized (must be of type Pod): "),
        "{v}"
    );

    // DeleteOptions and Scale bodies in Protobuf, as typed clients send them.
    let dry = meta::DeleteOptions {
        dry_run: vec!["All".into()],
        ..Default::default()
    };
    let r = client
        .delete(format!("{pods}/twin-json"))
        .header("content-type", PROTOBUF)
        .body(envelope(
            "meta.k8s.io/v1",
            "DeleteOptions",
            dry.encode_to_vec(),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = client
        .get(format!("{pods}/twin-json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "a dry-run delete keeps the pod");
    let scale_url = format!("{}/apis/apps/v1/namespaces/pb/deployments/web/scale", c.url);
    let r = client
        .get(&scale_url)
        .header("accept", PROTOBUF)
        .send()
        .await
        .unwrap();
    let u = unwrap(&r.bytes().await.unwrap());
    assert_eq!(u.type_meta.as_ref().unwrap().kind.as_deref(), Some("Scale"));
    let mut scale = k8s_pb::api::autoscaling::v1::Scale::decode(u.raw.unwrap().as_slice()).unwrap();
    assert_eq!(scale.spec.as_ref().unwrap().replicas, Some(2));
    scale.spec.as_mut().unwrap().replicas = Some(4);
    let r = client
        .put(&scale_url)
        .header("content-type", PROTOBUF)
        .body(envelope("autoscaling/v1", "Scale", scale.encode_to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "{:?}", r.text().await);
    let d: Value = client
        .get(format!(
            "{}/apis/apps/v1/namespaces/pb/deployments/web",
            c.url
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(d["spec"]["replicas"], 4);

    // A watch stream: length-delimited WatchEvents around enveloped objects.
    let mut w = client
        .get(format!(
            "{pods}?watch=true&resourceVersion={list_rv}&timeoutSeconds=20"
        ))
        .header("accept", PROTOBUF)
        .send()
        .await
        .unwrap();
    assert_eq!(w.status().as_u16(), 200);
    assert_eq!(
        w.headers()["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let r = client
        .post(&pods)
        .header("content-type", PROTOBUF)
        .body(envelope("v1", "Pod", pod_proto("watched").encode_to_vec()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let r = client
        .delete(format!("{pods}/watched"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let mut buf: Vec<u8> = Vec::new();
    let mut events: Vec<(String, String)> = Vec::new();
    while events.len() < 2 {
        let chunk = w.chunk().await.unwrap().expect("the watch ended early");
        buf.extend_from_slice(&chunk);
        while buf.len() >= 4 {
            let len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
            if buf.len() < 4 + len {
                break;
            }
            let frame: Vec<u8> = buf.drain(..4 + len).skip(4).collect();
            let ev = meta::WatchEvent::decode(frame.as_slice()).unwrap();
            let raw = ev.object.unwrap().raw.unwrap();
            let u = unwrap(&raw);
            assert_eq!(u.type_meta.unwrap().kind.as_deref(), Some("Pod"));
            let p = core::Pod::decode(u.raw.unwrap().as_slice()).unwrap();
            events.push((ev.r#type.unwrap(), p.metadata.unwrap().name.unwrap()));
        }
    }
    assert_eq!(
        events,
        [
            ("ADDED".to_string(), "watched".to_string()),
            ("DELETED".into(), "watched".into())
        ]
    );
}

/// PartialObjectMetadata and PartialObjectMetadataList in Protobuf, as
/// client-go's metadata client asks for them first.
async fn metadata_views(c: &Cluster) {
    let client = c.client();
    let pods = format!("{}/api/v1/namespaces/pb/pods", c.url);
    let r = client
        .get(format!("{pods}/twin-json"))
        .header(
            "accept",
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], PROTOBUF);
    let u = unwrap(&r.bytes().await.unwrap());
    let tm = u.type_meta.unwrap();
    assert_eq!(tm.kind.as_deref(), Some("PartialObjectMetadata"));
    assert_eq!(tm.api_version.as_deref(), Some("meta.k8s.io/v1"));
    let pom = meta::PartialObjectMetadata::decode(u.raw.unwrap().as_slice()).unwrap();
    assert_eq!(pom.metadata.unwrap().name.as_deref(), Some("twin-json"));

    let r = client
        .get(&pods)
        .header(
            "accept",
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], PROTOBUF);
    let u = unwrap(&r.bytes().await.unwrap());
    assert_eq!(
        u.type_meta.unwrap().kind.as_deref(),
        Some("PartialObjectMetadataList")
    );
    let list = meta::PartialObjectMetadataList::decode(u.raw.unwrap().as_slice()).unwrap();
    assert!(list
        .metadata
        .and_then(|m| m.resource_version)
        .is_some_and(|rv| !rv.is_empty()));
    let names: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|i| i.metadata.and_then(|m| m.name))
        .collect();
    assert!(names.contains(&"twin-json".to_string()), "{names:?}");

    // meta.k8s.io/v1beta1's list numbers its fields the other way round
    // (items 1, metadata 2), and kube writes them in that order.
    let r = client
        .get(&pods)
        .header(
            "accept",
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers()["content-type"], PROTOBUF);
    let u = unwrap(&r.bytes().await.unwrap());
    let tm = u.type_meta.unwrap();
    assert_eq!(tm.kind.as_deref(), Some("PartialObjectMetadataList"));
    assert_eq!(tm.api_version.as_deref(), Some("meta.k8s.io/v1beta1"));
    let raw = u.raw.unwrap();
    assert_eq!(raw.first(), Some(&0x0a), "items (field 1) come first");
    let list = meta_v1beta1::PartialObjectMetadataList::decode(raw.as_slice()).unwrap();
    assert!(list
        .metadata
        .and_then(|m| m.resource_version)
        .is_some_and(|rv| !rv.is_empty()));
    let names: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|i| i.metadata.and_then(|m| m.name))
        .collect();
    assert!(names.contains(&"twin-json".to_string()), "{names:?}");
}

/// The discovery documents in Protobuf and YAML, as kube's
/// `WriteObjectNegotiated` writes them; anything else is kube's 406.
async fn discovery(c: &Cluster) {
    let client = c.client();
    let get = |path: &str, accept: &str| {
        client
            .get(format!("{}{path}", c.url))
            .header("accept", accept)
            .send()
    };
    let body = |path: &'static str| async move {
        let r = get(path, PROTOBUF).await.expect("get");
        assert_eq!(r.status().as_u16(), 200, "{path}");
        assert_eq!(r.headers()["content-type"], PROTOBUF, "{path}");
        unwrap(&r.bytes().await.expect("body"))
    };
    let u = body("/api").await;
    let tm = u.type_meta.clone().expect("typeMeta");
    assert_eq!(tm.kind.as_deref(), Some("APIVersions"));
    let versions = meta::APIVersions::decode(u.raw.expect("raw").as_slice()).expect("APIVersions");
    assert_eq!(versions.versions, ["v1"]);
    // kube's ExternalAddress: the advertise address and the served port.
    let port = c.url.rsplit(':').next().expect("port");
    let advertised = versions.server_address_by_client_cid_rs[0]
        .server_address
        .clone()
        .unwrap_or_default();
    assert!(
        advertised.ends_with(&format!(":{port}")),
        "{advertised} for {}",
        c.url
    );
    let u = body("/apis").await;
    assert_eq!(
        u.type_meta.clone().expect("typeMeta").kind.as_deref(),
        Some("APIGroupList")
    );
    let groups = meta::APIGroupList::decode(u.raw.expect("raw").as_slice()).expect("APIGroupList");
    assert!(groups
        .groups
        .iter()
        .any(|g| g.name.as_deref() == Some("apps")));
    let u = body("/apis/apps/v1").await;
    let list =
        meta::APIResourceList::decode(u.raw.expect("raw").as_slice()).expect("APIResourceList");
    assert_eq!(list.group_version.as_deref(), Some("apps/v1"));
    assert!(list
        .resources
        .iter()
        .any(|r| r.name.as_deref() == Some("deployments/scale")));
    let u = body("/apis/apps").await;
    let group = meta::APIGroup::decode(u.raw.expect("raw").as_slice()).expect("APIGroup");
    assert_eq!(group.name.as_deref(), Some("apps"));

    // YAML: the same document as the JSON one.
    for path in ["/api", "/apis", "/apis/apps", "/apis/apps/v1"] {
        let r = get(path, "application/yaml").await.expect("get");
        assert_eq!(r.status().as_u16(), 200, "{path}");
        assert_eq!(r.headers()["content-type"], "application/yaml", "{path}");
        let yaml: Value = serde_yaml::from_str(&r.text().await.expect("text")).expect("yaml");
        let json: Value = get(path, "application/json")
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        assert_eq!(yaml, json, "{path}");
        if path == "/api" {
            // go-restful's own 406 (its route's Produces), tested in e2e_http.
            continue;
        }
        let r = get(path, "text/html").await.expect("get");
        assert_eq!(r.status().as_u16(), 406, "{path}");
        let v: Value = r.json().await.expect("json");
        assert_eq!(
            v["message"],
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }
}

fn scenario(mode: Mode) {
    let c = Cluster::start(mode);
    generators(&c);
    block_on(http(&c));
    block_on(metadata_views(&c));
    block_on(discovery(&c));
}

#[test]
fn protobuf_embedded() {
    scenario(Mode::Embedded);
}

#[test]
fn protobuf_distributed() {
    scenario(Mode::Distributed);
}
