//! Force deletion of corrupt objects (KEP-3926): a ConfigMap whose stored
//! value is not JSON answers kube's corrupt-object errors on get, list and
//! delete; with `--feature-gates=AllowUnsafeMalformedObjectDeletion=true`,
//! `ignoreStoreReadErrorWithClusterBreakingPotential` deletes it for a user
//! who may also `unsafe-delete-ignore-read-errors`. The value is corrupted
//! by writing garbage to its key in the server's sled store while the
//! server is stopped.

mod support;

use std::path::Path;

use keelson_kv::{Compare, RevisionedKv, TxnOp, TxnRequest};
use keelson_kv_sled::SledKv;
use serde_json::{json, Value};
use support::{block_on, Cluster, Mode};

const GATE: &str = "--feature-gates=AllowUnsafeMalformedObjectDeletion=true";
const CMS: &str = "/api/v1/namespaces/default/configmaps";
const OPTION: &str = "ignoreStoreReadErrorWithClusterBreakingPotential";

/// `(status, body)` of a request.
async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let r = req.send().await.expect("request");
    let code = r.status().as_u16();
    let text = r.text().await.expect("body");
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn bob(c: &Cluster) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(&c.ca_pem).expect("ca");
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        "Bearer bob-token".parse().expect("header"),
    );
    reqwest::Client::builder()
        .add_root_certificate(ca)
        .default_headers(headers)
        .build()
        .expect("client")
}

/// Overwrite the stored value of ConfigMap `default/name` with bytes that
/// are not JSON, through the sled store the stopped server left behind.
fn corrupt(data: &Path, name: &str) {
    block_on(async {
        let kv = SledKv::open(&data.join("store"), 64 << 20)
            .await
            .expect("open sled");
        kv.txn(TxnRequest {
            key: format!("core/configmaps/default/{name}").into_bytes(),
            compare: Compare::Always,
            on_success: TxnOp::Put(b"\x00not json at all".to_vec()),
        })
        .await
        .expect("put garbage");
    });
}

fn cause_fields(status: &Value) -> Vec<String> {
    status["details"]["causes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["field"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn corrupt_objects_are_reported_and_force_deleted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "bob-token,bob,1002\n").expect("tokens");
    let tokens = tokens.to_str().expect("utf-8 path").to_string();
    let flags_off = ["--token-auth-file", tokens.as_str()];
    let flags_on = ["--token-auth-file", tokens.as_str(), GATE];

    // Objects and bob's Role (he may delete ConfigMaps, not unsafely).
    let mut c = Cluster::start_in_with(Mode::Embedded, &data, &flags_off);
    for name in ["broken", "healthy"] {
        c.ok(&["create", "configmap", name, "--from-literal=k=v"]);
    }
    c.ok(&[
        "create",
        "role",
        "cm-deleter",
        "--verb=get,list,delete",
        "--resource=configmaps",
    ]);
    c.ok(&[
        "create",
        "rolebinding",
        "bob-cm-deleter",
        "--role=cm-deleter",
        "--user=bob",
    ]);
    c.stop();
    corrupt(&data, "broken");

    // Gate off: the option is dropped, so the delete takes the normal path
    // and fails on the corrupt value as a get does.
    let mut c = Cluster::start_in_with(Mode::Embedded, &data, &flags_off);
    block_on(async {
        let (code, get) = send(c.client().get(format!("{}{CMS}/broken", c.url))).await;
        assert_eq!(code, 500, "{get}");
        let msg = get["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains("StorageError: corrupt object")
                && msg.contains("Key: /core/configmaps/default/broken"),
            "{get}"
        );
        let (code, del) = send(
            c.client()
                .delete(format!("{}{CMS}/broken?{OPTION}=true", c.url)),
        )
        .await;
        assert_eq!(code, 500, "{del}");
        assert!(
            del["message"]
                .as_str()
                .unwrap_or_default()
                .contains("corrupt object"),
            "{del}"
        );
    });
    c.stop();

    // Gate on.
    let c = Cluster::start_in_with(Mode::Embedded, &data, &flags_on);
    block_on(async {
        let admin = c.client();
        let (code, list) = send(admin.get(format!("{}{CMS}", c.url))).await;
        assert_eq!(code, 500, "{list}");
        assert_eq!(list["reason"], "StorageReadError", "{list}");
        assert_eq!(
            list["message"],
            "failed to read one or more configmaps from the storage"
        );
        assert_eq!(list["details"]["name"], "list");
        assert_eq!(list["details"]["kind"], "configmaps");
        assert_eq!(
            cause_fields(&list),
            vec!["/core/configmaps/default/broken".to_string()]
        );
        assert_eq!(
            list["details"]["causes"][0]["reason"],
            "UnexpectedServerResponse"
        );

        // Without the option: the normal path fails on the value.
        let (code, del) = send(admin.delete(format!("{}{CMS}/broken", c.url))).await;
        assert_eq!(code, 500, "{del}");

        // The option goes alone.
        let (code, del) =
            send(admin.delete(format!("{}{CMS}/broken?{OPTION}=true&dryRun=All", c.url))).await;
        assert_eq!(code, 422, "{del}");
        assert_eq!(
            del["message"],
            "DeleteOptions.meta.k8s.io \"\" is invalid: \
             ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: \
             cannot be set together with .dryRun"
        );

        // A readable object is refused.
        let (code, del) = send(
            admin
                .delete(format!("{}{CMS}/healthy", c.url))
                .json(&json!({"kind": "DeleteOptions", "apiVersion": "v1", OPTION: true})),
        )
        .await;
        assert_eq!(code, 422, "{del}");
        assert_eq!(
            del["message"],
            "configmaps \"healthy\" is invalid: \
             ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: \
             is exclusively used to delete corrupt object(s), try again by removing this option"
        );

        // Not with deletecollection.
        let (code, del) = send(admin.delete(format!("{}{CMS}?{OPTION}=true", c.url))).await;
        assert_eq!(code, 422, "{del}");
        assert!(
            del["message"].as_str().unwrap_or_default().ends_with(
                "is not allowed with DELETECOLLECTION, try again after removing the option"
            ),
            "{del}"
        );

        // bob may delete, but not unsafely.
        let (code, del) =
            send(bob(&c).delete(format!("{}{CMS}/broken?{OPTION}=true", c.url))).await;
        assert_eq!(code, 403, "{del}");
        assert_eq!(del["reason"], "Forbidden");
        assert_eq!(
            del["message"],
            "configmaps \"broken\" is forbidden: not permitted to do \
             \"unsafe-delete-ignore-read-errors\", reason: "
        );

        // The admin may.
        let (code, del) = send(admin.delete(format!("{}{CMS}/broken?{OPTION}=true", c.url))).await;
        assert_eq!(code, 200, "{del}");
        assert_eq!(
            del,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                   "details": {"name": "broken", "kind": "ConfigMap"}, "code": 200})
        );

        let (code, get) = send(admin.get(format!("{}{CMS}/broken", c.url))).await;
        assert_eq!(code, 404, "{get}");
    });
    // The list is whole again.
    let names = c.ok(&["get", "configmaps", "-o", "name"]);
    assert!(names.contains("configmap/healthy"), "{names}");
    assert!(!names.contains("configmap/broken"), "{names}");
}
