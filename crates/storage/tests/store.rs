//! StoreApi rules, against real sled files.

mod common;

use common::*;
use keelson_api::{CreateOptions, DeleteOptions, DeleteOutcome, StoreApi, UpdateOptions};
use keelson_apimachinery::{GroupResource, ObjectKey};
use keelson_kv::RangeRequest;
use serde_json::json;

#[tokio::test]
async fn create_sets_system_fields_and_get_returns_them() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let mut body = cm("a", "1");
    body["metadata"]["deletionTimestamp"] = json!("2020-01-01T00:00:00Z");
    body["metadata"]["deletionGracePeriodSeconds"] = json!(5);
    let created = s
        .create(&cm_key("ns", "a"), body, CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(meta(&created, "name"), "a");
    assert_eq!(meta(&created, "namespace"), "ns");
    assert_eq!(created["kind"], "ConfigMap");
    assert_eq!(created["apiVersion"], "v1");
    let uid = meta(&created, "uid").as_str().unwrap();
    assert_eq!(uuid::Uuid::parse_str(uid).unwrap().get_version_num(), 4);
    let ts = meta(&created, "creationTimestamp").as_str().unwrap();
    assert!(ts.ends_with('Z') && ts.len() == 20, "{ts}");
    assert!(meta(&created, "deletionTimestamp").is_null());
    assert!(meta(&created, "deletionGracePeriodSeconds").is_null());
    assert!(meta(&created, "generation").is_null());
    assert_eq!(rv(&created), s.current_revision().await.unwrap());

    let got = s.get(&cm_key("ns", "a")).await.unwrap();
    assert_eq!(got, created);
}

/// The uid a caller put in the object is kept (the gateway assigns it
/// before admission, having dropped the client's), also by a dry run.
#[tokio::test]
async fn create_keeps_a_uid_the_caller_assigned() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let mut body = cm("a", "1");
    body["metadata"]["uid"] = json!("6c1c1b0e-0d6c-4a57-9d0b-3a8f6f1f3e21");
    let dry = CreateOptions {
        dry_run: true,
        ..Default::default()
    };
    let created = s
        .create(&cm_key("ns", "a"), body.clone(), dry)
        .await
        .unwrap();
    assert_eq!(
        meta(&created, "uid"),
        "6c1c1b0e-0d6c-4a57-9d0b-3a8f6f1f3e21"
    );
    let created = s
        .create(&cm_key("ns", "a"), body, CreateOptions::default())
        .await
        .unwrap();
    assert_eq!(
        meta(&created, "uid"),
        "6c1c1b0e-0d6c-4a57-9d0b-3a8f6f1f3e21"
    );
    let got = s.get(&cm_key("ns", "a")).await.unwrap();
    assert_eq!(meta(&got, "uid"), "6c1c1b0e-0d6c-4a57-9d0b-3a8f6f1f3e21");
}

#[tokio::test]
async fn create_existing_is_already_exists_and_missing_get_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    s.create(&cm_key("ns", "a"), cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();
    let e = s
        .create(&cm_key("ns", "a"), cm("a", "2"), CreateOptions::default())
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(e.message, "configmaps \"a\" already exists");
    let e = s.get(&cm_key("ns", "zz")).await.unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (404, "configmaps \"zz\" not found")
    );
    // Same name in another namespace is a different object.
    s.create(
        &cm_key("other", "a"),
        cm("a", "1"),
        CreateOptions::default(),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn create_with_resource_version_is_rejected_like_kube() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let mut body = cm("a", "1");
    body["metadata"]["resourceVersion"] = json!("12");
    let e = s
        .create(&cm_key("ns", "a"), body, CreateOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, 500);
    assert_eq!(
        e.message,
        "resourceVersion should not be set on objects to be created"
    );
}

