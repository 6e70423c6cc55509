//! The transcoder against k8s-pb's prost types (a real Protobuf library):
//! what we write decodes there, and prost writes back the very same bytes
//! (field order, zero values, map order, unpacked repeats); every
//! well-known type; hostile input.

use super::*;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime as rt;
use prost::Message;
use serde_json::json;

fn pod() -> Value {
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "0b8a7f3e-1111-4222-8333-444455556666",
            "resourceVersion": "42",
            "creationTimestamp": "2024-05-01T10:20:30Z",
            "labels": {"b": "2", "a": "1"},
            "annotations": {"note": "n"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u", "controller": true}],
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "time": "2024-05-01T10:20:30Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]
        },
        "spec": {
            "containers": [{
                "name": "nginx",
                "image": "nginx:1.27",
                "args": ["-g", "daemon off;"],
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "250m"}},
                "livenessProbe": {"httpGet": {"path": "/", "port": "http", "scheme": "HTTP"}, "initialDelaySeconds": 3, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"
            }],
            "volumes": [{"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}}],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "priority": 0,
            "enableServiceLinks": true
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"}
    })
}

fn deployment() -> Value {
    json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "web", "namespace": "default", "generation": 1, "creationTimestamp": "2024-05-01T10:20:30Z", "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600
        },
        "status": {}
    })
}

/// Our bytes, decoded by prost and written back by prost.
fn prost_round_trip<M: Message + Default>(raw: &[u8]) -> (M, Vec<u8>) {
    let m = M::decode(raw).expect("prost decodes our bytes");
    let again = m.encode_to_vec();
    (m, again)
}

fn unknown(bytes: &[u8]) -> rt::Unknown {
    assert!(bytes.starts_with(MAGIC));
    rt::Unknown::decode(&bytes[4..]).expect("prost decodes the envelope")
}

