use super::*;
use serde_json::json;

/// `v` read back by a standard CBOR library.
fn standard(bytes: &[u8]) -> ciborium::Value {
    ciborium::de::from_reader(bytes).unwrap()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn objects_are_tagged_with_sorted_byte_string_keys() {
    let o = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}, "data": {"k": ""}});
    let b = encode_value(&o);
    // d9d9f7, a map of 4: data, kind, metadata, apiVersion (by length, then bytes).
    assert_eq!(
        hex(&b),
        concat!(
            "d9d9f7a4",
            "4464617461a1416b40",
            "446b696e6449436f6e6669674d6170",
            "486d65746164617461a1446e616d654161",
            "4a61706956657273696f6e427631"
        )
    );
    let ciborium::Value::Tag(55799, inner) = standard(&b) else {
        panic!("not tagged")
    };
    let ciborium::Value::Map(entries) = *inner else {
        panic!("not a map")
    };
    assert_eq!(entries[1].0, ciborium::Value::Bytes(b"kind".to_vec()));
    assert_eq!(decode(&b).unwrap(), o);
}

#[test]
fn numbers_take_their_shortest_form() {
    let cases = [
        (json!(0), "00"),
        (json!(23), "17"),
        (json!(24), "1818"),
        (json!(-1), "20"),
        (json!(-500), "3901f3"),
        (json!(i64::MAX), "1b7fffffffffffffff"),
        (json!(i64::MIN), "3b7fffffffffffffff"),
        (json!(1.5), "f93e00"),
        (json!(1.0), "f93c00"),
        (json!(100000.0), "fa47c35000"),
        (json!(0.1), "fb3fb999999999999a"),
        (json!(null), "f6"),
        (json!(true), "f5"),
        (json!([]), "80"),
        (json!({}), "a0"),
    ];
    for (v, want) in cases {
        let b = encode_value(&v);
        assert_eq!(hex(&b[3..]), want, "{v}");
        assert_eq!(decode(&b).unwrap(), v, "{v}");
    }
}

#[test]
fn other_encoders_forms_are_read() {
    let read = |h: &str| {
        let b: Vec<u8> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect();
        decode(&b)
    };
    // Text keys and values, no self-described tag.
    assert_eq!(read("a1616b6176").unwrap(), json!({"k": "v"}));
    // Indefinite-length map, array and chunked strings.
    assert_eq!(read("bf616b9f0102ffff").unwrap(), json!({"k": [1, 2]}));
    assert_eq!(read("7f62616262636fff").unwrap(), json!("abco"));
    assert_eq!(read("5f42616241ffff").unwrap(), json!("ab\u{fffd}"));
    // Unknown tags and the self-described tag stand for their content.
    assert_eq!(read("d9d9f7d8640a").unwrap(), json!(10));
    // Expected later encodings of byte strings: base64url, base64, hex.
    assert_eq!(read("d54301fffe").unwrap(), json!("Af_-"));
    assert_eq!(read("d64301fffe").unwrap(), json!("Af/+"));
    assert_eq!(read("d7824201ff40").unwrap(), json!(["01ff", ""]));
    // Time tags become RFC 3339 strings.
    assert_eq!(
        read("c074323031332d30332d32315432303a30343a30305a").unwrap(),
        json!("2013-03-21T20:04:00Z")
    );
    assert_eq!(read("c11a514b67b0").unwrap(), json!("2013-03-21T20:04:00Z"));
    assert_eq!(
        read("c1fb41d452d9ec200000").unwrap(),
        json!("2013-03-21T20:04:00.5Z")
    );
    // Floats of every width.
    assert_eq!(read("f97c00").unwrap_err().message, "cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity");
    assert_eq!(read("fa3fc00000").unwrap(), json!(1.5));
}