#[tokio::test]
async fn generation_is_tracked_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = ObjectKey::new(GroupResource::new("apps", "deployments"), "ns", "d");
    let body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}});
    let track = UpdateOptions {
        track_generation: true,
        ..Default::default()
    };
    let c = s
        .create(
            &key,
            body,
            CreateOptions {
                track_generation: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(meta(&c, "generation"), 1);
    let mut status = c.clone();
    status["status"] = json!({"ready": 1});
    let u = s.update(&key, status, track.clone()).await.unwrap();
    assert_eq!(meta(&u, "generation"), 1);
    let mut spec = u.clone();
    spec["spec"]["replicas"] = json!(3);
    let u2 = s.update(&key, spec, track).await.unwrap();
    assert_eq!(meta(&u2, "generation"), 2);
}

#[tokio::test]
async fn generate_name_makes_unique_names() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let mut names = std::collections::HashSet::new();
    for _ in 0..20 {
        let body =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "web-"}});
        let c = s
            .create(&cm_key("ns", ""), body, CreateOptions::default())
            .await
            .unwrap();
        let name = meta(&c, "name").as_str().unwrap().to_string();
        assert_eq!(name.len(), 9);
        assert!(name.starts_with("web-"));
        assert!(
            name[4..]
                .chars()
                .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
            "{name}"
        );
        assert_eq!(meta(&c, "generateName"), "web-");
        s.get(&cm_key("ns", &name)).await.unwrap();
        names.insert(name);
    }
    assert_eq!(names.len(), 20);
    let e = s
        .create(
            &cm_key("ns", ""),
            json!({"metadata": {}}),
            CreateOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 400);
}

#[tokio::test]
async fn revisions_strictly_increase_across_writes() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let mut last = s.current_revision().await.unwrap();
    for i in 0..10 {
        let c = s
            .create(
                &cm_key("ns", &format!("c{i}")),
                cm("x", "1"),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        assert!(rv(&c) > last);
        last = rv(&c);
        let mut m = c.clone();
        m["data"]["k"] = json!("2");
        let u = s
            .update(&cm_key("ns", &format!("c{i}")), m, UpdateOptions::default())
            .await
            .unwrap();
        assert!(rv(&u) > last);
        last = rv(&u);
    }
    assert_eq!(s.current_revision().await.unwrap(), last);
}