#[test]
fn a_pod_is_what_prost_reads_and_writes() {
    let bytes = encode_object(&pod()).unwrap();
    let u = unknown(&bytes);
    let tm = u.type_meta.clone().unwrap();
    assert_eq!(tm.api_version.as_deref(), Some("v1"));
    assert_eq!(tm.kind.as_deref(), Some("Pod"));
    assert_eq!(u.content_encoding.as_deref(), Some(""));
    assert_eq!(u.content_type.as_deref(), Some(""));
    // The envelope is kube's bytes: prost writes the same.
    assert_eq!(u.encode_to_vec(), &bytes[4..]);
    let raw = u.raw.unwrap();
    let (p, again): (core::Pod, _) = prost_round_trip(&raw);
    assert_eq!(
        again, raw,
        "field order, zero values and maps as gogo writes them"
    );
    let m = p.metadata.as_ref().unwrap();
    assert_eq!(m.name.as_deref(), Some("web"));
    assert_eq!(
        m.generate_name.as_deref(),
        Some(""),
        "a Go value is written when empty"
    );
    assert_eq!(m.generation, Some(0));
    assert_eq!(
        m.deletion_grace_period_seconds, None,
        "a pointer only when set"
    );
    assert_eq!(
        m.creation_timestamp.as_ref().unwrap().seconds,
        Some(1_714_558_830)
    );
    assert_eq!(m.labels.get("a").map(String::as_str), Some("1"));
    assert_eq!(
        m.managed_fields[0]
            .fields_v1
            .as_ref()
            .unwrap()
            .raw
            .as_deref(),
        Some(&br#"{"f:metadata":{"f:labels":{".":{}}}}"#[..])
    );
    let spec = p.spec.as_ref().unwrap();
    let c = &spec.containers[0];
    assert_eq!(c.working_dir.as_deref(), Some(""));
    assert_eq!(c.stdin, Some(false));
    assert_eq!(c.security_context, None);
    let limits = &c.resources.as_ref().unwrap().limits;
    assert_eq!(limits["cpu"].string.as_deref(), Some("500m"));
    let port = c
        .liveness_probe
        .as_ref()
        .unwrap()
        .handler
        .as_ref()
        .unwrap()
        .http_get
        .as_ref()
        .unwrap()
        .port
        .as_ref()
        .unwrap();
    assert_eq!(
        (port.r#type, port.int_val, port.str_val.as_deref()),
        (Some(1), Some(0), Some("http"))
    );
    assert_eq!(spec.termination_grace_period_seconds, Some(30));
    assert_eq!(spec.host_network, Some(false));
    assert_eq!(
        spec.volumes[0]
            .volume_source
            .as_ref()
            .unwrap()
            .config_map
            .as_ref()
            .unwrap()
            .default_mode,
        Some(420)
    );
    assert_eq!(p.status.as_ref().unwrap().phase.as_deref(), Some("Pending"));
    // And back to the same JSON.
    assert_eq!(decode_object(&bytes).unwrap(), normalized(pod()));
}

/// What kube's JSON shows for a decoded Pod: Go values without
/// `omitempty` appear, structs are `{}`.
fn normalized(mut v: Value) -> Value {
    if v["kind"] == "Pod" {
        v["spec"]["containers"][0]["resources"]["claims"] = Value::Null;
        v["spec"]["containers"][0]["resources"]
            .as_object_mut()
            .unwrap()
            .remove("claims");
    }
    v
}

#[test]
fn a_deployment_round_trips_with_pointer_zeros_kept() {
    let bytes = encode_object(&deployment()).unwrap();
    let raw = unknown(&bytes).raw.unwrap();
    let (d, again): (apps::Deployment, _) = prost_round_trip(&raw);
    assert_eq!(again, raw);
    let spec = d.spec.as_ref().unwrap();
    assert_eq!(spec.replicas, Some(0), "an explicit zero pointer is kept");
    assert_eq!(spec.min_ready_seconds, Some(0));
    assert_eq!(spec.paused, Some(false));
    let ru = spec
        .strategy
        .as_ref()
        .unwrap()
        .rolling_update
        .as_ref()
        .unwrap();
    assert_eq!(
        ru.max_unavailable.as_ref().unwrap().str_val.as_deref(),
        Some("25%")
    );
    assert_eq!(ru.max_surge.as_ref().unwrap().int_val, Some(1));
    // The template's zero creationTimestamp is an empty Time.
    let tmeta = spec.template.as_ref().unwrap().metadata.as_ref().unwrap();
    assert_eq!(tmeta.creation_timestamp, Some(meta::Time::default()));
    let json = decode_object(&bytes).unwrap();
    assert_eq!(json, deployment());
}

#[test]
fn a_list_is_kubes_envelope_around_bare_items() {
    let head = json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "7", "continue": "c", "remainingItemCount": 3}});
    let mut w = ListWriter::new(&head).unwrap();
    let items: Vec<Bytes> = (0..3)
        .map(|i| {
            let mut p = pod();
            p["metadata"]["name"] = json!(format!("p{i}"));
            raw_of(&Bytes::from(encode_object(&p).unwrap())).unwrap()
        })
        .collect();
    for i in &items {
        w.push(i.clone());
    }
    let frames = w.finish(64 * 1024);
    let bytes: Vec<u8> = frames.concat();
    let u = unknown(&bytes);
    assert_eq!(
        u.type_meta.as_ref().unwrap().kind.as_deref(),
        Some("PodList")
    );
    let raw = u.raw.unwrap();
    let (list, again): (core::PodList, _) = prost_round_trip(&raw);
    assert_eq!(again, raw);
    assert_eq!(list.items.len(), 3);
    assert_eq!(
        list.items[2].metadata.as_ref().unwrap().name.as_deref(),
        Some("p2")
    );
    let lm = list.metadata.unwrap();
    assert_eq!(
        (
            lm.resource_version.as_deref(),
            lm.r#continue.as_deref(),
            lm.remaining_item_count
        ),
        (Some("7"), Some("c"), Some(3))
    );
    // Large items are sent as they are, not copied.
    let frames = {
        let mut w = ListWriter::new(&head).unwrap();
        w.push(items[0].clone());
        w.finish(16)
    };
    assert!(frames.iter().any(|f| f.as_ptr() == items[0].as_ptr()));
    let json = decode_object(&bytes).unwrap();
    assert_eq!(json["items"][1]["metadata"]["name"], "p1");
    assert!(json["items"][1].get("kind").is_none());
    // An empty list.
    let empty = ListWriter::new(&head).unwrap().finish(1024).concat();
    let l = core::PodList::decode(unknown(&empty).raw.unwrap().as_slice()).unwrap();
    assert!(l.items.is_empty());
}

