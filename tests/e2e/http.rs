//! Raw HTTPS checks: status codes, Status bodies, discovery, health, limits.

mod support;

use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

struct Resp {
    code: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}

async fn send(rb: reqwest::RequestBuilder) -> Resp {
    let r = rb.send().await.expect("request");
    Resp {
        code: r.status().as_u16(),
        headers: r.headers().clone(),
        body: r.text().await.expect("body"),
    }
}

fn status_of(r: &Resp) -> (u16, String, String) {
    let v = r.json();
    assert_eq!(v["kind"], "Status", "{}", r.body);
    assert_eq!(v["code"], r.code, "{}", r.body);
    (
        r.code,
        v["reason"].as_str().unwrap_or("").to_string(),
        v["message"].as_str().unwrap_or("").to_string(),
    )
}

async fn checks(c: &Cluster) {
    let http = c.client();
    let u = |p: &str| format!("{}{}", c.url, p);
    let cms = u("/api/v1/namespaces/default/configmaps");

    // Anonymous requests are `system:anonymous`, which RBAC allows only
    // the public endpoints (kube's 403); a wrong token is 401.
    let r = send(c.anonymous_client().get(&cms)).await;
    assert_eq!(
        status_of(&r),
        (
            403,
            "Forbidden".into(),
            r#"configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default""#.into()
        )
    );
    let r = send(http.get(&cms).bearer_auth("wrong")).await;
    assert_eq!(r.code, 401);
    let r = send(c.anonymous_client().get(u("/version"))).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["major"], "1");
    assert_eq!(r.json()["minor"], "34");

    // Create: 201, then AlreadyExists, NotFound, Conflict.
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}});
    let r = send(http.post(&cms).json(&body)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let created = r.json();
    assert_eq!(created["metadata"]["namespace"], "default");
    let r = send(http.post(&cms).json(&body)).await;
    assert_eq!(
        status_of(&r),
        (
            409,
            "AlreadyExists".into(),
            r#"configmaps "c" already exists"#.into()
        )
    );
    assert_eq!(
        r.json()["details"],
        json!({"name": "c", "kind": "configmaps"})
    );
    let r = send(http.get(u("/api/v1/namespaces/default/configmaps/missing"))).await;
    assert_eq!(
        status_of(&r),
        (
            404,
            "NotFound".into(),
            r#"configmaps "missing" not found"#.into()
        )
    );
    let r = send(http.get(u("/apis/apps/v1/namespaces/default/deployments/missing"))).await;
    assert_eq!(status_of(&r).2, r#"deployments.apps "missing" not found"#);

    let mut stale = created.clone();
    stale["data"]["k"] = json!("v2");
    let r = send(http.put(format!("{cms}/c")).json(&stale)).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let r = send(http.put(format!("{cms}/c")).json(&stale)).await;
    assert_eq!(
        status_of(&r),
        (409, "Conflict".into(), r#"Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again"#.into())
    );
    // Name mismatch on PUT.
    let r = send(http.put(format!("{cms}/other")).json(&body)).await;
    assert_eq!(
        status_of(&r),
        (
            400,
            "BadRequest".into(),
            "the name of the object (c) does not match the name on the URL (other)".into()
        )
    );

    // Strict / Warn field validation.
    let unknown = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "u"}, "spec": {"foo": 1}});
    let r = send(
        http.post(format!("{cms}?fieldValidation=Strict"))
            .json(&unknown),
    )
    .await;
    let (code, reason, msg) = status_of(&r);
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    assert!(
        msg.ends_with(r#"strict decoding error: unknown field "spec""#),
        "{msg}"
    );
    let r = send(http.post(&cms).json(&unknown)).await;
    assert_eq!(r.code, 201);
    assert_eq!(
        r.header("warning").as_deref(),
        Some(r#"299 - "unknown field \"spec\"""#)
    );
    let dup = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","name":"d"}}"#;
    let r = send(
        http.post(format!("{cms}?fieldValidation=Strict"))
            .header("content-type", "application/json")
            .body(dup),
    )
    .await;
    assert!(
        status_of(&r)
            .2
            .contains(r#"duplicate field "metadata.name""#),
        "{}",
        r.body
    );
    let r = send(
        http.post(format!("{cms}?fieldValidation=Bogus"))
            .json(&body),
    )
    .await;
    assert_eq!(status_of(&r), (422, "Invalid".into(), r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn""#.into()));

    // Wrong types are always 400; malformed JSON is 400.
    let bad = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}, "data": {"k": 5}});
    let r = send(
        http.post(format!("{cms}?fieldValidation=Ignore"))
            .json(&bad),
    )
    .await;
    let (code, reason, msg) = status_of(&r);
    assert_eq!((code, reason.as_str()), (400, "BadRequest"), "{msg}");
    assert!(
        msg.starts_with(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap"#),
        "{msg}"
    );
    let r = send(
        http.post(&cms)
            .header("content-type", "application/json")
            .body("{not json"),
    )
    .await;
    assert_eq!(status_of(&r).0, 400);

    // Bad name → 422 Invalid with causes.
    let r = send(
        http.post(&cms)
            .json(&json!({"metadata": {"name": "Foo_Bar"}})),
    )
    .await;
    let (code, reason, msg) = status_of(&r);
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert!(msg.starts_with(r#"ConfigMap "Foo_Bar" is invalid: metadata.name: Invalid value: "Foo_Bar": a lowercase RFC 1123 subdomain"#), "{msg}");
    assert_eq!(
        r.json()["details"]["causes"][0]["reason"],
        "FieldValueInvalid"
    );
    assert_eq!(r.json()["details"]["causes"][0]["field"], "metadata.name");

    // Missing namespace → 404 namespaces "x" not found.
    let r = send(
        http.post(u("/api/v1/namespaces/nope/configmaps"))
            .json(&body),
    )
    .await;
    assert_eq!(
        status_of(&r),
        (
            404,
            "NotFound".into(),
            r#"namespaces "nope" not found"#.into()
        )
    );
    // Immortal namespaces.
    let r = send(http.delete(u("/api/v1/namespaces/kube-system"))).await;
    assert_eq!(
        status_of(&r),
        (
            403,
            "Forbidden".into(),
            r#"namespaces "kube-system" is forbidden: this namespace may not be deleted"#.into()
        )
    );

    // Dry run persists nothing.
    let r = send(
        http.post(format!("{cms}?dryRun=All"))
            .json(&json!({"metadata": {"name": "dry"}})),
    )
    .await;
    assert_eq!(r.code, 201);
    let r = send(http.get(format!("{cms}/dry"))).await;
    assert_eq!(r.code, 404);

    // generateName.
    let r = send(
        http.post(&cms)
            .json(&json!({"metadata": {"generateName": "gen-"}})),
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let name = r.json()["metadata"]["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // Limits, unknown resources, methods, media types.
    let big = "x".repeat(10 * 1024 * 1024);
    let r = send(
        http.post(&cms)
            .header("content-type", "application/json")
            .body(big),
    )
    .await;
    assert_eq!(
        status_of(&r),
        (
            413,
            "RequestEntityTooLarge".into(),
            "Request entity too large: limit is 3145728".into()
        )
    );
    let r = send(http.get(u("/api/v1/namespaces/default/foos"))).await;
    assert_eq!(status_of(&r).0, 404);
    let r = send(http.post(format!("{cms}/c")).json(&body)).await;
    assert_eq!(
        status_of(&r),
        (
            405,
            "MethodNotAllowed".into(),
            "the server does not allow this method on the requested resource".into()
        )
    );
    let r = send(
        http.post(&cms)
            .header("content-type", "application/cbor")
            .body("x"),
    )
    .await;
    // Not CBOR (tests/e2e/cbor.rs has the rest).
    assert_eq!(status_of(&r).0, 400);
    let r = send(
        http.patch(format!("{cms}/c"))
            .header("content-type", "application/x-bogus-patch+json")
            .body("{}"),
    )
    .await;
    assert_eq!(status_of(&r).1, "UnsupportedMediaType");
    // Protobuf and CBOR are served (tests/e2e/protobuf.rs, cbor.rs); a
    // Table in CBOR is not.
    let r = send(
        http.get(&cms)
            .header("accept", "application/cbor;as=Table;g=meta.k8s.io;v=v1"),
    )
    .await;
    assert_eq!(status_of(&r).0, 406);
    let r = send(http.get(u("/api/v1/namespaces/default/bindings?watch=true"))).await;
    assert_eq!(
        status_of(&r),
        (
            405,
            "MethodNotAllowed".into(),
            r#"watch is not supported on resources of kind "bindings""#.into()
        )
    );

    // JSON patch test failure → 422; merge patch.
    let r = send(
        http.patch(format!("{cms}/c"))
            .header("content-type", "application/json-patch+json")
            .body(r#"[{"op":"test","path":"/data/k","value":"nope"}]"#),
    )
    .await;
    assert_eq!(status_of(&r).0, 422);
    let r = send(
        http.patch(format!("{cms}/c"))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"data":{"n":"1"}}"#),
    )
    .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["data"]["n"], "1");

    // Lists carry the snapshot revision.
    let r = send(http.get(&cms)).await;
    let list = r.json();
    assert_eq!(list["kind"], "ConfigMapList");
    let list_rv: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    for item in list["items"].as_array().unwrap() {
        let rv: u64 = item["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(rv <= list_rv);
    }

    // Paging: every page reports the first page's revision; remainingItemCount
    // without selectors; an exact older revision is served exactly.
    let ns = u("/api/v1/namespaces");
    send(http.post(&ns).json(&json!({"metadata": {"name": "pages"}}))).await;
    let pcm = u("/api/v1/namespaces/pages/configmaps");
    // The root CA publisher gives every namespace `kube-root-ca.crt`:
    // wait for it, so that it comes before the objects written here.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while send(http.get(format!("{pcm}/kube-root-ca.crt"))).await.code != 200 {
        assert!(std::time::Instant::now() < deadline, "no kube-root-ca.crt");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let mut rvs = Vec::new();
    for i in 0..5 {
        let r = send(
            http.post(&pcm)
                .json(&json!({"metadata": {"name": format!("p{i}")}})),
        )
        .await;
        rvs.push(
            r.json()["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let first = send(http.get(format!("{pcm}?limit=2"))).await.json();
    let snapshot = first["metadata"]["resourceVersion"].clone();
    assert_eq!(first["metadata"]["remainingItemCount"], 4);
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    // A write between pages is not seen by later pages of the snapshot.
    send(http.post(&pcm).json(&json!({"metadata": {"name": "p9"}}))).await;
    let second = send(http.get(format!("{pcm}?limit=2&continue={token}")))
        .await
        .json();
    assert_eq!(second["metadata"]["resourceVersion"], snapshot);
    let token2 = second["metadata"]["continue"].as_str().unwrap().to_string();
    let third = send(http.get(format!("{pcm}?limit=2&continue={token2}")))
        .await
        .json();
    assert_eq!(third["metadata"]["resourceVersion"], snapshot);
    assert!(third["metadata"].get("continue").is_none());
    assert!(third["metadata"].get("remainingItemCount").is_none());
    let names: Vec<&str> = [&first, &second, &third]
        .iter()
        .flat_map(|p| {
            p["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap())
        })
        .collect();
    assert_eq!(names, ["kube-root-ca.crt", "p0", "p1", "p2", "p3", "p4"]);
    let sel = send(http.get(format!("{pcm}?limit=1&labelSelector=!nope")))
        .await
        .json();
    assert!(sel["metadata"].get("remainingItemCount").is_none());
    assert!(sel["metadata"]["continue"].is_string());
    let exact = send(http.get(format!(
        "{pcm}?resourceVersion={}&resourceVersionMatch=Exact",
        rvs[1]
    )))
    .await
    .json();
    assert_eq!(exact["metadata"]["resourceVersion"], rvs[1].as_str());
    assert_eq!(exact["items"].as_array().unwrap().len(), 3);
    let r = send(http.get(format!("{pcm}?continue={token}&resourceVersion=1"))).await;
    assert_eq!(
        status_of(&r),
        (
            400,
            "BadRequest".into(),
            "specifying resource version is not allowed when using continue".into()
        )
    );
    let r = send(http.get(format!("{pcm}?resourceVersionMatch=NotOlderThan"))).await;
    assert_eq!(
        status_of(&r).2,
        r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"#
    );
    let r = send(http.get(format!("{pcm}?resourceVersion=999999999"))).await;
    let (code, reason, msg) = status_of(&r);
    assert_eq!((code, reason.as_str()), (504, "Timeout"));
    assert!(
        msg.starts_with("Timeout: Too large resource version: 999999999, current: "),
        "{msg}"
    );
    assert_eq!(r.header("retry-after").as_deref(), Some("1"));
    assert_eq!(
        r.json()["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    // get and watch honour "not older than" the same way.
    let r = send(http.get(format!("{pcm}/p0?resourceVersion=999999999"))).await;
    assert_eq!(status_of(&r).1, "Timeout");
    let r = send(http.get(format!("{pcm}?watch=true&resourceVersion=999999999"))).await;
    assert_eq!(status_of(&r).1, "Timeout");
    let r = send(http.get(format!("{pcm}/p0?resourceVersion=0"))).await;
    assert_eq!(r.code, 200);
    let r = send(http.get(format!("{pcm}/p0?resourceVersion={}", rvs[0]))).await;
    assert_eq!(r.code, 200);

    // Status subresource: main writes ignore status, /status writes only status.
    let deps = u("/apis/apps/v1/namespaces/default/deployments");
    let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
        "status": {"replicas": 9}});
    let r = send(http.post(&deps).json(&dep)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert!(r.json()["status"].get("replicas").is_none(), "{}", r.body);
    let r = send(
        http.patch(format!("{deps}/d/status"))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"status":{"replicas":4},"spec":{"replicas":7}}"#),
    )
    .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["status"]["replicas"], 4);
    assert_eq!(r.json()["spec"]["replicas"], 1);
    let r = send(http.get(format!("{deps}/d/scale"))).await;
    assert_eq!(r.json()["kind"], "Scale");
    assert_eq!(r.json()["apiVersion"], "autoscaling/v1");
    assert_eq!(r.json()["status"]["replicas"], 4);
    assert_eq!(r.json()["status"]["selector"], "a=b");

    // Delete returns Status for configmaps and the object for pods.
    let r = send(http.delete(format!("{cms}/c"))).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["status"], "Success");
    assert_eq!(r.json()["details"]["name"], "c");
    // StatusDetails' group is omitempty: no `"group":""` for core.
    assert!(r.json()["details"].get("group").is_none(), "{}", r.body);
    // ServiceAccounts are among kube's ReturnDeletedObject registries.
    let sas = u("/api/v1/namespaces/default/serviceaccounts");
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "gone"}});
    let r = send(http.post(&sas).json(&sa)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let r = send(http.delete(format!("{sas}/gone"))).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.json()["kind"], "ServiceAccount", "{}", r.body);
    assert_eq!(r.json()["metadata"]["name"], "gone");

    // Discovery content types and ETags.
    let agg =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let r = send(http.get(u("/apis")).header("accept", agg)).await;
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );
    let etag = r.header("etag").expect("etag");
    let r = send(
        http.get(u("/apis"))
            .header("accept", agg)
            .header("if-none-match", &etag),
    )
    .await;
    assert_eq!(r.code, 304);
    // apidiscovery.k8s.io/v2beta1 is not served in 1.34
    // (AggregatedDiscoveryRemoveBetaType): alone it is 406, beside v2 the
    // answer is v2.
    let beta = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
    let r = send(http.get(u("/api")).header("accept", beta)).await;
    assert_eq!(r.code, 406, "{}", r.body);
    assert_eq!(r.json()["reason"], "NotAcceptable");
    let r = send(http.get(u("/api")).header(
        "accept",
        format!("{beta},application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
    ))
    .await;
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );
    assert_eq!(r.json()["items"][0]["metadata"]["name"], "");
    let r = send(http.get(u("/api")).header("accept", "application/json")).await;
    assert_eq!(r.json()["kind"], "APIVersions");

    // Health.
    let r = send(c.anonymous_client().get(u("/readyz"))).await;
    assert_eq!((r.code, r.body.as_str()), (200, "ok"));
    let r = send(http.get(u("/readyz?verbose"))).await;
    assert!(
        r.body.contains("[+]store ok\n") && r.body.ends_with("readyz check passed\n"),
        "{}",
        r.body
    );
    let r = send(http.get(u("/readyz?verbose&exclude=store"))).await;
    assert!(r.body.contains("[+]store excluded: ok\n"), "{}", r.body);
    let r = send(http.get(u("/livez/ping"))).await;
    assert_eq!((r.code, r.body.as_str()), (200, "ok"));
}

/// Garbage on every write path: always a 4xx `Status`, never a 500 or a
/// dropped connection, and the stored object is untouched.
async fn garbage(c: &Cluster) {
    let http = c.client();
    let base = format!("{}/apis/apps/v1/namespaces/default/deployments", c.url);
    let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "g"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    let r = send(http.post(&base).json(&dep)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let before = send(http.get(format!("{base}/g"))).await.body;
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let bodies: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"null".to_vec(),
        b"[]".to_vec(),
        b"\"str\"".to_vec(),
        b"{".to_vec(),
        b"1e999".to_vec(),
        vec![0xff, 0xfe, 0x00, 0x01],
        deep.into_bytes(),
        br#"{"metadata": 5}"#.to_vec(),
        br#"{"metadata": {"name": ["g"]}}"#.to_vec(),
        br#"{"metadata": {"name": "g", "labels": "x"}}"#.to_vec(),
        br#"{"metadata": {"name": "g"}, "spec": {"replicas": "three"}}"#.to_vec(),
        br#"{"metadata": {"name": "g"}, "spec": {"template": {"spec": {"containers": {"name": "c"}}}}}"#.to_vec(),
        br#"[{"op": "replace", "path": "/spec/replicas", "value": "x"}]"#.to_vec(),
        br#"[{"op": "move", "from": "/nope", "path": "/x"}]"#.to_vec(),
    ];
    let targets: Vec<(reqwest::Method, String, &str)> = vec![
        (reqwest::Method::POST, base.clone(), "application/json"),
        (
            reqwest::Method::PUT,
            format!("{base}/g"),
            "application/json",
        ),
        (
            reqwest::Method::PUT,
            format!("{base}/g"),
            "application/yaml",
        ),
        (
            reqwest::Method::PATCH,
            format!("{base}/g"),
            "application/json-patch+json",
        ),
        (
            reqwest::Method::PATCH,
            format!("{base}/g"),
            "application/merge-patch+json",
        ),
        (
            reqwest::Method::PUT,
            format!("{base}/g/status"),
            "application/json",
        ),
        (
            reqwest::Method::PUT,
            format!("{base}/g/scale"),
            "application/json",
        ),
        (
            reqwest::Method::PATCH,
            format!("{base}/g/scale"),
            "application/merge-patch+json",
        ),
        (
            reqwest::Method::POST,
            format!("{}/api/v1/namespaces", c.url),
            "application/vnd.kubernetes.protobuf",
        ),
        (
            reqwest::Method::DELETE,
            format!("{base}/nonexistent"),
            "application/json",
        ),
    ];
    for (method, url, ct) in &targets {
        for body in &bodies {
            let r = send(
                http.request(method.clone(), url)
                    .header("content-type", *ct)
                    .body(body.clone()),
            )
            .await;
            if r.code < 300 {
                continue; // e.g. a merge patch of `{}` shape that is valid
            }
            assert!(
                (400..500).contains(&r.code),
                "{method} {url} ({ct}) with {:?} → {}: {}",
                String::from_utf8_lossy(&body[..body.len().min(60)]),
                r.code,
                r.body
            );
            let v = r.json();
            assert_eq!(v["kind"], "Status", "{}", r.body);
        }
    }
    // A Scale with a mistyped field is refused as a whole.
    let r = send(
        http.put(format!("{base}/g/scale"))
            .json(&json!({"metadata": {"name": "g", "labels": "x"}, "spec": {"replicas": 5}})),
    )
    .await;
    assert_eq!(status_of(&r).0, 400, "{}", r.body);
    let after = send(http.get(format!("{base}/g"))).await.body;
    let (mut b, mut a): (Value, Value) = (
        serde_json::from_str(&before).unwrap(),
        serde_json::from_str(&after).unwrap(),
    );
    // A Scale PUT without spec.replicas legitimately scales to 0 (kube's
    // ScaleSpec.replicas is not a pointer); everything else must be intact.
    assert_ne!(a["spec"]["replicas"], 5);
    b["spec"].as_object_mut().unwrap().remove("replicas");
    a["spec"].as_object_mut().unwrap().remove("replicas");
    assert_eq!(b["spec"], a["spec"], "garbage changed the stored spec");
}

#[test]
fn garbage_is_rejected_cleanly() {
    let c = Cluster::start(Mode::Embedded);
    block_on(garbage(&c));
}

#[test]
fn http_embedded() {
    let c = Cluster::start(Mode::Embedded);
    block_on(checks(&c));
}

#[test]
fn http_distributed() {
    let c = Cluster::start(Mode::Distributed);
    block_on(checks(&c));
}

/// kube's pretty-printed JSON: `?pretty=true`/`pretty=1`, an Accept
/// `pretty=1`, or a curl/Wget/browser User-Agent (unless `pretty=false`).
async fn pretty(c: &Cluster) {
    let http = c.client();
    let ns = format!("{}/api/v1/namespaces/default", c.url);
    let compact = send(http.get(&ns)).await;
    assert_eq!(compact.code, 200);
    assert!(
        compact.body.starts_with("{\"kind\":\"Namespace\","),
        "{}",
        compact.body
    );
    assert!(compact.body.ends_with("}\n"), "{:?}", compact.body);
    for (query, agent, accept) in [
        ("?pretty=true", "", "application/json"),
        ("?pretty=1", "", "application/json"),
        ("", "curl/8.5.0", "*/*"),
        ("", "Wget/1.21.4", "*/*"),
        ("", "Mozilla/5.0 (X11; Linux x86_64)", "application/json"),
        ("", "", "application/json;pretty=1"),
    ] {
        let mut rb = http.get(format!("{ns}{query}")).header("Accept", accept);
        if !agent.is_empty() {
            rb = rb.header("User-Agent", agent);
        }
        let r = send(rb).await;
        assert_eq!(r.code, 200);
        assert!(
            r.body.starts_with("{\n  \"kind\": \"Namespace\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"default\","),
            "{query} {agent} {accept}: {}",
            r.body
        );
        assert!(r.body.ends_with("\n}"), "{:?}", r.body);
        assert_eq!(r.json(), compact.json());
    }
    // `pretty=false` wins over a curl User-Agent.
    let r = send(
        http.get(format!("{ns}?pretty=false"))
            .header("User-Agent", "curl/8.5.0"),
    )
    .await;
    assert!(r.body.starts_with("{\"kind\":\"Namespace\","), "{}", r.body);
    // A Status answer is indented too.
    let r = send(http.get(format!("{ns}/configmaps/missing?pretty=true"))).await;
    assert_eq!(r.code, 404);
    assert!(
        r.body.starts_with("{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\","),
        "{}",
        r.body
    );
}

/// A create carrying a resourceVersion: kube's storage refuses it with a
/// reasonless `500`; `resourceVersion: "0"` and a dry run are fine.
async fn create_with_resource_version(c: &Cluster) {
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    let cm = |name: &str, rv: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "resourceVersion": rv}})
    };
    let r = send(http.post(&cms).json(&cm("rv-set", "5"))).await;
    assert_eq!(r.code, 500, "{}", r.body);
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "resourceVersion should not be set on objects to be created",
               "code": 500})
    );
    let r = send(
        http.post(format!("{cms}?dryRun=All"))
            .json(&cm("rv-set", "5")),
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let r = send(http.post(&cms).json(&cm("rv-zero", "0"))).await;
    assert_eq!(r.code, 201, "{}", r.body);
}