/// The error (message, stage) of a hex input.
fn err(h: &str) -> (String, Stage) {
    let b: Vec<u8> = (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect();
    let e = super::decode::decode_object_for_tests(&b).unwrap_err();
    (e.message, e.stage)
}

#[test]
fn kubes_rules_and_messages() {
    use Stage::*;
    let cases: &[(&str, &str, Stage)] = &[
        ("", "EOF", Interpret),
        ("a1", "unexpected EOF", Interpret),
        ("5a00010000", "unexpected EOF", Interpret),
        ("a0a0", "cbor: 1 bytes of extraneous data starting at index 1", Interpret),
        ("1c", "cbor: invalid additional information 28 for type positive integer", Interpret),
        ("1f", "cbor: invalid additional information 31 for type positive integer", Interpret),
        ("ff", "cbor: unexpected \"break\" code", Interpret),
        ("f818", "cbor: invalid simple value 24 for type primitives", Interpret),
        ("62c328", "cbor: invalid UTF-8 string", Interpret),
        ("7f4161ff", "cbor: wrong element type byte string for indefinite-length UTF-8 text string", Interpret),
        ("c24101", "cbor: data item of cbor type tag is not accepted by protocol: bignum", Interpret),
        ("c001", "cbor: tag number 0 must be followed by text string, got positive integer", Interpret),
        ("c16161", "cbor: tag number 1 must be followed by integer or floating-point number, got UTF-8 text string", Interpret),
        // Duplicate keys: the top-level map's are read with the type meta.
        ("a2416101416102", "cbor: found duplicate map key \"a\" at map element index 1", Interpret),
        ("a2416101616102", "cbor: found duplicate map key \"a\" at map element index 1", Interpret),
        ("a14178a2416101416102", "cbor: found duplicate map key \"a\" at map element index 1", Object),
        ("a1446b696e6401", "cbor: cannot unmarshal positive integer into Go struct field TypeMeta.kind of type string", Interpret),
        ("8101", "cbor: cannot unmarshal array into Go value of type v1.TypeMeta", Interpret),
        ("a10101", "cbor: cannot unmarshal positive integer into Go value of type string", Interpret),
        ("a1417881f97e00", "cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN", Object),
        ("a14178fbfff0000000000000", "cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity", Object),
        ("a14178f7", "cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized", Object),
        ("a14178f0", "cbor: data item of cbor type primitives is not accepted by protocol: simple value 16 is not recognized", Object),
        ("a141781bffffffffffffffff", "cbor: cannot unmarshal positive integer into Go value of type int64 (18446744073709551615 overflows Go's int64)", Object),
        ("a141783b8000000000000000", "cbor: cannot unmarshal negative integer into Go value of type int64 (-9223372036854775809 overflows Go's int64)", Object),
    ];
    for (input, message, stage) in cases {
        assert_eq!(err(input), (message.to_string(), *stage), "{input}");
    }
    // A malformed input is reported before any problem of its object.
    assert_eq!(err("a14178f71c").1, Interpret);
}

#[test]
fn limits() {
    let nested = |n: usize| {
        let mut b = vec![0x81; n];
        b.push(0x01);
        b
    };
    assert!(decode(&nested(64)).is_ok());
    assert_eq!(
        decode(&nested(65)).unwrap_err().message,
        "cbor: exceeded max nested level 64"
    );
    let array = |n: usize| {
        let mut b = vec![0x99, (n >> 8) as u8, n as u8];
        b.extend(std::iter::repeat_n(0xf6, n));
        b
    };
    assert!(decode(&array(1024)).is_ok());
    assert_eq!(
        decode(&array(1025)).unwrap_err().message,
        "cbor: exceeded max number of elements 1024 for CBOR array"
    );
    let mut indefinite = vec![0x9f];
    indefinite.extend(std::iter::repeat_n(0xf6, 1025));
    indefinite.push(0xff);
    assert_eq!(
        decode(&indefinite).unwrap_err().message,
        "cbor: exceeded max number of elements 1024 for CBOR array"
    );
    let mut map = vec![0xb9, 0x04, 0x01];
    for i in 0..1025u16 {
        map.extend([0x42, (i >> 8) as u8, i as u8, 0xf6]);
    }
    assert_eq!(
        decode(&map).unwrap_err().message,
        "cbor: exceeded max number of key-value pairs 1024 for CBOR map"
    );
    // A length beyond the input allocates nothing.
    assert_eq!(
        decode(&[0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
            .unwrap_err()
            .message,
        "unexpected EOF"
    );
}

#[test]
fn request_wording() {
    let e = decode_request(&[0xa1, 0x41], "ConfigMap", "v1").unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    assert_eq!(e.message, "the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: unexpected EOF (a141)");
    let long = encode_value(&json!({"data": {"k": "x".repeat(40)}}));
    let mut cut = long.to_vec();
    cut.truncate(cut.len() - 1);
    let e = decode_request(&cut, "ConfigMap", "v1").unwrap_err();
    assert!(
        e.message.ends_with(&format!("({} ...)", hex(&cut[..30]))),
        "{}",
        e.message
    );
    // Past the type meta: the kind and version the body claims.
    let mut nested_dup = encode_value(&json!({"kind": "ConfigMap", "apiVersion": "v1"})).to_vec();
    nested_dup[3] = 0xa3; // one more pair: "data": {"a": 1, "a": 2}
    nested_dup.extend([
        0x44, b'd', b'a', b't', b'a', 0xa2, 0x41, b'a', 1, 0x41, b'a', 2,
    ]);
    let e = decode_request(&nested_dup, "ConfigMap", "v1").unwrap_err();
    assert_eq!(e.message, "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: cbor: found duplicate map key \"a\" at map element index 1");
    let e = decode_request(&[0xa1, 0x41, b'x', 0xf7], "Pod", "v1").unwrap_err();
    assert_eq!(e.message, "Pod in version \"v1\" cannot be handled as a Pod: cbor: data item of cbor type primitives is not accepted by protocol: simple value 23 is not recognized");
}

#[test]
fn apply_bodies() {
    let b = encode_value(&json!({"apiVersion": "v1", "kind": "ConfigMap"}));
    assert_eq!(decode_apply(&b).unwrap()["kind"], "ConfigMap");
    assert_eq!(decode_apply(&[0xf6]).unwrap(), json!({}));
    let e = decode_apply(&[0x81, 0x01]).unwrap_err();
    assert_eq!((e.code, e.message.as_str()), (400, "error decoding YAML: cbor: cannot unmarshal array into Go value of type map[string]interface {}"));
    let e = decode_apply(&[0xa2, 0x41, b'a', 1, 0x41, b'a', 2]).unwrap_err();
    assert_eq!(
        e.message,
        "error decoding YAML: cbor: found duplicate map key \"a\" at map element index 1"
    );
}

#[test]
fn watch_events_embed_the_tagged_object() {
    let object = encode_value(&json!({"kind": "Pod", "apiVersion": "v1"}));
    let frame = event_frame("ADDED", &object);
    let ciborium::Value::Tag(55799, event) = standard(&frame) else {
        panic!("not tagged")
    };
    let ciborium::Value::Map(entries) = *event else {
        panic!("not a map")
    };
    assert_eq!(entries[0].0, ciborium::Value::Bytes(b"type".to_vec()));
    assert_eq!(entries[0].1, ciborium::Value::Bytes(b"ADDED".to_vec()));
    assert_eq!(entries[1].0, ciborium::Value::Bytes(b"object".to_vec()));
    assert!(matches!(entries[1].1, ciborium::Value::Tag(55799, _)));
    let inside = object_of_frame("ADDED", &frame).unwrap();
    assert_eq!(inside, object);
    assert!(object_of_frame("DELETED", &frame).is_none());
    assert_eq!(
        decode(&frame).unwrap(),
        json!({"type": "ADDED", "object": {"kind": "Pod", "apiVersion": "v1"}})
    );
}

#[test]
fn lists_are_sorted_and_items_lose_their_type_meta() {
    let head =
        json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": "5"}});
    let mut w = ListWriter::new(&head, "items", false, true).unwrap();
    for name in ["a", "b"] {
        let item = encode_value(
            &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name}, "data": {"k": name}}),
        );
        w.push(&item).unwrap();
    }
    let frames = w.finish(4);
    assert!(frames.len() > 2, "items cut into frames");
    let all = frames.concat();
    assert!(all.starts_with(&SELF_DESCRIBED));
    let v = decode(&all).unwrap();
    assert_eq!(
        v,
        json!({"kind": "ConfigMapList", "items": [
            {"data": {"k": "a"}, "metadata": {"name": "a"}},
            {"data": {"k": "b"}, "metadata": {"name": "b"}}
        ], "metadata": {"resourceVersion": "5"}, "apiVersion": "v1"})
    );
    // The same bytes as the whole list encoded at once.
    assert_eq!(all, encode_value(&v).to_vec());
    let empty = ListWriter::new(&head, "items", true, false).unwrap();
    assert_eq!(
        decode(&empty.finish(64).concat()).unwrap()["items"],
        Value::Null
    );
    let empty = ListWriter::new(&head, "items", false, true).unwrap();
    assert_eq!(
        decode(&empty.finish(64).concat()).unwrap()["items"],
        json!([])
    );
}