#[test]
fn a_v1beta1_metadata_list_writes_items_before_metadata() {
    // meta.k8s.io/v1beta1 PartialObjectMetadataList numbers items 1 and
    // metadata 2; prost writes fields in number order, so a byte-equal
    // re-encoding shows the order is kube's.
    let head = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1beta1", "metadata": {"resourceVersion": "7"}});
    let mut w = ListWriter::new(&head).unwrap();
    for name in ["a", "b"] {
        let mut item = Vec::new();
        let pom = json!({"metadata": {"name": name}});
        let id = Schema::get()
            .kind("meta.k8s.io/v1", "PartialObjectMetadata")
            .unwrap();
        transcode::from_json(Schema::get(), id, &pom, &mut item).unwrap();
        w.push(Bytes::from(item));
    }
    let bytes = w.finish(1024).concat();
    let u = unknown(&bytes);
    assert_eq!(
        u.type_meta.as_ref().unwrap().api_version.as_deref(),
        Some("meta.k8s.io/v1beta1")
    );
    let raw = u.raw.unwrap();
    let (list, again): (
        k8s_pb::apimachinery::pkg::apis::meta::v1beta1::PartialObjectMetadataList,
        _,
    ) = prost_round_trip(&raw);
    assert_eq!(again, raw);
    assert_eq!(list.items.len(), 2);
    assert_eq!(
        list.metadata.unwrap().resource_version.as_deref(),
        Some("7")
    );
}

#[test]
fn watch_frames_are_length_delimited_watch_events() {
    let objects: Vec<Vec<u8>> = [pod(), deployment()]
        .iter()
        .map(|o| encode_object(o).unwrap())
        .collect();
    let mut stream = BytesMut::new();
    for (t, o) in [
        ("ADDED", &objects[0]),
        ("MODIFIED", &objects[1]),
        ("DELETED", &objects[0]),
    ] {
        let f = event_frame(t, o);
        let inside = object_of_frame(t, &f).unwrap();
        assert_eq!(&inside[..], &o[..]);
        assert!(object_of_frame("BOOKMARK", &f).is_none());
        stream.extend_from_slice(&f);
    }
    let mut seen = Vec::new();
    let mut buf = stream;
    while let Some(frame) = crate::Framer::LengthDelimited.read(&mut buf).unwrap() {
        let ev = meta::WatchEvent::decode(&frame[..]).unwrap();
        assert_eq!(ev.encode_to_vec(), &frame[..]);
        let raw = ev.object.unwrap().raw.unwrap();
        let obj = decode_object(&raw).unwrap();
        seen.push((
            ev.r#type.unwrap(),
            obj["kind"].as_str().unwrap().to_string(),
        ));
    }
    assert_eq!(
        seen,
        [
            ("ADDED".into(), "Pod".into()),
            ("MODIFIED".into(), "Deployment".into()),
            ("DELETED".into(), "Pod".into())
        ]
    );
}

#[test]
fn map_entries_are_written_whole_as_gogo_does() {
    // gogo writes a map entry's key and value even when empty; prost
    // leaves an empty value out. Both read either form.
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "creationTimestamp": null}, "data": {"e": "", "z": "1"}});
    let raw = unknown(&encode_object(&cm).unwrap()).raw.unwrap();
    let entry = [0x12, 0x05, 0x0a, 0x01, b'e', 0x12, 0x00];
    assert!(raw.windows(entry.len()).any(|w| w == entry), "{raw:?}");
    let m = core::ConfigMap::decode(raw.as_slice()).unwrap();
    assert_eq!(m.data["e"], "");
    let prost_raw = m.encode_to_vec();
    assert_ne!(prost_raw, raw);
    assert_eq!(
        decode_object(&envelope("v1", "ConfigMap", &prost_raw)).unwrap(),
        cm
    );
}

#[test]
fn prost_written_requests_decode() {
    // What client-go sends for `kubectl create configmap`.
    let cm = core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            name: Some("c".into()),
            namespace: Some("ns".into()),
            generate_name: Some(String::new()),
            creation_timestamp: Some(meta::Time::default()),
            ..Default::default()
        }),
        data: [("a".to_string(), "b".to_string())].into_iter().collect(),
        binary_data: [("bin".to_string(), vec![0u8, 255])].into_iter().collect(),
        ..Default::default()
    };
    let body = envelope("v1", "ConfigMap", &cm.encode_to_vec());
    assert_eq!(
        decode_request(&body, "ConfigMap").unwrap(),
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "ns", "creationTimestamp": null}, "data": {"a": "b"}, "binaryData": {"bin": "AP8="}})
    );
}