#[test]
fn pretty_printing_and_create_resource_version() {
    let c = Cluster::start(Mode::Embedded);
    block_on(pretty(&c));
    block_on(create_with_resource_version(&c));
}

/// kube's words for bodies that do not parse (Go's `encoding/json`, kube's
/// `summarizeData`), label selectors (`labels.Parse`), a bad list
/// `resourceVersion`, and its two 404s (go-restful's Status for paths of
/// the `/api` and built-in group web services, Go's plain
/// `404 page not found` past them).
async fn kube_words(c: &Cluster) {
    let http = c.client();
    let cms = format!("{}/api/v1/namespaces/default/configmaps", c.url);
    let unrecognized = "the object provided is unrecognized (must be of type ConfigMap): ";
    let bodies: [(&str, &str); 6] = [
        ("", "couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"),
        (r#"{"apiVersion":"v1","kind":"ConfigMap""#, r#"couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Con ...)"#),
        ("x", "couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value (78)"),
        (r#"{"metadata":{"name":"a"}} x"#, r#"couldn't get version/kind; json parse error: invalid character 'x' after top-level value ({"metadata":{"name":"a"}} x)"#),
        ("[]", r#"couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b5d)"#),
        (r#"{"kind":5}"#, r#"couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"kind":5})"#),
    ];
    for (body, want) in bodies {
        let r = send(
            http.post(&cms)
                .header("content-type", "application/json")
                .body(body),
        )
        .await;
        assert_eq!(
            status_of(&r),
            (400, "BadRequest".into(), format!("{unrecognized}{want}")),
            "body {body:?}"
        );
    }
    // A body whose type meta reads fails on its typed fields in Go's words.
    let r = send(http.post(&cms).json(
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": "x"}}),
    ))
    .await;
    assert_eq!(status_of(&r), (400, "BadRequest".into(), r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string"#.into()));

    let selectors = [
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("-a", "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ];
    for (sel, want) in selectors {
        let r = send(http.get(&cms).query(&[("labelSelector", sel)])).await;
        assert_eq!(
            status_of(&r),
            (400, "BadRequest".into(), want.into()),
            "labelSelector {sel:?}"
        );
    }
    // gt/lt select on integer labels.
    for (name, n) in [("small", "3"), ("big", "30")] {
        let cm = json!({"metadata": {"name": name, "labels": {"n": n}}});
        assert_eq!(send(http.post(&cms).json(&cm)).await.code, 201);
    }
    let r = send(http.get(&cms).query(&[("labelSelector", "n>10")])).await;
    let names: Vec<String> = r.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(names, ["big"], "{}", r.body);
    let r = send(http.get(&cms).query(&[("resourceVersion", "abc")])).await;
    assert_eq!(status_of(&r), (400, "BadRequest".into(), r#"invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#.into()));

    for path in [
        "/apis/nope",
        "/apis/nope/v1",
        "/apis/nope/v1/things",
        "/foo",
        "/apis/nope/v1/namespaces/default/things/x",
    ] {
        let r = send(http.get(format!("{}{path}", c.url))).await;
        assert_eq!(
            (r.code, r.body.as_str()),
            (404, "404 page not found\n"),
            "{path}"
        );
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("text/plain; charset=utf-8"),
            "{path}"
        );
        assert_eq!(
            r.header("x-content-type-options").as_deref(),
            Some("nosniff"),
            "{path}"
        );
    }
    for path in [
        "/apis/apps/v9",
        "/api/v2",
        "/apis/apps/v1/nopes",
        "/api/v1/nopes",
    ] {
        let r = send(http.get(format!("{}{path}", c.url))).await;
        assert_eq!(
            status_of(&r),
            (
                404,
                "NotFound".into(),
                "the server could not find the requested resource".into()
            ),
            "{path}"
        );
    }
}

#[test]
fn kube_words_for_bodies_selectors_and_paths() {
    let c = Cluster::start(Mode::Embedded);
    block_on(kube_words(&c));
}

/// kube's `406` bodies on non-resource paths for an Accept nothing there
/// produces: go-restful's refusal as an indented Status on `/version` and
/// `/api` (negotiated when the Accept names a served type), the discovery
/// handler's own indented Status on `/apis`, kube-openapi's empty body on
/// `/openapi/v2` and `/openapi/v3/...`; health checks ignore Accept.
#[test]
fn not_acceptable_on_non_resource_paths() {
    let c = Cluster::start(Mode::Embedded);
    block_on(async {
        let http = c.client();
        let get = |path: &str, accept: &str| {
            send(
                http.get(format!("{}{path}", c.url))
                    .header("accept", accept.to_string()),
            )
        };
        let restful = |available: &str| {
            format!(
                "{{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {{}},\n  \"status\": \"Failure\",\n  \"message\": \"406: Not Acceptable\\n\\nAvailable representations: {available}\",\n  \"reason\": \"NotAcceptable\",\n  \"details\": {{}},\n  \"code\": 406\n}}"
            )
        };
        let r = get("/version", "text/html").await;
        assert_eq!(r.code, 406);
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/json")
        );
        assert_eq!(r.body, restful("application/json"));
        // `application/*` is not go-restful's wildcard, but kube's error
        // negotiation writes the Status as JSON for it.
        let r = get("/version", "application/*").await;
        assert_eq!(r.code, 406);
        assert_eq!(
            r.json()["message"],
            "406: Not Acceptable\n\nAvailable representations: application/json"
        );
        assert!(r.body.ends_with("}\n"), "{}", r.body);
        let r = get("/version", "application/yaml").await;
        assert_eq!(r.code, 406);
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/yaml")
        );
        assert!(r.body.contains("reason: NotAcceptable"), "{}", r.body);

        let r = get("/api", "text/html").await;
        assert_eq!(r.code, 406);
        assert_eq!(
            r.body,
            restful("application/json, application/yaml, application/vnd.kubernetes.protobuf")
        );

        let r = get("/apis", "text/html").await;
        assert_eq!(r.code, 406);
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/json")
        );
        assert_eq!(
            r.body,
            "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf\",\n  \"reason\": \"NotAcceptable\",\n  \"code\": 406\n}"
        );

        for path in ["/openapi/v2", "/openapi/v3/api/v1"] {
            let r = get(path, "text/html").await;
            assert_eq!((r.code, r.body.as_str()), (406, ""), "{path}");
            assert_eq!(r.header("content-type"), None, "{path}");
            assert_eq!(r.header("vary").as_deref(), Some("Accept"), "{path}");
            assert_eq!(get(path, "application/json").await.code, 200, "{path}");
        }

        for path in ["/healthz", "/livez", "/readyz"] {
            let r = get(path, "text/html").await;
            assert_eq!((r.code, r.body.as_str()), (200, "ok"), "{path}");
        }
    });
}