#[tokio::test]
async fn update_rules() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = cm_key("ns", "a");
    let c = s
        .create(&key, cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();

    // Missing object without create_if_missing: 404.
    let e = s
        .update(
            &cm_key("ns", "nope"),
            cm("nope", "1"),
            UpdateOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 404);

    // Server-owned fields are kept; a matching RV succeeds.
    let mut m = c.clone();
    m["data"]["k"] = json!("2");
    m["metadata"]["uid"] = json!("hijack");
    m["metadata"]["creationTimestamp"] = json!("1999-01-01T00:00:00Z");
    let u = s.update(&key, m, UpdateOptions::default()).await.unwrap();
    assert_eq!(meta(&u, "uid"), meta(&c, "uid"));
    assert_eq!(meta(&u, "creationTimestamp"), meta(&c, "creationTimestamp"));
    assert_eq!(u["data"]["k"], "2");
    assert!(rv(&u) > rv(&c));

    // A stale RV: 409 with kube's optimistic-lock message.
    let mut stale = c.clone();
    stale["data"]["k"] = json!("3");
    let e = s
        .update(&key, stale, UpdateOptions::default())
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );

    // No RV: unconditional.
    let mut free = cm("a", "4");
    free["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let u2 = s
        .update(&key, free, UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(u2["data"]["k"], "4");

    // No-op: nothing written, old RV returned.
    let before = s.current_revision().await.unwrap();
    let same = s
        .update(&key, u2.clone(), UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(same, u2);
    assert_eq!(s.current_revision().await.unwrap(), before);

    // PUT-create.
    let opts = UpdateOptions {
        create_if_missing: true,
        ..Default::default()
    };
    let pc = s
        .update(&cm_key("ns", "new"), cm("new", "1"), opts)
        .await
        .unwrap();
    assert_eq!(meta(&pc, "name"), "new");
    assert!(meta(&pc, "uid").is_string());
}

#[tokio::test]
async fn concurrent_updates_with_same_rv_only_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = cm_key("ns", "a");
    let c = s
        .create(&key, cm("a", "0"), CreateOptions::default())
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let s = s.clone();
        let key = key.clone();
        let mut m = c.clone();
        m["data"]["k"] = json!((i + 1).to_string());
        tasks.push(tokio::spawn(async move {
            s.update(&key, m, UpdateOptions::default()).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(e) => assert_eq!(e.code, 409),
        }
    }
    assert_eq!(ok, 1);
}

#[tokio::test]
async fn dry_run_persists_nothing_and_consumes_no_revision() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = cm_key("ns", "a");
    let before = s.current_revision().await.unwrap();
    let d = s
        .create(
            &key,
            cm("a", "1"),
            CreateOptions {
                dry_run: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(meta(&d, "uid").is_string());
    assert!(meta(&d, "resourceVersion").is_null());
    assert_eq!(s.get(&key).await.unwrap_err().code, 404);
    assert_eq!(s.current_revision().await.unwrap(), before);

    let c = s
        .create(&key, cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();
    let e = s
        .create(
            &key,
            cm("a", "1"),
            CreateOptions {
                dry_run: true,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 409);
    let after_create = s.current_revision().await.unwrap();

    let mut m = c.clone();
    m["data"]["k"] = json!("2");
    let du = s
        .update(
            &key,
            m,
            UpdateOptions {
                dry_run: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(du["data"]["k"], "2");
    assert_eq!(rv(&du), rv(&c));
    let dd = s
        .delete(
            &key,
            DeleteOptions {
                dry_run: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(matches!(dd, DeleteOutcome::Deleted(_)));
    assert_eq!(s.get(&key).await.unwrap(), c);
    assert_eq!(s.current_revision().await.unwrap(), after_create);
}

#[tokio::test]
async fn delete_removes_and_returns_last_state() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = cm_key("ns", "a");
    let c = s
        .create(&key, cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();
    let out = s.delete(&key, DeleteOptions::default()).await.unwrap();
    let DeleteOutcome::Deleted(last) = out else {
        panic!("expected Deleted, got {out:?}")
    };
    assert_eq!(last["data"], c["data"]);
    assert_eq!(rv(&last), s.current_revision().await.unwrap());
    assert_eq!(s.get(&key).await.unwrap_err().code, 404);
    assert_eq!(
        s.delete(&key, DeleteOptions::default())
            .await
            .unwrap_err()
            .code,
        404
    );
    // Recreate gets a new uid.
    let again = s
        .create(&key, cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();
    assert_ne!(meta(&again, "uid"), meta(&c, "uid"));
}

#[tokio::test]
async fn delete_preconditions_use_kube_messages() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = cm_key("ns", "a");
    let c = s
        .create(&key, cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();
    let uid = meta(&c, "uid").as_str().unwrap();
    let e = s
        .delete(
            &key,
            DeleteOptions {
                precondition_uid: Some("x".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 409);
    assert_eq!(
        e.message,
        format!("Operation cannot be fulfilled on ConfigMap \"a\": the UID in the precondition (x) does not match the UID in record ({uid}). The object might have been deleted and then recreated")
    );
    let e = s
        .delete(
            &key,
            DeleteOptions {
                precondition_resource_version: Some("1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.message,
        format!("Operation cannot be fulfilled on ConfigMap \"a\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({}). The object might have been modified", rv(&c))
    );
    let details = e.details.unwrap();
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("a", "ConfigMap")
    );
    let ok = DeleteOptions {
        precondition_uid: Some(uid.to_string()),
        precondition_resource_version: Some(rv(&c).to_string()),
        ..Default::default()
    };
    assert!(matches!(
        s.delete(&key, ok).await.unwrap(),
        DeleteOutcome::Deleted(_)
    ));
}

/// kube's store Create: a name held by an object being deleted says so, and
/// an object with `generateName` gets `CheckGeneratedNameError`'s wording.
#[tokio::test]
async fn already_exists_variants_are_kubes() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = cm_key("ns", "a");
    let mut body = cm("a", "1");
    body["metadata"]["finalizers"] = json!(["example.com/hold"]);
    s.create(&key, body, CreateOptions::default())
        .await
        .unwrap();
    s.delete(&key, DeleteOptions::default()).await.unwrap();
    let e = s
        .create(&key, cm("a", "2"), CreateOptions::default())
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(
        e.message,
        "object is being deleted: configmaps \"a\" already exists"
    );

    s.create(&cm_key("ns", "b"), cm("b", "1"), CreateOptions::default())
        .await
        .unwrap();
    let mut named = cm("b", "2");
    named["metadata"]["generateName"] = json!("b-");
    let e = s
        .create(&cm_key("ns", "b"), named, CreateOptions::default())
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(
        e.message,
        "configmaps \"b\" already exists, the server was not able to generate a unique name for the object"
    );
    let d = e.details.expect("details");
    assert_eq!((d.name.as_str(), d.retry_after_seconds), ("b", Some(1)));
}

#[tokio::test]
async fn finalizers_hold_the_object_until_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = cm_key("ns", "a");
    let mut body = cm("a", "1");
    body["metadata"]["finalizers"] = json!(["example.com/hold"]);
    s.create(&key, body, CreateOptions::default())
        .await
        .unwrap();

    let out = s.delete(&key, DeleteOptions::default()).await.unwrap();
    let DeleteOutcome::Marked(marked) = out else {
        panic!("expected Marked, got {out:?}")
    };
    assert!(meta(&marked, "deletionTimestamp").is_string());
    assert_eq!(meta(&marked, "deletionGracePeriodSeconds"), 0);
    assert_eq!(s.get(&key).await.unwrap(), marked);

    // Deleting again changes nothing.
    let rev = s.current_revision().await.unwrap();
    let again = s.delete(&key, DeleteOptions::default()).await.unwrap();
    assert_eq!(again, DeleteOutcome::Marked(marked.clone()));
    assert_eq!(s.current_revision().await.unwrap(), rev);

    // Updates keep the deletion marks even if the client drops them.
    let mut m = marked.clone();
    m["data"]["k"] = json!("2");
    m["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("deletionTimestamp");
    let u = s.update(&key, m, UpdateOptions::default()).await.unwrap();
    assert_eq!(
        meta(&u, "deletionTimestamp"),
        meta(&marked, "deletionTimestamp")
    );

    // Clearing the finalizers deletes it.
    let mut clear = u.clone();
    clear["metadata"]["finalizers"] = json!([]);
    let last = s
        .update(&key, clear, UpdateOptions::default())
        .await
        .unwrap();
    assert_eq!(last["data"]["k"], "2");
    assert_eq!(rv(&last), s.current_revision().await.unwrap());
    assert_eq!(s.get(&key).await.unwrap_err().code, 404);
}

#[tokio::test]
async fn graceful_delete_marks_then_zero_grace_removes() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = ObjectKey::new(GroupResource::new("", "pods"), "ns", "p");
    s.create(
        &key,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
        CreateOptions::default(),
    )
    .await
    .unwrap();
    let out = s
        .delete(
            &key,
            DeleteOptions {
                grace_period_seconds: Some(30),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let DeleteOutcome::Marked(m) = out else {
        panic!("expected Marked, got {out:?}")
    };
    assert_eq!(meta(&m, "deletionGracePeriodSeconds"), 30);
    let ts = chrono::DateTime::parse_from_rfc3339(meta(&m, "deletionTimestamp").as_str().unwrap())
        .unwrap();
    let ahead = ts.signed_duration_since(chrono::Utc::now()).num_seconds();
    assert!((25..=31).contains(&ahead), "{ahead}");
    let out = s
        .delete(
            &key,
            DeleteOptions {
                grace_period_seconds: Some(0),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(matches!(out, DeleteOutcome::Deleted(_)));
    assert_eq!(s.get(&key).await.unwrap_err().code, 404);
}

#[tokio::test]
async fn list_is_ordered_scoped_and_carries_the_snapshot_revision() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    for (ns, name) in [("b", "x"), ("a", "z"), ("a", "y"), ("ab", "w")] {
        s.create(&cm_key(ns, name), cm(name, "1"), CreateOptions::default())
            .await
            .unwrap();
    }
    let all = s.list(&cms(), None).await.unwrap();
    let got: Vec<(String, String)> = all
        .items
        .iter()
        .map(|o| {
            (
                meta(o, "namespace").as_str().unwrap().into(),
                meta(o, "name").as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [("a", "y"), ("a", "z"), ("ab", "w"), ("b", "x")];
    assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
    assert_eq!(all.resource_version, s.current_revision().await.unwrap());

    let only_a = s.list(&cms(), Some("a")).await.unwrap();
    assert_eq!(only_a.items.len(), 2);
    let secrets = s
        .list(&GroupResource::new("", "secrets"), None)
        .await
        .unwrap();
    assert!(secrets.items.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_snapshot_is_never_torn_by_concurrent_writes() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    // Invariant: exactly one of a/b exists at every revision.
    s.create(&cm_key("ns", "a"), cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();
    let writer = {
        let s = s.clone();
        tokio::spawn(async move {
            for i in 0..100 {
                let (from, to) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
                // Swap in two writes; a snapshot between them sees both.
                s.create(&cm_key("ns", to), cm(to, "1"), CreateOptions::default())
                    .await
                    .unwrap();
                s.delete(&cm_key("ns", from), DeleteOptions::default())
                    .await
                    .unwrap();
            }
        })
    };
    let mut checked = 0;
    while !writer.is_finished() {
        let l = s.list(&cms(), Some("ns")).await.unwrap();
        // Compare with an exact read at the same revision.
        let prefix = keelson_storage::keys::prefix(&cms(), Some("ns")).unwrap();
        let exact = s
            .kv()
            .range(RangeRequest::prefix(prefix).at(l.resource_version))
            .await
            .unwrap()
            .kvs;
        assert_eq!(l.items.len(), exact.len());
        for (item, v) in l.items.iter().zip(&exact) {
            assert_eq!(rv(item), v.mod_revision);
            assert!(v.mod_revision <= l.resource_version);
        }
        assert!((1..=2).contains(&l.items.len()), "{:?}", l.items);
        checked += 1;
        tokio::task::yield_now().await;
    }
    writer.await.unwrap();
    assert!(checked > 0);
}

#[tokio::test]
async fn system_namespaces_exist_after_open() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let l = s
        .list(&GroupResource::new("", "namespaces"), None)
        .await
        .unwrap();
    let names: Vec<&str> = l
        .items
        .iter()
        .map(|o| meta(o, "name").as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
    let d = &l.items[0];
    assert_eq!(d["kind"], "Namespace");
    assert_eq!(d["apiVersion"], "v1");
    assert_eq!(d["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(d["status"]["phase"], "Active");
    assert_eq!(meta(d, "labels")["kubernetes.io/metadata.name"], "default");
    assert!(meta(d, "namespace").is_null());
}

#[tokio::test]
async fn restart_keeps_objects_versions_and_counter() {
    let dir = tempfile::tempdir().unwrap();
    let (objs, rev) = {
        let s = open(dir.path()).await;
        let mut objs = Vec::new();
        for i in 0..5 {
            objs.push(
                s.create(
                    &cm_key("ns", &format!("c{i}")),
                    cm("x", &i.to_string()),
                    CreateOptions::default(),
                )
                .await
                .unwrap(),
            );
        }
        s.delete(&cm_key("ns", "c4"), DeleteOptions::default())
            .await
            .unwrap();
        objs.pop();
        (objs, s.current_revision().await.unwrap())
    };
    let s = open(dir.path()).await;
    assert_eq!(
        s.current_revision().await.unwrap(),
        rev,
        "reopen writes nothing"
    );
    for o in &objs {
        let name = meta(o, "name").as_str().unwrap();
        assert_eq!(&s.get(&cm_key("ns", name)).await.unwrap(), o);
    }
    assert_eq!(s.get(&cm_key("ns", "c4")).await.unwrap_err().code, 404);
    let next = s
        .create(&cm_key("ns", "n"), cm("n", "1"), CreateOptions::default())
        .await
        .unwrap();
    assert!(rv(&next) > rev);
}

#[tokio::test]
async fn invalid_keys_are_bad_requests_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let e = s
        .create(
            &cm_key("ns", "a/b"),
            cm("a/b", "1"),
            CreateOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 400);
    let e = s
        .create(
            &cm_key("ns", "a"),
            json!("not an object"),
            CreateOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, 400);
    assert_eq!(s.get(&cm_key("n\0s", "a")).await.unwrap_err().code, 400);
}

#[tokio::test]
async fn compact_now_forgets_old_revisions_but_keeps_live_objects() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = keelson_storage::StoreConfig {
        retention: std::time::Duration::ZERO,
        ..config()
    };
    let s = keelson_storage::LocalStore::open(dir.path(), cfg)
        .await
        .unwrap();
    let key = cm_key("ns", "a");
    let c = s
        .create(&key, cm("a", "1"), CreateOptions::default())
        .await
        .unwrap();
    let mut m = c.clone();
    m["data"]["k"] = json!("2");
    let u = s.update(&key, m, UpdateOptions::default()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let compacted = s.compact_now().await.unwrap();
    assert_eq!(compacted, rv(&u));
    let ek = keelson_storage::keys::object_key(&key).unwrap();
    let e = s
        .kv()
        .range(RangeRequest::key(ek).at(rv(&c)))
        .await
        .unwrap_err();
    assert!(matches!(e, keelson_kv::KvError::Compacted { .. }), "{e}");
    assert_eq!(s.get(&key).await.unwrap(), u);
    assert_eq!(
        s.list(&GroupResource::new("", "namespaces"), None)
            .await
            .unwrap()
            .items
            .len(),
        4
    );
}

#[tokio::test]
async fn a_namespace_terminates_before_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let key = ObjectKey::new(GroupResource::new("", "namespaces"), "", "t");
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
    let created = s.create(&key, ns, CreateOptions::default()).await.unwrap();
    // A wrong uid: the namespace registry's own wording.
    let e = s
        .delete(
            &key,
            DeleteOptions {
                precondition_uid: Some("x".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "Operation cannot be fulfilled on namespaces \"t\": Precondition failed: UID in precondition: x, UID in object meta: {}",
            meta(&created, "uid").as_str().unwrap()
        )
    );
    // The first delete marks it Terminating; so do later ones while
    // spec.finalizers is not empty.
    for _ in 0..2 {
        match s.delete(&key, DeleteOptions::default()).await.unwrap() {
            DeleteOutcome::Marked(ns) => {
                assert_eq!(ns["status"]["phase"], "Terminating");
                assert!(ns["metadata"]["deletionTimestamp"].is_string());
                assert!(ns["metadata"]["deletionGracePeriodSeconds"].is_null());
            }
            other => panic!("{other:?}"),
        }
    }
    // Emptying spec.finalizers (the finalize update) deletes it.
    let mut ns = s.get(&key).await.unwrap();
    ns["spec"]["finalizers"] = json!([]);
    s.update(&key, ns, Default::default()).await.unwrap();
    assert!(s.get(&key).await.unwrap_err().is_not_found());
}