// ---------------------------------------------------------------------
// Well-known types
// ---------------------------------------------------------------------

/// A `field` of `v` encoded in a `kind` and decoded again.
fn round(v: &Value) -> (Vec<u8>, Value) {
    let b = encode_object(v).unwrap();
    let back = decode_object(&b).unwrap();
    (unknown(&b).raw.unwrap(), back)
}

#[test]
fn time_is_rfc3339_seconds() {
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "creationTimestamp": "2024-05-01T10:20:30Z", "deletionTimestamp": "1969-12-31T23:59:59Z"}});
    let (raw, back) = round(&cm);
    let m = core::ConfigMap::decode(raw.as_slice())
        .unwrap()
        .metadata
        .unwrap();
    assert_eq!(
        m.creation_timestamp,
        Some(meta::Time {
            seconds: Some(1_714_558_830),
            nanos: Some(0)
        })
    );
    assert_eq!(m.deletion_timestamp.unwrap().seconds, Some(-1));
    assert_eq!(back, cm);
    // Absent: the zero Time, an empty message, `null` in JSON.
    let (raw, back) =
        round(&json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}}));
    let m = core::ConfigMap::decode(raw.as_slice())
        .unwrap()
        .metadata
        .unwrap();
    assert_eq!(m.creation_timestamp, Some(meta::Time::default()));
    assert_eq!(back["metadata"]["creationTimestamp"], Value::Null);
    // Other offsets become UTC; nanoseconds are dropped on the way back.
    let (_, back) = round(
        &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"creationTimestamp": "2024-05-01T12:20:30.75+02:00"}}),
    );
    assert_eq!(
        back["metadata"]["creationTimestamp"],
        "2024-05-01T10:20:30Z"
    );
    assert!(encode_object(
        &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"creationTimestamp": "soon"}})
    )
    .is_err());
}

#[test]
fn micro_time_keeps_microseconds() {
    let lease = json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": {"name": "l", "creationTimestamp": null}, "spec": {"holderIdentity": "me", "acquireTime": "2024-05-01T10:20:30.123456Z", "leaseDurationSeconds": 15}});
    let (raw, back) = round(&lease);
    let spec = k8s_pb::api::coordination::v1::Lease::decode(raw.as_slice())
        .unwrap()
        .spec
        .unwrap();
    assert_eq!(
        spec.acquire_time.unwrap(),
        meta::MicroTime {
            seconds: Some(1_714_558_830),
            nanos: Some(123_456_000)
        }
    );
    assert_eq!(back, lease);
}

#[test]
fn duration_is_a_go_duration_string() {
    // No served kind carries a metav1.Duration: a schema of our own.
    let data = r#"{"kubernetesVersion":"v1.34.0","kinds":[["x/v1","T","x.T"]],"messages":{
        "x.T":[[1,"timeout","io.k8s.apimachinery.pkg.apis.meta.v1.Duration",8]],
        "io.k8s.apimachinery.pkg.apis.meta.v1.Duration":[[1,"duration","int64",4]]}}"#;
    let s = schema::Schema::parse(data).unwrap();
    let id = s.kind("x/v1", "T").unwrap();
    let mut out = Vec::new();
    transcode::from_json(&s, id, &json!({"timeout": "1m30s"}), &mut out).unwrap();
    // timeout (1) { duration (1): 90e9 }
    let d = meta::Duration::decode(&out[2..]).unwrap();
    assert_eq!(d.duration, Some(90_000_000_000));
    assert_eq!(
        transcode::to_json(&s, id, &out).unwrap(),
        json!({"timeout": "1m30s"})
    );
    let mut bad = Vec::new();
    assert!(transcode::from_json(&s, id, &json!({"timeout": "soon"}), &mut bad).is_err());
}

#[test]
fn quantities_are_their_strings() {
    let rq = json!({"kind": "ResourceQuota", "apiVersion": "v1", "metadata": {"name": "q", "creationTimestamp": null}, "spec": {"hard": {"pods": "10", "requests.cpu": "1500m"}}, "status": {}});
    let (raw, back) = round(&rq);
    let hard = core::ResourceQuota::decode(raw.as_slice())
        .unwrap()
        .spec
        .unwrap()
        .hard;
    assert_eq!(hard["requests.cpu"].string.as_deref(), Some("1500m"));
    assert_eq!(back, rq);
    // A JSON number is written as its string.
    let (raw, _) = round(
        &json!({"kind": "ResourceQuota", "apiVersion": "v1", "spec": {"hard": {"pods": 10}}}),
    );
    let hard = core::ResourceQuota::decode(raw.as_slice())
        .unwrap()
        .spec
        .unwrap()
        .hard;
    assert_eq!(hard["pods"].string.as_deref(), Some("10"));
}

#[test]
fn int_or_string_is_type_int_val_str_val() {
    let svc = json!({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "s", "creationTimestamp": null}, "spec": {"ports": [
        {"name": "a", "port": 80, "targetPort": 8080, "protocol": "TCP"},
        {"name": "b", "port": 81, "targetPort": "http", "protocol": "TCP"},
        {"name": "c", "port": 82, "targetPort": -1, "protocol": "TCP"}
    ]}, "status": {"loadBalancer": {}}});
    let (raw, back) = round(&svc);
    let ports = core::Service::decode(raw.as_slice())
        .unwrap()
        .spec
        .unwrap()
        .ports;
    let t = |i: usize| ports[i].target_port.clone().unwrap();
    assert_eq!(
        (t(0).r#type, t(0).int_val, t(0).str_val.as_deref()),
        (Some(0), Some(8080), Some(""))
    );
    assert_eq!(
        (t(1).r#type, t(1).int_val, t(1).str_val.as_deref()),
        (Some(1), Some(0), Some("http"))
    );
    assert_eq!(t(2).int_val, Some(-1));
    assert_eq!(back, svc);
}

#[test]
fn raw_extension_is_the_embedded_json() {
    let cr = json!({"kind": "ControllerRevision", "apiVersion": "apps/v1", "metadata": {"name": "r", "creationTimestamp": null}, "data": {"spec": {"template": {"x": [1, 2]}}}, "revision": 3});
    let (raw, back) = round(&cr);
    let d = apps::ControllerRevision::decode(raw.as_slice()).unwrap();
    assert_eq!(
        d.data.unwrap().raw.unwrap(),
        br#"{"spec":{"template":{"x":[1,2]}}}"#
    );
    assert_eq!(back, cr);
    // An embedded Protobuf object is decoded too.
    let inner =
        encode_object(&json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"}}))
            .unwrap();
    let d = apps::ControllerRevision {
        metadata: Some(meta::ObjectMeta::default()),
        data: Some(rt::RawExtension { raw: Some(inner) }),
        revision: Some(1),
    };
    let v = decode_request(
        &envelope("apps/v1", "ControllerRevision", &d.encode_to_vec()),
        "ControllerRevision",
    )
    .unwrap();
    assert_eq!(v["data"]["kind"], "ConfigMap");
    assert_eq!(v["data"]["metadata"]["name"], "x");
}

#[test]
fn fields_v1_is_raw_json() {
    let (_, back) = round(&pod());
    assert_eq!(
        back["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}}}})
    );
    let bad = core::Pod {
        metadata: Some(meta::ObjectMeta {
            managed_fields: vec![meta::ManagedFieldsEntry {
                fields_v1: Some(meta::FieldsV1 {
                    raw: Some(b"{nope".to_vec()),
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = decode_request(&envelope("v1", "Pod", &bad.encode_to_vec()), "Pod").unwrap_err();
    assert_eq!(e.code, 400);
    assert!(
        e.message.starts_with(
            "Pod in version \"v1\" cannot be handled as a Pod: proto: FieldsV1: raw is not JSON"
        ),
        "{}",
        e.message
    );
}

#[test]
fn bytes_are_base64_and_byte_maps_too() {
    let secret = json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s", "creationTimestamp": null}, "data": {"tls.crt": "AAEC/w==", "empty": ""}, "type": "kubernetes.io/tls"});
    let (raw, back) = round(&secret);
    let s = core::Secret::decode(raw.as_slice()).unwrap();
    assert_eq!(s.data["tls.crt"], vec![0, 1, 2, 255]);
    assert_eq!(s.data["empty"], Vec::<u8>::new());
    assert_eq!(back, secret);
    let csr = json!({"kind": "CertificateSigningRequest", "apiVersion": "certificates.k8s.io/v1", "metadata": {"name": "c", "creationTimestamp": null}, "spec": {"request": "aGVsbG8=", "signerName": "x/y"}, "status": {}});
    let (raw, back) = round(&csr);
    let c =
        k8s_pb::api::certificates::v1::CertificateSigningRequest::decode(raw.as_slice()).unwrap();
    assert_eq!(c.spec.unwrap().request.unwrap(), b"hello");
    assert_eq!(back, csr);
    assert!(
        encode_object(&json!({"kind": "Secret", "apiVersion": "v1", "data": {"a": "!!"}})).is_err()
    );
}

#[test]
fn custom_resource_definitions_keep_their_schema_unions() {
    let crd = json!({"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {"name": "widgets.example.com", "creationTimestamp": null},
        "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}, "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"size": 1}},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                    "free": {"type": "object", "additionalProperties": false},
                    "typed": {"type": "object", "additionalProperties": {"type": "integer"}}
                },
                "required": ["spec"]
            }}}]},
        "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}});
    let (_, back) = round(&crd);
    assert_eq!(back, crd);
}

#[test]
fn named_string_slices_are_arrays() {
    let sar = json!({"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {"creationTimestamp": null},
        "spec": {"user": "alice", "extra": {"scopes": ["a", "b"], "none": null}, "resourceAttributes": {"verb": "get", "resource": "pods"}},
        "status": {"allowed": false}});
    let (raw, back) = round(&sar);
    let spec = k8s_pb::api::authorization::v1::SubjectAccessReview::decode(raw.as_slice())
        .unwrap()
        .spec
        .unwrap();
    assert_eq!(spec.extra["scopes"].items, ["a", "b"]);
    assert!(spec.extra["none"].items.is_empty());
    assert_eq!(
        back["spec"]["extra"],
        json!({"none": null, "scopes": ["a", "b"]})
    );
}

#[test]
fn inline_fields_are_nested_on_the_wire() {
    let (raw, back) = round(&pod());
    let p = core::Pod::decode(raw.as_slice()).unwrap();
    let probe = p.spec.unwrap().containers[0]
        .liveness_probe
        .clone()
        .unwrap();
    assert_eq!(
        probe.handler.unwrap().http_get.unwrap().path.as_deref(),
        Some("/")
    );
    assert_eq!(
        back["spec"]["containers"][0]["livenessProbe"]["httpGet"]["path"],
        "/"
    );
    let ing = json!({"kind": "Ingress", "apiVersion": "networking.k8s.io/v1", "metadata": {"name": "i", "creationTimestamp": null},
        "spec": {"rules": [{"host": "a.example", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]},
        "status": {"loadBalancer": {}}});
    let (_, back) = round(&ing);
    assert_eq!(back, ing);
}

// ---------------------------------------------------------------------
// Errors and hostile input
// ---------------------------------------------------------------------

#[test]
fn request_errors_have_kubes_wording() {
    let e = |b: &[u8]| decode_request(b, "Deployment").unwrap_err();
    assert_eq!(
        e(b"").message,
        "the object provided is unrecognized (must be of type Deployment): empty data (<empty>)"
    );
    assert_eq!(
        e(b"k8s\0").message,
        "the object provided is unrecognized (must be of type Deployment): empty body (6b387300)"
    );
    assert_eq!(
        e(b"{}").message,
        "the object provided is unrecognized (must be of type Deployment): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({})"
    );
    assert!(e(b"k8s\0\x0a\x05ab").message.contains("unexpected EOF"));
    let foo = envelope("v1", "Foo", &[]);
    assert_eq!(
        e(&foo).message,
        "Foo in version \"v1\" cannot be handled as a Deployment: no kind \"Foo\" is registered for version \"v1\" in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\""
    );
    let bad = envelope("apps/v1", "Deployment", &[0x0a, 0x02, 0x08]);
    assert!(
        e(&bad)
            .message
            .starts_with("Deployment in version \"v1\" cannot be handled as a Deployment: "),
        "{}",
        e(&bad).message
    );
    let wrong = envelope("apps/v1", "Deployment", &[0x08, 0x01]);
    assert_eq!(
        e(&wrong).message,
        "Deployment in version \"v1\" cannot be handled as a Deployment: proto: wrong wireType = 0 for field Metadata"
    );
    // A missing kind is the endpoint's.
    let cm = envelope("v1", "", &[]);
    assert_eq!(
        decode_request(&cm, "ConfigMap").unwrap()["kind"],
        "ConfigMap"
    );
    for b in [&b""[..], b"k8s\0", b"{}", &foo, &bad, &wrong] {
        assert_eq!(e(b).code, 400);
    }
}

/// xorshift64*: reproducible randomness without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn a_hundred_thousand_hostile_bodies_are_400s_never_panics() {
    let seeds: Vec<Vec<u8>> = [
        pod(),
        deployment(),
        json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s"}, "data": {"a": "AAEC"}}),
        json!({"kind": "Service", "apiVersion": "v1", "spec": {"ports": [{"port": 80, "targetPort": "http"}]}}),
        json!({"kind": "ControllerRevision", "apiVersion": "apps/v1", "data": {"a": 1}}),
    ]
    .iter()
    .map(|v| encode_object(v).unwrap())
    .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut ok = 0usize;
    for round in 0..100_000usize {
        let mut b = seeds[round % seeds.len()].clone();
        match rng.below(6) {
            // Flip a few bytes.
            0 | 1 => {
                for _ in 0..=rng.below(4) {
                    let at = rng.below(b.len());
                    b[at] ^= 1 << rng.below(8);
                }
            }
            // Cut it short.
            2 => b.truncate(rng.below(b.len())),
            // Overwrite a run with random bytes.
            3 => {
                let at = 4 + rng.below(b.len() - 4);
                for i in at..(at + 1 + rng.below(16)).min(b.len()) {
                    b[i] = rng.next() as u8;
                }
            }
            // Insert random bytes.
            4 => {
                let at = rng.below(b.len());
                let n = 1 + rng.below(8);
                let junk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                b.splice(at..at, junk);
            }
            // Pure noise after the magic.
            _ => {
                b = MAGIC.to_vec();
                b.extend((0..rng.below(64)).map(|_| rng.next() as u8));
            }
        }
        match decode_request(&b, "Pod") {
            Ok(v) => {
                assert!(v.is_object());
                ok += 1;
            }
            Err(e) => assert_eq!(e.code, 400, "{}", e.message),
        }
    }
    // Many mutations still parse (protobuf skips unknown fields); most don't.
    assert!(ok > 0 && ok < 100_000, "{ok}");
}

#[test]
fn deep_nesting_is_refused() {
    // JSONSchemaProps nest through `not` (field 28): 200 levels deep.
    let mut inner: Vec<u8> = Vec::new();
    for _ in 0..200 {
        let mut outer = Vec::new();
        wire::put_len(&mut outer, 28, &inner);
        inner = outer;
    }
    let mut validation = Vec::new();
    wire::put_len(&mut validation, 1, &inner);
    let mut version = Vec::new();
    wire::put_len(&mut version, 1, b"v1");
    wire::put_len(&mut version, 4, &validation);
    let mut spec = Vec::new();
    wire::put_len(&mut spec, 7, &version);
    let mut crd = Vec::new();
    wire::put_len(&mut crd, 2, &spec);
    let body = envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd);
    let e = decode_request(&body, "CustomResourceDefinition").unwrap_err();
    assert_eq!(e.code, 400);
    assert!(e.message.contains("too deep"), "{}", e.message);
}

#[test]
fn every_kind_encodes_its_empty_object_and_reads_it_back() {
    let s = Schema::get();
    assert_eq!(kubernetes_version(), "v1.34.0");
    assert!(s.kinds.len() > 200);
    for (av, kind) in s.kinds.keys() {
        let v = json!({"kind": &**kind, "apiVersion": &**av});
        let b = encode_object(&v).unwrap_or_else(|e| panic!("{av} {kind}: {e}"));
        let back = decode_object(&b).unwrap_or_else(|e| panic!("{av} {kind}: {e}"));
        // Written again, the decoded object gives the same bytes.
        assert_eq!(encode_object(&back).unwrap(), b, "{av} {kind}");
    }
}
